// Drawing a figure with Plotly, and saving it: every plot gets Plotly's own image button (PNG)
// plus an SVG button, both titled in the page's language. Plotly's modebar buttons are real
// <button>s, and the bar shows while one of them has the keyboard focus.

import { tr } from "./i18n.js";

const Plotly = () => window.Plotly;

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

/** Draw (or update in place) one figure; `name` becomes the saved file's name. */
export function draw(node, figure, name) {
  return Plotly().react(node, figure.data, figure.layout, config(name));
}

export function purge(node) {
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
