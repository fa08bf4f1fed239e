// The student's answers, kept in this browser only (localStorage): nothing is sent anywhere.
// {stepId: {choice, answers?, notes?, outcome?}}; outcome is what the model did at the last reveal.

import { read, write } from "../shared/storage.js";

const KEY = "heads-positions.lesson.v1";

const readAll = () => read(localStorage, KEY) ?? {};

export function answerOf(stepId) {
  return readAll()[stepId] ?? null;
}

export function saveAnswer(stepId, patch) {
  const all = readAll();
  all[stepId] = { ...(all[stepId] ?? {}), ...patch };
  write(localStorage, KEY, all);
  return all[stepId];
}

export function allAnswers() {
  return readAll();
}
