// The step's setup controls: drawn from the setup on screen (the step's definition until the student changes it),
// read back into it, and the explorer link that opens the same setup.

import { explorerUrl, showLineHints, trainedNote, trainedShape } from "../explorer/controls.js";
import { headsLabel, modeInSentence } from "../explorer/plots-results.js";
import { $, show } from "../shared/dom.js";
import { tr } from "../shared/i18n.js";
import { peekSetup } from "./fold.js";
import { KINDS } from "./kinds.js";
import { current, OPTIONS, setupOf, state, ui } from "./page.js";
import { unansweredLater } from "./record.js";

export function renderSetup(step) {
  const setup = setupOf(step);
  show(ui.setup, Boolean(setup));
  wordSetupChanged(step);
  if (!setup) return;
  // A step on a model's shipped figures reads no line (a and b null): its setup is the model and the mask.
  ui.lineA.value = setup.line_a ?? "";
  ui.lineB.value = setup.line_b ?? "";
  show($("#field-line-a"), setup.line_a !== null);
  show($("#field-line-b"), setup.line_b !== null);
  for (const r of ui.positions) r.checked = r.value === setup.position;
  ui.weights.value = setup.weights;
  const trained = setup.weights === "trained";
  const shape = runShape(setup);
  ui.nLayer.value = String(shape.n_layer);
  ui.heads.value = String(shape.n_head);
  ui.nLayer.disabled = trained;
  ui.heads.disabled = trained;
  ui.causal.checked = setup.causal;
  // Only the relative step places its pair apart: the others have no distance.
  show($("#field-distance"), setup.distance !== undefined && setup.distance !== null);
  if (setup.distance) ui.distance.value = String(setup.distance);
  // Step 9 runs RoPE's and pos_emb's trained models side by side on a pair alone (POST /api/relative): a mode, a
  // depth, a head count or a mask of its own would change nothing it computes, so those controls are not offered.
  const apart = setup.distance !== undefined && setup.distance !== null;
  for (const id of ["field-position", "field-n-layer", "field-heads", "field-causal"]) show($(`#${id}`), !apart);
  wordSetupNote(setup);
  updateHints(setup);
  peekSetup(); // the folded setup's button names the step's lines
}

/** The depth and heads a setup runs: its own, or for trained weights the trained model's (/api/options). */
function runShape(setup) {
  const trained = setup.weights === "trained" ? trainedShape(OPTIONS, setup.position) : null;
  return { n_layer: trained?.n_layer ?? setup.n_layer, n_head: trained?.n_head ?? setup.n_head };
}

/** The note under the weights, in the page's language (worded again on a language switch). */
export function wordSetupNote(setup) {
  const trained = setup.weights === "trained";
  const shape = OPTIONS.trained[setup.position];
  const apart = setup.distance !== undefined && setup.distance !== null;
  const note = apart ? tr(trained ? "relative_setup_note" : "relative_setup_note_random")
    : trained && shape ? trainedNote(shape, unansweredLater(current(), current().losses_answer)?.n) : "";
  ui.setupNote.textContent = note;
  show(ui.setupNote, Boolean(note));
}

export function updateHints(setup) {
  showLineHints({ "line-a": ui.lineA.value, "line-b": ui.lineB.value }, OPTIONS.max_chars[setup.position]);
}

/** The explorer on the step's setup; a step that reads no line opens the explorer at the panel it draws from. */
export function explorerLink(step) {
  const setup = setupOf(step);
  if (setup && setup.line_a === null) return `${explorerUrl(null, state.lang)}#${KINDS[step.kind].panel}`;
  return explorerUrl(setup, state.lang);
}

/**
 * The later step ({n, setup}) whose answer the explorer would show from this screen, while this screen holds it back
 * and has not answered it, else null. Which steps, and on which setups, the server says (/api/lesson's
 * explorer_shows); the page knows which of them this screen has answered.
 */
export function explorerHeld(step) {
  const setup = setupOf(step);
  for (const { step: id, when } of step.explorer_shows) {
    if (!Object.entries(when).every(([field, value]) => setup?.[field] === value)) continue;
    const held = unansweredLater(step, id);
    if (held) return held;
  }
  return null;
}

/** The explorer link, or in its place the step after which it opens (explorerHeld): worded in the page's language. */
export function renderExplorerLink(step) {
  const held = explorerHeld(step);
  ui.explorer.href = explorerLink(step);
  show(ui.explorer, !held);
  show(ui.explorerHeld, Boolean(held));
  ui.explorerHeld.textContent = held ? tr("explorer_held", { step: held.n }) : "";
  ui.explorerHeld.title = held ? tr("explorer_held_why", { step: held.n }) : "";
}

export function readSetup() {
  const step = current();
  const setup = setupOf(step);
  if (!setup) return;
  if (setup.line_a !== null) setup.line_a = ui.lineA.value;
  if (setup.line_b !== null) setup.line_b = ui.lineB.value;
  setup.position = ui.positions.find((r) => r.checked)?.value ?? setup.position;
  // Trained weights showed their own depth and heads in the menus: back to random weights, the step's own come back.
  const untrained = setup.weights === "trained" && ui.weights.value === "random" && step.setup.n_layer !== null;
  setup.weights = ui.weights.value;
  setup.n_layer = untrained ? step.setup.n_layer : Number(ui.nLayer.value);
  setup.n_head = untrained ? step.setup.n_head : Number(ui.heads.value);
  setup.causal = ui.causal.checked;
  // A distance the server refuses (empty, 0, past 64) is sent as typed: its 422 says the rule in the page's words.
  if (setup.distance !== undefined && setup.distance !== null) setup.distance = Number(ui.distance.value);
  if (setup.weights === "trained" && !OPTIONS.trained[setup.position]) setup.weights = "random";
  if (setup.weights === "trained") Object.assign(setup, { n_layer: null, n_head: null });
  return setup;
}

// ---- the question's setup and the one on screen ---------------------------------------------------

/** What differs between the step's own setup and the one on screen, in the order a reader names a setup. */
function changedParts(own, live, chartOnly = []) {
  const parts = [];
  if ((own.line_a !== live.line_a && !chartOnly.includes("line_a")) || own.line_b !== live.line_b) parts.push("lines");
  if (own.position !== live.position) parts.push("position");
  if (own.weights !== live.weights) parts.push("weights");
  // Each setup's depth and heads as run: trained weights bring their own (n_layer null in the setup), so trained
  // weights on a one-layer step run two layers, and the note says so.
  const [ownShape, liveShape] = [runShape(own), runShape(live)];
  if (ownShape.n_layer !== liveShape.n_layer) parts.push("n_layer");
  if (ownShape.n_head !== liveShape.n_head) parts.push("n_head");
  if (own.causal !== live.causal) parts.push("causal");
  if ((own.distance ?? null) !== (live.distance ?? null)) parts.push("distance");
  return parts;
}

// A line longer than this is named by its first and last characters and its length (step 6's 128 characters).
const LONG_LINE = 12;
const ENDS = 5;

/** A line as the setup-changed note quotes it: whole, or its two ends and its length ("白日依山尽…上一层楼白, 128 characters"). */
export function quotedLine(text) {
  const c = [...(text ?? "")];
  if (c.length <= LONG_LINE) return text;
  return tr("setup_line_cut", { start: c.slice(0, ENDS).join(""), end: c.slice(-ENDS).join(""), n: c.length });
}

function describe(setup, parts) {
  const shape = runShape(setup);
  const words = {
    lines: () => (setup.line_b === null ? tr("setup_line", { a: quotedLine(setup.line_a) })
      : tr("setup_lines", { a: quotedLine(setup.line_a), b: quotedLine(setup.line_b) })),
    position: () => modeInSentence(setup.position),
    weights: () => tr(setup.weights === "trained" ? "setup_trained" : "setup_random"),
    n_layer: () => (shape.n_layer ? tr("setup_layers", { n_layer: shape.n_layer }) : ""),
    n_head: () => (shape.n_head ? headsLabel(shape.n_head) : ""),
    causal: () => tr(setup.causal ? "probe_mask_on" : "probe_mask_off"),
    distance: () => (setup.distance ? tr("setup_distance", { distance: setup.distance }) : ""),
  };
  return parts.map((part) => words[part]()).filter(Boolean).join(tr("list_sep"));
}

/**
 * The step's title, framing and question describe its own setup ("one layer, no positions"): once the setup on
 * screen is another, a note under the framing names both, the one the question was asked for and the one the
 * results are for, by what differs (issue 39); a line the step only draws (its chart_only, sent by the server) is
 * no part of the question's setup. Worded again on every change and language switch.
 */
export function wordSetupChanged(step) {
  const own = step.setup;
  const live = setupOf(step);
  // While a line is refused (an empty line B) there are no results for the note to say whose they are.
  const parts = own && live && !state.linesRefused ? changedParts(own, live, step.chart_only) : [];
  ui.setupChanged.textContent = parts.length
    ? tr("setup_changed", { asked: describe(own, parts), shown: describe(live, parts) }) : "";
  show(ui.setupChanged, parts.length > 0);
}
