"""The SQLite store's connection: one per process, used from the thread pool one call at a time, and the
transaction and lifetime helpers every part of the store (rooms, roster, results, limits) writes through."""

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

from filelock import FileLock

from app.stores import Lifetimes
from app.stores.sqlite.schema import KEPT, set_up


class Connection:
    name = "sqlite"
    # Locked past the busy timeout, a disk that is full or read-only, a file that vanished.
    unavailable = (sqlite3.OperationalError,)

    def __init__(self, path: Path, lifetimes: Lifetimes, poll_seconds: float, busy_seconds: float = 10):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.lifetimes = lifetimes
        self.poll = poll_seconds
        # isolation_level None: transactions are the explicit BEGIN IMMEDIATE ... COMMIT below.
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=busy_seconds)
        self.lock = threading.Lock()  # one connection, used from the thread pool one call at a time
        # Workers start together and each sets the file up. Two connections that switch a new file to WAL
        # at once can get "database is locked" at once, without SQLite's busy wait (each holds the read
        # lock the other needs to give up), and that worker's start-up fails; so one process at a time.
        with self.lock, FileLock(path.with_name(path.name + ".setup-lock"), timeout=30):
            set_up(self.db)

    async def _run(self, fn, *args):
        return await asyncio.to_thread(self._locked, fn, *args)

    def _locked(self, fn, *args):
        with self.lock:
            return fn(*args)

    def _write(self, fn, *args):
        """fn(*args) inside one write transaction; rolled back if it or the commit fails (a failed COMMIT,
        e.g. on a full disk, leaves the transaction open, and every later BEGIN would fail)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            result = fn(*args)
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise
        return result

    def _cuts(self, now: float) -> dict:
        return {"idle_cut": now - self.lifetimes.idle, "unjoined_cut": now - self.lifetimes.unjoined,
                "kept_cut": now - self.lifetimes.results}

    def _purge(self, now: float) -> None:
        """Delete the classes that are no longer alive and ended records past their time (their students and
        answers go with them)."""
        self.db.execute(f"DELETE FROM classes WHERE NOT {KEPT}", self._cuts(now))

    def _live(self, code: str, now: float):
        """(step, revealed, door, round) of the class, or None; classes gone quiet are deleted on the way."""
        self._purge(now)
        return self.db.execute("SELECT step, revealed, door, round FROM classes WHERE code = ? AND ended_at IS NULL",
                               (code,)).fetchone()

    def _touch(self, code: str, now: float) -> None:
        self.db.execute("UPDATE classes SET version = version + 1, touched = ? WHERE code = ?", (now, code))

    async def changes(self, code) -> AsyncIterator[None]:
        def version():
            row = self.db.execute("SELECT version FROM classes WHERE code = ?", (code,)).fetchone()
            return row[0] if row else None
        seen = await self._run(version)
        while seen is not None:
            yield
            while (now := await self._run(version)) == seen:
                await asyncio.sleep(self.poll)
            seen = now
        yield  # gone: the reader sees no state

    async def ping(self) -> None:
        # A write, as a class's would be: a file that can be read but not written is down for class mode.
        await self._run(self._write, lambda: self.db.execute("DELETE FROM hits WHERE 0"))

    async def close(self) -> None:
        await self._run(self.db.close)
