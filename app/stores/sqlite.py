"""Classes in one SQLite file (WAL): every worker of the machine opens it, and it outlives restarts.

sqlite3 blocks, so each call runs in a worker thread; a write takes well under a millisecond. Writes
run in BEGIN IMMEDIATE transactions, which take the file's write lock at once: the check ("is this
step current?") and the change happen under one lock, whichever worker asks.
"""

import asyncio
import json
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

from filelock import FileLock

from app.stores import ClassRecord, ClassState, Lifetimes, Outcome, Seat, StepRecord

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    code TEXT PRIMARY KEY, token_hash TEXT NOT NULL, step INTEGER NOT NULL, revealed INTEGER NOT NULL,
    version INTEGER NOT NULL, touched REAL NOT NULL, door TEXT NOT NULL DEFAULT 'open',
    door_chosen INTEGER NOT NULL DEFAULT 0, round INTEGER NOT NULL DEFAULT 1, ended_at REAL);
-- Every step the class visited: how many rounds it opened, and the choices its verdict accepted (JSON) at the
-- reveal.
CREATE TABLE IF NOT EXISTS visits (
    code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, step INTEGER NOT NULL, rounds INTEGER NOT NULL DEFAULT 1,
    accepted TEXT, PRIMARY KEY (code, step));
CREATE TABLE IF NOT EXISTS students (
    code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, student TEXT NOT NULL, token_hash TEXT,
    name TEXT, joined_at REAL, removed_at REAL, waiting INTEGER NOT NULL DEFAULT 0, address TEXT,
    PRIMARY KEY (code, student));
CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, step INTEGER NOT NULL, student TEXT NOT NULL,
    choice TEXT NOT NULL, round INTEGER NOT NULL DEFAULT 1, answered_at REAL, PRIMARY KEY (code, step, round, student));
-- Rate limits' events (app/services/rate_limits.py): each row leaves when its window has passed.
CREATE TABLE IF NOT EXISTS hits (key TEXT NOT NULL, at REAL NOT NULL, until REAL NOT NULL);
CREATE INDEX IF NOT EXISTS hits_by_key ON hits (key, at);
CREATE INDEX IF NOT EXISTS hits_by_end ON hits (until);
DROP TABLE IF EXISTS creations;
"""
# Columns added since the first classes.db: a file from before gets them on start (its classes keep going;
# its students, who hold no token, join again).
ADDED_COLUMNS = [("classes", "round", "INTEGER NOT NULL DEFAULT 1"), ("students", "token_hash", "TEXT"),
                 ("students", "name", "TEXT"), ("students", "joined_at", "REAL"), ("students", "removed_at", "REAL"),
                 ("classes", "ended_at", "REAL"), ("answers", "answered_at", "REAL"),
                 ("classes", "door", "TEXT NOT NULL DEFAULT 'open'"),
                 ("classes", "door_chosen", "INTEGER NOT NULL DEFAULT 0"),
                 ("students", "waiting", "INTEGER NOT NULL DEFAULT 0"), ("students", "address", "TEXT")]
# A file from before the door had three states kept a lock (locked = 1): its door is closed, as the teacher chose.
DOOR_FROM_LOCK = "UPDATE classes SET door = 'closed', door_chosen = 1 WHERE locked = 1"
# Answers before rounds were keyed (code, step, student): the table is made again with the round in its key,
# each answer in round 1.
ANSWERS_WITH_ROUNDS = """
CREATE TABLE answers_by_round (
    code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, step INTEGER NOT NULL, student TEXT NOT NULL,
    choice TEXT NOT NULL, round INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (code, step, round, student));
INSERT INTO answers_by_round (code, step, student, choice) SELECT code, step, student, choice FROM answers;
DROP TABLE answers;
ALTER TABLE answers_by_round RENAME TO answers;
"""
INDEXES = "CREATE INDEX IF NOT EXISTS students_by_token ON students (code, token_hash);"
# Where a student stands (app.stores.Standing), from their row.
STANDING = "CASE WHEN removed_at IS NOT NULL THEN 'removed' WHEN waiting = 1 THEN 'waiting' ELSE 'in' END"
# A class lives while touched within the idle time, and within the shorter time while nobody joined, until the
# teacher ends it; then its record stays until :kept_cut.
LIVELY = ("touched >= :idle_cut AND (touched >= :unjoined_cut OR "
          "EXISTS (SELECT 1 FROM students s WHERE s.code = classes.code))")
ALIVE = f"ended_at IS NULL AND {LIVELY}"
KEPT = f"(({ALIVE}) OR (ended_at IS NOT NULL AND ended_at >= :kept_cut))"


class SqliteStore:
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
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")  # WAL: a power cut may lose the last commits, never the file
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(SCHEMA)
            if "round" not in {row[1] for row in self.db.execute("PRAGMA table_info(answers)")}:
                self.db.executescript(f"BEGIN; {ANSWERS_WITH_ROUNDS} COMMIT;")
            before = {row[1] for row in self.db.execute("PRAGMA table_info(classes)")}
            for table, column, kind in ADDED_COLUMNS:
                if column not in {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            if "locked" in before and "door" not in before:
                self.db.execute(DOOR_FROM_LOCK)
            self.db.executescript(INDEXES)

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

    async def create(self, code, token_hash, step, now, max_classes):
        def create():
            self._purge(now)
            if self.db.execute("SELECT count(*) FROM classes WHERE ended_at IS NULL").fetchone()[0] >= max_classes:
                return "full"
            # A code whose ended record is still kept is taken too.
            inserted = self.db.execute("INSERT OR IGNORE INTO classes (code, token_hash, step, revealed, version, "
                                       "touched) VALUES (?, ?, ?, 0, 1, ?)", (code, token_hash, step, now)).rowcount
            if inserted:
                self.db.execute("INSERT INTO visits (code, step) VALUES (?, ?)", (code, step))
            return "ok" if inserted else "missing"
        return await self._run(self._write, create)

    async def token_hash(self, code, now):
        def read():
            row = self.db.execute(f"SELECT token_hash FROM classes WHERE code = :code AND {ALIVE}",
                                  {"code": code, **self._cuts(now)}).fetchone()
            return row[0] if row else None
        return await self._run(read)

    def _state(self, code, now) -> ClassState | None:
        row = self.db.execute(
            f"SELECT step, revealed, version, door, round FROM classes WHERE code = :code AND {ALIVE}",
            {"code": code, **self._cuts(now)}).fetchone()
        if row is None:
            return None
        step, revealed, version, door, round_ = row
        joined, removed, waiting = self.db.execute(
            "SELECT count(*) FILTER (WHERE removed_at IS NULL AND waiting = 0), count(removed_at), "
            "count(*) FILTER (WHERE removed_at IS NULL AND waiting = 1) FROM students WHERE code = ?",
            (code,)).fetchone()
        answered = self.db.execute("SELECT count(*) FROM answers WHERE code = ? AND step = ? AND round = ?",
                                   (code, step, round_)).fetchone()[0]
        return ClassState(step=step, revealed=bool(revealed), joined=joined, answered=answered, version=version,
                          door=door, removed=removed, round=round_, waiting=waiting)

    async def state(self, code, now):
        # One read transaction, so the counts belong to the step read with them.
        def read():
            self.db.execute("BEGIN")
            try:
                return self._state(code, now)
            finally:
                self.db.execute("COMMIT")
        return await self._run(read)

    def _change(self, code: str, now: float, sql: str, args: tuple) -> Outcome:
        if self._live(code, now) is None:
            return "missing"
        self.db.execute(sql, args)
        self._touch(code, now)
        return "ok"

    async def set_step(self, code, step, now) -> Outcome:
        def set_step():
            outcome = self._change(code, now, "UPDATE classes SET step = ?, revealed = 0, round = 1 WHERE code = ?",
                                   (step, code))
            if outcome == "ok":
                self.db.execute("INSERT OR IGNORE INTO visits (code, step) VALUES (?, ?)", (code, step))
            return outcome
        return await self._run(self._write, set_step)

    async def reveal(self, code, accepted, now) -> Outcome:
        def reveal():
            live = self._live(code, now)
            if live is None:
                return "missing"
            # The first reveal: latecomers are no longer usual, so an open door asks (unless the teacher chose it).
            self.db.execute("UPDATE classes SET revealed = 1, door = CASE WHEN door_chosen = 0 AND door = 'open' "
                            "THEN 'ask' ELSE door END, door_chosen = 1 WHERE code = ?", (code,))
            self.db.execute("INSERT INTO visits (code, step, accepted) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET "
                            "accepted = excluded.accepted",
                            (code, live[0], None if accepted is None else json.dumps(accepted)))
            self._touch(code, now)
            return "ok"
        return await self._run(self._write, reveal)

    async def again(self, code, max_rounds, now) -> tuple[Outcome, int]:
        def again():
            live = self._live(code, now)
            if live is None:
                return "missing", 0
            _, revealed, _, round_ = live
            if revealed:
                return "revealed", round_
            if round_ >= max_rounds:
                return "full", round_
            self.db.execute("UPDATE classes SET round = round + 1 WHERE code = ?", (code,))
            self.db.execute("INSERT INTO visits (code, step, rounds) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET "
                            "rounds = max(rounds, excluded.rounds)", (code, live[0], round_ + 1))
            self._touch(code, now)
            return "ok", round_ + 1
        return await self._run(self._write, again)

    async def set_door(self, code, door, now) -> Outcome:
        return await self._run(self._write, self._change, code, now,
                               "UPDATE classes SET door = ?, door_chosen = 1 WHERE code = ?", (door, code))

    async def end(self, code, now) -> Outcome:
        def end():
            if self._live(code, now) is None:
                return "missing"
            self.db.execute("UPDATE classes SET ended_at = ? WHERE code = ?", (now, code))
            # The students' addresses served the running class only (the wrong-code count).
            self.db.execute("UPDATE students SET address = NULL WHERE code = ?", (code,))
            self._touch(code, now)  # the watchers read the state again: none, and an end record
            return "ok"
        return await self._run(self._write, end)

    async def ended(self, code):
        def read():
            row = self.db.execute("SELECT 1 FROM classes WHERE code = ? AND ended_at IS NOT NULL", (code,)).fetchone()
            return row is not None
        return await self._run(read)

    async def record(self, code, now):
        def read():
            # A write transaction: records past their time are deleted first, so none outlives it.
            self._purge(now)
            row = self.db.execute("SELECT token_hash, ended_at FROM classes WHERE code = ?", (code,)).fetchone()
            if row is None:
                return None
            visits = self.db.execute("SELECT step, rounds, accepted FROM visits WHERE code = ? ORDER BY step",
                                     (code,)).fetchall()
            students = self.db.execute("SELECT student, coalesce(name, '') FROM students WHERE code = ? AND "
                                       "removed_at IS NULL AND waiting = 0 ORDER BY joined_at, rowid",
                                       (code,)).fetchall()
            answers = self.db.execute(
                "SELECT a.step, a.round, a.student, a.choice, a.answered_at FROM answers a JOIN students s "
                "ON s.code = a.code AND s.student = a.student WHERE a.code = ? AND s.removed_at IS NULL "
                "ORDER BY a.step, a.round",
                (code,)).fetchall()
            steps = {step: StepRecord(rounds, None if accepted is None else json.loads(accepted))
                     for step, rounds, accepted in visits}
            return ClassRecord(token_hash=row[0], ended_at=row[1], steps=steps, students=dict(students),
                               answers=[tuple(a) for a in answers])
        return await self._run(self._write, read)

    async def delete(self, code, now):
        def delete():
            self._purge(now)
            row = self.db.execute("SELECT ended_at FROM classes WHERE code = ?", (code,)).fetchone()
            if row is None:
                return "missing"
            if row[0] is None:
                return "running"
            self.db.execute("DELETE FROM classes WHERE code = ?", (code,))  # its visits, students, answers cascade
            return "ok"
        return await self._run(self._write, delete)

    async def join(self, code, student, token_hash, name, animal, address, now, max_students):
        def join():
            live = self._live(code, now)
            if live is None:
                return "missing", ""
            door = live[2]
            if door == "closed":
                return "locked", ""
            seated, ever = self.db.execute("SELECT count(*) FILTER (WHERE removed_at IS NULL), count(*) "
                                           "FROM students WHERE code = ?", (code,)).fetchone()
            if seated >= max_students:
                return "full", ""
            def taken(given: str) -> bool:
                return bool(self.db.execute("SELECT 1 FROM students WHERE code = ? AND name = ?",
                                            (code, given)).fetchone())
            given, n = name, ever + 1
            if given is None:
                given = f"{animal} {n}"
                while taken(given):
                    n += 1
                    given = f"{animal} {n}"
            elif taken(given):
                n = 2
                while taken(f"{name} {n}"):
                    n += 1
                given = f"{name} {n}"
            self.db.execute("INSERT INTO students (code, student, token_hash, name, joined_at, waiting, address) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)", (code, student, token_hash, given, now, int(door == "ask"),
                                                             address))
            self._touch(code, now)
            return ("waiting" if door == "ask" else "ok"), given
        return await self._run(self._write, join)

    async def student(self, code, token_hash, now):
        def read():
            row = self.db.execute(
                f"SELECT student, {STANDING} FROM students WHERE code = :code AND token_hash = :hash "
                f"AND EXISTS (SELECT 1 FROM classes WHERE code = :code AND {ALIVE})",
                {"code": code, "hash": token_hash, **self._cuts(now)}).fetchone()
            return (row[0], row[1]) if row else None
        return await self._run(read)

    async def member(self, code, student, now):
        def read():
            row = self.db.execute(
                f"SELECT {STANDING} FROM students WHERE code = :code AND student = :student "
                f"AND EXISTS (SELECT 1 FROM classes WHERE code = :code AND {ALIVE})",
                {"code": code, "student": student, **self._cuts(now)}).fetchone()
            return row[0] if row else None
        return await self._run(read)

    async def roster(self, code, now):
        def read():
            self.db.execute("BEGIN")
            try:
                at = self.db.execute("SELECT step, round FROM classes WHERE code = ?", (code,)).fetchone() or (0, 0)
                rows = self.db.execute(
                    "SELECT s.student, coalesce(s.name, ''), coalesce(s.joined_at, 0), a.student IS NOT NULL, "
                    "s.waiting FROM students s LEFT JOIN answers a ON a.code = s.code AND a.student = s.student "
                    "AND a.step = ? AND a.round = ? WHERE s.code = ? AND s.removed_at IS NULL "
                    "ORDER BY s.joined_at, s.rowid",
                    (*at, code)).fetchall()
            finally:
                self.db.execute("COMMIT")
            return [Seat(student, name, joined_at, bool(answered), bool(waiting))
                    for student, name, joined_at, answered, waiting in rows]
        return await self._run(read)

    def _standing(self, code: str, students: list[str] | None, waiting_only: bool) -> list[str]:
        """Of `students` (None: all), those of the class not removed (and, waiting_only, still waiting), in
        joining order."""
        found = self.db.execute("SELECT student FROM students WHERE code = ? AND removed_at IS NULL AND waiting >= ? "
                                "ORDER BY joined_at, rowid", (code, int(waiting_only))).fetchall()
        return [row[0] for row in found if students is None or row[0] in students]

    async def admit(self, code, students, now):
        def admit():
            if self._live(code, now) is None:
                return None
            let_in = self._standing(code, students, waiting_only=True)
            if let_in:
                self.db.executemany("UPDATE students SET waiting = 0 WHERE code = ? AND student = ?",
                                    [(code, s) for s in let_in])
                self._touch(code, now)
            return let_in
        return await self._run(self._write, admit)

    async def remove(self, code, students, now):
        def remove():
            if self._live(code, now) is None:
                return None
            gone = self._standing(code, students, waiting_only=False)
            if gone:
                self.db.executemany("UPDATE students SET removed_at = ?, waiting = 0 WHERE code = ? AND student = ?",
                                    [(now, code, s) for s in gone])
                # Every step and round: answers are keyed by student, whatever else keys them.
                self.db.executemany("DELETE FROM answers WHERE code = ? AND student = ?", [(code, s) for s in gone])
                self.db.execute("UPDATE classes SET door = 'ask' WHERE code = ? AND door = 'open'", (code,))
                self._touch(code, now)
            return gone
        return await self._run(self._write, remove)

    async def addresses(self, code):
        def read():
            rows = self.db.execute("SELECT DISTINCT address FROM students WHERE code = ? AND address IS NOT NULL",
                                   (code,)).fetchall()
            return {row[0] for row in rows}
        return await self._run(read)

    async def removed(self, code):
        def read():
            rows = self.db.execute("SELECT student FROM students WHERE code = ? AND removed_at IS NOT NULL",
                                   (code,)).fetchall()
            return {row[0] for row in rows}
        return await self._run(read)

    async def waiting(self, code):
        def read():
            return set(self._standing(code, None, waiting_only=True))
        return await self._run(read)

    async def answer(self, code, student, step, choice, now):
        def answer():
            live = self._live(code, now)
            if live is None:
                return "missing", 0
            current, revealed, _, round_ = live
            standing = self.db.execute(f"SELECT {STANDING} FROM students WHERE code = ? AND student = ?",
                                       (code, student)).fetchone()
            if standing != ("in",):
                return ("waiting" if standing == ("waiting",) else "removed"), current
            # A retry of an answer already counted: in the open round, or in any round once the step has passed.
            kept = self.db.execute("SELECT 1 FROM answers WHERE code = ? AND step = ? AND student = ? AND choice = ? "
                                   "AND (round = ? OR ? != ?)", (code, step, student, choice, round_, step,
                                                                 current)).fetchone()
            if kept is not None:
                return "ok", current
            if step != current:
                return "not_current", current
            if revealed:
                return "revealed", current
            self.db.execute("INSERT INTO answers (code, step, student, choice, round, answered_at) VALUES "
                            "(?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET choice = excluded.choice, "
                            "answered_at = excluded.answered_at", (code, step, student, choice, round_, now))
            self._touch(code, now)
            return "ok", current
        return await self._run(self._write, answer)

    async def answers_of(self, code, student):
        def read():
            rows = self.db.execute("SELECT step, choice FROM answers WHERE code = ? AND student = ? ORDER BY round",
                                   (code, student)).fetchall()  # the last round's answer of each step
            return dict(rows)
        return await self._run(read)

    async def counts(self, code, step, round_):
        def read():
            rows = self.db.execute("SELECT choice, count(*) FROM answers WHERE code = ? AND step = ? AND round = ? "
                                   "GROUP BY choice", (code, step, round_)).fetchall()
            return dict(rows)
        return await self._run(read)

    async def hit(self, key, limit, window, now, count):
        def hit():
            self.db.execute("DELETE FROM hits WHERE until <= ?", (now,))
            held = self.db.execute("SELECT count(*) FROM hits WHERE key = ?", (key,)).fetchone()[0]
            if held >= limit:
                # The window frees a place when its oldest event of the last `limit` leaves it.
                nth = self.db.execute("SELECT at FROM hits WHERE key = ? ORDER BY at DESC LIMIT 1 OFFSET ?",
                                      (key, limit - 1)).fetchone()[0]
                return max(nth + window - now, 0.001)
            if count:
                self.db.execute("INSERT INTO hits VALUES (?, ?, ?)", (key, now, now + window))
            return 0.0
        return await self._run(self._write, hit)

    async def held(self, keys, window, now):
        def read():
            marks = ",".join("?" * len(keys))
            return self.db.execute(f"SELECT count(*) FROM hits WHERE key IN ({marks}) AND at > ?",
                                   (*keys, now - window)).fetchone()[0]
        return await self._run(read) if keys else 0

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
