// The page's status line, its busy flag (#results aria-busy, which tests wait on too) and its errors: each field's
// under its control, worded in the page's language, and the general one.

import { ApiError, FIELD_CONTROLS } from "../shared/api.js";
import { $, $$, show } from "../shared/dom.js";
import { fieldMessage } from "../shared/errors.js";
import { tr } from "../shared/i18n.js";
import { maxChars } from "./model-choice.js";
import { page, state, ui } from "./page.js";

/** kind: idle, loading, ready, error (the request failed) or invalid (an input to fix; nothing was sent). */
export function setStatus(kind) {
  ui.status.dataset.state = kind;
  ui.status.textContent = kind === "idle" ? "" : tr(`status_${kind}`);
  updateBusy();
}

/** #results is busy while a request or the answer's verdict is out, or a render is drawing; tests wait on it too. */
export function updateBusy() {
  const busy = ui.status.dataset.state === "loading" || page.drawing.busy || page.edits.waiting
    || page.judging !== null;
  ui.results.setAttribute("aria-busy", String(busy));
}

export function clearErrors() {
  for (const id of Object.values(FIELD_CONTROLS)) {
    const node = $(`#${id}-error`);
    node.textContent = "";
    show(node, false);
  }
  for (const node of $$("[aria-invalid]")) node.removeAttribute("aria-invalid");
  ui.generalError.textContent = "";
  show(ui.generalError, false);
  ui.results.classList.remove("is-stale");
  page.shownError = null;
}

/** Fields the page can check before asking the server: an empty line is an input to fix, not a failure. */
export function inputProblems() {
  const { a, b } = state();
  const fields = [];
  if (!a) fields.push({ field: "line_a", type: "string_too_short", ctx: { min_length: 1 } });
  if (!b) fields.push({ field: "line_b", type: "string_too_short", ctx: { min_length: 1 } });
  return fields.length ? new ApiError(422, fields, []) : null;
}

export function showError(error) {
  clearErrors();
  page.shownError = error;
  ui.results.classList.add("is-stale");
  // A 422 naming fields is an input to fix: the request itself did not fail.
  const invalid = error instanceof ApiError && error.status === 422 && error.fields.length > 0;
  setStatus(invalid ? "invalid" : "error");
  if (!(error instanceof ApiError) || error.status === 0) { // 0: no answer came
    ui.generalError.textContent = tr("error_network");
    show(ui.generalError, true);
    return;
  }
  for (const item of error.fields) {
    const id = FIELD_CONTROLS[item.field];
    const node = $(`#${id}-error`);
    // Worded in the page's language from the error's type (errors.js), as the lesson words it.
    const { a, b, pos } = state();
    const message = fieldMessage(item, { text: item.field === "line_b" ? b : a, position: pos, max: maxChars() });
    node.textContent = node.textContent ? `${node.textContent} ${message}` : message;
    show(node, true);
    const control = id === "position" ? $(".switch") : $(`#${id}`);
    control?.setAttribute("aria-invalid", "true");
  }
  const general = [];
  if (error.status === 413) general.push(tr("error_too_large"));
  else if (error.status === 429) general.push(tr("error_rate_limited"));
  else if (!error.fields.length) general.push(tr("error_server", { status: error.status }));
  if (general.length) {
    ui.generalError.textContent = general.join(" ");
    show(ui.generalError, true);
  }
}
