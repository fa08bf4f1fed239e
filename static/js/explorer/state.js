// The page state and its home, the URL query: a, b, pos, layer, heads, weights, n_layer, causal,
// posinfo, align, the relative panel's rel_first, rel_second, rel_layer, rel_head, the training step (step),
// the heads turned off (off: "layer-head" pairs, 1-based) and lang.
// A teacher copies the address bar and the class sees the same plots; the #fragment picks the panel.

// The page's link as the server decoded it (app/services/link_codec.py, the one reader of every query parameter,
// embedded by templates/base.html): {state: what this page opened with, defaults: what an empty link opens with}.
// Nothing here parses a query: a value the server could not use was replaced there, and said in a notice.
const LINK = JSON.parse(document.getElementById("page-link").textContent);

/** The server's decoded link (its parameter names) in the state's shape. */
function fromLink(link, lang) {
  return {
    a: link.a,
    b: link.b,
    pos: link.pos,
    layer: link.layer,
    heads: link.heads,
    // null: not chosen yet. The page resolves it once /api/options says which trained weights ship:
    // trained where they exist for the mode, random otherwise (see model-choice.js effectiveWeights).
    weights: link.weights,
    nLayer: link.n_layer, // null: the random model's default depth. Trained weights fix their own.
    causal: link.causal,
    posinfo: link.posinfo, // false: the heatmaps show the same weights run without position information
    align: link.align, // false: A − B subtracts cell by cell even when B is a reordering of A
    rel: Object.freeze({ first: link.rel_first, second: link.rel_second, layer: link.rel_layer, head: link.rel_head }),
    step: link.step, // the training step of the gallery and the similarity panel; null: the end of training
    off: Object.freeze([...link.off]), // the heads turned off, "layer-head" (1-based), sorted
    lang,
  };
}

/** An empty link's state: the lesson's lines and the server's defaults. */
export const DEFAULTS = Object.freeze(fromLink(LINK.defaults, "zh"));

/** The state this page was opened with: its link, decoded by the server; lang is the language the server chose. */
export function linkState() {
  return fromLink(LINK.state, document.documentElement.lang);
}

/** Switches and the relative panel appear in the URL only when they differ from the default, so links stay short. */
export function toSearch(state) {
  const q = new URLSearchParams();
  for (const key of ["a", "b", "pos", "layer", "heads"]) q.set(key, String(state[key]));
  if (state.weights) q.set("weights", state.weights);
  if (state.nLayer) q.set("n_layer", String(state.nLayer));
  if (!state.causal) q.set("causal", "0");
  if (!state.posinfo) q.set("posinfo", "0");
  if (!state.align) q.set("align", "0");
  for (const key of ["first", "second", "layer", "head"]) {
    if (state.rel[key] !== DEFAULTS.rel[key]) q.set(`rel_${key}`, String(state.rel[key]));
  }
  if (state.step !== null && state.step !== undefined) q.set("step", String(state.step));
  if (state.off.length) q.set("off", state.off.join(","));
  q.set("lang", state.lang);
  return `?${q}`;
}

/** "layer-head" keys sorted by layer, then head. */
export function sortedHeads(keys) {
  const n = (k) => k.split("-").map(Number);
  return [...keys].sort((x, y) => n(x)[0] - n(y)[0] || n(x)[1] - n(y)[1]);
}

export function sameState(x, y) {
  return toSearch(x) === toSearch(y);
}

// The explorer's state: one object for the whole page. page.js fills it from the address (linkState) and is its one
// URL writer (toSearch), main.js its one popstate handler; step-control.js reads and sets its training step (step),
// which the gallery, the similarity panel and the heads-off panel ask the API for. It starts at the defaults and
// nothing here reads the address: on the lesson page, ?step= is the lesson's step, never a training step.
// Each state is frozen: a change is a set(), so every listener hears it. Besides what the address holds, it holds
// the turn-a-head-off answer on screen (ablation: /api/ablate's answer for line A and `off`, or null), which the
// ablation panel asks for and the gallery reads.
let current = Object.freeze({ ...DEFAULTS, ablation: null });
const listeners = new Set();

export const explorerState = {
  get() {
    return current;
  },
  /** Merge a change in; when the state differs, every listener hears listener(next, previous). */
  set(patch) {
    const previous = current;
    const next = Object.freeze({ ...previous, ...patch });
    if (sameState(next, previous) && next.ablation === previous.ablation) return;
    current = next;
    for (const listener of listeners) listener(next, previous);
  },
  subscribe(listener) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
