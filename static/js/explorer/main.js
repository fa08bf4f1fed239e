// The page's controller: state <-> URL <-> controls, requests to /api/compare, and redraws. The state is
// state.js's explorerState (the one object the address holds); everything else the page knows is in `page`.

import { createAblationPanel } from "./ablation.js";
import { ApiError, FIELD_CONTROLS, getOptions, postCompareJudged } from "../shared/api.js";
import { $, $$, show } from "../shared/dom.js";
import { downloadText } from "../shared/draw.js";
import {
  compareBody, modelNote, MODEL_PREFIX, servedModel, showLineHints, trainedNote, trainedShape as shapeOf,
} from "./controls.js";
import { fieldMessage } from "../shared/errors.js";
import { applyDict, loadDict, setDict, tr } from "../shared/i18n.js";
import { MODES } from "../shared/constants.js";
import { latest } from "../shared/latest.js";
import { ANSWER_PANELS, modelSummary, renderRopePairs, unknownNote } from "./panels.js";
import { renderHeatmaps } from "./heatmaps.js";
import { createProbePanels } from "./probe.js";
import { createRelativePanel } from "./relative.js";
import { createShippedPanels } from "./shipped.js";
import { DEFAULTS, explorerState, linkState, toSearch } from "./state.js";
import "../shared/typeset.js"; // every figure in the page's text stays on one line

/**
 * A keystroke after a pause is sent at once. One that comes while the page is still busy with the last (its
 * request out, or a send waiting) waits until no key has come for BURST_MS: a burst of keys, a held key or a
 * paste sends its last line instead of a request per key that the next key would abort.
 */
const BURST_MS = 50;
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
  nLayer: $("#n-layer"),
  causal: $("#causal"),
  posinfo: $("#posinfo"),
  align: $("#align"),
  unknownA: $("#line-a-unknown"),
  unknownB: $("#line-b-unknown"),
  modelSummary: $("#model-summary"),
  ropePair: $("#rope-pair"),
  tocRope: $("#toc-rope"),
  download: $("#download-json"),
  lang: $("#lang"),
  results: $("#results"),
  status: $("#status"),
  weightsNote: $("#weights-note"),
  generalError: $("#general-error"),
};

explorerState.set(linkState());
/** The state: read here, changed with explorerState.set() (each state is frozen), written to the URL by writeUrl. */
const state = () => explorerState.get();

/** What the page knows besides its state: the server's answers and where the page is with them. */
const page = {
  options: null, // /api/options
  startLines: null, // the operator's model whose two known lines replaced the lesson's, so its note says so
  answer: null, // the last successful /api/compare answer
  answerKey: null, // the request body that produced it
  // The server's verdict on each answer (POST /api/compare/verdict), kept beside it, never written into it: the
  // answer stays what the server sent. A render reads the verdict of the answer it draws (verdictOf).
  verdicts: new WeakMap(),
  judging: null, // the answer on screen while the server's verdict on it is still out
  request: latest(), // the comparison on screen: the newest request wins
  debounceTimer: null,
  typing: false, // true between the first keystroke of an edit and the input's change event
  shownError: null, // the error on screen, kept so a language switch can word it again
  drawing: { chain: Promise.resolve(), generation: 0, wantAll: false, busy: false }, // wantAll: every panel is owed
  // Created at start: the relative-distance panel, the panels of shipped results, the turn-a-head-off panel.
  panels: { relative: null, shipped: null, ablation: null },
};
const verdictOf = (answer) => page.verdicts.get(answer) ?? null;

// ---- state <-> URL ----------------------------------------------------------------------------

/** The state as its history entry keeps it (the answer on screen is not history): popstate reads it back, so the
 * page never parses an address; the server decoded the one it was opened with (link_codec.py). */
function entry() {
  const { ablation, ...kept } = state();
  return { explorer: kept };
}

function writeUrl(mode) {
  // The #fragment stays: it is the panel a shared link points at.
  const search = toSearch(state());
  const url = `${location.pathname}${search}${location.hash}`;
  if (mode === "push" && search !== location.search) history.pushState(entry(), "", url);
  else history.replaceState(entry(), "", url);
}

// ---- options and weights ----------------------------------------------------------------------

/**
 * Trained weights where they exist for the mode, unless the user chose random. state.weights is
 * null until the user picks: the default then follows the mode (trained where shipped).
 */
function effectiveWeights() {
  if (state().weights?.startsWith(MODEL_PREFIX)) return state().weights; // an operator's model, as the menu says
  return state().weights !== "random" && shapeOf(page.options, state().pos) ? "trained" : "random";
}

function trainedEverywhere() {
  return MODES.every((p) => shapeOf(page.options, p));
}

function isLong() {
  const { a, b } = state();
  return [...a].length > LONG_LINE || [...b].length > LONG_LINE;
}

/** The depth of the model the next request will get, when the page already knows it. */
function knownDepth() {
  const model = servedModel(page.options, state().weights);
  if (model) return model.n_layer;
  if (effectiveWeights() === "trained") return shapeOf(page.options, state().pos).n_layer;
  return state().nLayer ?? page.options?.random?.n_layer ?? null;
}

function maxChars() {
  const model = servedModel(page.options, state().weights);
  if (model) return model.max_chars;
  return page.options?.max_chars?.[state().pos] ?? null;
}

function updateWeightsUi() {
  const { options } = page;
  const shape = shapeOf(options, state().pos);
  const anyTrained = Boolean(options && Object.keys(options.trained ?? {}).length);
  ui.trainedOption.disabled = !shape;
  const weights = effectiveWeights();
  ui.weights.value = weights;
  ui.heads.disabled = weights === "trained";
  ui.heads.value = String(weights === "trained" ? shape.n_head : state().heads);
  // The layer count is the random model's to choose; trained weights show their own depth.
  ui.nLayer.disabled = weights === "trained";
  const depth = knownDepth();
  if (depth) ui.nLayer.value = String(depth);
  let note = "";
  if (weights === "trained") {
    note = trainedNote(shape);
  } else if (options && !anyTrained) {
    note = tr("trained_none");
  } else if (options && state().weights !== "random") {
    note = tr("trained_missing_mode");
  }
  const model = servedModel(options, state().weights);
  // The model's file fixes its mode, depth and heads: the controls for them show it and wait.
  for (const radio of ui.positions) radio.disabled = Boolean(model);
  if (model) {
    ui.heads.disabled = true;
    ui.nLayer.disabled = true;
    note = modelNote(model, page.startLines === model.name);
  }
  for (const option of ui.weights.querySelectorAll("option[data-model]")) {
    option.textContent = tr("weights_model", { name: option.dataset.model });
  }
  ui.weightsNote.textContent = note;
  show(ui.weightsNote, Boolean(note));
  showShippedNotes(model);
}

/** The shipped results' panels are measured on the shipped models: with an operator's model they say so. */
const SHIPPED_PANELS = [
  "panel-training", "panel-length", "panel-gallery", "panel-positions", "panel-probe", "panel-speeds",
];
function showShippedNotes(model) {
  for (const id of SHIPPED_PANELS) {
    const panel = $(`#${id}`);
    if (!panel) continue;
    let note = panel.querySelector("[data-shipped-note]");
    if (!note) {
      note = document.createElement("p");
      note.className = "note";
      note.dataset.shippedNote = "";
      (panel.querySelector("h2") ?? panel.firstElementChild).after(note);
    }
    note.textContent = model ? tr("shipped_only", { name: model.name }) : "";
    show(note, Boolean(model));
  }
}

/**
 * The state a weights choice makes. An operator's model brings its own mode; when its vocabulary lacks the lesson's
 * lines and those are on screen, it brings two lines it knows (/api/options models[].lines), and the note says so.
 */
function weightsChange(weights) {
  const model = servedModel(page.options, weights);
  if (!model) return { weights };
  const change = { weights, pos: model.position };
  const { a, b } = state();
  if (!model.lesson_lines && a === DEFAULTS.a && b === DEFAULTS.b) {
    [change.a, change.b] = model.lines;
    page.startLines = model.name;
  }
  return change;
}

function updateHints() {
  showLineHints({ "line-a": ui.lineA.value, "line-b": ui.lineB.value }, maxChars());
}

// ---- controls ---------------------------------------------------------------------------------

function setLayerOptions(nLayer) {
  const current = [...ui.layer.options].map((o) => o.value).join(",");
  const wanted = Array.from({ length: nLayer }, (_, i) => String(i + 1));
  if (current !== wanted.join(",")) {
    ui.layer.replaceChildren(...wanted.map((v) => new Option(v, v)));
  }
  ui.layer.value = String(state().layer);
}

function applyControls() {
  const now = state();
  if (ui.lineA.value !== now.a) ui.lineA.value = now.a;
  if (ui.lineB.value !== now.b) ui.lineB.value = now.b;
  for (const radio of ui.positions) radio.checked = radio.value === now.pos;
  ui.lang.value = now.lang;
  ui.causal.checked = now.causal;
  ui.posinfo.checked = now.posinfo;
  ui.align.checked = now.align;
  if ([...ui.layer.options].some((o) => o.value === String(now.layer))) ui.layer.value = String(now.layer);
  updateWeightsUi();
  updateHints();
}

// ---- errors and status ------------------------------------------------------------------------

/** kind: idle, loading, ready, error (the request failed) or invalid (an input to fix; nothing was sent). */
function setStatus(kind) {
  ui.status.dataset.state = kind;
  ui.status.textContent = kind === "idle" ? "" : tr(`status_${kind}`);
  updateBusy();
}

/** #results is busy while a request or the answer's verdict is out, or a render is drawing; tests wait on it too. */
function updateBusy() {
  const busy = ui.status.dataset.state === "loading" || page.drawing.busy || page.debounceTimer !== null
    || page.judging !== null;
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
  page.shownError = null;
}

/** Fields the page can check before asking the server: an empty line is an input to fix, not a failure. */
function inputProblems() {
  const { a, b } = state();
  const fields = [];
  if (!a) fields.push({ field: "line_a", type: "string_too_short", ctx: { min_length: 1 } });
  if (!b) fields.push({ field: "line_b", type: "string_too_short", ctx: { min_length: 1 } });
  return fields.length ? new ApiError(422, fields, []) : null;
}

function showError(error) {
  clearErrors();
  page.shownError = error;
  ui.results.classList.add("is-stale");
  // A 422 naming fields is an input to fix: the request itself did not fail.
  const invalid = error instanceof ApiError && error.status === 422 && error.fields.length > 0;
  setStatus(invalid ? "invalid" : "error");
  if (!(error instanceof ApiError)) {
    ui.generalError.textContent = tr("error_network");
    show(ui.generalError, true);
    return;
  }
  for (const item of error.fields) {
    const id = FIELD_CONTROLS[item.field];
    const node = $(`#${id}-error`);
    // Worded in the page's language from the error's type (errors.js), as the lesson words it.
    const { a, b, pos } = state();
    const message = fieldMessage(item, { text: item.field === "line_b" ? b : a, position: pos, max: maxChars() });
    node.textContent = node.textContent ? `${node.textContent} ${message}` : message;
    show(node, true);
    const control = id === "position" ? $(".switch") : $(`#${id}`);
    control?.setAttribute("aria-invalid", "true");
  }
  const general = [];
  if (error.status === 413) general.push(tr("error_too_large"));
  else if (error.status === 429) general.push(tr("error_rate_limited"));
  else if (!error.fields.length) general.push(tr("error_server", { status: error.status }));
  if (general.length) {
    ui.generalError.textContent = general.join(" ");
    show(ui.generalError, true);
  }
}

// ---- requests ---------------------------------------------------------------------------------

function requestBody() {
  const now = state();
  const body = compareBody({
    a: now.a, b: now.b, position: now.pos, weights: effectiveWeights(), n_head: now.heads,
    n_layer: now.nLayer, causal: now.causal,
  });
  // Every layer of two long lines is megabytes of JSON: ask for the layer on screen only, and only
  // for the view shown (with or without position information).
  if (isLong()) body.layer = Math.min(now.layer, knownDepth() ?? now.layer);
  if (isLong() && now.posinfo) body.attention_without_position = false;
  return body;
}

function scheduleCompare() {
  const idle = page.debounceTimer === null && !page.request.busy;
  clearTimeout(page.debounceTimer);
  page.debounceTimer = null;
  if (idle) {
    compare().catch(showError);
    return;
  }
  page.debounceTimer = setTimeout(() => { compare().catch(showError); }, BURST_MS);
  updateBusy();
}

async function compare() {
  clearTimeout(page.debounceTimer);
  page.debounceTimer = null;
  const problem = inputProblems();
  if (problem) {
    page.request.abort();
    showError(problem);
    return;
  }
  const body = requestBody();
  const key = JSON.stringify(body);
  if (page.request.runningFor(key)) return;
  if (key === page.answerKey && page.answer) {
    page.request.abort();
    clearErrors();
    setStatus("ready");
    await render();
    return;
  }
  setStatus("loading");
  let out;
  try {
    out = await page.request.run((signal) => postCompareJudged(body, signal), key);
  } catch (error) {
    showError(error);
    return;
  }
  if (out.stale) return; // a newer request took over
  const { answer, verdict: judged } = out.value;
  page.answer = answer;
  page.answerKey = key;
  page.judging = answer;
  ui.download.disabled = false;
  clearErrors();
  setStatus("ready");
  // The maps at once; the sentences that read the verdict, and the panels after the maps, once it has come.
  await Promise.all([render(), judge(answer, judged)]);
  // Line A with heads off, for the same model: asked once the maps are drawn, so its answer and its
  // charts do not hold up the maps of this keystroke.
  page.panels.ablation?.refresh().catch(console.error);
}

/**
 * The server's verdict on an answer (api.js postCompareJudged): once it has come, the sentences that read it and
 * the panels after the maps are drawn. A verdict whose answer is no longer on screen is dropped.
 */
async function judge(answer, judged) {
  let value;
  try {
    value = await judged;
  } catch (error) {
    if (page.answer !== answer) return;
    page.judging = null;
    showError(error);
    return;
  }
  if (page.answer !== answer) return;
  page.verdicts.set(answer, value);
  page.judging = null;
  await render();
}

// ---- drawing ----------------------------------------------------------------------------------

/**
 * Queue a redraw. scope "layer" redraws only the heatmaps (the response holds every layer);
 * "all" redraws every panel. A newer render makes an older one stop at its next row.
 */
function render(scope = "all") {
  const drawing = page.drawing;
  if (scope === "all") drawing.wantAll = true;
  const generation = ++drawing.generation;
  drawing.busy = true;
  updateBusy();
  drawing.chain = drawing.chain
    .then(() => renderNow(generation))
    .catch((error) => {
      console.error(error);
    })
    .finally(() => {
      if (generation === drawing.generation) {
        drawing.busy = false;
        updateBusy();
      }
    });
  return drawing.chain;
}

async function renderNow(generation) {
  const drawing = page.drawing;
  const isStale = () => generation !== drawing.generation;
  if (isStale() || !page.answer) return;
  const all = drawing.wantAll;
  drawing.wantAll = false;
  const shown = page.answer; // a newer answer may come while this one draws: each part reads this one's verdict
  const nLayer = shown.model.n_layer;
  if (state().layer > nLayer) {
    explorerState.set({ layer: nLayer });
    writeUrl("replace");
  }
  setLayerOptions(nLayer);
  if (all) {
    showSummary(shown);
    for (const panel of ANSWER_PANELS.filter((p) => p.first)) panel.update(shown, { options: page.options });
  }
  const { layer, posinfo, align } = state();
  // The controller's own elements: the panels below draw inside theirs only.
  ui.align.disabled = !shown.alignment; // nothing to line up unless B is a reordering of A (by token id)
  show(ui.tocRope, Boolean(shown.rope)); // the contents list RoPE's panel only when the answer has one
  let done = await renderHeatmaps(shown, verdictOf(shown), { layer, posinfo, align }, isStale);
  if (done && all && !verdictOf(shown)) {
    drawing.wantAll = true; // the panels after the maps read the verdict too: judge() draws them when it comes
    return;
  }
  if (done && all) {
    const ctx = { options: page.options, verdict: verdictOf(shown) };
    await Promise.all(ANSWER_PANELS.filter((p) => !p.first).map((p) => p.update(shown, ctx)));
    done = !isStale();
  }
  if (!done) {
    drawing.wantAll = drawing.wantAll || all; // the newer render picks up what this one left undone
    return;
  }
  ui.results.dataset.renderCount = String(Number(ui.results.dataset.renderCount || 0) + 1);
  if (Number(ui.results.dataset.renderCount) === 1) scrollToFragment();
}

/** Beside the controls, which are the controller's: the model that answered, and each line's unknown characters. */
function showSummary(answer) {
  ui.modelSummary.textContent = modelSummary(answer.model);
  for (const [line, node] of [[answer.lines[0], ui.unknownA], [answer.lines[1], ui.unknownB]]) {
    node.textContent = unknownNote([...new Set(line.tokens.filter((_, k) => line.unknown[k]))]);
    show(node, Boolean(node.textContent));
  }
}

/** The panels above a linked one have just grown: bring the linked panel back into view once. */
function scrollToFragment() {
  const id = decodeURIComponent(location.hash.slice(1));
  const target = id && document.getElementById(id);
  if (target && !target.hidden) target.scrollIntoView({ block: "start" });
}

async function switchLanguage(lang) {
  const dict = await loadDict(lang);
  if (state().lang !== lang) return; // the user moved on while the file loaded
  $("#lesson-link").href = `/lesson?lang=${lang}`;
  setDict(dict);
  applyDict(lang);
  applyControls();
  setStatus(ui.status.dataset.state || "idle");
  // Errors on screen are worded again in the new language.
  if (page.shownError) showError(page.shownError);
  // The answer's panels redraw from the answer in hand; the others (relative, shipped) redraw themselves.
  await Promise.all([render(), ...ownPanels().map((panel) => panel.redraw())]);
}

/** Panels that fetch their own data: each has redraw(), for a language switch. */
function ownPanels() {
  return Object.values(page.panels).filter(Boolean);
}

// ---- events -----------------------------------------------------------------------------------

function onLineInput(event) {
  // With a Chinese or Japanese input method, wait for the chosen characters, not the pinyin/kana.
  if (event.isComposing) return;
  explorerState.set({ a: ui.lineA.value, b: ui.lineB.value });
  scheduleCompare(); // first: the request leaves before the hints and the address are written
  updateHints();
  // The first keystroke of an edit makes a history entry; the rest of the edit updates it.
  writeUrl(page.typing ? "replace" : "push");
  page.typing = true;
}

/** A control's change: read(): the state's change it makes. */
function onChange(read, { fetch = true } = {}) {
  return () => {
    page.typing = false;
    explorerState.set(read());
    updateWeightsUi();
    updateHints();
    writeUrl("push");
    // A layer change redraws from the answer in hand, unless long lines brought one layer only.
    if (fetch || isLong()) compare();
    else render("layer");
    page.panels.relative?.refresh();
  };
}

function downloadJson() {
  const { answer } = page;
  if (!answer) return;
  const m = answer.model;
  downloadText(`${JSON.stringify(answer)}\n`, `heads-positions-${m.position}-${m.weights}-${m.n_head}h.json`);
}

/** The page's one popstate handler: the whole state, training step included, comes back from the history entry.
 * An entry without one (a #fragment link's, before hashchange stamped it) keeps the state on screen. */
async function onPopState(event) {
  const previous = state();
  if (!event.state?.explorer) return;
  explorerState.set(event.state.explorer);
  page.typing = false;
  applyControls();
  const { lang, rel } = state();
  if (lang !== previous.lang) await switchLanguage(lang);
  page.panels.relative?.apply(rel);
  await compare();
}

function bind() {
  for (const input of [ui.lineA, ui.lineB]) {
    input.addEventListener("input", onLineInput);
    input.addEventListener("compositionend", onLineInput);
  }
  for (const input of [ui.lineA, ui.lineB]) input.addEventListener("change", () => { page.typing = false; });
  for (const radio of ui.positions) {
    radio.addEventListener("change", onChange(() => ({ pos: radio.value })));
  }
  ui.heads.addEventListener("change", onChange(() => ({ heads: Number(ui.heads.value) })));
  ui.weights.addEventListener("change", onChange(() => weightsChange(ui.weights.value)));
  ui.layer.addEventListener("change", onChange(() => ({ layer: Number(ui.layer.value) }), { fetch: false }));
  ui.nLayer.addEventListener("change", onChange(() => ({ nLayer: Number(ui.nLayer.value) })));
  // Both views and both ways of subtracting are in the answer already: redraw, do not refetch.
  ui.posinfo.addEventListener("change", onChange(() => ({ posinfo: ui.posinfo.checked }), { fetch: false }));
  ui.align.addEventListener("change", onChange(() => ({ align: ui.align.checked }), { fetch: false }));
  ui.causal.addEventListener("change", onChange(() => ({ causal: ui.causal.checked })));
  ui.ropePair.addEventListener("change", () => {
    if (page.answer?.rope) renderRopePairs(page.answer).catch(console.error);
  });
  ui.download.addEventListener("click", downloadJson);
  ui.lang.addEventListener("change", () => {
    page.typing = false;
    explorerState.set({ lang: ui.lang.value });
    writeUrl("push");
    switchLanguage(state().lang).catch(showError);
  });
  window.addEventListener("popstate", (event) => { onPopState(event).catch(showError); });
  // A #fragment link makes a history entry of its own: it keeps the state it was made from.
  window.addEventListener("hashchange", () => { if (!history.state?.explorer) history.replaceState(entry(), ""); });
}

// ---- start ------------------------------------------------------------------------------------

function plotlyReady() {
  if (window.Plotly) return Promise.resolve();
  return new Promise((resolve) => window.addEventListener("load", resolve, { once: true }));
}

async function start() {
  bind();
  // The training step and the heads turned off are the state's: a slider move (step-control.js) or a head's switch
  // (heads-off.js) goes into the address, replaced: a drag or a toggle is not history, and a link copied then
  // shows the same panels. On popstate the address already holds them, and writing it again changes nothing.
  explorerState.subscribe((next, previous) => {
    if (next.step !== previous.step || next.off !== previous.off) writeUrl("replace");
  });
  // Asked for with the texts, not after them (the page preloads both): the first comparison needs it.
  const optionsRequest = getOptions().catch((error) => error);
  const { lang } = state();
  const [dict] = await Promise.all([loadDict(lang), plotlyReady()]);
  setDict(dict);
  if (document.documentElement.lang !== lang) applyDict(lang);
  applyControls();
  writeUrl("replace");
  const got = await optionsRequest;
  if (got instanceof Error) showError(got);
  else page.options = got;
  // A link that names an operator's model: its mode, and its start lines when the lesson's are on screen.
  if (servedModel(page.options, state().weights)) explorerState.set(weightsChange(state().weights));
  applyControls();
  // Created once the options are known, so the relative panel asks with the page's weights.
  page.panels.relative = createRelativePanel(() => ({
    weights: effectiveWeights(),
    heads: state().heads,
    nLayer: state().nLayer,
    trainedAll: trainedEverywhere(),
  }), {
    initial: state().rel,
    onChange(rel) {
      explorerState.set({ rel: { ...rel } });
      writeUrl("replace");
    },
  });
  page.panels.shipped = createShippedPanels();
  page.panels.probe = createProbePanels(() => ({
    position: state().pos, n_layer: state().nLayer ?? page.options?.random?.n_layer ?? 2,
  }));
  page.panels.ablation = createAblationPanel(() => ({
    line: state().a,
    position: state().pos,
    weights: effectiveWeights(),
    nHead: servedModel(page.options, state().weights)?.n_head
      ?? (effectiveWeights() === "trained" ? shapeOf(page.options, state().pos).n_head : state().heads),
    nLayer: knownDepth(),
  }));
  await compare();
}

start().catch((error) => {
  console.error(error);
  showError(error);
});
