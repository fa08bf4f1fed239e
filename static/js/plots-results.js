// Figures of the shipped training results: loss by position (length) and validation curves.
// Labels come from the page's dictionary; numbers from the server.

import { escapePlotly as esc, tr } from "./i18n.js";
import { MODE_STYLE, MUTED, TYPE, baseLayout, lineAxis } from "./plots.js";

/** Okabe-Ito orange, blue and sky blue for 1, 4 and 8 heads; other counts get grey. */
const HEAD_STYLE = {
  1: { color: "#E69F00", dash: "dot", symbol: "triangle-up" },
  2: { color: "#CC79A7", dash: "dashdot", symbol: "x" },
  4: { color: "#0072B2", dash: "solid", symbol: "circle" },
  8: { color: "#56B4E9", dash: "dash", symbol: "square" },
};

export function modeLabel(position) {
  return tr(`pos_${position}`);
}

export function headsLabel(n) {
  return tr(n === 1 ? "heads_one" : "heads_many", { n });
}

/** Loss at each position; a dotted line marks the length the models were trained on. */
export function lengthFigure({ runs }) {
  const data = runs.map((run) => {
    const style = MODE_STYLE[run.position] ?? MODE_STYLE.learned;
    const name = esc(modeLabel(run.position));
    return {
      type: "scatter",
      mode: "lines",
      name,
      meta: run.position,
      x: run.loss.map((_, p) => p),
      y: run.loss,
      hovertemplate: `${esc(tr("rope_axis_pos"))} %{x} · %{y:.3f}<extra>${name}</extra>`,
      line: { color: style.color, width: 1.8, dash: style.dash },
    };
  });
  const trainLength = Math.max(...runs.map((r) => r.train_length));
  const longest = Math.max(...runs.map((r) => r.loss.length));
  const layout = baseLayout({
    margin: { l: 8, r: 12, t: 8, b: 8 },
    showlegend: true,
    legend: { orientation: "h", x: 0, y: 1.02, xanchor: "left", yanchor: "bottom", font: { size: TYPE.legend } },
    xaxis: lineAxis(tr("rope_axis_pos"), { range: [0, longest - 1] }),
    yaxis: lineAxis(tr("loss_axis")),
    shapes: [{
      type: "line", xref: "x", yref: "paper", x0: trainLength - 0.5, x1: trainLength - 0.5, y0: 0, y1: 1,
      line: { color: MUTED, width: 1.5, dash: "dot" },
    }],
    annotations: [{
      xref: "x", yref: "paper", x: trainLength - 0.5, y: 1, xanchor: "left", yanchor: "top", showarrow: false,
      text: esc(tr("length_train_marker", { n: trainLength })), font: { size: TYPE.tick, color: MUTED },
    }],
  });
  return { data, layout };
}

/** Validation loss against training steps, one line per run; `key` picks its style and label. */
export function trainingFigure({ runs, key }) {
  const data = runs.map((run) => {
    const byHeads = key === "heads";
    const style = (byHeads ? HEAD_STYLE[run.n_head] : MODE_STYLE[run.position]) ?? { color: "#7f8897", dash: "solid" };
    const name = esc(byHeads ? headsLabel(run.n_head) : modeLabel(run.position));
    return {
      type: "scatter",
      mode: "lines",
      name,
      meta: byHeads ? String(run.n_head) : run.position,
      x: run.steps,
      y: run.val_loss,
      hovertemplate: `${esc(tr("train_axis_x"))} %{x} · %{y:.3f}<extra>${name}</extra>`,
      line: { color: style.color, width: 2.5, dash: style.dash },
    };
  });
  const layout = baseLayout({
    margin: { l: 8, r: 12, t: 8, b: 8 },
    showlegend: true,
    legend: { orientation: "h", x: 0, y: 1.02, xanchor: "left", yanchor: "bottom", font: { size: TYPE.legend } },
    xaxis: lineAxis(tr("train_axis_x")),
    yaxis: lineAxis(tr("loss_axis"), { range: lossRange(runs) }),
  });
  return { data, layout };
}

/**
 * The first measurement is the untrained model's loss (about ln of the vocabulary size) and would
 * squash the end of the curves, where the runs differ; the axis starts from the second one.
 */
function lossRange(runs) {
  const all = runs.flatMap((r) => r.val_loss);
  if (!all.length || runs.some((r) => r.val_loss.length < 3)) return undefined;
  const lo = Math.min(...all);
  const hi = Math.max(...runs.map((r) => r.val_loss[1]));
  const pad = 0.08 * (hi - lo);
  return [lo - pad, hi + pad];
}
