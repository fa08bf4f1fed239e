// The page state and its home, the URL query: a, b, pos, layer, heads, weights, causal, lang.
// A teacher copies the address bar and the class sees the same plots.

export const POSITIONS = ["learned", "rope", "none"];
export const HEADS = [1, 2, 4, 8];
export const WEIGHTS = ["random", "trained"];
export const DEFAULTS = Object.freeze({
  a: "白日依山尽",
  b: "山依日白尽",
  pos: "learned",
  layer: 1,
  heads: 4,
  // null: not chosen yet. The page resolves it once /api/options says which trained weights ship:
  // trained where they exist for the mode, random otherwise (see main.js resolveWeights).
  weights: null,
  causal: true,
  lang: "zh",
});

function pick(value, allowed, fallback) {
  return allowed.includes(value) ? value : fallback;
}

/** Read a state from a query string; anything missing or invalid falls back to the defaults. */
export function readState(search, langs, fallbackLang) {
  const q = new URLSearchParams(search);
  const layer = Number.parseInt(q.get("layer") ?? "", 10);
  return {
    a: q.get("a") ?? DEFAULTS.a,
    b: q.get("b") ?? DEFAULTS.b,
    pos: pick(q.get("pos"), POSITIONS, DEFAULTS.pos),
    layer: Number.isInteger(layer) && layer >= 1 ? layer : DEFAULTS.layer,
    heads: pick(Number(q.get("heads")), HEADS, DEFAULTS.heads),
    weights: pick(q.get("weights"), WEIGHTS, DEFAULTS.weights),
    causal: q.get("causal") !== "0",
    lang: pick(q.get("lang"), langs, pick(fallbackLang, langs, DEFAULTS.lang)),
  };
}

/** The mask is on unless the URL says causal=0, so ordinary links stay short. */
export function toSearch(state) {
  const q = new URLSearchParams();
  for (const key of ["a", "b", "pos", "layer", "heads"]) q.set(key, String(state[key]));
  if (state.weights) q.set("weights", state.weights);
  if (!state.causal) q.set("causal", "0");
  q.set("lang", state.lang);
  return `?${q}`;
}

export function sameState(x, y) {
  return toSearch(x) === toSearch(y);
}
