// Drawing the answer on screen: a queue of renders where a newer one stops an older one at its next row, the
// heatmaps first, the panels that read the server's verdict once it has come, and the model's summary.

import { show } from "../shared/dom.js";
import { renderHeatmaps } from "./heatmaps.js";
import { page, state, ui, verdictOf, writeUrl } from "./page.js";
import { ANSWER_PANELS, modelSummary, unknownNote } from "./panels.js";
import { setLayerOptions } from "./show-controls.js";
import { explorerState } from "./state.js";
import { updateBusy } from "./status.js";

/**
 * Queue a redraw. scope "layer" redraws only the heatmaps (the response holds every layer);
 * "all" redraws every panel. A newer render makes an older one stop at its next row.
 */
export function render(scope = "all") {
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
