// The guided lesson's page: one step at a time, a question before anything is shown, then the live
// answer from the same API as the explorer. The page's state is one object (state, page.js), whose step, lang and
// present live in the URL (nav.js); the student's answers live in localStorage (store.js). Every move, commit and
// reveal goes through the lesson controller (controller.js), which this page attaches its drawing to; class mode
// (class.js) drives the same controller. This module wires the page's events to the modules that draw: the step
// and its reveal (reveal.js), its question (question.js) and setup (setup.js), the panels of an answer
// (panels.js), the presenter's view (presenter.js) and the language (language.js).

import { verdictBody } from "../shared/api.js";
import { $, $$, show } from "../shared/dom.js";
import { setDict, tr } from "../shared/i18n.js";
import { startClassMode } from "../class/class.js";
import "../shared/typeset.js"; // every figure in the page's text stays on one line
import { lesson } from "./controller.js";
import { showError } from "./errors.js";
import { switchLanguage } from "./language.js";
import { renderNav, writeUrl } from "./nav.js";
import { current, edits, firstLessonTexts, firstTexts, setBusy, setupOf, state, STEPS, ui } from "./page.js";
import { PANELS } from "./panels.js";
import { applyChartVisibility, moveChart, showAnswer } from "./presenter.js";
import { isCommitted } from "./record.js";
import { keep, onSubmit, renderStep, reveal, revealHere } from "./reveal.js";
import { readSetup, renderExplorerLink, renderSetup, updateHints, wordSetupChanged } from "./setup.js";
import { unfoldVerdict } from "./verdict-fold.js";

function setPresent(on) {
  state.present = on;
  document.documentElement.classList.toggle("is-presenting", on);
  writeUrl("replace");
  renderNav();
  applyChartVisibility();
  // The presenter drives the step by keys: the focus leaves the checkbox for the step, so the first arrow
  // or Enter acts at once.
  if (on) ui.article.focus({ preventScroll: true });
  // The type and the charts' fonts change with the view: draw the charts again; an answer on screen is brought into
  // view and fitted to the new view's type as after a reveal (presenter.js), with or without a class.
  (async () => {
    for (const panel of PANELS) await panel.redraw();
    applyChartVisibility();
    if (!ui.reveal.hidden) showAnswer();
  })().catch(showError);
}

// ---- events ------------------------------------------------------------------------------------

/** The controller's move: draw step n and put it in the URL. */
function showStep(n, { focus, from }) {
  state.step = n;
  // Only this screen's own moves make history: the class's and the back button's replace it.
  writeUrl(from === "page" ? "push" : "replace");
  state.drawing = renderStep().catch(showError);
  if (focus) ui.article.focus({ preventScroll: false });
}

/**
 * The step's title at the top of the screen, however far a reveal scrolled it: at once, and again once the step is
 * drawn, since a step that opens shorter than the screen (its answer not drawn yet) cannot scroll its title up.
 */
function toTop() {
  const drawing = state.drawing;
  ui.article.scrollIntoView({ block: "start" });
  drawing?.then(() => {
    if (state.drawing === drawing) ui.article.scrollIntoView({ block: "start" });
  });
}

function onSetupChange(event) {
  if (event.isComposing) return;
  readSetup();
  renderExplorerLink(current());
  if (event.type !== "input") renderSetup(current());
  else {
    updateHints(setupOf(current()));
    wordSetupChanged(current());
  }
  if (!isCommitted(current())) return; // before the commit nothing is shown, so nothing to fetch
  // Until the answer for the new setup arrives, the charts on screen are for the old one: greyed.
  ui.charts.dataset.stale = "";
  setBusy(true);
  const ask = () => { reveal().catch(showError); };
  // A key in a box asks by the pages' burst rule (shared/burst.js); a menu, a switch or a finished composition at once.
  if (event.type === "input") {
    edits.edit(ask);
  } else {
    edits.cancel();
    ask();
  }
}

/** Keys a control uses itself: text, a menu, radio buttons (arrows pick). A checkbox uses none of these. */
function isTyping(target) {
  return target instanceof HTMLElement
    && (target.matches("input:not([type=checkbox]), select, textarea") || target.isContentEditable);
}

function onKey(event) {
  if (event.altKey || event.ctrlKey || event.metaKey || isTyping(event.target)) return;
  if (event.key === "ArrowRight") lesson.goTo(state.step + 1);
  else if (event.key === "ArrowLeft") lesson.goTo(state.step - 1);
  else if (state.present && (event.key === "Enter" || event.key === " ")
    && !event.target.matches?.("button, a, input")) {
    event.preventDefault();
    lesson.reveal();
  } else if (event.key === "ArrowDown" && state.present) {
    event.preventDefault();
    moveChart(1);
  } else if (event.key === "ArrowUp" && state.present) {
    event.preventDefault();
    moveChart(-1);
  }
}

async function copySnippet() {
  try {
    await navigator.clipboard.writeText(ui.snippetCode.textContent);
    ui.copyStatus.textContent = tr("copied");
  } catch {
    // No clipboard outside a secure context (http on the class network): select it for Ctrl+C.
    const range = document.createRange();
    range.selectNodeContents(ui.snippetCode);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    ui.copyStatus.textContent = tr("copy_failed");
  }
}

function bind() {
  ui.form.addEventListener("submit", onSubmit);
  for (const input of [ui.lineA, ui.lineB, ui.distance]) {
    input.addEventListener("input", onSetupChange);
    input.addEventListener("compositionend", onSetupChange);
  }
  for (const control of [...ui.positions, ui.weights, ui.nLayer, ui.heads, ui.causal]) {
    control.addEventListener("change", onSetupChange);
  }
  for (const [link, delta] of [[ui.prev, -1], [ui.next, 1]]) {
    link.addEventListener("click", (event) => {
      event.preventDefault();
      lesson.goTo(state.step + delta);
    });
  }
  ui.select.addEventListener("change", () => {
    if (!lesson.goTo(Number(ui.select.value), { focus: false })) ui.select.value = String(state.step);
  });
  ui.charts.addEventListener("click", (event) => {
    event.target.closest(".lesson-chart__caption")?.classList.add("is-open"); // folded on a projector (class.css)
    const link = event.target.closest("a[data-open]");
    if (!link) return;
    event.preventDefault();
    lesson.goTo(Number(link.dataset.open));
  });
  ui.present.addEventListener("change", () => setPresent(ui.present.checked));
  ui.verdictMore.addEventListener("click", () => {
    unfoldVerdict(ui.verdict, ui.verdictMore);
    for (const caption of $$(".lesson-chart__caption", ui.charts)) caption.classList.add("is-open");
  });
  $("#chart-prev").addEventListener("click", () => moveChart(-1));
  $("#chart-next").addEventListener("click", () => moveChart(1));
  ui.copy.addEventListener("click", () => { copySnippet().catch(console.error); });
  ui.lang.addEventListener("change", () => {
    state.lang = ui.lang.value;
    writeUrl("push");
    switchLanguage(state.lang).catch(showError);
  });
  document.addEventListener("keydown", onKey);
  window.addEventListener("popstate", (event) => {
    // An entry without the lesson's state (a #fragment link's) leaves the page where it is.
    if (!event.state?.lesson) return;
    const { step, ...next } = event.state.lesson;
    const langChanged = next.lang !== state.lang;
    Object.assign(state, next);
    ui.lang.value = state.lang;
    const redraw = langChanged ? switchLanguage(state.lang) : Promise.resolve();
    redraw.then(() => {
      // A step the controller refuses (a student in a class) leaves the page, and so the URL, where it was.
      if (!lesson.goTo(step, { from: "history", focus: false })) writeUrl("replace");
    }).catch(showError);
  });
}

function start() {
  setDict({ ...firstTexts, ...firstLessonTexts });
  lesson.attach({
    has: (n) => Number.isInteger(n) && n >= 1 && n <= STEPS.length,
    current: () => state.step,
    show: showStep,
    keep,
    reveal: revealHere,
    revealing: () => state.revealed === state.step,
    hint: (text) => { ui.commitHint.textContent = text; },
    navigation: (open) => show($(".lesson-nav"), open),
    sharing: (open) => show($(".lesson-share"), open),
    toTop,
    setup: () => verdictBody(setupOf(current())),
  });
  bind();
  startClassMode(STEPS);
  if (state.lang !== document.documentElement.lang) {
    ui.lang.value = state.lang;
    switchLanguage(state.lang).then(renderStep).catch(showError);
  } else {
    writeUrl("replace");
    renderStep().catch(showError);
  }
}

start();
