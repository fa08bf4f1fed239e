// Figures never break across lines. A number in a sentence ("3.6 × 10⁻⁷", "3.58e-7", "12,5 %") is put in
// a <span class="num"> that app.css keeps on one line, wherever the text came from: the pages set their
// sentences with textContent in many places, so this pass watches the page's text instead of each of them.
// Only figures with a place a line could break (a space, ×, an exponent's sign) get a span; the text reads
// the same (textContent is unchanged).

/** A figure: a signed decimal, then a power of ten (× 10⁻⁷, or e-7) and a unit (%, ‰, °) if any. */
export const FIGURE = /[-+\u2212]?\d(?:[\d.,\u00a0\u202f\u2009]*\d)?(?:[\s\u00a0\u202f]?×[\s\u00a0\u202f]?10[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+|e[-+]?\d+)?(?:[\s\u00a0\u202f]?[%‰°])?/g;
/** Where a browser may break inside a figure: a space of any kind, the times sign, an exponent's sign. */
const BREAKABLE = /[\s\u00a0\u202f\u2009×]|e[-+]/;
/** Text that is not prose: code, form controls, charts (SVG), and figures already wrapped. */
const SKIP = "script, style, code, pre, textarea, select, option, svg, .num, [contenteditable]";

/** Wrap the breakable figures of one text node; returns the spans made. */
function wrapText(node) {
  const text = node.nodeValue;
  if (!text || !/\d/.test(text) || node.parentElement?.closest(SKIP)) return [];
  const parts = [];
  const spans = [];
  let last = 0;
  for (const match of text.matchAll(FIGURE)) {
    if (!BREAKABLE.test(match[0])) continue;
    if (match.index > last) parts.push(document.createTextNode(text.slice(last, match.index)));
    const span = document.createElement("span");
    span.className = "num";
    span.textContent = match[0];
    parts.push(span);
    spans.push(span);
    last = match.index + match[0].length;
  }
  if (!spans.length) return [];
  if (last < text.length) parts.push(document.createTextNode(text.slice(last)));
  node.replaceWith(...parts);
  return spans;
}

/** Wrap the figures of every text node under root. */
export function wrapFigures(root) {
  if (root.nodeType === Node.TEXT_NODE) return wrapText(root);
  if (root.nodeType !== Node.ELEMENT_NODE || root.closest(SKIP)) return [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
  return nodes.flatMap(wrapText);
}

/** Keep wrapping as the page writes new text under root (document.body by default). */
export function keepFiguresWhole(root = document.body) {
  wrapFigures(root);
  const observer = new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === "characterData") wrapFigures(record.target);
      else for (const node of record.addedNodes) if (node.isConnected) wrapFigures(node);
    }
  });
  observer.observe(root, { childList: true, characterData: true, subtree: true });
  return observer;
}

keepFiguresWhole();
