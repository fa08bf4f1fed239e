// The kinds of step on heads and training: splitting a layer into heads, how the heads differ, one head turned
// off, and the training runs of exercises 2 and 3. A kind as in kinds.js.

import { offLabel } from "../explorer/ablation.js";
import { getShipped, postAblate, postVerdict, request } from "../shared/api.js";
import { el } from "../shared/dom.js";
import { figure, grouped, sentences, tr } from "../shared/i18n.js";
import { headsLabel, modeInSentence, modeLabel, trainingFigure } from "../explorer/plots-results.js";
import { kindFigure, lossFigure } from "../explorer/plots-ablation.js";
import { exerciseRuns } from "../explorer/shipped.js";
import {
  chars, fetchCompareBeside, fig, fixed, heatmapChart, judged, mean, modelLines, pct, py, shownDifference, two,
  withVerdict,
} from "./kind-parts.js";

export const split = {
  fetch: withVerdict((ctx, signal) => request("/api/head-split", { query: { n_embd: 32, n_head: 4, length: 5 }, signal })),
  judge(data) {
    const f = data.verdict.figures;
    const text = tr("split_verdict", { qkv1: fig(f, "qkv1", grouped), proj1: fig(f, "proj1", grouped), qkv4: fig(f, "qkv4", grouped),
      proj4: fig(f, "proj4", grouped) });
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
    // Grouped as the verdict and the table write them (3 168 in French, 3,168 in English): one form per screen.
    return tr("split_lesson", { qkv: grouped(ctx.step.lesson.qkv), proj: grouped(ctx.step.lesson.proj),
      ours_qkv: grouped(p4.qkv), ours_proj: grouped(p4.proj) });
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

export const heads = {
  fetch: fetchCompareBeside,
  judge(data) {
    const f = data.verdict.figures;
    if (data.verdict.outcome === null) return judged(data, tr(`reason_${data.verdict.reason}`));
    return judged(data, tr("heads_verdict", { h1: fig(f, "h1"), h2: fig(f, "h2"), tv: figure("100 * distance", pct(f.distance)) }),
      f.distance);
  },
  charts: (data) => data.lines[0].attention[0].map((_, h) => heatmapChart(data, 0, h)),
  notice: (data) => {
    const numbers = headNumbers(data);
    if (!numbers) return ""; // the verdict says it once: one character, nothing to compare
    // The line and the rows are said once, then each head's shares (a French review: the prefix four times).
    const heads = numbers.map((s, h) => tr("heads_notice_head", { h: h + 1, prev: pct(s.prev), self: pct(s.self) }));
    return tr("heads_notice", { list: heads.join(tr("heads_notice_sep")) });
  },
  snippet: (ctx) => [
    "import torch",
    ...modelLines(ctx.setup),
    "",
    `trace = model.trace(torch.tensor([tok.encode(${py(ctx.setup.line_a)})]))`,
    `pattern = trace.attention[0][0]  # ${tr("snippet_heads_pattern", { shape: "(n_head, T, T)" })}`,
    `print(pattern.diagonal(-1, dim1=-2, dim2=-1).mean(-1))  # ${tr("snippet_heads_previous")}`,
  ].join("\n"),
};

/**
 * Layer 1's previous-character head turned off. The verdict names the head and judges on the corpus figures
 * (heads.json); the line on screen is run with that head off (POST /api/ablate) to show the same on one line.
 */
export const ablate = {
  async fetch(ctx, signal) {
    const [verdict, shippedHeads] = await Promise.all([postVerdict(ctx.step.id, ctx.setup, signal), getShipped("heads")]);
    if (verdict.outcome === null) return { verdict };
    const off = [{ layer: 1, head: verdict.figures.head }];
    const answer = await postAblate({ line: ctx.setup.line_a, position: ctx.setup.position, weights: ctx.setup.weights, off }, signal);
    const model = shippedHeads.models.find((m) => m.position === ctx.setup.position);
    return { verdict, answer, ablation: model.layers[0].heads.find((h) => h.head === verdict.figures.head).ablation };
  },
  judge(data, ctx) {
    const v = data.verdict;
    if (v.outcome === null) return judged(data, tr(`reason_${v.reason}`, { mode: modeInSentence(ctx.setup.position) }));
    const f = v.figures;
    const kinds = ["punctuation", "second_line", "other"];
    const vars = { characters: fig(f, "characters", grouped), head: fig(f, "head"), share: figure("100 * share", pct(f.share)) };
    for (const k of kinds) {
      // The rise printed beside its two losses is their printed difference (+0.65 beside 5.26 and 5.91).
      Object.assign(vars, { [k]: shownDifference(f, `after_${k}`, `before_${k}`, 2), [`before_${k}`]: fig(f, `before_${k}`, two),
        [`after_${k}`]: fig(f, `after_${k}`, two) });
    }
    // The question asks where the loss rises most (the outcome); which kind is hardest with the head off is
    // another question, which the verdict answers in `kinds`.
    const { hardest_before: was, hardest_after: hardest, easiest_before: easiest } = v.kinds;
    const gains = v.outcome;
    const kind = (k) => tr(`ablate_kind_${k}`);
    return judged(data, sentences([
      tr("ablate_verdict", vars),
      gains === hardest ? ""
        : tr(was === hardest ? "ablate_not_hardest" : "ablate_becomes_hardest", { gains: kind(gains), hardest: kind(hardest), was: kind(was) }),
      gains === easiest && gains !== hardest ? tr("ablate_surest", { gains: kind(gains), before: vars[`before_${gains}`] }) : "",
    ]), f[v.outcome]);
  },
  charts(data, ctx) {
    if (!data.answer) return [];
    const { answer, ablation } = data;
    const top = Math.max(...Object.values(ablation.by_kind), 0);
    // A 1-character line has no loss to draw: the notice says so, and no chart repeats it to a screen reader.
    const line = chars(ctx.setup.line_a).length < 2 ? [] : [{
      name: "ablate-line", caption: tr("chart_ablate_line", { head: fig(data.verdict.figures, "head") }),
      alt: tr("chart_ablate_line_alt", { before: fixed(answer.all_on.mean_loss, 2), after: fixed(answer.ablated.mean_loss, 2) }),
      figure: lossFigure({ answer, offLabel: offLabel(answer.off) }),
    }];
    return [...line, {
      name: "ablate-kinds", caption: tr("chart_ablate_kinds", { head: fig(data.verdict.figures, "head") }),
      alt: tr("chart_ablate_kinds_alt", { punctuation: fixed(ablation.by_kind.punctuation, 2),
        second_line: fixed(ablation.by_kind.second_line, 2), other: fixed(ablation.by_kind.other, 2) }),
      figure: kindFigure({ ablation, range: [Math.min(0, ...Object.values(ablation.by_kind)), top * 1.25] }),
    }];
  },
  // A 1-character line has no next character to predict: no loss to compare, said as such.
  notice: (data, ctx) => (!data.answer ? "" : chars(ctx.setup.line_a).length < 2 ? tr("notice_ablate_one_char")
    : tr("notice_ablate", { before: fixed(data.answer.all_on.mean_loss, 2), after: fixed(data.answer.ablated.mean_loss, 2) })),
  snippet: (ctx, data) => [
    "import torch",
    ...modelLines(ctx.setup),
    "",
    `x = torch.tensor([tok.encode(${py(ctx.setup.line_a)})])`,
    `off = torch.zeros(model.config.n_layer, model.config.n_head, dtype=torch.bool)`,
    `off[0, ${(data.verdict.figures.head ?? 1) - 1}] = True  # ${tr("snippet_ablate_off", { head: String(data.verdict.figures.head ?? 1) })}`,
    "for heads_off in (None, off):",
    "    logits = model.trace(x, heads_off=heads_off).logits[0, :-1]",
    `    print(torch.nn.functional.cross_entropy(logits, x[0, 1:]).item())  # ${tr("snippet_ablate_loss")}`,
  ].join("\n"),
};

function finalLoss(run) {
  return run.final_val_loss ?? run.val_loss.at(-1);
}

/** "8<4<1" -> "8 heads < 4 heads < 1 head"; "rope<learned<none" -> the modes' names. */
export function orderLabel(order, key, keyed = false) {
  return order.split("<").map((part) => (key === "heads" ? headCount(Number(part), keyed) : modeLabel(part))).join(" < ");
}

/** "8 heads"; keyed, its count is marked as a run's name (data-figure "run": the 8 of the verdict's loss_8). */
function headCount(n, keyed) {
  return keyed ? tr(n === 1 ? "heads_one" : "heads_many", { n: figure("run", n) }) : headsLabel(n);
}

export function trainingKind(key) {
  const runsOf = (data) => exerciseRuns(data)[key];
  const label = (run, keyed = false) => (key === "heads" ? headCount(run.n_head, keyed) : modeLabel(run.position));
  const id = (run) => (key === "heads" ? String(run.n_head) : run.position);
  // In the verdict each loss is keyed by the figure it is (loss_8, loss_rope); the chart's alt text is plain.
  const loss = (run, keyed) => (keyed ? figure(`loss_${id(run)}`, fixed(finalLoss(run)), finalLoss(run)) : fixed(finalLoss(run)));
  // In a sentence a mode is named as one ("no positions 4.995", not "none 4.995").
  const named = (run, keyed) => (key === "heads" ? label(run, keyed) : modeInSentence(run.position));
  const listOf = (runs, keyed = false) => runs.map((r) => tr("training_run_loss", { run: named(r, keyed), loss: loss(r, keyed) }))
    .join(tr("list_sep"));
  const labelOf = (id) => (key === "heads" ? headCount(Number(id), true) : modeLabel(id));
  return {
    fetch: withVerdict(() => getShipped("training")),
    judge(data, ctx) {
      const runs = runsOf(data);
      const v = data.verdict;
      if (!runs.length || v.outcome === null) return judged(data, tr("results_empty"));
      const f = v.figures;
      // Two runs closer than their noise: one run each cannot order them, and either order counts.
      // Their gap as the listed losses print it: the larger printed loss minus the smaller.
      const apart = (x, y) => {
        const [hi, lo] = fixed(f[`loss_${x}`]) >= fixed(f[`loss_${y}`]) ? [x, y] : [y, x];
        return shownDifference(f, `loss_${hi}`, `loss_${lo}`);
      };
      const ties = v.ties.map(([x, y]) => tr("training_tie", {
        x: labelOf(x), y: labelOf(y), d: apart(x, y), noise: fig(f, `within_${x}_${y}`, fixed),
      }));
      return judged(data, sentences([
        tr(`${ctx.step.id}_verdict`, { list: listOf(runs, true), order: orderLabel(v.outcome, key, true) }), ...ties,
      ]));
    },
    charts(data) {
      const runs = runsOf(data);
      if (!runs.length) return [];
      // The lines are measured on a fixed sample every few steps, the verdict's losses on the whole split (the
      // diamonds): the caption says which is which.
      const every = runs[0].steps[1] - runs[0].steps[0];
      return [{ name: `training-${key}`, caption: tr("chart_training", { every: grouped(every) }),
        alt: tr("chart_training_alt", { list: listOf(runs) }), figure: trainingFigure({ runs, key, finals: true }) }];
    },
    notice(data) {
      const runs = [...runsOf(data)].sort((x, y) => finalLoss(x) - finalLoss(y));
      if (runs.length < 2) return "";
      const [best, worst] = [runs[0], runs.at(-1)];
      // The losses the verdict lists, as it prints them: their difference is the one a reader works out.
      return tr("notice_training", { gap: shownDifference(data.verdict.figures, `loss_${id(worst)}`, `loss_${id(best)}`) });
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
