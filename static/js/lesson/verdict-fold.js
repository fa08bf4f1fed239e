// On a class's projector the question, the verdict and its chart share one 1280x720 screen (issue 38). A verdict
// taller than the room left for it keeps its first whole sentences, in the projector's type, and folds the rest
// behind a button that shows them; the screen reader's text (the node's textContent) is the whole verdict.

import { $$, el } from "../shared/dom.js";

const SENTENCE = "lesson-verdict__sentence";

/** The model's verdict as one span per sentence (Intl's sentence breaks: "。" in Japanese, ". " in French). */
function sentenceSpans(verdict) {
  const model = verdict.querySelector('[data-sentence="verdict"]');
  if (!model) return [];
  if (!model.querySelector(`.${SENTENCE}`)) {
    const breaks = new Intl.Segmenter(document.documentElement.lang || "en", { granularity: "sentence" });
    model.replaceChildren(...[...breaks.segment(model.textContent)]
      .map(({ segment }) => el("span", { className: SENTENCE, text: segment })));
  }
  return $$(`.${SENTENCE}`, model);
}

/** Everything shown again, and the button gone. */
export function unfoldVerdict(verdict, more) {
  for (const span of $$(`.${SENTENCE}[hidden]`, verdict)) span.hidden = false;
  more.hidden = true;
}

/**
 * Fold the verdict's last sentences until it is at most `height` px tall; its first sentence always shows. The
 * button shows when a sentence is folded (measure the room with it shown: it takes its own line).
 */
export function foldVerdict(verdict, more, height) {
  for (const span of $$(`.${SENTENCE}[hidden]`, verdict)) span.hidden = false;
  const spans = sentenceSpans(verdict);
  let shown = spans.length;
  while (shown > 1 && verdict.getBoundingClientRect().height > height) spans[--shown].hidden = true;
  more.hidden = shown === spans.length;
}
