// Panels of results that are fixed for the life of the server: loss by position (/api/length),
// the similarity between positions (/api/positions), the head gallery (/api/heads) and the training curves
// (/api/training, with each snapshot's loss from /api/snapshots). Each is fetched when its panel first comes
// into view, and redrawn on a language switch. The gallery and the similarity panel follow the training-step
// slider (step-control.js): a new step asks for that step's answer, and the newest step's answer is the one drawn.

import { ApiError, getShipped, postVerdict } from "../shared/api.js";
import { MODES } from "../shared/constants.js";
import { $, clear, el, show } from "../shared/dom.js";
import { draw, purge } from "../shared/draw.js";
import { fieldMessage } from "../shared/errors.js";
import { fillRich, grouped, num, sentences, tr } from "../shared/i18n.js";
import { latest } from "../shared/latest.js";
import { whenVisible } from "../shared/lazy.js";
import { renderGallery } from "./gallery.js";
import { similarityFigure } from "./plots-positions.js";
import { headsLabel, lengthFigure, modeLabel, trainingFigure } from "./plots-results.js";
import { askedStep, getAtStep, getTimeline, loadTimeline, onStepChange, repaint } from "./step-control.js";
import { explorerState } from "./state.js";
import { galleryFindings, positionFindings } from "./step-findings.js";


function byMode(a, b) {
  return MODES.indexOf(a.position) - MODES.indexOf(b.position);
}

/** The runs each exercise compares, in its order, as the server groups them (GET /api/training's exercises). */
export function exerciseRuns(data) {
  const runs = data.runs ?? [];
  const pick = (indices) => (indices ?? []).map((i) => runs[i]);
  return { heads: pick(data.exercises?.heads), modes: pick(data.exercises?.modes) };
}

function finalLoss(run) {
  const v = run.final_val_loss ?? run.val_loss[run.val_loss.length - 1];
  return typeof v === "number" ? v : null;
}

function finish(panel) {
  panel.dataset.state = "ready";
  panel.dataset.renderCount = String(Number(panel.dataset.renderCount || 0) + 1);
}

/** A panel's fixed results could not be fetched: its .js-load-error note says so; null hides the note. */
export function showLoadError(panel, error) {
  const node = $(".js-load-error", panel);
  if (error) {
    // A refused step (422 naming it) is worded as the explorer words a refusal; anything else is a failed load.
    const refused = error instanceof ApiError && error.status === 422 ? error.fields[0] : null;
    if (!refused) console.error(error);
    node.textContent = refused ? fieldMessage(refused) : tr("shipped_error");
  }
  show(node, Boolean(error));
}

/** A panel whose load failed: its state for the tests, and the words in its language. */
export function failed(panel, error) {
  panel.dataset.state = "error";
  showLoadError(panel, error);
}

/**
 * What the shipped length results show, as the server judges them (app/services/verdicts.py, the lesson's
 * step "length"): where RoPE's loss starts to climb past the training length, and from where it is worse
 * than the model without positions. null when it does not climb, or nothing is shipped.
 */
export function lengthVerdict(verdict) {
  const f = verdict.figures;
  if (verdict.outcome !== "rises") return null;
  const ratio = num((f.rise / f.train_length).toFixed(1));
  return f.worse === undefined
    ? tr("length_verdict_no_cross", { ratio, rise: f.rise })
    : tr("length_verdict", { ratio, rise: f.rise, worse: Math.round(f.worse / 10) * 10 });
}

async function renderLength(data) {
  const panel = $("#panel-length");
  const runs = [...(data.runs ?? [])].sort(byMode);
  show($("#length-empty"), runs.length === 0);
  show($("#length-body"), runs.length > 0);
  const verdict = runs.length ? lengthVerdict(data.verdict) : null;
  fillRich($("#length-verdict"), verdict ?? "");
  show($("#length-verdict"), Boolean(verdict));
  if (!runs.length) {
    purge($("#length-plot"));
  } else {
    await draw($("#length-plot"), lengthFigure({ runs }), "loss-by-position");
  }
  finish(panel);
}

/** Line lengths of these poems, with their marks, that a period of the pos_emb table can match. */
const RHYTHMS = [6, 8, 12, 16];

/** What a distance between alike rows is in these poems: a line or a couplet with its marks, or nothing. */
export function rhythmMeaning(period) {
  return tr(RHYTHMS.includes(period) ? `sim_rhythm_${period}` : "sim_rhythm_other");
}

/** What the trained table's period is, in words, from /api/positions' rhythm (its period and runner-up lag). */
function rhythmText(rhythm) {
  const text = tr("sim_rhythm", {
    period: rhythm.period, sim: rhythm.at_period.toFixed(2), next_lag: rhythm.next_lag, next: rhythm.at_next_lag.toFixed(2),
  });
  // What the distance means is said only once the server finds the rhythm clear (shows): at an early step the
  // most alike distance can be noise.
  const why = rhythm.shows === false ? "" : rhythmMeaning(rhythm.period);
  return sentences([text, why]);
}

/** The sentences shown with the slider, at the step of the answer on screen; hidden without a timeline. */
function fillFindings(node, paragraphs) {
  clear(node);
  for (const { position, text } of paragraphs) {
    const p = el("p", { className: "note note--verdict step-findings__item", dataset: position ? { position } : {} });
    fillRich(p, text);
    node.append(p);
  }
  show(node, paragraphs.length > 0);
}

/** The timeline's sentences only when it knows the step on screen and more than one step ships. */
function timelineAt(step) {
  const timeline = getTimeline();
  return timeline && timeline.steps.length > 1 && timeline.steps.includes(step) ? timeline : null;
}

async function renderPositions(data) {
  const panel = $("#panel-positions");
  const hasLearned = Array.isArray(data.learned);
  const rhythm = data.learned_rhythm;
  if (rhythm) fillRich($("#sim-rhythm"), rhythmText(rhythm));
  show($("#sim-rhythm"), Boolean(rhythm));
  show($("#sim-learned-empty"), !hasLearned);
  show($("#sim-learned"), hasLearned);
  const timeline = timelineAt(data.step);
  fillFindings($("#sim-findings"), timeline ? [{ text: positionFindings(timeline, data.step) }] : []);
  const jobs = [draw($("#sim-rope"), similarityFigure({ matrix: data.rope }), "similarity-rope")];
  if (hasLearned) jobs.push(draw($("#sim-learned"), similarityFigure({ matrix: data.learned }), "similarity-pos-emb"));
  else purge($("#sim-learned"));
  await Promise.all(jobs);
  finish(panel);
}

/** exercises: the exercises ("2", "3") the server counts the run in. */
function trainingRow(run, exercises) {
  const loss = finalLoss(run);
  const label = `${modeLabel(run.position)} · ${headsLabel(run.n_head)}`;
  return el("tr", {}, [
    el("th", { scope: "row", text: label }),
    el("td", { text: exercises.join(", ") || "–" }),
    el("td", { text: run.steps.length ? grouped(run.steps[run.steps.length - 1]) : "–" }),
    el("td", { text: loss === null ? "–" : num(loss.toFixed(3)) }),
  ]);
}

async function renderTraining(data) {
  const panel = $("#panel-training");
  const runs = data.runs ?? [];
  // Each snapshot's loss on the whole validation split, drawn as dots on exercise 3's curves.
  const snapshots = (data.snapshots?.models ?? []).map((m) => ({ position: m.position, steps: data.snapshots.steps,
    val_loss: m.val_loss }));
  show($("#training-snapshots-note"), snapshots.length > 0);
  show($("#training-empty"), runs.length === 0);
  show($("#training-body"), runs.length > 0);
  if (!runs.length) {
    purge($("#training-heads"));
    purge($("#training-modes"));
    finish(panel);
    return;
  }
  const { heads, modes } = exerciseRuns(data);
  const learned = modes.find((r) => r.position === "learned");
  const none = modes.find((r) => r.position === "none");
  const verdict = learned && none && finalLoss(learned) !== null && finalLoss(none) !== null
    ? tr("train_verdict", { learned: finalLoss(learned).toFixed(2), none: finalLoss(none).toFixed(2) })
    : "";
  fillRich($("#training-verdict"), verdict);
  show($("#training-verdict"), Boolean(verdict));
  const tbody = clear($("#training-table tbody"));
  const seen = new Set();
  for (const run of [...heads, ...modes]) {
    if (seen.has(run)) continue;
    seen.add(run);
    tbody.append(trainingRow(run, [heads.includes(run) ? "2" : null, modes.includes(run) ? "3" : null].filter(Boolean)));
  }
  await Promise.all([
    draw($("#training-heads"), trainingFigure({ runs: heads, key: "heads" }), "training-heads"),
    draw($("#training-modes"), trainingFigure({ runs: modes, key: "modes", snapshots }), "training-modes"),
  ]);
  finish(panel);
}

async function renderHeads(data) {
  const panel = $("#panel-gallery");
  const models = data.models ?? [];
  show($("#gallery-empty"), models.length === 0);
  const timeline = timelineAt(data.step);
  fillFindings($("#gallery-findings"), timeline ? galleryFindings(timeline, data.step) : []);
  await renderGallery(data, $('input[name="position"]:checked')?.value);
  finish(panel);
}

/** The length panel's sentence is the server's verdict on the same results (the lesson's "length" step). */
const withLengthVerdict = () => Promise.all([getShipped("length"), postVerdict("length", null)])
  .then(([data, verdict]) => ({ ...data, verdict }));

/** The training curves, and the snapshots' losses when the server has them (a page without them still draws). */
const withSnapshots = () => Promise.all([getShipped("training"), getShipped("snapshots").catch(() => null)])
  .then(([data, snapshots]) => ({ ...data, snapshots }));

const PANELS = [
  ["#panel-length", withLengthVerdict, renderLength],
  ["#panel-training", withSnapshots, renderTraining],
];

/** Panels that follow the training-step slider: GET /api/{name}?step=N. */
const STEPPED = [
  ["#panel-positions", "positions", renderPositions],
  ["#panel-gallery", "heads", renderHeads],
];

/**
 * One stepped panel. Its charts are marked data-stale from a step change until that step's answer is drawn;
 * answers are kept by step, so going back is immediate. Draws run one after another and a draw whose step is
 * no longer the newest is skipped, so the last chart drawn is always the newest step's.
 */
function steppedPanel(selector, name, render) {
  const panel = $(selector);
  const request = latest();
  const answers = new Map(); // step (null: the last) -> answer
  let data = null; // the answer on screen
  let error = null; // why nothing new is on screen
  let started = false;
  let generation = 0;
  let chain = Promise.resolve();

  const queue = (job) => {
    chain = chain.then(job).catch((e) => failed(panel, e));
    return chain;
  };

  async function load() {
    const step = askedStep();
    const mine = ++generation;
    panel.dataset.stale = "";
    panel.dataset.state = "loading";
    let out;
    try {
      out = answers.has(step) ? { stale: false, value: answers.get(step) }
        : await request.run((signal) => getAtStep(name, step, signal), step);
    } catch (e) {
      if (mine !== generation) return;
      error = e; // the charts stay greyed: they show another step than the slider's
      failed(panel, e);
      return;
    }
    if (out.stale || mine !== generation) return;
    answers.set(step, out.value);
    await queue(async () => {
      if (mine !== generation) return;
      data = out.value;
      error = null;
      showLoadError(panel, null);
      await render(data);
      if (mine !== generation) return;
      panel.dataset.step = String(data.step);
      delete panel.dataset.stale;
    });
  }

  whenVisible(panel, () => {
    started = true;
    panel.dataset.state = "loading";
    loadTimeline().then(load).catch((e) => failed(panel, e));
  });
  onStepChange(() => {
    if (started) load();
  });
  return {
    redraw() {
      if (error) failed(panel, error);
      return data ? queue(() => render(data)) : Promise.resolve();
    },
  };
}

export function createShippedPanels() {
  const loaded = new Map(); // panel selector -> data
  for (const [selector, load, render] of PANELS) {
    const panel = $(selector);
    whenVisible(panel, () => {
      panel.dataset.state = "loading";
      load()
        .then((data) => {
          loaded.set(selector, data);
          return render(data);
        })
        .catch((error) => failed(panel, error));
    });
  }
  // A shared link with step= shows that step in the ablation panel too: the timeline says whether it ships.
  if (explorerState.get().step !== null) loadTimeline();
  const stepped = STEPPED.map(([selector, name, render]) => steppedPanel(selector, name, render));
  return {
    /** The language changed: redraw whatever has arrived, and word the sliders again. */
    redraw() {
      repaint();
      return Promise.all([
        ...PANELS.filter(([selector]) => loaded.has(selector))
          .map(([selector, , render]) => render(loaded.get(selector)).catch((error) => failed($(selector), error))),
        ...stepped.map((panel) => panel.redraw()),
      ]);
    },
  };
}
