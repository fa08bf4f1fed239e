// One small multiple enlarged (draw.js): a modal <dialog> with the full figure, colour bar and hover
// included. A tap anywhere on it, its close button, or Escape closes it, and the focus goes back to the
// small map that opened it.

import { el } from "./dom.js";
import { tr } from "./i18n.js";

let dialog = null;
let opener = null;
let purge = null; // draw.js's, given at each opening

function build() {
  const title = el("h2", { id: "zoom-title", className: "zoom__title" });
  const close = el("button", { type: "button", className: "button zoom__close", text: tr("zoom_close") });
  const plot = el("div", { className: "zoom__plot" });
  const hint = el("p", { className: "zoom__hint", text: tr("zoom_hint") });
  dialog = el("dialog", { className: "zoom", attrs: { "aria-labelledby": "zoom-title" } }, [
    el("div", { className: "zoom__bar" }, [title, close]),
    plot,
    hint,
  ]);
  // A tap closes, wherever it lands, except on the chart's own save buttons.
  dialog.addEventListener("click", (event) => {
    if (!event.target.closest(".modebar")) dialog.close();
  });
  dialog.addEventListener("close", () => {
    purge?.(plot);
    opener?.focus();
    opener = null;
  });
  document.body.append(dialog);
  return dialog;
}

/**
 * Show `figure` under `title` at full size over the page, drawn by draw.js's drawFull(node, figure, name) and
 * purged by its purge(node) once closed.
 */
export function openZoom(node, title, figure, name, { drawFull, purge: purgeNode }) {
  const box = dialog ?? build();
  opener = node;
  purge = purgeNode;
  box.querySelector(".zoom__title").textContent = title;
  // Worded again at each opening: the page's language may have changed since the dialog was made.
  box.querySelector(".zoom__close").textContent = tr("zoom_close");
  box.querySelector(".zoom__hint").textContent = tr("zoom_hint");
  box.showModal();
  return drawFull(box.querySelector(".zoom__plot"), figure, name);
}
