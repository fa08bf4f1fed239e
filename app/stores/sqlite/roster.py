"""A class's students in SQLite: who joins through the door, waits at it, is admitted or removed."""

from app.stores import Seat
from app.stores.sqlite.connection import Connection
from app.stores.sqlite.schema import ALIVE, STANDING


class Roster(Connection):
    async def join(self, code, student, token_hash, name, key, animal, address, now, max_students):
        def join():
            live = self._live(code, now)
            if live is None:
                return "missing", ""
            door = live[2]
            if door == "closed":
                return "locked", ""
            if key is not None and self.db.execute(
                    "SELECT 1 FROM students WHERE code = :code AND removed_at IS NOT NULL "
                    "AND :key IN (name_key, shown_key)", {"code": code, "key": key}).fetchone():
                self.db.execute("UPDATE classes SET refused_joins = refused_joins + 1 WHERE code = ?", (code,))
                self._touch(code, now)  # the teacher's page reads the count again
                return "refused", ""
            seated, ever = self.db.execute("SELECT count(*) FILTER (WHERE removed_at IS NULL), count(*) "
                                           "FROM students WHERE code = ?", (code,)).fetchone()
            if seated >= max_students:
                return "full", ""
            def taken(given: str) -> bool:
                return bool(self.db.execute("SELECT 1 FROM students WHERE code = ? AND name = ?",
                                            (code, given)).fetchone())
            given, shown_key, n = name, key, ever + 1
            if given is None:
                given = f"{animal} {n}"
                while taken(given):
                    n += 1
                    given = f"{animal} {n}"
            elif taken(given):
                n = 2
                while taken(f"{name} {n}"):
                    n += 1
                given, shown_key = f"{name} {n}", f"{key} {n}"
            self.db.execute("INSERT INTO students (code, student, token_hash, name, joined_at, waiting, address, "
                            "name_key, shown_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (code, student, token_hash, given, now, int(door == "ask"), address, key, shown_key))
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

    async def _column(self, sql: str, code: str) -> set:
        """The values of the one column `sql` selects for the class (its one parameter)."""
        def read():
            return {row[0] for row in self.db.execute(sql, (code,)).fetchall()}
        return await self._run(read)

    async def addresses(self, code):
        return await self._column("SELECT address FROM students WHERE code = ? AND address IS NOT NULL", code)

    async def removed(self, code):
        return await self._column("SELECT student FROM students WHERE code = ? AND removed_at IS NOT NULL", code)

    async def waiting(self, code):
        def read():
            return set(self._standing(code, None, waiting_only=True))
        return await self._run(read)
