"""Class mode: the teacher leads the guided lesson on every student's screen (peer instruction).

The rules live here, in front of whichever store holds the classes (app/stores): only the teacher's
token moves, reveals, keeps the door, admits, ends and removes students; only a student's token (from joining,
admitted, and not removed) answers, and only the current step's question, with one of its choices, until the
reveal. Plain
data in, plain data out; ClassError carries the HTTP status, a machine-readable type and its values (ctx),
so a page words it in its language.
"""

import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import Awaitable, Callable

from app.domain.class_codes import CODE_ALPHABET, CODE_LENGTH, JOIN_KEY_CHARS, STREAM_KEY_CHARS
from app.domain.class_names import ANIMALS, name_key
from app.domain.lesson_steps import STEPS
from app.errors import ClassError, InputError
from app.services.verdicts import JUDGED_STEPS
from app.stores import ClassRecord, ClassState, ClassStore, Door, Seat, Standing

log = logging.getLogger("heads_positions")

TOKEN_BYTES = 32  # 256 bits; the store keeps only its sha256
STUDENT_ID_BYTES = 12  # 16 base64url characters: names a student in the store, grants nothing
MAX_ROUNDS = 2  # peer instruction: vote, talk to a neighbour, vote again (app/stores/redis/keys.py lists as many keys)
STORE_RETRY_SECONDS = 2  # Retry-After of a 503 while the class store does not answer



def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def token_hash(token: str) -> str:
    # A random 256-bit token needs no slow hash: nobody can guess its way back from sha256.
    return hashlib.sha256(token.encode()).hexdigest()


def stream_key(token: str) -> str:
    """What the teacher's page puts in its event stream's URL instead of the token (EventSource sends no
    header, and a URL lands in logs): 128 bits of the token's hash, which grant nothing but the stream."""
    return token_hash(token)[:STREAM_KEY_CHARS]


def join_key_of(stored_hash: str) -> str:
    """The class's join key, which its join link and QR code carry: a join that holds it is never held by the
    wrong codes others sent from its address. Derived from the teacher token's hash (HMAC), so nothing more is
    stored, and the stream key (the hash's first half) does not give it."""
    return hmac.new(stored_hash.encode(), b"join", hashlib.sha256).hexdigest()[:JOIN_KEY_CHARS]


def step_choices(step: int) -> list[str] | None:
    """The answer choices of the 1-based step, or None where it asks no single question."""
    return STEPS[step - 1]["choices"]


class Classes:
    """The class rules over a store; `now` is wall-clock time, shared by every worker and replica.
    Every store call goes through ask, which turns a store that does not answer into a 503."""

    def __init__(self, store: ClassStore, max_classes: int, max_students: int):
        self.store = store
        self.max_classes = max_classes
        self.max_students = max_students
        self.down = False  # the last store call failed: logged once, and again when it answers

    async def ask(self, call):
        try:
            result = await call
        except self.store.unavailable as error:
            if not self.down:  # one line per outage, no traceback: the cause is outside this program
                log.warning("class store (%s) does not answer: %s", self.store.name, error or type(error).__name__)
            self.down = True
            raise store_down(self.store.name) from None
        if self.down:
            log.warning("class store (%s) answers again", self.store.name)
            self.down = False
        return result

    async def create(self) -> tuple[str, str]:
        """A new class at step 1: (code, teacher token). Who may start one is the route's (rate_limits)."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        for _ in range(5):  # a taken code is rare (1 in 4 million with 200 classes): draw another
            code = new_code()
            outcome = await self.ask(self.store.create(code, token_hash(token), 1, time.time(), self.max_classes))
            if outcome == "ok":
                return code, token
            if outcome == "full":
                raise ClassError(503, "too_many_classes_open",
                                 f"too many classes open: at most {self.max_classes} at once (HP_MAX_CLASSES); "
                                 "end one, or wait until one that nobody joined expires",
                                 {"max_classes": self.max_classes}, retry_after=60)
        raise ClassError(503, "no_free_code", "no free class code found; try again", retry_after=1)

    async def state(self, code: str) -> ClassState:
        state = await self.ask(self.store.state(code, time.time()))
        if state is None:
            raise missing(code)
        return state

    async def is_teacher(self, code: str, token: str | None, student_ok: bool = False) -> bool:
        """False without a token (or, with student_ok, with a student's of this class); 403 with a wrong one,
        404 for no class."""
        if token is None:
            return False
        stored = await self.ask(self.store.token_hash(code, time.time()))
        if stored is None:
            raise missing(code)
        if hmac.compare_digest(stored, token_hash(token)):
            return True
        if student_ok and await self.seat(code, token) is not None:
            return False
        raise ClassError(403, "teacher_token_wrong", "this is not the teacher's token for this class")

    async def require_teacher(self, code: str, token: str | None) -> None:
        if not await self.is_teacher(code, token):
            raise ClassError(403, "teacher_only",
                             "only the teacher can do this: send Authorization: Bearer <teacher_token>")

    async def counts(self, code: str, state: ClassState) -> dict[str, int]:
        """{choice: students} at the current step and round, every choice listed (0 where nobody chose it)."""
        found = await self.ask(self.store.counts(code, state.step, state.round))
        return {choice: found.get(choice, 0) for choice in step_choices(state.step) or []}

    async def set_step(self, code: str, step: int) -> None:
        _check(code, await self.ask(self.store.set_step(code, step, time.time())))

    async def reveal(self, code: str, judge: Callable[[str], Awaitable[list[str]]]) -> None:
        """Reveal the current step, and keep with its record the choices `judge(step_id)` accepts (the server's
        verdict for the setup the teacher revealed); a step without a question keeps none."""
        state = await self.state(code)
        step = STEPS[state.step - 1]
        accepted = await judge(step["id"]) if step["choices"] and step["id"] in JUDGED_STEPS else None
        _check(code, await self.ask(self.store.reveal(code, accepted, time.time())))

    async def again(self, code: str) -> int:
        """Close the current step's vote and open a second one before the reveal: the new round."""
        state = await self.state(code)
        if step_choices(state.step) is None:
            raise ClassError(409, "step_without_question", f"step {state.step} asks no question to vote on again",
                             {"step": state.step})
        outcome, round_ = await self.ask(self.store.again(code, MAX_ROUNDS, time.time()))
        if outcome == "revealed":
            raise ClassError(409, "answers_closed", f"step {state.step} is revealed: its last round is closed",
                             {"step": state.step})
        if outcome == "full":
            raise ClassError(409, "too_many_rounds", f"a step has at most {MAX_ROUNDS} rounds (vote, then vote again)",
                             {"max_rounds": MAX_ROUNDS})
        _check(code, outcome)
        return round_

    async def set_door(self, code: str, door: Door) -> None:
        _check(code, await self.ask(self.store.set_door(code, door, time.time())))

    async def join_key(self, code: str) -> str | None:
        """The class's join key, or None for no class."""
        stored = await self.ask(self.store.token_hash(code, time.time()))
        return None if stored is None else join_key_of(stored)

    async def holds_join_key(self, code: str, key: str | None) -> bool:
        if key is None:
            return False
        expected = await self.join_key(code)
        # As bytes: compare_digest refuses a str that is not ASCII, and a key typed into a link may be anything.
        return expected is not None and hmac.compare_digest(expected.encode(), key.encode())

    async def addresses(self, code: str) -> set[str]:
        return await self.ask(self.store.addresses(code))

    async def end(self, code: str) -> None:
        _check(code, await self.ask(self.store.end(code, time.time())))

    async def record(self, code: str, token: str | None) -> ClassRecord:
        """The class's record for its teacher, while it runs and for HP_RESULTS_DAYS after it ends (404 after)."""
        if token is None:  # before the lookup: the same answer for a class and for no class
            raise ClassError(403, "teacher_only",
                             "only the teacher can do this: send Authorization: Bearer <teacher_token>")
        record = await self.ask(self.store.record(code, time.time()))
        if record is None:
            raise missing(code)
        if not hmac.compare_digest(record.token_hash, token_hash(token)):
            raise ClassError(403, "teacher_token_wrong", "this is not the teacher's token for this class")
        return record

    async def delete(self, code: str, token: str | None) -> None:
        """Delete an ended class's record at once, for its teacher; a running class is ended first by its teacher,
        so that every screen is told it ended (409 class_running)."""
        await self.record(code, token)
        outcome = await self.ask(self.store.delete(code, time.time()))
        if outcome == "running":
            raise ClassError(409, "class_running", f"class {code} is still running: end it first (POST /end), "
                                                   "then delete its results", {"code": code})
        _check(code, outcome)

    async def seat(self, code: str, token: str | None) -> tuple[str, Standing] | None:
        """(student, where they stand) whose token this is, or None (no token, or not one of this class's)."""
        if token is None:
            return None
        return await self.ask(self.store.student(code, token_hash(token), time.time()))

    async def student(self, code: str, token: str | None) -> tuple[str, Standing] | None:
        """(student, "in" or "waiting") whose token this is, or None; 403 student_removed if the teacher removed
        (or refused) them."""
        seat = await self.seat(code, token)
        if seat is not None and seat[1] == "removed":
            raise removed_error(code)
        return seat

    async def join(self, code: str, name: str | None = None, lang: str = "en",
                   address: str = "?") -> tuple[str, str, str, bool]:
        """A new student: (student id, student token, name, waiting). name None: the server gives one, in `lang`.
        waiting: the door asks, and the student waits until the teacher admits them. A name the teacher removed or
        refused in this class (the same to a teacher: name_key) is refused: 403 refused_name."""
        student = secrets.token_urlsafe(STUDENT_ID_BYTES)
        token = secrets.token_urlsafe(TOKEN_BYTES)
        outcome, given = await self.ask(self.store.join(code, student, token_hash(token), name,
                                                         None if name is None else name_key(name),
                                                         secrets.choice(ANIMALS[lang]), address, time.time(),
                                                         self.max_students))
        if outcome == "locked":
            raise ClassError(403, "class_locked",
                             "this class is closed to new students: the teacher has closed the door")
        if outcome == "refused":  # the name, not the address: a whole school shares one
            raise ClassError(403, "refused_name",
                             f"the teacher refused or removed the name {name!r} in class {code}: it cannot join "
                             "this class again; join under another name", {"code": code, "name": name})
        if outcome != "waiting":
            _check(code, outcome, self.max_students)
        return student, token, given, outcome == "waiting"

    async def admit(self, code: str, student: str | None) -> list[str]:
        """Let a waiting student in (None: everyone waiting): the ids admitted now."""
        admitted = await self.ask(self.store.admit(code, None if student is None else [student], time.time()))
        if admitted is None:
            raise missing(code)
        return admitted

    async def member(self, code: str, student: str | None) -> Standing | None:
        """Where this student of the class stands, or None: no such student or class."""
        if student is None:
            return None
        return await self.ask(self.store.member(code, student, time.time()))

    async def credential(self, code: str, token: str | None) -> str | None:
        """"teacher" or "student" when the token is this class's (a removed student's too), else None: the same
        answer for no class and a wrong token, so it tells a guesser nothing."""
        if token is None:
            return None
        stored = await self.ask(self.store.token_hash(code, time.time()))
        if stored is not None and hmac.compare_digest(stored, token_hash(token)):
            return "teacher"
        return "student" if await self.seat(code, token) is not None else None

    async def watches(self, code: str, key: str | None) -> bool:
        """Whether `key` is the teacher's stream key of this class (stream_key)."""
        if key is None:
            return False
        stored = await self.ask(self.store.token_hash(code, time.time()))
        return stored is not None and hmac.compare_digest(stored[:STREAM_KEY_CHARS].encode(), key.encode())

    async def roster(self, code: str) -> list[Seat]:
        return await self.ask(self.store.roster(code, time.time()))

    async def remove(self, code: str, students: list[str] | None = None, joined_after: float | None = None,
                     names: list[str] | None = None) -> list[str]:
        """Remove the students given, or all who joined after a moment, or all waiting at the door (a refusal):
        the ids removed now (neither students nor joined_after: everyone waiting). Removing more than one needs
        their names in `names`, as the teacher's page listed them when it asked (409 removal_not_confirmed names
        them otherwise): exactly those are removed, and a student who joined meanwhile is not removed unseen."""
        seats = await self.roster(code)
        if students is not None:
            chosen = [seat for seat in seats if seat.student in set(students)]
        elif joined_after is not None:
            chosen = [seat for seat in seats if seat.joined_at > joined_after]
        else:
            chosen = [seat for seat in seats if seat.waiting]  # waiting: the refusal of everyone at the door
        listed = [seat.name for seat in chosen]
        if len(chosen) > 1 and sorted(names or []) != sorted(listed):
            raise ClassError(409, "removal_not_confirmed",
                             f"this removes {len(chosen)} students: send their names in names, as the teacher "
                             f"confirmed them ({', '.join(listed)[:400]})", {"count": len(chosen), "names": listed})
        gone = await self.ask(self.store.remove(code, [seat.student for seat in chosen], time.time()))
        if gone is None:
            raise missing(code)
        return gone

    async def answers_of(self, code: str, student: str) -> dict[int, str]:
        return await self.ask(self.store.answers_of(code, student))

    async def answer(self, code: str, token: str | None, step: int, choice: str) -> str:
        """The answering student's id; refused without a token of this class."""
        if token is None:
            raise ClassError(401, "student_token_missing",
                             "join the class first (POST /api/classes/{code}/join), then send its student_token "
                             "as Authorization: Bearer <student_token>")
        seat = await self.student(code, token)
        if seat is None:
            await self.state(code)  # 404 if the class itself is gone
            raise ClassError(403, "student_token_wrong",
                             "this token is not a student's of this class: join it again")
        student, standing = seat
        if standing == "waiting":
            raise waiting_error(code)
        choices = step_choices(step)
        if choices is None:
            raise ClassError(409, "step_without_question", f"step {step} asks no question to answer in class",
                             {"step": step})
        if choice not in choices:
            raise InputError("choice",
                             f"choice must be one of {', '.join(choices)} at step {step} (got {choice[:32]!r})",
                             "literal_error", {"expected": ", ".join(choices)})
        outcome, current = await self.ask(self.store.answer(code, student, step, choice, time.time()))
        if outcome == "removed":  # removed between the token's check and the write
            raise removed_error(code)
        if outcome == "waiting":
            raise waiting_error(code)
        if outcome == "not_current":
            raise ClassError(409, "step_not_current",
                             f"step {step} is not the class's current step: the class is at step {current}",
                             {"step": step, "current": current})
        if outcome == "revealed":
            raise ClassError(409, "answers_closed", f"answers to step {step} are closed: the teacher has revealed it",
                             {"step": step})
        _check(code, outcome)
        return student

    async def ping(self) -> None:
        await self.ask(self.store.ping())


def removed_error(code: str) -> ClassError:
    return ClassError(403, "student_removed", f"the teacher removed this student from class {code}",
                      {"code": code})


def waiting_error(code: str) -> ClassError:
    return ClassError(403, "waiting_for_teacher",
                      f"this student waits at the door of class {code}: the teacher has not admitted them yet",
                      {"code": code})


def store_down(name: str) -> ClassError:
    return ClassError(503, "class_store_unavailable",
                      f"the class store ({name}) does not answer; class mode is back as soon as it does",
                      {"store": name}, retry_after=STORE_RETRY_SECONDS)


def missing(code: str) -> ClassError:
    return ClassError(404, "class_not_found",
                      f"no class with code {code}: check the code, or the class has ended or expired", {"code": code})


def _check(code: str, outcome: str, max_students: int = 0) -> None:
    if outcome == "missing":
        raise missing(code)
    if outcome == "full":
        raise ClassError(409, "class_full", f"this class is full: at most {max_students} students (HP_MAX_STUDENTS)",
                         {"max_students": max_students})
