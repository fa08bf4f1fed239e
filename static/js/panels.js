// Draw one response into the page's panels. Each render* function owns one panel.

import { $, $$, clear, el, show } from "./dom.js";
import { draw, purge } from "./draw.js";
import { fillRich, tr } from "./i18n.js";
import {
  RESIDUAL_FLOOR, depthFigure, diffPattern, heatmapFigure, maskPattern, maxAbs, residualFigure, ropeFigure, visible,
} from "./plots.js";
import { ropePairFigure } from "./plots-positions.js";

function nextTask() {
  return new Promise((resolve) => { setTimeout(resolve, 0); });
}

function purgeAll(root) {
  for (const node of $$(".js-plotly-plot", root)) purge(node);
}

function positionName(position) {
  return tr(`pos_${position}`);
}

export function weightsLabel(model) {
  return model.weights === "trained"
    ? tr("weights_trained_short")
    : tr("weights_random_short", { seed: model.seed ?? 0 });
}

export function renderSummary(response) {
  const m = response.model;
  $("#model-summary").textContent = tr("model_summary", {
    position: positionName(m.position),
    weights: weightsLabel(m),
    n_layer: m.n_layer,
    n_head: m.n_head,
    n_embd: m.n_embd,
    head_dim: m.head_dim,
  });
  for (const [i, id] of [[0, "line-a"], [1, "line-b"]]) {
    const line = response.lines[i];
    const unknown = [...new Set(line.tokens.filter((_, k) => line.unknown[k]))];
    const node = $(`#${id}-unknown`);
    node.textContent = unknown.length ? tr("unknown_chars", { chars: unknown.map(visible).join(" ") }) : "";
    show(node, unknown.length > 0);
  }
}

function heatmapCell(line, head, caption) {
  const plot = el("div", {
    className: "heatmap",
    dataset: { line, head: String(head) },
    attrs: { role: "img" },
  });
  const badge = line === "diff"
    ? []
    : [el("span", { className: `line-badge line-badge--${line}`, text: line.toUpperCase() })];
  return el("figure", { className: `heatmap-cell heatmap-cell--${line}` }, [
    el("figcaption", { className: "heatmap-cell__caption" }, [
      ...badge,
      el("span", { className: "heatmap-cell__text", text: caption }),
    ]),
    plot,
  ]);
}

/** Rebuild the grid's rows only when the head count or the A−B column changes; otherwise react in place. */
function ensureGrid(grid, nHead, withDiff) {
  if (grid.dataset.heads === String(nHead) && grid.dataset.diff === String(withDiff)) return;
  purgeAll(grid);
  clear(grid);
  for (let h = 0; h < nHead; h += 1) {
    const cells = [heatmapCell("a", h, ""), heatmapCell("b", h, "")];
    if (withDiff) cells.push(heatmapCell("diff", h, ""));
    grid.append(
      el("div", { className: "heatmap-row", dataset: { head: String(h) }, attrs: { role: "group" } }, [
        el("h3", { className: "heatmap-row__title" }),
        el("div", { className: `heatmap-row__plots${withDiff ? " has-diff" : ""}` }, cells),
      ]),
    );
  }
  grid.dataset.heads = String(nHead);
  grid.dataset.diff = String(withDiff);
}

export async function renderHeatmaps(response, layer, isStale = () => false) {
  const grid = $("#heatmaps");
  const [lineA, lineB] = response.lines;
  const { n_head: nHead, n_layer: nLayer, causal } = response.model;
  // Long lines come with one layer only (the request names it); the response says which.
  const slot = response.attention_layers.indexOf(layer);
  if (slot < 0) return false;
  const withDiff = lineA.tokens.length === lineB.tokens.length;
  ensureGrid(grid, nHead, withDiff);
  grid.dataset.layer = String(layer);
  show($("#attn-diff-note"), !withDiff);
  show($("#attn-causal-note"), !causal);
  $("#attn-layer-note").textContent = tr("attn_layer_of", { layer, n_layer: nLayer });

  const a = lineA.attention[slot].map((m) => maskPattern(m, causal));
  const b = lineB.attention[slot].map((m) => maskPattern(m, causal));
  const diffs = withDiff ? a.map((m, h) => diffPattern(m, b[h])) : [];
  // One symmetric range for every head of the layer, so the heads can be compared by colour.
  const range = withDiff ? Math.max(maxAbs(diffs), 1e-6) : 1;

  // Row by row, yielding between rows: the first heads appear at once, typing stays responsive,
  // and a newer render can stop this one (isStale) instead of queueing behind it.
  for (let h = 0; h < nHead; h += 1) {
    if (isStale()) return false;
    const row = $(`.heatmap-row[data-head="${h}"]`, grid);
    $(".heatmap-row__title", row).textContent = tr("attn_head", { h: h + 1 });
    const cells = [
      ["a", lineA, a[h], "pattern", lineA.text, tr("attn_col_a")],
      ["b", lineB, b[h], "pattern", lineB.text, tr("attn_col_b")],
    ];
    if (withDiff) cells.push(["diff", lineA, diffs[h], "diff", tr("attn_col_diff"), tr("attn_col_diff")]);
    const jobs = cells.map(([which, line, z, kind, caption, name]) => {
      const plot = $(`.heatmap[data-line="${which}"]`, row);
      $(".heatmap-cell__text", plot.parentElement).textContent = caption;
      plot.setAttribute("aria-label", `${tr("attn_head", { h: h + 1 })}, ${name}: ${caption}`);
      const figure = heatmapFigure({ tokens: line.tokens, tokensB: lineB.tokens, z, kind, range });
      return draw(plot, figure, `attention-layer${layer}-head${h + 1}-${which}`);
    });
    await Promise.all(jobs);
    await nextTask();
  }
  return true;
}

export function renderDepth(response) {
  const weights = weightsLabel(response.model);
  const tbody = clear($("#depth-table tbody"));
  const fmt = (v) => (v === 0 ? "0" : v.toExponential(1));
  for (const row of response.by_depth) {
    tbody.append(
      el("tr", {}, [
        el("th", { scope: "row", text: String(row.n_layer) }),
        el("td", { text: fmt(row.with_position.max_abs) }),
        el("td", { text: fmt(row.without_position.max_abs) }),
      ]),
    );
  }
  tbody.append(
    el("tr", { className: "is-current" }, [
      el("th", { scope: "row", text: tr("depth_table_this", { n_layer: response.model.n_layer, weights }) }),
      el("td", { text: fmt(response.difference.with_position.max_abs) }),
      el("td", { text: fmt(response.difference.without_position.max_abs) }),
    ]),
  );
  const values = [...response.by_depth, response.difference]
    .flatMap((r) => [r.with_position.max_abs, r.without_position.max_abs]);
  show($("#depth-zero-note"), values.some((v) => v === 0));
  show($("#depth-causal-note"), !response.model.causal);
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
        el("span", { className: "next-prob", text: `${(100 * x.prob).toFixed(2)}%` }),
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

export function renderHeads(response, options) {
  const fmtShape = (shape) => `(${shape.join(", ")})`;
  for (const key of ["q", "heads", "scores"]) {
    $(`#shape-flow [data-shape="${key}"]`).textContent = fmtShape(response.shapes[key]);
  }
  const tbody = clear($("#params-table tbody"));
  for (const p of response.params) {
    tbody.append(
      el("tr", { className: p.n_head === response.model.n_head ? "is-current" : "" }, [
        el("th", { scope: "row", text: String(p.n_head) }),
        el("td", { text: String(response.model.n_embd / p.n_head) }),
        el("td", { text: p.qkv.toLocaleString("en-US") }),
        el("td", { text: p.proj.toLocaleString("en-US") }),
      ]),
    );
  }
  const max = options?.max_chars;
  const note = $("#pos-emb-note");
  fillRich(note, max ? tr("pos_emb_note", { rows: max.learned, max: Math.max(max.rope ?? 0, max.none ?? 0) }) : "");
  show(note, Boolean(max));
}
