// The lesson's own figures, in the explorer's style (plots.js): the last-position gap as bars on a
// log scale, and the last position's attention aligned character by character.

import { escapePlotly as esc, tr } from "../i18n.js";
import { COLORS, MUTED, PUOR, baseLayout, lineAxis, sci, visible } from "../plots.js";

/** Gaps under this are float32 rounding of logits of size ~1 (the lesson's 3.7e-08, our 2.7e-07). */
export const ROUNDING = 1e-5;

/** items: [{label, value}] -> horizontal bars, log x; a dashed line marks ROUNDING. */
export function gapBarsFigure({ items }) {
  const floor = 1e-9;
  const values = items.map((item) => Math.max(item.value, floor));
  const data = [{
    type: "bar",
    orientation: "h",
    y: items.map((item) => esc(item.label)),
    x: values,
    text: items.map((item) => sci(item.value)),
    textposition: "outside",
    // A white halo: where a label meets the dashed line (a phone gives a decade about 30 px), the line
    // passes behind it instead of through it.
    outsidetextfont: { shadow: "0 0 3px #fff, 0 0 3px #fff, 0 0 3px #fff" },
    cliponaxis: false,
    hovertemplate: "%{y}: %{text}<extra></extra>",
    marker: { color: items.map((item) => (item.value < ROUNDING ? COLORS.without : COLORS.with)) },
  }];
  const layout = baseLayout({
    margin: { l: 8, r: 48, t: 26, b: 8 },
    font: { size: 15 },
    xaxis: lineAxis(tr("depth_axis_y"), { type: "log", range: [-9, 1.5], exponentformat: "power" }),
    yaxis: { automargin: true, fixedrange: true, autorange: "reversed" },
    shapes: [{
      type: "line", xref: "x", yref: "paper", x0: ROUNDING, x1: ROUNDING, y0: 0, y1: 1, layer: "below",
      line: { color: MUTED, width: 1.5, dash: "dash" },
    }],
    annotations: [{
      xref: "x", yref: "paper", x: Math.log10(ROUNDING), y: 1, xanchor: "right", yanchor: "bottom", showarrow: false,
      text: esc(tr("bar_rounding")), font: { size: 12, color: MUTED },
    }],
  });
  return { data, layout };
}

/**
 * The last row of each head's pattern, B's weights moved to A's characters: k-th occurrence of a
 * character in A meets its k-th occurrence in B. null when the lines hold different characters.
 * patternA, patternB: [head][query][key] of one layer. Returns {chars, z: [head][key of A]}.
 */
export function alignLastRow(tokensA, tokensB, patternA, patternB) {
  if (tokensA.length !== tokensB.length) return null;
  const slots = new Map(); // character -> its positions in B, in order
  tokensB.forEach((ch, j) => slots.set(ch, [...(slots.get(ch) ?? []), j]));
  const used = new Map();
  const perm = [];
  for (const ch of tokensA) {
    const k = used.get(ch) ?? 0;
    const j = slots.get(ch)?.[k];
    if (j === undefined) return null;
    used.set(ch, k + 1);
    perm.push(j);
  }
  const last = tokensA.length - 1;
  const z = patternA.map((head, h) => head[last].map((w, i) => w - patternB[h][last][perm[i]]));
  return { chars: tokensA, z };
}

export function alignedFigure({ chars, z }) {
  const range = Math.max(1e-6, ...z.flat().map(Math.abs));
  const x = chars.map((ch, i) => `${i} ${esc(visible(ch))}`);
  const y = z.map((_, h) => esc(tr("attn_head", { h: h + 1 })));
  const data = [{
    type: "heatmap",
    x,
    y,
    z,
    zmin: -range,
    zmax: range,
    zmid: 0,
    colorscale: PUOR,
    xgap: 2,
    ygap: 2,
    hovertemplate: "%{y} · %{x}: %{z:.3~r}<extra></extra>", // ~r: plain decimals, never "3e-8"
    // Plotly's 2×10⁻⁸ for rounding-sized gaps: a student reads powers of ten, not "2e-8".
    colorbar: { thickness: 10, outlinewidth: 0, exponentformat: "power", tickfont: { size: 11, color: MUTED } },
  }];
  const layout = baseLayout({
    margin: { l: 8, r: 8, t: 8, b: 8 },
    font: { size: 15 },
    xaxis: { type: "category", fixedrange: true, automargin: true, showgrid: false },
    yaxis: { type: "category", fixedrange: true, automargin: true, autorange: "reversed", showgrid: false },
  });
  return { data, layout };
}
