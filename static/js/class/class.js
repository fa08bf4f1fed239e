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

import { $, clear, el, show } from "../shared/dom.js";
import { fillRich, sentences, tr } from "../shared/i18n.js";
import { ClassRequestError, isOutage, responseError, wording } from "./errors.js";
import { lesson } from "../lesson/controller.js";
import { orderLabel } from "../lesson/kinds.js";

// {code, token, join_url, join_urls, teacher_stream, loopback}: only on the teacher's device
const TEACHER_KEY = "heads-positions.class.teacher";
// {code, token, student, name, answers: {step: choice}, pending: {step, choice} | null}: this browser's seat
// in a class, kept so a closed tab comes back as the same student (the server keeps only the token's hash)
// and an answer not yet received is sent again. {code, ended: true, reason}: the class ended, or the teacher
// removed this student; the end screen stays.
const STUDENT_KEY = "heads-positions.class.student";
const KEY_KEY = "heads-positions.class.key"; // HP_TEACHER_KEY as typed, for this tab only (sessionStorage)
const CODE_SHAPE = /^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}$/;
const BACK_MS = 6000; // how long "back" stays on screen after an outage
const RETRY_MS = [1000, 2000, 3000, 5000]; // a student's unacknowledged answer is sent again after these
// A locked or full class may open a seat: asked again this often (each ask counts as a join from the address).
const SEAT_RETRY_SECONDS = 15;
const RECENT_SECONDS = 60; // the roster's "joined in the last minute"
// Read at load, before main.js rewrites the URL to ?step=N&lang=L.
const linkCode = new URLSearchParams(location.search).get("class");

const ui = {
  panel: $("#class-panel"),
  idle: $("#class-idle"),
  start: $("#class-start"),
  keyForm: $("#class-key-form"),
  keyInput: $("#class-key"),
  joinForm: $("#class-join-form"),
  codeInput: $("#class-code-input"),
  nameInput: $("#class-name-input"),
  teacher: $("#class-teacher"),
  code: $("#class-code"),
  qr: $("#class-qr"),
  link: $("#class-link"),
  links: $("#class-links"),
  phones: $("#class-phones"),
  counts: $("#class-counts"),
  roster: $("#class-roster"),
  recent: $("#class-recent"),
  names: $("#class-names"),
  removeRecent: $("#class-remove-recent"),
  spread: $("#class-spread"),
  said: $("#class-said"),
  reveal: $("#class-reveal"),
  again: $("#class-again"),
  end: $("#class-end"),
  endDialog: $("#class-end-dialog"),
  endYes: $("#class-end-yes"),
  endNo: $("#class-end-no"),
  summary: $("#class-summary"),
  summaryTitle: $("#class-summary-title"),
  summarySteps: $("#class-summary-steps"),
  download: $("#class-download"),
  summaryClose: $("#class-summary-close"),
  retryText: $("#class-retry-text"),
  retry: $("#class-retry"),
  lock: $("#class-lock"),
  student: $("#class-student"),
  following: $("#class-following"),
  me: $("#class-me"),
  mine: $("#class-mine"),
  leave: $("#class-leave"),
  over: $("#class-over"),
  overText: $("#class-over-text"),
  alone: $("#class-alone"),
  status: $("#class-status"),
  connection: $("#class-connection"),
  held: $("#class-held"),
};

/**
 * The class as this screen has it, in one object: the functions below change it, then render() draws the panel
 * from it. What runs on its own (the event stream, the timers) is in room.running, so that leaving stops it all.
 */
const room = {
  steps: [], // the lesson's steps, as main.js hands them over (startClassMode)
  role: null, // "teacher" | "student" | "over" (a student whose class ended) | "joining" (refused) | null
  code: null,
  token: null, // the teacher's; a student's is in their seat (STUDENT_KEY)
  live: null, // the class's last state: {step, revealed, joined, answered, locked, round}
  counts: null, // teacher only: {choice: students} at live.step, in its open round
  firstCounts: null, // teacher only: round 1's {choice: students} once the class votes again
  summary: null, // the teacher's ended class: {code, token, results} (GET /results)
  students: [], // teacher only: the roster, [{student, name, joined_at, answered}]
  // teacher only: the server's clock when the roster was read (joined_at is the server's), and performance.now()
  // then: the server's clock now is read from both
  clock: { server: 0, at: 0 },
  verdict: null, // the lesson's last drawn verdict, {step, outcome}: the teacher's "the model did"
  // The status line: {key, vars} (an i18n key, or an error's wording), after a lead {key, vars}: both worded when
  // drawn, so a language switch words them again; about: "move"
  // when a teacher's move failed, so that the next move that works takes it away
  status: null,
  outage: false, // the event stream or the class store is down
  connection: null, // what the connection pill says: "reconnecting" | "back" | null
  ended: null, // student: why their class is over, as over() was told (its end screen)
  // a refused phone's join screen: {words, status, waits, button, left: seconds to the next attempt}; null while
  // the join is asked
  refusal: null,
  moving: null, // teacher: the step asked of the server, not yet confirmed
  busy: { start: false, lock: false, again: false }, // these buttons' requests are out: the button waits
  keyAsked: false, // the server asked for the teacher key (HP_TEACHER_KEY): its form shows
  heldMoves: 0, // student: their own moves refused so far (the held note's data-refused)
  countsBusy: false, // teacher: a read of the counts is out; countsAgain: read them again when it is back
  countsAgain: false,
  retries: 0, // student: the pending answer's attempts so far
  pendingJoin: null, // the refused phone's join, tried again by the timer or the button
  running: {
    stream: null, // the EventSource
    reconnect: null, // the stream's next attempt, after the server gave up on it
    back: null, // "back" goes off the screen
    join: null, // a refused phone's next attempt at joining, and the second counting down to it
    joinTick: null,
    roster: null, // the last minute's joins age without any event: the roster is drawn again
    retry: null, // student: the next attempt at the pending answer
  },
};

/** The class as the lesson controller sees it: who this screen is, and the class's record of its steps. */
const forLesson = {
  get role() {
    return room.role;
  },
  get code() {
    return room.code;
  },
  revealed: (n) => Boolean(room.live && room.live.step === n && room.live.revealed),
  answer: (n) => (room.role === "student" ? pendingFor(n)?.choice ?? myAnswer(n) : null),
};

// ---- storage -----------------------------------------------------------------------------------

function read(storage, key) {
  try {
    return JSON.parse(storage.getItem(key) ?? "null");
  } catch {
    return null;
  }
}

function write(storage, key, value) {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, JSON.stringify(value));
  } catch {
    // storage blocked: the class works until the page is reloaded
  }
}

const mySaved = () => read(localStorage, STUDENT_KEY);
const myAnswer = (step) => mySaved()?.answers?.[step] ?? null;
const myPending = () => mySaved()?.pending ?? null;
const pendingFor = (step) => (myPending()?.step === step ? myPending() : null);

function updateSeat(change) {
  const saved = mySaved();
  if (!saved || saved.ended) return;
  change(saved);
  write(localStorage, STUDENT_KEY, saved);
}

// ---- the server --------------------------------------------------------------------------------

/** The token a request carries: the teacher's, or this student's seat in the class. */
const myToken = () => (room.role === "teacher" ? room.token : room.role === "student" ? mySaved()?.token : null);

/** A class request; a failure throws a ClassRequestError (status 0: no answer came). */
async function call(method, path, body, bearer = myToken(), extra = {}) {
  const headers = { Accept: "application/json", ...extra };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  let response;
  try {
    response = await fetch(`/api/classes${path}`, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ClassRequestError(0);
  }
  if (!response.ok) throw await responseError(response);
  // An answer after an outage: the server and its store are back (a student's stream says nothing until
  // the next step, and a retry that failed just before may have said "reconnecting…" again).
  if (room.outage) setConnection("back");
  return response.json().catch(() => ({}));
}

/** The status line: an i18n key, or an error worded from its status and type, with an optional lead. */
function say(what, vars, lead = null) {
  room.status = what ? { ...(what instanceof Error ? wording(what) : { key: what, vars }), lead } : null;
  if (room.status) ui.status.dataset.key = room.status.key;
  else delete ui.status.dataset.key;
  ui.status.textContent = statusText();
  show(ui.status, room.status !== null);
}

const statusText = () => (room.status ? sentences([
  room.status.lead && tr(room.status.lead.key, room.status.lead.vars), tr(room.status.key, room.status.vars),
]) : "");

/** A failed request: an outage says "reconnecting…" (the class comes back by itself); the rest say what. */
function failed(error, lead = null) {
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
  } else if (error?.status === 404) {
    leave("class_gone");
  } else {
    if (!(error instanceof ClassRequestError)) console.warn("class mode:", error);
    say(error, undefined, lead);
  }
}

/** "reconnecting…" while the stream or the store is down, "back" for a while once it returns. */
function setConnection(connection) {
  if (connection === "reconnecting") {
    room.outage = true;
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

function renderConnection() {
  ui.connection.dataset.classConnection = room.connection ?? "";
  ui.connection.textContent = room.connection ? tr(`class_${room.connection}`) : "";
  show(ui.connection, Boolean(room.connection));
}

// ---- the lesson page ---------------------------------------------------------------------------

const stepOf = (n) => room.steps[n - 1];

function label(step, choice) {
  if (step.kind === "ex2") return orderLabel(choice, "heads");
  if (step.kind === "ex3") return orderLabel(choice, "modes");
  return tr(`${step.id}_choice_${choice}`);
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
  if (lesson.step !== n) lesson.goTo(n, { from: "class", focus: false });
  // The same step, opened again by the teacher after its reveal: the question comes back.
  else if (asked && !room.live.revealed && lesson.revealed) lesson.goTo(n, { from: "class", focus: false, again: true });
  if (asked && room.live.revealed) lesson.reveal({ from: "class" });
}

// ---- what the panel shows ----------------------------------------------------------------------

function render() {
  show(ui.idle, room.role === null);
  show(ui.teacher, room.role === "teacher");
  show(ui.student, room.role === "student");
  show(ui.over, room.role === "over" || room.role === "joining");
  show(ui.alone, room.role === "over" || room.role === "joining");
  show(ui.summary, room.summary !== null);
  ui.start.disabled = room.busy.start;
  show(ui.keyForm, room.keyAsked);
  ui.lock.disabled = room.busy.lock;
  ui.again.disabled = room.busy.again;
  if (room.moving === null) delete ui.panel.dataset.moving;
  else ui.panel.dataset.moving = String(room.moving);
  // The projector's layout (class.css); the student's end screen, a refused phone's join screen and the
  // teacher's summary hide the lesson behind them, on the first screen.
  document.body.classList.toggle("is-class-teacher", room.role === "teacher");
  document.body.classList.toggle("is-class-over", room.role === "over" || room.role === "joining" || room.summary !== null);
  // A student's page follows the teacher: no navigation of its own, no step QR code; where the step
  // buttons were, the page says why they are gone. After the end, nothing of the teacher's comes back.
  lesson.navigation(room.role !== "student" && room.role !== "over" && room.role !== "joining");
  lesson.sharing(room.role === null);
  show(ui.held, room.role === "student");
  if (room.role === "student") ui.held.textContent = tr("class_nav_held", { code: room.code });
  if (room.role === "teacher") renderTeacher();
  if (room.role === "student") renderStudent();
  if (room.role === "over" || room.role === "joining") renderOver();
  if (room.summary) renderSummary();
}

/**
 * The end screen of a student's class, or the join screen: joining while the join is asked, then why the class
 * refused the phone, and when it tries again.
 */
function renderOver() {
  const refusal = room.role === "joining" ? room.refusal : null;
  let text = tr(overKey(room.ended), { code: room.code });
  const { key, vars } = refusal?.words ?? {};
  if (refusal) text = sentences([tr("class_join_refused", { code: room.code }), tr(key, vars)]);
  else if (room.role === "joining") text = tr("class_joining", { code: room.code });
  if (ui.overText.textContent !== text) ui.overText.textContent = text; // a screen reader says it once
  if (refusal) ui.over.dataset.refused = String(refusal.status);
  else delete ui.over.dataset.refused;
  show(ui.retry, Boolean(refusal?.button));
  show(ui.retryText, Boolean(refusal?.waits));
  if (refusal?.waits) renderRetry();
}

/** The refused phone's countdown to its next attempt, drawn again each second. */
function renderRetry() {
  ui.retryText.textContent = tr("class_join_retrying", { seconds: room.refusal.left });
}

/** The join links: the one a phone can open first (it is the QR code's); a warning when there is none. */
function renderLinks() {
  const made = read(localStorage, TEACHER_KEY) ?? {};
  const fallback = new URL(`/lesson?class=${room.code}`, location.href).href;
  const phones = Array.isArray(made.join_urls) ? made.join_urls : [];
  const first = phones[0] ?? made.join_url ?? fallback;
  ui.link.href = first;
  ui.link.textContent = first;
  clear(ui.links);
  for (const url of phones.slice(1)) ui.links.append(el("li", {}, [el("a", { text: url, attrs: { href: url } })]));
  show(ui.links, phones.length > 1);
  const unreachable = made.loopback === true && phones.length === 0;
  // The host after tr: tr writes numbers as the language does, and 127.0.0.1 is no number (French 127,0).
  fillRich(ui.phones, unreachable ? tr("class_phones_cannot").replace("{host}", location.hostname) : "");
  show(ui.phones, unreachable);
}

function renderTeacher() {
  ui.code.textContent = room.code;
  renderLinks();
  // With the stream key, as the event stream: the QR code shows even while the network is slowed for
  // unknown codes (an <img> sends no token).
  const key = read(localStorage, TEACHER_KEY)?.teacher_stream;
  const qr = `/classes/${room.code}/qr.svg${key ? `?teacher=${encodeURIComponent(key)}` : ""}`;
  if (!ui.qr.src.endsWith(qr)) ui.qr.src = qr;
  if (!room.live) return;
  const step = stepOf(room.live.step);
  ui.counts.textContent = tr("class_counts", { joined: room.live.joined, answered: room.live.answered });
  renderRoster();
  ui.panel.dataset.joined = String(room.live.joined);
  ui.panel.dataset.answered = String(room.live.answered);
  ui.panel.dataset.step = String(room.live.step);
  ui.panel.dataset.revealed = String(room.live.revealed);
  ui.panel.dataset.locked = String(Boolean(room.live.locked));
  if (!room.busy.lock) ui.lock.checked = Boolean(room.live.locked);
  const asked = Boolean(step.choices);
  ui.reveal.disabled = !asked || room.live.revealed;
  const round = room.live.round ?? 1;
  show(ui.again, asked && !room.live.revealed && round < 2);
  ui.panel.dataset.round = String(round);
  clear(ui.spread);
  show(ui.spread, asked && room.counts !== null);
  if (asked && room.counts) {
    // Both rounds side by side once the class voted again: round 1's count, then round 2's with its bar.
    const first = round > 1 ? room.firstCounts : null;
    const most = Math.max(1, ...Object.values(room.counts), ...Object.values(first ?? {}));
    if (first) ui.spread.append(el("li", { className: "lesson-class__rounds", text: tr("class_rounds") }));
    for (const choice of step.choices) {
      const n = room.counts[choice] ?? 0;
      const bar = el("span", { className: "lesson-class__bar" });
      bar.style.width = `${(100 * n) / most}%`;
      const was = first ? first[choice] ?? 0 : null;
      const shift = was === null ? String(n) : `${was} → ${n}`;
      ui.spread.append(el("li", { dataset: { choice, count: String(n), first: was === null ? "" : String(was) } }, [
        el("span", { className: "lesson-class__choice", text: label(step, choice) }),
        el("span", { className: "lesson-class__track" }, [bar]),
        el("span", { className: "lesson-class__n", text: shift }),
      ]));
    }
  }
  renderSaid(step);
}

/** Who joined, newest last; the joins of the last minute counted apart, so a flood shows at a glance. */
const serverClock = () => room.clock.server + (performance.now() - room.clock.at) / 1000;

function renderRoster() {
  const now = serverClock();
  const recent = room.students.filter((s) => now - s.joined_at <= RECENT_SECONDS).length;
  ui.recent.dataset.classRecent = String(recent);
  ui.recent.textContent = recent ? tr("class_recent", { n: recent }) : "";
  ui.removeRecent.textContent = tr("class_remove_recent", { n: recent });
  show(ui.removeRecent, recent > 0);
  const rows = room.students.map((s) => el("li", { dataset: { student: s.student, answered: String(s.answered) } }, [
    el("span", { className: "lesson-class__name", text: s.name }),
    el("button", {
      type: "button", className: "lesson-class__remove", text: "×",
      attrs: { "aria-label": tr("class_remove_named", { name: s.name }), title: tr("class_remove_named", { name: s.name }) },
      onclick: () => removeStudents({ student: s.student }),
    }),
  ]));
  ui.names.replaceChildren(...rows);
}

/** After the reveal: the class's most chosen answer next to what the model did (the lesson's verdict). */
function renderSaid(step) {
  const outcome = room.verdict?.step === room.live.step ? room.verdict.outcome : undefined;
  const ready = room.live.revealed && step.choices && room.counts && outcome !== undefined && lesson.step === room.live.step;
  show(ui.said, Boolean(ready));
  if (!ready) {
    ui.said.textContent = "";
    return;
  }
  const total = Object.values(room.counts).reduce((s, n) => s + n, 0);
  const top = step.choices.reduce((best, c) => ((room.counts[c] ?? 0) > (room.counts[best] ?? 0) ? c : best), step.choices[0]);
  const said = total ? tr("class_said", { choice: label(step, top), n: room.counts[top], total }) : tr("class_said_none");
  const did = outcome ? tr("class_model_did", { outcome: label(step, outcome) }) : tr("class_model_open");
  ui.said.textContent = sentences([said, did]);
}

function renderStudent() {
  ui.following.textContent = tr("class_following", { code: room.code });
  const name = mySaved()?.name;
  ui.me.textContent = name ? tr("class_me", { name }) : "";
  ui.panel.dataset.step = String(room.live?.step ?? "");
  ui.panel.dataset.revealed = String(room.live?.revealed ?? "");
  if (!room.live) return;
  const step = stepOf(room.live.step);
  const mine = myAnswer(room.live.step);
  const pending = pendingFor(room.live.step);
  ui.panel.dataset.mine = mine ?? "";
  // "pending": sent, not yet acknowledged (retried); "received": the server has it.
  ui.panel.dataset.sent = pending ? "pending" : mine ? "received" : "";
  if (!step.choices) ui.mine.textContent = tr("class_no_question");
  else if (pending) ui.mine.textContent = tr("class_mine_pending", { choice: label(step, pending.choice) });
  else if (mine && room.live.revealed) ui.mine.textContent = tr("class_mine_final", { choice: label(step, mine) });
  else if (mine) ui.mine.textContent = tr("class_mine", { choice: label(step, mine) });
  else if (room.live.revealed) ui.mine.textContent = tr("class_mine_late");
  else if ((room.live.round ?? 1) > 1) ui.mine.textContent = tr("class_again_student");
  else ui.mine.textContent = tr("class_mine_none");
  // Also under the question's button, where the student looks after sending (the panel may be a screen away).
  if (step.choices && lesson.step === room.live.step) lesson.hint(ui.mine.textContent);
}

// ---- events ------------------------------------------------------------------------------------

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
    setConnection("back");
    onState(JSON.parse(event.data));
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
function refreshCounts() {
  if (room.countsBusy) {
    room.countsAgain = true;
    return;
  }
  room.countsBusy = true;
  call("GET", `/${room.code}`)
    .then((view) => {
      room.live = { ...room.live, ...view };
      room.counts = view.counts ?? null;
      if ((view.round ?? 1) > 1) readFirstRound(view.step);
      else room.firstCounts = null;
      room.students = view.students ?? [];
      if (view.now) [room.clock.server, room.clock.at] = [view.now, performance.now()];
      render();
    }, failed)
    .finally(() => {
      room.countsBusy = false;
      if (room.countsAgain) {
        room.countsAgain = false;
        refreshCounts();
      }
    });
}

/** Round 1's counts of the step, from the class's results (the class state carries the open round's only). */
function readFirstRound(n) {
  call("GET", `/${room.code}/results`).then((results) => {
    const step = results.steps.find((s) => s.step === n);
    if (room.role !== "teacher" || room.live?.step !== n || !step) return;
    room.firstCounts = step.rounds[0]?.counts ?? null;
    render();
  }, () => {}); // the counts of round 2 still show; the next event asks again
}

/** The teacher's "vote again": the server closes the first vote and opens the second; the phones are told. */
async function voteAgain() {
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

/** The teacher ended the class (here, or on another of their screens): its summary, then the panel of no class. */
async function finish(endedCode, endedToken) {
  if (room.summary?.code === endedCode) return;
  room.summary = { code: endedCode, token: endedToken, results: null };
  leave(null);
  try {
    room.summary.results = await call("GET", `/${endedCode}/results?lang=${document.documentElement.lang || "en"}`,
      undefined, endedToken);
  } catch (error) {
    say(error, undefined, { key: "class_summary_failed" });
  }
  render();
  ui.summary.scrollIntoView({ block: "start" });
  window.scrollTo(0, 0);
}

function renderSummary() {
  ui.summaryTitle.textContent = tr("class_summary_title", { code: room.summary.code });
  const steps = (room.summary.results?.steps ?? []).filter((s) => s.accepted !== null || s.rounds.some((r) => r.answered));
  const rows = steps.map((s) => el("li", { dataset: { step: String(s.step) } }, [
    el("strong", { text: tr("class_summary_step", { n: s.step }) }), " ", tr(`${s.id}_title`),
    el("ul", {}, s.rounds.map((r) => el("li", {
      dataset: { round: String(r.round), right: String(r.right ?? ""), answered: String(r.answered) },
      text: r.right === null ? tr("class_summary_open", { round: r.round, answered: r.answered })
        : tr("class_summary_round", { round: r.round, right: r.right, answered: r.answered,
          share: r.answered ? Math.round((100 * r.right) / r.answered) : 0 }),
    }))),
  ]));
  if (room.summary.results && !rows.length) rows.push(el("li", { text: tr("class_summary_none") }));
  ui.summarySteps.replaceChildren(...rows);
  ui.download.disabled = !room.summary.results;
}

/** The CSV with the teacher's token (a link sends none): fetched, then saved under the server's file name. */
async function downloadResults() {
  const lang = document.documentElement.lang || "en";
  try {
    const response = await fetch(`/api/classes/${room.summary.code}/results.csv?lang=${lang}`,
      { headers: { Authorization: `Bearer ${room.summary.token}` } });
    if (!response.ok) throw await responseError(response);
    const link = el("a", { attrs: { href: URL.createObjectURL(await response.blob()),
      download: `class-${room.summary.code}-results.csv` } });
    document.body.append(link);
    link.click();
    link.remove();
  } catch (error) {
    say(error instanceof ClassRequestError ? error : new ClassRequestError(0), undefined, { key: "class_summary_failed" });
  }
}

/** The teacher key the server asks for (HP_TEACHER_KEY), as typed in this tab. */
const teacherKey = () => read(sessionStorage, KEY_KEY);

async function startClass() {
  room.busy.start = true;
  render();
  try {
    const key = teacherKey();
    const made = await call("POST", "", undefined, null, key ? { "X-Teacher-Key": key } : {});
    write(localStorage, TEACHER_KEY, {
      code: made.code, token: made.teacher_token, join_url: made.join_url, join_urls: made.join_urls,
      teacher_stream: made.teacher_stream, loopback: made.loopback,
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

async function joinTyped(event) {
  event.preventDefault();
  const typed = ui.codeInput.value.toUpperCase().replace(/[\s-]/g, "");
  if (!CODE_SHAPE.test(typed)) {
    say("class_code_shape");
    return;
  }
  join(typed, "class_not_found", ui.nameInput.value.trim());
}

/**
 * Take a seat in the class (POST /join), or come back to this browser's seat with its token: the server then
 * returns this student's answers so far. missing: what to say when no class has the code.
 */
async function join(joinCode, missing = "class_gone", name = "") {
  const saved = mySaved();
  const seat = saved?.code === joinCode && !saved.ended ? saved : null;
  joining(joinCode);
  let joined;
  try {
    joined = await call("POST", `/${joinCode}/join`, !seat && name ? { name } : undefined, seat?.token);
  } catch (error) {
    if (room.role !== "joining" || room.code !== joinCode) return; // the student went on alone meanwhile
    if (error.type === "student_removed") {
      room.code = joinCode;
      over("class_removed");
    } else if (error.status === 404 && seat) {
      // This browser was in the class and it is gone (ended or expired while away): its end screen.
      room.code = joinCode;
      over("class_gone");
    } else {
      refused(joinCode, error, missing, name);
    }
    return;
  }
  if (room.role !== "joining" || room.code !== joinCode) return;
  stopJoining();
  const own = joined.student_token === seat?.token;
  const answers = { ...(own ? seat.answers : {}), ...joined.answers };
  write(localStorage, STUDENT_KEY, { code: joinCode, token: joined.student_token, student: joined.student,
    name: joined.name, answers, pending: own ? seat.pending ?? null : null });
  begin("student", joinCode, null);
  if (myPending()) attemptAnswer(); // an answer the server had not acknowledged before the reload
}

/** While the join is asked (a store that does not answer takes seconds): the join screen says so. */
function joining(joinCode) {
  stopJoining();
  room.role = "joining";
  room.code = joinCode;
  room.refusal = null;
  render();
}

/**
 * A phone the class refused, or whose store did not answer: the join screen, on the first screen, says why in
 * the page's language. Never the solo lesson as if nothing happened. It tries again by itself after
 * Retry-After where waiting helps (429, an outage); slowly, with a button to try at once, where the teacher
 * may open a seat (locked, full); not at all for a class that does not exist.
 */
function refused(joinCode, error, missing, name) {
  stopJoining();
  room.role = "joining";
  room.code = joinCode;
  const soon = error.status === 429 || isOutage(error) || error.status >= 500;
  const seat = error.type === "class_locked" || error.type === "class_full";
  const waits = soon || seat;
  room.refusal = {
    words: error.status === 404 ? { key: missing, vars: {} } : wording(error),
    status: error.status,
    waits,
    button: seat || (!waits && error.status !== 404),
    left: seat ? SEAT_RETRY_SECONDS : Math.max(1, error.retryAfter ?? RETRY_MS[2] / 1000),
  };
  room.pendingJoin = () => join(joinCode, missing, name);
  if (waits) {
    room.running.joinTick = setInterval(() => {
      room.refusal.left = Math.max(0, room.refusal.left - 1);
      renderRetry();
    }, 1000);
    room.running.join = setTimeout(retryJoin, 1000 * room.refusal.left);
  }
  render();
  window.scrollTo(0, 0);
}

function retryJoin() {
  stopJoining();
  room.pendingJoin?.();
}

function stopJoining() {
  clearTimeout(room.running.join);
  clearInterval(room.running.joinTick);
  room.running.join = room.running.joinTick = null;
}

function begin(asRole, classCode, teacherToken) {
  room.role = asRole;
  room.code = classCode;
  room.token = teacherToken;
  room.live = null;
  room.counts = null;
  room.firstCounts = null;
  room.students = [];
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

function leave(messageKey) {
  stopListening();
  if (room.role === "teacher") write(localStorage, TEACHER_KEY, null);
  if (room.role === "student" || room.role === "over") write(localStorage, STUDENT_KEY, null);
  room.role = null;
  room.code = null;
  room.token = null;
  room.live = null;
  lesson.leaveClass();
  render();
  say(messageKey);
}

const overKey = (reason) => ({ class_gone: "class_over_gone", class_removed: "class_over_removed",
  class_lost: "class_lost" })[reason] ?? "class_over";

/** A student's class is over: the end screen, kept in this browser so that a reload shows it again. */
function over(messageKey) {
  stopListening();
  write(localStorage, STUDENT_KEY, { code: room.code, ended: true, reason: messageKey });
  room.role = "over";
  room.ended = messageKey;
  room.live = null;
  lesson.leaveClass();
  render();
  say(null);
  window.scrollTo(0, 0);
}

/** A student's answer is kept as pending, then sent until the server acknowledges it. */
function sendAnswer(n, choice) {
  updateSeat((seat) => { seat.pending = { step: n, choice }; });
  room.retries = 0;
  say(null);
  render();
  attemptAnswer();
}

function attemptAnswer() {
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

/** The teacher's reveal, for the whole class: the server first, then this screen, then (by events) the phones. */
async function revealClass() {
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
async function moveClass(n) {
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

/** The teacher removes one student ({student}) or everyone who joined after a moment ({joined_after}). */
async function removeStudents(which) {
  try {
    await call("POST", `/${room.code}/remove`, which);
  } catch (error) {
    failed(error, { key: "class_remove_failed" });
    return;
  }
  refreshCounts();
}

/** The teacher's switch: close joining, or open it again; the switch shows what the server holds. */
async function setLock(locked) {
  room.busy.lock = true;
  render();
  try {
    await call("POST", `/${room.code}/${locked ? "lock" : "unlock"}`);
    room.live = { ...room.live, locked };
    say(null);
  } catch (error) {
    failed(error);
  } finally {
    room.busy.lock = false;
    render();
    if (!room.live) ui.lock.checked = !locked;
  }
}

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
  if (room.role === "student") sendAnswer(n, answer.choice);
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
  ui.end.addEventListener("click", () => { ui.endDialog.showModal(); });
  ui.endNo.addEventListener("click", () => { ui.endDialog.close(); });
  ui.endYes.addEventListener("click", () => {
    ui.endDialog.close();
    const [endedCode, endedToken] = [room.code, room.token];
    call("POST", `/${room.code}/end`).then(() => finish(endedCode, endedToken),
      (error) => failed(error, { key: "class_end_failed" }));
  });
  ui.download.addEventListener("click", () => { downloadResults(); });
  ui.summaryClose.addEventListener("click", () => {
    room.summary = null;
    render();
  });
  ui.retry.addEventListener("click", () => { retryJoin(); });
  ui.lock.addEventListener("change", () => { setLock(ui.lock.checked); });
  ui.removeRecent.addEventListener("click", () => {
    removeStudents({ joined_after: serverClock() - RECENT_SECONDS });
  });
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
  } else if (linkCode && CODE_SHAPE.test(linkCode) && teacher?.code !== linkCode) join(linkCode);
  else if (teacher?.code && teacher?.token) begin("teacher", teacher.code, teacher.token);
  else if (student?.code) join(student.code);
  else render();
}

/** The language changed: word the panel again. */
export function redrawClass() {
  if (!ui.panel) return;
  if (room.role) render();
  if (room.connection) renderConnection();
  if (room.status) ui.status.textContent = statusText(); // its lead and its words, in the new language
}
