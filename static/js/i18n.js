// The page's texts. The server paints the first view in the right language; switching language
// fetches static/i18n/{lang}.json and rewrites every element that carries data-i18n.

import { $$, el } from "./dom.js";

export const LANGS = ["zh", "ja", "fr", "en"];
let dict = {};
const cache = new Map();

export async function loadDict(lang) {
  if (!cache.has(lang)) {
    const url = new URL(`../i18n/${lang}.json`, import.meta.url);
    const response = await fetch(url);
    if (!response.ok) throw new Error(`could not load ${url}: ${response.status}`);
    cache.set(lang, await response.json());
  }
  return cache.get(lang);
}

export function setDict(next) {
  dict = next;
}

/** A number as the page's language writes it: 4,787 and 2,7e-7 in French, 4.787 elsewhere. */
export function num(value) {
  const sep = dict.decimal_sep ?? ".";
  return sep === "." ? String(value) : String(value).replace(/(\d)\.(\d)/g, `$1${sep}$2`);
}

/** A whole number with the language's thousands separator: 49,536, or 49 536 in French. */
export function grouped(value) {
  return Number(value).toLocaleString(document.documentElement.lang || "en");
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
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? num(vars[name]) : whole));
}

const pluralRules = new Map(); // one Intl.PluralRules per language: tr() runs on every redraw

function pluralForm(entry, vars) {
  if (typeof entry === "string") return entry;
  const lang = document.documentElement.lang || "en";
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
