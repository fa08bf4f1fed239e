// Where the lesson is: the step's address (the URL and its history entry) and the links around the step (previous
// and next, the step menu, the explorer, the QR code and the step's link).

import { fillRich, tr } from "../shared/i18n.js";
import { lesson } from "./controller.js";
import { current, state, STEPS, ui } from "./page.js";
import { renderExplorerLink } from "./setup.js";

/** The URL's part of the state, as a history entry keeps it: popstate reads it back. */
const entry = () => ({ lesson: { step: state.step, lang: state.lang, present: state.present } });

export function stepUrl(step, lang = state.lang, present = state.present) {
  const q = new URLSearchParams({ step: String(step), lang });
  if (present) q.set("present", "1");
  return `${location.pathname}?${q}`;
}

export function writeUrl(mode) {
  let url = stepUrl(state.step);
  // A student's address keeps the class, so a reload or a reopened tab comes back into it.
  if (lesson.room?.role === "student") url += `&${new URLSearchParams({ class: lesson.room.code })}`;
  if (mode === "push" && url !== `${location.pathname}${location.search}`) history.pushState(entry(), "", url);
  else history.replaceState(entry(), "", url);
}

export function renderNav() {
  const step = current();
  ui.article.dataset.step = String(state.step);
  ui.article.dataset.kind = step.kind;
  ui.kicker.textContent = tr("step_of", { n: state.step, total: STEPS.length, section: tr(`section_${step.section}`) });
  ui.title.textContent = tr(`${step.id}_title`);
  ui.prev.closest(".lesson-nav").setAttribute("aria-label", tr("nav_label")); // the template's, in the page's language
  fillRich(ui.framing, tr(`${step.id}_framing`));
  for (const [link, n] of [[ui.prev, state.step - 1], [ui.next, state.step + 1]]) {
    const inside = n >= 1 && n <= STEPS.length;
    link.href = stepUrl(inside ? n : state.step);
    link.toggleAttribute("aria-disabled", !inside);
    link.classList.toggle("is-disabled", !inside);
  }
  [...ui.select.options].forEach((option, i) => {
    option.textContent = `${i + 1}. ${tr(`${STEPS[i].id}_title`)}`;
  });
  ui.select.value = String(state.step);
  ui.present.checked = state.present;
  document.body.classList.toggle("is-presenting", state.present);
  document.documentElement.classList.toggle("is-presenting", state.present);
  renderExplorerLink(step);
  const link = stepUrl(state.step, state.lang, false);
  ui.qr.src = `/lesson/qr.svg?step=${state.step}&lang=${state.lang}`;
  ui.qr.alt = tr("qr_alt"); // the server wrote it in the language the page opened in
  ui.stepLink.href = link;
  ui.stepLink.textContent = new URL(link, location.href).href;
}
