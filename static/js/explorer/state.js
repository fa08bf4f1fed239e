// The page state and its home, the URL query: a, b, pos, layer, heads, weights, n_layer, causal,
// posinfo, align, the relative panel's rel_first, rel_second, rel_layer, rel_head, the training step (step),
// the heads turned off (off: "layer-head" pairs, 1-based) and lang.
// A teacher copies the address bar and the class sees the same plots; the #fragment picks the panel.

import { COMPARE_DEFAULTS } from "../shared/constants.js";

// The values a control allows are the server's (/api/options) as templates/_controls.html rendered them:
// one list, kept on the server, and read here with no request before the first comparison.
function allowed(name) {
  return [...document.querySelectorAll(`[name="${name}"]`)]
    .flatMap((node) => (node.tagName === "SELECT" ? [...node.options].map((option) => option.value) : [node.value]));
}

// The lines, the mode and the mask are /api/compare's defaults (constants.js): the lesson's lines, kept in Python.
export const DEFAULTS = Object.freeze({
  a: COMPARE_DEFAULTS.line_a,
  b: COMPARE_DEFAULTS.line_b,
  pos: COMPARE_DEFAULTS.position,
  layer: 1,
  heads: 4,
  // null: not chosen yet. The page resolves it once /api/options says which trained weights ship:
  // trained where they exist for the mode, random otherwise (see main.js effectiveWeights).
  weights: null,
  // null: the random model's default depth (/api/options random.n_layer). Trained weights fix their own.
  nLayer: null,
  causal: COMPARE_DEFAULTS.causal,
  posinfo: true, // false: the heatmaps show the same weights run without position information
  align: true, // false: A − B subtracts cell by cell even when B is a reordering of A
  rel: Object.freeze({ first: "明", second: "月", layer: 1, head: 1 }),
  step: null, // the training step of the gallery and the similarity panel; null: the end of training
  off: Object.freeze([]), // the heads turned off, "layer-head" (1-based), sorted: the ablation panel and gallery's
  lang: "zh",
});

function pick(value, allowed, fallback) {
  return allowed.includes(value) ? value : fallback;
}

function whole(value, fallback) {
  const n = Number.parseInt(value ?? "", 10);
  return Number.isInteger(n) && n >= 1 ? n : fallback;
}

function oneChar(value, fallback) {
  const chars = [...(value ?? "")];
  return chars.length === 1 ? chars[0] : fallback;
}

/** Read a state from a query string; anything missing or invalid falls back to the defaults. */
export function readState(search, langs, fallbackLang) {
  const q = new URLSearchParams(search);
  const rel = DEFAULTS.rel;
  return {
    a: q.get("a") ?? DEFAULTS.a,
    b: q.get("b") ?? DEFAULTS.b,
    pos: pick(q.get("pos"), allowed("position"), DEFAULTS.pos),
    layer: whole(q.get("layer"), DEFAULTS.layer),
    heads: pick(Number(q.get("heads")), allowed("heads").map(Number), DEFAULTS.heads),
    weights: pick(q.get("weights"), allowed("weights"), DEFAULTS.weights),
    nLayer: pick(Number(q.get("n_layer")), allowed("n_layer").map(Number), DEFAULTS.nLayer),
    causal: q.get("causal") !== "0",
    posinfo: q.get("posinfo") !== "0",
    align: q.get("align") !== "0",
    rel: {
      first: oneChar(q.get("rel_first"), rel.first),
      second: oneChar(q.get("rel_second"), rel.second),
      layer: whole(q.get("rel_layer"), rel.layer),
      head: whole(q.get("rel_head"), rel.head),
    },
    step: readStep(search),
    off: readOff(q.get("off")),
    lang: pick(q.get("lang"), langs, pick(fallbackLang, langs, DEFAULTS.lang)),
  };
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

/** Heads as "layer-head", both whole numbers from 1, sorted and once each; others dropped. Heads the model does not
 * have are dropped once its shape is known (heads-off.js fit). */
export function readOff(value) {
  const heads = (value ?? "").split(",").filter((k) => /^[1-9]\d*-[1-9]\d*$/.test(k));
  return Object.freeze(sortedHeads(new Set(heads)));
}

/** "layer-head" keys sorted by layer, then head. */
export function sortedHeads(keys) {
  const n = (k) => k.split("-").map(Number);
  return [...keys].sort((x, y) => n(x)[0] - n(y)[0] || n(x)[1] - n(y)[1]);
}

/** A step from a query string: a whole number, or null when absent or not one. */
function readStep(search) {
  const n = Number.parseInt(new URLSearchParams(search).get("step") ?? "", 10);
  return Number.isInteger(n) && n >= 0 ? n : null;
}

export function sameState(x, y) {
  return toSearch(x) === toSearch(y);
}

// The explorer's state: one object for the whole page. main.js fills it from the address (readState), and is its
// one URL writer (toSearch) and its one popstate handler; step-control.js reads and sets its training step (step),
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
