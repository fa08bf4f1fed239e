// The explorer page: its events and its start. The state is state.js's explorerState (the one object the address
// holds) and everything else the page knows is page.js's `page`; the controls are drawn from them (show-controls.js),
// a change sends the comparison (comparison.js), and its answer is drawn (render.js).

import { createAblationPanel } from "./ablation.js";
import { getOptions } from "../shared/api.js";
import { $ } from "../shared/dom.js";
import { downloadText } from "../shared/draw.js";
import { servedModel, trainedShape as shapeOf } from "./controls.js";
import { RANDOM_SHAPE } from "../shared/constants.js";
import { applyDict, loadDict, setDict } from "../shared/i18n.js";
import { compare, scheduleCompare } from "./comparison.js";
import { effectiveWeights, isLong, knownDepth, trainedEverywhere, weightsChange } from "./model-choice.js";
import { entry, page, state, ui, writeUrl } from "./page.js";
import { renderRopePairs } from "./panels.js";
import { createProbePanels } from "./probe.js";
import { createRelativePanel } from "./relative.js";
import { render } from "./render.js";
import { createShippedPanels } from "./shipped.js";
import { applyControls, updateHints, updateWeightsUi } from "./show-controls.js";
import { explorerState } from "./state.js";
import { setStatus, showError } from "./status.js";
import "../shared/typeset.js"; // every figure in the page's text stays on one line

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
    position: state().pos, n_layer: state().nLayer ?? RANDOM_SHAPE.n_layer,
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
