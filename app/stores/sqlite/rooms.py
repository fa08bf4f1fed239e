"""A class's room in SQLite: it is made, moves from step to step, reveals, votes again, and keeps its answers."""

import json

from app.stores import ClassState, Outcome
from app.stores.sqlite.connection import Connection
from app.stores.sqlite.schema import ALIVE, STANDING


class Rooms(Connection):
    def _change(self, code: str, now: float, sql: str, args: tuple) -> Outcome:
        if self._live(code, now) is None:
            return "missing"
        self.db.execute(sql, args)
        self._touch(code, now)
        return "ok"

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
            f"SELECT step, revealed, version, door, round, refused_joins FROM classes WHERE code = :code AND {ALIVE}",
            {"code": code, **self._cuts(now)}).fetchone()
        if row is None:
            return None
        step, revealed, version, door, round_, refused_joins = row
        joined, removed, waiting = self.db.execute(
            "SELECT count(*) FILTER (WHERE removed_at IS NULL AND waiting = 0), count(removed_at), "
            "count(*) FILTER (WHERE removed_at IS NULL AND waiting = 1) FROM students WHERE code = ?",
            (code,)).fetchone()
        answered = self.db.execute("SELECT count(*) FROM answers WHERE code = ? AND step = ? AND round = ?",
                                   (code, step, round_)).fetchone()[0]
        return ClassState(step=step, revealed=bool(revealed), joined=joined, answered=answered, version=version,
                          door=door, removed=removed, round=round_, waiting=waiting,
                          refused_joins=refused_joins)

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
