// Two panels on where a model keeps order. "Where order is kept" draws GET /api/probe: the probe's test error at
// each site for the three trained models (at the training-step slider's step) and the untrained model on screen,
// with the panel's own mask switch. "RoPE's speeds" draws GET /api/rope/speeds: each pair's share of each head's
// score as a heatmap, fastest pair first, and what stopping a band of pairs costs. Both load when first seen and
// redraw on a language switch; every number is the server's.

import { request as apiRequest } from "../shared/api.js";
import { MODES } from "../shared/constants.js";
import { $, $$, show } from "../shared/dom.js";
import { draw, purge } from "../shared/draw.js";
import { escapePlotly as esc, fillRich, num, tr } from "../shared/i18n.js";
import { latest } from "../shared/latest.js";
import { whenVisible } from "../shared/lazy.js";
import {
  MODE_STYLE, MUTED, PUOR, TYPE, baseLayout, colorbar, lineAxis, narrowScreen, titleText, wrapLabel,
} from "../shared/plots.js";
import { modeInSentence, modeLabel } from "./plots-results.js";
import { degrees, ordered, pairLabel, probeVerdict, siteLabel, speedsVerdict } from "./probe-words.js";
import { failed, showLoadError } from "./shipped.js";
import { askedStep, loadTimeline, onStepChange } from "./step-control.js";
import { explorerState } from "./state.js";

const UNTRAINED = { color: "#6b7280", dash: "dashdot", symbol: "x" };

const getJson = (path, query, signal) => apiRequest(path, { query, signal });

export function probeFigure({ trained, untrained }) {
  const narrow = narrowScreen();
  // On a phone the untrained line's name leaves out its mode, so the legend stays left of the chart's toolbar.
  const untrainedName = (m) => (narrow ? tr("probe_untrained_short", { n: m.n_layer })
    : tr("probe_untrained", { mode: modeInSentence(m.position), n: m.n_layer }));
  const lines = [...trained.map((m) => ({ m, style: MODE_STYLE[m.position], name: modeLabel(m.position) })),
    ...(untrained ? [{ m: untrained, style: UNTRAINED, name: untrainedName(untrained) }] : [])];
  const data = lines.map(({ m, style, name }) => {
    const sites = ordered(m.sites);
    return {
      type: "scatter",
      mode: "lines+markers",
      name: esc(name),
      meta: untrained && m === untrained ? "untrained" : m.position,
      // Level, on two lines (three on a phone, in a smaller type): turned labels took half a projector's chart and
      // ran into each other; on a phone, two lines 12 letters wide left the five sites' names touching.
      x: sites.map((s) => wrapLabel(siteLabel(s), narrow ? 9 : 12)),
      y: sites.map((s) => s.mae),
      hovertemplate: `%{x} · %{y:.1f}<extra>${esc(name)}</extra>`,
      line: { color: style.color, width: 2, dash: style.dash },
      marker: { color: style.color, size: 8, symbol: style.symbol },
    };
  });
  const chance = [...trained, ...(untrained ? [untrained] : [])][0]?.sites[0]?.chance ?? null;
  const layout = baseLayout({
    margin: { l: 8, r: 12, t: 8, b: 8 },
    showlegend: true,
    legend: { orientation: "h", x: 0, y: 1.02, xanchor: "left", yanchor: "bottom", font: { size: TYPE.legend } },
    // On a phone, half a site's width either side as well: the first site's name ran into the y axis's 0.
    xaxis: lineAxis(tr("probe_axis_site"), { type: "category", automargin: true, tickangle: 0,
      ...(narrow ? { tickfont: { size: TYPE.tick - 3 }, range: [-0.5, (data[0]?.x.length ?? 1) - 0.5] } : {}) }),
    // Four ticks at most (0, 20, 40): five ran into each other on a projector's short chart in its larger type.
    yaxis: lineAxis(tr("probe_axis_mae"), { rangemode: "tozero", nticks: 4 }),
    shapes: chance === null ? [] : [{
      type: "line", xref: "paper", yref: "y", x0: 0, x1: 1, y0: chance, y1: chance,
      line: { color: MUTED, width: 1.5, dash: "dot" },
    }],
    annotations: chance === null ? [] : [{
      xref: "paper", yref: "y", x: 1, y: chance, xanchor: "right", yanchor: "bottom", showarrow: false,
      text: esc(tr("probe_chance", { mae: num(chance.toFixed(1)) })), font: { size: TYPE.tick, color: MUTED },
    }],
  });
  return { data, layout };
}

function finish(panel) {
  panel.dataset.state = "ready";
  panel.dataset.renderCount = String(Number(panel.dataset.renderCount || 0) + 1);
}

/** untrainedOnScreen() -> {position, n_layer}: the explorer's mode and the depth of its untrained model. */
function createProbePanel(untrainedOnScreen) {
  const panel = $("#panel-probe");
  const causalBox = $("#probe-causal");
  const request = latest();
  let shown = null; // {trained, untrained, causal}
  let started = false;

  async function render() {
    const { trained, untrained, causal } = shown;
    show($("#probe-empty"), trained.models.length === 0 && !untrained);
    const verdict = probeVerdict(trained.models, causal);
    fillRich($("#probe-verdict"), verdict);
    show($("#probe-verdict"), Boolean(verdict));
    const models = [...trained.models].sort((a, b) => MODES.indexOf(a.position) - MODES.indexOf(b.position));
    if (!models.length && !untrained) purge($("#probe-plot"));
    else await draw($("#probe-plot"), probeFigure({ trained: models, untrained: untrained?.models[0] }), "probe");
    panel.dataset.step = String(trained.step);
    panel.dataset.causal = String(causal);
    finish(panel);
  }

  async function load() {
    const causal = causalBox.checked;
    const step = askedStep();
    panel.dataset.state = "loading";
    panel.dataset.stale = "";
    let out;
    try {
      out = await request.run((signal) => Promise.all([
        getJson("/api/probe", { step, causal }, signal),
        getJson("/api/probe", { weights: "random", ...untrainedOnScreen(), causal }, signal).catch((e) => {
          if (e?.name === "AbortError") throw e;
          console.error(e); // the trained models still draw without the untrained line
          return null;
        }),
      ]));
    } catch (error) {
      failed(panel, error);
      return;
    }
    if (out.stale) return;
    showLoadError(panel, null);
    shown = { trained: out.value[0], untrained: out.value[1], causal };
    await render();
    delete panel.dataset.stale;
  }

  whenVisible(panel, () => {
    started = true;
    loadTimeline().then(load);
  });
  onStepChange(() => {
    if (started) load();
  });
  causalBox.addEventListener("change", () => {
    if (started) load();
  });
  explorerState.subscribe((next, previous) => {
    if (started && (next.pos !== previous.pos || next.nLayer !== previous.nLayer)) load();
  });
  return { redraw: () => (shown ? render() : Promise.resolve()) };
}

export function speedsFigure({ speeds, measure }) {
  // On a phone the labels are the numbers alone (the axis titles name them), so the cells keep the width.
  const narrow = narrowScreen();
  const heads = speeds.layers.flatMap((l) => l.heads.map((h) => ({ layer: l.layer, head: h.head, values: h[measure] })));
  // Elsewhere the layer over the head ("L1" over "H1"), level, so eight heads fit a projector's chart unturned.
  const x = heads.map((h) => (narrow ? `${h.layer}-${h.head}`
    : esc(tr("speeds_head", { layer: h.layer, head: h.head })).replace(/ /g, "<br>")));
  const y = speeds.theta_degrees.map((d, i) => (narrow ? `${i} · ${degrees(d)}°` : esc(pairLabel(i, d))));
  const z = speeds.theta_degrees.map((_, i) => heads.map((h) => h.values[i]));
  const range = Math.max(1e-9, ...z.flat().map(Math.abs));
  const trace = {
    type: "heatmap",
    x,
    y,
    z,
    zmin: -range,
    zmax: range,
    zmid: 0,
    colorscale: PUOR,
    xgap: 1,
    ygap: 1,
    hovertemplate: "%{x} · %{y}<br>%{z:.3f}<extra></extra>",
    colorbar: colorbar(narrow ? { thickness: 8 } : { title: titleText(tr("speeds_colorbar"), { side: "right" }) }),
  };
  const layout = baseLayout({
    margin: { l: 8, r: 8, t: 6, b: 8 },
    // A size smaller on a phone: eight columns of about 25 px left 3 px between "1-1" and "1-2" in the tick type.
    xaxis: { title: titleText(tr(narrow ? "speeds_axis_head_short" : "speeds_axis_head"), { standoff: 2 }),
      fixedrange: true, automargin: true, showgrid: false, zeroline: false, type: "category", tickangle: 0,
      ...(narrow ? { tickfont: { size: TYPE.tick - 3 } } : {}) },
    // The pairs' labels are long ("paire 12 · 0,057°/car."): 2 px left the title touching them at 1280 × 720.
    yaxis: { title: titleText(tr("speeds_axis_pair"), { standoff: 10 }), autorange: "reversed", fixedrange: true,
      automargin: true, showgrid: false, zeroline: false, type: "category" },
  });
  return { data: [trace], layout };
}

function createSpeedsPanel() {
  const panel = $("#panel-speeds");
  const measureBox = $("#speeds-measure");
  const request = latest();
  let answer = null;
  let started = false;

  async function render() {
    const empty = answer.layers.length === 0;
    show($("#speeds-empty"), empty);
    const verdict = speedsVerdict(answer);
    fillRich($("#speeds-verdict"), verdict);
    show($("#speeds-verdict"), Boolean(verdict));
    if (empty) purge($("#speeds-plot"));
    else await draw($("#speeds-plot"), speedsFigure({ speeds: answer, measure: measureBox.value }), "rope-speeds");
    panel.dataset.band = answer.stopped?.band ?? "none";
    finish(panel);
  }

  async function load() {
    const band = $('input[name="speeds-band"]:checked', panel).value;
    panel.dataset.state = "loading";
    let out;
    try {
      out = await request.run((signal) => getJson("/api/rope/speeds", { band: band === "none" ? null : band }, signal));
    } catch (error) {
      failed(panel, error);
      return;
    }
    if (out.stale) return;
    showLoadError(panel, null);
    answer = out.value;
    await render();
  }

  whenVisible(panel, () => {
    started = true;
    load();
  });
  for (const radio of $$('input[name="speeds-band"]', panel)) radio.addEventListener("change", () => started && load());
  measureBox.addEventListener("change", () => answer && render());
  return { redraw: () => (answer ? render() : Promise.resolve()) };
}

/** untrainedOnScreen() -> {position, n_layer}: the untrained model drawn beside the trained ones. */
export function createProbePanels(untrainedOnScreen) {
  const panels = [createProbePanel(untrainedOnScreen), createSpeedsPanel()];
  return { redraw: () => Promise.all(panels.map((p) => p.redraw())) };
}
