// What the lesson's kinds of step share (kinds.js): number formats, the verdict fetched beside a step's data and
// worded (judged), layer 1's heatmap of one line, and the Python lines that build the model on screen.

import { postCompare, postVerdict } from "../shared/api.js";
import { compareBody } from "../explorer/controls.js";
import { figure, num, tr } from "../shared/i18n.js";
import { heatmapFigure, maskPattern, visible } from "../shared/plots.js";

export const chars = (text) => [...(text ?? "")];
export const pct = (x) => (100 * x).toFixed(0);
export const fixed = (x, digits = 3) => num(Number(x).toFixed(digits)); // 4,517 in French
export const two = (x) => fixed(x, 2);
export const three = (x) => num(Number(x).toPrecision(3)); // three significant digits
export const py = (text) => JSON.stringify(text); // a JSON string is a valid Python string literal
export const mean = (xs) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
/** The verdict's figure f[name] as format prints it, keyed by its name for the page (data-figure). */
export const fig = (f, name, format = (x) => x) => figure(name, format(f[name]), f[name]);

/**
 * f[a] − f[b] as the page prints it beside f[a] and f[b] (digits decimals each): the difference of the printed
 * operands, so that 4.438 − 4.420 reads 0.018 on the line, not the raw 4.4378 − 4.4205's 0.017. Keyed as that
 * arithmetic, "round(a, 3) - round(b, 3)", which tests/e2e/test_referee.py recomputes.
 */
export function shownDifference(f, a, b, digits = 3) {
  const value = Number(Number(f[a]).toFixed(digits)) - Number(Number(f[b]).toFixed(digits));
  return figure(`round(${a}, ${digits}) - round(${b}, ${digits})`, fixed(value, digits), value);
}

/** The step's own data and the server's verdict on the same setup, fetched side by side: data.verdict. */
export function withVerdict(fetchData) {
  return async (ctx, signal) => {
    const [data, verdict] = await Promise.all([fetchData(ctx, signal), postVerdict(ctx.step.id, ctx.setup, signal)]);
    return { ...data, verdict };
  };
}

/** What every kind's judge returns: the server's outcome, worded. */
export function judged(data, text, value) {
  const v = data.verdict;
  return { outcome: v.outcome, accepted: v.accepted, text, value, unknown: v.unknown, rule: v.rule };
}

/** The comparison and the verdict of a step whose verdict does not read the comparison: both asked at once. */
export const fetchCompareBeside = withVerdict((ctx, signal) => postCompare(compareBody(ctx.setup), signal));

/** Line 0 (A) or 1 (B), one head of layer 1: the explorer's heatmap. */
export function heatmapChart(data, lineIndex, head) {
  const line = data.lines[lineIndex];
  const name = lineIndex === 0 ? "A" : "B";
  const z = maskPattern(line.attention[0][head], data.model.causal);
  const last = z[z.length - 1];
  const top = last.indexOf(Math.max(...last.filter((v) => v !== null)));
  return {
    name: `heatmap-${name}-${head + 1}`,
    caption: tr(data.model.causal ? "chart_heatmap" : "chart_heatmap_nomask", { h: head + 1, line: name }),
    alt: tr("chart_heatmap_alt", {
      h: head + 1, line: name, text: line.text, w: fixed(last[top], 2), ch: visible(line.tokens[top]),
    }),
    figure: heatmapFigure({ tokens: line.tokens, z, kind: "pattern" }),
    heatmap: true,
  };
}

export function modelLines(setup) {
  if (setup.weights === "trained") {
    return [
      "from model.assets import checkpoint_path",
      "from model.checkpoint import load_checkpoint",
      "",
      `model, tok, meta = load_checkpoint(checkpoint_path(${py(setup.position)}))`,
    ];
  }
  return [
    "from model import GPT, GPTConfig, CharTokenizer",
    "from model.assets import VOCAB_PATH",
    "",
    "tok = CharTokenizer.load(VOCAB_PATH)",
    `cfg = GPTConfig(vocab_size=tok.vocab_size, n_layer=${setup.n_layer}, n_head=${setup.n_head}, n_embd=128, ` +
      `position=${py(setup.position)})`,
    "model = GPT(cfg, seed=0).eval()",
  ];
}
