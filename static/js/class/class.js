// Class mode (README "Class mode"): the teacher leads the lesson on every student's screen.
// The teacher starts a class and moves through the steps with the lesson's own navigation; each student's
// page follows by server-sent events, sends its answer to the server, and reveals when the teacher does.
//
// A client of the lesson controller (controller.js), like the page's own buttons and keys: the class's step
// changes call lesson.goTo, the class's reveal calls lesson.reveal, and the controller's cancelable events
// hand class mode what belongs to the class: a student's answer (sent to the server), every reveal on the
// teacher's screen (the class's reveal, asked of the server first), the teacher's moves (asked of the
// server first, made once it confirms), a student's own moves (refused, and said why). While in a class,
// the class holds the record of each question (joinClass's room).
// Outages lose nothing: "reconnecting…" while the stream or the store is down, and a student's answer is
// kept and sent again until the server acknowledges it (a repeat counts once).
// Secrets stay here: the teacher's token in this browser's localStorage, never in a URL (the teacher's event
// stream carries its stream key, which grants only the stream; a student's carries their id).
// The teacher's roster lists the names as they join, each with a remove control, and the joins of the last
// minute with one control that removes them all (the answer to a flood). Names are the students' text:
// they go in through textContent only (dom.js's el), never as markup.
//
// The modules: storage.js (this browser's seat and the teacher's class), past.js (the teacher's ended classes,
// found again), room.js (the class as this screen has
// it, and the panel's elements), screens.js (render: the panel drawn from room), session.js (the server, the event
// stream, joining a class and leaving it), teacher.js and student.js (what each one's buttons do), and this file,
// which wires them to the page and to the lesson controller's events.

import { tr } from "../shared/i18n.js";
import { read, write } from "../shared/storage.js";
import { lesson } from "../lesson/controller.js";
import { KEY_KEY, mySaved, TEACHER_KEY } from "./storage.js";
import { CODE_SHAPE, linkCode, RECENT_SECONDS, room, serverClock, statusText, stepOf, ui } from "./room.js";
import { recentSeats, render, renderConnection, renderNameCount } from "./screens.js";
import { begin, call, failed, finish, leave, openSummary, over } from "./session.js";
import {
  admitStudents, askDelete, closeSummary, confirmRemoval, deleteResults, downloadCsv, moveClass, removeStudents,
  revealClass, setDoor, startClass, voteAgain,
} from "./teacher.js";
import { linkedResults, pastClasses } from "./past.js";
import { askName, join, joinNamed, joinTyped, retryJoin, sendAnswer } from "./student.js";

/**
 * The controller's "move". A student's screen follows the class, so its own moves are refused, and said why.
 * The teacher's moves are the class's: refused here, asked of the server, made once it confirms (moveClass).
 */
function onMove(event) {
  const { step: n, from } = event.detail;
  if (from === "class" || room.role === null) return;
  event.preventDefault();
  if (room.role === "teacher") {
    moveClass(n);
    return;
  }
  if (room.role !== "student") return; // the end screen: nothing moves behind it
  room.heldMoves += 1;
  ui.held.dataset.refused = String(room.heldMoves);
  ui.held.textContent = "";
  ui.held.textContent = tr("class_nav_held", { code: room.code }); // written again, so a screen reader says it again
  ui.held.scrollIntoView({ block: "nearest" });
}

/** The controller's "step": the page drew a step again; its hint and the panel's step follow. */
function onStep() {
  if (room.role === "teacher" || room.role === "student") {
    if (room.live) render();
  }
}

/** The controller's "commit": in a class, an answer to the class's question is the class's. */
function onCommit(event) {
  const { step: n, answer } = event.detail;
  if (room.role !== "teacher" && room.role !== "student") return;
  if (!stepOf(n).choices) return; // the self-test and the summary stay the student's own
  event.preventDefault();
  if (room.role === "student" && room.waiting) lesson.hint(tr("class_waiting_me", { code: room.code }));
  else if (room.role === "student") sendAnswer(n, answer.choice);
  else lesson.reveal(); // the teacher locks in no answer: their button is the class's reveal
}

/** The controller's "reveal": on the teacher's screen every reveal is the class's; on a student's, the teacher's. */
function onReveal(event) {
  const { step: n, from } = event.detail;
  if ((room.role !== "teacher" && room.role !== "student") || from === "class" || !stepOf(n).choices) return;
  event.preventDefault();
  if (room.role === "teacher" && room.live && !room.live.revealed) revealClass();
  else if (room.role === "student") lesson.hint(tr("class_following", { code: room.code }));
}

export function startClassMode(lessonSteps) {
  room.steps = lessonSteps;
  if (!ui.panel) return;
  ui.start.addEventListener("click", () => { startClass(); });
  ui.keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    write(sessionStorage, KEY_KEY, ui.keyInput.value.trim() || null);
    startClass();
  });
  ui.joinForm.addEventListener("submit", (event) => { joinTyped(event); });
  ui.reveal.addEventListener("click", () => { lesson.reveal(); });
  ui.again.addEventListener("click", () => { voteAgain(); });
  ui.end.addEventListener("click", () => {
    // How long the server keeps the results: its own HP_RESULTS_DAYS, as POST /api/classes said.
    ui.endText.textContent = tr("class_end_confirm", { days: read(localStorage, TEACHER_KEY)?.results_days ?? 7 });
    ui.endDialog.showModal();
  });
  ui.endNo.addEventListener("click", () => { ui.endDialog.close(); });
  ui.endYes.addEventListener("click", () => {
    ui.endDialog.close();
    const [endedCode, endedToken] = [room.code, room.token];
    call("POST", `/${room.code}/end`).then(() => finish(endedCode, endedToken),
      (error) => failed(error, { key: "class_end_failed" }));
  });
  ui.download.addEventListener("click", () => { downloadCsv(room.summary.code, room.summary.token, "results"); });
  ui.downloadAnswers.addEventListener("click", () => { downloadCsv(room.summary.code, room.summary.token, "answers"); });
  ui.summaryClose.addEventListener("click", closeSummary);
  ui.delete.addEventListener("click", () => askDelete(room.summary.code, room.summary.token));
  ui.deleteNo.addEventListener("click", () => {
    room.deleting = null;
    ui.deleteDialog.close();
  });
  ui.deleteYes.addEventListener("click", () => {
    ui.deleteDialog.close();
    deleteResults();
  });
  ui.pastList.addEventListener("click", (event) => {
    const action = event.target.closest("[data-past]")?.dataset.past;
    const past = pastClasses().find((c) => c.code === event.target.closest("li")?.dataset.code);
    if (!action || !past) return;
    if (action === "summary") openSummary(past.code, past.token);
    else if (action === "delete") askDelete(past.code, past.token);
    else downloadCsv(past.code, past.token, action);
  });
  ui.retry.addEventListener("click", () => { retryJoin(); });
  ui.door.addEventListener("change", () => { setDoor(ui.door.value); });
  ui.spreadShow.addEventListener("click", () => {
    room.spreadShown = room.live?.step ?? null;
    render();
  });
  ui.names.addEventListener("click", (event) => {
    const remove = event.target.closest(".lesson-class__remove");
    if (remove) removeStudents({ student: remove.closest("li").dataset.student });
  });
  ui.waitingNames.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-action]");
    if (!button) return;
    const student = button.closest("li").dataset.student;
    if (button.dataset.action === "admit") admitStudents({ student });
    else removeStudents({ student });
  });
  ui.admitAll.addEventListener("click", () => { admitStudents({ all: true }); });
  ui.refuseAll.addEventListener("click", () => {
    confirmRemoval({ waiting: true }, room.waitingList.map((s) => s.name), true);
  });
  ui.removeRecent.addEventListener("click", () => {
    confirmRemoval({ joined_after: serverClock() - RECENT_SECONDS }, recentSeats().map((s) => s.name));
  });
  ui.removeYes.addEventListener("click", () => {
    ui.removeDialog.close();
    if (room.confirming) removeStudents(room.confirming.body);
    room.confirming = null;
  });
  ui.removeNo.addEventListener("click", () => {
    ui.removeDialog.close();
    room.confirming = null;
  });
  for (const [input, out] of [[ui.nameInput, ui.nameCount], [ui.firstName, ui.firstCount]]) {
    input.addEventListener("input", () => renderNameCount(input, out));
    renderNameCount(input, out);
  }
  ui.first.addEventListener("submit", (event) => { joinNamed(event); });
  ui.firstSkip.addEventListener("click", (event) => { joinNamed(event, true); });
  ui.leave.addEventListener("click", () => leave(null));
  ui.alone.addEventListener("click", () => leave(null));
  lesson.addEventListener("move", onMove);
  lesson.addEventListener("step", onStep);
  lesson.addEventListener("commit", onCommit);
  lesson.addEventListener("reveal", onReveal);
  lesson.addEventListener("verdict", (event) => {
    room.verdict = event.detail;
    if (room.role === "teacher" && room.live) render();
  });

  const teacher = read(localStorage, TEACHER_KEY);
  const student = mySaved();
  if (student?.ended && (!linkCode || linkCode === student.code)) {
    room.code = student.code;
    over(student.reason ?? "class_ended");
  } else if (linkCode && teacher?.code !== linkCode) {
    // A join link (the server's, with its key, or a code typed into the address) asks the name first, unless this
    // browser already has a seat there.
    if (student?.code !== linkCode) askName(linkCode);
    else join(linkCode);
  }
  else if (teacher?.code && teacher?.token) begin("teacher", teacher.code, teacher.token);
  else if (student?.code && !student.left) join(student.code);
  else render();
  // A results link (past.js): the summary of that ended class, over whatever else the panel shows.
  if (linkedResults && CODE_SHAPE.test(linkedResults.code)) openSummary(linkedResults.code, linkedResults.token);
}

/** The language changed: word the panel again. */
export function redrawClass() {
  if (!ui.panel) return;
  renderNameCount(ui.nameInput, ui.nameCount);
  renderNameCount(ui.firstName, ui.firstCount);
  render(); // the list of past classes and a summary too, which show without a class
  if (room.connection) renderConnection();
  if (room.status) ui.status.textContent = statusText(); // its lead and its words, in the new language
}
