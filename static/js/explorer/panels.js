// Draw one response into the page's panels. Each render* function owns one panel.

import { $, $$, clear, el, show } from "../shared/dom.js";
import { draw, purge, unfit } from "../shared/draw.js";
import { fillRich, grouped, num, scientific, sentences, tr } from "../shared/i18n.js";
import { differenceMap, largestAbs, topCells } from "./align.js";
import { getShipped } from "../shared/api.js";
import { headRoleText } from "./head-role.js";
import { showLoadError } from "./shipped.js";
import {
  RESIDUAL_FLOOR, depthFigure, heatmapFigure, maskPattern, residualFigure, ropeFigure, visible,
} from "../shared/plots.js";
import { ropePairFigure } from "./plots-positions.js";

function nextTask() {
  return new Promise((resolve) => { setTimeout(resolve, 0); });
}

/** Drawing goes on in one task for about this long before it lets the browser paint and take keys. */
const SLICE_MS = 50;

/**
 * () => a promise: the next task once SLICE_MS have gone by since the last, at once before that. Each yield
 * costs a frame of painting the whole page: small maps are drawn together, long lines' maps one by one.
 */
function slicer() {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < SLICE_MS) return;
    await nextTask();
    since = performance.now();
  };
}

function purgeAll(root) {
  for (const node of $$(".js-plotly-plot", root)) purge(node);
}

function positionName(position) {
  return tr(`pos_${position}`);
}

export function weightsLabel(model) {
  if (model.name) return tr("weights_model", { name: model.name }); // an operator's model (serve --model)
  return model.weights === "trained"
    ? tr("weights_trained_short")
    : tr("weights_random_short", { seed: model.seed ?? 0 });
}

/** The model that answered, in one line: the explorer shows it beside its controls (main.js). */
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
function heatmapCell(line, head) {
  const id = `heatmap-${line}-${head}`;
  const badge = line === "diff"
    ? []
    : [el("span", {
      className: `line-badge line-badge--${line}`, text: line.toUpperCase(), attrs: { "aria-hidden": "true" },
    })];
  return el("figure", {
    className: `heatmap-cell heatmap-cell--${line}`,
    attrs: { "aria-labelledby": `${id}-caption`, "aria-describedby": `${id}-alt` },
  }, [
    el("figcaption", { id: `${id}-caption`, className: "heatmap-cell__caption" }, [
      ...badge,
      el("span", { className: "heatmap-cell__text" }),
    ]),
    el("div", { className: "heatmap", dataset: { line, head: String(head) } }),
    el("p", { id: `${id}-alt`, className: "heatmap-cell__alt visually-hidden" }),
  ]);
}

/**
 * Rebuild the grid's rows only when the head count changes; otherwise react in place. The A−B column comes and
 * goes alone (a line one character longer or shorter), so the maps of A and B stay drawn; they no longer fit
 * their columns' width, and each says so (data-unfit) until it is drawn again (a render may stop half-way).
 */
function ensureGrid(grid, nHead, withDiff) {
  if (grid.dataset.heads === String(nHead)) {
    if (grid.dataset.diff === String(withDiff)) return;
    for (const plot of $$(".heatmap", grid)) plot.dataset.unfit = "";
    for (const row of $$(".heatmap-row", grid)) {
      const plots = $(".heatmap-row__plots", row);
      plots.classList.toggle("has-diff", withDiff);
      if (withDiff) {
        plots.append(heatmapCell("diff", Number(row.dataset.head)));
      } else {
        const cell = $(".heatmap-cell--diff", plots);
        purgeAll(cell);
        cell.remove();
      }
    }
    grid.dataset.diff = String(withDiff);
    return;
  }
  purgeAll(grid);
  clear(grid);
  for (let h = 0; h < nHead; h += 1) {
    const cells = [heatmapCell("a", h), heatmapCell("b", h)];
    if (withDiff) cells.push(heatmapCell("diff", h));
    grid.append(
      el("div", {
        className: "heatmap-row",
        dataset: { head: String(h) },
        attrs: { role: "group", "aria-labelledby": `heatmap-row-${h}-title` },
      }, [
        el("div", { className: "heatmap-row__head" }, [
          el("h3", { id: `heatmap-row-${h}-title`, className: "heatmap-row__title" }),
          el("p", { className: "heatmap-row__role" }),
          el("p", { className: "heatmap-row__score" }),
        ]),
        el("div", { className: `heatmap-row__plots${withDiff ? " has-diff" : ""}` }, cells),
      ]),
    );
  }
  grid.dataset.heads = String(nHead);
  grid.dataset.diff = String(withDiff);
}

const fmtSci = (v) => scientific(v, 2); // 3.1 × 10⁻⁸, never 3.1e-8
const fmtWeight = (v) => (Math.abs(v) >= 0.01 ? v.toFixed(2) : fmtSci(v));

/** "日→白 0.62, 尽→山 0.41": the text alternative of one map, its largest cells (query → key). */
function describeCells(z, labels, kind, head, name) {
  // Row 0 of a causal pattern always puts all its weight on itself: it says nothing.
  const skip = kind === "pattern" && z.length > 1 && z[0].filter((v) => v !== null).length === 1
    ? new Set([0]) : new Set();
  const cells = topCells(z, 3, skip).map(({ q, k, v }) =>
    `${labels[q]}→${labels[k]} ${kind === "diff" && v > 0 ? "+" : ""}${fmtWeight(v)}`);
  return tr(kind === "diff" ? "alt_diff" : "alt_pattern", { head, name, cells: cells.join(tr("list_sep")) });
}

/**
 * The A − B column: B's rows and columns in A's order when the server lined B up with A (the answer's
 * `alignment`, by token id) and the box is ticked, else cell by cell. Returns the per-head maps and their
 * largest |A − B|.
 */
function differences(a, b, perm, align) {
  const aligned = Boolean(perm) && align;
  const maps = a.map((m, h) => differenceMap(m, b[h], aligned ? perm : null));
  return { perm, aligned, maps, largest: maps.map(largestAbs) };
}

/** The sentence of each aligned reason of the verdict (its `aligned[view][layer].reason`). */
const ALIGNED_SENTENCES = {
  other_end: (v) => tr("attn_verdict_other_end", { a: v.lastA, b: v.lastB, value: v.value }),
  blank: (v) => tr("attn_verdict_blank", { ch: v.lastA, value: v.value, value64: fmtSci(v.judged.gap64) }),
  positions: (v) => sentences([tr("attn_verdict_differs", { ch: v.lastA, value: v.value }), tr("attn_why_positions")]),
  leak: (v) => sentences([tr("attn_verdict_differs", { ch: v.lastA, value: v.value }),
    tr("attn_why_leak", { layer: v.layer, prev: v.layer - 1 })]),
  other: (v) => sentences([tr("attn_verdict_differs", { ch: v.lastA, value: v.value }), tr("attn_why_other")]),
};

/**
 * What the A − B column subtracts and what its last row says, each worded from one field: the answer's
 * `alignment` (what is subtracted) and the verdict's `aligned` for this view and layer (why the row is what it is).
 */
function explainDifference(response, verdict, view, diff) {
  const [lineA, lineB] = response.lines;
  const last = lineA.tokens.length - 1;
  let what;
  if (diff.aligned) what = tr("attn_diff_aligned");
  else if (diff.perm) what = tr("attn_diff_cells_reorder");
  else what = tr("attn_diff_cells_other");
  fillRich($("#attn-diff-what"), what);

  const node = $("#attn-verdict");
  // Until the server's verdict on these lines has come, the sentence there is the last lines': hidden, with its
  // place kept, so the maps under it do not move (main.js draws the sentence when the verdict comes).
  node.style.visibility = verdict ? "" : "hidden";
  if (!verdict) return;
  const judged = diff.aligned ? verdict.aligned?.[view.posinfo ? "with_position" : "without_position"]?.[view.layer - 1] : null;
  let text = "";
  if (judged) {
    // The figure shown is the float32 maps' largest |A − B| on the last row, the maps drawn under it.
    const lastRow = Math.max(0, ...diff.maps.map((m) => Math.max(0, ...m[last].filter((v) => v !== null).map(Math.abs))));
    text = ALIGNED_SENTENCES[judged.reason]({
      lastA: visible(lineA.tokens[last]), lastB: visible(lineB.tokens[last]), value: fmtWeight(lastRow), judged,
      layer: view.layer,
    });
    if (judged.earlier_rows) text = sentences([text, tr("attn_earlier_rows")]);
  }
  fillRich(node, text);
  show(node, Boolean(text));
}

let headSummaries = null; // /api/heads once it has arrived: what each trained head looks at

/**
 * What the trained head does on the validation poems, in the head gallery's words ("" for random
 * weights, or until /api/heads arrives: the maps do not wait for it; it names them when it comes).
 */
function headRole(model, layer, h) {
  if (model.weights !== "trained") return "";
  if (!headSummaries) {
    getShipped("heads").then((data) => {
      headSummaries = data;
      nameHeads(model);
    }).catch(console.error);
    return "";
  }
  const role = headSummaries.models?.find((m) => m.position === model.position)
    ?.layers.find((l) => l.layer === layer)?.heads.find((x) => x.head === h + 1)?.role;
  return role ? tr("attn_head_role", { role: headRoleText(role) }) : "";
}

function nameHeads(model) {
  const grid = $("#heatmaps");
  for (const row of $$(".heatmap-row", grid)) {
    $(".heatmap-row__role", row).textContent = headRole(model, Number(grid.dataset.layer), Number(row.dataset.head));
  }
}

/** view: {layer, posinfo (false: the run without position information), align (false: cell by cell)}. */
export async function renderHeatmaps(response, verdict, view, isStale = () => false) {
  const grid = $("#heatmaps");
  const [lineA, lineB] = response.lines;
  const { n_head: nHead, n_layer: nLayer, causal, position } = response.model;
  const { layer } = view;
  // Long lines come with one layer only (the request names it); the response says which.
  const slot = response.attention_layers.indexOf(layer);
  if (slot < 0) return false;
  const key = view.posinfo ? "attention" : "attention_without_position";
  if (!lineA[key]) return false; // long lines: this view's maps come with the next answer
  const withDiff = lineA.tokens.length === lineB.tokens.length;
  ensureGrid(grid, nHead, withDiff);
  const resized = []; // maps left as they were while their column changed width: drawn again at the end
  grid.dataset.layer = String(layer);
  grid.dataset.posinfo = String(view.posinfo);
  show($("#attn-diff-note"), !withDiff);
  show($("#attn-causal-note"), !causal);
  const blindNote = $("#attn-blind-note");
  fillRich(blindNote, view.posinfo ? "" : tr(position === "none" ? "attn_blind_none" : "attn_blind"));
  show(blindNote, !view.posinfo);
  $("#attn-layer-note").textContent = tr("attn_layer_of", { layer, n_layer: nLayer });

  const a = lineA[key][slot].map((m) => maskPattern(m, causal));
  const b = lineB[key][slot].map((m) => maskPattern(m, causal));
  const diff = withDiff ? differences(a, b, response.alignment, view.align) : null;
  grid.dataset.aligned = String(Boolean(diff?.aligned));
  show($("#attn-diff-what"), withDiff);
  if (diff) explainDifference(response, verdict, view, diff);
  else show($("#attn-verdict"), false);
  // One symmetric range for every head of the layer, so the heads can be compared by colour.
  const range = diff ? Math.max(...diff.largest.map((x) => x.value), 1e-9) : 1;
  const strongest = diff ? diff.largest.reduce((best, x, h) => (x.value > diff.largest[best].value ? h : best), 0) : -1;

  // Row by row, yielding between slices of rows: the first heads appear at once, typing stays responsive,
  // and a newer render can stop this one (isStale) instead of queueing behind it.
  const pause = slicer();
  for (let h = 0; h < nHead; h += 1) {
    if (isStale()) return false;
    const row = $(`.heatmap-row[data-head="${h}"]`, grid);
    const head = tr("attn_head", { h: h + 1 });
    $(".heatmap-row__title", row).textContent = head;
    const role = headRole(response.model, layer, h);
    $(".heatmap-row__role", row).textContent = role;
    const score = $(".heatmap-row__score", row);
    score.textContent = diff ? tr("attn_head_score", { value: fmtWeight(diff.largest[h].value) }) : "";
    score.dataset.value = diff ? String(diff.largest[h].value) : "";
    row.classList.toggle("is-strongest", h === strongest && nHead > 1);
    const diffCaption = tr(diff?.aligned ? "attn_col_diff_aligned" : "attn_col_diff");
    const cells = [
      ["a", lineA.tokens, a[h], "pattern", lineA.text, tr("attn_col_a")],
      ["b", lineB.tokens, b[h], "pattern", lineB.text, tr("attn_col_b")],
    ];
    if (diff) cells.push(["diff", lineA.tokens, diff.maps[h], "diff", diffCaption, diffCaption]);
    const jobs = cells.map(([which, tokens, z, kind, caption, name]) => {
      const plot = $(`.heatmap[data-line="${which}"]`, row);
      const figure = plot.parentElement;
      $(".heatmap-cell__text", figure).textContent = caption;
      // Cell by cell, a position of A − B holds two characters: "白/山".
      const labels = kind === "diff" && !diff.aligned
        ? tokens.map((ch, i) => `${visible(ch)}/${visible(lineB.tokens[i])}`)
        : tokens.map(visible);
      // The text alternative: what the head does on the poems (trained weights), then its largest cells.
      $(".heatmap-cell__alt", figure).textContent = sentences([role, describeCells(z, labels, kind, head, name)]);
      const spec = { tokens, tokensB: lineB.tokens, z, kind, range, aligned: Boolean(diff?.aligned) };
      const file = `attention-layer${layer}-head${h + 1}-${which}`;
      const map = heatmapFigure(spec);
      return draw(plot, map, file).then((drew) => {
        if (drew) delete plot.dataset.unfit;
        else if ("unfit" in plot.dataset) resized.push([plot, map, file]);
      });
    });
    await Promise.all(jobs);
    await pause();
  }
  // After every map that changed, and a paint: the line typed in shows first, the other line's maps only resize.
  if (resized.length) await nextTask();
  for (const [plot, figure, name] of resized) {
    if (isStale()) return false; // the newer render finds them still marked, and draws them
    unfit(plot);
    await draw(plot, figure, name);
    delete plot.dataset.unfit;
    await pause();
  }
  return true;
}


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
 * (The heatmaps themselves take a view and can be stopped half-way: main.js draws them in between.)
 */
export const ANSWER_PANELS = [
  { name: "next", first: true, update: (answer) => renderNext(answer) },
  // Not `first`: its numbers are the page's first Intl formatting, which loads the locale data (README, Benchmark).
  { name: "heads", update: (answer, ctx) => renderHeads(answer, ctx.options) },
  { name: "depth", update: (answer, ctx) => renderDepth(answer, ctx.verdict) },
  { name: "residual", update: (answer) => renderResidual(answer) },
  { name: "rope", update: (answer) => renderRope(answer) },
];
