// Figures of the shipped training results: loss by position (length) and validation curves.
// Labels come from the page's dictionary; numbers from the server.

import { escapePlotly as esc, grouped, tr } from "../shared/i18n.js";
import { MODE_STYLE, MUTED, TYPE, baseLayout, lineAxis } from "../shared/plots.js";

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

/** A mode as a sentence names it: "none" as a phrase ("no positions", 位置の情報なし), since its bare name reads as
 * a word of the sentence ("with positions (none)", "adding none gives"); pos_emb and RoPE by their names. */
export function modeInSentence(position) {
  return tr(position === "none" ? "pos_none_phrase" : `pos_${position}`);
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

/**
 * Each snapshot's loss (GET /api/snapshots), as dots on its mode's curve: measured on the whole validation
 * split, where the curve uses a fixed sample of it, so a dot may sit a little off the line. The hover says so,
 * and the note under the chart (_panel_training.html); a legend entry would wrap the legend on a phone.
 */
function snapshotTraces(snapshots) {
  return snapshots.map((m) => {
    const style = MODE_STYLE[m.position] ?? MODE_STYLE.learned;
    const kept = m.steps.map((step, j) => [step, m.val_loss[j]]).filter(([, v]) => typeof v === "number");
    const mode = esc(modeLabel(m.position));
    return {
      type: "scatter",
      mode: "markers",
      name: mode,
      showlegend: false,
      meta: `snapshot-${m.position}`,
      x: kept.map(([step]) => step),
      y: kept.map(([, v]) => v),
      text: kept.map(([step]) => esc(tr("train_snapshot_hover", { step: grouped(step) }))),
      hovertemplate: `%{text} · %{y:.3f}<extra>${mode}</extra>`,
      marker: { color: style.color, size: 9, symbol: style.symbol ?? "circle", line: { color: "#ffffff", width: 1.5 } },
    };
  }).filter((trace) => trace.x.length);
}

/**
 * Each run's final loss (final_val_loss: the saved file on the whole validation split), as a diamond of its
 * run's colour at its last step: one legend entry says what the diamonds are, since the curve's own last point
 * (a fixed sample) can sit a little above or below it. Runs that record none are left out.
 */
function finalTrace(runs, style) {
  const kept = runs.filter((run) => typeof run.final_val_loss === "number");
  const legend = esc(tr("train_final_legend"));
  return {
    type: "scatter",
    mode: "markers",
    name: legend,
    meta: "final",
    x: kept.map((run) => run.steps.at(-1)),
    y: kept.map((run) => run.final_val_loss),
    text: kept.map((run) => esc(style(run).name)),
    hovertemplate: `%{text} · %{y:.3f}<extra>${legend}</extra>`,
    marker: { color: kept.map((run) => style(run).color), size: 11, symbol: "diamond", line: { color: "#1b1f24", width: 1.5 } },
  };
}

/**
 * Validation loss against training steps, one line per run; `key` picks its style and label. `snapshots`
 * ([{position, steps, val_loss}]) adds each snapshot's whole-split loss as dots; `finals` each run's final loss.
 */
export function trainingFigure({ runs, key, snapshots = [], finals = false }) {
  const byHeads = key === "heads";
  const styleOf = (run) => ({
    ...((byHeads ? HEAD_STYLE[run.n_head] : MODE_STYLE[run.position]) ?? { color: "#7f8897", dash: "solid" }),
    name: byHeads ? headsLabel(run.n_head) : modeLabel(run.position),
  });
  const data = runs.map((run) => {
    const style = styleOf(run);
    const name = esc(style.name);
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
  const dots = [...snapshotTraces(snapshots), ...(finals ? [finalTrace(runs, styleOf)] : [])].filter((t) => t.x.length);
  data.push(...dots);
  const layout = baseLayout({
    margin: { l: 8, r: 12, t: 8, b: 8 },
    showlegend: true,
    legend: { orientation: "h", x: 0, y: 1.02, xanchor: "left", yanchor: "bottom", font: { size: TYPE.legend } },
    xaxis: lineAxis(tr("train_axis_x"), { exponentformat: "none", separatethousands: true }), // 1 000, not 1k
    // At most four ticks: on a projector the chart may keep 200 px, and 4.5 to 6.5 by halves ran into each other.
    yaxis: lineAxis(tr("loss_axis"), { range: lossRange(runs, dots), nticks: 4 }),
  });
  return { data, layout };
}

/**
 * The first measurement is the untrained model's loss (about ln of the vocabulary size) and would
 * squash the end of the curves, where the runs differ; the axis starts from the second one.
 */
function lossRange(runs, dots = []) {
  const all = runs.flatMap((r) => r.val_loss);
  if (!all.length || runs.some((r) => r.val_loss.length < 3)) return undefined;
  // Dots from the curves' second measurement on stay inside the axis too.
  const from = Math.min(...runs.map((r) => r.steps[1]));
  const dotted = dots.flatMap((d) => d.y.filter((_, i) => d.x[i] >= from));
  const lo = Math.min(...all, ...dotted);
  const hi = Math.max(...runs.map((r) => r.val_loss[1]), ...dotted);
  const pad = 0.08 * (hi - lo);
  return [lo - pad, hi + pad];
}
