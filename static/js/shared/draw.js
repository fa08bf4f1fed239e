// Drawing a figure with Plotly, and saving it: every plot gets Plotly's own image button (PNG)
// plus an SVG button, both titled in the page's language. Plotly's modebar buttons are real
// <button>s, and the bar shows while one of them has the keyboard focus.
//
// Two layout rules live here, so every chart of both pages follows them:
// - the modebar never covers a legend or a colour bar: a chart whose legend or colour bar reaches under
//   it gets that much more top margin (modebarRoom);
// - on a phone, the heatmaps inside a [data-small-multiples] container are drawn small (no colour bar,
//   no titles) so that the heads fit one screen side by side; a tap, Enter or Space enlarges one in a
//   dialog, and a tap or Escape closes it (zoom.js).

import { tr } from "./i18n.js";
import { smallFigure } from "./small.js";
import { openZoom } from "./zoom.js";

const Plotly = () => window.Plotly;

/** The width under which the page is laid out for a phone: the same 40rem as app.css and lesson.css. */
const PHONE = "(max-width: 40rem)";
/** The heatmaps drawn as small multiples on a phone. */
const MULTIPLE = "[data-small-multiples] :is(.heatmap, .lesson-plot--square)";
/** Pixels kept free between the modebar and what it would cover. */
const MODEBAR_GAP = 4;

/** A download arrow over a tray, in the 1000 × 1000 box Plotly's modebar icons use (y down). */
const SVG_ICON = {
  width: 1000,
  height: 1000,
  path: "M430 80h140v420l130-130 100 100-300 300-300-300 100-100 130 130z M80 760h140v80h560v-80h140v220h-840z",
};

/** Plotly's English strings for the image button and its notices, in the page's language. */
function dictionary() {
  return {
    "Download plot as a PNG": tr("export_png"),
    "Download plot": tr("export_png"),
    "Preparing image - this may take a few seconds": tr("export_preparing"),
    "Sorry, there was a problem downloading your snapshot!": tr("export_failed"),
  };
}

function config(name) {
  const filename = `heads-positions-${name}`;
  return {
    displayModeBar: "hover",
    displaylogo: false,
    responsive: true,
    scrollZoom: false,
    doubleClick: false,
    showTips: false,
    locale: "page",
    locales: { page: { dictionary: dictionary() } },
    toImageButtonOptions: { format: "png", filename, scale: 2 },
    modeBarButtons: [[
      "toImage",
      {
        name: "downloadSvg",
        title: tr("export_svg"),
        icon: SVG_ICON,
        click: (gd) => Plotly().downloadImage(gd, { format: "svg", filename }),
      },
    ]],
  };
}

const drawn = new Set(); // the small-multiple nodes, drawn again when the screen crosses the phone width

/**
 * Draw (or update in place) one figure; `name` becomes the saved file's name. Resolves to whether it drew.
 * A figure equal to the one the node shows, at the same size and in the same language, is not drawn again:
 * a keystroke in line B leaves line A's maps as they are, where Plotly would redraw each one.
 */
export function draw(node, figure, name) {
  const small = node.matches(MULTIPLE) && matchMedia(PHONE).matches;
  // Taken before drawing: Plotly writes into the figure it is given (ranges, uids).
  const shown = JSON.stringify([small, name, document.documentElement.lang, figure]);
  if (node.shownFigure === shown && node.classList.contains("js-plotly-plot")) return Promise.resolve(false);
  node.shownFigure = shown;
  const forget = (error) => {
    node.shownFigure = null; // half drawn: the next draw must not take it for done
    throw error;
  };
  try {
    return drawAny(node, figure, name).then(() => true, forget);
  } catch (error) {
    return forget(error);
  }
}

function drawAny(node, figure, name) {
  if (node.matches(MULTIPLE)) {
    node.smallMultiple = { figure, name };
    drawn.add(node);
    if (matchMedia(PHONE).matches) return drawSmall(node, figure, name);
    setSmall(node, false);
  }
  return drawFull(node, figure, name);
}

/** The figure at full size, with its save buttons, and room under the modebar if it needs some. */
export async function drawFull(node, figure, name) {
  const layout = withRoom(figure.layout, Number(node.dataset.modebarRoom || 0));
  await Plotly().react(node, figure.data, layout, config(name));
  if (!node.modebarWatched) {
    // Each redraw (a resize included) checks again: a legend that wraps onto more rows grows upwards.
    node.modebarWatched = true;
    node.on("plotly_afterplot", () => { makeRoom(node); });
  }
  return makeRoom(node);
}

function withRoom(layout, room) {
  if (!room) return layout;
  const margin = layout?.margin ?? {};
  return { ...layout, margin: { ...margin, t: (margin.t ?? 100) + room } };
}

/** How far the modebar reaches into a legend or colour bar below its top edge, in px (0: it covers none). */
function modebarOverlap(node) {
  const bar = node.querySelector(".modebar");
  if (!bar) return 0;
  const m = bar.getBoundingClientRect();
  let reach = 0;
  // A legend, a colour bar, and the tick labels of a right-hand axis, whose top one sits at the plot's top corner.
  for (const part of node.querySelectorAll(".legend, .colorbar, [class$='tick'] > text")) {
    const r = part.getBoundingClientRect();
    const across = Math.min(m.right, r.right) > Math.max(m.left, r.left);
    const down = Math.min(m.bottom, r.bottom) > Math.max(m.top, r.top);
    if (r.width && r.height && across && down) reach = Math.max(reach, m.bottom - r.top + MODEBAR_GAP);
  }
  return Math.ceil(reach);
}

/**
 * Push the plot down by the modebar's reach, and check again once drawn (a colour bar's tick label moves with
 * the plot); the room is kept for the next redraws. A few rounds at most: past 160 px a legend is taller
 * than the chart, and more margin cannot help.
 */
function makeRoom(node) {
  if (node.makingRoom) return node.makingRoom; // the relayout's own afterplot: the loop below checks again
  node.makingRoom = (async () => {
    for (let round = 0; round < 6; round += 1) {
      const reach = modebarOverlap(node);
      const room = Number(node.dataset.modebarRoom || 0) + reach;
      if (!reach || room > 160) break;
      node.dataset.modebarRoom = String(room);
      // From the margin as drawn: automargin may have grown it past the figure's own for a legend on top.
      await Plotly().relayout(node, { "margin.t": node._fullLayout.margin.t + reach });
    }
  })().finally(() => { node.makingRoom = null; });
  return node.makingRoom;
}

/** The phone's small version: a static picture (no hover, no buttons) that is itself the button to enlarge. */
function drawSmall(node, figure, name) {
  setSmall(node, true);
  const small = smallFigure(figure);
  node.onclick = () => openZoom(node, describe(node), figure, name, { drawFull, purge });
  return Plotly().react(node, small.data, small.layout, { staticPlot: true, responsive: true });
}

function setSmall(node, on) {
  node.classList.toggle("is-small", on);
  if (on) {
    node.setAttribute("role", "button");
    node.tabIndex = 0;
    node.setAttribute("aria-label", tr("zoom_open", { what: describe(node) }));
    node.onkeydown = (event) => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      node.click();
    };
  } else {
    for (const attr of ["role", "tabindex", "aria-label"]) node.removeAttribute(attr);
    node.onclick = null;
    node.onkeydown = null;
  }
}

/** What a small map shows, for its button's name: the head's title and the map's caption ("Head 1 · A"). */
function describe(node) {
  const group = node.closest("[role=group][aria-labelledby]");
  const title = group && document.getElementById(group.getAttribute("aria-labelledby"));
  const caption = node.closest("figure")?.querySelector("figcaption");
  return [title?.textContent, caption?.textContent].map((t) => t?.trim()).filter(Boolean).join(" · ");
}

// A phone turned sideways, or a window made narrow: the small multiples become full charts, or back.
matchMedia(PHONE).addEventListener("change", () => {
  for (const node of [...drawn]) {
    if (!node.isConnected) drawn.delete(node);
    else if (node.smallMultiple) draw(node, node.smallMultiple.figure, node.smallMultiple.name).catch(console.error);
  }
});

/** The node's box changed size: its next draw draws, even a figure equal to the one it shows. */
export function unfit(node) {
  node.shownFigure = null;
}

/** Purge every Plotly chart under root: a panel redrawn from scratch frees its old charts' listeners. */
export function purgeAll(root) {
  for (const node of root.querySelectorAll(".js-plotly-plot")) purge(node);
}

export function purge(node) {
  drawn.delete(node);
  node.shownFigure = null;
  node.modebarWatched = false; // Plotly.purge drops the node's event listeners
  if (node.classList.contains("js-plotly-plot")) Plotly().purge(node);
}

/** Save text as a file through a Blob and an <a download>: no server round trip, nothing inline. */
export function downloadText(text, filename, type = "application/json") {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
