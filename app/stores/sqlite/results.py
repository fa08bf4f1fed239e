"""A class's end in SQLite, and the record it leaves the teacher until Lifetimes.results has passed."""

import json

from app.stores import ClassRecord, Outcome, StepRecord
from app.stores.sqlite.connection import Connection


class Results(Connection):
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
