// The guided lesson's page: one step at a time, a question before anything is shown, then the live
// answer from the same API as the explorer. The page's state is one object (state, below), whose step, lang and
// present live in the URL; the student's answers live in localStorage (store.js). Every move, commit and reveal
// goes through the lesson controller (controller.js), which this page attaches its drawing to; class mode
// (class.js) drives the same controller.

import { ApiError, postVerdict, verdictBody } from "../shared/api.js";
import { explorerUrl, showLineHints, trainedNote } from "../explorer/controls.js";
import { $, $$, clear, el, show } from "../shared/dom.js";
import { draw, purge } from "../shared/draw.js";
import { applyDict, fillRich, labelled, loadDict, sentences, setDict, tr } from "../shared/i18n.js";
import { emptyLines, fieldMessage, generalMessage } from "../shared/errors.js";
import { latest } from "../shared/latest.js";
import { visible } from "../shared/plots.js";
import { KINDS, orderLabel } from "./kinds.js";
import { redrawClass, startClassMode } from "../class/class.js";
import { peekSetup } from "./fold.js";
import "../shared/typeset.js"; // every figure in the page's text stays on one line
import { lesson } from "./controller.js";
import { foldVerdict, unfoldVerdict } from "./verdict-fold.js";
import { allAnswers, answerOf, saveAnswer } from "./store.js";

/** A keystroke after a pause asks at once; one while the last is still out waits for the keys to stop this long
 * (a burst, a held key or a paste asks for its last setup), as in the explorer (static/js/explorer/main.js). */
const BURST_MS = 50;
const { steps: STEPS, options: OPTIONS, texts: firstTexts, lesson_texts: firstLessonTexts } =
  JSON.parse($("#lesson-data").textContent);

const ui = {
  article: $("#results"),
  kicker: $("#step-kicker"),
  title: $("#step-title"),
  framing: $("#step-framing"),
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
  qr: $("#qr"),
  stepLink: $("#step-link"),
  lang: $("#lang"),
};

/**
 * The page's state, in one object: the URL's part (step, lang, present: readUrl, writeUrl), the setups, and the
 * answer on screen. The functions below change it, then draw from it.
 */
const state = {
  ...readUrl(),
  setups: new Map(), // step id -> the setup on screen (the definition's until the student changes it)
  answer: null, // {step, data, ctx, judged} of the last reveal
  revealed: null, // the step whose answer is on screen (or on its way), else null
  error: null, // the error on screen, kept as data: worded at render time, so a language switch re-words it
  chartIndex: 0, // the presenter's chart on screen
  chartsDrawing: 0, // the newest update of the charts: an older one stops drawing into the same nodes
  debounce: null, // an edit's reveal, waiting for a burst of keys to stop
  drawing: null, // the last step opened: its renderStep(), settled once its answer (if shown) is drawn
};
const request = latest();

// ---- URL ---------------------------------------------------------------------------------------

/** The step, language and presenter view this page was opened with: its link as the server decoded it
 * (app/services/link_codec.py, embedded as #page-link; step=３ is step 3 on both), never parsed here. */
function readUrl() {
  const link = JSON.parse(document.getElementById("page-link").textContent).state;
  return { step: link.step, lang: document.documentElement.lang, present: link.present };
}

/** The URL's part of the state, as a history entry keeps it: popstate reads it back. */
const entry = () => ({ lesson: { step: state.step, lang: state.lang, present: state.present } });

function stepUrl(step, lang = state.lang, present = state.present) {
  const q = new URLSearchParams({ step: String(step), lang });
  if (present) q.set("present", "1");
  return `${location.pathname}?${q}`;
}

function writeUrl(mode) {
  let url = stepUrl(state.step);
  // A student's address keeps the class, so a reload or a reopened tab comes back into it.
  if (lesson.room?.role === "student") url += `&${new URLSearchParams({ class: lesson.room.code })}`;
  if (mode === "push" && url !== `${location.pathname}${location.search}`) history.pushState(entry(), "", url);
  else history.replaceState(entry(), "", url);
}

// ---- the step ----------------------------------------------------------------------------------

const current = () => STEPS[state.step - 1];

function setupOf(step) {
  if (!step.setup) return null;
  if (!state.setups.has(step.id)) state.setups.set(step.id, { ...step.setup });
  return state.setups.get(step.id);
}

function choiceLabel(step, choice) {
  if (choice === null || choice === undefined) return tr("summary_none");
  if (step.kind === "ex2") return orderLabel(choice, "heads");
  if (step.kind === "ex3") return orderLabel(choice, "modes");
  return tr(`${step.id}_choice_${choice}`);
}

const numberOf = (step) => STEPS.indexOf(step) + 1;
/** In a class, the class holds the record of its questions (the self-test and the summary stay this screen's). */
const classHolds = (step) => Boolean(lesson.room && step.choices);

/** What this screen answered at a step, and whether the step is revealed: {choice?, answers?, revealed?}. */
function recordOf(step) {
  if (!classHolds(step)) return answerOf(step.id);
  const n = numberOf(step);
  return { choice: lesson.room.answer(n) ?? undefined, revealed: lesson.room.revealed(n) };
}

function isCommitted(step) {
  const saved = recordOf(step);
  // In a class a question stays open, for a new answer, until the teacher reveals it.
  if (classHolds(step)) return saved.revealed;
  return Boolean(saved && (saved.choice !== undefined || saved.answers || saved.revealed));
}

/**
 * The class revealed a question: keep this student's class answer, so the summary counts it afterwards. Not the
 * teacher's: their screen has no answer of its own, and a kept reveal would show on it once the class is lost, or
 * in the next class, as an earlier class's answer.
 */
function keepClassRecord(step) {
  if (lesson.room.role !== "student") return;
  const choice = lesson.room.answer(numberOf(step));
  saveAnswer(step.id, choice ? { choice } : { revealed: true });
}

/** The teacher's question button in a class is the class's reveal: no answer of their own to lock in. */
const teacherReveals = (step) => lesson.room?.role === "teacher" && Boolean(step.choices);

function radio(name, value, label, checked, disabled) {
  const input = el("input", { type: "radio", name, value, checked, disabled });
  return el("label", { className: "lesson-choice" }, [input, el("span", { text: label })]);
}

function renderQuestion(step) {
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

function renderSetup(step) {
  const setup = setupOf(step);
  show(ui.setup, Boolean(setup));
  if (!setup) return;
  // A step on a model's shipped figures reads no line (a and b null): its setup is the model and the mask.
  ui.lineA.value = setup.a ?? "";
  ui.lineB.value = setup.b ?? "";
  show($("#field-line-a"), setup.a !== null);
  show($("#field-line-b"), setup.b !== null);
  for (const r of ui.positions) r.checked = r.value === setup.position;
  ui.weights.value = setup.weights;
  const trained = setup.weights === "trained";
  const shape = OPTIONS.trained[setup.position];
  ui.nLayer.value = String(trained && shape ? shape.n_layer : setup.n_layer);
  ui.heads.value = String(trained && shape ? shape.n_head : setup.n_head);
  ui.nLayer.disabled = trained;
  ui.heads.disabled = trained;
  ui.causal.checked = setup.causal;
  // Only the relative step places its pair apart: the others have no distance.
  show($("#field-distance"), setup.distance !== undefined && setup.distance !== null);
  if (setup.distance) ui.distance.value = String(setup.distance);
  // Step 9 runs RoPE's and pos_emb's trained models side by side on a pair alone (POST /api/relative): a mode, a
  // depth, a head count or a mask of its own would change nothing it computes, so those controls are not offered.
  const apart = setup.distance !== undefined && setup.distance !== null;
  for (const id of ["field-position", "field-n-layer", "field-heads", "field-causal"]) show($(`#${id}`), !apart);
  const note = apart ? tr(trained ? "relative_setup_note" : "relative_setup_note_random")
    : trained && shape ? trainedNote(shape) : "";
  ui.setupNote.textContent = note;
  show(ui.setupNote, Boolean(note));
  updateHints(setup);
  peekSetup(); // the folded setup's button names the step's lines
}

function updateHints(setup) {
  showLineHints({ "line-a": ui.lineA.value, "line-b": ui.lineB.value }, OPTIONS.max_chars[setup.position]);
}

/** The explorer on the step's setup; a step that reads no line opens the explorer at the panel it draws from. */
function explorerLink(step) {
  const setup = setupOf(step);
  if (setup && setup.a === null) return `${explorerUrl(null, state.lang)}#${KINDS[step.kind].panel}`;
  return explorerUrl(setup, state.lang);
}

function renderNav() {
  const step = current();
  ui.article.dataset.step = String(state.step);
  ui.article.dataset.kind = step.kind;
  ui.kicker.textContent = tr("step_of", { n: state.step, total: STEPS.length, section: tr(`section_${step.section}`) });
  ui.title.textContent = tr(`${step.id}_title`);
  fillRich(ui.framing, tr(`${step.id}_framing`));
  for (const [link, n] of [[ui.prev, state.step - 1], [ui.next, state.step + 1]]) {
    const inside = n >= 1 && n <= STEPS.length;
    link.href = stepUrl(inside ? n : state.step);
    link.toggleAttribute("aria-disabled", !inside);
    link.classList.toggle("is-disabled", !inside);
  }
  [...ui.select.options].forEach((option, i) => {
    option.textContent = `${i + 1}. ${tr(`${STEPS[i].id}_title`)}`;
  });
  ui.select.value = String(state.step);
  ui.present.checked = state.present;
  document.body.classList.toggle("is-presenting", state.present);
  document.documentElement.classList.toggle("is-presenting", state.present);
  ui.explorer.href = explorerLink(step);
  const link = stepUrl(state.step, state.lang, false);
  ui.qr.src = `/lesson/qr.svg?step=${state.step}&lang=${state.lang}`;
  ui.stepLink.href = link;
  ui.stepLink.textContent = new URL(link, location.href).href;
}

function bumpRenderCount() {
  ui.article.dataset.renderCount = String(Number(ui.article.dataset.renderCount || 0) + 1);
}

function setBusy(busy) {
  ui.article.setAttribute("aria-busy", String(busy));
}

/** Paint the step; reveal it at once if the student already committed an answer here. */
async function renderStep() {
  const step = current();
  request.abort();
  clearTimeout(state.debounce);
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

/** Take the last answer off the screen: its verdict, charts and notes were for lines no longer in the boxes. */
function clearAnswer() {
  state.answer = null;
  for (const node of $$(".js-plotly-plot", ui.charts)) purge(node);
  clear(ui.charts);
  delete ui.charts.dataset.stale;
  state.chartsDrawing += 1; // an update still drawing stops
  ui.verdict.textContent = "";
  for (const key of ["outcome", "value", "prediction"]) delete ui.verdict.dataset[key];
  showUnknown([]); // the unknown characters were those of the lines just taken away
  ui.notice.textContent = "";
  show(ui.figure, false);
  show(ui.snippet, false);
  show(ui.chartNav, false);
}

// ---- commit and reveal -------------------------------------------------------------------------

/** What the question's form holds as an answer, or null when something is still unpicked. */
function readAnswer(step) {
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

function onSubmit(event) {
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
function keep(picked) {
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
function revealHere(from) {
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
async function reveal({ scroll = false } = {}) {
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
  const ctx = { step, setup: setupOf(step) && { ...setupOf(step) }, options: OPTIONS };
  // An empty line is an input to fix: said at once, in the page's language, without asking the server.
  const setup = ctx.setup;
  const lines = Object.fromEntries([["line_a", setup?.a], ["line_b", setup?.b]].filter(([, text]) => text !== null));
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

/** The least height a chart keeps on the projector, however long the verdict above it. */
const PROJECTOR_MIN_PLOT = 200;
/** The chart's height that a long verdict gives room for, folding its last sentences (verdict-fold.js); a square
 * heatmap needs more, or its position ticks (0 32 64 96) run into each other in the projector's type. */
const PROJECTOR_PLOT = 280;
const PROJECTOR_SQUARE = 380;
const FIT_SLACK = 8; // px under the chart, so its frame is not cut by the screen's edge

/**
 * Bring the answer into view. On a class's projector (the teacher's screen in a class, both views) the question,
 * the verdict and its first chart fit one screen (issues 30 and 38; class.css puts the setup below the answer and
 * compacts the question): a verdict too tall to leave PROJECTOR_PLOT for the chart folds its last sentences, the
 * charts on screen take the height left under them, never more than their own, then the view moves to the
 * question. A question and verdict so long that the chart would shrink under PROJECTOR_MIN_PLOT move the view to
 * the verdict.
 */
function showAnswer() {
  const teacher = lesson.room?.role === "teacher";
  let from = teacher ? ui.form : ui.reveal;
  unfoldVerdict(ui.verdict, ui.verdictMore);
  if (teacher) {
    const plots = $$(".lesson-chart:not([hidden]) .lesson-plot", ui.charts);
    for (const plot of plots) plot.style.height = "";
    ui.verdictMore.hidden = false; // its line is kept in the measure: it shows if a sentence folds
    const top = (node) => node.getBoundingClientRect().top;
    const verdict = ui.verdict.getBoundingClientRect();
    // Under the verdict: what stands between it and the chart (its caption, a note), then the chart.
    const plot = plots[0]?.classList.contains("lesson-plot--square") ? PROJECTOR_SQUARE : PROJECTOR_PLOT;
    const under = plots.length ? top(plots[0]) - verdict.bottom + plot : 0;
    foldVerdict(ui.verdict, ui.verdictMore, window.innerHeight - FIT_SLACK - (verdict.top - top(ui.form)) - under);
    if (plots.length) {
      const below = (node) => Math.floor(window.innerHeight - FIT_SLACK - (top(plots[0]) - top(node)));
      if (below(from) < PROJECTOR_MIN_PLOT) from = ui.verdict;
      const room = Math.max(PROJECTOR_MIN_PLOT, below(from));
      for (const plot of plots.filter((p) => p.offsetHeight > room)) {
        plot.style.height = `${room}px`;
        if (plot.classList.contains("js-plotly-plot")) window.Plotly.Plots.resize(plot);
      }
    }
  }
  from.scrollIntoView({ block: "start" });
}

/**
 * The answer's verdict, worded in the page's language at the time of asking (a language switch asks again): the
 * kind's judge, or the self-test's and the summary's, which read the student's record instead of a model run.
 */
function judge(a) {
  if (a.step.kind === "summary") return judgeSummary();
  if (a.step.kind === "selftest") return judgeSelftest(a.step);
  const judged = a.kind.judge(a.data, a.ctx);
  const g = a.data.graded;
  return g ? { ...judged, graded: { outcome: g.outcome, accepted: g.accepted } } : judged;
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

/** What the answer is graded on: the step's own setup's verdict when the setup on screen is another. */
const gradedOn = (judged) => judged.graded ?? judged;

const LINE_FIELDS = { line_a: "line_a_label", line_b: "line_b_label" };

/** A field error in the page's language; a line's error names the line, and its length once it has one. */
function lineMessage(error, setup) {
  const text = (error.field === "line_b" ? setup?.b : setup?.a) ?? "";
  const msg = fieldMessage(error, { text, position: setup?.position, max: OPTIONS.max_chars[setup?.position] });
  if (!LINE_FIELDS[error.field]) return msg;
  const n = [...text].length;
  return tr(n ? "error_line_count" : "error_line", { line: tr(LINE_FIELDS[error.field]), n, msg });
}

function finishReveal() {
  setBusy(request.busy || state.debounce !== null);
  bumpRenderCount();
}

/** An error in the page's language (errors.js), never the server's English msg; the last answer goes. */
function showError(error) {
  if (!(error instanceof ApiError)) console.error(error);
  state.error = error;
  clearAnswer();
  wordError();
  show(ui.error, true);
  setBusy(false);
  bumpRenderCount();
}

/** The error on screen, worded in the page's language now, from its fields and the setup on screen. */
function wordError() {
  const error = state.error;
  const setup = setupOf(current());
  const fields = error instanceof ApiError ? error.fields.map((e) => lineMessage(e, setup)) : [];
  const general = fields.length && ![413, 429].includes(error.status) ? [] : [generalMessage(error)];
  ui.error.textContent = sentences([...fields, ...general]);
}

function hideError() {
  state.error = null;
  show(ui.error, false);
}

// ---- what a reveal draws: one interface, {update(answer), redraw()}, for every panel -----------

/** Right when the server accepts the choice: the outcome, or either order of two results within their noise. */
function isRight(choice, judged) {
  return (judged.accepted ?? [judged.outcome]).includes(choice);
}

function predictionText(step, judged) {
  const saved = recordOf(step);
  if (!saved || saved.choice === undefined) return "";
  const choice = choiceLabel(step, saved.choice);
  const graded = gradedOn(judged);
  const note = judged.graded ? tr("graded_question_setup") : "";
  if (graded.outcome === null || graded.outcome === undefined) return sentences([note, tr("you_pending", { choice })]);
  if (isRight(saved.choice, graded)) return sentences([note, tr("you_right", { choice })]);
  return sentences([note, tr("you_wrong", { choice, outcome: choiceLabel(step, graded.outcome) })]);
}

const verdictPanel = {
  update(a) {
    // Two marked sentences (the model's, then the student's), read by tests/e2e/test_referee.py.
    const parts = [["verdict", a.judged.text], ["prediction", predictionText(a.step, a.judged)]].filter(([, t]) => t);
    unfoldVerdict(ui.verdict, ui.verdictMore); // a verdict drawn again shows whole
    ui.verdict.replaceChildren(...parts.flatMap(([name, text], i) => [
      ...(i ? [document.createTextNode(tr("sentence_sep"))] : []),
      el("span", { text, dataset: { sentence: name } }),
    ]));
    ui.verdict.dataset.outcome = a.judged.outcome ?? "";
    if (a.judged.value !== undefined) ui.verdict.dataset.value = String(a.judged.value);
    const saved = recordOf(a.step);
    const graded = gradedOn(a.judged);
    ui.verdict.dataset.prediction = !saved || saved.choice === undefined || graded.outcome == null
      ? "none" : isRight(saved.choice, graded) ? "right" : "wrong";
    showUnknown(a.judged.unknown ?? []);
  },
};

/** The characters the model reads as its one unknown character, named under the verdict. */
function showUnknown(chars) {
  let node = $("[data-unknown]");
  if (!node) {
    node = el("p", { className: "note lesson-unknown", attrs: { "data-unknown": "" } });
    ui.verdict.after(node);
  }
  node.dataset.unknown = chars.join("");
  node.textContent = chars.length ? tr("unknown_warning", { chars: chars.map(visible).join(tr("list_sep")) }) : "";
  show(node, chars.length > 0);
}

function chartFigure(chart, i) {
  const describe = `chart-${i}-alt`;
  const body = chart.table ?? el("div", { className: `lesson-plot${chart.heatmap ? " lesson-plot--square" : ""}` });
  const node = el("figure", {
    className: "lesson-chart", dataset: { chart: String(i), name: chart.name }, attrs: { "aria-describedby": describe },
  }, [
    el("figcaption", { className: "lesson-chart__caption", text: chart.caption }),
    ...(chart.missing ? [] : [body]),
    el("p", { id: describe, className: chart.missing ? "note" : "visually-hidden", text: chart.alt }),
  ]);
  return { node, body };
}

/** What a chart's nodes are made of: a chart of the same shape as the one in its place is drawn there again. */
const chartShape = (chart) => `${chart.name}:${chart.missing ? "missing" : chart.table ? "table" : chart.heatmap ? "square" : "plot"}`;

/** The same chart with the new answer's words and table, in the nodes on screen; its plot is drawn after. */
function refreshChart(node, chart) {
  $(".lesson-chart__caption", node).textContent = chart.caption;
  $(`#${node.getAttribute("aria-describedby")}`, node).textContent = chart.alt;
  if (chart.table) $(".lesson-chart__caption", node).nextElementSibling.replaceWith(chart.table);
  return { node, body: chart.table ?? $(".lesson-plot", node) };
}

/** The charts show the setup in the boxes: no edit came after the one this answer was asked for. */
function chartsCurrent(a) {
  return !a.ctx?.setup || JSON.stringify(a.ctx.setup) === JSON.stringify(setupOf(a.step));
}

const chartsPanel = {
  async update(a) {
    const mine = ++state.chartsDrawing;
    const charts = a.step.kind === "summary" ? [summaryChart()] : a.step.kind === "selftest"
      ? [selftestChart(a.step)] : a.kind.charts(a.data, a.ctx);
    state.chartIndex = Math.min(state.chartIndex, Math.max(0, charts.length - 1));
    // A new setup of the same step: each chart of the same kind as the one in its place is drawn again there, so
    // a figure that did not change (line A's map when line B changed) is left as it is (draw.js).
    const old = $$(".lesson-chart", ui.charts);
    const built = charts.map((chart, i) => {
      const shape = `${a.step.id} ${chartShape(chart)}`;
      if (old[i]?.dataset.shape === shape) return { chart, ...refreshChart(old[i], chart) };
      const fresh = { chart, ...chartFigure(chart, i) };
      fresh.node.dataset.shape = shape;
      if (old[i]) {
        for (const node of $$(".js-plotly-plot", old[i])) purge(node);
        old[i].replaceWith(fresh.node);
      } else {
        ui.charts.append(fresh.node);
      }
      return fresh;
    });
    for (const node of old.slice(charts.length)) {
      for (const plot of $$(".js-plotly-plot", node)) purge(plot);
      node.remove();
    }
    applyChartVisibility();
    // The chart on screen first, so the first picture comes as soon as possible.
    const order = [...built].sort((x, y) => (x.node.hidden ? 1 : 0) - (y.node.hidden ? 1 : 0));
    for (const b of order) {
      if (mine !== state.chartsDrawing) return; // a newer answer is drawing
      if (b.chart.figure) {
        const figure = state.present ? forProjector(b.chart.figure) : b.chart.figure;
        await draw(b.body, figure, `lesson-${a.step.id}-${b.chart.name}`);
      }
    }
    // Greyed from an edit until every chart shows its answer (and still greyed if a newer edit came since).
    if (mine === state.chartsDrawing && chartsCurrent(a)) delete ui.charts.dataset.stale;
  },
};

const noticePanel = {
  update(a) {
    ui.notice.textContent = a.kind ? a.kind.notice(a.data, a.ctx) : "";
    show(ui.notice, Boolean(ui.notice.textContent));
  },
};

const figurePanel = {
  update(a) {
    const text = a.kind?.lesson ? a.kind.lesson(a.data, a.ctx) : "";
    ui.figureText.textContent = text;
    show(ui.figure, Boolean(text));
  },
};

const snippetPanel = {
  update(a) {
    const code = a.kind?.snippet ? a.kind.snippet(a.ctx, a.data) : "";
    ui.snippetCode.textContent = code;
    show($("#snippet-note"), Boolean(a.kind?.batched));
    ui.copyStatus.textContent = "";
    show(ui.snippet, Boolean(code));
  },
};

const PANELS = [verdictPanel, chartsPanel, noticePanel, figurePanel, snippetPanel].map((panel) => ({
  update: panel.update,
  /** The language or the layout changed: draw the last answer again. */
  redraw: () => (state.answer ? panel.update(state.answer) : undefined),
}));

async function updatePanels() {
  for (const panel of PANELS) await panel.update(state.answer);
}

// ---- self-test and summary ---------------------------------------------------------------------

function judgeSelftest(step) {
  const answers = answerOf(step.id)?.answers ?? {};
  const n = step.questions.filter((q) => answers[q.id] === q.answer).length;
  return { outcome: `${n}/${step.questions.length}`, text: tr("selftest_verdict", { n, total: step.questions.length }), value: n };
}

function selftestChart(step) {
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

function judgeSummary() {
  const saved = allAnswers();
  // A step whose setup gave no result (two identical lines, say) is neither right nor a miss.
  const asked = STEPS.filter((s) => s.choices && saved[s.id]?.choice !== undefined && saved[s.id].outcome != null);
  const right = asked.filter((s) => isRight(saved[s.id].choice, saved[s.id])).length;
  return { outcome: null, text: tr("summary_verdict", { right, answered: asked.length }), value: right };
}

function summaryChart() {
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

// ---- presenter: one chart at a time ------------------------------------------------------------

function applyChartVisibility() {
  const charts = $$(".lesson-chart", ui.charts);
  charts.forEach((node, i) => { node.hidden = state.present && i !== state.chartIndex; });
  const many = state.present && charts.length > 1;
  show(ui.chartNav, many);
  if (many) ui.chartCount.textContent = tr("chart_count", { i: state.chartIndex + 1, n: charts.length });
}

function moveChart(delta) {
  const n = $$(".lesson-chart", ui.charts).length;
  if (!state.present || n < 2) return;
  state.chartIndex = (state.chartIndex + delta + n) % n;
  applyChartVisibility();
  const plot = $(`.lesson-chart[data-chart="${state.chartIndex}"] .js-plotly-plot`, ui.charts);
  if (plot) window.Plotly.Plots.resize(plot);
}

/** Chart type for the back of a room: every font size in the figure half as large again. */
const PROJECTOR_SCALE = 1.5;
const PROJECTOR_STANDOFF = 8; // px more between an axis title and its tick labels: the larger type's line boxes

function forProjector(figure) {
  const scale = (value, key) => {
    if (Array.isArray(value)) return value.map((v) => scale(v, ""));
    if (!value || typeof value !== "object") return value;
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = /font$/i.test(key) && k === "size" && typeof v === "number" ? Math.round(v * PROJECTOR_SCALE) : scale(v, k);
    }
    return out;
  };
  // Fonts Plotly would take from its defaults are set here, so they grow too.
  const layout = scale({ ...figure.layout, font: { size: 14, ...(figure.layout?.font ?? {}) } }, "");
  // The margins where axis titles sit, and each title's distance from its tick labels, grow with the type, or a
  // title set in the larger type lies over the ticks (by 6 to 14 px at 1280x720).
  const margin = layout.margin ?? {};
  for (const side of ["l", "t", "b"]) if (typeof margin[side] === "number") margin[side] = Math.round(margin[side] * PROJECTOR_SCALE);
  for (const [key, axis] of Object.entries(layout)) {
    if (!/^[xy]axis\d*$/.test(key) || typeof axis?.title !== "object") continue;
    axis.title = { ...axis.title, standoff: Math.round((axis.title.standoff ?? 4) * PROJECTOR_SCALE) + PROJECTOR_STANDOFF };
  }
  return { data: scale(figure.data, ""), layout };
}

function setPresent(on) {
  state.present = on;
  document.documentElement.classList.toggle("is-presenting", on);
  writeUrl("replace");
  renderNav();
  applyChartVisibility();
  // The presenter drives the step by keys: the focus leaves the checkbox for the step, so the first arrow
  // or Enter acts at once.
  if (on) ui.article.focus({ preventScroll: true });
  // The type and the charts' fonts change with the view: draw the charts again.
  (async () => {
    for (const panel of PANELS) await panel.redraw();
    applyChartVisibility();
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

function readSetup() {
  const step = current();
  const setup = setupOf(step);
  if (!setup) return;
  if (setup.a !== null) setup.a = ui.lineA.value;
  if (setup.b !== null) setup.b = ui.lineB.value;
  setup.position = ui.positions.find((r) => r.checked)?.value ?? setup.position;
  setup.weights = ui.weights.value;
  setup.n_layer = Number(ui.nLayer.value);
  setup.n_head = Number(ui.heads.value);
  setup.causal = ui.causal.checked;
  // A distance the server refuses (empty, 0, past 64) is sent as typed: its 422 says the rule in the page's words.
  if (setup.distance !== undefined && setup.distance !== null) setup.distance = Number(ui.distance.value);
  if (setup.weights === "trained" && !OPTIONS.trained[setup.position]) setup.weights = "random";
  if (setup.weights === "trained") Object.assign(setup, { n_layer: null, n_head: null });
  return setup;
}

function onSetupChange(event) {
  if (event.isComposing) return;
  readSetup();
  ui.explorer.href = explorerLink(current());
  if (event.type !== "input") renderSetup(current());
  else updateHints(setupOf(current()));
  if (!isCommitted(current())) return; // before the commit nothing is shown, so nothing to fetch
  // Until the answer for the new setup arrives, the charts on screen are for the old one: greyed.
  ui.charts.dataset.stale = "";
  const idle = state.debounce === null && !request.busy;
  clearTimeout(state.debounce);
  setBusy(true);
  state.debounce = setTimeout(() => {
    state.debounce = null;
    reveal().catch(showError);
  }, event.type === "input" && !idle ? BURST_MS : 0);
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

const lessonDicts = new Map([[document.documentElement.lang, firstLessonTexts]]);

async function loadLessonDict(lang) {
  if (!lessonDicts.has(lang)) {
    const response = await fetch(new URL(`../../i18n/lesson/${lang}.json`, import.meta.url));
    if (!response.ok) throw new Error(`lesson texts for ${lang}: HTTP ${response.status}`);
    lessonDicts.set(lang, await response.json());
  }
  return lessonDicts.get(lang);
}

async function switchLanguage(lang) {
  const [main, lessonTexts] = await Promise.all([loadDict(lang), loadLessonDict(lang)]);
  if (state.lang !== lang) return;
  setDict({ ...main, ...lessonTexts });
  applyDict(lang);
  renderNav();
  renderQuestion(current());
  if (setupOf(current())) updateHints(setupOf(current()));
  if (state.error) wordError();
  // Every verdict is worded by its judge, the self-test's and the summary's too: ask it again, in the new language.
  if (state.answer) state.answer.judged = judge(state.answer);
  for (const panel of PANELS) await panel.redraw();
  applyChartVisibility();
  redrawClass();
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
    const link = event.target.closest("a[data-open]");
    if (!link) return;
    event.preventDefault();
    lesson.goTo(Number(link.dataset.open));
  });
  ui.present.addEventListener("change", () => setPresent(ui.present.checked));
  ui.verdictMore.addEventListener("click", () => unfoldVerdict(ui.verdict, ui.verdictMore));
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
