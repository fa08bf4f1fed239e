// The classes this browser's teacher ran, found again after the end: a list in the class panel for as long as the
// server keeps their results (kept_until), each with its summary, its two CSV files and "delete now"; and the
// results link, whose #fragment carries the teacher's token: a browser never sends a fragment, so no server or
// proxy log holds it, and the link can be bookmarked.

import { el, show } from "../shared/dom.js";
import { tr } from "../shared/i18n.js";
import { read, write } from "../shared/storage.js";
import { PAST_KEY } from "./storage.js";
import { ui } from "./room.js";

const DAY = 24 * 3600;

/** The results link's fragment, as read at load (main.js then rewrites the URL): {code, token} or null. */
export const linkedResults = (() => {
  const found = new URLSearchParams(location.hash.slice(1));
  const [code, token] = [found.get("results"), found.get("token")];
  return code && token ? { code, token } : null;
})();

/** The classes kept, newest first; those the server no longer keeps are forgotten on the way. */
export function pastClasses() {
  const now = Date.now() / 1000;
  const all = read(localStorage, PAST_KEY);
  const kept = (Array.isArray(all) ? all : []).filter((c) => c?.code && c?.token && c.kept_until > now);
  if (kept.length !== (all?.length ?? 0)) write(localStorage, PAST_KEY, kept.length ? kept : null);
  return kept.sort((a, b) => b.ended_at - a.ended_at);
}

/**
 * Keep (or update) a class in the list: at the end, from what this screen knows ({code, token, students,
 * resultsDays}), then from the server's results, which say when it ended and until when they are kept.
 */
export function keepPast({ code, token, students = null, resultsDays = 7, results = null }) {
  const now = Date.now() / 1000;
  const earlier = pastClasses().find((c) => c.code === code);
  const entry = { code, token, ended_at: now, kept_until: now + resultsDays * DAY, students, questions: null,
    ...earlier };
  if (results?.ended) {
    Object.assign(entry, { token, ended_at: results.ended_at, kept_until: results.kept_until,
      students: results.students, questions: results.steps.length });
  }
  write(localStorage, PAST_KEY, [entry, ...pastClasses().filter((c) => c.code !== code)]);
}

export function forgetPast(code) {
  const kept = pastClasses().filter((c) => c.code !== code);
  write(localStorage, PAST_KEY, kept.length ? kept : null);
}

/** The link that opens this class's summary, to bookmark: the token after the #. */
export function resultsLink(code, token) {
  const lang = document.documentElement.lang || "en";
  return `${location.origin}/lesson?lang=${lang}#${new URLSearchParams({ results: code, token })}`;
}

export const when = (seconds, style = { dateStyle: "medium", timeStyle: "short" }) =>
  new Date(seconds * 1000).toLocaleString(document.documentElement.lang || "en", style);

/** The list in the class panel: one row per class, its facts and its four controls (class.js listens). */
export function renderPast(showing) {
  const classes = showing ? pastClasses() : [];
  show(ui.past, classes.length > 0);
  ui.pastList.replaceChildren(...classes.map((c) => {
    const facts = [c.code, when(c.ended_at)];
    if (c.students !== null) facts.push(tr("class_past_students", { n: c.students }));
    if (c.questions !== null) facts.push(tr("class_past_questions", { n: c.questions }));
    const button = (action, key) => el("button", { type: "button", className: "button", text: tr(key),
      dataset: { past: action } });
    return el("li", { dataset: { code: c.code } }, [
      el("span", { className: "lesson-class__past-facts", text: facts.join(" · ") }),
      el("span", { className: "lesson-class__actions" }, [
        button("summary", "class_past_summary"), button("results", "class_past_results"),
        button("answers", "class_past_answers"), button("delete", "class_delete"),
      ]),
    ]);
  }));
}
