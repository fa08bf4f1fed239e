// The class and the server: requests (call), the status line and the connection pill, the event stream and what
// its states do to this screen, the teacher's counts and summary, and taking a seat in a class or leaving it.

import { ApiError, request } from "../shared/api.js";
import { show } from "../shared/dom.js";
import { read, write } from "../shared/storage.js";
import { lesson } from "../lesson/controller.js";
import { isOutage, wording } from "./errors.js";
import { leaveSeat, myPending, mySaved, REMOVED_KEY, STUDENT_KEY, TEACHER_KEY, updateSeat } from "./storage.js";
import { BACK_MS, forLesson, myToken, RETRY_MS, room, statusText, stepOf, ui } from "./room.js";
import { forgetPast, keepPast, resultsLink } from "./past.js";
import { render, renderConnection, renderRoster } from "./screens.js";

const URGENT = new Set(["class_lost", "class_gone", "class_store_down", "class_error"]);

/**
 * A class request (shared/api.js's request() under /api/classes), with this screen's token unless `bearer` says
 * otherwise; a failure throws its ApiError (status 0: no answer came). extra: more headers (the teacher's key).
 */
export async function call(method, path, body, bearer = myToken(), extra = {}) {
  const headers = bearer ? { ...extra, Authorization: `Bearer ${bearer}` } : extra;
  const sent = performance.now();
  const answer = await request(`/api/classes${path}`, { method, body, headers });
  // An answer after an outage: the server and its store are back (a student's stream says nothing until
  // the next step, and a retry that failed just before may have said "reconnecting…" again). Only an answer to a
  // request sent after the outage began says so: one sent before it (answered late) tells nothing of the store now,
  // and a class lost meanwhile must never read "back".
  if (room.outage && sent > room.outageSince) setConnection("back");
  return answer;
}

/** The status line: an i18n key, or an error worded from its status and type, with an optional lead. */
export function say(what, vars, lead = null) {
  room.status = what ? { ...(what instanceof Error ? wording(what) : { key: what, vars }), lead } : null;
  if (room.status) ui.status.dataset.key = room.status.key;
  else delete ui.status.dataset.key;
  // What the teacher must not miss goes to the top of the screen, whatever the view and the scroll: a lost
  // class, a store that does not answer, an action the class did not follow.
  ui.status.dataset.top = String(Boolean(room.status) && room.role !== "student" && room.role !== "over"
    && (lead !== null || URGENT.has(room.status.key)));
  ui.status.textContent = statusText();
  show(ui.status, room.status !== null);
}

/** A failed request: an outage says "reconnecting…" (the class comes back by itself); the rest say what. */
export function failed(error, lead = null) {
  if (isOutage(error)) {
    setConnection("reconnecting");
    say(error, undefined, lead);
    // Not in a class: no event stream will say "back", so the pill goes once the server's wait is over.
    if (room.role === null) {
      room.running.back = setTimeout(() => {
        room.outage = false;
        setConnection(null);
      }, 1000 * (error.retryAfter ?? 5));
    }
  } else if (error?.type === "student_removed") {
    over("class_removed");
  } else if (error?.status === 404 && room.role === "student") {
    over("class_gone");
  } else if (error?.status === 404 && room.role === "teacher") {
    leave("class_lost"); // the teacher's own class, gone without their end: lost (the store emptied, or idle too long)
  } else if (error?.status === 404) {
    // A late answer about a class this screen has left already (its stream said lost or ended): what the screen
    // says about it stays.
    render();
  } else {
    if (!(error instanceof ApiError)) console.warn("class mode:", error);
    say(error, undefined, lead);
  }
}

/** "reconnecting…" while the stream or the store is down, "back" for a while once it returns; null: neither. */
function setConnection(connection) {
  if (connection === null) {
    room.outage = false;
    clearTimeout(room.running.back);
  } else if (connection === "reconnecting") {
    room.outage = true;
    room.outageSince = performance.now();
    clearTimeout(room.running.back);
  } else if (connection === "back") {
    if (!room.outage) return;
    room.outage = false;
    clearTimeout(room.running.back);
    room.running.back = setTimeout(() => setConnection(null), BACK_MS);
    if (room.status?.key === "class_store_down" || room.status?.key === "class_error") say(null);
    if (room.role === "student" && myPending()) attemptAnswer(); // no need to wait for the next retry
  }
  room.connection = connection;
  renderConnection();
}

/** Make this page show the class's step, hidden or revealed as the class has it. */
function follow(before = null) {
  const n = room.live.step;
  const asked = Boolean(stepOf(n).choices);
  const again = before?.step === n && (before?.round ?? 1) < (room.live.round ?? 1);
  if (again && room.role === "student" && !room.live.revealed) {
    // The teacher asked the class to vote again: this phone's first vote is closed, its question opens again.
    updateSeat((seat) => {
      delete seat.answers[n];
      if (seat.pending?.step === n) seat.pending = null;
    });
    lesson.goTo(n, { from: "class", focus: false, again: true });
  }
  if (lesson.step !== n) {
    lesson.goTo(n, { from: "class", focus: false });
    // A new step opens at its title, however far the last reveal scrolled this screen (a phone, issue 38).
    lesson.toTop();
  }
  // The same step, opened again by the teacher after its reveal: the question comes back.
  else if (asked && !room.live.revealed && lesson.revealed) lesson.goTo(n, { from: "class", focus: false, again: true });
  if (asked && room.live.revealed) lesson.reveal({ from: "class" });
}

function onState(data) {
  if (data.removed) {
    over("class_removed");
    return;
  }
  if (data.ended || data.lost) {
    // Lost: gone without the teacher's end (a class store emptied by a restart). The teacher can start again.
    const reason = data.lost ? "class_lost" : "class_ended";
    if (room.role === "student") over(reason);
    else if (data.ended && room.role === "teacher") finish(room.code, room.token);
    else {
      leave(reason);
      ui.status.scrollIntoView({ block: "nearest" }); // on the first screen, beside "Start a class"
    }
    return;
  }
  const before = room.live;
  const moved = before?.step !== data.step || before?.revealed !== data.revealed || before?.round !== data.round;
  room.live = data;
  // A student's stream says "waiting" while the student waits at the door, and sends the state without it once
  // the teacher lets them in.
  if (room.role === "student") room.waiting = Boolean(data.waiting);
  if (moved) follow(before);
  if (room.role === "teacher") refreshCounts();
  render();
}

function connect() {
  room.running.stream?.close();
  clearTimeout(room.running.reconnect);
  // The stream's credential: it is never refused for unknown codes others sent from this network.
  const key = room.role === "student" ? mySaved()?.student : read(localStorage, TEACHER_KEY)?.teacher_stream;
  const query = key ? `?${room.role === "student" ? "student" : "teacher"}=${encodeURIComponent(key)}` : "";
  const stream = new EventSource(`/api/classes/${room.code}/events${query}`);
  room.running.stream = stream;
  stream.addEventListener("message", (event) => {
    const data = JSON.parse(event.data);
    // A class that is gone is not "back": the pill goes, and the page says what happened (onState).
    if (data.lost || data.ended) setConnection(null);
    else setConnection("back");
    onState(data);
  });
  // The server's own word on the class store: down (the stream stays open), then back with the state.
  stream.addEventListener("outage", () => setConnection("reconnecting"));
  stream.addEventListener("back", () => setConnection("back"));
  stream.addEventListener("error", () => {
    if (room.running.stream !== stream) return;
    setConnection("reconnecting");
    // EventSource tries again by itself after a dropped line; it gives up on an error status (a 503 while
    // the store is down), and then the page asks whether the class is still there, and tries again.
    if (stream.readyState === EventSource.CLOSED) {
      room.running.reconnect = setTimeout(() => {
        call("GET", `/${room.code}`).then(connect, (error) => {
          if (error.status === 404) failed(error);
          else if (room.running.stream === stream) stream.dispatchEvent(new Event("error"));
        });
      }, RETRY_MS[1]);
    }
  });
}

/** The teacher's counts, read again after each event; at most one request out at a time. */
export function refreshCounts() {
  if (room.countsBusy) {
    room.countsAgain = true;
    return;
  }
  room.countsBusy = true;
  call("GET", `/${room.code}`)
    .then((view) => {
      if (room.role !== "teacher") return; // a read that crossed the end of the class
      room.live = { ...room.live, ...view };
      room.counts = view.counts ?? null;
      if ((view.round ?? 1) === 1) room.firstCounts = null;
      if (!view.revealed && room.accepted?.step === view.step) room.accepted = null; // the step is asked again
      if ((view.round ?? 1) > 1 || (view.revealed && room.accepted?.step !== view.step)) readResults(view.step);
      room.students = view.students ?? [];
      room.waitingList = view.waiting ?? [];
      room.wrongCodes = view.wrong_codes ?? 0;
      room.refusedJoins = view.refused_joins ?? 0;
      if (view.now) [room.clock.server, room.clock.at] = [view.now, performance.now()];
      render();
    }, (error) => { if (room.role === "teacher") failed(error); })
    .finally(() => {
      room.countsBusy = false;
      if (room.countsAgain) {
        room.countsAgain = false;
        refreshCounts();
      }
    });
}

/**
 * What the class state does not carry, from the class's results: round 1's counts once the class votes again (the
 * state carries the open round's only), and the choices the server accepted at the step's reveal.
 */
function readResults(n) {
  call("GET", `/${room.code}/results`).then((results) => {
    const step = results.steps.find((s) => s.step === n);
    if (room.role !== "teacher" || room.live?.step !== n || !step) return;
    if ((room.live.round ?? 1) > 1) room.firstCounts = step.rounds[0]?.counts ?? null;
    if (room.live.revealed && step.accepted) room.accepted = { step: n, choices: step.accepted };
    render();
  }, () => {}); // the counts still show; the next event asks again
}

/**
 * The teacher ended the class (here, or on another of their screens): kept in this browser's list of past classes
 * at once (past.js: found again after a reload), then its summary over the panel of no class.
 */
export async function finish(endedCode, endedToken) {
  if (room.summary?.code === endedCode) return;
  const made = read(localStorage, TEACHER_KEY);
  keepPast({ code: endedCode, token: endedToken, students: room.live?.joined ?? null,
    resultsDays: made?.code === endedCode ? made.results_days ?? 7 : 7 });
  room.summary = { code: endedCode, token: endedToken, results: null };
  leave(null);
  await readSummary();
}

/** An ended class's summary, from the list of past classes or a results link. */
export async function openSummary(code, token) {
  room.summary = { code, token, results: null };
  render();
  await readSummary();
}

async function readSummary() {
  const { code, token } = room.summary;
  try {
    room.summary.results = await call("GET", `/${code}/results?lang=${document.documentElement.lang || "en"}`,
      undefined, token);
    if (room.summary?.code !== code) return;
    keepPast({ code, token, results: room.summary.results });
    // The address bar holds the results link too, to bookmark (a fragment: no request carries it).
    history.replaceState(null, "", resultsLink(code, token));
  } catch (error) {
    if (error.status === 404) {
      forgetPast(code); // deleted, or past HP_RESULTS_DAYS: gone from the server, so from the list
      room.summary = null;
      say("class_past_gone", { code });
    } else say(error, undefined, { key: "class_summary_failed" });
  }
  render();
  if (room.summary) ui.summary.scrollIntoView({ block: "start" });
  window.scrollTo(0, 0);
}

export function begin(asRole, classCode, teacherToken, waiting = false) {
  room.role = asRole;
  room.code = classCode;
  room.token = teacherToken;
  room.waiting = waiting;
  room.live = null;
  room.counts = null;
  room.firstCounts = null;
  room.students = [];
  room.waitingList = [];
  room.wrongCodes = 0;
  room.refusedJoins = 0;
  say(null);
  render();
  lesson.joinClass(forLesson);
  connect();
  clearInterval(room.running.roster);
  if (asRole === "teacher") room.running.roster = setInterval(() => { if (room.role === "teacher") renderRoster(); }, 5000);
}

function stopListening() {
  stopJoining();
  clearInterval(room.running.roster);
  room.running.stream?.close();
  room.running.stream = null;
  clearTimeout(room.running.reconnect);
  clearTimeout(room.running.retry);
  if (room.outage) setConnection(null);
  room.outage = false;
}

export function stopJoining() {
  clearTimeout(room.running.join);
  clearInterval(room.running.joinTick);
  room.running.join = room.running.joinTick = null;
}

export function leave(messageKey) {
  stopListening();
  if (room.role === "teacher") write(localStorage, TEACHER_KEY, null);
  if (room.role === "student") leaveSeat();
  if (room.role === "over") write(localStorage, STUDENT_KEY, null);
  room.role = null;
  room.code = null;
  room.token = null;
  room.live = null;
  lesson.leaveClass();
  render();
  // The lesson is in view again: charts drawn while the end screen hid it (Plotly's 700 px default) take the
  // page's width, as Plotly's responsive charts do on a resize.
  window.dispatchEvent(new Event("resize"));
  say(messageKey);
}

/** A student's class is over: the end screen, kept in this browser so that a reload shows it again. */
export function over(messageKey) {
  stopListening();
  // Removed: the token is kept apart, and sent by a later join to this class, which the server refuses.
  const token = mySaved()?.token;
  if (messageKey === "class_removed" && token) write(localStorage, REMOVED_KEY, { code: room.code, token });
  write(localStorage, STUDENT_KEY, { code: room.code, ended: true, reason: messageKey });
  room.role = "over";
  room.ended = messageKey;
  room.live = null;
  lesson.leaveClass();
  render();
  say(null);
  window.scrollTo(0, 0);
}

export function attemptAnswer() {
  clearTimeout(room.running.retry);
  const pending = myPending();
  if (!pending || room.role !== "student") return;
  const { step: n, choice } = pending;
  const settle = () => updateSeat((seat) => {
    if (seat.pending?.step === n && seat.pending?.choice === choice) seat.pending = null;
  });
  call("POST", `/${room.code}/answers`, { step: n, choice })
    .then(() => {
      settle();
      updateSeat((seat) => { seat.answers[n] = choice; });
      room.retries = 0;
      render();
    }, (error) => {
      if (isOutage(error) || error.status >= 500 || error.status === 429) {
        // Not received: the same answer again later (the server counts a repeat once). The hint says so.
        if (isOutage(error)) setConnection("reconnecting");
        const wait = Math.max(RETRY_MS[Math.min(room.retries, RETRY_MS.length - 1)], 1000 * (error.retryAfter ?? 0));
        room.retries += 1;
        room.running.retry = setTimeout(attemptAnswer, wait);
        render();
        return;
      }
      settle();
      render();
      if (error.status === 404 || error.type === "student_removed") {
        failed(error);
        return;
      }
      say(error);
      lesson.hint(statusText()); // where the student looks, not only in the panel
    });
}
