// What a reveal draws: one interface, {update(answer), redraw()}, for every panel (the verdict, the charts, the
// notice, the figure's text, the code snippet), and taking the last answer off the screen.

import { $, $$, clear, el, show } from "../shared/dom.js";
import { draw, purge } from "../shared/draw.js";
import { fillFigures, sentences, tr } from "../shared/i18n.js";
import { visible } from "../shared/plots.js";
import { setupOf, state, ui } from "./page.js";
import { applyChartVisibility, forProjector } from "./presenter.js";
import { choiceLabel, gradedOn, isRight, recordOf } from "./record.js";
import { selftestChart, summaryChart } from "./selftest-summary.js";
import { unfoldVerdict } from "./verdict-fold.js";

/** Take the last answer off the screen: its verdict, charts and notes were for lines no longer in the boxes. */
export function clearAnswer() {
  state.answer = null;
  for (const node of $$(".js-plotly-plot", ui.charts)) purge(node);
  clear(ui.charts);
  delete ui.charts.dataset.stale;
  state.chartsDrawing += 1; // an update still drawing stops
  ui.verdict.textContent = "";
  for (const key of ["outcome", "value", "prediction"]) delete ui.verdict.dataset[key];
  showUnknown([]); // the unknown characters were those of the lines just taken away
  ui.notice.textContent = "";
  show(ui.figure, false);
  show(ui.snippet, false);
  show(ui.chartNav, false);
}

function predictionText(step, judged) {
  const saved = recordOf(step);
  if (!saved || saved.choice === undefined) return "";
  const choice = choiceLabel(step, saved.choice);
  const graded = gradedOn(judged);
  // After a changed setup the result above is another setup's: the graded sentence names the question's setup.
  const rule = graded.rule ? "_rule" : "";
  const [note, on] = judged.graded ? [tr("graded_question_setup"), `_graded${rule}`] : ["", rule];
  if (graded.outcome === null || graded.outcome === undefined) return sentences([note, tr(`you_pending${on}`, { choice })]);
  if (isRight(saved.choice, graded)) return sentences([note, tr(`you_right${on}`, { choice })]);
  return sentences([note, tr(`you_wrong${on}`, { choice, outcome: choiceLabel(step, graded.outcome) })]);
}

const verdictPanel = {
  update(a) {
    // Two marked sentences (the model's, then the student's), read by tests/e2e/test_referee.py.
    const parts = [["verdict", a.judged.text], ["prediction", predictionText(a.step, a.judged)]].filter(([, t]) => t);
    unfoldVerdict(ui.verdict, ui.verdictMore); // a verdict drawn again shows whole
    ui.verdict.replaceChildren(...parts.flatMap(([name, text], i) => [
      ...(i ? [document.createTextNode(tr("sentence_sep"))] : []),
      figureSpan(el("span", { dataset: { sentence: name } }), text),
    ]));
    ui.verdict.dataset.outcome = a.judged.outcome ?? "";
    if (a.judged.value !== undefined) ui.verdict.dataset.value = String(a.judged.value);
    const saved = recordOf(a.step);
    const graded = gradedOn(a.judged);
    ui.verdict.dataset.prediction = !saved || saved.choice === undefined || graded.outcome == null
      ? "none" : isRight(saved.choice, graded) ? "right" : "wrong";
    showUnknown(a.judged.unknown ?? []);
  },
};

/** The characters the model reads as its one unknown character, named under the verdict. */
function showUnknown(chars) {
  let node = $("[data-unknown]");
  if (!node) {
    node = el("p", { className: "note lesson-unknown", attrs: { "data-unknown": "" } });
    ui.verdict.after(node);
  }
  node.dataset.unknown = chars.join("");
  // One such character is "it", not "every one of them": a text of its own, since Chinese and Japanese have no
  // plural forms to pick from (i18n.js), yet say 它 and これ for one character, 它们都 and これらをすべて for more.
  const key = chars.length === 1 ? "unknown_warning_one" : "unknown_warning";
  node.textContent = chars.length ? tr(key, { chars: chars.map(visible).join(tr("list_sep")) }) : "";
  show(node, chars.length > 0);
}

/** node with text, its figures as <span data-figure> (i18n.js fillFigures): read by tests/e2e/test_referee.py. */
function figureSpan(node, text) {
  fillFigures(node, text);
  return node;
}

function chartFigure(chart, i) {
  const describe = `chart-${i}-alt`;
  const body = chart.table ?? el("div", { className: `lesson-plot${chart.heatmap ? " lesson-plot--square" : ""}` });
  const node = el("figure", {
    className: "lesson-chart", dataset: { chart: String(i), name: chart.name }, attrs: { "aria-describedby": describe },
  }, [
    figureSpan(el("figcaption", { className: "lesson-chart__caption" }), chart.caption),
    ...(chart.missing ? [] : [body]),
    el("p", { id: describe, className: chart.missing ? "note" : "visually-hidden", text: chart.alt }),
  ]);
  return { node, body };
}

/** What a chart's nodes are made of: a chart of the same shape as the one in its place is drawn there again. */
const chartShape = (chart) => `${chart.name}:${chart.missing ? "missing" : chart.table ? "table" : chart.heatmap ? "square" : "plot"}`;

/** The same chart with the new answer's words and table, in the nodes on screen; its plot is drawn after. */
function refreshChart(node, chart) {
  fillFigures($(".lesson-chart__caption", node), chart.caption);
  $(`#${node.getAttribute("aria-describedby")}`, node).textContent = chart.alt;
  if (chart.table) $(".lesson-chart__caption", node).nextElementSibling.replaceWith(chart.table);
  return { node, body: chart.table ?? $(".lesson-plot", node) };
}

/** The charts show the setup in the boxes: no edit came after the one this answer was asked for. */
function chartsCurrent(a) {
  return !a.ctx?.setup || JSON.stringify(a.ctx.setup) === JSON.stringify(setupOf(a.step));
}

const chartsPanel = {
  async update(a) {
    const mine = ++state.chartsDrawing;
    const charts = a.step.kind === "summary" ? [summaryChart()] : a.step.kind === "selftest"
      ? [selftestChart(a.step)] : a.kind.charts(a.data, a.ctx);
    state.chartIndex = Math.min(state.chartIndex, Math.max(0, charts.length - 1));
    // A new setup of the same step: each chart of the same kind as the one in its place is drawn again there, so
    // a figure that did not change (line A's map when line B changed) is left as it is (draw.js).
    const old = $$(".lesson-chart", ui.charts);
    const built = charts.map((chart, i) => {
      const shape = `${a.step.id} ${chartShape(chart)}`;
      if (old[i]?.dataset.shape === shape) return { chart, ...refreshChart(old[i], chart) };
      const fresh = { chart, ...chartFigure(chart, i) };
      fresh.node.dataset.shape = shape;
      if (old[i]) {
        for (const node of $$(".js-plotly-plot", old[i])) purge(node);
        old[i].replaceWith(fresh.node);
      } else {
        ui.charts.append(fresh.node);
      }
      return fresh;
    });
    for (const node of old.slice(charts.length)) {
      for (const plot of $$(".js-plotly-plot", node)) purge(plot);
      node.remove();
    }
    applyChartVisibility();
    // The chart on screen first, so the first picture comes as soon as possible.
    const order = [...built].sort((x, y) => (x.node.hidden ? 1 : 0) - (y.node.hidden ? 1 : 0));
    for (const b of order) {
      if (mine !== state.chartsDrawing) return; // a newer answer is drawing
      if (b.chart.figure) {
        const figure = state.present ? forProjector(b.chart.figure) : b.chart.figure;
        await draw(b.body, figure, `lesson-${a.step.id}-${b.chart.name}`);
      }
    }
    // Greyed from an edit until every chart shows its answer (and still greyed if a newer edit came since).
    if (mine === state.chartsDrawing && chartsCurrent(a)) delete ui.charts.dataset.stale;
  },
};

const noticePanel = {
  update(a) {
    fillFigures(ui.notice, a.kind ? a.kind.notice(a.data, a.ctx) : "");
    show(ui.notice, Boolean(ui.notice.textContent));
  },
};

const figurePanel = {
  update(a) {
    const text = a.kind?.lesson ? a.kind.lesson(a.data, a.ctx) : "";
    ui.figureText.textContent = text;
    show(ui.figure, Boolean(text));
  },
};

const snippetPanel = {
  update(a) {
    const code = a.kind?.snippet ? a.kind.snippet(a.ctx, a.data) : "";
    ui.snippetCode.textContent = code;
    show($("#snippet-note"), Boolean(a.kind?.batched));
    ui.copyStatus.textContent = "";
    show(ui.snippet, Boolean(code));
  },
};

export const PANELS = [verdictPanel, chartsPanel, noticePanel, figurePanel, snippetPanel].map((panel) => ({
  update: panel.update,
  /** The language or the layout changed: draw the last answer again. */
  redraw: () => (state.answer ? panel.update(state.answer) : undefined),
}));

export async function updatePanels() {
  for (const panel of PANELS) await panel.update(state.answer);
}
