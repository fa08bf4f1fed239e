// The "turn a head off" panel: one switch per head of the model on screen; each change asks /api/ablate
// for line A with every head on and with the switched-off heads off, and draws what the answer holds:
// the loss predicting each next character as bars (on beside off), and the top predictions before and
// after at one position (the one whose loss grew most, or the one clicked).

import { ApiError, postAblate } from "../shared/api.js";
import { MAX_ABLATE_CHARS } from "../shared/constants.js";
import { $, clear, el, show } from "../shared/dom.js";
import { draw } from "../shared/draw.js";
import { fieldMessage, generalMessage } from "../shared/errors.js";
import { MODEL_PREFIX } from "./controls.js";
import { headsOff } from "./heads-off.js";
import { grouped, sentences, tr } from "../shared/i18n.js";
import { latest } from "../shared/latest.js";
import { visible } from "../shared/plots.js";
import { lossFigure } from "./plots-ablation.js";
import { askedStep, onStepChange } from "./step-control.js";

const headName = ({ layer, head }) => tr("ablation_head_short", { layer, head });

/** "L1H2 off", "L1H2 and L2H3 off": the name of the run with heads off. */
export function offLabel(off) {
  return tr("ablation_off_run", { heads: off.map(headName).join(tr("ablation_list_sep")) });
}

/** The /api/ablate body for what the explorer shows (context()), the heads off, and the training step asked. */
function ablateBody(c, off, step) {
  // An operator's model (the weights menu's "model:" + name) answers in its own mode and shape.
  if (c.weights.startsWith(MODEL_PREFIX)) return { line: c.line, model: c.weights.slice(MODEL_PREFIX.length), off };
  const out = { line: c.line, position: c.position, weights: c.weights, off };
  // The training step on the gallery's slider: trained weights as they stood then (null: the shipped ones).
  if (c.weights === "trained" && step !== null) out.step = step;
  if (c.weights === "random") {
    out.n_head = c.nHead;
    if (c.nLayer) out.n_layer = c.nLayer;
  }
  return out;
}

/** Why no answer is asked for: an empty line, or one past the server's limit (/api/options); null: none. */
function lineProblem(line) {
  if (!line) return { key: "error_empty" };
  if ([...line].length > MAX_ABLATE_CHARS) return { key: "ablation_too_long", vars: { max: MAX_ABLATE_CHARS } };
  return null;
}

/** The switches, one per head, in `root`: fit(nLayer, nHead) builds them for a shape, word() labels them. */
function headSwitches(root, reset) {
  let shape = null; // {nLayer, nHead} of the switches on screen

  function word() {
    for (const label of root.querySelectorAll(".head-switches__layer")) {
      label.textContent = tr("ablation_layer", { layer: label.dataset.layer });
    }
    for (const button of root.querySelectorAll(".head-switch")) {
      const layer = Number(button.dataset.layer);
      const head = Number(button.dataset.head);
      const off = headsOff.has(layer, head);
      button.setAttribute("aria-pressed", String(off));
      button.textContent = tr(off ? "ablation_switch_off" : "ablation_switch_on", { head });
      button.title = tr(off ? "ablation_turn_on" : "ablation_turn_off", { name: headName({ layer, head }) });
    }
    reset.disabled = headsOff.list().length === 0;
  }

  function fit(nLayer, nHead) {
    if (shape?.nLayer === nLayer && shape?.nHead === nHead) return;
    shape = { nLayer, nHead };
    headsOff.fit(nLayer, nHead);
    clear(root);
    for (let layer = 1; layer <= nLayer; layer += 1) {
      const buttons = Array.from({ length: nHead }, (_, i) => el("button", {
        type: "button",
        className: "button head-switch",
        dataset: { layer: String(layer), head: String(i + 1) },
        onclick: () => headsOff.toggle(layer, i + 1),
      }));
      root.append(el("div", { className: "head-switches__row" }, [
        el("span", { className: "head-switches__layer", dataset: { layer: String(layer) } }), ...buttons,
      ]));
    }
    word();
  }

  return { fit, word };
}

/** The position whose loss grew most with the heads off; the last position when none is off. */
function defaultPosition(answer) {
  const n = answer.tokens.length;
  if (!answer.off.length || n < 2) return n - 1;
  let best = 0;
  answer.ablated.loss.forEach((v, t) => {
    if (v - answer.all_on.loss[t] > answer.ablated.loss[best] - answer.all_on.loss[best]) best = t;
  });
  return best;
}

/** One or two sentences from the answer's numbers: the mean loss before and after, and where it grew most. */
function summary(answer) {
  if (answer.tokens.length < 2) return tr("ablation_one_char");
  const on = answer.all_on.mean_loss;
  const step = answer.model.step == null ? "" : tr("ablation_at_step", { step: grouped(answer.model.step) });
  if (!answer.off.length) return sentences([step, tr("ablation_none_off", { loss: on.toFixed(2) })]);
  const t = defaultPosition(answer);
  const grew = answer.ablated.loss[t] - answer.all_on.loss[t];
  return sentences([step,
    tr("ablation_mean", { heads: answer.off.map(headName).join(tr("ablation_list_sep")), on: on.toFixed(2),
      off: answer.ablated.mean_loss.toFixed(2) }),
    grew > 0 ? tr("ablation_most", { ch: visible(answer.tokens[t + 1]), pos: t + 1, grew: grew.toFixed(2) }) : "",
  ]);
}

function nextItem(x, most, isTarget) {
  const bar = el("span", { className: "next-bar__fill" });
  bar.style.width = `${Math.max(2, (100 * x.prob) / most).toFixed(1)}%`;
  return el("li", { className: `next-item${isTarget ? " is-target" : ""}`, title: isTarget ? tr("ablation_is_next") : null }, [
    el("span", { className: "next-token", text: visible(x.token), attrs: { lang: "zh" } }),
    el("span", { className: "next-bar", attrs: { "aria-hidden": "true" } }, [bar]),
    el("span", { className: "next-prob", text: tr("percent", { value: (100 * x.prob).toFixed(1) }) }),
  ]);
}

/** The top predictions at position t, with every head on and with the heads off, into root. */
function renderNextLists(root, answer, t) {
  const target = answer.tokens[t + 1] ?? null;
  const runs = [["all_on", tr("ablation_all_on")]];
  if (answer.off.length) runs.push(["ablated", offLabel(answer.off)]);
  clear(root);
  root.dataset.position = String(t);
  for (const [run, title] of runs) {
    const top = answer[run].top_next[t];
    const most = Math.max(...top.map((x) => x.prob), 1e-12);
    root.append(el("div", { className: "next-list", dataset: { run } }, [
      el("h3", { className: "next-list__title", text: title }),
      el("ol", { className: "next-items" }, top.map((x) => nextItem(x, most, x.token === target))),
      el("p", {
        className: "ablation-next__loss",
        text: target === null ? tr("ablation_no_next")
          : tr("ablation_loss_at", { ch: visible(target), loss: answer[run].loss[t].toFixed(2) }),
      }),
    ]));
  }
}

/**
 * context() -> {line, position, weights, nHead, nLayer}: what the explorer shows. The panel asks again
 * when refresh() is called (the line or the model changed) and when a switch changes; it writes only inside
 * #panel-ablation.
 */
export function createAblationPanel(context) {
  const panel = $("#panel-ablation");
  const select = $("#ablation-position");
  const reset = $("#ablation-reset");
  const switches = headSwitches($("#ablation-switches"), reset);
  const request = latest();
  let chosen = null; // the position picked by the student, kept while the answer's line is the same
  let problem = null; // why nothing is drawn: a long line, or an error

  async function refresh() {
    const c = context();
    if (c.nLayer && c.nHead) switches.fit(c.nLayer, c.nHead);
    switches.word();
    problem = lineProblem(c.line);
    if (problem) {
      request.abort();
      headsOff.setAnswer(null);
      return finish("invalid");
    }
    const b = ablateBody(c, headsOff.list(), askedStep());
    const key = JSON.stringify(b);
    if (request.runningFor(key)) return;
    panel.dataset.state = "loading";
    let out;
    try {
      out = await request.run((signal) => postAblate(b, signal), key);
    } catch (error) {
      problem = { error };
      headsOff.setAnswer(null);
      return finish("error");
    }
    if (out.stale) return;
    const answer = out.value;
    switches.fit(answer.model.n_layer, answer.model.n_head);
    if (headsOff.answer?.line !== answer.line) chosen = null;
    headsOff.setAnswer(answer); // the gallery hears of it too
    await render();
    finish("ready");
  }

  /** The problem, worded now (a language switch words it again), and the panel's state for tests and styles. */
  function finish(state) {
    const error = $("#ablation-error", panel);
    const text = !problem ? "" : problem.key ? tr(problem.key, problem.vars) : errorText(problem.error);
    error.textContent = text;
    show(error, Boolean(text));
    panel.classList.toggle("is-stale", Boolean(problem));
    panel.dataset.state = state;
    panel.dataset.off = headsOff.list().map(({ layer, head }) => `${layer}-${head}`).join(" ");
    panel.dataset.renderCount = String(Number(panel.dataset.renderCount || 0) + 1);
  }

  /** A refusal worded as the explorer words it; the line's own errors (field "line") as line A's. */
  function errorText(error) {
    const item = error instanceof ApiError && error.status === 422 ? error.fields[0] ?? error.general[0] : null;
    if (!item) return generalMessage(error);
    const c = context();
    return fieldMessage({ ...item, field: item.field ?? "line_a" }, { text: c.line, position: c.position, max: MAX_ABLATE_CHARS });
  }

  async function render() {
    const answer = headsOff.answer;
    if (!answer) return;
    $("#ablation-summary", panel).textContent = summary(answer);
    const plot = $("#ablation-plot", panel);
    show(plot, answer.tokens.length > 1);
    if (answer.tokens.length > 1) {
      await draw(plot, lossFigure({ answer, offLabel: offLabel(answer.off) }), "ablation");
      if (!plot.clickWatched) {
        plot.clickWatched = true;
        // A bar is the loss at the position before its character: clicking it shows that position's predictions.
        plot.on("plotly_click", (event) => {
          const index = event.points?.[0]?.pointIndex;
          if (Number.isInteger(index)) pick(index);
        });
      }
    }
    const at = chosen ?? defaultPosition(answer);
    select.replaceChildren(...answer.tokens.map((ch, t) => new Option(
      tr("ablation_after", { pos: t, text: answer.tokens.slice(0, t + 1).map(visible).join("") }), String(t))));
    select.value = String(at);
    renderNextLists($("#ablation-next", panel), answer, at);
  }

  function pick(t) {
    chosen = t;
    select.value = String(t);
    if (headsOff.answer) renderNextLists($("#ablation-next", panel), headsOff.answer, t);
  }

  reset.addEventListener("click", () => headsOff.clear());
  select.addEventListener("change", () => pick(Number(select.value)));
  // A switch (here or in the gallery) asks again; the answer redraws both.
  let switched = JSON.stringify(headsOff.list());
  headsOff.subscribe(() => {
    const now = JSON.stringify(headsOff.list());
    if (now === switched) return;
    switched = now;
    switches.word();
    refresh().catch(console.error);
  });
  onStepChange(() => refresh().catch(console.error));

  return {
    refresh,
    /** The language changed: word the switches, the sentence and the charts again from the answer in hand. */
    async redraw() {
      switches.word();
      if (problem) return finish(panel.dataset.state);
      await render();
    },
  };
}
