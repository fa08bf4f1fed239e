"""Where class mode keeps its classes: SQLite on one machine (the default), Redis across machines.

Both stores answer the same questions, and both change a class in one atomic step, so the rules hold
with any number of workers and replicas. Each change bumps the class's `version`; `changes(code)` yields
whenever that may have happened (SQLite: a poll of the version column; Redis: a pub/sub message), and a
single watcher per class and process reads it (app/services/class_events.py). The per-address rate
limits keep their windows here too (hit, held), so they hold across workers and replicas.

"end" keeps the class's record (its steps, rounds, accepted choices, students and answers) for
`Lifetimes.results` seconds (HP_RESULTS_DAYS), readable with the teacher's token (record) until it passes or
the teacher deletes it (delete); a class that vanishes without one (a Redis emptied by a restart without
persistence) is "lost", not ended (ended).

A store that cannot be reached raises one of its `unavailable` exceptions; the service turns them into
503 "the class store does not answer" (app/services/classes.py), never a 500.
"""

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal, Protocol

from app.domain.class_codes import DOORS

# What a change attempt came to. "missing": no such class (never made, ended, or idle too long);
# "locked": the teacher closed the door; "waiting": the door asks, and this student waits for the teacher;
# "removed": the teacher removed (or refused) this student; "refused": the name of a join is one the teacher refused
# (or removed) in this class.
# "running": the class has not ended (its record cannot be deleted yet).
Outcome = Literal["ok", "missing", "full", "not_current", "revealed", "locked", "waiting", "removed", "running",
                  "refused"]
# The class's door (app.domain.class_codes.DOORS). Open from the start; the first reveal turns an open door to
# "ask" unless the teacher chose the door before; a removal turns an open door to "ask" too (docs/class-mode.md).
Door = Literal[DOORS]
# Where a student stands: "in" (admitted), "waiting" (for the teacher, the door asked), "removed".
Standing = Literal["in", "waiting", "removed"]


@dataclass(frozen=True)
class Lifetimes:
    """How long a class lives without a change: `idle` seconds once a student joined, `unjoined` before."""
    idle: float
    unjoined: float
    results: float = 7 * 24 * 3600  # how long an ended class's record is kept (HP_RESULTS_DAYS, 7 by default)


@dataclass(frozen=True)
class ClassState:
    step: int  # 1-based, as /lesson?step=N
    revealed: bool
    joined: int  # students in the class (joined with a token, admitted, not removed)
    answered: int  # students with an answer at the current step
    version: int
    door: Door = "open"
    removed: int = 0  # students the teacher removed: their streams are told when it grows
    round: int = 1  # the vote open at this step: 1, or 2 after the teacher asked the class to vote again
    waiting: int = 0  # students waiting for the teacher at the door: their streams are told when they are admitted
    refused_joins: int = 0  # joins turned away because their name is one the teacher refused or removed

    @property
    def locked(self) -> bool:
        """The door is closed (the API's `locked`, from before the door had three states)."""
        return self.door == "closed"


@dataclass(frozen=True)
class Seat:
    """One student on the roster. joined_at: wall-clock seconds; answered: at the current step; waiting: at the
    door, not admitted yet."""
    student: str
    name: str
    joined_at: float
    answered: bool
    waiting: bool = False


@dataclass(frozen=True)
class StepRecord:
    rounds: int  # the rounds opened at this step: 1, or 2 after the teacher asked the class to vote again
    accepted: list[str] | None  # the choices the server's verdict counted right at the reveal; None: not revealed


@dataclass(frozen=True)
class ClassRecord:
    """What a class leaves the teacher: kept while it runs and for Lifetimes.results seconds after it ends."""
    token_hash: str
    ended_at: float | None  # wall-clock seconds; None while the class runs
    steps: dict[int, StepRecord]  # every step the class visited
    students: dict[str, str]  # student -> name, by joining time; removed and waiting students are not here
    # (step, round, student, choice, answered_at) of the students above; answered_at: wall-clock seconds of the
    # answer kept (the last change), None for an answer kept before the stores noted the time.
    answers: list[tuple[int, int, str, str, float | None]]


class ClassStore(Protocol):
    name: str  # "sqlite" or "redis", as error messages and /readyz name it
    unavailable: tuple[type[BaseException], ...]  # what it raises when it cannot be reached

    async def create(self, code: str, token_hash: str, step: int, now: float, max_classes: int) -> Outcome:
        """"ok", "full" (max_classes open), or "missing" read as: the code is taken, draw another."""

    async def token_hash(self, code: str, now: float) -> str | None: ...

    async def state(self, code: str, now: float) -> ClassState | None: ...

    async def set_step(self, code: str, step: int, now: float) -> Outcome:
        """Move to `step` and hide its reveal again, at round 1; the step joins the class's record."""

    async def reveal(self, code: str, accepted: list[str] | None, now: float) -> Outcome:
        """Reveal the current step and keep `accepted` (the verdict's right choices) with its record. The class's
        first reveal turns an open door to "ask", unless the teacher chose the door before."""

    async def again(self, code: str, max_rounds: int, now: float) -> tuple[Outcome, int]:
        """Close the current step's vote and open the next round: ("ok", the new round), or "revealed" (the
        reveal closed the last round), "full" (max_rounds reached) or "missing"."""

    async def set_door(self, code: str, door: Door, now: float) -> Outcome:
        """The teacher's choice of door: from then on the first reveal leaves it as it is."""

    async def end(self, code: str, now: float) -> Outcome:
        """Close the class: every token but the teacher's results stop working; its record stays readable
        for Lifetimes.results seconds."""

    async def ended(self, code: str) -> bool:
        """Whether the teacher ended this class (its record is kept): a class gone without one was lost."""

    async def record(self, code: str, now: float) -> ClassRecord | None:
        """The class's record, running or ended (within Lifetimes.results of `now`), or None; a record past its
        time is deleted on the way, as it would be by the store's own expiry."""

    async def delete(self, code: str, now: float) -> Outcome:
        """Delete an ended class's record at once: "ok", "running" (not ended: nothing deleted) or "missing"."""

    async def join(self, code: str, student: str, token_hash: str, name: str | None, key: str | None, animal: str,
                   address: str, now: float, max_students: int) -> tuple[Outcome, str]:
        """A new student with its token's hash, joining from `address`: ("ok", their name), ("waiting", their
        name) when the door asks, or "missing", "full" (students and waiting ones count), "locked" (the door is
        closed) or "refused". Without a name, "{animal} {n}": n is the class's join count, raised until no student
        has that name. A name another student of the class has (or had) becomes "{name} 2", "{name} 3"...: the
        teacher tells them apart. `key` is the name's name_key (app.domain.class_names), None without a name: the
        join is "refused" (and counted in refused_joins) when a student the teacher removed or refused had it, as
        the name they sent or as "{key} {n}", the name the roster showed; the store keeps both with the student."""

    async def student(self, code: str, token_hash: str, now: float) -> tuple[str, Standing] | None:
        """(student, where they stand) for this class's token with this hash, or None."""

    async def member(self, code: str, student: str, now: float) -> Standing | None:
        """Where this student of the class stands, or None: no such student (or class)."""

    async def roster(self, code: str, now: float) -> list[Seat]:
        """The students not removed, waiting ones included (Seat.waiting), by joining time."""

    async def admit(self, code: str, students: list[str] | None, now: float) -> list[str] | None:
        """Let waiting students in (None: everyone waiting): the ids admitted now, or None for no class."""

    async def remove(self, code: str, students: list[str], now: float) -> list[str] | None:
        """Remove the given students (admitted or waiting) in one atomic step: their tokens are refused from then
        on and their answers, in every step (and round), are deleted with them, so no tally counts them. A
        removal turns an open door to "ask", and refuses their names' keys to later joins (join). The ids removed (not
        those removed before), or None for no class."""

    async def addresses(self, code: str) -> set[str]:
        """The addresses the class's students joined from (the network the wrong-code count reads)."""

    async def removed(self, code: str) -> set[str]:
        """The students the teacher removed."""

    async def waiting(self, code: str) -> set[str]:
        """The students waiting at the door."""

    async def answer(self, code: str, student: str, step: int, choice: str, now: float) -> tuple[Outcome, int]:
        """Keep `choice` as the student's answer in the open round if `step` is current and not revealed; a later
        one replaces it.
        The same answer sent again is "ok" whatever the class's step (a retry after a lost reply); a removed
        student's is "removed", checked in the same atomic step as the write.
        Returns the outcome and the current step."""

    async def answers_of(self, code: str, student: str) -> dict[int, str]:
        """{step: choice} of one student."""

    async def counts(self, code: str, step: int, round: int) -> dict[str, int]:
        """{choice: students} at `step`, in `round` (each round counts only the answers sent in it)."""

    async def hit(self, key: str, limit: int, window: float, now: float, count: bool) -> float:
        """A rate limit's window (app/services/rate_limits.py): 0 if fewer than `limit` events of `key` fell in
        the last `window` seconds, and then (count) this one is counted, in the same atomic step; otherwise the
        seconds until one leaves the window. Events past their window are deleted on the way."""

    async def held(self, keys: list[str], window: float, now: float) -> int:
        """The events of all `keys` in the last `window` seconds."""

    def changes(self, code: str) -> AsyncIterator[None]:
        """Yields once at once, then whenever the class may have changed; ends when it is gone."""

    async def ping(self) -> None:
        """Returns if the store answers; raises one of `unavailable` if not."""

    async def close(self) -> None: ...


def open_store(settings) -> ClassStore:
    lifetimes = Lifetimes(idle=settings.class_idle_hours * 3600, unjoined=settings.class_unjoined_minutes * 60,
                          results=settings.results_days * 24 * 3600)
    if settings.redis_url:
        from app.stores.redis import RedisStore

        return RedisStore(settings.redis_url, lifetimes)
    from app.stores.sqlite import SqliteStore

    return SqliteStore(settings.data_dir / "classes.db", lifetimes, settings.class_poll_ms / 1000)
