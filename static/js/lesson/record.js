// What this screen answered at a step, and how an answer is graded: its own record (store.js), or the class's
// while a class holds the step's question (class mode).

import { tr } from "../shared/i18n.js";
import { lesson } from "./controller.js";
import { orderLabel } from "./kinds.js";
import { STEPS } from "./page.js";
import { answerOf, saveAnswer } from "./store.js";

export function choiceLabel(step, choice) {
  if (choice === null || choice === undefined) return tr("summary_none");
  if (step.kind === "ex2") return orderLabel(choice, "heads");
  if (step.kind === "ex3") return orderLabel(choice, "modes");
  return tr(`${step.id}_choice_${choice}`);
}

const numberOf = (step) => STEPS.indexOf(step) + 1;
/** In a class, the class holds the record of its questions (the self-test and the summary stay this screen's). */
export const classHolds = (step) => Boolean(lesson.room && step.choices);

/** What this screen answered at a step, and whether the step is revealed: {choice?, answers?, revealed?}. */
export function recordOf(step) {
  if (!classHolds(step)) return answerOf(step.id);
  const n = numberOf(step);
  return { choice: lesson.room.answer(n) ?? undefined, revealed: lesson.room.revealed(n) };
}

export function isCommitted(step) {
  const saved = recordOf(step);
  // In a class a question stays open, for a new answer, until the teacher reveals it.
  if (classHolds(step)) return saved.revealed;
  return Boolean(saved && (saved.choice !== undefined || saved.answers || saved.revealed));
}

/**
 * Step `id` when it comes after `step` and this screen has not answered it yet: {n, setup}, else null (also for an id
 * that is null, as a step's losses_answer from step 18 on). A figure that
 * the later step asks the student to predict is held back until then, as a teacher would (issue 39).
 */
export function unansweredLater(step, id) {
  const later = STEPS.find((s) => s.id === id);
  if (!later || numberOf(later) <= numberOf(step) || isCommitted(later)) return null;
  return { n: numberOf(later), setup: later.setup };
}

/**
 * The class revealed a question: keep this student's class answer, so the summary counts it afterwards. Not the
 * teacher's: their screen has no answer of its own, and a kept reveal would show on it once the class is lost, or
 * in the next class, as an earlier class's answer.
 */
export function keepClassRecord(step) {
  if (lesson.room.role !== "student") return;
  const choice = lesson.room.answer(numberOf(step));
  saveAnswer(step.id, choice ? { choice } : { revealed: true });
}

/** The teacher's question button in a class is the class's reveal: no answer of their own to lock in. */
export const teacherReveals = (step) => lesson.room?.role === "teacher" && Boolean(step.choices);

/** What the answer is graded on: the step's own setup's verdict when the setup on screen is another. */
export const gradedOn = (judged) => judged.graded ?? judged;

/** Right when the server accepts the choice: the outcome, or either order of two results within their noise. */
export function isRight(choice, judged) {
  return (judged.accepted ?? [judged.outcome]).includes(choice);
}
