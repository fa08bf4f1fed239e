// Class mode (README "Class mode"): the teacher leads the lesson on every student's screen.
// The teacher starts a class and moves through the steps with the lesson's own navigation; each student's
// page follows by server-sent events, sends its answer to the server, and reveals when the teacher does.
//
// It drives the lesson page from outside: a step change is the URL's ?step=N followed by a popstate
// (main.js redraws the step the URL names), and a reveal is the answer saved (store.js) before that
// redraw. Secrets stay here: the teacher's token in this browser's localStorage, never in a URL.

import { $, clear, el, show } from "../dom.js";
import { sentences, tr } from "../i18n.js";
import { orderLabel } from "./kinds.js";
import { answerOf, saveAnswer } from "./store.js";

const TEACHER_KEY = "heads-positions.class.teacher"; // {code, token}: only on the teacher's device
const STUDENT_KEY = "heads-positions.class.student"; // {code, answers: {step: choice}}, per tab
const ID_KEY = "heads-positions.student-id"; // random, per browser: no account, no name
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
  article: $("#results"),
  verdict: $("#verdict"),
  form: $("#step-question"),
  commitHint: $("#commit-hint"),
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

const mySaved = () => read(sessionStorage, STUDENT_KEY);
const myAnswer = (step) => mySaved()?.answers?.[step] ?? null;

function keepMyAnswer(step, choice) {
  const saved = mySaved() ?? { code, answers: {} };
  saved.answers[step] = choice;
  write(sessionStorage, STUDENT_KEY, saved);
}

// ---- the server --------------------------------------------------------------------------------

async function call(method, path, body) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (role === "teacher" && token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(`/api/classes${path}`, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new Error(typeof data?.detail === "string" ? data.detail : `HTTP ${response.status}`);
    error.status = response.status;
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
  } else if (error?.status === 429) {
    say("class_too_many");
  } else {
    console.warn("class mode:", error);
    say("class_error");
  }
}

// ---- the lesson page ---------------------------------------------------------------------------

const pageStep = () => Number(ui.article.dataset.step);
const stepOf = (n) => steps[n - 1];

/** Let main.js draw step n again, as it does on the browser's back button. */
function redraw(n) {
  const q = new URLSearchParams(location.search);
  q.set("step", String(n));
  history.replaceState(null, "", `${location.pathname}?${q}`);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

function label(step, choice) {
  if (step.kind === "ex2") return orderLabel(choice, "heads");
  if (step.kind === "ex3") return orderLabel(choice, "modes");
  return tr(`${step.id}_choice_${choice}`);
}

const isCommitted = (saved) => Boolean(saved && (saved.choice !== undefined || saved.answers || saved.revealed));

/** Make this page show the class's step, hidden or revealed as the class has it. */
function follow() {
  const n = live.step;
  const step = stepOf(n);
  const asked = Boolean(step.choices);
  const local = answerOf(step.id);
  let changed = n !== pageStep();
  if (asked && !live.revealed && isCommitted(local)) {
    // An answer from before the class (or from the teacher's own screen): the question opens again.
    saveAnswer(step.id, { choice: undefined, answers: undefined, revealed: undefined });
    changed = true;
  } else if (asked && live.revealed && !isCommitted(local)) {
    const mine = role === "student" ? myAnswer(n) : null;
    saveAnswer(step.id, mine ? { choice: mine } : { revealed: true });
    changed = true;
  }
  if (changed) redraw(n);
}

// ---- what the panel shows ----------------------------------------------------------------------

function render() {
  show(ui.idle, role === null);
  show(ui.teacher, role === "teacher");
  show(ui.student, role === "student");
  // A student's page follows the teacher: no navigation of its own, no step QR code.
  show(ui.nav, role !== "student");
  show(ui.share, role === null);
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

/** After the reveal: the class's most chosen answer next to what the model did (the page's verdict). */
function renderSaid(step) {
  const outcome = ui.verdict.dataset.outcome;
  const ready = live.revealed && step.choices && counts && outcome !== undefined && pageStep() === live.step;
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
  if (step.choices && pageStep() === live.step) ui.commitHint.textContent = ui.mine.textContent;
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
    if (pageStep() !== 1) await call("POST", `/${code}/step`, { step: pageStep() });
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
  try {
    await call("GET", `/${typed}`);
    join(typed);
  } catch (error) {
    if (error.status === 404) say("class_not_found");
    else failed(error);
  }
}

function join(joinCode) {
  const saved = mySaved();
  write(sessionStorage, STUDENT_KEY, saved?.code === joinCode ? saved : { code: joinCode, answers: {} });
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
  connect();
}

function leave(messageKey) {
  source?.close();
  source = null;
  if (role === "teacher") write(localStorage, TEACHER_KEY, null);
  if (role === "student") write(sessionStorage, STUDENT_KEY, null);
  role = null;
  code = null;
  token = null;
  live = null;
  render();
  say(messageKey);
}

/** A commit in class: the student's answer goes to the server, and the page waits for the reveal. */
function onCommit(event) {
  if (role === null || event.target !== ui.form || !live) return;
  const step = stepOf(pageStep());
  if (!step.choices) return; // the self-test and the summary stay the student's own
  event.preventDefault();
  event.stopImmediatePropagation();
  if (role === "teacher") {
    say("class_teacher_commit");
    return;
  }
  const picked = $('input[name="choice"]:checked', ui.form);
  if (!picked) {
    say("class_mine_none");
    return;
  }
  const n = pageStep();
  call("POST", `/${code}/answers`, { student: studentId(), step: n, choice: picked.value })
    .then(() => {
      keepMyAnswer(n, picked.value);
      say(null);
      render();
    }, (error) => {
      if (error.status === 409) say("class_closed");
      else failed(error);
    });
}

/** The page drew a step. The teacher moved with the lesson's own navigation: the class follows. */
function onPageStep() {
  if (role === "student" && live) renderStudent(); // main.js cleared the hint under the question
  if (role !== "teacher" || !live || pageStep() === live.step) return;
  live = { ...live, step: pageStep(), revealed: false, answered: 0 };
  counts = null;
  call("POST", `/${code}/step`, { step: pageStep() }).catch(failed);
}

export function startClassMode(lessonSteps) {
  steps = lessonSteps;
  if (!ui.panel) return;
  ui.start.addEventListener("click", () => { startClass(); });
  ui.joinForm.addEventListener("submit", (event) => { joinTyped(event); });
  ui.reveal.addEventListener("click", () => { call("POST", `/${code}/reveal`).catch(failed); });
  ui.end.addEventListener("click", () => {
    call("POST", `/${code}/end`).then(() => leave("class_ended"), failed);
  });
  ui.leave.addEventListener("click", () => leave(null));
  // Capture on the document: this runs before main.js's own submit handler on the form.
  document.addEventListener("submit", onCommit, true);
  new MutationObserver(onPageStep).observe(ui.article, { attributeFilter: ["data-step", "data-render-count"] });
  new MutationObserver(() => { if (role === "teacher" && live) render(); })
    .observe(ui.verdict, { attributeFilter: ["data-outcome"] });

  const teacher = read(localStorage, TEACHER_KEY);
  const student = mySaved();
  if (linkCode && CODE_SHAPE.test(linkCode) && teacher?.code !== linkCode) join(linkCode);
  else if (teacher?.code && teacher?.token) begin("teacher", teacher.code, teacher.token);
  else if (student?.code) begin("student", student.code, null);
  else render();
}

/** The language changed: word the panel again. */
export function redrawClass() {
  if (ui.panel && role) render();
}
