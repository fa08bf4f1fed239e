"""Classes in one SQLite file (WAL): every worker of the machine opens it, and it outlives restarts.

sqlite3 blocks, so each call runs in a worker thread; a write takes well under a millisecond. Writes
run in BEGIN IMMEDIATE transactions, which take the file's write lock at once: the check ("is this
step current?") and the change happen under one lock, whichever worker asks.
"""

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

from filelock import FileLock

from app.stores import ClassState, Outcome

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, token_hash TEXT NOT NULL, step INTEGER NOT NULL, revealed INTEGER NOT NULL,
    version INTEGER NOT NULL, touched REAL NOT NULL);
CREATE TABLE IF NOT EXISTS students (
    code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, student TEXT NOT NULL, PRIMARY KEY (code, student));
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, step INTEGER NOT NULL, student TEXT NOT NULL,
    choice TEXT NOT NULL, PRIMARY KEY (code, step, student));
"""


class SqliteStore:
    def __init__(self, path: Path, idle_seconds: float, poll_seconds: float):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.idle = idle_seconds
        self.poll = poll_seconds
        # isolation_level None: transactions are the explicit BEGIN IMMEDIATE ... COMMIT below.
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        self.lock = threading.Lock()  # one connection, used from the thread pool one call at a time
        # Workers start together and each sets the file up. Two connections that switch a new file to WAL
        # at once can get "database is locked" at once, without SQLite's busy wait (each holds the read
        # lock the other needs to give up), and that worker's start-up fails; so one process at a time.
        with self.lock, FileLock(path.with_name(path.name + ".setup-lock"), timeout=30):
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")  # WAL: a power cut may lose the last commits, never the file
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(SCHEMA)

    async def _run(self, fn, *args):
        return await asyncio.to_thread(self._locked, fn, *args)

    def _locked(self, fn, *args):
        with self.lock:
            return fn(*args)

    def _write(self, fn, *args):
        """fn(*args) inside one write transaction; rolled back if it raises."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            result = fn(*args)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        return result

    def _live(self, code: str, now: float):
        """(step, revealed) of the class, or None; a class idle too long is deleted on the way."""
        self.db.execute("DELETE FROM classes WHERE touched < ?", (now - self.idle,))
        return self.db.execute("SELECT step, revealed FROM classes WHERE code = ?", (code,)).fetchone()

    def _touch(self, code: str, now: float) -> None:
        self.db.execute("UPDATE classes SET version = version + 1, touched = ? WHERE code = ?", (now, code))

    async def create(self, code, token_hash, step, now, max_classes) -> Outcome:
        def create():
            self.db.execute("DELETE FROM classes WHERE touched < ?", (now - self.idle,))
            if self.db.execute("SELECT count(*) FROM classes").fetchone()[0] >= max_classes:
                return "full"
            inserted = self.db.execute(
                "INSERT OR IGNORE INTO classes VALUES (?, ?, ?, 0, 1, ?)", (code, token_hash, step, now)).rowcount
            return "ok" if inserted else "missing"
        return await self._run(self._write, create)

    async def token_hash(self, code, now):
        def read():
            row = self.db.execute("SELECT token_hash FROM classes WHERE code = ? AND touched >= ?",
                                  (code, now - self.idle)).fetchone()
            return row[0] if row else None
        return await self._run(read)

    def _state(self, code, now) -> ClassState | None:
        row = self.db.execute("SELECT step, revealed, version FROM classes WHERE code = ? AND touched >= ?",
                              (code, now - self.idle)).fetchone()
        if row is None:
            return None
        step, revealed, version = row
        joined = self.db.execute("SELECT count(*) FROM students WHERE code = ?", (code,)).fetchone()[0]
        answered = self.db.execute("SELECT count(*) FROM answers WHERE code = ? AND step = ?",
                                   (code, step)).fetchone()[0]
        return ClassState(step=step, revealed=bool(revealed), joined=joined, answered=answered, version=version)

    async def state(self, code, now):
        # One read transaction, so the counts belong to the step read with them.
        def read():
            self.db.execute("BEGIN")
            try:
                return self._state(code, now)
            finally:
                self.db.execute("COMMIT")
        return await self._run(read)

    async def set_step(self, code, step, now) -> Outcome:
        def move():
            if self._live(code, now) is None:
                return "missing"
            self.db.execute("UPDATE classes SET step = ?, revealed = 0 WHERE code = ?", (step, code))
            self._touch(code, now)
            return "ok"
        return await self._run(self._write, move)

    async def reveal(self, code, now) -> Outcome:
        def reveal():
            if self._live(code, now) is None:
                return "missing"
            self.db.execute("UPDATE classes SET revealed = 1 WHERE code = ?", (code,))
            self._touch(code, now)
            return "ok"
        return await self._run(self._write, reveal)

    async def end(self, code) -> Outcome:
        def end():
            return "ok" if self.db.execute("DELETE FROM classes WHERE code = ?", (code,)).rowcount else "missing"
        return await self._run(self._write, end)

    def _join(self, code, student, max_students) -> Outcome:
        if self.db.execute("SELECT 1 FROM students WHERE code = ? AND student = ?", (code, student)).fetchone():
            return "ok"
        if self.db.execute("SELECT count(*) FROM students WHERE code = ?", (code,)).fetchone()[0] >= max_students:
            return "full"
        self.db.execute("INSERT INTO students VALUES (?, ?)", (code, student))
        return "ok"

    async def join(self, code, student, now, max_students) -> Outcome:
        def join():
            if self._live(code, now) is None:
                return "missing"
            outcome = self._join(code, student, max_students)
            if outcome == "ok":
                self._touch(code, now)
            return outcome
        return await self._run(self._write, join)

    async def answer(self, code, student, step, choice, now, max_students):
        def answer():
            live = self._live(code, now)
            if live is None:
                return "missing", 0
            current, revealed = live
            if step != current:
                return "not_current", current
            if revealed:
                return "revealed", current
            if (joined := self._join(code, student, max_students)) != "ok":
                return joined, current
            self.db.execute("INSERT INTO answers VALUES (?, ?, ?, ?) "
                            "ON CONFLICT DO UPDATE SET choice = excluded.choice", (code, step, student, choice))
            self._touch(code, now)
            return "ok", current
        return await self._run(self._write, answer)

    async def counts(self, code, step):
        def read():
            rows = self.db.execute("SELECT choice, count(*) FROM answers WHERE code = ? AND step = ? GROUP BY choice",
                                   (code, step)).fetchall()
            return dict(rows)
        return await self._run(read)

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

    async def close(self) -> None:
        await self._run(self.db.close)
