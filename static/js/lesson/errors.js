// The lesson's error on screen, kept as data and worded in the page's language at render time (shared/errors.js),
// so a language switch words it again; a line's error names the line and its length.

import { ApiError } from "../shared/api.js";
import { show } from "../shared/dom.js";
import { fieldMessage, generalMessage } from "../shared/errors.js";
import { sentences, tr } from "../shared/i18n.js";
import { bumpRenderCount, current, OPTIONS, setBusy, setupOf, state, ui } from "./page.js";
import { clearAnswer } from "./panels.js";

const LINE_FIELDS = { line_a: "line_a_label", line_b: "line_b_label" };

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
  clearAnswer();
  wordError();
  show(ui.error, true);
  setBusy(false);
  bumpRenderCount();
}

/** The error on screen, worded in the page's language now, from its fields and the setup on screen. */
export function wordError() {
  const error = state.error;
  const setup = setupOf(current());
  const fields = error instanceof ApiError ? error.fields.map((e) => lineMessage(e, setup)) : [];
  const general = fields.length && ![413, 429].includes(error.status) ? [] : [generalMessage(error)];
  ui.error.textContent = sentences([...fields, ...general]);
}

/** No error: none kept in the page either, where a language switch would leave it in the language it was made in. */
export function hideError() {
  state.error = null;
  ui.error.textContent = "";
  show(ui.error, false);
}
