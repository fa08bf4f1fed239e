// A step on screen and its reveal: the step drawn (its answer revealed at once when already committed), the
// controller's commit and reveal, the request for the answer, and the verdict that grades it.

import { postVerdict } from "../shared/api.js";
import { $, show } from "../shared/dom.js";
import { emptyLines } from "../shared/errors.js";
import { tr } from "../shared/i18n.js";
import { lesson } from "./controller.js";
import { hideError, showError } from "./errors.js";
import { KINDS } from "./kinds.js";
import { renderNav } from "./nav.js";
import { bumpRenderCount, current, edits, OPTIONS, request, setBusy, setupOf, state, ui } from "./page.js";
import { clearAnswer, updatePanels } from "./panels.js";
import { showAnswer } from "./presenter.js";
import { readAnswer, renderQuestion } from "./question.js";
import { classHolds, gradedOn, isCommitted, keepClassRecord, teacherReveals, unansweredLater } from "./record.js";
import { judgeSelftest, judgeSummary } from "./selftest-summary.js";
import { renderSetup } from "./setup.js";
import { answerOf, saveAnswer } from "./store.js";

/** Paint the step; reveal it at once if the student already committed an answer here. */
export async function renderStep() {
  const step = current();
  request.abort();
  edits.cancel();
  state.answer = null;
  state.chartIndex = 0;
  renderNav();
  renderSetup(step);
  renderQuestion(step);
  resetReveal();
  // The self-test and the summary show the lesson's answers and the student's record, not a model run.
  const title = $("#reveal-title");
  title.dataset.i18n = { selftest: "reveal_title_selftest", summary: "reveal_title_summary" }[step.kind] ?? "reveal_title";
  title.textContent = tr(title.dataset.i18n);
  if (step.kind === "summary" || isCommitted(step)) {
    await reveal();
  } else {
    bumpRenderCount();
    setBusy(false);
  }
}

function resetReveal() {
  state.revealed = null;
  show(ui.reveal, false);
  clearAnswer();
  hideError();
}

// ---- commit and reveal -------------------------------------------------------------------------

export function onSubmit(event) {
  event.preventDefault();
  const step = current();
  if (isCommitted(step)) return;
  if (teacherReveals(step)) {
    lesson.reveal();
    return;
  }
  const picked = readAnswer(step);
  if (!picked) {
    ui.commitHint.textContent = tr("commit_pick");
    return;
  }
  lesson.commit(picked);
}

/** The controller's commit, once no listener took the answer: keep it here and reveal. */
export function keep(picked) {
  const step = current();
  saveAnswer(step.id, picked);
  renderQuestion(step);
  reveal({ scroll: true }).catch(showError);
}

/**
 * The controller's reveal. From this screen (the presenter's Enter): a choice picked on screen is the
 * prediction; without one the step reveals with none (the class answered aloud or on paper). From the
 * class: the class's record says what this screen answered.
 */
export function revealHere(from) {
  const step = current();
  if (step.kind === "summary") return;
  if (!classHolds(step)) {
    const picked = $('input[name="choice"]:checked', ui.form);
    if (picked) {
      lesson.commit({ choice: picked.value }, { from });
      return;
    }
    saveAnswer(step.id, { revealed: true });
  }
  renderQuestion(step);
  reveal({ scroll: true }).catch(showError);
}

/** scroll: bring the answer into view (after a commit; not when a step opens already answered). */
export async function reveal({ scroll = false } = {}) {
  const step = current();
  state.revealed = state.step;
  show(ui.reveal, true);
  setBusy(true);
  if (classHolds(step)) keepClassRecord(step);
  if (step.kind === "summary" || step.kind === "selftest") {
    state.answer = { step };
    state.answer.judged = judge(state.answer);
    if (step.kind === "selftest") saveAnswer(step.id, { outcome: state.answer.judged.outcome });
    await updatePanels();
    if (scroll) showAnswer();
    finishReveal();
    lesson.tell("verdict", { step: state.step, outcome: state.answer.judged.outcome ?? null });
    return;
  }
  const kind = KINDS[step.kind];
  // later(id): a later step not answered yet, whose figures this step's answer holds back (record.js).
  const ctx = { step, setup: setupOf(step) && { ...setupOf(step) }, options: OPTIONS, later: (id) => unansweredLater(step, id) };
  // An empty line is an input to fix: said at once, in the page's language, without asking the server.
  const setup = ctx.setup;
  const lines = Object.fromEntries([["line_a", setup?.line_a], ["line_b", setup?.line_b]].filter(([, text]) => text !== null));
  const empty = setup && emptyLines(lines);
  if (empty) {
    request.abort();
    showError(empty);
    return;
  }
  ui.verdict.textContent = tr("loading");
  let out;
  try {
    out = await request.run(async (signal) => {
      const data = await kind.fetch(ctx, signal);
      // The question describes the step's own setup: a changed setup's result is shown live, and the answer is
      // graded on the step's own verdict (the body {}), which the summary keeps too.
      const changed = step.setup && data.verdict && data.verdict.setup_is_lessons === false;
      return changed ? { ...data, graded: await ownVerdict(step.id) } : data;
    });
  } catch (error) {
    showError(error);
    return;
  }
  if (out.stale || current() !== step) return;
  state.answer = { step, kind, data: out.value, ctx };
  state.answer.judged = judge(state.answer);
  // The summary sets each prediction beside what the model did when it was revealed: a later edit of
  // the lines redraws the verdict, but does not rewrite that record.
  if ((answerOf(step.id)?.outcome ?? null) === null) {
    const graded = gradedOn(state.answer.judged);
    saveAnswer(step.id, { outcome: graded.outcome, accepted: graded.accepted });
  }
  hideError();
  await updatePanels();
  if (scroll) showAnswer();
  finishReveal();
  lesson.tell("verdict", { step: state.step, outcome: state.answer.judged.outcome ?? null });
}

/**
 * The answer's verdict, worded in the page's language at the time of asking (a language switch asks again): the
 * kind's judge, or the self-test's and the summary's, which read the student's record instead of a model run.
 */
export function judge(a) {
  if (a.step.kind === "summary") return judgeSummary();
  if (a.step.kind === "selftest") return judgeSelftest(a.step);
  const judged = a.kind.judge(a.data, a.ctx);
  const g = a.data.graded;
  return g ? { ...judged, graded: { outcome: g.outcome, accepted: g.accepted, rule: g.rule } } : judged;
}

// The step's own verdict (the body {}) is the same for every keystroke and every language: asked once per step and
// kept, so a keystroke on a changed setup still costs one comparison. No abort signal: keystrokes share it.
const ownVerdicts = new Map();

function ownVerdict(stepId) {
  if (!ownVerdicts.has(stepId)) {
    const request = postVerdict(stepId, null);
    request.catch(() => ownVerdicts.delete(stepId)); // a failed ask is asked again next time
    ownVerdicts.set(stepId, request);
  }
  return ownVerdicts.get(stepId);
}

function finishReveal() {
  setBusy(request.busy || edits.waiting);
  bumpRenderCount();
}
