"""The per-address rate limits' windows in SQLite (app/services/rate_limits.py): the hits table."""

from app.stores.sqlite.connection import Connection


class Limits(Connection):
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
