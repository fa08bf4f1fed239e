// The training-step slider ("watch the heads form"): one control in the gallery and one in the
// position-similarity panel, both bound to the explorer state's step (state.js; in the URL as step=).
// The steps that ship, and what formed when, come from GET /api/snapshots; the page never decides
// which steps exist. A weights folder without snapshots ships the last step only: the slider stays hidden.

import { getShipped, request } from "../shared/api.js";
import { $, $$, show } from "../shared/dom.js";
import { grouped, tr } from "../shared/i18n.js";
import { explorerState } from "./state.js";

let timeline = null; // /api/snapshots, once it has come
let loading = null;
let asked = null; // the step last handed to listeners: null is the end of training
const listeners = new Set();

/** The step the page asks the API for: a snapshot's step, or null for the shipped checkpoints. */
export function askedStep() {
  const { step } = explorerState.get();
  if (!timeline || step === null || step === timeline.final_step || !timeline.steps.includes(step)) return null;
  return step;
}

/** The step on screen, as a number (the last step when none is asked for); null before the timeline. */
export function shownStep() {
  return timeline ? askedStep() ?? timeline.final_step : null;
}

export function getTimeline() {
  return timeline;
}

/** listener(step) runs when the step to ask for changes (null: the last). */
export function onStepChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function notify() {
  const now = askedStep();
  if (now === asked) return;
  asked = now;
  for (const listener of listeners) listener(now);
}

/** "step 1,000 of 10,000", with the language's digit grouping. */
export function stepLabel(step) {
  return tr("step_of", { step: grouped(step), final: grouped(timeline.final_step) });
}

/** Every slider shows the step on screen; each is shown only when there is more than one step. */
function paint() {
  const many = Boolean(timeline && timeline.steps.length > 1);
  for (const control of $$("[data-step-control]")) {
    show(control, many);
    if (!many) continue;
    const input = $("input[type=range]", control);
    const index = timeline.steps.indexOf(shownStep());
    input.max = String(timeline.steps.length - 1);
    input.value = String(index);
    const label = stepLabel(shownStep());
    input.setAttribute("aria-valuetext", label);
    $("output", control).textContent = label;
    control.dataset.step = String(shownStep());
  }
}

function bind() {
  for (const control of $$("[data-step-control]")) {
    const input = $("input[type=range]", control);
    if (input.dataset.bound) continue;
    input.dataset.bound = "1";
    input.addEventListener("input", () => {
      const step = timeline.steps[Number(input.value)];
      explorerState.set({ step: step === timeline.final_step ? null : step });
    });
  }
}

/**
 * Fetch /api/snapshots once and bind the sliders. A step in the URL that does not ship falls back to the
 * last one. If the timeline cannot be had, the panels still show the shipped models, with no slider.
 */
export function loadTimeline() {
  if (!loading) {
    // The address is page.js's to write (it hears the same changes): here, the sliders and the panels.
    explorerState.subscribe((next, previous) => {
      if (next.step === previous.step) return;
      paint();
      notify();
    });
    loading = getShipped("snapshots")
      .then((data) => { timeline = data; })
      .catch((error) => { console.error(error); timeline = null; })
      .then(() => {
        bind();
        const { step } = explorerState.get();
        if (timeline && step !== null && askedStep() === null) explorerState.set({ step: null });
        paint();
        notify();
        return timeline;
      });
  }
  return loading;
}

/** The language changed: the labels are worded again. */
export function repaint() {
  paint();
}

/** GET /api/{name}?step=N (no step: the shipped models); a 422 keeps its detail, for errors.js to word. */
export function getAtStep(name, step, signal) {
  return request(`/api/${name}`, { query: { step }, signal });
}
