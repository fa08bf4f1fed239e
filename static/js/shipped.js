// Panels of results that are fixed for the life of the server: loss by position (/api/length),
// the similarity between positions (/api/positions) and the training curves (/api/training).
// Each is fetched once, when its panel first comes into view, and redrawn on a language switch.

import { getShipped } from "./api.js";
import { $, clear, el, show } from "./dom.js";
import { draw, purge } from "./draw.js";
import { tr } from "./i18n.js";
import { whenVisible } from "./lazy.js";
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

function failed(panel, error) {
  console.error(error);
  panel.dataset.state = "error";
  const node = $(".js-load-error", panel);
  node.textContent = tr("shipped_error");
  show(node, true);
}

async function renderLength(data) {
  const panel = $("#panel-length");
  const runs = [...(data.runs ?? [])].sort(byMode);
  show($("#length-empty"), runs.length === 0);
  show($("#length-body"), runs.length > 0);
  if (!runs.length) {
    purge($("#length-plot"));
  } else {
    await draw($("#length-plot"), lengthFigure({ runs }), "loss-by-position");
  }
  finish(panel);
}

async function renderPositions(data) {
  const panel = $("#panel-positions");
  const hasLearned = Array.isArray(data.learned);
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
    el("td", { text: String(run.steps[run.steps.length - 1] ?? "–") }),
    el("td", { text: loss === null ? "–" : loss.toFixed(3) }),
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

const PANELS = [
  ["#panel-length", "length", renderLength],
  ["#panel-positions", "positions", renderPositions],
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
