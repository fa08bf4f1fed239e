// The explorer page's elements (ui), its state (state.js's explorerState, read with state()), what the page knows
// besides its state (page: the server's answers and where the page is with them), and the state's address: the
// URL and its history entry. The other modules of the page read and change these; main.js wires them to events.

import { burst } from "../shared/burst.js";
import { $, $$ } from "../shared/dom.js";
import { latest } from "../shared/latest.js";
import { explorerState, linkState, toSearch } from "./state.js";

/** Past this many characters the answer carries one layer's attention only, and a layer change refetches. */
export const LONG_LINE = 128;

export const ui = {
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
export const state = () => explorerState.get();

/** What the page knows besides its state: the server's answers and where the page is with them. */
export const page = {
  options: null, // /api/options
  startLines: null, // the operator's model whose two known lines replaced the lesson's, so its note says so
  answer: null, // the last successful /api/compare answer
  answerKey: null, // the request body that produced it
  // The server's verdict on each answer (POST /api/compare/verdict), kept beside it, never written into it: the
  // answer stays what the server sent. A render reads the verdict of the answer it draws (verdictOf).
  verdicts: new WeakMap(),
  judging: null, // the answer on screen while the server's verdict on it is still out
  request: latest(), // the comparison on screen: the newest request wins
  edits: burst({ busy: () => page.request.busy }), // the lines' keystrokes: one ask per burst of keys
  typing: false, // true between the first keystroke of an edit and the input's change event
  shownError: null, // the error on screen, kept so a language switch can word it again
  drawing: { chain: Promise.resolve(), generation: 0, wantAll: false, busy: false }, // wantAll: every panel is owed
  // Created at start: the relative-distance panel, the panels of shipped results, the turn-a-head-off panel.
  panels: { relative: null, shipped: null, ablation: null },
};
export const verdictOf = (answer) => page.verdicts.get(answer) ?? null;

// ---- state <-> URL ----------------------------------------------------------------------------

/** The state as its history entry keeps it (the answer on screen is not history): popstate reads it back, so the
 * page never parses an address; the server decoded the one it was opened with (link_codec.py). */
export function entry() {
  const { ablation, ...kept } = state();
  return { explorer: kept };
}

export function writeUrl(mode) {
  // The #fragment stays: it is the panel a shared link points at.
  const search = toSearch(state());
  const url = `${location.pathname}${search}${location.hash}`;
  if (mode === "push" && search !== location.search) history.pushState(entry(), "", url);
  else history.replaceState(entry(), "", url);
}
