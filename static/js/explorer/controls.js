// The setup controls both pages share (lines, mode, weights, layers, heads, mask), as pure functions of a
// setup {line_a, line_b, position, weights, n_layer, n_head, causal} and /api/options: what a line's hint says, what
// the trained weights fix, what /api/compare is asked, and the explorer's address for a setup. The explorer
// and the guided lesson call these, so they cannot drift apart.

import { $ } from "../shared/dom.js";
import { sentences, tr } from "../shared/i18n.js";
import { modeInSentence } from "./plots-results.js";
import { DEFAULTS, toSearch } from "./state.js";

/** The shipped trained weights' shape for a mode ({n_layer, n_head, ..., val_loss}), or null. */
export function trainedShape(options, position) {
  return options?.trained?.[position] ?? null;
}

/** The weights menu's value for an operator's model is MODEL_PREFIX + its name (served with `serve --model`). */
export const MODEL_PREFIX = "model:";

/** The operator's model a weights value names ({name, position, n_layer, ...} of /api/options models), or null. */
export function servedModel(options, weights) {
  if (!weights?.startsWith(MODEL_PREFIX)) return null;
  return options?.models?.find((m) => m.name === weights.slice(MODEL_PREFIX.length)) ?? null;
}

/** The note under the weights for an operator's model; startLines: the page replaced the lesson's lines. */
export function modelNote(model, startLines) {
  const parts = [tr("model_note", { ...model, position: modeInSentence(model.position) })];
  if (model.val_loss !== null && model.val_loss !== undefined) {
    parts.push(tr("trained_val_loss", { val_loss: Number(model.val_loss).toFixed(3) }));
  }
  if (startLines) parts.push(tr("model_lines"));
  return sentences(parts);
}

/** The note under the weights: what the trained weights fix, that each mode's are a model of its own (the
 * controls a verdict quotes run the weights on screen, not the other modes' models), and their validation loss. */
export function trainedNote(shape, lossAskedAt = null) {
  const note = sentences([tr("trained_shape", shape), tr("trained_per_mode")]);
  if (shape.val_loss === null || shape.val_loss === undefined) return note;
  // The lesson holds the loss back while a later step asks the student to rank it (the step's number).
  if (lossAskedAt) return sentences([note, tr("trained_val_loss_later", { step: lossAskedAt })]);
  return sentences([note, tr("trained_val_loss", { val_loss: Number(shape.val_loss).toFixed(3) })]);
}

/** Under each line, its length against the mode's limit ("5 / 128 characters"), marked when it is over. */
export function showLineHints(lines, max) {
  for (const [id, text] of Object.entries(lines)) {
    const n = [...text].length;
    const hint = $(`#${id}-hint`);
    hint.textContent = max ? tr("line_hint", { n, max }) : "";
    hint.classList.toggle("is-over", Boolean(max) && n > max);
  }
}

/** The /api/compare body for a setup. Trained weights fix their own shape: sending n_layer or n_head could
 * only conflict with it. line_b null: a step that reads line A only compares it with itself. */
export function compareBody(setup) {
  if (setup.weights?.startsWith(MODEL_PREFIX)) {
    // The model answers in its own mode and shape: position, n_layer and n_head are its file's.
    const body = { line_a: setup.line_a, line_b: setup.line_b ?? setup.line_a, model: setup.weights.slice(MODEL_PREFIX.length) };
    if (!setup.causal) body.causal = false;
    return body;
  }
  const body = { line_a: setup.line_a, line_b: setup.line_b ?? setup.line_a, position: setup.position, weights: setup.weights };
  if (setup.weights === "random") {
    if (setup.n_head) body.n_head = setup.n_head;
    if (setup.n_layer) body.n_layer = setup.n_layer;
  }
  if (!setup.causal) body.causal = false;
  return body;
}

/** The explorer's address for a setup, with the keys state.js reads (so the explorer opens on the same model). */
export function explorerUrl(setup, lang) {
  if (!setup) return `/${toSearch({ ...DEFAULTS, weights: null, lang })}`;
  const random = setup.weights === "random";
  return `/${toSearch({
    ...DEFAULTS,
    a: setup.line_a,
    b: setup.line_b ?? setup.line_a,
    pos: setup.position,
    weights: setup.weights,
    heads: random ? setup.n_head : DEFAULTS.heads,
    nLayer: random ? setup.n_layer : null,
    causal: setup.causal,
    lang,
  })}`;
}

