"""Where class mode keeps its classes: SQLite on one machine (the default), Redis across machines.

Both stores answer the same questions, and both change a class in one atomic step, so the rules hold
with any number of workers and replicas. Each change bumps the class's `version`; `changes(code)` yields
whenever that may have happened (SQLite: a poll of the version column; Redis: a pub/sub message), and a
single watcher per class and process reads it (app/services/class_events.py).

A store that cannot be reached raises one of its `unavailable` exceptions; the service turns them into
503 "the class store does not answer" (app/services/classes.py), never a 500.
"""

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal, Protocol

# What a change attempt came to. "missing": no such class (never made, ended, or idle too long);
# "limited": this address made its classes for the hour; "locked": the teacher closed joining.
Outcome = Literal["ok", "missing", "full", "not_current", "revealed", "limited", "locked"]


@dataclass(frozen=True)
class Lifetimes:
    """How long a class lives without a change: `idle` seconds once a student joined, `unjoined` before."""
    idle: float
    unjoined: float


@dataclass(frozen=True)
class CreationLimit:
    """At most `per_window` classes made from one address within `window` seconds."""
    per_window: int
    window: float


@dataclass(frozen=True)
class ClassState:
    step: int  # 1-based, as /lesson?step=N
    revealed: bool
    joined: int  # students who joined (POST /join), each holding a token
    answered: int  # students with an answer at the current step
    version: int
    locked: bool = False  # the teacher closed joining


class ClassStore(Protocol):
    name: str  # "sqlite" or "redis", as error messages and /readyz name it
    unavailable: tuple[type[BaseException], ...]  # what it raises when it cannot be reached

    async def create(self, code: str, token_hash: str, step: int, now: float, max_classes: int,
                     address: str | None, limit: CreationLimit) -> tuple[Outcome, float]:
        """("ok", 0), ("full", 0) (max_classes open), ("limited", seconds until the address may again), or
        ("missing", 0) read as: the code is taken, draw another. address None: not counted (teacher key)."""

    async def token_hash(self, code: str, now: float) -> str | None: ...

    async def state(self, code: str, now: float) -> ClassState | None: ...

    async def set_step(self, code: str, step: int, now: float) -> Outcome:
        """Move to `step` and hide its reveal again."""

    async def reveal(self, code: str, now: float) -> Outcome: ...

    async def set_locked(self, code: str, locked: bool, now: float) -> Outcome: ...

    async def end(self, code: str) -> Outcome: ...

    async def join(self, code: str, student: str, token_hash: str, now: float, max_students: int) -> Outcome:
        """A new student with its token's hash: "ok", "missing", "full" or "locked"."""

    async def student(self, code: str, token_hash: str, now: float) -> str | None:
        """The student of this class whose token has this hash, or None."""

    async def answer(self, code: str, student: str, step: int, choice: str, now: float) -> tuple[Outcome, int]:
        """Keep `choice` as the student's answer if `step` is current and not revealed; a later one replaces it.
        The same answer sent again is "ok" whatever the class's step (a retry after a lost reply).
        Returns the outcome and the current step."""

    async def answers_of(self, code: str, student: str) -> dict[int, str]:
        """{step: choice} of one student."""

    async def counts(self, code: str, step: int) -> dict[str, int]:
        """{choice: students} at `step`."""

    def changes(self, code: str) -> AsyncIterator[None]:
        """Yields once at once, then whenever the class may have changed; ends when it is gone."""

    async def ping(self) -> None:
        """Returns if the store answers; raises one of `unavailable` if not."""

    async def close(self) -> None: ...


def open_store(settings) -> ClassStore:
    lifetimes = Lifetimes(idle=settings.class_idle_hours * 3600, unjoined=settings.class_unjoined_minutes * 60)
    if settings.redis_url:
        from app.stores.redis import RedisStore

        return RedisStore(settings.redis_url, lifetimes)
    from app.stores.sqlite import SqliteStore

    return SqliteStore(settings.data_dir / "classes.db", lifetimes, settings.class_poll_ms / 1000)
