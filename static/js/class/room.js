// The class as this screen has it, in one object (room), the panel's elements (ui), and what is read from them:
// the step's labels, the server's clock, the status line's words. No function here changes the page.

import { CLASS_RULES } from "../shared/constants.js";
import { $ } from "../shared/dom.js";
import { sentences, tr } from "../shared/i18n.js";
import { orderLabel } from "../lesson/kinds.js";
import { myAnswer, mySaved, pendingFor } from "./storage.js";

// A class code's alphabet and length, as the server draws codes (GET /api/options classes).
export const CODE_SHAPE = new RegExp(`^[${CLASS_RULES.code_alphabet}]{${CLASS_RULES.code_length}}$`);

export const BACK_MS = 6000; // how long "back" stays on screen after an outage

export const RETRY_MS = [1000, 2000, 3000, 5000]; // a student's unacknowledged answer is sent again after these

// A locked or full class may open a seat: asked again this often (each ask counts as a join from the address).
export const SEAT_RETRY_SECONDS = 15;

export const RECENT_SECONDS = CLASS_RULES.recent_seconds; // the roster's "joined in the last minute"

export const NAME_CHARS = CLASS_RULES.name_chars; // the server's limit on a name, in characters

// The link's class and join key as the server decoded them (app/services/link_codec.py, embedded as #page-link):
// a class= that cannot be a code is null here, and the page said so. The join link's key (the server's join_url and
// QR code carry it) is the class's credential: a join that holds it is never held by others' wrong codes.
const link = JSON.parse(document.getElementById("page-link").textContent).state;
export const linkCode = link.class;
export const linkKey = link.key;

export const ui = {
  panel: $("#class-panel"),
  idle: $("#class-idle"),
  start: $("#class-start"),
  keyForm: $("#class-key-form"),
  keyInput: $("#class-key"),
  joinForm: $("#class-join-form"),
  codeInput: $("#class-code-input"),
  nameInput: $("#class-name-input"),
  nameCount: $("#class-name-count"),
  first: $("#class-first"),
  firstName: $("#class-first-name"),
  firstCount: $("#class-first-count"),
  firstSkip: $("#class-first-skip"),
  teacher: $("#class-teacher"),
  code: $("#class-code"),
  qr: $("#class-qr"),
  link: $("#class-link"),
  links: $("#class-links"),
  phones: $("#class-phones"),
  counts: $("#class-counts"),
  waiting: $("#class-waiting"),
  waitingCount: $("#class-waiting-count"),
  waitingNames: $("#class-waiting-names"),
  admitAll: $("#class-admit-all"),
  refuseAll: $("#class-refuse-all"),
  refused: $("#class-refused"),
  wrongCodes: $("#class-wrong-codes"),
  removeDialog: $("#class-remove-dialog"),
  removeText: $("#class-remove-text"),
  removeNames: $("#class-remove-names"),
  removeYes: $("#class-remove-yes"),
  removeNo: $("#class-remove-no"),
  roster: $("#class-roster"),
  recent: $("#class-recent"),
  names: $("#class-names"),
  removeRecent: $("#class-remove-recent"),
  spread: $("#class-spread"),
  spreadHeld: $("#class-spread-held"),
  spreadShow: $("#class-spread-show"),
  said: $("#class-said"),
  reveal: $("#class-reveal"),
  again: $("#class-again"),
  end: $("#class-end"),
  endDialog: $("#class-end-dialog"),
  endText: $("#class-end-text"),
  endYes: $("#class-end-yes"),
  endNo: $("#class-end-no"),
  summary: $("#class-summary"),
  summaryTitle: $("#class-summary-title"),
  summarySteps: $("#class-summary-steps"),
  download: $("#class-download"),
  downloadAnswers: $("#class-download-answers"),
  summaryClose: $("#class-summary-close"),
  summaryKept: $("#class-summary-kept"),
  summaryLink: $("#class-summary-link"),
  delete: $("#class-delete"),
  deleteDialog: $("#class-delete-dialog"),
  deleteText: $("#class-delete-text"),
  deleteYes: $("#class-delete-yes"),
  deleteNo: $("#class-delete-no"),
  past: $("#class-past"),
  pastList: $("#class-past-list"),
  retryText: $("#class-retry-text"),
  retry: $("#class-retry"),
  door: $("#class-door"),
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
export const room = {
  steps: [], // the lesson's steps, as main.js hands them over (startClassMode)
  // "teacher" | "student" | "over" (a student whose class ended) | "joining" (refused) | "naming" (a join link asks
  // the name first) | null
  role: null,
  code: null,
  token: null, // the teacher's; a student's is in their seat (STUDENT_KEY)
  live: null, // the class's last state: {step, revealed, joined, answered, door, locked, round}
  waiting: false, // student: at the door, not admitted yet (the join said 202, or the stream says waiting)
  waitingList: [], // teacher only: who waits at the door, [{student, name, joined_at}]
  wrongCodes: 0, // teacher only: wrong codes from the class's network in the last minute
  refusedJoins: 0, // teacher only: joins refused because the teacher had refused or removed their name
  confirming: null, // teacher: the removal of several the dialog asks about, {body, names, refuse}
  counts: null, // teacher only: {choice: students} at live.step, in its open round
  firstCounts: null, // teacher only: round 1's {choice: students} once the class votes again
  spreadShown: null, // teacher only: the step whose spread the teacher showed before its reveal
  accepted: null, // teacher only: {step, choices} the server accepted at the step's reveal (its bars are marked)
  summary: null, // the teacher's ended class: {code, token, results} (GET /results)
  deleting: null, // the ended class whose results the delete dialog asks about: {code, token}
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
  outageSince: 0, // performance.now() when it last said so: only a request sent after that can say "back"
  connection: null, // what the connection pill says: "reconnecting" | "back" | null
  ended: null, // student: why their class is over, as over() was told (its end screen)
  // a refused phone's join screen: {words, status, waits, button, left: seconds to the next attempt}; null while
  // the join is asked
  refusal: null,
  moving: null, // teacher: the step asked of the server, not yet confirmed
  busy: { start: false, door: false, again: false }, // these buttons' requests are out: the button waits
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
export const forLesson = {
  get role() {
    return room.role;
  },
  get code() {
    return room.code;
  },
  revealed: (n) => Boolean(room.live && room.live.step === n && room.live.revealed),
  answer: (n) => (room.role === "student" ? pendingFor(n)?.choice ?? myAnswer(n) : null),
};

/** The token a request carries: the teacher's, or this student's seat in the class. */
export const myToken = () => (room.role === "teacher" ? room.token : room.role === "student" ? mySaved()?.token : null);

export const stepOf = (n) => room.steps[n - 1];

export function label(step, choice) {
  if (step.kind === "ex2") return orderLabel(choice, "heads");
  if (step.kind === "ex3") return orderLabel(choice, "modes");
  return tr(`${step.id}_choice_${choice}`);
}

/** Who joined, newest last; the joins of the last minute counted apart, so a flood shows at a glance. */
export const serverClock = () => room.clock.server + (performance.now() - room.clock.at) / 1000;

export const statusText = () => (room.status ? sentences([
  room.status.lead && tr(room.status.lead.key, room.status.lead.vars), tr(room.status.key, room.status.vars),
]) : "");
