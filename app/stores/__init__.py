"""Where class mode keeps its classes: SQLite on one machine (the default), Redis across machines.

Both stores answer the same questions, and both change a class in one atomic step, so the rules hold
with any number of workers and replicas. Each change bumps the class's `version`; `changes(code)` yields
whenever that may have happened (SQLite: a poll of the version column; Redis: a pub/sub message), and a
single watcher per class and process reads it (app/services/class_events.py).
"""

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal, Protocol

# What a change attempt came to. "missing": no such class (never made, ended, or idle too long).
Outcome = Literal["ok", "missing", "full", "not_current", "revealed"]


@dataclass(frozen=True)
class ClassState:
    step: int  # 1-based, as /lesson?step=N
    revealed: bool
    joined: int  # students who opened the class's events or answered
    answered: int  # students with an answer at the current step
    version: int


class ClassStore(Protocol):
    async def create(self, code: str, token_hash: str, step: int, now: float, max_classes: int) -> Outcome:
        """"ok", "full" (max_classes open), or "missing" read as: the code is taken, draw another."""

    async def token_hash(self, code: str, now: float) -> str | None: ...

    async def state(self, code: str, now: float) -> ClassState | None: ...

    async def set_step(self, code: str, step: int, now: float) -> Outcome:
        """Move to `step` and hide its reveal again."""

    async def reveal(self, code: str, now: float) -> Outcome: ...

    async def end(self, code: str) -> Outcome: ...

    async def join(self, code: str, student: str, now: float, max_students: int) -> Outcome: ...

    async def answer(self, code: str, student: str, step: int, choice: str, now: float,
                     max_students: int) -> tuple[Outcome, int]:
        """Keep `choice` as the student's answer if `step` is current and not revealed; a later one replaces it.
        Returns the outcome and the current step."""

    async def counts(self, code: str, step: int) -> dict[str, int]:
        """{choice: students} at `step`."""

    def changes(self, code: str) -> AsyncIterator[None]:
        """Yields once at once, then whenever the class may have changed; ends when it is gone."""

    async def close(self) -> None: ...


def open_store(settings) -> ClassStore:
    idle = settings.class_idle_hours * 3600
    if settings.redis_url:
        from app.stores.redis import RedisStore

        return RedisStore(settings.redis_url, idle)
    from app.stores.sqlite import SqliteStore

    return SqliteStore(settings.data_dir / "classes.db", idle, settings.class_poll_ms / 1000)
