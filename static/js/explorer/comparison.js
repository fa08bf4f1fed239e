// The comparison on screen: the /api/compare body of the state, a keystroke's send (at once, or once a burst of
// keys stops), the request with its answer and the server's verdict on it.

import { postCompareJudged } from "../shared/api.js";
import { compareBody } from "./controls.js";
import { effectiveWeights, isLong, knownDepth } from "./model-choice.js";
import { page, state, ui } from "./page.js";
import { render } from "./render.js";
import { clearErrors, inputProblems, setStatus, showError, updateBusy } from "./status.js";

function requestBody() {
  const now = state();
  const body = compareBody({
    line_a: now.a, line_b: now.b, position: now.pos, weights: effectiveWeights(), n_head: now.heads,
    n_layer: now.nLayer, causal: now.causal,
  });
  // Every layer of two long lines is megabytes of JSON: ask for the layer on screen only, and only
  // for the view shown (with or without position information).
  if (isLong()) body.layer = Math.min(now.layer, knownDepth() ?? now.layer);
  if (isLong() && now.posinfo) body.attention_without_position = false;
  return body;
}

/** A keystroke: sent at once after a pause, else once a burst of keys stops (shared/burst.js). */
export function scheduleCompare() {
  page.edits.edit(() => { compare().catch(showError); });
  updateBusy();
}

export async function compare() {
  page.edits.cancel();
  const problem = inputProblems();
  if (problem) {
    page.request.abort();
    showError(problem);
    return;
  }
  const body = requestBody();
  const key = JSON.stringify(body);
  if (page.request.runningFor(key)) return;
  if (key === page.answerKey && page.answer) {
    page.request.abort();
    clearErrors();
    setStatus("ready");
    await render();
    return;
  }
  setStatus("loading");
  let out;
  try {
    out = await page.request.run((signal) => postCompareJudged(body, signal), key);
  } catch (error) {
    showError(error);
    return;
  }
  if (out.stale) return; // a newer request took over
  const { answer, verdict: judged } = out.value;
  page.answer = answer;
  page.answerKey = key;
  page.judging = answer;
  ui.download.disabled = false;
  clearErrors();
  setStatus("ready");
  // The maps at once; the sentences that read the verdict, and the panels after the maps, once it has come.
  await Promise.all([render(), judge(answer, judged)]);
  // Line A with heads off, for the same model: asked once the maps are drawn, so its answer and its
  // charts do not hold up the maps of this keystroke.
  page.panels.ablation?.refresh().catch(console.error);
}

/**
 * The server's verdict on an answer (api.js postCompareJudged): once it has come, the sentences that read it and
 * the panels after the maps are drawn. A verdict whose answer is no longer on screen is dropped.
 */
async function judge(answer, judged) {
  let value;
  try {
    value = await judged;
  } catch (error) {
    if (page.answer !== answer) return;
    page.judging = null;
    showError(error);
    return;
  }
  if (page.answer !== answer) return;
  page.verdicts.set(answer, value);
  page.judging = null;
  await render();
}
