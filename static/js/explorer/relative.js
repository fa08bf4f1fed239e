// The relative-distance panel: two characters side by side, run alone as a two-character line at each
// start the server chose (the answer's starts). It asks /api/relative once the panel comes into view, then again whenever
// its characters or the page's weights, heads and layer count change. Its characters, layer and head
// live in the URL (rel_first, rel_second, rel_layer, rel_head).

import { ApiError, postRelative } from "../shared/api.js";
import { burst } from "../shared/burst.js";
import { fieldMessage, generalMessage } from "../shared/errors.js";
import { $, show } from "../shared/dom.js";
import { draw } from "../shared/draw.js";
import { fillRich, sentences, tr } from "../shared/i18n.js";
import { latest } from "../shared/latest.js";
import { whenVisible } from "../shared/lazy.js";
import { MODEL_PREFIX } from "./controls.js";
import { relativeFigure } from "./plots-positions.js";
import { unknownNote, weightsLabel } from "./panels.js";
import { visible } from "../shared/plots.js";

/**
 * Keep one character: the one just typed or pasted, not the one that was there before. {kept, dropped}: what is
 * left out of a paste of several ("ab" keeps a), said under the boxes rather than dropped silently.
 */
function oneChar(value, previous) {
  let chars = [...value];
  if (chars.length > 1 && previous) {
    const i = chars.indexOf(previous);
    if (i >= 0) chars = [...chars.slice(0, i), ...chars.slice(i + 1)];
  }
  return { kept: chars[0] ?? "", dropped: chars.slice(1).join("") };
}

/** The /api/relative body: the page's trained weights only when all three modes ship them, else its random shape. */
function relativeBody(ctx, chars) {
  if (ctx.weights.startsWith(MODEL_PREFIX)) {
    // An operator's model: its own mode only, which the chart draws alone.
    const model = ctx.weights.slice(MODEL_PREFIX.length);
    return { first: chars.first, second: chars.second, weights: "trained", model };
  }
  const weights = ctx.weights === "trained" && ctx.trainedAll ? "trained" : "random";
  const request = { first: chars.first, second: chars.second, weights };
  if (weights === "random") request.n_head = ctx.heads;
  if (weights === "random" && ctx.nLayer) request.n_layer = ctx.nLayer;
  return request;
}

/**
 * A failed request worded from each refused field's rule, in the page's language: an empty box asks for a
 * character, any other rule (an invisible character, a distance out of range) is named with its box.
 */
function errorText(error) {
  if (!(error instanceof ApiError) || error.status !== 422 || !error.fields.length) return generalMessage(error);
  return sentences(error.fields.map((field) => {
    if (field.type === "string_too_short" || field.type === "missing") return tr("rel_error_empty");
    const box = ["first", "second"].includes(field.field) ? tr(`rel_${field.field}_label`) : field.field;
    return tr("rel_error_field", { box, msg: fieldMessage(field) });
  }));
}

function setOptions(select, n, want) {
  const wanted = Array.from({ length: n }, (_, i) => String(i + 1));
  if ([...select.options].map((o) => o.value).join(",") !== wanted.join(",")) {
    select.replaceChildren(...wanted.map((v) => new Option(v, v)));
  }
  select.value = String(Math.min(want, n));
}

/**
 * One answer into the panel's elements (ui): the notes, the layer and head menus (the wanted view, within the
 * answer's shape), the caption and the chart. fellBack: the page shows trained weights, the answer is random.
 */
async function drawAnswer(ui, data, view, fellBack) {
  ui.note.textContent = fellBack ? tr("rel_random_fallback") : "";
  show(ui.note, fellBack);
  ui.unknown.textContent = unknownNote([data.first, data.second].filter((_, i) => data.unknown[i]));
  show(ui.unknown, Boolean(ui.unknown.textContent));
  const nLayer = data.scores.learned.length;
  const nHead = data.scores.learned[0].length;
  setOptions(ui.layer, nLayer, view.layer);
  setOptions(ui.head, nHead, view.head);
  const layer = Number(ui.layer.value);
  const head = Number(ui.head.value);
  // The caption says everything the chart depends on, the page's weights included.
  const weights = data.weights === "trained"
    ? tr("weights_trained_short")
    : weightsLabel({ weights: "random", seed: 0 });
  fillRich(ui.caption, tr("rel_caption", {
    first: visible(data.first), second: visible(data.second), layer, head, n_layer: nLayer, n_head: nHead, weights,
  }));
  const figure = relativeFigure({ starts: data.starts, scores: data.scores, layer, head });
  await draw(ui.plot, figure, `relative-layer${layer}-head${head}`);
  ui.plot.dataset.renderCount = String(Number(ui.plot.dataset.renderCount || 0) + 1);
}

/**
 * context() -> {weights: the page's weights, heads and nLayer: the page's random shape,
 *               trainedAll: whether trained weights ship for all three modes}
 * initial: {first, second, layer, head} from the URL; onChange(same) when the student changes one.
 */
export function createRelativePanel(context, { initial, onChange }) {
  const ui = {
    panel: $("#panel-relative"),
    first: $("#rel-first"),
    second: $("#rel-second"),
    layer: $("#rel-layer"),
    head: $("#rel-head"),
    plot: $("#rel-plot"),
    caption: $("#rel-caption"),
    note: $("#rel-weights-note"),
    unknown: $("#rel-unknown"),
    error: $("#rel-error"),
    kept: $("#rel-kept"),
  };
  const chars = { first: initial.first, second: initial.second };
  // The wanted layer and head: kept even while the answer has fewer, so a link's choice survives.
  const view = { layer: initial.layer, head: initial.head };
  ui.first.value = chars.first;
  ui.second.value = chars.second;
  let active = false;
  let data = null;
  let dataKey = null;
  const question = latest(); // the newest question wins
  // A character typed asks at once, or once a burst of keys pauses (burst.js).
  const edits = burst({ busy: () => question.busy });

  function setState(kind) {
    ui.panel.dataset.state = kind;
  }

  let shownError = null; // () => the message on screen, worded again after a language switch
  let shownKept = null; // () => what a paste of several characters left out, likewise

  function showError(words) {
    shownError = words;
    ui.error.textContent = words ? words() : "";
    show(ui.error, Boolean(words));
  }

  function showKept(words) {
    shownKept = words;
    ui.kept.textContent = words ? words() : "";
    show(ui.kept, Boolean(words));
  }

  function changed() {
    onChange({ ...chars, ...view });
  }

  async function redraw() {
    if (!data) return;
    await drawAnswer(ui, data, view, context().weights === "trained" && data.weights === "random");
    if (!question.busy && !edits.waiting) setState("ready");
  }

  async function fetchNow() {
    edits.cancel();
    if (!chars.first || !chars.second) {
      showError(() => tr("rel_error_empty"));
      setState("error");
      return;
    }
    const asked = relativeBody(context(), chars);
    const key = JSON.stringify(asked);
    if (key === dataKey || question.runningFor(key)) {
      if (key === dataKey && !question.busy) setState("ready");
      return;
    }
    setState("loading");
    let out;
    try {
      out = await question.run((signal) => postRelative(asked, signal), key);
    } catch (error) {
      setState("error");
      showError(() => errorText(error));
      return;
    }
    if (out.stale) return;
    data = { ...out.value, weights: asked.weights };
    dataKey = key;
    showError(null);
    await redraw();
  }

  function onInput(event) {
    if (event.isComposing) return;
    const name = event.target === ui.first ? "first" : "second";
    const { kept: ch, dropped } = oneChar(event.target.value, chars[name]);
    if (event.target.value !== ch) event.target.value = ch;
    chars[name] = ch;
    const box = `rel_${name}_label`;
    showKept(dropped ? () => tr("rel_kept_one", { box: tr(box), kept: visible(ch), dropped: visible(dropped) }) : null);
    if (ch) changed();
    if (!active) return;
    setState("loading");
    edits.edit(fetchNow);
  }

  for (const input of [ui.first, ui.second]) {
    input.addEventListener("input", onInput);
    input.addEventListener("compositionend", onInput);
    input.addEventListener("focus", () => input.select());
  }
  for (const [select, key] of [[ui.layer, "layer"], [ui.head, "head"]]) {
    select.addEventListener("change", () => {
      view[key] = Number(select.value);
      changed();
      redraw().catch(console.error);
    });
  }

  whenVisible(ui.panel, () => {
    active = true;
    fetchNow();
  });

  return {
    /** The page's weights or heads may have changed: fetch again if the panel is in use. */
    refresh() {
      if (active) fetchNow();
    },
    /** The language changed: redraw the labels, and word an error on screen again. */
    redraw() {
      if (shownError) showError(shownError);
      if (shownKept) showKept(shownKept);
      return redraw();
    },
    /** Back or forward in history: take the URL's characters, layer and head. */
    apply(rel) {
      Object.assign(chars, { first: rel.first, second: rel.second });
      Object.assign(view, { layer: rel.layer, head: rel.head });
      ui.first.value = chars.first;
      ui.second.value = chars.second;
      if (active) fetchNow().then(() => redraw()).catch(console.error);
    },
  };
}
