// What the teacher's buttons do: start a class, move, reveal, vote again, keep the door, admit and remove students,
// download an ended class's results and answers, delete them. Each asks the server first and changes the screen
// once it confirms.

import { request } from "../shared/api.js";
import { el } from "../shared/dom.js";
import { tr } from "../shared/i18n.js";
import { write } from "../shared/storage.js";
import { lesson } from "../lesson/controller.js";
import { forgetPast } from "./past.js";
import { TEACHER_KEY, teacherKey } from "./storage.js";
import { room, ui } from "./room.js";
import { render } from "./screens.js";
import { begin, call, failed, refreshCounts, say } from "./session.js";

export async function startClass() {
  room.busy.start = true;
  render();
  try {
    const key = teacherKey();
    const made = await call("POST", "", undefined, null, key ? { "X-Teacher-Key": key } : {});
    write(localStorage, TEACHER_KEY, {
      code: made.code, token: made.teacher_token, join_url: made.join_url, join_urls: made.join_urls,
      teacher_stream: made.teacher_stream, loopback: made.loopback, results_days: made.results_days,
    });
    [room.role, room.code, room.token] = ["teacher", made.code, made.teacher_token];
    // The class starts on the step on the teacher's screen, before any event can move the screen to step 1.
    if (lesson.step !== 1) await call("POST", `/${room.code}/step`, { step: lesson.step });
    room.keyAsked = false;
    begin("teacher", made.code, made.teacher_token);
    window.scrollTo(0, 0); // the projector shows the class from the top: code, QR code, question
  } catch (error) {
    room.role = null;
    if (error.type === "teacher_key_missing" || error.type === "teacher_key_wrong") {
      room.keyAsked = true;
      render();
      ui.keyInput.focus();
    }
    failed(error);
    ui.status.scrollIntoView({ block: "nearest" }); // on the first screen, wherever the panel sits
  } finally {
    room.busy.start = false;
    render();
  }
}

/** The teacher's "vote again": the server closes the first vote and opens the second; the phones are told. */
export async function voteAgain() {
  room.busy.again = true;
  render();
  try {
    const { round } = await call("POST", `/${room.code}/again`);
    room.firstCounts = room.counts;
    room.live = { ...room.live, round, answered: 0 };
    room.counts = null;
    refreshCounts();
  } catch (error) {
    failed(error, { key: "class_again_failed" });
  } finally {
    room.busy.again = false;
    render();
  }
}

/** The teacher's reveal, for the whole class: the server first, then this screen, then (by events) the phones. */
export async function revealClass() {
  try {
    // The server judges the setup on the teacher's screen: the choices it accepts go into the class's results.
    await call("POST", `/${room.code}/reveal`, lesson.step === room.live.step ? lesson.setup : {});
  } catch (error) {
    failed(error, { key: "class_reveal_failed" });
    return;
  }
  room.live = { ...room.live, revealed: true };
  if (lesson.step === room.live.step) lesson.reveal({ from: "class" });
  render();
}

/** The teacher's move: asked of the server first; the screen moves once it confirms, or says why not. */
export async function moveClass(n) {
  if (room.moving !== null) return;
  room.moving = n;
  render();
  try {
    await call("POST", `/${room.code}/step`, { step: n });
  } catch (error) {
    failed(error, { key: "class_move_failed", vars: { n } });
    if (room.status) room.status.about = "move";
    return;
  } finally {
    room.moving = null;
    render();
  }
  if (room.role !== "teacher") return;
  if (room.status?.about === "move") say(null); // an earlier failed move is no longer true
  if (room.live?.step !== n) {
    room.live = { ...room.live, step: n, revealed: false, answered: 0 };
    room.counts = null;
  }
  lesson.goTo(n, { from: "class", focus: true });
  // The projector opens the new step at its title and question, however far the last reveal scrolled it.
  lesson.toTop();
  refreshCounts();
}

/**
 * The teacher removes students: {student} at once; several ({students}, {joined_after}, or {waiting: true}, the
 * refusal of everyone at the door) only after the dialog named them (confirmRemoval): the server removes exactly
 * the names sent, and answers 409 with the names it would remove now when someone joined meanwhile.
 */
export async function removeStudents(which) {
  try {
    await call("POST", `/${room.code}/remove`, which);
  } catch (error) {
    if (error.type === "removal_not_confirmed" && Array.isArray(error.ctx.names)) {
      confirmRemoval(which, error.ctx.names, Boolean(which.waiting));
      return;
    }
    failed(error, { key: "class_remove_failed" });
    return;
  }
  refreshCounts();
}

/** Removing more than one asks first, naming them; one is removed at once. */
export function confirmRemoval(which, names, refuse = false) {
  if (names.length <= 1) {
    removeStudents({ ...which, names });
    return;
  }
  room.confirming = { body: { ...which, names }, names, refuse };
  ui.removeText.textContent = tr(refuse ? "class_refuse_confirm" : "class_remove_confirm", { n: names.length });
  ui.removeYes.dataset.i18n = refuse ? "class_refuse_yes" : "class_remove_yes"; // the button says what it does
  ui.removeYes.textContent = tr(ui.removeYes.dataset.i18n);
  ui.removeNames.replaceChildren(...names.map((name) => el("li", { text: name })));
  if (!ui.removeDialog.open) ui.removeDialog.showModal();
}

/** Students waiting at the door let in: one ({student}) or all ({all: true}). */
export async function admitStudents(which) {
  try {
    await call("POST", `/${room.code}/admit`, which);
  } catch (error) {
    failed(error);
    return;
  }
  refreshCounts();
}

/** The teacher's door: open, ask or closed; the control shows what the server holds. */
export async function setDoor(door) {
  room.busy.door = true;
  render();
  try {
    await call("POST", `/${room.code}/door`, { door });
    room.live = { ...room.live, door, locked: door === "closed" };
    say(null);
  } catch (error) {
    failed(error);
  } finally {
    room.busy.door = false;
    render();
  }
}

/** A CSV file ("results" or "answers") with the teacher's token (a link sends none), saved under its own name. */
export async function downloadCsv(code, token, file) {
  const lang = document.documentElement.lang || "en";
  try {
    const csv = await request(`/api/classes/${code}/${file}.csv`,
      { query: { lang }, headers: { Authorization: `Bearer ${token}` }, as: "blob", accept: "text/csv" });
    const link = el("a", { attrs: { href: URL.createObjectURL(csv),
      download: `class-${code}-${file}.csv` } });
    document.body.append(link);
    link.click();
    link.remove();
  } catch (error) {
    say(error, undefined, { key: "class_summary_failed" });
  }
}

/** "Delete now" asks first, naming the class. */
export function askDelete(code, token) {
  room.deleting = { code, token };
  ui.deleteText.textContent = tr("class_delete_confirm", { code });
  ui.deleteDialog.showModal();
}

/** The teacher confirmed: the server deletes the results, and the class leaves this browser's list. */
export async function deleteResults() {
  const { code, token } = room.deleting;
  room.deleting = null;
  try {
    await call("DELETE", `/${code}`, undefined, token);
  } catch (error) {
    if (error.status !== 404) { // 404: already gone from the server
      say(error, undefined, { key: "class_delete_failed" });
      return;
    }
  }
  forgetPast(code);
  if (room.summary?.code === code) closeSummary();
  render();
}

/** Back to the lesson: the summary closes, and the address no longer holds its link. */
export function closeSummary() {
  room.summary = null;
  if (location.hash) history.replaceState(null, "", `${location.pathname}${location.search}`);
  render();
}