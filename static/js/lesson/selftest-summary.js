// The self-test and the summary: steps that show the lesson's answers and the student's record, not a model run.

import { el } from "../shared/dom.js";
import { labelled, tr } from "../shared/i18n.js";
import { stepUrl } from "./nav.js";
import { STEPS } from "./page.js";
import { choiceLabel, isRight } from "./record.js";
import { allAnswers, answerOf } from "./store.js";

export function judgeSelftest(step) {
  const answers = answerOf(step.id)?.answers ?? {};
  const n = step.questions.filter((q) => answers[q.id] === q.answer).length;
  return { outcome: `${n}/${step.questions.length}`, text: tr("selftest_verdict", { n, total: step.questions.length }), value: n };
}

export function selftestChart(step) {
  const answers = answerOf(step.id)?.answers ?? {};
  const items = step.questions.map((q) => el("li", {
    className: `selftest-answer ${answers[q.id] === q.answer ? "is-right" : "is-wrong"}`,
    dataset: { mark: answers[q.id] === q.answer ? "right" : "wrong" },
  }, [
    el("p", { className: "selftest-answer__mark", text: tr(answers[q.id] === q.answer ? "selftest_mark_right" : "selftest_mark_wrong") }),
    el("p", { className: "selftest-answer__q", text: tr(`selftest_${q.id}`) }),
    el("p", { text: labelled(tr("summary_col_you"), answers[q.id] ? tr(`selftest_${q.id}_choice_${answers[q.id]}`) : tr("summary_none")) }),
    el("p", { className: "selftest-answer__lesson", text: labelled(tr("selftest_lesson_says"), tr(`selftest_${q.id}_answer`)) }),
  ]));
  return { name: "selftest", caption: tr("selftest_lesson_says"), alt: "", table: el("ol", { className: "selftest-answers" }, items) };
}

export function judgeSummary() {
  const saved = allAnswers();
  // A step whose setup gave no result (two identical lines, say) is neither right nor a miss.
  const asked = STEPS.filter((s) => s.choices && saved[s.id]?.choice !== undefined && saved[s.id].outcome != null);
  const right = asked.filter((s) => isRight(saved[s.id].choice, saved[s.id])).length;
  return { outcome: null, text: tr("summary_verdict", { right, answered: asked.length }), value: right };
}

export function summaryChart() {
  const saved = allAnswers();
  const rows = STEPS.map((step, i) => ({ step, n: i + 1 })).filter(({ step }) => step.choices || step.questions)
    .map(({ step, n }) => {
      const s = saved[step.id] ?? {};
      const you = step.questions ? (s.answers ? Object.values(s.answers).length : null) : s.choice;
      // The self-test has no model outcome: its score reads once, in the student's column.
      const score = s.outcome?.split("/").map(Number);
      const youText = step.questions
        ? (you && score ? tr("selftest_score", { n: score[0], total: score[1] }) : tr("summary_none"))
        : choiceLabel(step, you);
      const did = step.questions ? "–" : s.outcome ? choiceLabel(step, s.outcome) : "–";
      const link = el("a", { href: stepUrl(n), text: tr("summary_open", { n }), dataset: { open: String(n) } });
      return el("tr", { className: s.choice !== undefined && s.outcome && isRight(s.choice, s) ? "is-right" : "" }, [
        el("th", { scope: "row", text: `${n}. ${tr(`${step.id}_title`)}` }),
        el("td", { text: youText }),
        el("td", { text: did }),
        el("td", {}, [link]),
      ]);
    });
  const head = el("thead", {}, [el("tr", {}, ["summary_col_step", "summary_col_you", "summary_col_model", "summary_col_open"]
    .map((key) => el("th", { scope: "col", text: tr(key) })))]);
  const table = el("table", { className: "data-table summary-table" }, [
    el("caption", { className: "visually-hidden", text: tr("summary_title") }), head, el("tbody", {}, rows),
  ]);
  return { name: "summary", caption: tr("summary_framing"), alt: "", table: el("div", { className: "table-wrap" }, [table]) };
}
