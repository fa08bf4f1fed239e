// The page's language: the lesson's texts beside the page's (static/i18n/lesson/{lang}.json), and a switch that
// words everything on screen again, the verdict of the answer on screen included.

import { applyDict, loadDict, setDict } from "../shared/i18n.js";
import { redrawClass } from "../class/class.js";
import { wordError } from "./errors.js";
import { renderNav } from "./nav.js";
import { current, firstLessonTexts, setupOf, state } from "./page.js";
import { PANELS } from "./panels.js";
import { applyChartVisibility } from "./presenter.js";
import { renderQuestion } from "./question.js";
import { judge } from "./reveal.js";
import { updateHints, wordSetupChanged, wordSetupNote } from "./setup.js";

const lessonDicts = new Map([[document.documentElement.lang, firstLessonTexts]]);

async function loadLessonDict(lang) {
  if (!lessonDicts.has(lang)) {
    const response = await fetch(new URL(`../../i18n/lesson/${lang}.json`, import.meta.url));
    if (!response.ok) throw new Error(`lesson texts for ${lang}: HTTP ${response.status}`);
    lessonDicts.set(lang, await response.json());
  }
  return lessonDicts.get(lang);
}

export async function switchLanguage(lang) {
  const [main, lessonTexts] = await Promise.all([loadDict(lang), loadLessonDict(lang)]);
  if (state.lang !== lang) return;
  setDict({ ...main, ...lessonTexts });
  applyDict(lang);
  renderNav();
  renderQuestion(current());
  if (setupOf(current())) {
    updateHints(setupOf(current()));
    wordSetupNote(setupOf(current()));
  }
  wordSetupChanged(current());
  if (state.error) wordError();
  // Every verdict is worded by its judge, the self-test's and the summary's too: ask it again, in the new language.
  if (state.answer) state.answer.judged = judge(state.answer);
  for (const panel of PANELS) await panel.redraw();
  applyChartVisibility();
  redrawClass();
}
