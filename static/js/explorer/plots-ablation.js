// Figures for turning heads off: the typed line's loss per position with every head on and with some
// off (explorer), and a head's measured loss increase on the validation poems by kind of next character
// (gallery). Strings from the line go through escapePlotly, as in plots.js.

import { escapePlotly as esc, num, tr } from "../shared/i18n.js";
import { COLORS, MUTED, TYPE, baseLayout, lineAxis, narrowScreen, visible, wrapLabel } from "../shared/plots.js";

export const KINDS = ["punctuation", "second_line", "other"];
const KIND_COLORS = { punctuation: "#CC79A7", second_line: "#009E73", other: "#56B4E9" };

/** x labels: the character each position predicts, with its place in the line ("1 日"), unique per position. */
export function targetLabels(tokens) {
  // On a phone the place stands over the character: side by side, eleven labels overlap in 330 px.
  const sep = narrowScreen() ? "<br>" : " ";
  return tokens.slice(1).map((ch, i) => `${i + 1}${sep}${esc(visible(ch))}`);
}

/**
 * Bars of the loss predicting each next character of the line: every head on, and, when some are off,
 * the same weights with those heads off beside them.
 */
export function lossFigure({ answer, offLabel }) {
  const x = targetLabels(answer.tokens);
  const hover = (name) => `${esc(name)}<br>${esc(tr("ablation_hover"))} %{x}: %{y:.2f}<extra></extra>`;
  const data = [{
    type: "bar", name: esc(tr("ablation_all_on")), x, y: answer.all_on.loss,
    marker: { color: COLORS.with }, hovertemplate: hover(tr("ablation_all_on")),
  }];
  if (answer.off.length) {
    data.push({
      type: "bar", name: esc(offLabel), x, y: answer.ablated.loss,
      marker: { color: COLORS.without }, hovertemplate: hover(offLabel),
    });
  }
  // On a phone the legend's two long names take two rows: above the plot they would sit on the bars.
  const narrow = narrowScreen();
  return {
    data,
    layout: baseLayout({
      height: narrow ? 340 : 300,
      margin: { l: 56, r: 12, t: narrow ? 12 : 36, b: 56 },
      barmode: "group",
      bargap: 0.25,
      showlegend: true,
      legend: narrow
        ? { orientation: "h", x: 0, y: -0.3, yanchor: "top", font: { size: TYPE.legend } }
        : { orientation: "h", x: 0, y: 1.14, font: { size: TYPE.legend } },
      xaxis: lineAxis(tr("ablation_axis_x"), { type: "category", tickangle: 0, automargin: true, ...(narrow ? { tickfont: { size: 11 } } : {}) }),
      yaxis: lineAxis(tr("ablation_axis_y"), { rangemode: "tozero" }),
    }),
  };
}

/** A head's measured loss increase (nats per character) on the validation poems, one bar per kind of
 * next character; `range` is shared by the heads of one mode so that their bars compare. */
export function kindFigure({ ablation, range }) {
  // Long names break at their first space, so that all three fit level under a narrow card.
  const names = KINDS.map((k) => (narrowScreen() ? wrapLabel(tr(`ablation_kind_${k}`), 9)
    : esc(tr(`ablation_kind_${k}`)).replace(/^(.{6,}?) /, "$1<br>")));
  const values = KINDS.map((k) => ablation.by_kind[k]);
  return {
    data: [{
      type: "bar", x: names, y: values, marker: { color: KINDS.map((k) => KIND_COLORS[k]) },
      text: values.map((v) => `${v >= 0 ? "+" : "\u2212"}${num(Math.abs(v).toFixed(2))}`),
      textposition: "outside", cliponaxis: false, textfont: { size: TYPE.tick, color: MUTED },
      hoverinfo: "skip",
    }],
    layout: baseLayout({
      height: 150,
      margin: { l: 8, r: 8, t: 18, b: 8 },
      showlegend: false,
      bargap: 0.3,
      xaxis: lineAxis("", { type: "category", tickangle: 0, tickfont: { size: TYPE.tick, color: MUTED } }),
      yaxis: lineAxis("", { range, showticklabels: false, zeroline: true, zerolinecolor: MUTED }),
    }),
  };
}
