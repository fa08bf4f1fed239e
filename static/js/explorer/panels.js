// Draw one response into the page's panels. Each render* function owns one panel; the heatmaps are in
// heatmaps.js.

import { $, $$, clear, el, show } from "../shared/dom.js";
import { draw, purge, purgeAll } from "../shared/draw.js";
import { fillRich, grouped, num, scientific, sentences, tr, verbatim } from "../shared/i18n.js";
import { getShipped } from "../shared/api.js";
import { showLoadError } from "./shipped.js";
import { RESIDUAL_FLOOR, depthFigure, residualFigure, ropeFigure, visible } from "../shared/plots.js";
import { ropePairFigure } from "./plots-positions.js";

export const fmtSci = (v) => scientific(v, 2); // 3.1 × 10⁻⁸, never 3.1e-8

function positionName(position) {
  return tr(`pos_${position}`);
}

export function weightsLabel(model) {
  if (model.name) return tr("weights_model", { name: verbatim(model.name) }); // an operator's model (serve --model)
  return model.weights === "trained"
    ? tr("weights_trained_short")
    : tr("weights_random_short", { seed: model.seed ?? 0 });
}

/** The model that answered, in one line: the explorer shows it beside its controls (render.js). */
export function modelSummary(model) {
  return tr("model_summary", {
    position: positionName(model.position),
    weights: weightsLabel(model),
    n_layer: model.n_layer,
    n_head: model.n_head,
    n_embd: model.n_embd,
    head_dim: model.head_dim,
  });
}

/** The note beside a box for the characters the vocabulary lacks (they read as unknown); "" when there are none. */
export function unknownNote(chars) {
  return chars.length ? tr("unknown_chars", { chars: chars.map(visible).join(" ") }) : "";
}

/**
 * One heatmap: a <figure> named by its caption and described by a text alternative (the largest
 * weights). The figure carries the name, not the plot: Plotly's save buttons inside the plot are
 * focusable, and a role=img around them would hide them from assistive technology.
 */
/** The depth panel's claims, each worded from one field of the verdict's `depth`, with the answer's figures. */
function depthVerdict(response, depth) {
  const [lineA, lineB] = response.lines;
  const [one, two] = response.by_depth;
  const last = lineA.tokens.length - 1;
  const value = fmtSci(one.without_position.max_abs);
  const parts = [tr(`depth_verdict_${depth.reason}`, {
    value, a: visible(lineA.tokens[last]), b: visible(lineB.tokens[last]),
  })];
  if (depth.leak) parts.push(tr(`depth_verdict_${depth.leak}`, { value: fmtSci(two.without_position.max_abs) }));
  return sentences(parts);
}

/** The mask-off control: every depth's difference without positions, and whether it is all rounding. */
function causalOffNote(response, depth) {
  const largest = Math.max(...response.by_depth.map((row) => row.without_position.max_abs));
  return tr(depth.causal_off === "rounding" ? "depth_causal_off" : "depth_causal_off_differs", { value: fmtSci(largest) });
}

export function renderDepth(response, verdict) {
  const weights = weightsLabel(response.model);
  // Under none there is no position information to add: the "with" column would repeat "without".
  const none = response.model.position === "none";
  const keys = none ? ["without_position"] : ["with_position", "without_position"];
  show($("#depth-table th[data-key=with]"), !none);
  show($("#depth-none-note"), none);
  const tbody = clear($("#depth-table tbody"));
  const fmt = (v) => num(fmtSci(v));
  const row = (label, values, className = "") =>
    el("tr", { className }, [
      el("th", { scope: "row", text: label }),
      // The value as a number too: the text is for reading (3.6 × 10⁻⁷), data-value for anything that computes.
      ...keys.map((key) => el("td", { text: fmt(values[key].max_abs), dataset: { value: String(values[key].max_abs) } })),
    ]);
  for (const r of response.by_depth) tbody.append(row(String(r.n_layer), r));
  const thisModel = tr("depth_table_this", { n_layer: response.model.n_layer, weights });
  tbody.append(row(thisModel, response.difference, "is-current"));
  const values = [...response.by_depth, response.difference].flatMap((r) => keys.map((key) => r[key].max_abs));
  show($("#depth-zero-note"), values.some((v) => v === 0));
  const verdictNode = $("#depth-verdict");
  fillRich(verdictNode, depthVerdict(response, verdict.depth));
  const causalNote = $("#depth-causal-note");
  fillRich(causalNote, verdict.depth.causal_off ? causalOffNote(response, verdict.depth) : "");
  show(causalNote, !response.model.causal);
  const figure = depthFigure({ byDepth: response.by_depth, difference: response.difference, model: response.model });
  return draw($("#depth-plot"), figure, "by-depth");
}

export function renderNext(response) {
  const root = clear($("#next-lists"));
  response.lines.forEach((line, i) => {
    const name = i === 0 ? "A" : "B";
    const top = Math.max(...line.top_next.map((x) => x.prob), 1e-12);
    const items = line.top_next.map((x) => {
      const unknown = x.token === "\uFFFD";
      const bar = el("span", { className: "next-bar__fill" });
      bar.style.width = `${Math.max(2, (100 * x.prob) / top).toFixed(1)}%`;
      return el("li", { className: "next-item" }, [
        el("span", {
          className: `next-token${unknown ? " is-unknown" : ""}`,
          text: visible(x.token),
          title: unknown ? tr("next_unknown") : null,
          attrs: { lang: "zh" },
        }),
        el("span", { className: "next-bar", attrs: { "aria-hidden": "true" } }, [bar]),
        el("span", { className: "next-prob", text: tr("percent", { value: (100 * x.prob).toFixed(2) }) }),
      ]);
    });
    root.append(
      el("div", { className: "next-list" }, [
        el("h3", { className: "next-list__title" }, [
          el("span", { className: `line-badge line-badge--${name.toLowerCase()}`, text: name }),
          el("span", { text: tr("next_line", { name }) }),
        ]),
        el("ol", { className: "next-items" }, items),
      ]),
    );
  });
}

export function renderResidual(response) {
  const panelPlots = $("#residual-plots");
  const res = response.residual_difference;
  const none = response.model.position === "none";
  show($("#residual-note"), !res);
  // Without positions in the model, "with position" and "without" are the same run: one chart.
  show($("#residual-text-none"), none);
  show($("#residual-item-with"), !none);
  if (!res) {
    purgeAll(panelPlots);
    show(panelPlots, false);
    return Promise.resolve();
  }
  show(panelPlots, true);
  const logs = [...res.with_position.flat(), ...res.without_position.flat()]
    .map((v) => Math.log10(Math.max(v, RESIDUAL_FLOOR)));
  const range = [Math.min(...logs), Math.max(...logs, Math.min(...logs) + 1)];
  const [a, b] = response.lines;
  const figure = (matrix) => residualFigure({ matrix, tokensA: a.tokens, tokensB: b.tokens, range });
  if (none) purge($("#residual-with"));
  return Promise.all([
    none ? null : draw($("#residual-with"), figure(res.with_position), "residual-with-position"),
    draw($("#residual-without"), figure(res.without_position), "residual-without-position"),
  ]);
}

export function renderRope(response) {
  const panel = $("#panel-rope");
  if (!response.rope) {
    for (const node of $$(".plot", panel)) purge(node);
    show(panel, false);
    return Promise.resolve();
  }
  show(panel, true);
  const r = response.rope;
  $("#rope-meta").textContent = tr("rope_meta", { base: r.base, pairs: r.theta.length, head_dim: r.head_dim });
  return Promise.all([draw($("#rope-plot"), ropeFigure({ rope: r }), "rope-angles"), renderRopePairs(response)]);
}

/** Pair 0 and one slower pair (the select), each as a 2-D vector turning with the position. */
export function renderRopePairs(response) {
  const r = response.rope;
  if (!r) return Promise.resolve();
  const select = $("#rope-pair");
  const last = r.theta.length - 1;
  const wanted = Array.from({ length: last }, (_, i) => String(i + 1));
  if ([...select.options].map((o) => o.value).join(",") !== wanted.join(",")) {
    const keep = select.value || String(Math.min(8, last));
    select.replaceChildren(...wanted.map((v) => new Option(v, v)));
    select.value = wanted.includes(keep) ? keep : String(Math.min(8, last));
  }
  // Line A's characters label the positions; where line B is longer, B's.
  const [a, b] = response.lines.map((line) => line.tokens);
  const tokens = r.angles.map((_, p) => a[p] ?? b[p]);
  const jobs = [["fast", 0], ["slow", Number(select.value)]].map(([which, pair]) => {
    const theta = r.theta[pair];
    $(`#rope-pair-${which}-caption`).textContent = tr(`rope_pair_${which}`, {
      pair,
      theta: theta.toPrecision(3),
      degrees: ((theta * 180) / Math.PI).toPrecision(3),
    });
    return draw($(`#rope-pair-${which}`), ropePairFigure({ rope: r, pair, tokens }), `rope-pair-${pair}`);
  });
  return Promise.all(jobs);
}

/** One column of the head-split panel: shapes on the way through, and the parameter counts. */
function renderSplit(root, { nEmbd, shapes, params, nHead }) {
  const fmtShape = (shape) => `(${shape.join(", ")})`;
  // The heads are joined back by transpose(1, 2) and view: q's own (B, T, C) shape again.
  const joined = shapes.q;
  const steps = [["q", shapes.q], ["heads", shapes.heads], ["scores", shapes.scores], ["joined", joined]];
  for (const [key, shape] of steps) {
    for (const node of $$(`[data-shape="${key}"]`, root)) node.textContent = fmtShape(shape);
  }
  const counts = params.find((p) => p.n_head === nHead) ?? params[0];
  const C = nEmbd;
  const n = grouped;
  // The formula is written from the width; the total shown is the one the server counted on a real module.
  $('[data-count="qkv"]', root).textContent = `qkv = 3·${C}·${C} + 3·${C} = ${n(counts.qkv)}`;
  $('[data-count="proj"]', root).textContent = `proj = ${C}·${C} + ${C} = ${n(counts.proj)}`;
  root.dataset.qkv = String(counts.qkv);
  root.dataset.proj = String(counts.proj);
}

/** The lesson's own example (32 wide, 4 heads of 8, 5 characters), from GET /api/head-split once per page. */
function renderLessonSplit(lesson) {
  renderSplit($("#split-lesson"), {
    nEmbd: lesson.n_embd, shapes: lesson.shapes, params: lesson.params, nHead: lesson.n_head,
  });
  $("#split-lesson-title").textContent = tr("split_lesson", {
    n_embd: lesson.n_embd, n_head: lesson.n_head, head_dim: lesson.n_embd / lesson.n_head,
  });
}

export function renderHeads(response, options) {
  const m = response.model;
  renderSplit($("#split-model"), {
    nEmbd: m.n_embd, shapes: response.shapes, params: response.params, nHead: m.n_head,
  });
  $("#split-model-title").textContent = tr("split_model", { n_embd: m.n_embd, n_head: m.n_head, head_dim: m.head_dim });
  const counts = response.params.find((p) => p.n_head === m.n_head) ?? response.params[0];
  // Callbacks on the one shared request run in the order they were added: the newest answer writes last.
  // A failed request says so in the panel; getShipped asks again with the next answer.
  const panel = $("#panel-heads");
  getShipped("head-split").then((lesson) => {
    showLoadError(panel, null);
    renderLessonSplit(lesson);
    fillRich($("#split-why"), tr("split_why", {
      n_embd: m.n_embd, qkv: grouped(counts.qkv), proj: grouped(counts.proj), lesson_embd: lesson.n_embd,
    }));
  }, (error) => showLoadError(panel, error));
  const tbody = clear($("#params-table tbody"));
  for (const p of response.params) {
    tbody.append(
      el("tr", { className: p.n_head === m.n_head ? "is-current" : "" }, [
        el("th", { scope: "row", text: String(p.n_head) }),
        el("td", { text: String(m.n_embd / p.n_head) }),
        el("td", { text: grouped(p.qkv) }),
        el("td", { text: grouped(p.proj) }),
      ]),
    );
  }
  const max = options?.max_chars;
  const note = $("#pos-emb-note");
  fillRich(note, max ? tr("pos_emb_note", { rows: max.learned, max: Math.max(max.rope ?? 0, max.none ?? 0) }) : "");
  show(note, Boolean(max));
}

/**
 * The panels drawn from one /api/compare answer, each with one interface: update(answer, ctx). `first`
 * ones are quick text and are drawn before the heatmaps; the others after them, so the maps come first.
 * (The heatmaps themselves take a view and can be stopped half-way: render.js draws them in between.)
 */
export const ANSWER_PANELS = [
  { name: "next", first: true, update: (answer) => renderNext(answer) },
  // Not `first`: its numbers are the page's first Intl formatting, which loads the locale data (README, Benchmark).
  { name: "heads", update: (answer, ctx) => renderHeads(answer, ctx.options) },
  { name: "depth", update: (answer, ctx) => renderDepth(answer, ctx.verdict) },
  { name: "residual", update: (answer) => renderResidual(answer) },
  { name: "rope", update: (answer) => renderRope(answer) },
];
