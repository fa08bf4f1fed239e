// Panels of results that are fixed for the life of the server: loss by position (/api/length),
// the similarity between positions (/api/positions) and the training curves (/api/training).
// Each is fetched once, when its panel first comes into view, and redrawn on a language switch.

import { getShipped, postVerdict } from "./api.js";
import { $, clear, el, show } from "./dom.js";
import { draw, purge } from "./draw.js";
import { fillRich, grouped, num, sentences, tr } from "./i18n.js";
import { whenVisible } from "./lazy.js";
import { renderGallery } from "./gallery.js";
import { similarityFigure } from "./plots-positions.js";
import { headsLabel, lengthFigure, modeLabel, trainingFigure } from "./plots-results.js";

const MODE_ORDER = ["learned", "rope", "none"];

function byMode(a, b) {
  return MODE_ORDER.indexOf(a.position) - MODE_ORDER.indexOf(b.position);
}

/** A run's exercises as strings, or null when the file does not say. */
function exercisesOf(run) {
  const e = run.exercise;
  if (e === undefined || e === null) return null;
  return (Array.isArray(e) ? e : [e]).map(String);
}

/** Exercise 2 compares head counts with pos_emb; exercise 3 compares the modes with 4 heads. */
export function splitExercises(runs) {
  const has = (run, n, guess) => exercisesOf(run)?.includes(n) ?? guess(run);
  return {
    heads: runs.filter((r) => has(r, "2", (x) => x.position === "learned")).sort((a, b) => a.n_head - b.n_head),
    modes: runs.filter((r) => has(r, "3", (x) => x.n_head === 4)).sort(byMode),
  };
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
    console.error(error);
    node.textContent = tr("shipped_error");
  }
  show(node, Boolean(error));
}

function failed(panel, error) {
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

/** What the trained table's period is, in words, from /api/positions' similarity by lag. */
function rhythmText(rhythm) {
  const { by_lag: byLag, period } = rhythm;
  let next = null;
  for (let lag = 3; lag < byLag.length; lag += 1) {
    if (lag !== period && (next === null || byLag[lag] > byLag[next])) next = lag;
  }
  const text = tr("sim_rhythm", {
    period, sim: byLag[period].toFixed(2), next_lag: next, next: byLag[next].toFixed(2),
  });
  const why = rhythmMeaning(period);
  return sentences([text, why]);
}

async function renderPositions(data) {
  const panel = $("#panel-positions");
  const hasLearned = Array.isArray(data.learned);
  const rhythm = data.learned_rhythm;
  if (rhythm) fillRich($("#sim-rhythm"), rhythmText(rhythm));
  show($("#sim-rhythm"), Boolean(rhythm));
  show($("#sim-learned-empty"), !hasLearned);
  show($("#sim-learned"), hasLearned);
  const jobs = [draw($("#sim-rope"), similarityFigure({ matrix: data.rope }), "similarity-rope")];
  if (hasLearned) jobs.push(draw($("#sim-learned"), similarityFigure({ matrix: data.learned }), "similarity-pos-emb"));
  else purge($("#sim-learned"));
  await Promise.all(jobs);
  finish(panel);
}

function trainingRow(run) {
  const loss = finalLoss(run);
  const label = `${modeLabel(run.position)} · ${headsLabel(run.n_head)}`;
  const exercises = exercisesOf(run) ?? [];
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
  show($("#training-empty"), runs.length === 0);
  show($("#training-body"), runs.length > 0);
  if (!runs.length) {
    purge($("#training-heads"));
    purge($("#training-modes"));
    finish(panel);
    return;
  }
  const { heads, modes } = splitExercises(runs);
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
    tbody.append(trainingRow(run));
  }
  await Promise.all([
    draw($("#training-heads"), trainingFigure({ runs: heads, key: "heads" }), "training-heads"),
    draw($("#training-modes"), trainingFigure({ runs: modes, key: "modes" }), "training-modes"),
  ]);
  finish(panel);
}

async function renderHeads(data) {
  const panel = $("#panel-gallery");
  const models = data.models ?? [];
  show($("#gallery-empty"), models.length === 0);
  await renderGallery(data, $('input[name="position"]:checked')?.value);
  finish(panel);
}

/** The length panel's sentence is the server's verdict on the same results (the lesson's "length" step). */
const withLengthVerdict = () => Promise.all([getShipped("length"), postVerdict("length", null)])
  .then(([data, verdict]) => ({ ...data, verdict }));

const PANELS = [
  ["#panel-length", withLengthVerdict, renderLength],
  ["#panel-positions", () => getShipped("positions"), renderPositions],
  ["#panel-gallery", () => getShipped("heads"), renderHeads],
  ["#panel-training", () => getShipped("training"), renderTraining],
];

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
  return {
    /** The language changed: redraw whatever has arrived. */
    redraw() {
      return Promise.all(PANELS.filter(([selector]) => loaded.has(selector))
        .map(([selector, , render]) => render(loaded.get(selector)).catch((error) => failed($(selector), error))));
    },
  };
}
