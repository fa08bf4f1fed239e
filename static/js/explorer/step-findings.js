// What formed when during training, in words: the sentences shown with the training-step slider. Every
// judgement (a head present, layer 1 flat, the rhythm showing, the first step from which each holds) is the
// server's (GET /api/snapshots, app/services/snapshots.py); this module only words it, at the step on screen.

import { MODES } from "../shared/constants.js";
import { grouped, sentences, tr } from "../shared/i18n.js";


const pct = (share) => tr("percent", { value: Math.round(100 * share) });
const stepText = (step) => grouped(step);
const at = (rows, step) => rows.find((row) => row.step === step);

/** Layer 1's previous-character head: from which step it stays, and what it is at the step on screen. The
 * paragraph's first sentence names the mode; the others are about the same model. */
function previousHead(model, step, named) {
  const mode = tr(`step_with_${model.position}`);
  const row = at(model.previous_head, step);
  const from = model.findings.previous_head;
  const when = from === null ? tr("step_prev_never", { mode }) : tr("step_prev_from", { mode, from: stepText(from) });
  const now = row.present
    ? tr("step_prev_at_yes", { step: stepText(step), head: row.head, share: pct(row.share) })
    : tr("step_prev_at_no", { step: stepText(step), head: row.head, share: pct(row.share), named: pct(named) });
  return sentences([when, now]);
}

/** Heads that look at the parallel character one line up (line_above). */
function coupletHeads(model, step) {
  const row = at(model.couplet_heads, step);
  const from = model.findings.couplet_heads;
  const when = from === null ? tr("step_couplet_never") : tr("step_couplet_from", { from: stepText(from) });
  const heads = [...row.heads].sort((a, b) => b.share - a.share)
    .map((h) => tr("step_head_share", { name: tr("ablation_head_short", { layer: h.layer, head: h.head }), share: pct(h.share) }));
  const now = heads.length ? tr("step_couplet_at", { step: stepText(step), heads: heads.join(tr("ablation_list_sep")) })
    : tr("step_couplet_at_none", { step: stepText(step) });
  return sentences([when, now]);
}

/** How flat layer 1 is by distance: at every step (the server's layer1_flat), and at the step on screen. */
function layerOne(model, step) {
  const row = at(model.layer1, step);
  const whole = tr(model.findings.layer1_flat ? "step_flat_always" : "step_flat_not_always");
  const vars = { step: stepText(step), head: row.head, offset: row.offset, share: pct(row.share) };
  return sentences([whole, tr(row.flat ? "step_flat_at_yes" : "step_flat_at_no", vars)]);
}

/**
 * One paragraph per mode, in the gallery's order: [{position, text}]. Layer 1's flatness is the claim about
 * the model without positions, so it is worded for that one.
 */
export function galleryFindings(timeline, step) {
  return [...timeline.models].sort((a, b) => MODES.indexOf(a.position) - MODES.indexOf(b.position))
    .filter((model) => model.previous_head.some((row) => row.step === step))
    .map((model) => ({
      position: model.position,
      text: sentences([
        previousHead(model, step, timeline.named),
        coupletHeads(model, step),
        model.position === "none" ? layerOne(model, step) : "",
      ]),
    }));
}

/** The pos_emb table's rhythm: from which step it shows, and at the step on screen; RoPE's table never changes. */
export function positionFindings(timeline, step) {
  const parts = [];
  const row = at(timeline.rhythm ?? [], step);
  if (row) {
    const from = at(timeline.rhythm, timeline.rhythm_from);
    parts.push(from ? tr("step_rhythm_from", { from: stepText(from.step), period: from.period })
      : tr("step_rhythm_never"));
    const vars = { step: stepText(step), period: row.period, at: row.at_period.toFixed(2), median: row.median.toFixed(2) };
    parts.push(tr(row.shows ? "step_rhythm_at_yes" : "step_rhythm_at_no", vars));
  }
  parts.push(tr("step_rope_fixed"));
  return sentences(parts);
}
