// The lesson's setup folds behind a button on a phone (.fold in lesson.css), so the step's question, above
// it, is on the first screen. The button says whether the controls are shown (aria-expanded) and names the
// lines on screen, which the question is about. On wider screens CSS keeps the controls open and hides it.

import { $, el } from "../shared/dom.js";

const section = $("#step-setup");
const toggle = $("#setup-toggle");
const peek = $("#setup-peek");

function setOpen(open) {
  toggle.setAttribute("aria-expanded", String(open));
}

/** Unfold the setup (where it folds): an error under a line's box is not to be hidden with it. */
export function openSetup() {
  setOpen(true);
}

/** Write the lines on screen into the folded button: "A 白日依山尽 B 山依日白尽" (B only when the step has one). */
export function peekSetup() {
  const badge = (line) => el("span", { className: `line-badge line-badge--${line}`, text: line.toUpperCase() });
  const parts = [];
  for (const line of ["a", "b"]) {
    const field = $(`#field-line-${line}`);
    if (field.hidden) continue;
    parts.push(el("span", { className: "fold__line" }, [badge(line), el("span", { text: $(`#line-${line}`).value })]));
  }
  peek.replaceChildren(...parts);
}

toggle.addEventListener("click", () => setOpen(toggle.getAttribute("aria-expanded") !== "true"));
// A student's own edits show in the button at once; setup.js calls peekSetup when a step fills the lines.
section.addEventListener("input", peekSetup);
peekSetup();
