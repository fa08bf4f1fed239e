// The kinds of step on position vectors and RoPE: the pos_emb table, RoPE's rotation, one pair at several starts,
// and the loss past the training length. A kind as in kinds.js.

import { getShipped, postRelative } from "../shared/api.js";
import { figure, grouped, num, sentences, tr } from "../shared/i18n.js";
import { sci, visible } from "../shared/plots.js";
import { relativeFigure, ropePairFigure, similarityFigure } from "../explorer/plots-positions.js";
import { lengthFigure, modeInSentence } from "../explorer/plots-results.js";
import { rhythmMeaning } from "../explorer/shipped.js";
import { chars, fetchCompareBeside, fig, fixed, judged, py, shownDifference, three, two, withVerdict } from "./kind-parts.js";

export const table = {
  fetch: withVerdict(() => getShipped("positions")),
  judge(data) {
    const f = data.verdict.figures;
    if (!data.learned || data.verdict.outcome === null) return judged(data, tr("sim_learned_empty"));
    const text = sentences([
      tr("table_verdict", {
        adj: fig(f, "neighbours", two), far: fig(f, "far", two), period: fig(f, "period"), c: fig(f, "at_period", two),
        lag: fig(f, "least_lag"), low: fig(f, "at_least_lag", two),
      }),
      rhythmMeaning(f.period), // what that distance is in these poems, in the explorer's words
    ]);
    return judged(data, text, f.neighbours);
  },
  charts(data) {
    if (!data.learned || data.verdict.outcome === null) return [];
    const f = data.verdict.figures;
    return [{
      name: "similarity", caption: tr("chart_similarity"),
      alt: tr("chart_similarity_alt", { adj: fixed(f.neighbours, 2), far: fixed(f.far, 2) }),
      figure: similarityFigure({ matrix: data.learned }),
    }];
  },
  notice(data) {
    if (!data.learned) return "";
    // Neighbouring rows m and m + 1: the least and the most alike pair.
    const pairs = data.learned.slice(0, -1).map((row, m) => ({ m, c: row[m + 1] })).sort((x, y) => x.c - y.c);
    const [lo, hi] = [pairs[0], pairs.at(-1)];
    return tr("notice_table", {
      lo: fixed(lo.c, 2), lo_m: lo.m, lo_n: lo.m + 1, hi: fixed(hi.c, 2), hi_m: hi.m, hi_n: hi.m + 1,
    });
  },
  snippet: () => [
    "from model.assets import checkpoint_path",
    "from model.checkpoint import load_checkpoint",
    "from model.probes import cosine_similarity_matrix",
    "",
    'model, tok, meta = load_checkpoint(checkpoint_path("learned"))',
    "sim = cosine_similarity_matrix(model.pos_emb.weight[:128].detach())  # (128, 128)",
    `print(sim.diagonal(1).mean())  # ${tr("snippet_table_rows")}`,
  ].join("\n"),
};

const degrees = (radians) => (radians * 180) / Math.PI;

export const rotate = {
  fetch: fetchCompareBeside,
  judge(data, ctx) {
    const f = data.verdict.figures;
    if (data.verdict.outcome === null) return judged(data, tr("reason_not_rope", { mode: modeInSentence(ctx.setup.position) }));
    const [a, b] = [chars(ctx.setup.line_a).length, chars(ctx.setup.line_b).length];
    // The count is of the longer line; lines of one length are named together (neither is "the longer").
    const text = tr(a === b ? "rotate_verdict_same" : "rotate_verdict", {
      deg0: fig(f, "degrees_first", three), degl: fig(f, "degrees_last", three), last: fig(f, "last_pair"),
      n: fig(f, "positions"), tot0: fig(f, "turned_first", (x) => grouped(Math.round(x))), totl: fig(f, "turned_last", three),
      line: a > b ? "A" : "B",
    });
    return judged(data, text, f.theta_first);
  },
  charts(data) {
    const r = data.rope;
    if (!r) return [];
    const tokens = r.angles.map((_, p) => data.lines[0].tokens[p] ?? data.lines[1].tokens[p]);
    return [0, r.theta.length - 1].map((p) => ({
      name: `rope-pair-${p}`,
      caption: tr("chart_pair", { pair: p }),
      alt: tr("chart_pair_alt", { pair: p, n: r.angles.length, deg: degrees(r.theta[p]).toPrecision(3) }),
      figure: ropePairFigure({ rope: r, pair: p, tokens }),
    }));
  },
  notice(data) {
    const r = data.rope;
    if (!r) return "";
    const turn = (theta) => grouped(Math.round((2 * Math.PI) / theta)); // 35 333 in French
    return tr("notice_rotate", { p: num(((2 * Math.PI) / r.theta[0]).toFixed(1)), last: r.theta.length - 1, q: turn(r.theta.at(-1)) });
  },
  snippet: (ctx, data) => [
    "from model.rope import rope_frequencies",
    "",
    `theta = rope_frequencies(${data.rope?.head_dim ?? 32}, ${data.rope?.base ?? 10000})  # ${tr("snippet_rotate_theta")}`,
    "print(theta[0].item(), theta[-1].item())",
  ].join("\n"),
};

function spread(values) {
  return Math.max(...values) - Math.min(...values);
}

export const relative = {
  fetch: withVerdict((ctx, signal) => {
    const [first, second] = chars(ctx.setup.line_a);
    if (!first || !second) return Promise.resolve({ tooShort: true });
    return postRelative({ first, second, weights: ctx.setup.weights, distance: ctx.setup.distance ?? 1 }, signal);
  }),
  judge(data) {
    if (data.tooShort) return judged(data, tr("relative_need_two"));
    const f = data.verdict.figures;
    const text = tr("relative_verdict", {
      first: visible(data.first), second: visible(data.second), last: fig(f, "last_start"), distance: fig(f, "distance"),
      rope: fig(f, "spread_rope", sci), learned: fig(f, "spread_learned", sci),
    });
    return judged(data, text, f.spread_rope);
  },
  charts(data) {
    if (data.tooShort) return [];
    return [{
      name: "relative",
      caption: tr("chart_relative", { first: visible(data.first), second: visible(data.second) }),
      alt: tr("chart_relative_alt", { rope: sci(spread(data.scores.rope[0][0])), learned: sci(spread(data.scores.learned[0][0])) }),
      figure: relativeFigure({ starts: data.starts, scores: data.scores, layer: 1, head: 1 }),
    }];
  },
  notice(data) {
    if (data.tooShort) return "";
    // Why only the distance counts: θᵢ, then pair 0 of layer 1 head 1 in the server's numbers (float64), turned
    // at the first and the last start, and turned by the difference alone.
    const f = data.verdict.figures;
    const rad = (x) => num(x.toFixed(2));
    const four = (x) => num(x.toPrecision(4));
    const [s0, s1, d] = [data.starts[0], data.starts.at(-1), f.distance];
    const formula = tr("relative_formula", { base: grouped(f.base), d: f.head_dim, theta: rad(f.theta_first) });
    const example = tr("relative_example", {
      first: visible(data.first), second: visible(data.second),
      q: tr("relative_vector", { x: four(f.q0), y: four(f.q1) }), k: tr("relative_vector", { x: four(f.k0), y: four(f.k1) }),
      dot: four(f.dot_unturned),
      s0, m0: s0 + d, a0: rad(s0 * f.theta_first), b0: rad((s0 + d) * f.theta_first), dot0: four(f.dot_start0),
      s1, a1: rad(s1 * f.theta_first), b1: rad((s1 + d) * f.theta_first), dot1: four(f.dot_start1),
      diff: rad(d * f.theta_first), dotd: four(f.dot_difference),
    });
    // The chart is float32 (/api/relative), the verdict float64: two spreads, both said.
    const precision = tr("relative_precision", { rope32: sci(spread(data.scores.rope[0][0])), rope64: sci(f.spread_rope) });
    return sentences([formula, example, precision,
      data.scores.none ? tr("notice_relative", { none: sci(spread(data.scores.none[0][0])) }) : ""]);
  },
  snippet: (ctx, data) => [
    "from model.assets import checkpoint_path",
    "from model.checkpoint import load_checkpoint",
    "from model.probes import pair_scores",
    "",
    'model, tok, meta = load_checkpoint(checkpoint_path("rope"))',
    `first, second = tok.encode(${py(chars(ctx.setup.line_a).slice(0, 2).join(""))})`,
    `starts = ${JSON.stringify(data.starts ?? [])}  # ${tr("snippet_relative_starts", { route: "/api/relative" })}`,
    `scores = pair_scores(model, first, second, starts, distance=${ctx.setup.distance ?? 1})  # ${tr("snippet_relative_shape")}`,
    "print((scores[0, 0].max() - scores[0, 0].min()).item())",
  ].join("\n"),
};

/**
 * The step that ranks the three models' losses ({n, setup}, /api/lesson's losses_answer) while this screen has not
 * answered it, else null: the other two curves and the model without positions' figures would show them here; held
 * back until then, as the trained note holds back each model's validation loss (issue 39, a French review).
 */
const lossesAsked = (ctx) => ctx?.later?.(ctx.step.losses_answer) ?? null;

/** The shipped rope run, when there is one: the chart draws it. Its means are the verdict's figures. */
function ropeRun(data) {
  return (data.runs ?? []).find((r) => r.position === "rope") ?? null;
}

export const length = {
  fetch: withVerdict(() => getShipped("length")),
  judge(data, ctx) {
    const f = data.verdict.figures;
    if (data.verdict.outcome === null) return judged(data, tr("results_empty"));
    const text = tr("length_verdict", {
      before: fig(f, "before", fixed), after: fig(f, "after", fixed), n: fig(f, "train_length"),
      last: figure("train_length - 1", f.train_length - 1), end: figure("length - 1", f.length - 1),
    });
    // Where the rise starts (the server's smoothed reading), then why: angles training never showed.
    const where = { smooth: fig(f, "smooth"), nats: fig(f, "rise_nats"), rise: fig(f, "rise"), worse: fig(f, "worse") };
    // "Worse than the model without positions" compares the models that step 18 ranks: held back with their curves.
    const compared = f.worse !== undefined && !lossesAsked(ctx);
    const rise = f.rise === undefined ? "" : tr(compared ? "length_rise" : "length_rise_only", where);
    const why = data.verdict.outcome === "rises" ? tr("length_why_rope", { last: figure("train_length - 1", f.train_length - 1) }) : "";
    return judged(data, sentences([text, rise, why]), f.after);
  },
  charts(data, ctx) {
    if (!ropeRun(data) || data.verdict.outcome === null) return [];
    const f = data.verdict.figures;
    return [{
      name: "length", caption: tr("chart_length"),
      alt: tr("chart_length_alt", { before: fixed(f.before), after: fixed(f.after) }),
      figure: lengthFigure({ runs: lossesAsked(ctx) ? [ropeRun(data)] : data.runs }),
    }];
  },
  notice(data, ctx) {
    const f = data.verdict.figures;
    const asked = lossesAsked(ctx);
    if (asked) return tr("length_later", { step: figure("step_ex3", asked.n, asked.n) });
    if (f.none_before === undefined || f.before === undefined) return "";
    return sentences([tr("notice_length", {
      none_before: fig(f, "none_before", fixed), none_after: fig(f, "none_after", fixed),
      // Each rise is the difference of the losses as printed (RoPE's before and after are in the verdict).
      none_rise: shownDifference(f, "none_after", "none_before"),
      rope_rise: shownDifference(f, "after", "before"),
    }), f.none_after > f.none_before ? tr("length_why_none", { last: figure("train_length - 1", f.train_length - 1) }) : ""]);
  },
  snippet: () => [
    "import json",
    "from model.assets import WEIGHTS_DIR",
    "",
    'runs = json.loads((WEIGHTS_DIR / "length.json").read_text())["runs"]',
    'rope = next(r for r in runs if r["position"] == "rope")',
    'n, loss = rope["train_length"], rope["loss"]',
    "print(sum(loss[:n]) / n, sum(loss[n:]) / len(loss[n:]))",
  ].join("\n"),
};
