// The kinds of step that compare two lines (POST /api/compare): same or different, the mask's leak, positions
// added, and the 129th character. A kind as in kinds.js.

import { postCompare, postStepCompare } from "../shared/api.js";
import { compareBody } from "../explorer/controls.js";
import { figure, labelled, num, sentences, tr } from "../shared/i18n.js";
import { sci, visible } from "../shared/plots.js";
import { modeInSentence } from "../explorer/plots-results.js";
import { alignedFigure, alignLastRow, gapBarsFigure } from "./figures.js";
import { chars, fig, heatmapChart, judged, modelLines, py, withVerdict } from "./kind-parts.js";

/** A same-or-different step's comparison and its verdict (api.js postStepCompare): one request when float32 decides. */
const fetchCompare = (ctx, signal) => postStepCompare(ctx.step.id, ctx.setup, signal);

// The reasons that quote the content control (mask off, no positions) as rounding: the answer of "Switch the mask
// off" (step 3) for lines of the same characters. The reasons content and last_differs quote it as a real gap, on
// lines of other characters, which that step does not ask about.
const QUOTE_CONTENT_ROUNDING = new Set(["mask", "position", "position_mask", "other"]);

/**
 * The later step that asks what the content control shows, while this screen has not answered it ({n, setup}),
 * else null: the same weights with the mask off and no positions are its question when the mask is on here and the
 * model is at least as deep as that step's (one layer masks nothing at the last position: step 1's question).
 */
function contentAsked(verdict, ctx) {
  const later = ctx.later?.("nomask");
  const deep = later && verdict.figures.n_layer >= later.setup.n_layer;
  return deep && ctx.setup.causal && QUOTE_CONTENT_ROUNDING.has(verdict.reason) ? later : null;
}

// The reasons whose sentence quotes the content control (mask off, positions removed) with its figure.
const QUOTE_CONTENT = new Set(["content", "content_open", "last_differs", "last_differs_open", "position", "position_mask",
  "mask", "other"]);

/**
 * Whether the verdict quotes the content control of a one-layer model: the last position masks nothing there, so
 * that control and the grey bar (positions removed, mask on) are one experiment in two precisions, and the notice
 * says so rather than leave two figures for one idea (a French review).
 */
function quotesContentAtOneLayer(verdict, ctx) {
  const f = verdict.figures;
  return f.n_layer === 1 && f.gap_content !== undefined && QUOTE_CONTENT.has(verdict.reason) && !contentAsked(verdict, ctx);
}

/** Why the gap is what it is, in the words of the server's reason id, quoting the controls it was decided by; a
 * control that a later step asks the student to predict is named with that step, and its figure held back. */
function reason(verdict, ctx) {
  const setup = ctx.setup;
  const a = chars(setup.line_a);
  const b = chars(setup.line_b);
  const f = verdict.figures;
  // Each control's gap with the precision it was measured in: a float64 rerun's 6.11 × 10⁻¹⁶ and float32's
  // 3.87 × 10⁻⁷ in the notice are the same control, and say so.
  const control = (name) => {
    const value = fig(f, `gap_${name}`, sci);
    const by = verdict.controls_by?.[`gap_${name}`];
    return by ? tr(`figure_${by}`, { value }) : value;
  };
  const vars = {
    x: visible(a.at(-1) ?? ""), y: visible(b.at(-1) ?? ""), mode: modeInSentence(setup.position),
    n_layer: fig(f, "n_layer"), content: control("content"), mask: control("mask"), positions: control("positions"),
  };
  const asked = contentAsked(verdict, ctx);
  if (asked) {
    // Without positions the mask's control is the model on screen itself: nothing is removed, nothing run again.
    const own = setup.position === "none" && verdict.reason === "mask" ? "_nopos" : "";
    return sentences([tr(`reason_${verdict.reason}_later${own}`, vars),
      tr("control_later", { step: figure("step_nomask", asked.n, asked.n) })]);
  }
  return tr(`reason_${verdict.reason}`, vars);
}

/** Steps that ask "same or different" (or "stays or gone", "rounding or large"): the last position's gap.
 * caption: the bars' text key, or a function of the answer giving one. */
function gapKind({ bars, caption = "chart_bars", notice, lesson }) {
  return {
    fetch: fetchCompare,
    judge(data, ctx) {
      const v = data.verdict;
      const f = v.figures;
      // A gap far above float32's own error is decided without a float64 rerun (decided_by, api: figures).
      const key = v.difference === "rounding" ? "gap_rounding" : v.decided_by === "float32" ? "gap_real32" : "gap_real";
      const numbers = v.difference
        ? tr(key, { gap: fig(f, "gap", sci), gap64: fig(f, "gap64", sci), limit: fig(f, "rounding_limit", sci),
          limit32: fig(f, "float32_limit", sci) })
        : "";
      return judged(data, sentences([numbers, reason(v, ctx)]), f.gap);
    },
    charts(data, ctx) {
      return [barsChart(bars(data, ctx), typeof caption === "function" ? caption(data) : caption), ...(ctx.step.kind === "posemb" || ctx.step.kind === "order" || ctx.step.kind === "pair"
        ? [alignedChart(data), heatmapChart(data, 0, 0), heatmapChart(data, 1, 0)] : [])];
    },
    notice: notice ?? ((data) => alignedNotice(data)),
    lesson,
    snippet: (ctx, data) => gapSnippet(ctx.setup, data),
    batched: true, // the page's number comes from one batch of both lines; the snippet runs them apart
  };
}

function barsChart(items, caption) {
  const list = items.map((item) => labelled(item.label, sci(item.value))).join(tr("list_sep"));
  // A log axis has no place for 0: lines the model reads as the same get a sentence, not an empty chart.
  if (items.every((item) => item.value === 0)) {
    return { name: "gap", caption: tr(caption), alt: tr("chart_bars_zero"), missing: true };
  }
  return { name: "gap", caption: tr(caption), alt: tr("chart_bars_alt", { items: list }), figure: gapBarsFigure({ items }) };
}

function aligned(data) {
  const [a, b] = data.lines;
  return alignLastRow(data.alignment, a.tokens, a.attention[0], b.attention[0]);
}

function alignedChart(data) {
  const result = aligned(data);
  if (!result) return { name: "aligned", caption: tr("chart_aligned"), alt: tr("chart_aligned_missing"), missing: true };
  let best = { gap: -1, h: 0, i: 0 };
  result.z.forEach((row, h) => row.forEach((v, i) => {
    if (Math.abs(v) > best.gap) best = { gap: Math.abs(v), h, i };
  }));
  // The largest gap is the notice's figure, measured by the server from float32 values: the cells' own, from the
  // JSON's rounded decimals, can differ from it by a rounding's size (2.00 × 10⁻⁸ against 1.49 × 10⁻⁸). Where the
  // gaps are rounding no cell stands out, and no head or character is named.
  const v = data.verdict;
  const gap = v.figures.aligned_gap ?? best.gap;
  const alt = gap === 0 ? tr("chart_aligned_alt_zero")
    : v.aligned === "rounding" ? tr("chart_aligned_alt_rounding", { gap: sci(gap) })
      : tr("chart_aligned_alt", { gap: sci(gap), h: best.h + 1, ch: visible(result.chars[best.i]) });
  return { name: "aligned", caption: tr("chart_aligned"), alt, figure: alignedFigure(result) };
}

function alignedNotice(data) {
  const result = aligned(data);
  // Lines that cannot be aligned: the aligned chart's place says so, once on the screen (a French review).
  if (!result) return "";
  if (!data.verdict.aligned) return tr("chart_aligned_missing");
  const v = data.verdict;
  // float32's gap as the server measured it from float32 values, not from the JSON's rounded decimals.
  // Exactly 0 in both precisions (the same line twice) is no rounding: nothing was there to round.
  const zero = v.figures.aligned_gap === 0 && v.figures.aligned_gap64 === 0;
  const text = zero ? tr("notice_aligned_zero") : tr(v.aligned === "rounding" ? "notice_aligned" : "notice_aligned_moved", {
    gap: fig(v.figures, "aligned_gap", sci), gap64: fig(v.figures, "aligned_gap64", sci),
  });
  // Layer 1 blind to the order while the output tells the lines apart: the order came in at a later layer.
  const later = v.aligned === "rounding" && v.difference === "real" && v.figures.n_layer > 1 && data.model.causal;
  return sentences([text, later ? tr("notice_aligned_later", { n_layer: fig(v.figures, "n_layer") }) : ""]);
}

/** A mode as a bar's label says it: "no positions" rather than the mode's name "none"; and the mask when off. */
function modePhrase(position, causal = true) {
  const mode = modeInSentence(position);
  return causal ? mode : tr("mode_mask_off", { mode });
}

/**
 * The later step that asks about an untrained model of this mode and mask at its own depth (ex1: three layers, no
 * positions, the mask on), while this screen has not answered it ({n, setup}), else null: that depth's grey bar
 * would be its answer, so it is held back.
 */
function depthAsked(data, ctx) {
  const later = ctx.later?.("ex1");
  const m = data.model;
  // The student chose that very depth untrained: the blue bar and the verdict already show it, nothing to hold.
  const shown = later && m.weights !== "trained" && m.n_layer === later.setup.n_layer;
  return later && !shown && m.position === later.setup.position && m.causal === later.setup.causal ? later : null;
}

/** The untrained models of 1 to 3 layers in the same mode, heads and mask, but a depth a later step asks about. */
function depthRows(data, ctx) {
  const asked = depthAsked(data, ctx);
  return data.by_depth.filter((row) => !asked || row.n_layer !== asked.setup.n_layer);
}

/** The model on screen first, then the untrained models of the other depths (depthRows). */
function depthBars(data, ctx) {
  const model = data.model;
  const mode = modePhrase(model.position, model.causal); // the grey bars were run with the same mask
  const onScreen = {
    label: tr(model.weights === "trained" ? "bar_model_trained" : "bar_model_random", { n_layer: model.n_layer, mode }),
    value: data.difference.with_position.max_abs,
    current: true,
  };
  const untrained = depthRows(data, ctx)
    .filter((row) => model.weights === "trained" || row.n_layer !== model.n_layer)
    .map((row) => ({ label: tr("bar_depth", { n_layer: row.n_layer, mode }), value: row.with_position.max_abs }));
  return [onScreen, ...untrained];
}

/** The untrained models' gaps by depth, as printed: "from 1 to 3 layers" only when the two ends differ as printed. */
function depthNotice(data, ctx) {
  const rows = depthRows(data, ctx);
  const mode = modePhrase(data.model.position, data.model.causal);
  const printed = rows.map((row) => sci(row.with_position.max_abs));
  const last = rows.at(-1).n_layer;
  let text;
  if (rows.every((row) => row.with_position.max_abs === 0)) {
    text = tr("notice_depth_zero", { n_layer: last });
  } else if (printed.every((p) => p === printed[0])) {
    text = tr("notice_depth_same", { mode, n_layer: last, gap: printed[0] });
  } else if (printed[0] === printed.at(-1)) {
    const list = rows.map((row, i) => labelled(tr("bar_depth", { n_layer: row.n_layer, mode }), printed[i]));
    text = tr("notice_depth_each", { mode, list: list.join(tr("list_sep")) });
  } else {
    text = tr("notice_depth", { n_layer: last, d1: printed[0], dn: printed.at(-1), mode });
  }
  const asked = depthAsked(data, ctx);
  const held = asked && tr("depth_later", { n_layer: asked.setup.n_layer, step: figure("step_ex1", asked.n, asked.n) });
  return sentences([text, held]);
}

function gapSnippet(setup, data) {
  const causal = setup.causal ? "True" : "False";
  return [
    "import torch",
    "from model.experiments import logits_difference",
    ...modelLines(setup),
    "",
    `a = model.trace(torch.tensor([tok.encode(${py(setup.line_a)})]), causal=${causal}).logits[0, -1]`,
    `b = model.trace(torch.tensor([tok.encode(${py(setup.line_b ?? setup.line_a)})]), causal=${causal}).logits[0, -1]`,
    `print(logits_difference(a, b)["max_abs"])  # ${labelled(tr("bar_this"), sci(data.difference.with_position.max_abs))}`,
  ].join("\n");
}

/** A figure of the lesson as it printed it: its own significant digits, as a power of ten (1.9e-02: 1.9 × 10⁻²). */
const printed = (value, lesson) => num(Number(value).toExponential(lesson.digits - 1));

/** The lesson's printed figure is for the step's own setup: beside another setup it only says so. */
function lessonFigure(text) {
  return (data, ctx) => (data.verdict.setup_is_lessons ? text(data, ctx) : tr("lesson_other_setup"));
}

const thisModelBar = (data) => [{ label: tr("bar_this"), value: data.difference.with_position.max_abs, current: true }];

export const order = gapKind({
  bars: thisModelBar,
  caption: "chart_bars_one",
  lesson: lessonFigure((data, ctx) => tr("order_lesson", {
    value: printed(ctx.step.lesson.value, ctx.step.lesson), ours: sci(data.difference.with_position.max_abs),
  })),
});

export const leak = gapKind({
  bars: depthBars,
  notice: depthNotice,
  lesson: lessonFigure((data, ctx) => tr("leak_lesson", {
    value: printed(ctx.step.lesson.value, ctx.step.lesson), with: printed(ctx.step.lesson.with, ctx.step.lesson), ours: sci(data.difference.with_position.max_abs),
  })),
});

export const nomask = gapKind({ bars: depthBars, notice: depthNotice });

export const pair = gapKind({ bars: thisModelBar, caption: "chart_bars_one" });

export const posemb = gapKind({
  // Under none there are no positions to remove: one bar, named and captioned as the model it is.
  caption: (data) => (data.model.position === "none" ? "chart_bars_one" : "chart_bars_posemb"),
  bars: (data) => (data.model.position === "none" ? thisModelBar(data) : [
    { label: tr("bar_without_positions"), value: data.difference.without_position.max_abs },
    { label: tr("bar_with_positions", { mode: modeInSentence(data.model.position) }), value: data.difference.with_position.max_abs, current: true },
  ]),
  notice: (data, ctx) => (data.model.position === "none" ? tr("notice_posemb_none", {
    with: sci(data.difference.with_position.max_abs),
  }) : sentences([tr("notice_posemb", {
    without: sci(data.difference.without_position.max_abs),
    with: sci(data.difference.with_position.max_abs),
    mode: modeInSentence(data.model.position),
  }), quotesContentAtOneLayer(data.verdict, ctx) ? tr("notice_posemb_one_layer") : ""])),
  lesson: lessonFigure((data, ctx) => tr("posemb_lesson", {
    value: printed(ctx.step.lesson.value, ctx.step.lesson), without: printed(ctx.step.lesson.without, ctx.step.lesson),
    ours: sci(data.difference.with_position.max_abs), ours_without: sci(data.difference.without_position.max_abs),
  })),
});

export const ex1 = gapKind({ bars: depthBars, notice: depthNotice });

/** The 129th character: the server's own refusal is the answer. */
export const limit = {
  // The verdict says whether the model takes the line; /api/compare's answer is only asked to show the refusal
  // happens (a 422 naming the line) or not. An empty line is refused by both, and the page says so as an error.
  fetch: withVerdict(async (ctx, signal) => {
    try {
      return { ok: await postCompare(compareBody(ctx.setup), signal) };
    } catch (error) {
      if (error?.fields?.some((e) => e.type === "too_many_positions")) return { refused: true };
      throw error;
    }
  }),
  judge(data, ctx) {
    const f = data.verdict.figures;
    // The line that is that long: the verdict counts the longer of the two.
    const line = chars(ctx.setup.line_a).length === f.n ? "A" : "B";
    const vars = { n: fig(f, "n"), rows: fig(f, "rows"), max: fig(f, "max"), pos: figure("n - 1", f.n - 1),
      last: figure("rows - 1", f.rows - 1), more: fig(f, "more"), line,
      mode: modeInSentence(ctx.setup.position) };
    return judged(data, tr(`limit_${data.verdict.reason}`, vars), f.n);
  },
  charts: () => [],
  notice: () => "",
  snippet: (ctx) => [
    "import torch",
    ...modelLines(ctx.setup),
    "",
    `x = torch.tensor([tok.encode(${py(ctx.setup.line_a)})])`,
    "print(x.shape)",
    // Only pos_emb's table runs out: under RoPE or no positions the same call goes through.
    `model(x)  # ${tr(ctx.setup.position === "learned" ? "snippet_limit" : "snippet_no_limit",
      { error: "ValueError", rows: ctx.options.max_chars.learned, mode: `'${ctx.setup.position}'` })}`,
  ].join("\n"),
};
