// The head gallery: what each head of the trained models looks at, measured once on the validation
// poems (/api/heads). One small bar chart per head (mean attention d characters back, d = 0..16) and
// the head's sentence, for learned, rope and none side by side; the mode chosen above comes first.
// Beside each sentence, what turning the head off costs on the validation poems (its `ablation`), and a
// switch that turns it off on the explorer's line A (heads-off.js, shared with the ablation panel). At a
// training step (the slider, step-control.js) the gallery draws /api/heads?step=N, and the switches work on
// the model at that step: the ablation panel sends the same step to /api/ablate.

import { offLabel } from "./ablation.js";
import { MODES } from "../shared/constants.js";
import { $, $$, clear, el, show } from "../shared/dom.js";
import { headsOff } from "./heads-off.js";
import { headRoleText } from "./head-role.js";
import { escapePlotly as esc, tr } from "../shared/i18n.js";
import { KINDS, kindFigure } from "./plots-ablation.js";
import { MODE_STYLE, MUTED, TYPE, baseLayout, lineAxis } from "../shared/plots.js";
import { modeLabel } from "./plots-results.js";
import { askedStep } from "./step-control.js";


/** One y range for every chart, so a flat head looks flat beside a sharp one. */
function offsetFigure(head, position, top) {
  const style = MODE_STYLE[position] ?? MODE_STYLE.learned;
  const x = head.by_offset.map((_, d) => d);
  return {
    data: [{
      type: "bar",
      x,
      y: head.by_offset,
      marker: { color: style.color },
      hovertemplate: `${esc(tr("gallery_hover", { d: "%{x}" }))} %{y:.0%}<extra></extra>`,
    }],
    layout: baseLayout({
      height: 150,
      margin: { l: 8, r: 8, t: 4, b: 8 },
      showlegend: false,
      bargap: 0.15,
      xaxis: lineAxis(tr("gallery_axis_offset"), { tickvals: [0, 1, 5, 7, 12, 16], range: [-0.6, x.length - 0.4] }),
      yaxis: lineAxis("", { tickformat: ".0%", nticks: 3, range: [0, top], tickfont: { size: TYPE.tick, color: MUTED } }),
    }),
  };
}

/** "+0.25" with the language's decimal sign, for a loss increase in nats per character. */
function signed(value) {
  return `${value >= 0 ? "+" : "\u2212"}${Math.abs(value).toFixed(2)}`;
}

/** What turning the head off costs on the validation poems: a sentence, and a bar per kind of next character. */
function ablationPart(head, reuse) {
  if (!head.ablation) return { nodes: [], plot: null };
  const a = head.ablation;
  const parts = KINDS.map((k) => tr("gallery_ablation_kind", { kind: tr(`ablation_kind_${k}`), v: signed(a.by_kind[k]) }));
  const text = el("p", {
    className: "gallery-head__ablation",
    text: tr("gallery_ablation", { v: signed(a.loss_increase), kinds: parts.join(tr("ablation_list_sep")) }),
  });
  const plot = reuse ?? el("div", { className: "plot plot--gallery-ablation", attrs: { "aria-hidden": "true" } });
  return { nodes: [text, plot], plot };
}

/**
 * reuse: the charts this head's card had before (another training step), redrawn in place: Plotly updates a
 * chart it already drew much faster than it draws a new one, so the slider answers sooner.
 */
function headCard(position, layer, head, range, reuse = {}) {
  const caption = el("figcaption", { className: "gallery-head__caption" }, [
    el("span", { className: "gallery-head__name", text: tr("gallery_head", { layer: layer.layer, head: head.head }) }),
    el("span", { className: "gallery-head__sentence", text: headRoleText(head.role) }),
  ]);
  const plot = reuse.plot ?? el("div", { className: "plot plot--gallery", attrs: { "aria-hidden": "true" } });
  const ablation = ablationPart(head, reuse.ablation);
  const toggle = el("button", {
    type: "button", className: "button gallery-switch", dataset: { position, layer: String(layer.layer), head: String(head.head) },
    onclick: () => headsOff.toggle(layer.layer, head.head),
  });
  const effect = el("p", { className: "gallery-head__effect", attrs: { "aria-live": "polite" } });
  const figure = el("figure", { className: "gallery-head", dataset: { position, layer: String(layer.layer), head: String(head.head) } },
    [caption, plot, ...ablation.nodes, toggle, effect]);
  return {
    figure, plot, ablationPlot: ablation.plot,
    draw: (top) => offsetFigure(head, position, top),
    drawAblation: () => kindFigure({ ablation: head.ablation, range }),
  };
}

/**
 * The switches follow the shared set; a card's switch works for the model whose line the ablation panel
 * shows (trained weights of that mode), and its card then says what the heads off do to that line.
 */
function wordSwitches() {
  const model = headsOff.answer?.model;
  for (const button of $$("#gallery .gallery-switch")) {
    const layer = Number(button.dataset.layer);
    const head = Number(button.dataset.head);
    // The answer must be for this mode's trained model at the step the gallery shows.
    const usable = model?.weights === "trained" && model.position === button.dataset.position
      && (model.step ?? null) === askedStep();
    const off = headsOff.has(layer, head);
    show(button, usable);
    button.setAttribute("aria-pressed", String(usable && off));
    button.textContent = tr(off ? "gallery_switch_on" : "gallery_switch_off");
    const effect = button.nextElementSibling;
    const answer = headsOff.answer;
    const shown = usable && off && answer.all_on.mean_loss !== null && answer.off.some((o) => o.layer === layer && o.head === head);
    effect.textContent = shown ? tr("gallery_effect", {
      run: offLabel(answer.off), on: answer.all_on.mean_loss.toFixed(2), off: answer.ablated.mean_loss.toFixed(2),
    }) : "";
    show(effect, shown);
  }
}

headsOff.subscribe(wordSwitches);

/** Draw the gallery into #gallery. Charts are static images: the sentence is their text. */
export async function renderGallery(data, chosen) {
  const root = $("#gallery");
  const cardKey = (position, layer, head) => `${position}-${layer}-${head}`;
  const previous = new Map($$(".gallery-head", root).map((f) => [
    cardKey(f.dataset.position, f.dataset.layer, f.dataset.head),
    { plot: $(".plot--gallery", f) ?? undefined, ablation: $(".plot--gallery-ablation", f) ?? undefined },
  ]));
  clear(root);
  const models = [...(data.models ?? [])].sort((a, b) => (a.position === chosen ? -1 : b.position === chosen ? 1
    : MODES.indexOf(a.position) - MODES.indexOf(b.position)));
  const top = 1.05 * Math.max(...models.flatMap((m) => m.layers.flatMap((l) => l.heads.flatMap((h) => h.by_offset))));
  // One range for the ablation bars of a mode's heads, with room above the tallest for its label: across
  // modes one head (none's layer 2 head 1, +6.6 on punctuation) would flatten every other bar.
  const ablationRange = (m) => {
    const increases = m.layers.flatMap((l) => l.heads.flatMap((h) => KINDS.map((k) => h.ablation?.by_kind[k] ?? 0)));
    return [Math.min(0, ...increases) * 1.3, Math.max(0, ...increases) * 1.3 || 1];
  };
  const drawn = [];
  for (const m of models) {
    const range = ablationRange(m);
    const cards = m.layers.flatMap((layer) => layer.heads.map((head) => headCard(m.position, layer, head, range,
      previous.get(cardKey(m.position, layer.layer, head.head)))));
    root.append(el("section", {
      className: `gallery-mode${m.position === chosen ? " is-chosen" : ""}`,
      dataset: { position: m.position },
    }, [
      el("h3", { className: "gallery-mode__title", text: modeLabel(m.position) }),
      el("div", { className: "gallery-mode__heads" }, cards.map((c) => c.figure)),
    ]));
    drawn.push(...cards);
  }
  wordSwitches();
  // Drawn once every column is in place: Plotly sizes a chart to its container as it stands.
  await Promise.all(drawn.flatMap((card) => {
    const figures = [[card.plot, card.draw(top)]];
    if (card.ablationPlot) figures.push([card.ablationPlot, card.drawAblation()]);
    return figures.map(([node, { data: traces, layout }]) =>
      window.Plotly.react(node, traces, layout, { staticPlot: true, responsive: true }));
  }));
}
