// The student's answers, kept in this browser only (localStorage): nothing is sent anywhere.
// {stepId: {choice, answers?, notes?, outcome?}}; outcome is what the model did at the last reveal.

const KEY = "heads-positions.lesson.v1";

function readAll() {
  try {
    return JSON.parse(localStorage.getItem(KEY) ?? "{}") ?? {};
  } catch {
    return {}; // storage blocked or damaged: the lesson still works, it just forgets
  }
}

function writeAll(all) {
  try {
    localStorage.setItem(KEY, JSON.stringify(all));
  } catch {
    // storage full or blocked: keep going without it
  }
}

export function answerOf(stepId) {
  return readAll()[stepId] ?? null;
}

export function saveAnswer(stepId, patch) {
  const all = readAll();
  all[stepId] = { ...(all[stepId] ?? {}), ...patch };
  writeAll(all);
  return all[stepId];
}

export function allAnswers() {
  return readAll();
}
