// The page's texts. The server paints the first view in the right language; switching language
// fetches static/i18n/{lang}.json and rewrites every element that carries data-i18n.

import { $$, el } from "./dom.js";

let dict = {};
const cache = new Map();

export async function loadDict(lang) {
  if (!cache.has(lang)) {
    const url = new URL(`../../i18n/${lang}.json`, import.meta.url);
    const response = await fetch(url);
    if (!response.ok) throw new Error(`could not load ${url}: ${response.status}`);
    cache.set(lang, await response.json());
  }
  return cache.get(lang);
}

export function setDict(next) {
  dict = next;
}

/** The page's language, as the document says it. */
const pageLang = () => document.documentElement.lang || "en";

/** Whole numbers from here up are grouped (35 333, 35,333); smaller ones read well as they are. */
const GROUP_FROM = 10000;
const SUPERSCRIPT = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" };
/** A whole string in JavaScript's exponent form, as toExponential() writes it: "3.58e-7", "1e-6", "8.3e+4". */
const EXPONENT_FORM = /^([-+]?\d+(?:\.\d+)?)e([-+]?\d+)$/i;
/** A narrow no-break space: "3.6 × 10⁻⁷" never breaks across lines. */
const NNBSP = "\u202f";

/** Decimal points written as the language writes them: 2,7 in French. */
function decimal(text) {
  const sep = dict.decimal_sep ?? ".";
  const signed = text.replace(/^-(?=\d)/, "−"); // the minus sign the charts print, not a hyphen
  return sep === "." ? signed : signed.replace(/(\d)\.(\d)/g, `$1${sep}$2`);
}

/**
 * mantissa × 10^exponent as a high-school book prints it: "3.6 × 10⁻⁷" (3,6 × 10⁻⁷ in French), "10⁻⁶" for
 * a mantissa of 1, the mantissa alone for an exponent of 0.
 */
export function powerOfTen(mantissa, exponent) {
  const e = Number(exponent);
  if (e === 0) return decimal(String(mantissa));
  const power = `10${String(e).split("").map((c) => SUPERSCRIPT[c]).join("")}`;
  if (String(mantissa) === "1") return power;
  return `${decimal(String(mantissa))}${NNBSP}×${NNBSP}${power}`;
}

/**
 * A number as the page's language writes it: 4,787 in French, 4.787 elsewhere; JavaScript's exponent form
 * ("2.7e-7") as 2.7 × 10⁻⁷; whole numbers from 10 000 up grouped (35 333 in French, 35,333 in English).
 */
export function num(value) {
  if (typeof value === "number" && Number.isInteger(value) && Math.abs(value) >= GROUP_FROM) return grouped(value);
  const text = String(value);
  const exp = EXPONENT_FORM.exec(text);
  return exp ? powerOfTen(exp[1], exp[2]) : decimal(text);
}

/**
 * v with `digits` significant digits: plain between 0.01 and 999 ("0.0123", "12.3"), else as a power of ten
 * ("3.58 × 10⁻⁷"). The page's decimal separator, and 0 as "0".
 */
export function scientific(v, digits = 3) {
  if (v === 0 || !Number.isFinite(v)) return String(v);
  const exponent = Math.floor(Math.log10(Math.abs(v)));
  const plain = v.toPrecision(digits);
  if (exponent >= -2 && exponent <= 2 && !plain.includes("e")) return decimal(plain);
  return num(v.toExponential(digits - 1));
}

const formats = new Map(); // one Intl.NumberFormat per language

/** A whole number with the language's digit grouping: 49,536, or 49 536 (narrow no-break space) in French. */
export function grouped(value) {
  const lang = pageLang();
  if (!formats.has(lang)) formats.set(lang, new Intl.NumberFormat(lang));
  return formats.get(lang).format(Number(value));
}

/** "label: value" as the language writes it: "Votre prédiction : …" in French, "你的预测：…" in Chinese. */
export function labelled(label, value) {
  return tr("label_value", { label, value });
}

/** Plotly's separators (decimal, then thousands) for the page's language. */
export function plotlySeparators() {
  return (dict.decimal_sep ?? ".") === "," ? ", " : ".,";
}

/**
 * tr("line_hint", {n: 5, max: 128}) -> "5 / 128 characters". A missing key shows as itself.
 * Decimal points in the values are written as the language writes them (num).
 * A text whose words follow a number is an object: {"count": "more", "one": "…", "other": "…"}; the
 * language's plural rule for vars[count] picks the form (French counts 0 and 1 as one, English 1 only).
 */
export function tr(key, vars = {}) {
  const text = pluralForm(dict[key] ?? key, vars);
  return text.replace(/\{(\w+)\}/g, (whole, name) => (!(name in vars) ? whole
    : vars[name] instanceof Figure ? vars[name].marked() : vars[name] instanceof Verbatim ? vars[name].text
      : num(vars[name])));
}

/**
 * A value tr() fills in exactly as given, never read as a number: what someone typed, such as a student's name.
 * "-3" would become "−3", "1.5" "1,5" in French, and "2e5" "2 × 10⁵" (a student's review).
 */
class Verbatim {
  constructor(text) {
    this.text = String(text);
  }
}

export const verbatim = (text) => new Verbatim(text);

// A filled-in figure travels inside tr()'s string between these private-use characters until fillFigures() makes
// it a <span data-figure="name">: FIGURE_OPEN name FIGURE_NAMED text FIGURE_CLOSE.
const FIGURE_OPEN = "\ue000";
const FIGURE_NAMED = "\ue001";
const FIGURE_CLOSE = "\ue002";
const FIGURE_MARK = /\ue000([^\ue001]*)\ue001([^\ue002]*)\ue002/gu;

/**
 * A number a verdict, its caption or its note fills in, with the name of the figure it is: the verdict's figure
 * ("gap64"), or an expression of figures and setup numbers ("100 * distance", "train_length - 1"). The page shows
 * it as a <span data-figure="…"> (fillFigures), which tests/e2e/test_referee.py checks against the verdict's JSON.
 * Its value (valueOf) picks a plural form like the number itself would.
 */
export class Figure {
  constructor(name, shown, value) {
    Object.assign(this, { name, shown, value });
  }

  marked() {
    return `${FIGURE_OPEN}${this.name}${FIGURE_NAMED}${num(this.shown)}${FIGURE_CLOSE}`;
  }

  valueOf() {
    return this.value;
  }

  toString() {
    return num(this.shown);
  }
}

/** figure("gap", sci(f.gap), f.gap): the number as printed (shown as tr() shows any value), keyed by its name. */
export const figure = (name, shown, value = Number(shown)) => new Figure(name, shown, value);

/** Fill node with text, each marked figure as a <span data-figure>; the rest as text (no HTML is read). */
export function fillFigures(node, text) {
  const parts = [];
  let from = 0;
  for (const match of text.matchAll(FIGURE_MARK)) {
    parts.push(document.createTextNode(text.slice(from, match.index)));
    parts.push(el("span", { text: match[2], dataset: { figure: match[1] } }));
    from = match.index + match[0].length;
  }
  parts.push(document.createTextNode(text.slice(from)));
  node.replaceChildren(...parts.filter((p) => p.nodeType !== 3 || p.data));
}

/** The text a reader sees: figure marks taken out (for aria labels, alt texts, plain text nodes). */
export function plainText(text) {
  return text.replace(FIGURE_MARK, "$2");
}

const pluralRules = new Map(); // one Intl.PluralRules per language: tr() runs on every redraw

function pluralForm(entry, vars) {
  if (typeof entry === "string") return entry;
  const lang = pageLang();
  if (!pluralRules.has(lang)) pluralRules.set(lang, new Intl.PluralRules(lang));
  return entry[pluralRules.get(lang).select(Number(vars[entry.count]))] ?? entry.other;
}

/** Sentences joined as the language writes them: a space in English and French, nothing in Chinese
 * and Japanese. Empty parts are left out. */
export function sentences(parts) {
  return parts.filter(Boolean).join(tr("sentence_sep"));
}

/** Fill node with text in which `backticks` mark code names, as the templates' rich() macro does. */
export function fillRich(node, text) {
  node.replaceChildren(
    ...text.split("`").map((part, i) => (i % 2 ? el("code", { text: part }) : document.createTextNode(part))),
  );
}

export function applyDict(lang, root = document) {
  document.documentElement.lang = lang;
  document.title = tr("page_title");
  for (const node of $$("[data-i18n]", root)) {
    const text = tr(node.dataset.i18n);
    if ("i18nRich" in node.dataset) fillRich(node, text);
    else node.textContent = text;
  }
}

/** Plotly renders labels as pseudo-HTML: escape data before it reaches a tick, caption or hover. */
export function escapePlotly(value) {
  return String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
