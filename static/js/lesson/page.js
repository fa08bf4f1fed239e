// The lesson page's data, nodes and state: the steps and options the server embedded (#lesson-data), the page's
// elements (ui), its one state object and its one comparison at a time (request). The other modules of the page
// read and change these; main.js wires them to the page's events.

import { burst } from "../shared/burst.js";
import { $, $$ } from "../shared/dom.js";
import { latest } from "../shared/latest.js";

export const { steps: STEPS, options: OPTIONS, texts: firstTexts, lesson_texts: firstLessonTexts } =
  JSON.parse($("#lesson-data").textContent);

export const ui = {
  article: $("#results"),
  kicker: $("#step-kicker"),
  title: $("#step-title"),
  framing: $("#step-framing"),
  setupChanged: $("#setup-changed"),
  setup: $("#step-setup"),
  lineA: $("#line-a"),
  lineB: $("#line-b"),
  positions: $$('input[name="position"]'),
  weights: $("#weights"),
  nLayer: $("#n-layer"),
  heads: $("#heads"),
  causal: $("#causal"),
  distance: $("#distance"),
  setupNote: $("#setup-note"),
  form: $("#step-question"),
  questionBody: $("#question-body"),
  commit: $("#commit"),
  commitHint: $("#commit-hint"),
  reveal: $("#step-reveal"),
  verdict: $("#verdict"),
  verdictMore: $("#verdict-more"),
  error: $("#lesson-error"),
  charts: $("#charts"),
  chartNav: $("#chart-nav"),
  chartCount: $("#chart-count"),
  notice: $("#notice"),
  figure: $("#lesson-figure"),
  figureText: $("#lesson-figure-text"),
  snippet: $("#snippet"),
  snippetCode: $("#snippet-code"),
  copy: $("#copy-snippet"),
  copyStatus: $("#copy-status"),
  prev: $("#prev-step"),
  next: $("#next-step"),
  select: $("#step-select"),
  present: $("#present"),
  explorer: $("#explorer-link"),
  explorerHeld: $("#explorer-held"),
  qr: $("#qr"),
  stepLink: $("#step-link"),
  lang: $("#lang"),
};

/**
 * The page's state, in one object: the URL's part (step, lang, present: readUrl below, writeUrl in nav.js), the
 * setups, and the answer on screen. The page's modules change it, then draw from it.
 */
export const state = {
  ...readUrl(),
  setups: new Map(), // step id -> the setup on screen (the definition's until the student changes it)
  answer: null, // {step, data, ctx, judged} of the last reveal
  revealed: null, // the step whose answer is on screen (or on its way), else null
  error: null, // the error on screen, kept as data: worded at render time, so a language switch re-words it
  linesRefused: false, // the error names a line: no results are on screen for the setup-changed note to speak of
  chartIndex: 0, // the presenter's chart on screen
  chartsDrawing: 0, // the newest update of the charts: an older one stops drawing into the same nodes
  drawing: null, // the last step opened: its renderStep(), settled once its answer (if shown) is drawn
};
export const request = latest();
/** The setup's keystrokes: one reveal per burst of keys (shared/burst.js). */
export const edits = burst({ busy: () => request.busy });

/** The step, language and presenter view this page was opened with: its link as the server decoded it
 * (app/services/link_codec.py, embedded as #page-link; step=３ is step 3 on both), never parsed here. */
function readUrl() {
  const link = JSON.parse(document.getElementById("page-link").textContent).state;
  return { step: link.step, lang: document.documentElement.lang, present: link.present };
}

export const current = () => STEPS[state.step - 1];

export function setupOf(step) {
  if (!step.setup) return null;
  if (!state.setups.has(step.id)) state.setups.set(step.id, { ...step.setup });
  return state.setups.get(step.id);
}

/** One more render finished: tests wait on #results' data-render-count. */
export function bumpRenderCount() {
  ui.article.dataset.renderCount = String(Number(ui.article.dataset.renderCount || 0) + 1);
}

export function setBusy(busy) {
  ui.article.setAttribute("aria-busy", String(busy));
}
