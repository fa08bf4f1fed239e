// Panels of results that are fixed for the life of the server: loss by position (/api/length),
// the similarity between positions (/api/positions) and the training curves (/api/training).
// Each is fetched once, when its panel first comes into view, and redrawn on a language switch.

import { getShipped } from "./api.js";
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

/** Losses averaged over a window of positions, so one hard poem line does not decide a crossing. */
const SMOOTH = 16;
/** A rise of this many nats over the in-training mean is "climbing", not noise. */
const RISE_NATS = 0.25;

function smoothed(loss, p) {
  const window = loss.slice(Math.max(0, p - SMOOTH / 2), p + SMOOTH / 2);
  return window.reduce((x, y) => x + y, 0) / window.length;
}

/**
 * What the shipped length results show, read from them: where RoPE's loss starts to climb past the
 * training length, and from where it is worse than the model without positions. null if not shipped.
 */
export function lengthVerdict(runs) {
  const rope = runs.find((r) => r.position === "rope");
  const none = runs.find((r) => r.position === "none");
  if (!rope || !none) return null;
  const T = rope.train_length;
  const inside = rope.loss.slice(T / 2, T);
  const mean = inside.reduce((x, y) => x + y, 0) / inside.length;
  const last = Math.min(rope.loss.length, none.loss.length) - SMOOTH / 2;
  let rise = null;
  let worse = null;
  for (let p = T; p <= last; p += 1) {
    if (rise === null && smoothed(rope.loss, p) > mean + RISE_NATS) rise = p;
    if (worse === null && smoothed(rope.loss, p) > smoothed(none.loss, p)) worse = p;
  }
  if (rise === null) return null;
  const ratio = (rise / T).toFixed(1);
  return worse === null
    ? tr("length_verdict_no_cross", { ratio, rise })
    : tr("length_verdict", { ratio, rise, worse: Math.round(worse / 10) * 10 });
}

async function renderLength(data) {
  const panel = $("#panel-length");
  const runs = [...(data.runs ?? [])].sort(byMode);
  show($("#length-empty"), runs.length === 0);
  show($("#length-body"), runs.length > 0);
  const verdict = runs.length ? lengthVerdict(runs) : null;
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
  const why = RHYTHMS.includes(period) ? tr(`sim_rhythm_${period}`) : tr("sim_rhythm_other");
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

const PANELS = [
  ["#panel-length", "length", renderLength],
  ["#panel-positions", "positions", renderPositions],
  ["#panel-gallery", "heads", renderHeads],
  ["#panel-training", "training", renderTraining],
];

export function createShippedPanels() {
  const loaded = new Map(); // panel selector -> data
  for (const [selector, name, render] of PANELS) {
    const panel = $(selector);
    whenVisible(panel, () => {
      panel.dataset.state = "loading";
      getShipped(name)
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
