"""Per-address limits, kept in the class store so that every worker and replica counts the same events.

One mechanism for every limit: a sliding window of events per key in the class store (a table in SQLite, a
sorted set in Redis), checked and counted in one atomic step of the store. 300 joins sent at once from one
address therefore pass at most `limit` times, whichever workers take them.

Why not the `limits` library: it fits Redis, but it has no SQLite storage, and SQLite is how the workers of
one machine share class mode (the default); its memory storage is per process, so a second worker would
double every limit, which is the bug this module replaces. Its storages would also bypass the class store's
outage handling (a 503 that says the store does not answer). So the store keeps its own small window.
"""

import math
import time
from collections.abc import Awaitable, Callable

from app.errors import ClassError
from app.stores import ClassStore


class RateLimit:
    """At most `limit` events per key in the last `window` seconds. A refusal is a 429 ClassError whose
    message says when to try again, in seconds or (`in_minutes`) minutes, with Retry-After in seconds."""

    def __init__(self, store: ClassStore, ask: Callable[[Awaitable], Awaitable], name: str, limit: int,
                 window: float, error_type: str, message: str, in_minutes: bool = False):
        self.store = store
        self.ask = ask  # the class service's store call: a store that does not answer is a 503
        self.name = name  # the key's prefix in the store, e.g. "join"
        self.limit = limit
        self.window = window
        self.error_type = error_type
        self.message = message  # with {limit}, {window_minutes} and {wait}
        self.in_minutes = in_minutes

    def _key(self, who: str) -> str:
        return f"{self.name}:{who}"

    def _refuse(self, wait: float) -> ClassError:
        seconds = max(1, math.ceil(wait))
        minutes = max(1, math.ceil(seconds / 60))
        ctx = {"limit": self.limit, "window_minutes": max(1, round(self.window / 60)), "retry_after": seconds,
               "retry_minutes": minutes}
        text = self.message.format(limit=self.limit, window_minutes=ctx["window_minutes"],
                                   wait=f"{minutes} min" if self.in_minutes else f"{seconds} s")
        return ClassError(429, self.error_type, text, ctx, retry_after=seconds)

    async def hit(self, who: str) -> None:
        """Count one event for `who`, or refuse it (429) without counting when the window is full."""
        wait = await self.ask(self.store.hit(self._key(who), self.limit, self.window, time.time(), True))
        if wait > 0:
            raise self._refuse(wait)

    async def check(self, who: str) -> None:
        """Refuse (429) while the window of `who` is full; counts nothing."""
        wait = await self.ask(self.store.hit(self._key(who), self.limit, self.window, time.time(), False))
        if wait > 0:
            raise self._refuse(wait)

    async def held(self, whos: set[str]) -> int:
        """The events of all `whos` in the window (the wrong codes sent from a class's network)."""
        return await self.ask(self.store.held([self._key(who) for who in sorted(whos)], self.window, time.time()))


class ClassLimits:
    """The limits of class mode and of the API, by whom they slow (docs/class-mode.md has the model):
    - misses: unknown codes per address; only requests that hold no credential of the class are checked (a
      join through the class's link holds its join key);
    - joins: new students per address, checked and counted at once (a burst passes at most `limit`);
    - creations: classes started per address and hour; loopback and teacher-key holders are not counted;
    - requests: HP_RATE_LIMIT_PER_MINUTE, every /api request per address (off by default)."""

    def __init__(self, store: ClassStore, ask, settings):
        self.misses = RateLimit(store, ask, "miss", settings.join_misses_per_minute, 60.0, "too_many_unknown_codes",
                                "wrong class codes sent from this network hold new joins for a minute (not your "
                                "code's fault): wait {wait}, or open the class's join link or QR code, which is "
                                "never held")
        self.joins = RateLimit(store, ask, "join", settings.joins_per_minute, 60.0, "too_many_joins_from_address",
                               "{limit} new students joined from this address in the last minute "
                               "(HP_JOINS_PER_MINUTE): wait {wait}")
        self.creations = RateLimit(store, ask, "create", settings.classes_per_hour, 3600.0,
                                   "too_many_classes_from_address",
                                   "this address has started {limit} classes in the last {window_minutes} minutes "
                                   "(HP_CLASSES_PER_HOUR): wait {wait}, start it from the server's own machine, "
                                   "or use HP_TEACHER_KEY", in_minutes=True)
        self.requests = RateLimit(store, ask, "api", settings.rate_limit_per_minute, 60.0, "rate_limit",
                                  "rate limit: too many requests from this address, wait {wait}")
