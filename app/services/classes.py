"""Class mode: the teacher leads the guided lesson on every student's screen (peer instruction).

The rules live here, in front of whichever store holds the classes (app/stores): only the teacher's
token moves, reveals and ends; a student answers only the current step's question, with one of its
choices, until the reveal. Plain data in, plain data out; ClassError carries the HTTP status.
"""

import hashlib
import hmac
import secrets
import time
from collections import defaultdict, deque

from app.errors import InputError
from app.lesson_steps import STEPS
from app.stores import ClassState, ClassStore

# No 0/O, 1/I/L: a code read off the board is typed right. 31**6 = 887 million codes.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
TOKEN_BYTES = 32  # 256 bits; the store keeps only its sha256
SWEEP_ABOVE = 10_000  # addresses on record before JoinGuard forgets the quiet ones


class ClassError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def token_hash(token: str) -> str:
    # A random 256-bit token needs no slow hash: nobody can guess its way back from sha256.
    return hashlib.sha256(token.encode()).hexdigest()


def step_choices(step: int) -> list[str] | None:
    """The answer choices of the 1-based step, or None where it asks no single question."""
    return STEPS[step - 1]["choices"]


class Classes:
    """The class rules over a store; `now` is wall-clock time, shared by every worker and replica."""

    def __init__(self, store: ClassStore, max_classes: int, max_students: int):
        self.store = store
        self.max_classes = max_classes
        self.max_students = max_students

    async def create(self) -> tuple[str, str]:
        """A new class at step 1: (code, teacher token)."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        for _ in range(5):  # a taken code is rare (1 in 4 million with 200 classes): draw another
            code = new_code()
            outcome = await self.store.create(code, token_hash(token), 1, time.time(), self.max_classes)
            if outcome == "ok":
                return code, token
            if outcome == "full":
                raise ClassError(503, f"too many classes open: at most {self.max_classes} at once "
                                      "(HP_MAX_CLASSES); end one or wait until one has been idle 12 h")
        raise ClassError(503, "no free class code found; try again")

    async def state(self, code: str) -> ClassState:
        state = await self.store.state(code, time.time())
        if state is None:
            raise _missing(code)
        return state

    async def is_teacher(self, code: str, token: str | None) -> bool:
        """False without a token; 403 with a wrong one, 404 for no class."""
        if token is None:
            return False
        stored = await self.store.token_hash(code, time.time())
        if stored is None:
            raise _missing(code)
        if not hmac.compare_digest(stored, token_hash(token)):
            raise ClassError(403, "this is not the teacher's token for this class")
        return True

    async def require_teacher(self, code: str, token: str | None) -> None:
        if not await self.is_teacher(code, token):
            raise ClassError(403, "only the teacher can do this: send Authorization: Bearer <teacher_token>")

    async def counts(self, code: str, state: ClassState) -> dict[str, int]:
        """{choice: students} at the current step, every choice listed (0 where nobody chose it)."""
        found = await self.store.counts(code, state.step)
        return {choice: found.get(choice, 0) for choice in step_choices(state.step) or []}

    async def set_step(self, code: str, step: int) -> None:
        _check(code, await self.store.set_step(code, step, time.time()))

    async def reveal(self, code: str) -> None:
        _check(code, await self.store.reveal(code, time.time()))

    async def end(self, code: str) -> None:
        _check(code, await self.store.end(code))

    async def join(self, code: str, student: str) -> None:
        _check(code, await self.store.join(code, student, time.time(), self.max_students), self.max_students)

    async def answer(self, code: str, student: str, step: int, choice: str) -> None:
        choices = step_choices(step)
        if choices is None:
            raise ClassError(409, f"step {step} asks no question to answer in class")
        if choice not in choices:
            raise InputError("choice",
                             f"choice must be one of {', '.join(choices)} at step {step} (got {choice[:32]!r})",
                             "literal_error", {"expected": ", ".join(choices)})
        outcome, current = await self.store.answer(code, student, step, choice, time.time(), self.max_students)
        if outcome == "not_current":
            raise ClassError(409, f"step {step} is not the class's current step: the class is at step {current}")
        if outcome == "revealed":
            raise ClassError(409, f"answers to step {step} are closed: the teacher has revealed it")
        _check(code, outcome, self.max_students)


def _missing(code: str) -> ClassError:
    return ClassError(404, f"no class with code {code}: check the code, or the class has ended or expired")


def _check(code: str, outcome: str, max_students: int = 0) -> None:
    if outcome == "missing":
        raise _missing(code)
    if outcome == "full":
        raise ClassError(409, f"this class is full: at most {max_students} students (HP_MAX_STUDENTS)")


class JoinGuard:
    """Unknown codes per address: past `per_minute` misses in the last minute, every join attempt from that
    address gets 429 until the oldest miss is a minute old. Only misses count, so a whole class behind one
    address joins freely; guessing stays slow (README "Class mode" has the numbers). Per process."""

    def __init__(self, per_minute: int, window: float = 60.0):
        self.per_minute = per_minute
        self.window = window
        self.misses: dict[str, deque] = defaultdict(deque)

    def check(self, address: str) -> None:
        misses = self.misses.get(address)
        if not misses:
            return
        now = time.monotonic()
        while misses and now - misses[0] > self.window:
            misses.popleft()
        if not misses:
            del self.misses[address]
        elif len(misses) >= self.per_minute:
            wait = int(self.window - (now - misses[0])) + 1
            raise ClassError(429, f"too many unknown class codes from this address: wait {wait} s and check the code")

    def missed(self, address: str) -> None:
        now = time.monotonic()
        self.misses[address].append(now)
        if len(self.misses) > SWEEP_ABOVE:  # many addresses: forget those whose misses are all past the window
            for stale in [a for a, m in self.misses.items() if now - m[-1] > self.window]:
                del self.misses[stale]
