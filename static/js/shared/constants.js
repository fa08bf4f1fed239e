// The server's constants, as GET /api/options answers them, embedded in the page by templates/base.html: the
// position modes, the languages, the limits and the defaults each live once, in Python, and are read here.

const OPTIONS = JSON.parse(document.getElementById("page-options").textContent);

/** learned, rope, none: the order every list and chart of modes follows. */
export const MODES = Object.freeze([...OPTIONS.positions]);
/** The languages the pages speak. */
export const LANGS = Object.freeze([...OPTIONS.langs]);
/** Longest line POST /api/ablate accepts. */
export const MAX_ABLATE_CHARS = OPTIONS.max_ablate_chars;
/** Class mode's rules as the server keeps them: the code's alphabet and length, the longest name, and the roster's
 * recent joins (the last recent_seconds). */
export const CLASS_RULES = Object.freeze({ ...OPTIONS.classes });
/** n_layer and n_head of random weights when a request omits them. */
export const RANDOM_SHAPE = Object.freeze({ ...OPTIONS.random });
/** What POST /api/compare assumes for omitted fields: the lesson's lines among them. */
export const COMPARE_DEFAULTS = Object.freeze({ ...OPTIONS.defaults });
