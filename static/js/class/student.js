// A student's way into a class: the typed code or the join link, the join screen while it is asked or refused
// (with its countdown to the next attempt), and an answer to the class's question.

import { LANGS } from "../shared/constants.js";
import { read, write } from "../shared/storage.js";
import { isOutage, wording } from "./errors.js";
import { myPending, mySaved, REMOVED_KEY, STUDENT_KEY, updateSeat } from "./storage.js";
import { CODE_SHAPE, linkCode, linkKey, NAME_CHARS, RETRY_MS, room, SEAT_RETRY_SECONDS, ui } from "./room.js";
import { render, renderRetry } from "./screens.js";
import { attemptAnswer, begin, call, over, say, stopJoining } from "./session.js";

export async function joinTyped(event) {
  event.preventDefault();
  const typed = ui.codeInput.value.toUpperCase().replace(/[\s-]/g, "");
  if (!CODE_SHAPE.test(typed)) {
    say("class_code_shape");
    return;
  }
  const name = ui.nameInput.value.trim();
  if ([...name].length > NAME_CHARS) {
    say("class_name_too_long");
    return;
  }
  join(typed, "class_not_found", name);
}

/** A join link: the name first, on the phone's first screen, in its language (blank or skipped: the server's). */
export function askName(joinCode) {
  stopJoining();
  room.role = "naming";
  room.code = joinCode;
  room.refusal = null;
  render();
  window.scrollTo(0, 0);
}

export function joinNamed(event, skip = false) {
  event.preventDefault();
  const name = skip ? "" : ui.firstName.value.trim();
  if ([...name].length > NAME_CHARS) return; // the box says why (renderNameCount)
  join(room.code, "class_gone", name);
}

let pending = null; // {code, promise}: the join on its way

/**
 * Take a seat in the class (POST /join), or come back to this browser's seat with its token: the server then
 * returns this student's answers so far. missing: what to say when no class has the code. A second tap while a join
 * of the same code is on its way waits for that one: each POST without a token takes a new seat (a double tap on a
 * phone made two students of one, each with a vote).
 */
export function join(joinCode, missing = "class_gone", name = "") {
  if (pending?.code === joinCode) return pending.promise;
  const promise = joinOnce(joinCode, missing, name).finally(() => {
    if (pending?.promise === promise) pending = null;
  });
  pending = { code: joinCode, promise };
  return promise;
}

async function joinOnce(joinCode, missing, name) {
  const saved = mySaved();
  // A seat left in this browser comes back, unless another name is typed: someone else at the same computer.
  const other = saved?.left && name && name !== saved.name;
  const seat = saved?.code === joinCode && !saved.ended && !other ? saved : null;
  const removed = read(localStorage, REMOVED_KEY);
  const refusedToken = removed?.code === joinCode ? removed.token : null;
  joining(joinCode);
  let joined;
  // A new seat: the name (or none: the server gives one in this page's language), and the link's key.
  const lang = (document.documentElement.lang || "en").slice(0, 2);
  const body = { lang: LANGS.includes(lang) ? lang : "en" };
  if (name) body.name = name;
  if (linkKey && joinCode === linkCode) body.key = linkKey;
  try {
    joined = await call("POST", `/${joinCode}/join`, seat ? undefined : body, seat?.token ?? refusedToken);
  } catch (error) {
    if (room.role !== "joining" || room.code !== joinCode) return; // the student went on alone meanwhile
    if (error.type === "student_removed") {
      room.code = joinCode;
      over("class_removed");
    } else if (error.type === "refused_name") {
      // The same name would be refused again: the name box again, saying why, for another name.
      askName(joinCode);
      room.refusal = { words: wording(error), status: error.status, waits: false, button: false };
      render();
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
  begin("student", joinCode, null, Boolean(joined.waiting)); // waiting: at the door until the teacher admits
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

export function retryJoin() {
  stopJoining();
  room.pendingJoin?.();
}

/** A student's answer is kept as pending, then sent until the server acknowledges it. */
export function sendAnswer(n, choice) {
  updateSeat((seat) => { seat.pending = { step: n, choice }; });
  room.retries = 0;
  say(null);
  render();
  attemptAnswer();
}
