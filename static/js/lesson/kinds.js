// What each kind of step asks the server, draws, and says. The verdict itself is the server's
// (POST /api/lesson/{step}/verdict, app/services/verdicts.py): this file only words it in the page's
// language beside the charts drawn from the same API, so a student who changes the setup gets a true
// answer, and no threshold lives here.
//
// A kind: fetch(ctx, signal) -> data (with data.verdict); judge(data, ctx) -> {outcome, accepted, text,
// value?, unknown}; charts(data, ctx) -> [{name, caption, alt, figure | table}]; notice, lesson, snippet ->
// text or "". ctx = {step, setup, options}.

import { offLabel } from "../explorer/ablation.js";
import { getShipped, postAblate, postCompare, postRelative, postStepCompare, postVerdict, request } from "../shared/api.js";
import { compareBody } from "../explorer/controls.js";
import { el } from "../shared/dom.js";
import { grouped, labelled, num, sentences, tr } from "../shared/i18n.js";
import { heatmapFigure, maskPattern, sci, visible } from "../shared/plots.js";
import { relativeFigure, ropePairFigure, similarityFigure } from "../explorer/plots-positions.js";
import { headsLabel, lengthFigure, modeLabel, trainingFigure } from "../explorer/plots-results.js";
import { kindFigure, lossFigure } from "../explorer/plots-ablation.js";
import { exerciseRuns, rhythmMeaning } from "../explorer/shipped.js";
import { alignLastRow, alignedFigure, gapBarsFigure } from "./figures.js";
import { bands, probe } from "./kept.js";

const chars = (text) => [...(text ?? "")];
const pct = (x) => (100 * x).toFixed(0);
const fixed = (x, digits = 3) => num(Number(x).toFixed(digits)); // 4,517 in French
const py = (text) => JSON.stringify(text); // a JSON string is a valid Python string literal
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);

// ---- /api/compare ------------------------------------------------------------------------------

/** The step's own data and the server's verdict on the same setup, fetched side by side: data.verdict. */
function withVerdict(fetchData) {
  return async (ctx, signal) => {
    const [data, verdict] = await Promise.all([fetchData(ctx, signal), postVerdict(ctx.step.id, ctx.setup, signal)]);
    return { ...data, verdict };
  };
}

/** What every kind's judge returns: the server's outcome, worded. */
function judged(data, text, value) {
  const v = data.verdict;
  return { outcome: v.outcome, accepted: v.accepted, text, value, unknown: v.unknown };
}

/** A same-or-different step's comparison and its verdict (api.js postStepCompare): one request when float32 decides. */
const fetchCompare = (ctx, signal) => postStepCompare(ctx.step.id, ctx.setup, signal);

/** The comparison and the verdict of a step whose verdict does not read the comparison: both asked at once. */
const fetchCompareBeside = withVerdict((ctx, signal) => postCompare(compareBody(ctx.setup), signal));

/** Why the gap is what it is, in the words of the server's reason id, quoting the controls it was decided by. */
function reason(verdict, setup) {
  const a = chars(setup.a);
  const b = chars(setup.b);
  const f = verdict.figures;
  return tr(`reason_${verdict.reason}`, {
    x: visible(a.at(-1) ?? ""), y: visible(b.at(-1) ?? ""), mode: modeLabel(setup.position),
    n_layer: f.n_layer, content: sci(f.gap_content), mask: sci(f.gap_mask), positions: sci(f.gap_positions),
  });
}

/** Steps that ask "same or different" (or "stays or gone", "rounding or large"): the last position's gap. */
function gapKind({ bars, caption = "chart_bars", notice, lesson }) {
  return {
    fetch: fetchCompare,
    judge(data, ctx) {
      const v = data.verdict;
      const f = v.figures;
      // A gap far above float32's own error is decided without a float64 rerun (decided_by, api: figures).
      const key = v.difference === "rounding" ? "gap_rounding" : v.decided_by === "float32" ? "gap_real32" : "gap_real";
      const numbers = v.difference
        ? tr(key, { gap: sci(f.gap), gap64: sci(f.gap64), limit: sci(f.rounding_limit), limit32: sci(f.float32_limit) })
        : "";
      return judged(data, sentences([numbers, reason(v, ctx.setup)]), f.gap);
    },
    charts(data, ctx) {
      return [barsChart(bars(data, ctx), caption), ...(ctx.step.kind === "posemb" || ctx.step.kind === "order" || ctx.step.kind === "pair"
        ? [alignedChart(data), heatmapChart(data, 0, 0), heatmapChart(data, 1, 0)] : [])];
    },
    notice: notice ?? ((data) => alignedNotice(data)),
    lesson,
    snippet: (ctx, data) => gapSnippet(ctx.setup, data),
    batched: true, // the page's number comes from one batch of both lines; the snippet runs them apart
  };
}

function barsChart(items, caption) {
  const list = items.map((item) => labelled(item.label, sci(item.value))).join(tr("list_sep"));
  return { name: "gap", caption: tr(caption), alt: tr("chart_bars_alt", { items: list }), figure: gapBarsFigure({ items }) };
}

function aligned(data) {
  const [a, b] = data.lines;
  return alignLastRow(data.alignment, a.tokens, a.attention[0], b.attention[0]);
}

function alignedChart(data) {
  const result = aligned(data);
  if (!result) return { name: "aligned", caption: tr("chart_aligned"), alt: tr("chart_aligned_missing"), missing: true };
  let best = { gap: -1, h: 0, i: 0 };
  result.z.forEach((row, h) => row.forEach((v, i) => {
    if (Math.abs(v) > best.gap) best = { gap: Math.abs(v), h, i };
  }));
  return {
    name: "aligned",
    caption: tr("chart_aligned"),
    // A largest gap of 0 sits at no head and no character: it is said as "every gap is 0".
    alt: best.gap === 0 ? tr("chart_aligned_alt_zero")
      : tr("chart_aligned_alt", { gap: sci(best.gap), h: best.h + 1, ch: visible(result.chars[best.i]) }),
    figure: alignedFigure(result),
  };
}

function alignedNotice(data) {
  const result = aligned(data);
  if (!result || !data.verdict.aligned) return tr("chart_aligned_missing");
  const v = data.verdict;
  // float32's gap as the server measured it from float32 values, not from the JSON's rounded decimals.
  const text = tr(v.aligned === "rounding" ? "notice_aligned" : "notice_aligned_moved", {
    gap: sci(v.figures.aligned_gap), gap64: sci(v.figures.aligned_gap64),
  });
  // Layer 1 blind to the order while the output tells the lines apart: the order came in at a later layer.
  const later = v.aligned === "rounding" && v.difference === "real" && v.figures.n_layer > 1 && data.model.causal;
  return sentences([text, later ? tr("notice_aligned_later", { n_layer: v.figures.n_layer }) : ""]);
}

/** Line 0 (A) or 1 (B), one head of layer 1: the explorer's heatmap. */
function heatmapChart(data, lineIndex, head) {
  const line = data.lines[lineIndex];
  const name = lineIndex === 0 ? "A" : "B";
  const z = maskPattern(line.attention[0][head], data.model.causal);
  const last = z[z.length - 1];
  const top = last.indexOf(Math.max(...last.filter((v) => v !== null)));
  return {
    name: `heatmap-${name}-${head + 1}`,
    caption: tr("chart_heatmap", { h: head + 1, line: name }),
    alt: tr("chart_heatmap_alt", {
      h: head + 1, line: name, text: line.text, w: fixed(last[top], 2), ch: visible(line.tokens[top]),
    }),
    figure: heatmapFigure({ tokens: line.tokens, z, kind: "pattern" }),
    heatmap: true,
  };
}

/** A mode as a bar's label says it: "no positions" rather than the mode's name "none"; and the mask when off. */
function modePhrase(position, causal = true) {
  const mode = position === "none" ? tr("mode_none_phrase") : modeLabel(position);
  return causal ? mode : tr("mode_mask_off", { mode });
}

/** The model on screen first, then the untrained models of 1 to 3 layers in the same mode, heads and mask. */
function depthBars(data) {
  const model = data.model;
  const mode = modePhrase(model.position, model.causal); // the grey bars were run with the same mask
  const onScreen = {
    label: tr(model.weights === "trained" ? "bar_model_trained" : "bar_model_random", { n_layer: model.n_layer, mode }),
    value: data.difference.with_position.max_abs,
    current: true,
  };
  const untrained = data.by_depth
    .filter((row) => model.weights === "trained" || row.n_layer !== model.n_layer)
    .map((row) => ({ label: tr("bar_depth", { n_layer: row.n_layer, mode }), value: row.with_position.max_abs }));
  return [onScreen, ...untrained];
}

function depthNotice(data) {
  const rows = data.by_depth;
  return tr("notice_depth", {
    n_layer: rows.at(-1).n_layer, d1: sci(rows[0].with_position.max_abs), dn: sci(rows.at(-1).with_position.max_abs),
    mode: modePhrase(data.model.position, data.model.causal),
  });
}

function modelLines(setup) {
  if (setup.weights === "trained") {
    return [
      "from model.assets import checkpoint_path",
      "from model.checkpoint import load_checkpoint",
      "",
      `model, tok, meta = load_checkpoint(checkpoint_path(${py(setup.position)}))`,
    ];
  }
  return [
    "from model import GPT, GPTConfig, CharTokenizer",
    "from model.assets import VOCAB_PATH",
    "",
    "tok = CharTokenizer.load(VOCAB_PATH)",
    `cfg = GPTConfig(vocab_size=tok.vocab_size, n_layer=${setup.n_layer}, n_head=${setup.n_head}, n_embd=128, ` +
      `position=${py(setup.position)})`,
    "model = GPT(cfg, seed=0).eval()",
  ];
}

function gapSnippet(setup, data) {
  const causal = setup.causal ? "True" : "False";
  return [
    "import torch",
    "from model.experiments import logits_difference",
    ...modelLines(setup),
    "",
    `a = model.trace(torch.tensor([tok.encode(${py(setup.a)})]), causal=${causal}).logits[0, -1]`,
    `b = model.trace(torch.tensor([tok.encode(${py(setup.b ?? setup.a)})]), causal=${causal}).logits[0, -1]`,
    `print(logits_difference(a, b)["max_abs"])  # ${tr("bar_this")}: ${sci(data.difference.with_position.max_abs)}`,
  ].join("\n");
}

// ---- the kinds ---------------------------------------------------------------------------------

/** A figure of the lesson as it printed it: its own significant digits, as a power of ten (1.9e-02: 1.9 × 10⁻²). */
const printed = (value, lesson) => num(Number(value).toExponential(lesson.digits - 1));

/** The lesson's printed figure is for the step's own setup: beside another setup it only says so. */
function lessonFigure(text) {
  return (data, ctx) => (data.verdict.setup_is_lessons ? text(data, ctx) : tr("lesson_other_setup"));
}

const thisModelBar = (data) => [{ label: tr("bar_this"), value: data.difference.with_position.max_abs, current: true }];

const order = gapKind({
  bars: thisModelBar,
  caption: "chart_bars_one",
  lesson: lessonFigure((data, ctx) => tr("order_lesson", {
    value: printed(ctx.step.lesson.value, ctx.step.lesson), ours: sci(data.difference.with_position.max_abs),
  })),
});

const leak = gapKind({
  bars: depthBars,
  notice: depthNotice,
  lesson: lessonFigure((data, ctx) => tr("leak_lesson", {
    value: printed(ctx.step.lesson.value, ctx.step.lesson), with: printed(ctx.step.lesson.with, ctx.step.lesson), ours: sci(data.difference.with_position.max_abs),
  })),
});

const nomask = gapKind({ bars: depthBars, notice: depthNotice });

const pair = gapKind({ bars: thisModelBar, caption: "chart_bars_one" });

const posemb = gapKind({
  caption: "chart_bars_posemb",
  // Under none there are no positions to remove: one bar, named as the model it is.
  bars: (data) => (data.model.position === "none" ? thisModelBar(data) : [
    { label: tr("bar_without_positions"), value: data.difference.without_position.max_abs },
    { label: tr("bar_with_positions", { mode: modeLabel(data.model.position) }), value: data.difference.with_position.max_abs, current: true },
  ]),
  notice: (data) => (data.model.position === "none" ? tr("notice_posemb_none", {
    with: sci(data.difference.with_position.max_abs),
  }) : tr("notice_posemb", {
    without: sci(data.difference.without_position.max_abs),
    with: sci(data.difference.with_position.max_abs),
    mode: modeLabel(data.model.position),
  })),
  lesson: lessonFigure((data, ctx) => tr("posemb_lesson", {
    value: printed(ctx.step.lesson.value, ctx.step.lesson), without: printed(ctx.step.lesson.without, ctx.step.lesson),
    ours: sci(data.difference.with_position.max_abs), ours_without: sci(data.difference.without_position.max_abs),
  })),
});

const ex1 = gapKind({ bars: depthBars, notice: depthNotice });

/** The 129th character: the server's own refusal is the answer. */
const limit = {
  // The verdict says whether the model takes the line; /api/compare's answer is only asked to show the refusal
  // happens (a 422 naming the line) or not. An empty line is refused by both, and the page says so as an error.
  fetch: withVerdict(async (ctx, signal) => {
    try {
      return { ok: await postCompare(compareBody(ctx.setup), signal) };
    } catch (error) {
      if (error?.fields?.some((e) => e.type === "too_many_positions")) return { refused: true };
      throw error;
    }
  }),
  judge(data, ctx) {
    const f = data.verdict.figures;
    // The line that is that long: the verdict counts the longer of the two.
    const line = chars(ctx.setup.a).length === f.n ? "A" : "B";
    const vars = { n: f.n, rows: f.rows, max: f.max, pos: f.n - 1, last: f.rows - 1, more: f.more, line,
      mode: modeLabel(ctx.setup.position) };
    return judged(data, tr(`limit_${data.verdict.reason}`, vars), f.n);
  },
  charts: () => [],
  notice: () => "",
  snippet: (ctx) => [
    "import torch",
    ...modelLines(ctx.setup),
    "",
    `x = torch.tensor([tok.encode(${py(ctx.setup.a)})])`,
    "print(x.shape)",
    "model(x)  # ValueError past 128 positions with position 'learned'",
  ].join("\n"),
};

const table = {
  fetch: withVerdict(() => getShipped("positions")),
  judge(data) {
    const f = data.verdict.figures;
    if (!data.learned || data.verdict.outcome === null) return judged(data, tr("sim_learned_empty"));
    const text = sentences([
      tr("table_verdict", {
        adj: fixed(f.neighbours, 2), far: fixed(f.far, 2), period: f.period, c: fixed(f.at_period, 2),
        lag: f.least_lag, low: fixed(f.at_least_lag, 2),
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
    "print(sim.diagonal(1).mean())  # rows one apart",
  ].join("\n"),
};

const degrees = (radians) => (radians * 180) / Math.PI;

const rotate = {
  fetch: fetchCompareBeside,
  judge(data, ctx) {
    const f = data.verdict.figures;
    if (data.verdict.outcome === null) return judged(data, tr("reason_not_rope", { mode: modeLabel(ctx.setup.position) }));
    const text = tr("rotate_verdict", {
      deg0: num(f.degrees_first.toPrecision(3)), degl: num(f.degrees_last.toPrecision(3)), last: f.last_pair,
      n: f.positions, tot0: grouped(Math.round(f.turned_first)), totl: num(f.turned_last.toPrecision(3)),
      line: chars(ctx.setup.a).length >= chars(ctx.setup.b).length ? "A" : "B", // the line the count is of
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
    `theta = rope_frequencies(${data.rope?.head_dim ?? 32}, ${data.rope?.base ?? 10000})  # radians per position, one per pair`,
    "print(theta[0].item(), theta[-1].item())",
  ].join("\n"),
};

function spread(values) {
  return Math.max(...values) - Math.min(...values);
}

const relative = {
  fetch: withVerdict((ctx, signal) => {
    const [first, second] = chars(ctx.setup.a);
    if (!first || !second) return Promise.resolve({ tooShort: true });
    return postRelative({ first, second, weights: ctx.setup.weights, distance: ctx.setup.distance ?? 1 }, signal);
  }),
  judge(data) {
    if (data.tooShort) return judged(data, tr("relative_need_two"));
    const f = data.verdict.figures;
    const text = tr("relative_verdict", {
      first: visible(data.first), second: visible(data.second), last: data.starts.at(-1), distance: f.distance,
      rope: sci(f.spread_rope), learned: sci(f.spread_learned),
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
    `first, second = tok.encode(${py(chars(ctx.setup.a).slice(0, 2).join(""))})`,
    `starts = ${JSON.stringify(data.starts ?? [])}  # the starts /api/relative used (a JSON list is a Python list)`,
    `scores = pair_scores(model, first, second, starts, distance=${ctx.setup.distance ?? 1})  # (layer, head, start)`,
    "print((scores[0, 0].max() - scores[0, 0].min()).item())",
  ].join("\n"),
};

/** The shipped rope run, when there is one: the chart draws it. Its means are the verdict's figures. */
function ropeRun(data) {
  return (data.runs ?? []).find((r) => r.position === "rope") ?? null;
}

const length = {
  fetch: withVerdict(() => getShipped("length")),
  judge(data) {
    const f = data.verdict.figures;
    if (data.verdict.outcome === null) return judged(data, tr("results_empty"));
    const text = tr("length_verdict", {
      before: fixed(f.before), after: fixed(f.after), n: f.train_length, last: f.train_length - 1, end: f.length - 1,
    });
    // Where the rise starts (the server's smoothed reading), then why: angles training never showed.
    const where = { smooth: f.smooth, nats: num(f.rise_nats), rise: f.rise, worse: f.worse };
    const rise = f.rise === undefined ? "" : tr(f.worse === undefined ? "length_rise_only" : "length_rise", where);
    const why = data.verdict.outcome === "rises" ? tr("length_why_rope", { last: f.train_length - 1 }) : "";
    return judged(data, sentences([text, rise, why]), f.after);
  },
  charts(data) {
    if (!ropeRun(data) || data.verdict.outcome === null) return [];
    const f = data.verdict.figures;
    return [{
      name: "length", caption: tr("chart_length"),
      alt: tr("chart_length_alt", { before: fixed(f.before), after: fixed(f.after) }),
      figure: lengthFigure({ runs: data.runs }),
    }];
  },
  notice(data) {
    const f = data.verdict.figures;
    if (f.none_before === undefined || f.before === undefined) return "";
    return sentences([tr("notice_length", {
      none_before: fixed(f.none_before), none_after: fixed(f.none_after), none_rise: fixed(f.none_after - f.none_before),
      rope_rise: fixed(f.after - f.before),
    }), f.none_after > f.none_before ? tr("length_why_none", { last: f.train_length - 1 }) : ""]);
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

const split = {
  fetch: withVerdict((ctx, signal) => request("/api/head-split", { query: { n_embd: 32, n_head: 4, length: 5 }, signal })),
  judge(data) {
    const f = data.verdict.figures;
    const text = tr("split_verdict", { qkv1: grouped(f.qkv1), proj1: grouped(f.proj1), qkv4: grouped(f.qkv4), proj4: grouped(f.proj4) });
    return judged(data, text, f.qkv4 + f.proj4);
  },
  charts(data) {
    const shape = (s) => `(${s.join(", ")})`;
    const flow = el("ol", { className: "split-flow" }, ["q", "heads", "scores"].map((key) =>
      el("li", {}, [el("span", { text: tr(`split_shape_${key}`) }), el("code", { text: shape(data.shapes[key]) })])));
    const head = el("thead", {}, [el("tr", {}, ["params_heads", "params_head_dim", "params_qkv", "params_proj"]
      .map((key) => el("th", { scope: "col", text: tr(key) })))]);
    const body = el("tbody", {}, data.params.map((p) => el("tr", { className: p.n_head === data.n_head ? "is-current" : "" }, [
      el("th", { scope: "row", text: String(p.n_head) }),
      el("td", { text: String(data.n_embd / p.n_head) }),
      el("td", { text: grouped(p.qkv) }),
      el("td", { text: grouped(p.proj) }),
    ])));
    const table = el("table", { className: "data-table" }, [el("caption", { className: "visually-hidden", text: tr("chart_split") }), head, body]);
    return [{ name: "split", caption: tr("chart_split"), alt: "", table: el("div", {}, [flow, table]) }];
  },
  notice: (data) => tr("notice_split", {
    n_head: data.n_head, head_dim: data.shapes.heads[3], n_embd: data.n_embd, t: data.shapes.scores[3],
  }),
  lesson: (data, ctx) => {
    const p4 = data.params.find((p) => p.n_head === 4);
    return tr("split_lesson", { qkv: ctx.step.lesson.qkv, proj: ctx.step.lesson.proj, ours_qkv: p4.qkv, ours_proj: p4.proj });
  },
  snippet: () => [
    "from model.experiments import head_split",
    "",
    "print(head_split(n_embd=32, n_head=4, T=5))",
  ].join("\n"),
};

/** Per head of layer 1 on line A: the mean weight on the previous character and on itself (what to look at). */
/**
 * Each head's shares on the previous character and on itself, both over the same rows: from the second character
 * on, the rows that can differ (the first sees only itself, 100% in every head). null for a 1-character line.
 */
function headNumbers(data) {
  const heads = data.lines[0].attention[0]; // [head][query][key]
  if (heads[0].length < 2) return null;
  return heads.map((m) => ({
    prev: mean(m.slice(1).map((row, q) => row[q])),
    self: mean(m.slice(1).map((row, q) => row[q + 1])),
  }));
}

const heads = {
  fetch: fetchCompareBeside,
  judge(data) {
    const f = data.verdict.figures;
    if (data.verdict.outcome === null) return judged(data, tr(`reason_${data.verdict.reason}`));
    return judged(data, tr("heads_verdict", { h1: f.h1, h2: f.h2, tv: pct(f.distance) }), f.distance);
  },
  charts: (data) => data.lines[0].attention[0].map((_, h) => heatmapChart(data, 0, h)),
  notice: (data) => {
    const numbers = headNumbers(data);
    if (!numbers) return tr("reason_one_char");
    return sentences(numbers.map((s, h) => tr("heads_notice", { h: h + 1, prev: pct(s.prev), self: pct(s.self) })));
  },
  snippet: (ctx) => [
    "import torch",
    ...modelLines(ctx.setup),
    "",
    `trace = model.trace(torch.tensor([tok.encode(${py(ctx.setup.a)})]))`,
    "pattern = trace.attention[0][0]  # layer 1: (n_head, T, T), query rows, key columns",
    "print(pattern.diagonal(-1, dim1=-2, dim2=-1).mean(-1))  # weight on the previous character, per head",
  ].join("\n"),
};

/**
 * Layer 1's previous-character head turned off. The verdict names the head and judges on the corpus figures
 * (heads.json); the line on screen is run with that head off (POST /api/ablate) to show the same on one line.
 */
const ablate = {
  async fetch(ctx, signal) {
    const [verdict, shippedHeads] = await Promise.all([postVerdict(ctx.step.id, ctx.setup, signal), getShipped("heads")]);
    if (verdict.outcome === null) return { verdict };
    const off = [{ layer: 1, head: verdict.figures.head }];
    const answer = await postAblate({ line: ctx.setup.a, position: ctx.setup.position, weights: ctx.setup.weights, off }, signal);
    const model = shippedHeads.models.find((m) => m.position === ctx.setup.position);
    return { verdict, answer, ablation: model.layers[0].heads.find((h) => h.head === verdict.figures.head).ablation };
  },
  judge(data, ctx) {
    const v = data.verdict;
    if (v.outcome === null) return judged(data, tr(`reason_${v.reason}`, { mode: modeLabel(ctx.setup.position) }));
    const f = v.figures;
    const kinds = ["punctuation", "second_line", "other"];
    const vars = { characters: grouped(f.characters), head: f.head, share: pct(f.share) };
    for (const k of kinds) Object.assign(vars, { [k]: fixed(f[k], 2), [`before_${k}`]: fixed(f[`before_${k}`], 2), [`after_${k}`]: fixed(f[`after_${k}`], 2) });
    // The question asks where the loss rises most; which kind is hardest with the head off is another
    // question, with another answer when the head matters most where the model was surest.
    const top = (key) => kinds.reduce((x, y) => (f[`${key}${y}`] > f[`${key}${x}`] ? y : x));
    const [gains, hardest, easiest] = [top(""), top("after_"), kinds.reduce((x, y) => (f[`before_${y}`] < f[`before_${x}`] ? y : x))];
    const kind = (k) => tr(`ablate_kind_${k}`);
    return judged(data, sentences([
      tr("ablate_verdict", vars),
      gains === hardest ? "" : tr("ablate_not_hardest", { gains: kind(gains), hardest: kind(hardest) }),
      gains === easiest && gains !== hardest ? tr("ablate_surest", { gains: kind(gains), before: vars[`before_${gains}`] }) : "",
    ]), f[v.outcome]);
  },
  charts(data, ctx) {
    if (!data.answer) return [];
    const { answer, ablation } = data;
    const top = Math.max(...Object.values(ablation.by_kind), 0);
    return [{
      name: "ablate-line", caption: tr("chart_ablate_line", { head: data.verdict.figures.head }),
      alt: chars(ctx.setup.a).length < 2 ? tr("notice_ablate_one_char")
        : tr("chart_ablate_line_alt", { before: fixed(answer.all_on.mean_loss, 2), after: fixed(answer.ablated.mean_loss, 2) }),
      figure: lossFigure({ answer, offLabel: offLabel(answer.off) }),
    }, {
      name: "ablate-kinds", caption: tr("chart_ablate_kinds", { head: data.verdict.figures.head }),
      alt: tr("chart_ablate_kinds_alt", { punctuation: fixed(ablation.by_kind.punctuation, 2),
        second_line: fixed(ablation.by_kind.second_line, 2), other: fixed(ablation.by_kind.other, 2) }),
      figure: kindFigure({ ablation, range: [Math.min(0, ...Object.values(ablation.by_kind)), top * 1.25] }),
    }];
  },
  // A 1-character line has no next character to predict: no loss to compare, said as such.
  notice: (data, ctx) => (!data.answer ? "" : chars(ctx.setup.a).length < 2 ? tr("notice_ablate_one_char")
    : tr("notice_ablate", { before: fixed(data.answer.all_on.mean_loss, 2), after: fixed(data.answer.ablated.mean_loss, 2) })),
  snippet: (ctx, data) => [
    "import torch",
    ...modelLines(ctx.setup),
    "",
    `x = torch.tensor([tok.encode(${py(ctx.setup.a)})])`,
    `off = torch.zeros(model.config.n_layer, model.config.n_head, dtype=torch.bool)`,
    `off[0, ${(data.verdict.figures.head ?? 1) - 1}] = True  # layer 1, head ${data.verdict.figures.head ?? 1}: its output to proj becomes zeros`,
    "for heads_off in (None, off):",
    "    logits = model.trace(x, heads_off=heads_off).logits[0, :-1]",
    "    print(torch.nn.functional.cross_entropy(logits, x[0, 1:]).item())  # nats per character",
  ].join("\n"),
};

function finalLoss(run) {
  return run.final_val_loss ?? run.val_loss.at(-1);
}

/** "8<4<1" -> "8 heads < 4 heads < 1 head"; "rope<learned<none" -> the modes' names. */
export function orderLabel(order, key) {
  return order.split("<").map((part) => (key === "heads" ? headsLabel(Number(part)) : modeLabel(part))).join(" < ");
}

function trainingKind(key) {
  const runsOf = (data) => exerciseRuns(data)[key];
  const label = (run) => (key === "heads" ? headsLabel(run.n_head) : modeLabel(run.position));
  const listOf = (runs) => runs.map((r) => `${label(r)} ${fixed(finalLoss(r))}`).join(tr("list_sep"));
  const labelOf = (id) => (key === "heads" ? headsLabel(Number(id)) : modeLabel(id));
  return {
    fetch: withVerdict(() => getShipped("training")),
    judge(data, ctx) {
      const runs = runsOf(data);
      const v = data.verdict;
      if (!runs.length || v.outcome === null) return judged(data, tr("results_empty"));
      const f = v.figures;
      // Two runs closer than their noise: one run each cannot order them, and either order counts.
      const ties = v.ties.map(([x, y]) => tr("training_tie", {
        x: labelOf(x), y: labelOf(y), d: fixed(f[`gap_${x}_${y}`]), noise: fixed(f[`within_${x}_${y}`]),
      }));
      return judged(data, sentences([
        tr(`${ctx.step.id}_verdict`, { list: listOf(runs), order: orderLabel(v.outcome, key) }), ...ties,
      ]));
    },
    charts(data) {
      const runs = runsOf(data);
      if (!runs.length) return [];
      return [{ name: `training-${key}`, caption: tr("chart_training"), alt: tr("chart_training_alt", { list: listOf(runs) }),
        figure: trainingFigure({ runs, key }) }];
    },
    notice(data) {
      const losses = runsOf(data).map(finalLoss);
      return losses.length > 1 ? tr("notice_training", { gap: fixed(Math.max(...losses) - Math.min(...losses)) }) : "";
    },
    // The step count is the runs' own (every run has the same budget), never typed into the text.
    lesson: (data, ctx) => (ctx.step.id === "ex2" ? tr("ex2_lesson", { steps: grouped(runsOf(data)[0].steps.at(-1)) }) : ""),
    snippet: () => [
      "import json",
      "from model.assets import WEIGHTS_DIR",
      "",
      'for run in json.loads((WEIGHTS_DIR / "training.json").read_text())["runs"]:',
      '    print(run["position"], run["n_head"], run.get("final_val_loss", run["val_loss"][-1]))',
    ].join("\n"),
  };
}

export const KINDS = {
  order, leak, nomask, pair, posemb, limit, table, rotate, relative, length, split, heads, ablate, probe, bands, ex1,
  ex2: trainingKind("heads"),
  ex3: trainingKind("modes"),
};
