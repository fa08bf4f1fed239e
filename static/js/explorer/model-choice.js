// What the page's choices come to once /api/options is known: the weights, the depth and the longest line of the
// model the next request gets, whether the lines are long, and the change an operator's model brings.

import { MODES } from "../shared/constants.js";
import { MODEL_PREFIX, servedModel, trainedShape as shapeOf } from "./controls.js";
import { LONG_LINE, page, state } from "./page.js";
import { DEFAULTS } from "./state.js";

/**
 * Trained weights where they exist for the mode, unless the user chose random. state.weights is
 * null until the user picks: the default then follows the mode (trained where shipped).
 */
export function effectiveWeights() {
  if (state().weights?.startsWith(MODEL_PREFIX)) return state().weights; // an operator's model, as the menu says
  return state().weights !== "random" && shapeOf(page.options, state().pos) ? "trained" : "random";
}

export function trainedEverywhere() {
  return MODES.every((p) => shapeOf(page.options, p));
}

export function isLong() {
  const { a, b } = state();
  return [...a].length > LONG_LINE || [...b].length > LONG_LINE;
}

/** The depth of the model the next request will get, when the page already knows it. */
export function knownDepth() {
  const model = servedModel(page.options, state().weights);
  if (model) return model.n_layer;
  if (effectiveWeights() === "trained") return shapeOf(page.options, state().pos).n_layer;
  return state().nLayer ?? page.options?.random?.n_layer ?? null;
}

export function maxChars() {
  const model = servedModel(page.options, state().weights);
  if (model) return model.max_chars;
  return page.options?.max_chars?.[state().pos] ?? null;
}

/**
 * The state a weights choice makes. An operator's model brings its own mode; when its vocabulary lacks the lesson's
 * lines and those are on screen, it brings two lines it knows (/api/options models[].lines), and the note says so.
 */
export function weightsChange(weights) {
  const model = servedModel(page.options, weights);
  if (!model) return { weights };
  const change = { weights, pos: model.position };
  const { a, b } = state();
  if (!model.lesson_lines && a === DEFAULTS.a && b === DEFAULTS.b) {
    [change.a, change.b] = model.lines;
    page.startLines = model.name;
  }
  return change;
}
