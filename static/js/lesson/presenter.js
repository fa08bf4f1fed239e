// The presenter's view and the class's projector: one chart at a time, type for the back of the room, and the
// answer brought into view, fitted to one screen on a class's projector.

import { $, $$, show } from "../shared/dom.js";
import { tr } from "../shared/i18n.js";
import { lesson } from "./controller.js";
import { state, ui } from "./page.js";
import { foldVerdict, unfoldVerdict } from "./verdict-fold.js";

/** The least height a chart keeps on the projector, however long the verdict above it. */
const PROJECTOR_MIN_PLOT = 200;
/** The chart's height that a long verdict gives room for, folding its last sentences (verdict-fold.js); a square
 * heatmap needs more, or its position ticks (0 32 64 96) run into each other in the projector's type. */
const PROJECTOR_PLOT = 280;
const PROJECTOR_SQUARE = 380;
const FIT_SLACK = 8; // px under the chart, so its frame is not cut by the screen's edge

/**
 * Bring the answer into view. On a class's projector (the teacher's screen in a class, both views) the question,
 * the verdict and its first chart fit one screen (issues 30 and 38; class.css puts the setup below the answer and
 * compacts the question); in the presenter's view without a class, the verdict and its first chart do (issue 39:
 * turned on after a reveal, the view went to the top of the page and both were below the first screen). A verdict
 * too tall to leave PROJECTOR_PLOT for the chart folds its last sentences, the charts on screen take the height left
 * under them, never more than their own, then the view moves to the question in a class, to the verdict without
 * one. A question and verdict so long that the chart would shrink under PROJECTOR_MIN_PLOT move it to the verdict.
 */
export function showAnswer() {
  const teacher = lesson.room?.role === "teacher";
  // A presenter alone starts the screen at the verdict: the answer's heading above it would take the chart's room.
  let from = teacher ? ui.form : state.present ? ui.verdict : ui.reveal;
  unfoldVerdict(ui.verdict, ui.verdictMore);
  const plots = $$(".lesson-chart:not([hidden]) .lesson-plot", ui.charts);
  for (const plot of plots) plot.style.height = "";
  if (teacher || state.present) {
    ui.verdictMore.hidden = false; // its line is kept in the measure: it shows if a sentence folds
    const top = (node) => node.getBoundingClientRect().top;
    const verdict = ui.verdict.getBoundingClientRect();
    // Under the verdict: what stands between it and the chart (its caption, a note), then the chart.
    const plot = plots[0]?.classList.contains("lesson-plot--square") ? PROJECTOR_SQUARE : PROJECTOR_PLOT;
    const under = plots.length ? top(plots[0]) - verdict.bottom + plot : 0;
    foldVerdict(ui.verdict, ui.verdictMore, window.innerHeight - FIT_SLACK - (verdict.top - top(from)) - under);
    if (plots.length) {
      const below = (node) => Math.floor(window.innerHeight - FIT_SLACK - (top(plots[0]) - top(node)));
      if (below(from) < PROJECTOR_MIN_PLOT) from = ui.verdict;
      const room = Math.max(PROJECTOR_MIN_PLOT, below(from));
      for (const plot of plots) if (plot.offsetHeight > room) plot.style.height = `${room}px`;
    }
  }
  for (const plot of plots) {
    // Drawn for another box (a smaller room, or the other view's) and not at a height of its own: drawn again.
    const stale = plot._fullLayout && Math.abs(plot._fullLayout.height - plot.clientHeight) >= 1;
    if (stale && (plot.style.height || !plot.layout?.height)) window.Plotly.Plots.resize(plot);
  }
  from.scrollIntoView({ block: "start" });
}

export function applyChartVisibility() {
  const charts = $$(".lesson-chart", ui.charts);
  charts.forEach((node, i) => { node.hidden = state.present && i !== state.chartIndex; });
  const many = state.present && charts.length > 1;
  show(ui.chartNav, many);
  if (many) ui.chartCount.textContent = tr("chart_count", { i: state.chartIndex + 1, n: charts.length });
}

export function moveChart(delta) {
  const n = $$(".lesson-chart", ui.charts).length;
  if (!state.present || n < 2) return;
  state.chartIndex = (state.chartIndex + delta + n) % n;
  applyChartVisibility();
  const plot = $(`.lesson-chart[data-chart="${state.chartIndex}"] .js-plotly-plot`, ui.charts);
  if (plot) window.Plotly.Plots.resize(plot);
}

/** Chart type for the back of a room: every font size in the figure half as large again. */
const PROJECTOR_SCALE = 1.5;
const PROJECTOR_STANDOFF = 8; // px more between an axis title and its tick labels: the larger type's line boxes

export function forProjector(figure) {
  const scale = (value, key) => {
    if (Array.isArray(value)) return value.map((v) => scale(v, ""));
    if (!value || typeof value !== "object") return value;
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = /font$/i.test(key) && k === "size" && typeof v === "number" ? Math.round(v * PROJECTOR_SCALE) : scale(v, k);
    }
    return out;
  };
  // Fonts Plotly would take from its defaults are set here, so they grow too.
  const layout = scale({ ...figure.layout, font: { size: 14, ...(figure.layout?.font ?? {}) } }, "");
  // The margins where axis titles sit, and each title's distance from its tick labels, grow with the type, or a
  // title set in the larger type lies over the ticks (by 6 to 14 px at 1280x720).
  const margin = layout.margin ?? {};
  for (const side of ["l", "t", "b"]) if (typeof margin[side] === "number") margin[side] = Math.round(margin[side] * PROJECTOR_SCALE);
  for (const [key, axis] of Object.entries(layout)) {
    if (!/^[xy]axis\d*$/.test(key) || typeof axis?.title !== "object") continue;
    axis.title = { ...axis.title, standoff: Math.round((axis.title.standoff ?? 4) * PROJECTOR_SCALE) + PROJECTOR_STANDOFF };
  }
  return { data: scale(figure.data, ""), layout };
}
