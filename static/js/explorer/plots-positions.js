// Figures about how each mode encodes position: one RoPE pair turning, the relative-distance
// scores, and the cosine similarity between positions. Strings from the page's inputs go through
// escapePlotly, as in plots.js.

import { MODES } from "../shared/constants.js";
import { escapePlotly as esc, tr } from "../shared/i18n.js";
import { MODE_STYLE, PUOR, TYPE, baseLayout, colorbar, lineAxis, titleText, visible } from "../shared/plots.js";

const CIRCLE = "#b8c0cc";

/** Keep a label only where it would not sit on top of an earlier one (angles in radians). */
function spacedLabels(angles, minGap = 0.32, max = 28) {
  const kept = [];
  angles.forEach((a, p) => {
    if (kept.length >= max) return;
    const clear = kept.every((q) => {
      const d = Math.abs(((a - angles[q]) % (2 * Math.PI) + 3 * Math.PI) % (2 * Math.PI) - Math.PI);
      return d >= minGap;
    });
    if (clear) kept.push(p);
  });
  return new Set(kept);
}

/**
 * One frequency pair of q (or k) as a 2-D vector: at position p it is turned by angles[p][pair].
 * The point (cos, sin) runs round the unit circle, fast for pair 0, slowly for the late pairs.
 */
export function ropePairFigure({ rope, pair, tokens }) {
  const angles = rope.angles.map((row) => row[pair]);
  const n = angles.length;
  const xs = angles.map(Math.cos);
  const ys = angles.map(Math.sin);
  const chars = angles.map((_, p) => esc(visible(tokens[p] ?? "")));
  const labelled = spacedLabels(angles);
  const ring = Array.from({ length: 121 }, (_, i) => (2 * Math.PI * i) / 120);
  const angleName = esc(tr("rope_hover_angle"));
  const posName = esc(tr("rope_axis_pos"));
  const rad = esc(tr("unit_rad"));
  const data = [
    {
      type: "scatter",
      mode: "lines",
      x: ring.map(Math.cos),
      y: ring.map(Math.sin),
      line: { color: CIRCLE, width: 1 },
      hoverinfo: "skip",
      showlegend: false,
    },
    {
      type: "scatter",
      mode: n <= 64 ? "lines+markers" : "markers",
      x: xs,
      y: ys,
      text: angles.map((a, p) => `${posName} ${p} · ${chars[p]} · ${angleName} ${a.toFixed(3)} ${rad}`),
      hovertemplate: "%{text}<br>(cos, sin) = (%{x:.3f}, %{y:.3f})<extra></extra>",
      line: { color: "#9aa6b8", width: 1 },
      marker: {
        size: n <= 32 ? 10 : 6,
        color: angles.map((_, p) => p),
        colorscale: "Viridis",
        cmin: 0,
        cmax: Math.max(1, n - 1),
        line: { color: "#ffffff", width: 1 },
      },
      showlegend: false,
    },
    {
      type: "scatter",
      mode: "text",
      x: xs.map((x) => x * 1.2).filter((_, p) => labelled.has(p)),
      y: ys.map((y) => y * 1.2).filter((_, p) => labelled.has(p)),
      text: chars.filter((_, p) => labelled.has(p)),
      textfont: { size: TYPE.label },
      hoverinfo: "skip",
      showlegend: false,
    },
  ];
  const arrow = (p, color) => ({
    x: xs[p], y: ys[p], ax: 0, ay: 0, xref: "x", yref: "y", axref: "x", ayref: "y",
    text: "", showarrow: true, arrowhead: 2, arrowsize: 1, arrowwidth: 2, arrowcolor: color,
  });
  const axis = { range: [-1.45, 1.45], fixedrange: true, showgrid: false, zeroline: false, showticklabels: false };
  const layout = baseLayout({
    margin: { l: 4, r: 4, t: 4, b: 4 },
    xaxis: { ...axis, constrain: "domain" },
    yaxis: { ...axis, scaleanchor: "x", constrain: "domain" },
    annotations: [arrow(0, "#440154"), ...(n > 1 ? [arrow(n - 1, "#21918c")] : [])],
    showlegend: false,
  });
  return { data, layout };
}

/** The relative-distance scores: one line per mode across the absolute start of the pair. */
export function relativeFigure({ starts, scores, layer, head }) {
  const data = MODES.filter((mode) => scores[mode]).map((mode) => {
    const style = MODE_STYLE[mode];
    const name = esc(tr(`pos_${mode}`));
    return {
      type: "scatter",
      mode: "lines+markers",
      name,
      meta: mode,
      x: starts,
      y: scores[mode][layer - 1][head - 1],
      hovertemplate: `${esc(tr("rel_axis_x"))} %{x} · ${esc(tr("rel_hover_score"))} %{y:.4g}<extra>${name}</extra>`,
      line: { color: style.color, width: 3, dash: style.dash },
      marker: { color: style.color, size: 6, symbol: style.symbol },
    };
  });
  const layout = baseLayout({
    margin: { l: 8, r: 12, t: 8, b: 8 },
    showlegend: true,
    legend: { orientation: "h", x: 0, y: 1.02, xanchor: "left", yanchor: "bottom", font: { size: TYPE.legend } },
    xaxis: lineAxis(tr("rel_axis_x"), { range: [-3, Math.max(...starts) + 3] }),
    yaxis: lineAxis(tr("rel_axis_y"), { zeroline: true, zerolinecolor: "#c5ccd7" }),
  });
  return { data, layout };
}

/** A positions × positions cosine-similarity map; the same colours for both kinds, so they compare. */
export function similarityFigure({ matrix }) {
  const n = matrix.length;
  const posName = esc(tr("rope_axis_pos"));
  const trace = {
    type: "heatmap",
    z: matrix,
    zmin: -1,
    zmax: 1,
    zmid: 0,
    colorscale: PUOR,
    hovertemplate: `${posName} %{y} · ${posName} %{x}<br>cos = %{z:.3f}<extra></extra>`,
    colorbar: colorbar({ title: titleText(tr("sim_colorbar"), { side: "right" }) }),
  };
  const axis = (title, extra) => ({
    title: titleText(title, { standoff: 2 }),
    range: [-0.5, n - 0.5],
    fixedrange: true,
    showgrid: false,
    zeroline: false,
    automargin: true,
    dtick: 32,
    constrain: "domain",
    ...extra,
  });
  const layout = baseLayout({
    margin: { l: 8, r: 8, t: 12, b: 8 },
    xaxis: axis(tr("sim_axis_n"), {}),
    yaxis: axis(tr("sim_axis_m"), { autorange: false, range: [n - 0.5, -0.5], scaleanchor: "x" }),
  });
  return { data: [trace], layout };
}
