// Plotly figures as plain data. Every string that comes from the lines goes through
// escapePlotly first; the hover templates only refer to values Plotly substitutes itself.

import { escapePlotly as esc, labelled, plotlySeparators, powerOfTen, scientific, tr } from "./i18n.js";

export const FONT =
  '"Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans SC", "Source Han Sans SC", "PingFang SC", ' +
  '"Hiragino Sans", "Microsoft YaHei", "Yu Gothic", system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
export const INK = "#1d2330";
export const MUTED = "#5b6577";
export const GRID = "#e3e7ee";
/** Empty (masked) cells show the plot background: a neutral grey that no colour scale uses. */
const MASKED = "#c9ced8";

/** ColorBrewer PuOr, orange for negative and purple for positive: diverging and colour-blind safe. */
export const PUOR = [
  [0.0, "#7f3b08"], [0.1, "#b35806"], [0.2, "#e08214"], [0.3, "#fdb863"], [0.4, "#fee0b6"],
  [0.5, "#f7f7f7"],
  [0.6, "#d8daeb"], [0.7, "#b2abd2"], [0.8, "#8073ac"], [0.9, "#542788"], [1.0, "#2d004b"],
];
/** Okabe-Ito blue and vermillion. */
export const COLORS = { with: "#0072B2", without: "#D55E00" };
/** One colour and dash per position mode, the same in every chart: none shares "without position"'s colour. */
export const MODE_STYLE = {
  learned: { color: "#0072B2", dash: "solid", symbol: "circle" },
  rope: { color: "#009E73", dash: "dash", symbol: "square" },
  none: { color: "#D55E00", dash: "dot", symbol: "diamond" },
};

/**
 * The charts' type scale, in px: read at 1280 × 720 on a projector from the back of a room.
 * Nothing a student must read is smaller than `tick`.
 */
export const TYPE = { tick: 14, axis: 15, legend: 15, label: 16, hover: 15 };

/** A colourbar whose ticks and title follow the type scale. */
export function colorbar(extra = {}) {
  return { thickness: 12, outlinewidth: 0, tickfont: { size: TYPE.tick, color: MUTED }, ...extra };
}

/** An axis or colourbar title. */
export function titleText(text, extra = {}) {
  return { text: esc(text), font: { size: TYPE.axis, color: MUTED }, ...extra };
}

export function baseLayout(extra = {}) {
  return {
    font: { family: FONT, color: INK, size: TYPE.tick },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
    hoverlabel: { font: { family: FONT, size: TYPE.hover, color: INK }, bgcolor: "#ffffff", bordercolor: "#8a94a6" },
    dragmode: false,
    separators: plotlySeparators(),
    ...extra,
  };
}

/** A phone's width (390 px): its charts wrap their labels and thin their ticks. */
export function narrowScreen() {
  return window.matchMedia("(max-width: 600px)").matches;
}

const WIDE = /[\u3000-\u9fff\uff00-\uffef]/u; // Chinese and Japanese: about two Latin letters wide
const CLOSING = /^[、。，．）」』！？：；,.)]/u;

/** How wide text draws, in Latin letters. */
function span(text) {
  return [...text].reduce((n, ch) => n + (WIDE.test(ch) ? 2 : 1), 0);
}

// Words as ICU finds them (its dictionary splits a run of Chinese or Japanese, which has no spaces, into words).
const WORDS = new Intl.Segmenter([], { granularity: "word" });
// Punctuation a line must not start with (a comma, a closing bracket) or end with (an opening bracket).
const NO_START = /^[\s,.:;!?)\]，、。：；！？）」』】〉》]/u;
const NO_END = /[(\[（「『【〈《]$/u;

// Words of the page's labels that the browser's dictionary splits (Chromium's and Node's ICU cut 权重 into 权|重,
// 掩码 into 掩|码, 未训练 into 未|训练): kept whole by hand. Found by segmenting every Chinese label wrapLabel is
// given (bar names, probe sites, band names) and reading the splits.
const KEPT_WORDS = ["权重", "掩码", "奈特", "维度", "探针", "未训练"];

/** Whether a break between `before` and `after` would cut one of KEPT_WORDS. */
function cutsKeptWord(before, after) {
  return KEPT_WORDS.some((word) => [...word].some((_, k) => k > 0
    && before.endsWith(word.slice(0, k)) && after.startsWith(word.slice(k))));
}

// Japanese particles, which bind to the word before them: a line starting with one reads as a slip (「文字を見る」
// broken as 文字 / を見る).
const PARTICLES = new Set(["の", "を", "に", "が", "は", "で", "と", "へ", "も", "や", "から", "まで", "より"]);

/** Whether a line may break between two words: after a space or a comma, or between words of Chinese or Japanese,
 * never before closing punctuation or a Japanese particle, after an opening bracket, inside a word the dictionary
 * misses or between a number and its unit. */
function breakable(before, after) {
  if (NO_START.test(after) || NO_END.test(before) || cutsKeptWord(before, after) || PARTICLES.has(after)) return false;
  // "2 层", "3 couches", "1 を停止": a number keeps the word after it.
  if (/\d\s*$/u.test(before) && /^\p{L}/u.test(after)) return false;
  return /[\s,，、]$/u.test(before) || WIDE.test(before.at(-1)) || WIDE.test(after[0]);
}

/**
 * A long label on lines about `width` Latin letters wide (Plotly's <br>), broken where breakable() allows: never
 * inside a word (信息 stays whole) nor before a full-width comma. A break keeps the space it falls on, at the end of
 * its line, and adds none where there was none: the label's text is the label, word boundaries and all ("3 couches",
 * "ブロック 1 の前"), as a screen reader or a copy reads it.
 */
export function wrapLabel(label, width) {
  const pieces = [];
  for (const { segment } of WORDS.segment(label)) {
    if (pieces.length && !breakable(pieces.at(-1), segment)) pieces[pieces.length - 1] += segment;
    else pieces.push(segment);
  }
  const lines = [];
  for (const piece of pieces) {
    // A comma or closing mark never starts a line (Japanese 禁則): it stays with the character before it.
    const keep = CLOSING.test(piece);
    if (lines.length && (keep || span((lines.at(-1) + piece).trimEnd()) <= width)) lines[lines.length - 1] += piece;
    else lines.push(piece);
  }
  return esc(lines.join("\n").trim()).replaceAll("\n", "<br>");
}

/** A numeric axis for line charts. */
export function lineAxis(title, extra = {}) {
  return {
    title: titleText(title, { standoff: 4 }),
    tickfont: { size: TYPE.tick },
    fixedrange: true,
    gridcolor: GRID,
    zeroline: false,
    automargin: true,
    ...extra,
  };
}

/**
 * Category labels unique per position ("0 白", "1 日", ...), so repeated characters stay apart.
 * With a second line (the A − B plot) each names both characters: "0 白/山".
 */
function positionCategories(tokens, tokensB = null) {
  return tokens.map((ch, i) => {
    const b = tokensB ? `/${esc(visible(tokensB[i] ?? ""))}` : "";
    return `${i} ${esc(visible(ch))}${b}`;
  });
}

/** Show spaces and the unknown id so they can be seen on an axis. */
export function visible(ch) {
  if (ch === " ") return "␣";
  if (ch === "\t") return "⇥";
  return ch;
}

/** Tick every position on short lines, every k-th on long ones. */
function ticks(categories, labels, maxTicks) {
  const step = Math.max(1, Math.ceil(categories.length / maxTicks));
  const idx = categories.map((_, i) => i).filter((i) => i % step === 0);
  return { tickmode: "array", tickvals: idx.map((i) => categories[i]), ticktext: idx.map((i) => labels[i]) };
}

/** An axis of positions, ticked with the characters (or, for A − B, with the position numbers). */
function charAxis(tokens, tokensB, title, extra = {}) {
  const cats = positionCategories(tokens, tokensB);
  const labels = tokensB ? tokens.map((_, i) => String(i)) : tokens.map((ch) => esc(visible(ch)));
  const n = tokens.length;
  return {
    type: "category",
    categoryorder: "array",
    categoryarray: cats,
    ...ticks(cats, labels, 24),
    tickfont: { size: n <= 12 ? TYPE.label : n <= 24 ? TYPE.tick : 12 },
    ticks: "",
    showgrid: false,
    zeroline: false,
    fixedrange: true,
    // Fixed margins instead of automargin: automargin re-lays each plot out several times,
    // which made a row of 8 heads × 3 plots several times slower to draw.
    automargin: false,
    title: titleText(title, { standoff: 2 }),
    ...extra,
  };
}

/** One head's pattern ([query][key]) with masked keys as null. */
export function maskPattern(matrix, causal) {
  return matrix.map((row, q) => row.map((v, k) => (causal && k > q ? null : v)));
}

/**
 * A square heatmap: rows are queries (top = position 0), columns are keys.
 * kind "pattern" uses Viridis on 0..1; kind "diff" uses PuOr on -range..range. A diff labels each
 * position with both lines' characters ("0 白/山") when cell by cell, with A's alone when aligned.
 */
export function heatmapFigure({ tokens, tokensB = null, z, kind, range, aligned = false }) {
  const n = tokens.length;
  const isDiff = kind === "diff";
  const pairLabels = isDiff && !aligned ? tokensB : null;
  const cats = positionCategories(tokens, pairLabels);
  const valueName = esc(isDiff ? tr("hover_diff") : tr("hover_weight"));
  const trace = {
    type: "heatmap",
    x: cats,
    y: cats,
    z,
    zmin: isDiff ? -range : 0,
    zmax: isDiff ? range : 1,
    zmid: isDiff ? 0 : undefined,
    colorscale: isDiff ? PUOR : "Viridis",
    xgap: n <= 24 ? 1 : 0,
    ygap: n <= 24 ? 1 : 0,
    hoverongaps: false,
    hovertemplate:
      `${labelled(esc(tr("hover_query")), "%{y}")}<br>${labelled(esc(tr("hover_key")), "%{x}")}<br>` +
      `${labelled(valueName, "%{z:.3~r}")}<extra></extra>`, // ~r: plain decimals, never "3e-8"
    // A rounding-sized diff would tick as "2e-8" under ~g: Plotly's own 2×10⁻⁸ instead.
    colorbar: colorbar({
      len: 0.9, nticks: 5, ...(isDiff && range < 0.01 ? { exponentformat: "power" } : { tickformat: isDiff ? ".2~g" : ".1f" }),
    }),
  };
  const layout = baseLayout({
    margin: { l: 56, r: 4, t: 54, b: 4 },
    plot_bgcolor: MASKED,
    xaxis: charAxis(tokens, pairLabels, tr("axis_key"), { side: "top", constrain: "domain" }),
    yaxis: charAxis(tokens, pairLabels, tr("axis_query"), {
      autorange: "reversed",
      scaleanchor: "x",
      constrain: "domain",
    }),
  });
  return { data: [trace], layout };
}

/** Three significant digits, small and large ones as a power of ten (3.58 × 10⁻⁷, 3,58 × 10⁻⁷ in French):
 * Plotly prints chart text as given, so the charts and the sentences beside them write numbers alike. */
export function sci(v) {
  return scientific(v, 3);
}

/** The lesson's table as a chart: last-position difference for 1, 2, 3 layers, log scale. */
export function depthFigure({ byDepth, difference, model }) {
  // Under none there is no position information to add: "with" is the same run, drawn once.
  const keys = model.position === "none" ? ["without_position"] : ["with_position", "without_position"];
  const values = [];
  for (const row of [...byDepth, difference]) for (const key of keys) values.push(row[key].max_abs);
  const positive = values.filter((v) => v > 0);
  // Log axes cannot show 0; an exact 0 sits one decade under the smallest value.
  const floor = positive.length ? Math.min(...positive) / 10 : 1e-12;
  const lift = (v) => (v > 0 ? v : floor);
  // At least three decades tall, so values that are all rounding (the mask-off control) stay flat.
  const logs = values.map((v) => Math.log10(lift(v)));
  const mid = (Math.min(...logs) + Math.max(...logs)) / 2;
  const half = Math.max(1.5, (Math.max(...logs) - Math.min(...logs)) / 2 + 0.3);
  const xs = byDepth.map((row) => row.n_layer);
  const series = (key, name, color) => ({
    type: "scatter",
    mode: "lines+markers",
    name: esc(name),
    x: xs,
    y: byDepth.map((row) => lift(row[key].max_abs)),
    text: byDepth.map((row) => sci(row[key].max_abs)),
    hovertemplate: `%{x} · %{text}<extra>${esc(name)}</extra>`,
    line: { color, width: 3 },
    marker: { color, size: 10, symbol: key === "with_position" ? "circle" : "diamond" },
  });
  const lo = Math.min(...xs) - 0.25;
  const hi = Math.max(...xs) + 0.25;
  const thisModel = (key, name, color) => ({
    type: "scatter",
    mode: "lines",
    name: esc(name),
    x: [lo, hi],
    y: [lift(difference[key].max_abs), lift(difference[key].max_abs)],
    text: [sci(difference[key].max_abs), sci(difference[key].max_abs)],
    hovertemplate: `%{text}<extra>${esc(name)}</extra>`,
    line: { color, width: 2, dash: "dash" },
  });
  const names = {
    with_position: [tr("depth_with"), tr("depth_this_with", { n_layer: model.n_layer }), COLORS.with],
    without_position: [tr("depth_without"), tr("depth_this_without", { n_layer: model.n_layer }), COLORS.without],
  };
  const data = [
    ...keys.map((key) => series(key, names[key][0], names[key][2])),
    ...keys.map((key) => thisModel(key, names[key][1], names[key][2])),
  ];
  const layout = baseLayout({
    margin: { l: 8, r: 12, t: 8, b: 8 },
    showlegend: true,
    legend: { orientation: "h", x: 0, y: -0.24, xanchor: "left", yanchor: "top", font: { size: TYPE.legend } },
    xaxis: {
      title: titleText(tr("depth_axis_x")),
      tickmode: "array",
      tickvals: xs,
      range: [lo, hi],
      fixedrange: true,
      gridcolor: GRID,
      zeroline: false,
      automargin: true,
    },
    yaxis: {
      type: "log",
      range: [mid - half, mid + half],
      title: titleText(tr("depth_axis_y")),
      exponentformat: "power",
      fixedrange: true,
      gridcolor: GRID,
      automargin: true,
    },
  });
  return { data, layout };
}

/** Norms under this are float32 rounding; the colour scale starts here. */
export const RESIDUAL_FLOOR = 1e-9;

/** Layers × positions of |a - b|, coloured by log10 so 1e-8 and 1e-1 both show. */
export function residualFigure({ matrix, tokensA, tokensB, range }) {
  const rows = matrix.map((_, l) => (l === 0 ? tr("resid_row_emb") : tr("resid_row_block", { l })));
  const rowCats = rows.map(esc);
  const n = tokensA.length;
  const cols = tokensA.map((_, i) => String(i));
  const both = tokensA.map((ch, i) => `${esc(visible(ch))} · ${esc(visible(tokensB[i] ?? ""))}`);
  const z = matrix.map((row) => row.map((v) => Math.log10(Math.max(v, RESIDUAL_FLOOR))));
  const text = matrix.map((row) => row.map((v, i) => labelled(both[i], sci(v))));
  const labels = n <= 16 ? tokensA.map((ch, i) => `${esc(visible(ch))}<br>${esc(visible(tokensB[i] ?? ""))}`) : cols;
  const decades = [];
  for (let d = Math.floor(range[0]); d <= Math.ceil(range[1]); d += 1) decades.push(d);
  const step = Math.max(1, Math.ceil(decades.length / 5));
  const shown = decades.filter((d, i) => i % step === 0);
  const trace = {
    type: "heatmap",
    x: cols,
    y: rowCats,
    z,
    text,
    zmin: range[0],
    zmax: range[1],
    colorscale: "Cividis",
    xgap: n <= 24 ? 1 : 0,
    ygap: 1,
    hovertemplate: `${esc(tr("resid_axis_pos"))} %{x} (%{text})<br>%{y}<extra>${esc(tr("hover_norm"))}</extra>`,
    colorbar: colorbar({
      tickmode: "array",
      tickvals: shown,
      ticktext: shown.map((d) => powerOfTen(1, d)),
      title: titleText(tr("resid_colorbar"), { side: "right" }),
    }),
  };
  const layout = baseLayout({
    margin: { l: 8, r: 8, t: 6, b: 8 },
    xaxis: {
      type: "category",
      ...ticks(cols, labels, 24),
      fixedrange: true,
      automargin: true,
      showgrid: false,
      title: titleText(tr("resid_axis_pos"), { standoff: 2 }),
    },
    yaxis: { type: "category", autorange: "reversed", fixedrange: true, automargin: true, showgrid: false },
  });
  return { data: [trace], layout };
}

/** RoPE's table: cos(position × theta_i), position rows × pair columns. */
export function ropeFigure({ rope }) {
  const angles = rope.angles;
  const pairs = rope.theta.map((_, i) => i);
  const positions = angles.map((_, p) => p);
  const z = angles.map((row) => row.map(Math.cos));
  const theta = esc(tr("rope_hover_theta"));
  const angle = esc(tr("rope_hover_angle"));
  const rad = esc(tr("unit_rad"));
  const text = angles.map((row) =>
    row.map((a, i) => `${theta} = ${rope.theta[i].toPrecision(3)}, ${angle} = ${a.toPrecision(4)} ${rad}`),
  );
  const trace = {
    type: "heatmap",
    x: pairs,
    y: positions,
    z,
    text,
    zmin: -1,
    zmax: 1,
    zmid: 0,
    colorscale: PUOR,
    xgap: 1,
    ygap: positions.length <= 32 ? 1 : 0,
    hovertemplate:
      `${esc(tr("rope_axis_pos"))} %{y}, ${esc(tr("rope_axis_pair"))} = %{x}<br>` +
      "%{text}<br>cos = %{z:.3f}<extra></extra>",
    colorbar: colorbar({ title: titleText(tr("rope_colorbar"), { side: "right" }) }),
  };
  const layout = baseLayout({
    margin: { l: 8, r: 8, t: 6, b: 8 },
    xaxis: {
      title: titleText(tr("rope_axis_pair"), { standoff: 2 }),
      fixedrange: true,
      automargin: true,
      showgrid: false,
      zeroline: false,
      dtick: pairs.length > 16 ? 4 : 1,
    },
    yaxis: {
      title: titleText(tr("rope_axis_pos"), { standoff: 2 }),
      autorange: "reversed",
      fixedrange: true,
      automargin: true,
      showgrid: false,
      zeroline: false,
    },
  });
  return { data: [trace], layout };
}
