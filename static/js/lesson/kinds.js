// What each kind of step asks the server, draws, and concludes. Every verdict and every sentence
// to notice is computed here from the numbers the API returned for the setup on screen, so a
// student who changes the lines gets a true answer, not a script.
//
// A kind: fetch(ctx, signal) -> data; judge(data, ctx) -> {outcome, text, value?};
// charts(data, ctx) -> [{name, caption, alt, figure | table}]; notice, lesson, snippet -> text or "".
// ctx = {step, setup, options}.

import { getShipped, postCompare, postRelative } from "../api.js";
import { el } from "../dom.js";
import { grouped, sentences, tr } from "../i18n.js";
import { heatmapFigure, maskPattern, sci, visible } from "../plots.js";
import { relativeFigure, ropePairFigure, similarityFigure } from "../plots-positions.js";
import { headsLabel, lengthFigure, modeLabel, trainingFigure } from "../plots-results.js";
import { splitExercises } from "../shipped.js";
import { ROUNDING, alignLastRow, alignedFigure, gapBarsFigure } from "./figures.js";

const chars = (text) => [...(text ?? "")];
const pct = (x) => (100 * x).toFixed(0);
const fixed = (x, digits = 3) => Number(x).toFixed(digits);
const py = (text) => JSON.stringify(text); // a JSON string is a valid Python string literal
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);

// ---- /api/compare ------------------------------------------------------------------------------

export function compareBody(setup) {
  const body = { line_a: setup.a, line_b: setup.b ?? setup.a, position: setup.position, weights: setup.weights };
  // Trained weights fix their own shape; sending n_layer or n_head could only conflict with it.
  if (setup.weights === "random") Object.assign(body, { n_layer: setup.n_layer, n_head: setup.n_head });
  if (!setup.causal) body.causal = false;
  return body;
}

const fetchCompare = (ctx, signal) => postCompare(compareBody(ctx.setup), signal);

/** Why the gap is what it is, from the setup alone: the reason a teacher would give. */
function reason(setup, gap) {
  const a = chars(setup.a);
  const b = chars(setup.b);
  if (setup.a === setup.b) return tr("reason_identical");
  if (a.at(-1) !== b.at(-1)) return tr("reason_last", { x: visible(a.at(-1) ?? ""), y: visible(b.at(-1) ?? "") });
  if ([...a].sort().join("") !== [...b].sort().join("")) return tr("reason_content");
  const same = gap < ROUNDING;
  if (setup.position !== "none") return same ? tr("reason_tiny") : tr("reason_position", { mode: modeLabel(setup.position) });
  if (!setup.causal) return same ? tr("reason_nomask") : tr("reason_tiny");
  if (setup.n_layer >= 2 || setup.weights === "trained") {
    return same ? tr("reason_tiny") : tr("reason_mask", { n_layer: setup.n_layer ?? 2 });
  }
  return same ? tr("reason_blind") : tr("reason_tiny");
}

/** Steps that ask "same or different": outcome ids per step, e.g. nomask calls "same" "gone". */
function gapKind({ outcomes = { same: "same", different: "different" }, bars, notice, lesson }) {
  return {
    fetch: fetchCompare,
    judge(data, ctx) {
      const gap = data.difference.with_position.max_abs;
      const same = gap < ROUNDING;
      const verdict = tr(same ? "verdict_same" : "verdict_different", { d: sci(gap) });
      const text = sentences([verdict, reason(ctx.setup, gap)]);
      return { outcome: outcomes[same ? "same" : "different"], text, value: gap };
    },
    charts(data, ctx) {
      return [barsChart(bars(data, ctx)), ...(ctx.step.kind === "posemb" || ctx.step.kind === "order" || ctx.step.kind === "pair"
        ? [alignedChart(data), heatmapChart(data, 0, 0), heatmapChart(data, 1, 0)] : [])];
    },
    notice: notice ?? ((data) => alignedNotice(data)),
    lesson,
    snippet: (ctx, data) => gapSnippet(ctx.setup, data),
    batched: true, // the page's number comes from one batch of both lines; the snippet runs them apart
  };
}

function barsChart(items) {
  const list = items.map((item) => `${item.label}: ${sci(item.value)}`).join("; ");
  return { name: "gap", caption: tr("chart_bars"), alt: tr("chart_bars_alt", { items: list }), figure: gapBarsFigure({ items }) };
}

function aligned(data) {
  const [a, b] = data.lines;
  return alignLastRow(a.tokens, b.tokens, a.attention[0], b.attention[0]);
}

function alignedChart(data) {
  const result = aligned(data);
  if (!result) return { name: "aligned", caption: tr("chart_aligned"), alt: tr("chart_aligned_missing"), missing: true };
  let best = { gap: -1, h: 0, i: 0 };
  result.z.forEach((row, h) => row.forEach((v, i) => {
    if (Math.abs(v) > best.gap) best = { gap: Math.abs(v), h, i };
  }));
  return {
    name: "aligned",
    caption: tr("chart_aligned"),
    alt: tr("chart_aligned_alt", { gap: sci(best.gap), h: best.h + 1, ch: visible(result.chars[best.i]) }),
    figure: alignedFigure(result),
  };
}

function alignedNotice(data) {
  const result = aligned(data);
  if (!result) return tr("chart_aligned_missing");
  const gap = Math.max(...result.z.flat().map(Math.abs));
  return tr(gap < 1e-4 ? "notice_aligned" : "notice_aligned_moved", { gap: sci(gap) });
}

/** Line 0 (A) or 1 (B), one head of layer 1: the explorer's heatmap. */
function heatmapChart(data, lineIndex, head) {
  const line = data.lines[lineIndex];
  const name = lineIndex === 0 ? "A" : "B";
  const z = maskPattern(line.attention[0][head], data.model.causal);
  const last = z[z.length - 1];
  const top = last.indexOf(Math.max(...last.filter((v) => v !== null)));
  return {
    name: `heatmap-${name}-${head + 1}`,
    caption: tr("chart_heatmap", { h: head + 1, line: name }),
    alt: tr("chart_heatmap_alt", {
      h: head + 1, line: name, text: line.text, w: fixed(last[top], 2), ch: visible(line.tokens[top]),
    }),
    figure: heatmapFigure({ tokens: line.tokens, z, kind: "pattern" }),
    heatmap: true,
  };
}

function depthBars(data) {
  return data.by_depth
    .filter((row) => row.n_layer <= Math.max(2, data.model.n_layer))
    .map((row) => ({ label: tr("bar_lesson_pair", { n_layer: row.n_layer }), value: row.with_position.max_abs }));
}

function depthNotice(data) {
  const rows = depthBars(data);
  const d1 = rows[0].value;
  const dn = rows.at(-1).value;
  return tr("notice_depth", { n_layer: rows.length, d1: sci(d1), dn: sci(dn), ratio: sci(dn / Math.max(d1, 1e-12)) });
}

function modelLines(setup) {
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

function gapSnippet(setup, data) {
  const causal = setup.causal ? "True" : "False";
  return [
    "import torch",
    "from model.experiments import logits_difference",
    ...modelLines(setup),
    "",
    `a = model.trace(torch.tensor([tok.encode(${py(setup.a)})]), causal=${causal}).logits[0, -1]`,
    `b = model.trace(torch.tensor([tok.encode(${py(setup.b ?? setup.a)})]), causal=${causal}).logits[0, -1]`,
    `print(logits_difference(a, b)["max_abs"])  # ${tr("bar_this")}: ${sci(data.difference.with_position.max_abs)}`,
  ].join("\n");
}

// ---- the kinds ---------------------------------------------------------------------------------

const order = gapKind({
  bars: (data) => [{ label: tr("bar_this"), value: data.difference.with_position.max_abs }],
  lesson: (data, ctx) => tr("order_lesson", { value: sci(ctx.step.lesson.value), ours: sci(data.difference.with_position.max_abs) }),
});

const leak = gapKind({
  bars: depthBars,
  notice: depthNotice,
  lesson: (data, ctx) => tr("leak_lesson", {
    value: sci(ctx.step.lesson.value), with: sci(ctx.step.lesson.with), ours: sci(data.difference.with_position.max_abs),
  }),
});

const nomask = gapKind({ outcomes: { same: "gone", different: "stays" }, bars: depthBars, notice: depthNotice });

const pair = gapKind({ bars: (data) => [{ label: tr("bar_this"), value: data.difference.with_position.max_abs }] });

const posemb = gapKind({
  bars: (data) => [
    { label: tr("bar_without"), value: data.difference.without_position.max_abs },
    { label: tr("bar_with"), value: data.difference.with_position.max_abs },
  ],
  notice: (data) => tr("notice_posemb", {
    without: sci(data.difference.without_position.max_abs),
    with: sci(data.difference.with_position.max_abs),
    ratio: sci(data.difference.with_position.max_abs / Math.max(data.difference.without_position.max_abs, 1e-12)),
  }),
  lesson: (data, ctx) => tr("posemb_lesson", {
    value: sci(ctx.step.lesson.value), without: sci(ctx.step.lesson.without),
    ours: sci(data.difference.with_position.max_abs), ours_without: sci(data.difference.without_position.max_abs),
  }),
});

const ex1 = gapKind({ outcomes: { same: "rounding", different: "large" }, bars: depthBars, notice: depthNotice });

/** The 129th character: the server's own refusal is the answer. */
const limit = {
  async fetch(ctx, signal) {
    try {
      return { ok: await fetchCompare(ctx, signal) };
    } catch (error) {
      if (error?.fields?.length) return { refused: error.fields[0] };
      throw error;
    }
  },
  judge(data, ctx) {
    const n = Math.max(chars(ctx.setup.a).length, chars(ctx.setup.b).length);
    const rows = ctx.options.max_chars.learned;
    // Refused for another rule (an empty line): say so, without claiming anything about the table.
    if (data.refused && n <= ctx.options.max_chars[ctx.setup.position]) return { outcome: null, text: data.refused.msg, value: n };
    if (data.refused) return { outcome: "error", text: tr("limit_error", { msg: data.refused.msg, pos: n - 1 }), value: n };
    if (ctx.setup.position !== "learned" && n > rows) {
      return { outcome: "works", text: tr("limit_other", { mode: modeLabel(ctx.setup.position), n, max: ctx.options.max_chars[ctx.setup.position] }), value: n };
    }
    return { outcome: null, text: tr("limit_ok", { n, rows, more: rows - n + 1 }), value: n };
  },
  charts: () => [],
  notice: () => "",
  snippet: (ctx) => [
    "import torch",
    ...modelLines(ctx.setup),
    "",
    `x = torch.tensor([tok.encode(${py(ctx.setup.a)})])`,
    "print(x.shape)",
    "model(x)  # ValueError past 128 positions with position 'learned'",
  ].join("\n"),
};

/** The trained pos_emb's rows compared by cosine: neighbours against rows 32 or more apart. */
function tableNumbers(matrix) {
  const n = matrix.length;
  const adj = mean(matrix.slice(0, n - 1).map((row, i) => row[i + 1]));
  const far = [];
  let min = 1;
  matrix.forEach((row, i) => row.forEach((v, j) => {
    if (Math.abs(i - j) >= 32) far.push(v);
    min = Math.min(min, v);
  }));
  return { adj, far: mean(far), min };
}

const table = {
  fetch: () => getShipped("positions"),
  judge(data) {
    if (!data.learned) return { outcome: null, text: tr("sim_learned_empty") };
    const { adj, far, min } = tableNumbers(data.learned);
    const outcome = min > 0.9 ? "equal" : adj - far > 0.2 ? "neighbours" : "unrelated";
    return { outcome, text: tr("table_verdict", { adj: fixed(adj, 2), far: fixed(far, 2) }), value: adj };
  },
  charts(data) {
    if (!data.learned) return [];
    const { adj, far } = tableNumbers(data.learned);
    return [{
      name: "similarity", caption: tr("chart_similarity"),
      alt: tr("chart_similarity_alt", { adj: fixed(adj, 2), far: fixed(far, 2) }),
      figure: similarityFigure({ matrix: data.learned }),
    }];
  },
  notice(data) {
    if (!data.learned) return "";
    const row = data.learned[0].map((c, j) => ({ c, j })).slice(1).sort((x, y) => y.c - x.c);
    const [best, worst] = [row[0], row.at(-1)];
    return tr("notice_table", { m: best.j, c: fixed(best.c, 2), k: worst.j, ck: fixed(worst.c, 2) });
  },
  snippet: () => [
    "from model.assets import checkpoint_path",
    "from model.checkpoint import load_checkpoint",
    "from model.probes import cosine_similarity_matrix",
    "",
    'model, tok, meta = load_checkpoint(checkpoint_path("learned"))',
    "sim = cosine_similarity_matrix(model.pos_emb.weight[:128].detach())  # (128, 128)",
    "print(sim.diagonal(1).mean())  # rows one apart",
  ].join("\n"),
};

const degrees = (radians) => (radians * 180) / Math.PI;

const rotate = {
  fetch: fetchCompare,
  judge(data, ctx) {
    const r = data.rope;
    if (!r) return { outcome: null, text: tr("reason_position", { mode: modeLabel(ctx.setup.position) }) };
    const last = r.theta.length - 1;
    const n = r.angles.length;
    const outcome = r.theta[0] > r.theta[last] ? "first" : r.theta[0] < r.theta[last] ? "last" : "equal";
    const text = tr("rotate_verdict", {
      deg0: degrees(r.theta[0]).toPrecision(3), degl: degrees(r.theta[last]).toPrecision(3), last, n,
      tot0: degrees(r.theta[0] * (n - 1)).toFixed(0), totl: degrees(r.theta[last] * (n - 1)).toPrecision(3),
    });
    return { outcome, text, value: r.theta[0] };
  },
  charts(data) {
    const r = data.rope;
    if (!r) return [];
    const tokens = r.angles.map((_, p) => data.lines[0].tokens[p] ?? data.lines[1].tokens[p]);
    return [0, r.theta.length - 1].map((p) => ({
      name: `rope-pair-${p}`,
      caption: tr("chart_pair", { pair: p }),
      alt: tr("chart_pair_alt", { pair: p, n: r.angles.length, deg: degrees(r.theta[p]).toPrecision(3) }),
      figure: ropePairFigure({ rope: r, pair: p, tokens }),
    }));
  },
  notice(data) {
    const r = data.rope;
    if (!r) return "";
    const turn = (theta) => Math.round((2 * Math.PI) / theta).toLocaleString("en-US");
    return tr("notice_rotate", { p: ((2 * Math.PI) / r.theta[0]).toFixed(1), last: r.theta.length - 1, q: turn(r.theta.at(-1)) });
  },
  snippet: (ctx, data) => [
    "from model.rope import rope_frequencies",
    "",
    `theta = rope_frequencies(${data.rope?.head_dim ?? 32}, ${data.rope?.base ?? 10000})  # radians per position, one per pair`,
    "print(theta[0].item(), theta[-1].item())",
  ].join("\n"),
};

function spread(values) {
  return Math.max(...values) - Math.min(...values);
}

const relative = {
  fetch(ctx, signal) {
    const [first, second] = chars(ctx.setup.a);
    if (!first || !second) return Promise.resolve({ tooShort: true });
    return postRelative({ first, second, weights: ctx.setup.weights }, signal);
  },
  judge(data) {
    if (data.tooShort) return { outcome: null, text: tr("relative_need_two") };
    const rope = spread(data.scores.rope[0][0]);
    const learned = spread(data.scores.learned[0][0]);
    const flat = (s, ref) => s < 1e-3 * Math.max(1, ref);
    const scale = Math.max(...data.scores.learned[0][0].map(Math.abs));
    const ropeFlat = flat(rope, scale);
    const learnedFlat = flat(learned, scale);
    const outcome = ropeFlat && learnedFlat ? "both" : ropeFlat ? "rope" : learnedFlat ? "learned" : "neither";
    const text = tr("relative_verdict", {
      first: visible(data.first), second: visible(data.second), last: data.starts.at(-1), rope: sci(rope), learned: sci(learned),
    });
    return { outcome, text, value: rope };
  },
  charts(data) {
    if (data.tooShort) return [];
    return [{
      name: "relative",
      caption: tr("chart_relative", { first: visible(data.first), second: visible(data.second) }),
      alt: tr("chart_relative_alt", { rope: sci(spread(data.scores.rope[0][0])), learned: sci(spread(data.scores.learned[0][0])) }),
      figure: relativeFigure({ starts: data.starts, scores: data.scores, layer: 1, head: 1 }),
    }];
  },
  notice: (data) => (data.tooShort || !data.scores.none ? "" : tr("notice_relative", { none: sci(spread(data.scores.none[0][0])) })),
  snippet: (ctx) => [
    "from model.assets import checkpoint_path",
    "from model.checkpoint import load_checkpoint",
    "from model.probes import pair_scores",
    "",
    'model, tok, meta = load_checkpoint(checkpoint_path("rope"))',
    `first, second = tok.encode(${py(chars(ctx.setup.a).slice(0, 2).join(""))})`,
    "scores = pair_scores(model, first, second, range(0, 127, 6))  # (layer, head, start)",
    "print((scores[0, 0].max() - scores[0, 0].min()).item())",
  ].join("\n"),
};

function ropeLength(data) {
  const run = (data.runs ?? []).find((r) => r.position === "rope");
  if (!run) return null;
  const n = run.train_length;
  return { run, before: mean(run.loss.slice(0, n)), after: mean(run.loss.slice(n)) };
}

const length = {
  fetch: () => getShipped("length"),
  judge(data) {
    const r = ropeLength(data);
    if (!r) return { outcome: null, text: tr("results_empty") };
    const outcome = r.after - r.before > 0.05 ? "rises" : r.before - r.after > 0.05 ? "falls" : "flat";
    return { outcome, text: tr("length_verdict", { before: fixed(r.before), after: fixed(r.after) }), value: r.after };
  },
  charts(data) {
    const r = ropeLength(data);
    if (!r) return [];
    return [{
      name: "length", caption: tr("chart_length"),
      alt: tr("chart_length_alt", { before: fixed(r.before), after: fixed(r.after) }),
      figure: lengthFigure({ runs: data.runs }),
    }];
  },
  notice(data) {
    const r = ropeLength(data);
    const none = (data.runs ?? []).find((run) => run.position === "none");
    if (!r || !none) return "";
    const before = mean(none.loss.slice(0, none.train_length));
    const after = mean(none.loss.slice(none.train_length));
    return tr("notice_length", {
      none_before: fixed(before), none_after: fixed(after), none_rise: fixed(after - before), rope_rise: fixed(r.after - r.before),
    });
  },
  snippet: () => [
    "import json",
    "from model.assets import WEIGHTS_DIR",
    "",
    'runs = json.loads((WEIGHTS_DIR / "length.json").read_text())["runs"]',
    'rope = next(r for r in runs if r["position"] == "rope")',
    'n, loss = rope["train_length"], rope["loss"]',
    "print(sum(loss[:n]) / n, sum(loss[n:]) / len(loss[n:]))",
  ].join("\n"),
};

const split = {
  async fetch(ctx, signal) {
    const response = await fetch("/api/head-split?n_embd=32&n_head=4&length=5", { signal, headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error(`/api/head-split: HTTP ${response.status}`);
    return response.json();
  },
  judge(data) {
    const p1 = data.params.find((p) => p.n_head === 1);
    const p4 = data.params.find((p) => p.n_head === 4);
    const total = (p) => p.qkv + p.proj;
    const outcome = total(p4) > 2 * total(p1) ? "more" : 2 * total(p4) < total(p1) ? "fewer" : "same";
    const text = tr("split_verdict", { qkv1: p1.qkv, proj1: p1.proj, qkv4: p4.qkv, proj4: p4.proj });
    return { outcome, text, value: total(p4) };
  },
  charts(data) {
    const shape = (s) => `(${s.join(", ")})`;
    const flow = el("ol", { className: "split-flow" }, ["q", "heads", "scores"].map((key) =>
      el("li", {}, [el("span", { text: tr(`split_shape_${key}`) }), el("code", { text: shape(data.shapes[key]) })])));
    const head = el("thead", {}, [el("tr", {}, ["params_heads", "params_head_dim", "params_qkv", "params_proj"]
      .map((key) => el("th", { scope: "col", text: tr(key) })))]);
    const body = el("tbody", {}, data.params.map((p) => el("tr", { className: p.n_head === data.n_head ? "is-current" : "" }, [
      el("th", { scope: "row", text: String(p.n_head) }),
      el("td", { text: String(data.n_embd / p.n_head) }),
      el("td", { text: String(p.qkv) }),
      el("td", { text: String(p.proj) }),
    ])));
    const table = el("table", { className: "data-table" }, [el("caption", { className: "visually-hidden", text: tr("chart_split") }), head, body]);
    return [{ name: "split", caption: tr("chart_split"), alt: "", table: el("div", {}, [flow, table]) }];
  },
  notice: (data) => tr("notice_split", {
    n_head: data.n_head, head_dim: data.shapes.heads[3], n_embd: data.n_embd, t: data.shapes.scores[3],
  }),
  lesson: (data, ctx) => {
    const p4 = data.params.find((p) => p.n_head === 4);
    return tr("split_lesson", { qkv: ctx.step.lesson.qkv, proj: ctx.step.lesson.proj, ours_qkv: p4.qkv, ours_proj: p4.proj });
  },
  snippet: () => [
    "from model.experiments import head_split",
    "",
    "print(head_split(n_embd=32, n_head=4, T=5))",
  ].join("\n"),
};

/** Per head of layer 1 on line A: weight on the previous character and on itself; pairwise distance. */
function headNumbers(data) {
  const heads = data.lines[0].attention[0]; // [head][query][key]
  const T = heads[0].length;
  const stats = heads.map((m) => ({
    prev: T > 1 ? mean(m.slice(1).map((row, q) => row[q])) : 0,
    self: mean(m.map((row, q) => row[q])),
  }));
  let worst = { tv: 0, h1: 1, h2: 1 };
  for (let i = 0; i < heads.length; i += 1) {
    for (let j = i + 1; j < heads.length; j += 1) {
      const tv = mean(heads[i].map((row, q) => 0.5 * row.reduce((s, w, k) => s + Math.abs(w - heads[j][q][k]), 0)));
      if (tv > worst.tv) worst = { tv, h1: i + 1, h2: j + 1 };
    }
  }
  return { stats, worst };
}

const heads = {
  fetch: fetchCompare,
  judge(data) {
    const { worst } = headNumbers(data);
    return { outcome: worst.tv > 0.25 ? "differ" : "alike", text: tr("heads_verdict", { ...worst, tv: pct(worst.tv) }), value: worst.tv };
  },
  charts: (data) => data.lines[0].attention[0].map((_, h) => heatmapChart(data, 0, h)),
  notice: (data) => sentences(headNumbers(data).stats
    .map((s, h) => tr("heads_notice", { h: h + 1, prev: pct(s.prev), self: pct(s.self) }))),
  snippet: (ctx) => [
    "import torch",
    ...modelLines(ctx.setup),
    "",
    `trace = model.trace(torch.tensor([tok.encode(${py(ctx.setup.a)})]))`,
    "pattern = trace.attention[0][0]  # layer 1: (n_head, T, T), query rows, key columns",
    "print(pattern.diagonal(-1, dim1=-2, dim2=-1).mean(-1))  # weight on the previous character, per head",
  ].join("\n"),
};

function finalLoss(run) {
  return run.final_val_loss ?? run.val_loss.at(-1);
}

/** "8<4<1" -> "8 heads < 4 heads < 1 head"; "rope<learned<none" -> the modes' names. */
export function orderLabel(order, key) {
  return order.split("<").map((part) => (key === "heads" ? headsLabel(Number(part)) : modeLabel(part))).join(" < ");
}

function trainingKind(key) {
  const runsOf = (data) => splitExercises(data.runs ?? [])[key];
  const name = (run) => (key === "heads" ? String(run.n_head) : run.position);
  const label = (run) => (key === "heads" ? headsLabel(run.n_head) : modeLabel(run.position));
  const listOf = (runs) => runs.map((r) => `${label(r)} ${fixed(finalLoss(r))}`).join(tr("list_sep"));
  return {
    fetch: () => getShipped("training"),
    judge(data, ctx) {
      const runs = runsOf(data);
      if (!runs.length) return { outcome: null, text: tr("results_empty") };
      const sorted = [...runs].sort((a, b) => finalLoss(a) - finalLoss(b));
      const outcome = sorted.map(name).join("<");
      return { outcome, text: tr(`${ctx.step.id}_verdict`, { list: listOf(runs), order: orderLabel(outcome, key) }) };
    },
    charts(data) {
      const runs = runsOf(data);
      if (!runs.length) return [];
      return [{ name: `training-${key}`, caption: tr("chart_training"), alt: tr("chart_training_alt", { list: listOf(runs) }),
        figure: trainingFigure({ runs, key }) }];
    },
    notice(data) {
      const losses = runsOf(data).map(finalLoss);
      return losses.length > 1 ? tr("notice_training", { gap: fixed(Math.max(...losses) - Math.min(...losses)) }) : "";
    },
    // The step count is the runs' own (every run has the same budget), never typed into the text.
    lesson: (data, ctx) => (ctx.step.id === "ex2" ? tr("ex2_lesson", { steps: grouped(runsOf(data)[0].steps.at(-1)) }) : ""),
    snippet: () => [
      "import json",
      "from model.assets import WEIGHTS_DIR",
      "",
      'for run in json.loads((WEIGHTS_DIR / "training.json").read_text())["runs"]:',
      '    print(run["position"], run["n_head"], run.get("final_val_loss", run["val_loss"][-1]))',
    ].join("\n"),
  };
}

export const KINDS = {
  order, leak, nomask, pair, posemb, limit, table, rotate, relative, length, split, heads, ex1,
  ex2: trainingKind("heads"),
  ex3: trainingKind("modes"),
};
