// Class mode (README "Class mode"): the teacher leads the lesson on every student's screen.
// The teacher starts a class and moves through the steps with the lesson's own navigation; each student's
// page follows by server-sent events, sends its answer to the server, and reveals when the teacher does.
//
// A client of the lesson controller (controller.js), like the page's own buttons and keys: the class's step
// changes call lesson.goTo, the class's reveal calls lesson.reveal, and the controller's cancelable events
// hand class mode what belongs to the class: a student's answer (sent to the server), every reveal on the
// teacher's screen (the class's reveal, asked of the server first), a student's own moves (refused, and
// said why). While in a class, the class holds the record of each question (joinClass's room).
// Secrets stay here: the teacher's token in this browser's localStorage, never in a URL.

import { $, clear, el, show } from "../dom.js";
import { sentences, tr } from "../i18n.js";
import { lesson } from "./controller.js";
import { orderLabel } from "./kinds.js";

const TEACHER_KEY = "heads-positions.class.teacher"; // {code, token}: only on the teacher's device
// {code, token, answers: {step: choice}}: this browser's seat in a class, kept so a closed tab comes back
// as the same student (the server keeps only the token's hash).
const STUDENT_KEY = "heads-positions.class.student";
const ID_KEY = "heads-positions.student-id"; // random, per browser: no account, no name (the event stream's view)
const CODE_SHAPE = /^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}$/;
// Read at load, before main.js rewrites the URL to ?step=N&lang=L.
const linkCode = new URLSearchParams(location.search).get("class");

const ui = {
  panel: $("#class-panel"),
  idle: $("#class-idle"),
  start: $("#class-start"),
  joinForm: $("#class-join-form"),
  codeInput: $("#class-code-input"),
  teacher: $("#class-teacher"),
  code: $("#class-code"),
  qr: $("#class-qr"),
  link: $("#class-link"),
  counts: $("#class-counts"),
  spread: $("#class-spread"),
  said: $("#class-said"),
  reveal: $("#class-reveal"),
  end: $("#class-end"),
  student: $("#class-student"),
  following: $("#class-following"),
  mine: $("#class-mine"),
  leave: $("#class-leave"),
  status: $("#class-status"),
  held: $("#class-held"),
  nav: $(".lesson-nav"),
  share: $(".lesson-share"),
};

let steps = [];
let role = null; // "teacher" | "student" | null
let code = null;
let token = null;
let live = null; // the class's last state: {step, revealed, joined, answered}
let counts = null; // teacher only: {choice: students} at live.step
let source = null; // the EventSource
let countsBusy = false;
let countsAgain = false;
let verdict = null; // the lesson's last drawn verdict, {step, outcome}: the teacher's "the model did"

/** The class as the lesson controller sees it: who this screen is, and the class's record of its steps. */
const room = {
  get role() {
    return role;
  },
  get code() {
    return code;
  },
  revealed: (n) => Boolean(live && live.step === n && live.revealed),
  answer: (n) => (role === "student" ? myAnswer(n) : null),
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

function studentId() {
  let id = read(localStorage, ID_KEY);
  if (typeof id !== "string" || !/^[A-Za-z0-9_-]{16,64}$/.test(id)) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    id = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    write(localStorage, ID_KEY, id);
  }
  return id;
}

const mySaved = () => read(localStorage, STUDENT_KEY);
const myAnswer = (step) => mySaved()?.answers?.[step] ?? null;

function keepMyAnswer(step, choice) {
  const saved = mySaved();
  if (!saved) return;
  saved.answers[step] = choice;
  write(localStorage, STUDENT_KEY, saved);
}

// ---- the server --------------------------------------------------------------------------------

/** The token a request carries: the teacher's, or this student's seat in the class. */
const myToken = () => (role === "teacher" ? token : role === "student" ? mySaved()?.token : null);

async function call(method, path, body, bearer = myToken()) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  const response = await fetch(`/api/classes${path}`, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    // Class errors are {detail: [{type, msg, ctx}]}: the type says which message to show.
    const first = Array.isArray(data?.detail) ? data.detail[0] : null;
    const error = new Error(first?.msg ?? `HTTP ${response.status}`);
    error.status = response.status;
    error.type = first?.type ?? null;
    throw error;
  }
  return data;
}

function say(key, vars) {
  ui.status.textContent = key ? tr(key, vars) : "";
  show(ui.status, Boolean(key));
}

function failed(error) {
  if (error?.status === 404) {
    leave("class_gone");
  } else if (error?.type === "class_locked") {
    say("class_locked");
  } else if (error?.type === "class_full") {
    say("class_full");
  } else if (error?.status === 429) {
    say("class_too_many");
  } else {
    console.warn("class mode:", error);
    say("class_error");
  }
}

// ---- the lesson page ---------------------------------------------------------------------------

const stepOf = (n) => steps[n - 1];

function label(step, choice) {
  if (step.kind === "ex2") return orderLabel(choice, "heads");
  if (step.kind === "ex3") return orderLabel(choice, "modes");
  return tr(`${step.id}_choice_${choice}`);
}

/** Make this page show the class's step, hidden or revealed as the class has it. */
function follow() {
  const n = live.step;
  const asked = Boolean(stepOf(n).choices);
  if (lesson.step !== n) lesson.goTo(n, { from: "class", focus: false });
  // The same step, opened again by the teacher after its reveal: the question comes back.
  else if (asked && !live.revealed && lesson.revealed) lesson.goTo(n, { from: "class", focus: false, again: true });
  if (asked && live.revealed) lesson.reveal({ from: "class" });
}

// ---- what the panel shows ----------------------------------------------------------------------

function render() {
  show(ui.idle, role === null);
  show(ui.teacher, role === "teacher");
  show(ui.student, role === "student");
  // A student's page follows the teacher: no navigation of its own, no step QR code; where the step
  // buttons were, the page says why they are gone.
  show(ui.nav, role !== "student");
  show(ui.share, role === null);
  show(ui.held, role === "student");
  if (role === "student") ui.held.textContent = tr("class_nav_held", { code });
  if (role === "teacher") renderTeacher();
  if (role === "student") renderStudent();
}

function renderTeacher() {
  const joinUrl = new URL(`/lesson?class=${code}`, location.href).href;
  ui.code.textContent = code;
  ui.link.href = joinUrl;
  ui.link.textContent = joinUrl;
  if (!ui.qr.src.endsWith(`/classes/${code}/qr.svg`)) ui.qr.src = `/classes/${code}/qr.svg`;
  if (!live) return;
  const step = stepOf(live.step);
  ui.counts.textContent = tr("class_counts", { joined: live.joined, answered: live.answered });
  ui.panel.dataset.joined = String(live.joined);
  ui.panel.dataset.answered = String(live.answered);
  ui.panel.dataset.step = String(live.step);
  ui.panel.dataset.revealed = String(live.revealed);
  const asked = Boolean(step.choices);
  ui.reveal.disabled = !asked || live.revealed;
  clear(ui.spread);
  show(ui.spread, asked && counts !== null);
  if (asked && counts) {
    const most = Math.max(1, ...Object.values(counts));
    for (const choice of step.choices) {
      const n = counts[choice] ?? 0;
      const bar = el("span", { className: "lesson-class__bar" });
      bar.style.width = `${(100 * n) / most}%`;
      ui.spread.append(el("li", { dataset: { choice, count: String(n) } }, [
        el("span", { className: "lesson-class__choice", text: label(step, choice) }),
        el("span", { className: "lesson-class__track" }, [bar]),
        el("span", { className: "lesson-class__n", text: String(n) }),
      ]));
    }
  }
  renderSaid(step);
}

/** After the reveal: the class's most chosen answer next to what the model did (the lesson's verdict). */
function renderSaid(step) {
  const outcome = verdict?.step === live.step ? verdict.outcome : undefined;
  const ready = live.revealed && step.choices && counts && outcome !== undefined && lesson.step === live.step;
  show(ui.said, Boolean(ready));
  if (!ready) {
    ui.said.textContent = "";
    return;
  }
  const total = Object.values(counts).reduce((s, n) => s + n, 0);
  const top = step.choices.reduce((best, c) => ((counts[c] ?? 0) > (counts[best] ?? 0) ? c : best), step.choices[0]);
  const said = total ? tr("class_said", { choice: label(step, top), n: counts[top], total }) : tr("class_said_none");
  const did = outcome ? tr("class_model_did", { outcome: label(step, outcome) }) : tr("class_model_open");
  ui.said.textContent = sentences([said, did]);
}

function renderStudent() {
  ui.following.textContent = tr("class_following", { code });
  ui.panel.dataset.step = String(live?.step ?? "");
  ui.panel.dataset.revealed = String(live?.revealed ?? "");
  if (!live) return;
  const step = stepOf(live.step);
  const mine = myAnswer(live.step);
  ui.panel.dataset.mine = mine ?? "";
  if (!step.choices) ui.mine.textContent = tr("class_no_question");
  else if (mine && live.revealed) ui.mine.textContent = tr("class_mine_final", { choice: label(step, mine) });
  else if (mine) ui.mine.textContent = tr("class_mine", { choice: label(step, mine) });
  else if (live.revealed) ui.mine.textContent = tr("class_mine_late");
  else ui.mine.textContent = tr("class_mine_none");
  // Also under the question's button, where the student looks after sending (the panel may be a screen away).
  if (step.choices && lesson.step === live.step) lesson.hint(ui.mine.textContent);
}

// ---- events ------------------------------------------------------------------------------------

function connect() {
  source?.close();
  const query = role === "student" ? `?student=${encodeURIComponent(studentId())}` : "";
  source = new EventSource(`/api/classes/${code}/events${query}`);
  source.addEventListener("message", (event) => {
    const data = JSON.parse(event.data);
    if (data.ended) {
      leave("class_ended");
      return;
    }
    const moved = live?.step !== data.step || live?.revealed !== data.revealed;
    live = data;
    say(null);
    if (moved) follow();
    if (role === "teacher") refreshCounts();
    render();
  });
  source.addEventListener("error", () => {
    // EventSource reconnects by itself after a dropped line; it gives up only on an error status.
    if (source.readyState === EventSource.CLOSED) {
      call("GET", `/${code}`).then(connect, failed);
    }
  });
}

/** The teacher's counts, read again after each event; at most one request out at a time. */
function refreshCounts() {
  if (countsBusy) {
    countsAgain = true;
    return;
  }
  countsBusy = true;
  call("GET", `/${code}`)
    .then((view) => {
      live = { ...live, ...view };
      counts = view.counts ?? null;
      render();
    }, failed)
    .finally(() => {
      countsBusy = false;
      if (countsAgain) {
        countsAgain = false;
        refreshCounts();
      }
    });
}

async function startClass() {
  ui.start.disabled = true;
  try {
    const made = await call("POST", "");
    write(localStorage, TEACHER_KEY, { code: made.code, token: made.teacher_token });
    [role, code, token] = ["teacher", made.code, made.teacher_token];
    // The class starts on the step on the teacher's screen, before any event can move the screen to step 1.
    if (lesson.step !== 1) await call("POST", `/${code}/step`, { step: lesson.step });
    begin("teacher", made.code, made.teacher_token);
  } catch (error) {
    failed(error);
  } finally {
    ui.start.disabled = false;
  }
}

async function joinTyped(event) {
  event.preventDefault();
  const typed = ui.codeInput.value.toUpperCase().replace(/[\s-]/g, "");
  if (!CODE_SHAPE.test(typed)) {
    say("class_code_shape");
    return;
  }
  join(typed, "class_not_found");
}

/**
 * Take a seat in the class (POST /join), or come back to this browser's seat with its token: the server then
 * returns this student's answers so far. missing: what to say when no class has the code.
 */
async function join(joinCode, missing = "class_gone") {
  const saved = mySaved();
  const seat = saved?.code === joinCode ? saved : null;
  let joined;
  try {
    joined = await call("POST", `/${joinCode}/join`, undefined, seat?.token);
  } catch (error) {
    if (error.status === 404) {
      if (seat) write(localStorage, STUDENT_KEY, null);
      say(missing);
    } else {
      failed(error);
    }
    return;
  }
  const answers = { ...(joined.student_token === seat?.token ? seat.answers : {}), ...joined.answers };
  write(localStorage, STUDENT_KEY, { code: joinCode, token: joined.student_token, answers });
  begin("student", joinCode, null);
}

function begin(asRole, classCode, teacherToken) {
  role = asRole;
  code = classCode;
  token = teacherToken;
  live = null;
  counts = null;
  say(null);
  render();
  lesson.joinClass(room);
  connect();
}

function leave(messageKey) {
  source?.close();
  source = null;
  if (role === "teacher") write(localStorage, TEACHER_KEY, null);
  if (role === "student") write(localStorage, STUDENT_KEY, null);
  role = null;
  code = null;
  token = null;
  live = null;
  lesson.leaveClass();
  render();
  say(messageKey);
}

/** A student's answer goes to the server; the page waits for the teacher's reveal. */
function sendAnswer(n, choice) {
  call("POST", `/${code}/answers`, { step: n, choice })
    .then(() => {
      keepMyAnswer(n, choice);
      say(null);
      render();
    }, (error) => {
      if (error.status !== 409) {
        failed(error);
        return;
      }
      say("class_closed");
      lesson.hint(tr("class_closed")); // where the student looks, not only in the panel
    });
}

/** The teacher's reveal, for the whole class: the server first, then this screen, then (by events) the phones. */
async function revealClass() {
  try {
    await call("POST", `/${code}/reveal`);
  } catch (error) {
    failed(error);
    return;
  }
  live = { ...live, revealed: true };
  if (lesson.step === live.step) lesson.reveal({ from: "class" });
  render();
}

/** The controller's "move": a student's screen follows the class, so its own moves are refused, and said why. */
function onMove(event) {
  if (role !== "student" || event.detail.from === "class") return;
  event.preventDefault();
  ui.held.dataset.refused = String(Number(ui.held.dataset.refused ?? 0) + 1);
  ui.held.textContent = "";
  ui.held.textContent = tr("class_nav_held", { code }); // written again, so a screen reader says it again
  ui.held.scrollIntoView({ block: "nearest" });
}

/** The controller's "step": the teacher moved with the lesson's own navigation, so the class follows. */
function onStep(event) {
  if (role === null) return;
  const n = event.detail.step;
  if (role === "teacher" && live && event.detail.from !== "class" && n !== live.step) {
    live = { ...live, step: n, revealed: false, answered: 0 };
    counts = null;
    call("POST", `/${code}/step`, { step: n }).catch(failed);
  }
  if (live) render(); // the page drew the question again: its hint, the panel's step
}

/** The controller's "commit": in a class, an answer to the class's question is the class's. */
function onCommit(event) {
  const { step: n, answer } = event.detail;
  if (role === null || !stepOf(n).choices) return; // the self-test and the summary stay the student's own
  event.preventDefault();
  if (role === "student") sendAnswer(n, answer.choice);
  else lesson.reveal(); // the teacher locks in no answer: their button is the class's reveal
}

/** The controller's "reveal": on the teacher's screen every reveal is the class's; on a student's, the teacher's. */
function onReveal(event) {
  const { step: n, from } = event.detail;
  if (role === null || from === "class" || !stepOf(n).choices) return;
  event.preventDefault();
  if (role === "teacher" && live && !live.revealed) revealClass();
  else if (role === "student") lesson.hint(tr("class_following", { code }));
}

export function startClassMode(lessonSteps) {
  steps = lessonSteps;
  if (!ui.panel) return;
  ui.start.addEventListener("click", () => { startClass(); });
  ui.joinForm.addEventListener("submit", (event) => { joinTyped(event); });
  ui.reveal.addEventListener("click", () => { lesson.reveal(); });
  ui.end.addEventListener("click", () => {
    call("POST", `/${code}/end`).then(() => leave("class_ended"), failed);
  });
  ui.leave.addEventListener("click", () => leave(null));
  lesson.addEventListener("move", onMove);
  lesson.addEventListener("step", onStep);
  lesson.addEventListener("commit", onCommit);
  lesson.addEventListener("reveal", onReveal);
  lesson.addEventListener("verdict", (event) => {
    verdict = event.detail;
    if (role === "teacher" && live) render();
  });

  const teacher = read(localStorage, TEACHER_KEY);
  const student = mySaved();
  if (linkCode && CODE_SHAPE.test(linkCode) && teacher?.code !== linkCode) join(linkCode);
  else if (teacher?.code && teacher?.token) begin("teacher", teacher.code, teacher.token);
  else if (student?.code) join(student.code);
  else render();
}

/** The language changed: word the panel again. */
export function redrawClass() {
  if (ui.panel && role) render();
}
