// The lesson's own figures, in the explorer's style (plots.js): the last-position gap as bars on a
// log scale, and the last position's attention aligned character by character. Whether a gap is
// rounding is the server's verdict, worded beside the chart: no bar is judged here.

import { escapePlotly as esc, labelled, tr } from "../shared/i18n.js";
import { COLORS, MUTED, PUOR, baseLayout, lineAxis, narrowScreen, sci, visible, wrapLabel } from "../shared/plots.js";

/** items: [{label, value, current}] -> horizontal bars, log x; the model on screen (current) in the strong colour. */
export function gapBarsFigure({ items }) {
  const floor = 1e-9;
  const narrow = narrowScreen();
  const values = items.map((item) => Math.max(item.value, floor));
  const data = [{
    type: "bar",
    orientation: "h",
    // The labels wrap (narrower on a phone), or a long one ("untrained, 2 layers, no position, no mask") takes
    // most of the chart's width on a projector; the hover names the bar in full either way.
    y: items.map((item) => wrapLabel(item.label, narrow ? 16 : 28)),
    x: values,
    text: items.map((item) => sci(item.value)),
    textposition: "outside",
    cliponaxis: false,
    hovertemplate: `${labelled("%{y}", "%{text}")}<extra></extra>`, // "ce montage : 3,58 × 10⁻⁷" in French
    marker: { color: items.map((item) => (item.current ? COLORS.with : MUTED)) },
  }];
  const layout = baseLayout({
    margin: { l: 8, r: narrow ? 36 : 48, t: 26, b: 8 },
    font: { size: narrow ? 12 : 15 },
    // A tick every third decade on a phone: eleven powers of ten do not fit in 200 px.
    xaxis: lineAxis(tr("depth_axis_y"), { type: "log", range: [-9, 1.5], exponentformat: "power", ...(narrow ? { dtick: 3 } : {}) }),
    // The bars' names a size under the numbers: two lines each still leave their bars apart on a projector.
    yaxis: { automargin: true, fixedrange: true, autorange: "reversed", tickfont: { size: narrow ? 12 : 13 } },
  });
  return { data, layout };
}

/**
 * The last row of each head's pattern, B's weights moved to A's characters by the server's `alignment` (perm[i]:
 * the position in B of A's i-th id). null when B is not a reordering of A (perm null).
 * patternA, patternB: [head][query][key] of one layer. Returns {chars, z: [head][key of A]}.
 */
export function alignLastRow(perm, tokensA, patternA, patternB) {
  if (!perm) return null;
  const last = tokensA.length - 1;
  const z = patternA.map((head, h) => head[last].map((w, i) => w - patternB[h][last][perm[i]])); // both lines' last query
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
    hovertemplate: `${labelled("%{y} · %{x}", "%{z:.3~r}")}<extra></extra>`, // ~r: plain decimals, never "3e-8"
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
