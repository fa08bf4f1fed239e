// The two steps on where a model keeps order (issue 40). "probe": can a linear probe read the position after block
// 1 of the trained model on screen, with the mask on screen (GET /api/probe)? "bands": stop RoPE's fastest or its
// slowest quarter of pairs, which costs more (GET /api/rope/speeds)? The verdict (POST /api/lesson/{step}/verdict)
// is decided on the same figures the charts draw; this file only words it. A kind as in kinds.js.

import { postVerdict, request } from "../shared/api.js";
import { escapePlotly as esc, figure, num, sentences, tr } from "../shared/i18n.js";
import { COLORS, MUTED, TYPE, baseLayout, lineAxis, narrowScreen, wrapLabel } from "../shared/plots.js";
import { probeFigure, speedsFigure } from "../explorer/probe.js";
import { modeInSentence } from "../explorer/plots-results.js";

const places = (x) => num(Number(x).toFixed(1)); // 19,1 in French
const nats = (x) => num(Number(x).toFixed(3));
const pct = (x) => num((100 * x).toFixed(0));
/** The verdict's figure f[name] as format prints it, keyed by its name for the page (data-figure). */
const fig = (f, name, format) => figure(name, format(f[name]), f[name]);
/** A share printed as a percentage, keyed as 100 times the figure. */
const share = (f, name) => figure(`100 * ${name}`, pct(f[name]), 100 * f[name]);

const getJson = (path, query, signal) => request(path, { query, signal });

/** The server's outcome, worded (kinds.js's judged). */
function judged(verdict, text, value) {
  return { outcome: verdict.outcome, accepted: verdict.accepted, text, value, unknown: verdict.unknown };
}

/** A verdict without an outcome (weights not trained, the mask off for the bands...), in the reason's words. */
function noOutcome(verdict, setup) {
  return judged(verdict, tr(verdict.reason === "no_results" ? "results_empty" : `reason_${verdict.reason}`,
    { mode: modeInSentence(setup.position) }));
}

export const probe = {
  panel: "panel-probe",
  async fetch(ctx, signal) {
    // The three trained models' probes with the mask on screen: the chart; the verdict reads the same figures.
    const [verdict, answer] = await Promise.all([
      postVerdict(ctx.step.id, ctx.setup, signal),
      getJson("/api/probe", { causal: String(ctx.setup.causal) }, signal),
    ]);
    return { verdict, answer };
  },
  judge(data, ctx) {
    const v = data.verdict;
    if (v.outcome === null) return noOutcome(v, ctx.setup);
    const f = v.figures;
    const mask = tr(ctx.setup.causal ? "probe_mask_on" : "probe_mask_off");
    return judged(v, sentences([
      tr("probe_step_verdict", { mode: modeInSentence(ctx.setup.position), mask, mae: fig(f, "mae", places),
        chance: fig(f, "chance", places), before: fig(f, "before", places), early: fig(f, "early", places),
        within: share(f, "within") }),
      tr(`probe_step_${v.outcome}`, { chance_limit: fig(f, "chance_limit", places), close_limit: fig(f, "close_limit", places) }),
      // With the mask off, the lesson's own setup (the mask on) beside it; with the mask on, the mask-off figure is
      // left to the student's next try (the notice asks them to predict it first).
      ctx.setup.causal ? "" : tr("probe_step_other_on", { other: fig(f, "other_mask", places) }),
      // Haviv et al.'s reason, where it is the one at work: no positions, the mask on, and the probe reading something.
      ctx.setup.position === "none" && ctx.setup.causal && v.outcome !== "chance" ? tr("probe_step_why") : "",
    ]), f.mae);
  },
  charts(data, ctx) {
    const models = data.answer.models;
    if (!models.length) return [];
    const list = models.map((m) => `${modeInSentence(m.position)} ${places(m.sites.find((s) => s.site === "residual" && s.layer === 1).mae)}`);
    return [{
      name: "probe", caption: tr("chart_probe_step", { mask: tr(ctx.setup.causal ? "probe_mask_on" : "probe_mask_off") }),
      alt: tr("chart_probe_step_alt", { list: list.join(tr("list_sep")), chance: places(models[0].sites[0].chance) }),
      figure: probeFigure({ trained: models, untrained: null }),
    }];
  },
  // What a probe cannot show, and, with the mask on, the experiment to try next: the same question without it.
  notice: (data, ctx) => sentences([tr("probe_cannot"), ctx.setup.causal && data.verdict.outcome !== null ? tr("probe_try_mask") : ""]),
  snippet: (ctx) => [
    "from model.assets import checkpoint_path",
    "from model.checkpoint import load_checkpoint",
    "from model.position_probe import position_probe",
    "from model.train import load_data",
    "from model.windows import window_offsets",
    "",
    `model, tok, meta = load_checkpoint(checkpoint_path(${JSON.stringify(ctx.setup.position)}))`,
    "val, T = load_data().val, model.config.block_size",
    `offsets = window_offsets(len(val), T, T)[::3]  # ${tr("snippet_windows", { file: "probe.json" })}`,
    `sites = position_probe(model, val, offsets, causal=${ctx.setup.causal ? "True" : "False"})["sites"]`,
    "print(next(s for s in sites if s[\"site\"] == \"residual\" and s[\"layer\"] == 1))",
  ].join("\n"),
};

/** Loss with every pair turning and with each band stopped; beside it, the previous-character head's attention. */
function bandsFigure(f) {
  // The bars' names on two lines, level (turned, they took half a projector's chart); on a phone on three, narrower,
  // or the names of neighbouring bars ran into each other.
  const narrow = narrowScreen();
  const names = ["all", "fastest", "slowest"].map((b) => wrapLabel(tr(`bands_bar_${b}`), narrow ? 9 : 12));
  const bar = (name, y, color, axis, text) => ({
    type: "bar", name: esc(name), x: names, y, yaxis: axis, offsetgroup: axis, marker: { color },
    text: y.map(text), textposition: "outside", cliponaxis: false, hovertemplate: `%{x} · %{text}<extra>${esc(name)}</extra>`,
  });
  return {
    data: [
      bar(tr("bands_loss", { windows: f.windows }), [f.loss, f.loss_fastest, f.loss_slowest], COLORS.with, "y", nats),
      bar(tr("bands_previous", { layer: f.layer, head: f.head }), [f.previous, f.previous_fastest, f.previous_slowest],
        COLORS.without, "y2", (x) => `${pct(x)}%`),
    ],
    layout: baseLayout({
      height: narrow ? 340 : 300,
      margin: { l: 56, r: 56, t: 40, b: 40 },
      barmode: "group",
      showlegend: true,
      // Above the bars on a phone too: below them it lay on the bars' names once they took three lines.
      legend: { orientation: "h", x: 0, y: 1.02, yanchor: "bottom", font: { size: TYPE.legend } },
      xaxis: lineAxis("", { type: "category", automargin: true, tickangle: 0 }),
      // Few ticks a side (0, 10; 0 %, 50 %, 100 %): more ran into each other on a projector's short chart.
      yaxis: lineAxis(tr("bands_axis_loss"), { rangemode: "tozero", nticks: 2 }),
      yaxis2: lineAxis(tr("bands_axis_previous"), { overlaying: "y", side: "right", range: [0, 1], tickformat: ".0%",
        showgrid: false, color: MUTED, tickmode: "linear", tick0: 0, dtick: 0.5 }),
    }),
  };
}

export const bands = {
  panel: "panel-speeds",
  async fetch(ctx, signal) {
    // The pair shares on the previous character's key: which pairs the previous-character head reads.
    const [verdict, speeds] = await Promise.all([postVerdict(ctx.step.id, ctx.setup, signal), getJson("/api/rope/speeds", {}, signal)]);
    return { verdict, speeds };
  },
  judge(data, ctx) {
    const v = data.verdict;
    if (v.outcome === null) return noOutcome(v, ctx.setup);
    const f = v.figures;
    return judged(v, sentences([
      tr("bands_verdict", { loss: fig(f, "loss", nats), fastest: fig(f, "loss_fastest", nats),
        slowest: fig(f, "loss_slowest", nats), layer: fig(f, "layer", String), head: fig(f, "head", String),
        previous: share(f, "previous"), previous_fastest: share(f, "previous_fastest"),
        previous_slowest: share(f, "previous_slowest") }),
      tr(`bands_${v.outcome}`, { cost_fastest: fig(f, "cost_fastest", nats), cost_slowest: fig(f, "cost_slowest", nats),
        tie: fig(f, "tie", nats), turned: fig(f, "turned_slowest", places), degrees: fig(f, "degrees_fastest", places) }),
    ]), f.cost_fastest);
  },
  charts(data) {
    const v = data.verdict;
    if (v.outcome === null) return [];
    const f = v.figures;
    return [{
      // The loss on probe.json's every third window, not the whole text's under the weights: the caption says which.
      name: "bands", caption: tr("chart_bands", { windows: f.windows }),
      alt: tr("chart_bands_alt", { loss: nats(f.loss), fastest: nats(f.loss_fastest), slowest: nats(f.loss_slowest) }),
      figure: bandsFigure(f),
    }, {
      name: "speeds", caption: tr("chart_bands_speeds"), alt: tr("chart_bands_speeds_alt"),
      figure: speedsFigure({ speeds: data.speeds, measure: "distance_1" }),
    }];
  },
  notice: () => tr("bands_use"),
  snippet: () => [
    "from model.assets import checkpoint_path",
    "from model.checkpoint import load_checkpoint",
    "from model.rope_speeds import band_effect",
    "from model.train import load_data",
    "from model.windows import window_offsets",
    "",
    'model, tok, meta = load_checkpoint(checkpoint_path("rope"))',
    "val, T = load_data().val, model.config.block_size",
    `offsets = window_offsets(len(val), T, T)[::3]  # ${tr("snippet_windows", { file: "probe.json" })}`,
    "for band in (None, \"fastest\", \"slowest\"):",
    "    print(band, band_effect(model, val, offsets, band)[\"val_loss\"])",
  ].join("\n"),
};
