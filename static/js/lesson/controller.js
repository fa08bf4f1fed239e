// The guided lesson's one controller. Every way to move, answer or reveal calls it: the step buttons and
// menu, the arrow keys, the presenter view's Enter, the question's button, and class mode. Class mode is a
// client like the others: it listens to the events below and calls the same three methods, instead of
// writing into the page, its URL or its saved answers.
//
// Events are CustomEvents whose detail is {step, from, ...}: step is the 1-based step, from says who asked
// ("page": this screen's own controls; "class": class mode; "history": the browser's back and forward).
//   "move"     cancelable, before the page goes to detail.step. Canceled: the page stays where it is.
//   "step"     the page now shows detail.step (its question drawn; a reveal may follow).
//   "commit"   cancelable, before detail.answer is kept and revealed. Canceled: a listener took the answer.
//   "reveal"   cancelable, before the step's answer is shown. Canceled: a listener decides when to reveal.
//   "verdict"  a reveal is drawn: detail.outcome is the step's outcome (null when none can be given).
//
// The page (main.js) attaches what draws: {has(n), current(), show(n, opts), keep(answer), reveal(from),
// revealing(), hint(text), navigation(open), sharing(open), toTop(), setup()}.

export class LessonController extends EventTarget {
  #page = null;
  #room = null;

  /** main.js hands over its drawing once, before anything calls the controller. */
  attach(page) {
    this.#page = page;
  }

  /** The step on screen, 1-based. */
  get step() {
    return this.#page.current();
  }

  /** The class this screen is in, as class mode describes it (see joinClass), or null when alone. */
  get room() {
    return this.#room;
  }

  /** Whether the answer of the step on screen is shown, or on its way. */
  get revealed() {
    return this.#page.revealing();
  }

  #ask(type, detail) {
    return this.dispatchEvent(new CustomEvent(type, { detail, cancelable: true }));
  }

  /** For the page: tell listeners what it drew ("step", "verdict"). */
  tell(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  /**
   * Show step n. again: draw it anew even if it is on screen (the class's record of it changed).
   * Returns whether the page moved.
   */
  goTo(n, { from = "page", focus = from === "page", again = false } = {}) {
    if (!this.#page.has(n)) return false;
    if (n === this.step && !again) return false;
    if (!this.#ask("move", { step: n, from })) return false;
    this.#page.show(n, { focus, from });
    this.tell("step", { step: n, from });
    return true;
  }

  /** Keep answer ({choice} or {answers, notes}) as this screen's prediction for the step, then reveal. */
  commit(answer, { from = "page" } = {}) {
    const step = this.step;
    if (!this.#ask("commit", { step, answer, from })) return false;
    this.#page.keep(answer);
    return true;
  }

  /**
   * Show the step's answer. From the page, a choice picked on screen counts as the prediction (the class
   * answered aloud); in a class only the class reveals, so class mode cancels the page's reveal, asks the
   * server, and calls reveal({from: "class"}) once the class is revealed.
   */
  reveal({ from = "page" } = {}) {
    const step = this.step;
    if (this.revealed) return false;
    if (!this.#ask("reveal", { step, from })) return false;
    this.#page.reveal(from);
    return true;
  }

  /** A line under the question's button, where a student looks after answering. */
  hint(text) {
    this.#page.hint(text);
  }

  /** The setup on screen as the step's verdict request takes it: what a class's reveal is judged on. */
  get setup() {
    return this.#page.setup();
  }

  /** Whether this screen moves on its own: a student in a class follows the teacher, without step buttons. */
  navigation(open) {
    this.#page.navigation(open);
  }

  /** Whether the step's own link and QR code show: in a class, the class's code is what a room shares. */
  sharing(open) {
    this.#page.sharing(open);
  }

  /** Bring the step's title and question into view, however far a reveal scrolled the page (the projector). */
  toTop() {
    this.#page.toTop();
  }

  /**
   * This screen is in a class: room = {role: "teacher" | "student", code, revealed(n), answer(n)}. For the
   * steps that ask a question, the class holds the record: whether the step is revealed, and this screen's
   * answer to it. The step on screen is drawn again under that record.
   */
  joinClass(room) {
    this.#room = room;
    this.goTo(this.step, { from: "class", focus: false, again: true });
  }

  /** Alone again: the page's own record (store.js) decides, and the step on screen is drawn again. */
  leaveClass() {
    if (!this.#room) return;
    this.#room = null;
    this.goTo(this.step, { from: "class", focus: false, again: true });
  }
}

/** The lesson page's controller: main.js attaches the page to it, class.js drives it. */
export const lesson = new LessonController();
