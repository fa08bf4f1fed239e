// The class panel, drawn from room: render() and its parts for the teacher, the student, the end and join screens
// and the summary. Names are the students' text: they go in through textContent only (dom.js's el).

import { clear, el, show } from "../shared/dom.js";
import { fillRich, sentences, tr, verbatim } from "../shared/i18n.js";
import { read } from "../shared/storage.js";
import { lesson } from "../lesson/controller.js";
import { myAnswer, mySaved, pendingFor, TEACHER_KEY } from "./storage.js";
import { label, NAME_CHARS, RECENT_SECONDS, room, serverClock, stepOf, ui } from "./room.js";
import { renderPast, resultsLink, when } from "./past.js";

const aside = () => room.role === "over" || room.role === "joining" || room.role === "naming";

export function render() {
  show(ui.idle, room.role === null);
  show(ui.teacher, room.role === "teacher");
  show(ui.student, room.role === "student");
  show(ui.over, aside());
  show(ui.alone, aside());
  show(ui.first, room.role === "naming");
  show(ui.summary, room.summary !== null);
  ui.start.disabled = room.busy.start;
  show(ui.keyForm, room.keyAsked);
  ui.door.disabled = room.busy.door;
  ui.again.disabled = room.busy.again;
  if (room.moving === null) delete ui.panel.dataset.moving;
  else ui.panel.dataset.moving = String(room.moving);
  // The projector's layout (class.css); the student's end screen, a refused phone's join screen and the
  // teacher's summary hide the lesson behind them, on the first screen.
  document.body.classList.toggle("is-class-teacher", room.role === "teacher");
  document.body.classList.toggle("is-class-over", aside() || room.summary !== null);
  // A student's page follows the teacher: no navigation of its own, no step QR code; where the step
  // buttons were, the page says why they are gone. After the end, nothing of the teacher's comes back.
  lesson.navigation(room.role !== "student" && !aside());
  lesson.sharing(room.role === null);
  show(ui.held, room.role === "student");
  if (room.role === "student") ui.held.textContent = tr("class_nav_held", { code: room.code });
  if (room.role === "teacher") renderTeacher();
  if (room.role === "student") renderStudent();
  if (aside()) renderOver();
  if (room.summary) renderSummary();
  renderPast(room.role === null);
}

/**
 * The end screen of a student's class, or the join screen: joining while the join is asked, then why the class
 * refused the phone, and when it tries again.
 */
function renderOver() {
  // A name the teacher refused comes back to the name box (naming), with why.
  const refusal = room.role === "joining" || room.role === "naming" ? room.refusal : null;
  let text = tr(overKey(room.ended), { code: room.code });
  const { key, vars } = refusal?.words ?? {};
  if (room.role === "naming") text = sentences([refusal && tr(key, vars), tr("class_name_first", { code: room.code })]);
  else if (refusal) text = sentences([tr("class_join_refused", { code: room.code }), tr(key, vars)]);
  else if (room.role === "joining") text = tr("class_joining", { code: room.code });
  if (ui.overText.textContent !== text) ui.overText.textContent = text; // a screen reader says it once
  if (refusal) ui.over.dataset.refused = String(refusal.status);
  else delete ui.over.dataset.refused;
  show(ui.retry, Boolean(refusal?.button));
  show(ui.retryText, Boolean(refusal?.waits));
  if (refusal?.waits) renderRetry();
}

/** A name box says its limit as the student types, and says so when the name is longer (never cut silently). */
export function renderNameCount(input, out) {
  const n = [...input.value.trim()].length; // characters, as the server counts them
  out.dataset.over = String(n > NAME_CHARS);
  out.textContent = n > NAME_CHARS ? tr("class_name_too_long") : tr("class_name_count", { n, max: NAME_CHARS });
}

/** The refused phone's countdown to its next attempt, drawn again each second. */
export function renderRetry() {
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
  // A code no phone can open would only mislead the room: the warning takes its place on the first screen.
  show(ui.qr, !unreachable);
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
  renderWaiting();
  renderRoster();
  ui.panel.dataset.joined = String(room.live.joined);
  ui.panel.dataset.answered = String(room.live.answered);
  ui.panel.dataset.step = String(room.live.step);
  ui.panel.dataset.revealed = String(room.live.revealed);
  ui.panel.dataset.locked = String(Boolean(room.live.locked));
  ui.panel.dataset.door = room.live.door ?? "";
  if (!room.busy.door && room.live.door) ui.door.value = room.live.door;
  const asked = Boolean(step.choices);
  ui.reveal.disabled = !asked || room.live.revealed;
  const round = room.live.round ?? 1;
  show(ui.again, asked && !room.live.revealed && round < 2);
  ui.panel.dataset.round = String(round);
  // Peer instruction: while the class votes, how many answered, not how; the spread once the teacher shows it,
  // or reveals.
  const shown = room.live.revealed || room.spreadShown === room.live.step;
  show(ui.spreadShow, asked && !shown);
  ui.spreadShow.title = tr("class_spread_held"); // why, in the page's language (the held line is for readers)
  show(ui.spreadHeld, asked && !shown);
  ui.panel.dataset.spread = asked ? String(shown) : "";
  const right = room.live.revealed && room.accepted?.step === room.live.step ? room.accepted.choices : [];
  clear(ui.spread);
  show(ui.spread, asked && shown && room.counts !== null);
  if (asked && shown && room.counts) {
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
      const isRight = right.includes(choice);
      // After the reveal the right answer's bar is marked: a colour, and a ✓ that a screen reader names.
      const mark = isRight ? [el("span", { className: "lesson-class__right", text: "✓ ",
        attrs: { role: "img", "aria-label": tr("class_right_mark"), title: tr("class_right_mark") } })] : [];
      ui.spread.append(el("li", { dataset: { choice, count: String(n), first: was === null ? "" : String(was),
        right: String(isRight) }, className: isRight ? "is-right" : "" }, [
        el("span", { className: "lesson-class__choice" }, [...mark, label(step, choice)]),
        el("span", { className: "lesson-class__track" }, [bar]),
        el("span", { className: "lesson-class__n", text: shift }),
      ]));
    }
  }
  renderSaid(step);
}

/**
 * Who waits at the door: each with admit and refuse, and both for all; the door's count beside the counts. The
 * joins refused by name stay in the box once nobody waits: the teacher sees the script kept out.
 */
function renderWaiting() {
  const n = room.waitingList.length;
  const refused = room.refusedJoins;
  ui.panel.dataset.waiting = String(n);
  show(ui.waiting, n > 0 || refused > 0);
  show(ui.waitingCount, n > 0);
  show(ui.admitAll.parentElement, n > 0);
  ui.waitingCount.textContent = n ? tr("class_waiting_count", { n }) : "";
  ui.refused.dataset.classRefused = String(refused);
  ui.refused.textContent = refused ? tr("class_refused_joins", { n: refused }) : "";
  show(ui.refused, refused > 0);
  const rows = room.waitingList.map((s) => el("li", { dataset: { student: s.student } }, [
    el("span", { className: "lesson-class__name", text: s.name }),
    // Their clicks are the list's (class.js): one listener for every row.
    el("button", { type: "button", className: "lesson-class__admit", text: "✓", dataset: { action: "admit" },
      attrs: { "aria-label": tr("class_admit_named", { name: verbatim(s.name) }), title: tr("class_admit_named", { name: verbatim(s.name) }) } }),
    el("button", { type: "button", className: "lesson-class__remove", text: "×", dataset: { action: "refuse" },
      attrs: { "aria-label": tr("class_refuse_named", { name: verbatim(s.name) }), title: tr("class_refuse_named", { name: verbatim(s.name) }) } }),
  ]));
  ui.waitingNames.replaceChildren(...rows);
  ui.wrongCodes.dataset.classWrongCodes = String(room.wrongCodes);
  ui.wrongCodes.textContent = room.wrongCodes ? tr("class_wrong_codes", { n: room.wrongCodes }) : "";
  show(ui.wrongCodes, room.wrongCodes > 0);
}

/** The students (and those waiting) who joined in the last minute, by the server's clock. */
export const recentSeats = () => {
  const now = serverClock();
  return [...room.students, ...room.waitingList].filter((s) => now - s.joined_at <= RECENT_SECONDS);
};

export function renderRoster() {
  const recent = recentSeats().length;
  ui.recent.dataset.classRecent = String(recent);
  ui.recent.textContent = recent ? tr("class_recent", { n: recent }) : "";
  ui.removeRecent.textContent = tr("class_remove_recent", { n: recent });
  // Offered only while it removes fewer than half the class: at the start of a class, everyone joined a minute ago.
  show(ui.removeRecent, recent > 0 && 2 * recent < room.students.length + room.waitingList.length);
  const rows = room.students.map((s) => el("li", { dataset: { student: s.student, answered: String(s.answered) } }, [
    el("span", { className: "lesson-class__name", text: s.name }),
    // Its click is the roster's (class.js): one listener for every row, whatever the roster's length.
    el("button", {
      type: "button", className: "lesson-class__remove", text: "×",
      attrs: { "aria-label": tr("class_remove_named", { name: verbatim(s.name) }), title: tr("class_remove_named", { name: verbatim(s.name) }) },
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
  ui.me.textContent = name ? tr("class_me", { name: verbatim(name) }) : "";
  ui.panel.dataset.step = String(room.live?.step ?? "");
  ui.panel.dataset.revealed = String(room.live?.revealed ?? "");
  if (!room.live) return;
  ui.panel.dataset.waiting = String(room.waiting);
  if (room.waiting) {
    ui.mine.textContent = tr("class_waiting_me", { code: room.code });
    if (lesson.step === room.live.step) lesson.hint(ui.mine.textContent);
    return;
  }
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

function renderSummary() {
  ui.summaryTitle.textContent = tr("class_summary_title", { code: room.summary.code });
  const results = room.summary.results;
  const steps = results?.steps ?? []; // the steps voted on or revealed: the server leaves out the rest
  const rows = steps.map((s) => el("li", { dataset: { step: String(s.step) } }, [
    el("strong", { text: tr("class_summary_step", { n: s.step }) }), " ", tr(`${s.id}_title`),
    el("ul", {}, s.rounds.map((r) => el("li", {
      dataset: { round: String(r.round), right: String(r.right ?? ""), answered: String(r.answered) },
      text: r.right === null ? tr("class_summary_open", { round: r.round, answered: r.answered })
        : tr("class_summary_round", { round: r.round, right: r.right, answered: r.answered,
          share: r.answered ? Math.round((100 * r.right) / r.answered) : 0 }),
    }))),
  ]));
  if (results && !rows.length) rows.push(el("li", { text: tr("class_summary_none") }));
  ui.summarySteps.replaceChildren(...rows);
  ui.download.disabled = ui.downloadAnswers.disabled = ui.delete.disabled = !results;
  ui.summaryKept.textContent = results?.kept_until ? tr("class_kept_until", { date: when(results.kept_until) }) : "";
  show(ui.summaryLink, Boolean(results));
  ui.summaryLink.href = resultsLink(room.summary.code, room.summary.token);
}

export function renderConnection() {
  ui.connection.dataset.classConnection = room.connection ?? "";
  ui.connection.textContent = room.connection ? tr(`class_${room.connection}`) : "";
  show(ui.connection, Boolean(room.connection));
}

const overKey = (reason) => ({ class_gone: "class_over_gone", class_removed: "class_over_removed",
  class_lost: "class_lost_wait" })[reason] ?? "class_over";
