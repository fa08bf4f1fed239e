// The lesson's error on screen, kept as data and worded in the page's language at render time (shared/errors.js),
// so a language switch words it again; a line's error names the line and its length, and shows under that line's
// box (#line-a-error, #line-b-error), as the explorer shows every field's; the rest in the reveal (#lesson-error).

import { ApiError } from "../shared/api.js";
import { $, show } from "../shared/dom.js";
import { fieldMessage, generalMessage } from "../shared/errors.js";
import { sentences, tr } from "../shared/i18n.js";
import { openSetup } from "./fold.js";
import { bumpRenderCount, current, OPTIONS, setBusy, setupOf, state, ui } from "./page.js";
import { clearAnswer } from "./panels.js";
import { wordSetupChanged } from "./setup.js";

const LINE_FIELDS = { line_a: "line_a_label", line_b: "line_b_label" };
const LINE_BOXES = { line_a: "line-a", line_b: "line-b" };

/** A field error in the page's language; a line's error names the line, and its length once it has one. */
function lineMessage(error, setup) {
  const text = (error.field === "line_b" ? setup?.line_b : setup?.line_a) ?? "";
  const msg = fieldMessage(error, { text, position: setup?.position, max: OPTIONS.max_chars[setup?.position] });
  if (!LINE_FIELDS[error.field]) return msg;
  const n = [...text].length;
  return tr(n ? "error_line_count" : "error_line", { line: tr(LINE_FIELDS[error.field]), n, msg });
}

/** An error in the page's language (errors.js), never the server's English msg; the last answer goes. */
export function showError(error) {
  if (!(error instanceof ApiError)) console.error(error);
  state.error = error;
  state.linesRefused = lineErrors(error).length > 0;
  clearAnswer();
  wordError();
  wordSetupChanged(current());
  if (state.linesRefused) {
    // On a phone the lines fold behind a button: a line's error is not left under a folded box. The reveal has
    // nothing to say until the line is put right, unless the error has more than its lines.
    openSetup();
    show(ui.reveal, Boolean(ui.error.textContent));
  }
  setBusy(false);
  bumpRenderCount();
}

/** The error's items that name a line: each shown under that line's box. */
function lineErrors(error) {
  return error instanceof ApiError ? error.fields.filter((e) => LINE_BOXES[e.field]) : [];
}

/** The error on screen, worded in the page's language now, from its fields and the setup on screen. */
export function wordError() {
  const error = state.error;
  const setup = setupOf(current());
  const lines = lineErrors(error);
  for (const [field, id] of Object.entries(LINE_BOXES)) {
    const mine = lines.filter((e) => e.field === field);
    fieldError(id, sentences(mine.map((e) => lineMessage(e, setup))));
  }
  const others = error instanceof ApiError ? error.fields.filter((e) => !LINE_BOXES[e.field]).map((e) => lineMessage(e, setup)) : [];
  const fields = error instanceof ApiError ? error.fields : [];
  const general = fields.length && ![413, 429].includes(error.status) ? [] : [generalMessage(error)];
  ui.error.textContent = sentences([...others, ...general]);
  show(ui.error, Boolean(ui.error.textContent));
}

/** The box's error under it, and the box marked invalid; "" takes both away. */
function fieldError(id, text) {
  const node = $(`#${id}-error`);
  node.textContent = text;
  show(node, Boolean(text));
  if (text) $(`#${id}`).setAttribute("aria-invalid", "true");
  else $(`#${id}`).removeAttribute("aria-invalid");
}

/** No error: none kept in the page either, where a language switch would leave it in the language it was made in. */
export function hideError() {
  state.error = null;
  if (state.linesRefused) {
    state.linesRefused = false;
    wordSetupChanged(current());
  }
  for (const id of Object.values(LINE_BOXES)) fieldError(id, "");
  ui.error.textContent = "";
  show(ui.error, false);
}
