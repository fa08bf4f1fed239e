// The controls drawn from the state: the lines, the switches, the layer menu, the weights, heads and depth with the
// note under them, the lines' hints, and the shipped panels' note when an operator's model answers.

import { $, show } from "../shared/dom.js";
import { tr, verbatim } from "../shared/i18n.js";
import { modelNote, servedModel, showLineHints, trainedNote, trainedShape as shapeOf } from "./controls.js";
import { effectiveWeights, knownDepth, maxChars } from "./model-choice.js";
import { page, state, ui } from "./page.js";

export function updateWeightsUi() {
  const { options } = page;
  const shape = shapeOf(options, state().pos);
  const anyTrained = Boolean(options && Object.keys(options.trained ?? {}).length);
  ui.trainedOption.disabled = !shape;
  const weights = effectiveWeights();
  ui.weights.value = weights;
  ui.heads.disabled = weights === "trained";
  ui.heads.value = String(weights === "trained" ? shape.n_head : state().heads);
  // The layer count is the random model's to choose; trained weights show their own depth.
  ui.nLayer.disabled = weights === "trained";
  const depth = knownDepth();
  if (depth) ui.nLayer.value = String(depth);
  let note = "";
  if (weights === "trained") {
    note = trainedNote(shape);
  } else if (options && !anyTrained) {
    note = tr("trained_none");
  } else if (options && state().weights !== "random") {
    note = tr("trained_missing_mode");
  }
  const model = servedModel(options, state().weights);
  // The model's file fixes its mode, depth and heads: the controls for them show it and wait.
  for (const radio of ui.positions) radio.disabled = Boolean(model);
  if (model) {
    ui.heads.disabled = true;
    ui.nLayer.disabled = true;
    note = modelNote(model, page.startLines === model.name);
  }
  for (const option of ui.weights.querySelectorAll("option[data-model]")) {
    option.textContent = tr("weights_model", { name: verbatim(option.dataset.model) });
  }
  ui.weightsNote.textContent = note;
  show(ui.weightsNote, Boolean(note));
  showShippedNotes(model);
}

/** The shipped results' panels are measured on the shipped models: with an operator's model they say so. */
const SHIPPED_PANELS = [
  "panel-training", "panel-length", "panel-gallery", "panel-positions", "panel-probe", "panel-speeds",
];
function showShippedNotes(model) {
  for (const id of SHIPPED_PANELS) {
    const panel = $(`#${id}`);
    if (!panel) continue;
    let note = panel.querySelector("[data-shipped-note]");
    if (!note) {
      note = document.createElement("p");
      note.className = "note";
      note.dataset.shippedNote = "";
      (panel.querySelector("h2") ?? panel.firstElementChild).after(note);
    }
    note.textContent = model ? tr("shipped_only", { name: verbatim(model.name) }) : "";
    show(note, Boolean(model));
  }
}

export function updateHints() {
  showLineHints({ "line-a": ui.lineA.value, "line-b": ui.lineB.value }, maxChars());
}

export function setLayerOptions(nLayer) {
  const current = [...ui.layer.options].map((o) => o.value).join(",");
  const wanted = Array.from({ length: nLayer }, (_, i) => String(i + 1));
  if (current !== wanted.join(",")) {
    ui.layer.replaceChildren(...wanted.map((v) => new Option(v, v)));
  }
  ui.layer.value = String(state().layer);
}

export function applyControls() {
  const now = state();
  if (ui.lineA.value !== now.a) ui.lineA.value = now.a;
  if (ui.lineB.value !== now.b) ui.lineB.value = now.b;
  for (const radio of ui.positions) radio.checked = radio.value === now.pos;
  ui.lang.value = now.lang;
  ui.causal.checked = now.causal;
  ui.posinfo.checked = now.posinfo;
  ui.align.checked = now.align;
  if ([...ui.layer.options].some((o) => o.value === String(now.layer))) ui.layer.value = String(now.layer);
  updateWeightsUi();
  updateHints();
}
