// The page's controller: state <-> URL <-> controls, requests to /api/compare, and redraws.

import { ApiError, FIELD_CONTROLS, getOptions, postCompare } from "./api.js";
import { $, $$, show } from "./dom.js";
import { downloadText } from "./draw.js";
import { LANGS, applyDict, loadDict, setDict, tr } from "./i18n.js";
import {
  renderDepth, renderHeads, renderHeatmaps, renderNext, renderResidual, renderRope, renderRopePairs, renderSummary,
} from "./panels.js";
import { createRelativePanel } from "./relative.js";
import { createShippedPanels } from "./shipped.js";
import { readState, sameState, toSearch } from "./state.js";

const DEBOUNCE_MS = 300;
/** Past this many characters the answer carries one layer's attention only, and a layer change refetches. */
const LONG_LINE = 128;

const ui = {
  lineA: $("#line-a"),
  lineB: $("#line-b"),
  positions: $$('input[name="position"]'),
  heads: $("#heads"),
  weights: $("#weights"),
  trainedOption: $('#weights option[value="trained"]'),
  layer: $("#layer"),
  causal: $("#causal"),
  ropePair: $("#rope-pair"),
  download: $("#download-json"),
  lang: $("#lang"),
  results: $("#results"),
  status: $("#status"),
  weightsNote: $("#weights-note"),
  generalError: $("#general-error"),
};

let state = readState(location.search, LANGS, document.documentElement.lang);
let options = null;
let response = null; // the last successful response
let responseKey = null; // the request body that produced it
let inFlight = null; // {key, controller}
let debounceTimer = null;
let typing = false; // true between the first keystroke of an edit and the input's change event
let renderChain = Promise.resolve();
let renderGeneration = 0;
let wantAll = false; // a render of every panel is owed
let rendering = false;
let relative = null; // the relative-distance panel, created at start
let shipped = null; // the panels of shipped results, created at start

// ---- state <-> URL ----------------------------------------------------------------------------

function writeUrl(mode) {
  const url = `${location.pathname}${toSearch(state)}`;
  if (mode === "push" && !sameState(state, readState(location.search, LANGS, state.lang))) {
    history.pushState(null, "", url);
  } else {
    history.replaceState(null, "", url);
  }
}

// ---- options and weights ----------------------------------------------------------------------

function trainedShape(position) {
  return options?.trained?.[position] ?? null;
}

/**
 * Trained weights where they exist for the mode, unless the user chose random. state.weights is
 * null until the user picks: the default then follows the mode (trained where shipped).
 */
function effectiveWeights() {
  return state.weights !== "random" && trainedShape(state.pos) ? "trained" : "random";
}

function trainedEverywhere() {
  return ["learned", "rope", "none"].every((p) => trainedShape(p));
}

function isLong() {
  return [...state.a].length > LONG_LINE || [...state.b].length > LONG_LINE;
}

/** The depth of the model the next request will get, when the page already knows it. */
function knownDepth() {
  if (effectiveWeights() === "trained") return trainedShape(state.pos).n_layer;
  return response?.model.weights === "random" ? response.model.n_layer : null;
}

function maxChars() {
  return options?.max_chars?.[state.pos] ?? null;
}

function updateWeightsUi() {
  const shape = trainedShape(state.pos);
  const anyTrained = Boolean(options && Object.keys(options.trained ?? {}).length);
  ui.trainedOption.disabled = !shape;
  const weights = effectiveWeights();
  ui.weights.value = weights;
  ui.heads.disabled = weights === "trained";
  ui.heads.value = String(weights === "trained" ? shape.n_head : state.heads);
  let note = "";
  if (weights === "trained") {
    note = tr("trained_shape", shape);
    if (shape.val_loss !== null && shape.val_loss !== undefined) {
      note += ` ${tr("trained_val_loss", { val_loss: Number(shape.val_loss).toFixed(3) })}`;
    }
  } else if (options && !anyTrained) {
    note = tr("trained_none");
  } else if (options && state.weights !== "random") {
    note = tr("trained_missing_mode");
  }
  ui.weightsNote.textContent = note;
  show(ui.weightsNote, Boolean(note));
}

function updateHints() {
  const max = maxChars();
  for (const [input, id] of [[ui.lineA, "line-a"], [ui.lineB, "line-b"]]) {
    const n = [...input.value].length;
    const hint = $(`#${id}-hint`);
    hint.textContent = max ? tr("line_hint", { n, max }) : "";
    hint.classList.toggle("is-over", Boolean(max) && n > max);
  }
}

// ---- controls ---------------------------------------------------------------------------------

function setLayerOptions(nLayer) {
  const current = [...ui.layer.options].map((o) => o.value).join(",");
  const wanted = Array.from({ length: nLayer }, (_, i) => String(i + 1));
  if (current !== wanted.join(",")) {
    ui.layer.replaceChildren(...wanted.map((v) => new Option(v, v)));
  }
  ui.layer.value = String(state.layer);
}

function applyControls() {
  if (ui.lineA.value !== state.a) ui.lineA.value = state.a;
  if (ui.lineB.value !== state.b) ui.lineB.value = state.b;
  for (const radio of ui.positions) radio.checked = radio.value === state.pos;
  ui.lang.value = state.lang;
  ui.causal.checked = state.causal;
  if ([...ui.layer.options].some((o) => o.value === String(state.layer))) ui.layer.value = String(state.layer);
  updateWeightsUi();
  updateHints();
}

// ---- errors and status ------------------------------------------------------------------------

function setStatus(kind) {
  ui.status.dataset.state = kind;
  ui.status.textContent = kind === "idle" ? "" : tr(`status_${kind}`);
  updateBusy();
}

/** #results is busy while a request is out or a render is drawing; tests wait on it too. */
function updateBusy() {
  const busy = ui.status.dataset.state === "loading" || rendering || debounceTimer !== null;
  ui.results.setAttribute("aria-busy", String(busy));
}

function clearErrors() {
  for (const id of Object.values(FIELD_CONTROLS)) {
    const node = $(`#${id}-error`);
    node.textContent = "";
    show(node, false);
  }
  for (const node of $$("[aria-invalid]")) node.removeAttribute("aria-invalid");
  ui.generalError.textContent = "";
  show(ui.generalError, false);
  ui.results.classList.remove("is-stale");
}

/** A message a student can act on, in the page's language when we recognise the error. */
function fieldMessage(error) {
  const isLine = error.field === "line_a" || error.field === "line_b";
  if (isLine && error.type === "string_too_short") return tr("error_empty");
  if (isLine) {
    const text = error.field === "line_a" ? state.a : state.b;
    const max = maxChars() ?? error.ctx?.max_length;
    if (text.length === 0) return tr("error_empty");
    if (max && [...text].length > max) {
      return state.pos === "learned" ? tr("error_too_long_learned", { max }) : tr("error_too_long", { max });
    }
  }
  return error.msg;
}

function showError(error) {
  clearErrors();
  ui.results.classList.add("is-stale");
  setStatus("error");
  if (!(error instanceof ApiError)) {
    ui.generalError.textContent = tr("error_network");
    show(ui.generalError, true);
    return;
  }
  for (const item of error.fields) {
    const id = FIELD_CONTROLS[item.field];
    const node = $(`#${id}-error`);
    node.textContent = node.textContent ? `${node.textContent} ${fieldMessage(item)}` : fieldMessage(item);
    show(node, true);
    const control = id === "position" ? $(".switch") : $(`#${id}`);
    control?.setAttribute("aria-invalid", "true");
  }
  const general = error.general.map((g) => g.msg).filter(Boolean);
  if (error.status === 413) general.unshift(tr("error_too_large"));
  else if (error.status === 429) general.unshift(tr("error_rate_limited"));
  else if (!error.fields.length) general.unshift(tr("error_server", { status: error.status }));
  if (general.length) {
    ui.generalError.textContent = general.join(" ");
    show(ui.generalError, true);
  }
}

// ---- requests ---------------------------------------------------------------------------------

function requestBody() {
  const body = { line_a: state.a, line_b: state.b, position: state.pos, weights: effectiveWeights() };
  // Trained weights fix their own shape: sending n_head or n_layer could only conflict with it.
  if (body.weights === "random") body.n_head = state.heads;
  if (!state.causal) body.causal = false;
  // Every layer of two long lines is megabytes of JSON: ask for the layer on screen only.
  if (isLong()) body.layer = Math.min(state.layer, knownDepth() ?? state.layer);
  return body;
}

function scheduleCompare() {
  clearTimeout(debounceTimer);
  debounceTimer = setTimeout(compare, DEBOUNCE_MS);
  updateBusy();
}

async function compare() {
  clearTimeout(debounceTimer);
  debounceTimer = null;
  const body = requestBody();
  const key = JSON.stringify(body);
  if (inFlight?.key === key) return;
  inFlight?.controller.abort();
  if (key === responseKey && response) {
    inFlight = null;
    clearErrors();
    setStatus("ready");
    await render();
    return;
  }
  const controller = new AbortController();
  inFlight = { key, controller };
  setStatus("loading");
  try {
    const data = await postCompare(body, controller.signal);
    if (inFlight?.controller !== controller) return; // a newer request took over
    inFlight = null;
    response = data;
    responseKey = key;
    ui.download.disabled = false;
    clearErrors();
    setStatus("ready");
    await render();
  } catch (error) {
    if (controller.signal.aborted || error?.name === "AbortError") return;
    if (inFlight?.controller !== controller) return;
    inFlight = null;
    showError(error);
  }
}

// ---- drawing ----------------------------------------------------------------------------------

/**
 * Queue a redraw. scope "layer" redraws only the heatmaps (the response holds every layer);
 * "all" redraws every panel. A newer render makes an older one stop at its next row.
 */
function render(scope = "all") {
  if (scope === "all") wantAll = true;
  const generation = ++renderGeneration;
  rendering = true;
  updateBusy();
  renderChain = renderChain
    .then(() => renderNow(generation))
    .catch((error) => {
      console.error(error);
    })
    .finally(() => {
      if (generation === renderGeneration) {
        rendering = false;
        updateBusy();
      }
    });
  return renderChain;
}

async function renderNow(generation) {
  const isStale = () => generation !== renderGeneration;
  if (isStale() || !response) return;
  const all = wantAll;
  wantAll = false;
  const nLayer = response.model.n_layer;
  if (state.layer > nLayer) {
    state.layer = nLayer;
    writeUrl("replace");
  }
  setLayerOptions(nLayer);
  if (all) {
    renderSummary(response);
    renderNext(response);
    renderHeads(response, options);
  }
  let done = await renderHeatmaps(response, state.layer, isStale);
  if (done && all) {
    await Promise.all([renderDepth(response), renderResidual(response), renderRope(response)]);
    done = !isStale();
  }
  if (!done) {
    wantAll = wantAll || all; // the newer render picks up what this one left undone
    return;
  }
  ui.results.dataset.renderCount = String(Number(ui.results.dataset.renderCount || 0) + 1);
}

async function switchLanguage(lang) {
  const dict = await loadDict(lang);
  if (state.lang !== lang) return; // the user moved on while the file loaded
  setDict(dict);
  applyDict(lang);
  applyControls();
  setStatus(ui.status.dataset.state || "idle");
  await Promise.all([render(), relative?.redraw(), shipped?.redraw()]);
}

// ---- events -----------------------------------------------------------------------------------

function onLineInput(event) {
  // With a Chinese or Japanese input method, wait for the chosen characters, not the pinyin/kana.
  if (event.isComposing) return;
  state.a = ui.lineA.value;
  state.b = ui.lineB.value;
  updateHints();
  // The first keystroke of an edit makes a history entry; the rest of the edit updates it.
  writeUrl(typing ? "replace" : "push");
  typing = true;
  scheduleCompare();
}

function onChange(update, { fetch = true } = {}) {
  return () => {
    typing = false;
    update();
    updateWeightsUi();
    updateHints();
    writeUrl("push");
    // A layer change redraws from the answer in hand, unless long lines brought one layer only.
    if (fetch || isLong()) compare();
    else render("layer");
    relative?.refresh();
  };
}

function downloadJson() {
  if (!response) return;
  const m = response.model;
  downloadText(`${JSON.stringify(response)}\n`, `heads-positions-${m.position}-${m.weights}-${m.n_head}h.json`);
}

async function onPopState() {
  const previous = state;
  state = readState(location.search, LANGS, state.lang);
  typing = false;
  applyControls();
  if (state.lang !== previous.lang) await switchLanguage(state.lang);
  relative?.refresh();
  await compare();
}

function bind() {
  for (const input of [ui.lineA, ui.lineB]) {
    input.addEventListener("input", onLineInput);
    input.addEventListener("compositionend", onLineInput);
  }
  for (const input of [ui.lineA, ui.lineB]) input.addEventListener("change", () => { typing = false; });
  for (const radio of ui.positions) {
    radio.addEventListener("change", onChange(() => { state.pos = radio.value; }));
  }
  ui.heads.addEventListener("change", onChange(() => { state.heads = Number(ui.heads.value); }));
  ui.weights.addEventListener("change", onChange(() => { state.weights = ui.weights.value; }));
  ui.layer.addEventListener("change", onChange(() => { state.layer = Number(ui.layer.value); }, { fetch: false }));
  ui.causal.addEventListener("change", onChange(() => { state.causal = ui.causal.checked; }));
  ui.ropePair.addEventListener("change", () => {
    if (response?.rope) renderRopePairs(response).catch(console.error);
  });
  ui.download.addEventListener("click", downloadJson);
  ui.lang.addEventListener("change", () => {
    typing = false;
    state.lang = ui.lang.value;
    writeUrl("push");
    switchLanguage(state.lang).catch(showError);
  });
  window.addEventListener("popstate", () => { onPopState().catch(showError); });
}

// ---- start ------------------------------------------------------------------------------------

function plotlyReady() {
  if (window.Plotly) return Promise.resolve();
  return new Promise((resolve) => window.addEventListener("load", resolve, { once: true }));
}

async function start() {
  bind();
  const [dict] = await Promise.all([loadDict(state.lang), plotlyReady()]);
  setDict(dict);
  if (document.documentElement.lang !== state.lang) applyDict(state.lang);
  applyControls();
  writeUrl("replace");
  try {
    options = await getOptions();
  } catch (error) {
    showError(error);
  }
  applyControls();
  // Created once the options are known, so the relative panel asks with the page's weights.
  relative = createRelativePanel(() => ({
    weights: effectiveWeights(),
    heads: state.heads,
    trainedAll: trainedEverywhere(),
  }));
  shipped = createShippedPanels();
  await compare();
}

start().catch((error) => {
  console.error(error);
  showError(error);
});
