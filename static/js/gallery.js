// The head gallery: what each head of the trained models looks at, measured once on the validation
// poems (/api/heads). One small bar chart per head (mean attention d characters back, d = 0..16) and
// the head's sentence, for learned, rope and none side by side; the mode chosen above comes first.

import { $, clear, el } from "./dom.js";
import { escapePlotly as esc, tr } from "./i18n.js";
import { MODE_STYLE, MUTED, TYPE, baseLayout, lineAxis } from "./plots.js";
import { modeLabel } from "./plots-results.js";

const MODE_ORDER = ["learned", "rope", "none"];

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

function headCard(position, layer, head) {
  const caption = el("figcaption", { className: "gallery-head__caption" }, [
    el("span", { className: "gallery-head__name", text: tr("gallery_head", { layer: layer.layer, head: head.head }) }),
    el("span", { className: "gallery-head__sentence", text: head.summary[document.documentElement.lang] ?? head.summary.en }),
  ]);
  const plot = el("div", { className: "plot plot--gallery", attrs: { "aria-hidden": "true" } });
  const figure = el("figure", { className: "gallery-head", dataset: { position, layer: String(layer.layer), head: String(head.head) } },
    [caption, plot]);
  return { figure, plot, draw: (top) => offsetFigure(head, position, top) };
}

/** Draw the gallery into #gallery. Charts are static images: the sentence is their text. */
export async function renderGallery(data, chosen) {
  const root = clear($("#gallery"));
  const models = [...(data.models ?? [])].sort((a, b) => (a.position === chosen ? -1 : b.position === chosen ? 1
    : MODE_ORDER.indexOf(a.position) - MODE_ORDER.indexOf(b.position)));
  const top = 1.05 * Math.max(...models.flatMap((m) => m.layers.flatMap((l) => l.heads.flatMap((h) => h.by_offset))));
  const drawn = [];
  for (const m of models) {
    const cards = m.layers.flatMap((layer) => layer.heads.map((head) => headCard(m.position, layer, head)));
    root.append(el("section", {
      className: `gallery-mode${m.position === chosen ? " is-chosen" : ""}`,
      dataset: { position: m.position },
    }, [
      el("h3", { className: "gallery-mode__title", text: modeLabel(m.position) }),
      el("div", { className: "gallery-mode__heads" }, cards.map((c) => c.figure)),
    ]));
    drawn.push(...cards);
  }
  // Drawn once every column is in place: Plotly sizes a chart to its container as it stands.
  await Promise.all(drawn.map((card) => {
    const { data: traces, layout } = card.draw(top);
    return window.Plotly.react(card.plot, traces, layout, { staticPlot: true, responsive: true });
  }));
}
