// The words of the probe and speeds panels (probe.js), from the API's numbers alone: pure functions of the answer
// and the page's dictionary, tested without a browser (tests/js/probe-words.test.mjs).

import { num, tr } from "../shared/i18n.js";

/** A site's name on the axis: the residual stream before block 1 or after block l, or block l's z. */
export function siteLabel(site) {
  if (site.site === "z") return tr("probe_site_z", { n: site.layer });
  return site.layer === 0 ? tr("probe_site_embedding") : tr("probe_site_residual", { n: site.layer });
}

/** The sites in drawing order, along the model: embedding, then each block's z and the residual after it. */
export function ordered(sites) {
  const residual = (l) => sites.find((s) => s.site === "residual" && s.layer === l);
  const z = (l) => sites.find((s) => s.site === "z" && s.layer === l);
  const n = Math.max(...sites.map((s) => s.layer));
  return [residual(0), ...Array.from({ length: n }, (_, i) => [z(i + 1), residual(i + 1)]).flat()];
}

/** The sentence under the chart: the none model's error before block 1 and after it, against chance. */
export function probeVerdict(trained, causal) {
  const none = trained.find((m) => m.position === "none");
  if (!none) return "";
  const before = none.sites.find((s) => s.site === "residual" && s.layer === 0);
  const after = none.sites.find((s) => s.site === "residual" && s.layer === 1);
  const fmt = (v) => num(v.toFixed(1));
  return tr(causal ? "probe_verdict" : "probe_verdict_nomask", {
    before: fmt(before.mae), after: fmt(after.mae), early: fmt(after.by_range["0-15"]), chance: fmt(before.chance),
  });
}

/** θ in degrees as the pair labels write it: 1 decimal from 1° up, 2 significant digits below. */
export function degrees(d) {
  return num(d < 1 ? d.toPrecision(2) : d.toFixed(1));
}

/** A pair's row label: its number and θ in degrees per character. */
export function pairLabel(i, theta) {
  return tr("speeds_pair", { i, deg: degrees(theta) });
}

/** What the band costs: the loss before and after, and the previous-character head's attention before and after. */
export function speedsVerdict(answer) {
  const on = answer.all_on;
  const off = answer.stopped;
  if (!on || !off) return "";
  // The head that looks most at the previous character with every pair turning.
  let best = { layer: 1, head: 1, share: -1 };
  on.previous.forEach((row, l) => row.forEach((share, h) => {
    if (share > best.share) best = { layer: l + 1, head: h + 1, share };
  }));
  const pct = (v) => num((100 * v).toFixed(0));
  return tr("speeds_verdict", {
    band: tr(`speeds_band_${off.band}`), before: num(on.val_loss.toFixed(3)), after: num(off.val_loss.toFixed(3)),
    layer: best.layer, head: best.head, share_before: pct(best.share),
    share_after: pct(off.previous[best.layer - 1][best.head - 1]),
  });
}
