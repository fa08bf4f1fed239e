// The step's question: its choices (or the self-test's questions and notes) drawn as this screen answered them,
// and what the form holds as an answer.

import { $, clear, el, show } from "../shared/dom.js";
import { tr } from "../shared/i18n.js";
import { setupOf, ui } from "./page.js";
import { choiceLabel, isCommitted, recordOf, teacherReveals } from "./record.js";

function radio(name, value, label, checked, disabled) {
  const input = el("input", { type: "radio", name, value, checked, disabled });
  return el("label", { className: "lesson-choice" }, [input, el("span", { text: label })]);
}

export function renderQuestion(step) {
  const saved = recordOf(step);
  const locked = isCommitted(step);
  const body = clear(ui.questionBody);
  if (step.kind === "selftest") {
    for (const q of step.questions) {
      const picked = saved?.answers?.[q.id];
      const note = el("textarea", {
        id: `note-${q.id}`, className: "lesson-note", rows: 2, value: saved?.notes?.[q.id] ?? "", disabled: locked,
      });
      body.append(el("fieldset", { className: "lesson-fieldset" }, [
        el("legend", { text: tr(`selftest_${q.id}`) }),
        ...q.choices.map((c) => radio(q.id, c, tr(`selftest_${q.id}_choice_${c}`), picked === c, locked)),
        el("label", { className: "lesson-note__label", htmlFor: `note-${q.id}`, text: tr("selftest_write") }),
        note,
      ]));
    }
  } else if (step.choices) {
    body.append(el("fieldset", { className: "lesson-fieldset" }, [
      el("legend", { text: tr(`${step.id}_question`) }),
      ...step.choices.map((c) => radio("choice", c, choiceLabel(step, c), saved?.choice === c, locked)),
    ]));
  }
  show(ui.form, step.kind !== "summary");
  ui.commit.disabled = locked;
  ui.commit.dataset.i18n = teacherReveals(step) ? "class_reveal" : "commit";
  ui.commit.textContent = tr(ui.commit.dataset.i18n);
  // "Change the setup and watch the verdict follow" only where there is a setup to change.
  ui.commitHint.textContent = !locked ? "" : tr(setupOf(step) ? "committed" : "committed_no_setup");
}

/** What the question's form holds as an answer, or null when something is still unpicked. */
export function readAnswer(step) {
  if (step.kind === "selftest") {
    const answers = {};
    for (const q of step.questions) {
      const picked = $(`input[name="${q.id}"]:checked`, ui.form);
      if (!picked) return null;
      answers[q.id] = picked.value;
    }
    const notes = Object.fromEntries(step.questions.map((q) => [q.id, $(`#note-${q.id}`).value]));
    return { answers, notes };
  }
  const picked = $('input[name="choice"]:checked', ui.form);
  return picked ? { choice: picked.value } : null;
}
