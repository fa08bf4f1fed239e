"""A bounded cache of encoded JSON answers, keyed by the normalised request.

Forty students pressing the same preset in the same second then cost one model run: the first
request computes, the others wait for its answer (single flight), and later ones find it cached.
A hit is answered on the event loop; a miss runs the model in a worker thread, so the loop (and
/healthz) never waits on torch. At most `model_threads` misses run at once: more threads only
fight over the GIL and the cores, and starve the event loop; the rest wait on the loop, which
costs nothing."""

import asyncio
from collections import OrderedDict
from collections.abc import Callable

import orjson
from anyio import CapacityLimiter, to_thread
from pydantic import BaseModel


def encode(data) -> bytes:
    # float32 numpy arrays are written with float32's shortest exact digits.
    return orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY)


class ResponseCache:
    """At most `size` answers and `max_bytes` in all; an answer over a tenth of that (a 512-character
    line's attention maps run to tens of MB) is not kept. size 0 turns caching and sharing off.
    Used from the event loop only, so its dicts need no lock."""

    def __init__(self, size: int, max_bytes: int = 64 * 2**20, model_threads: int = 1):
        self.size = size
        self.max_bytes = max_bytes
        self.limiter = CapacityLimiter(model_threads)
        self._bytes = 0
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._in_flight: dict[str, asyncio.Future] = {}

    async def answer(self, route: str, req: BaseModel, compute: Callable[[], object]) -> bytes:
        if not self.size:
            return await self._run(compute)
        # model_dump_json writes every field, defaults included: {} and the explicit defaults share a key.
        key = f"{route} {req.model_dump_json()}"
        body = self._items.get(key)
        if body is not None:
            self._items.move_to_end(key)
            return body
        if key in self._in_flight:
            return await asyncio.shield(self._in_flight[key])
        future = self._in_flight[key] = asyncio.get_running_loop().create_future()
        try:
            body = await self._run(compute)
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters re-raise it; without waiters asyncio stays quiet
            raise
        finally:
            del self._in_flight[key]
        future.set_result(body)
        self._keep(key, body)
        return body

    async def _run(self, compute: Callable[[], object]) -> bytes:
        return await to_thread.run_sync(lambda: encode(compute()), limiter=self.limiter)

    def _keep(self, key: str, body: bytes) -> None:
        if len(body) > self.max_bytes // 10:
            return
        self._items[key] = body
        self._bytes += len(body)
        while len(self._items) > self.size or self._bytes > self.max_bytes:
            self._bytes -= len(self._items.popitem(last=False)[1])
