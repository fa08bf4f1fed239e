// Class mode's records in this browser: the teacher's class (its token: never in a URL) and a student's seat
// (their token, answers, and an answer not yet acknowledged), read and written through shared/storage.js.

import { read, write } from "../shared/storage.js";

// {code, token, join_url, join_urls, teacher_stream, loopback, results_days}: only on the teacher's device
export const TEACHER_KEY = "heads-positions.class.teacher";

// {code, token, student, name, answers: {step: choice}, pending: {step, choice} | null}: this browser's seat
// in a class, kept so a closed tab comes back as the same student (the server keeps only the token's hash)
// and an answer not yet received is sent again. left: true once the student left the class (leaveSeat).
// {code, ended: true, reason}: the class ended, or the teacher removed this student; the end screen stays.
export const STUDENT_KEY = "heads-positions.class.student";

// [{code, token, ended_at, kept_until, students, questions}]: the classes this browser's teacher ended, each kept
// until the server deletes its results (kept_until, seconds since 1970), so they can be found again (past.js).
export const PAST_KEY = "heads-positions.class.past";
// {code, token}: the seat the teacher removed (or refused) in that class. A later join to it from this browser
// presents the token and is refused, rather than taken as someone new (a script that forgets it is not held: the
// door, on ask after the first reveal or a removal, holds it instead).
export const REMOVED_KEY = "heads-positions.class.removed";

export const KEY_KEY = "heads-positions.class.key"; // HP_TEACHER_KEY as typed, for this tab only (sessionStorage)

export const mySaved = () => read(localStorage, STUDENT_KEY);

export const myAnswer = (step) => mySaved()?.answers?.[step] ?? null;

export const myPending = () => mySaved()?.pending ?? null;

export const pendingFor = (step) => (myPending()?.step === step ? myPending() : null);

/**
 * The student left the class: the seat stays, marked left, so the page does not go back to the class by itself,
 * and joining the same class again comes back as this student, with their answers. The server keeps every seat it
 * gave: a new one would vote a second time on each step (a teacher's review).
 */
export function leaveSeat() {
  const saved = mySaved();
  if (saved && !saved.ended) write(localStorage, STUDENT_KEY, { ...saved, left: true });
}

export function updateSeat(change) {
  const saved = mySaved();
  if (!saved || saved.ended) return;
  change(saved);
  write(localStorage, STUDENT_KEY, saved);
}

/** The teacher key the server asks for (HP_TEACHER_KEY), as typed in this tab. */
export const teacherKey = () => read(sessionStorage, KEY_KEY);
