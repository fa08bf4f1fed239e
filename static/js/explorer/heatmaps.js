// The attention heatmaps of one /api/compare answer: a grid of heads for each line and, where the lines align,
// their difference; each cell described in words for screen readers. Drawn in slices so that typing stays quick.

import { $, $$, clear, el, show } from "../shared/dom.js";
import { draw, purgeAll, unfit } from "../shared/draw.js";
import { fillRich, sentences, tr } from "../shared/i18n.js";
import { differenceMap, largestAbs, topCells } from "./align.js";
import { getShipped } from "../shared/api.js";
import { headRoleText } from "./head-role.js";
import { heatmapFigure, maskPattern, visible } from "../shared/plots.js";
import { fmtSci } from "./panels.js";

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
  // place kept, so the maps under it do not move (render.js draws the sentence when the verdict comes).
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
