"""A bounded cache of encoded JSON answers, keyed by the normalised request.

Forty students pressing the same preset in the same second then cost one model run: the first
request computes, the others wait for its answer (single flight), and later ones find it cached.
A hit is answered on the event loop; a miss runs the model in a worker thread, so the loop (and
/healthz) never waits on torch. At most `model_threads` model runs happen at once per worker, for every
route that runs a model (compare, its verdict, the lesson's verdicts, ablate, relative): they all run in
threads of this one limiter, alone (answer) or batched (app.pipeline.batcher). More threads only fight over the GIL
and the cores, and starve the event loop; the rest wait on the loop, which costs nothing."""

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from anyio import CapacityLimiter, to_thread
from pydantic import BaseModel

from app.pipeline.batcher import Batcher
from app.pipeline.encoding import Encoded, encode


class ResponseCache:
    """At most `size` answers and `max_bytes` in all; an answer over a tenth of that (a 512-character
    line's attention maps run to tens of MB) is not kept. size 0 turns caching and sharing off.
    Used from the event loop only, so its dicts need no lock."""

    def __init__(self, size: int, max_bytes: int = 64 * 2**20, model_threads: int = 1):
        self.size = size
        self.max_bytes = max_bytes
        self.limiter = CapacityLimiter(model_threads)
        self._bytes = 0
        self._items: OrderedDict[str, Encoded] = OrderedDict()
        self._in_flight: dict[str, asyncio.Future] = {}

    async def answer(self, route: str, req: BaseModel, compute: Callable[[], object]) -> Encoded:
        """compute() runs alone in the model thread, on a miss."""
        return await self._answer(route, req, lambda: self._run(compute))

    async def answer_batched(self, route: str, req: BaseModel, batcher: Batcher) -> Encoded:
        """On a miss, req joins the batcher's next batch."""
        return await self._answer(route, req, lambda: batcher.submit(req))

    async def answer_from(self, route: str, req: BaseModel, produce: Callable[[], Awaitable[bytes | Encoded]]
                          ) -> Encoded:
        """On a miss, produce() makes the answer on the event loop: it must run any model through this cache's
        limiter (answer, a batcher)."""
        return await self._answer(route, req, produce)

    async def kept(self, route: str, answer_id: str) -> Encoded | None:
        """The answer kept or being computed for the request of this id (request_id), without computing it: None
        when there is none, or when the one being computed fails (its own request reports that)."""
        if not self.size:
            return None
        key = f"{route} {answer_id}"
        answer = self._items.get(key)
        if answer is not None or key not in self._in_flight:
            return answer
        try:
            return await asyncio.shield(self._in_flight[key])
        except Exception:
            return None

    async def _run(self, compute: Callable[[], object]) -> bytes:
        return await to_thread.run_sync(lambda: encode(compute()), limiter=self.limiter)

    async def _answer(self, route: str, req: BaseModel, produce: Callable[[], Awaitable[bytes | Encoded]]
                      ) -> Encoded:
        if not self.size:
            return _encoded(await produce())
        key = f"{route} {request_id(req)}"
        answer = self._items.get(key)
        if answer is not None:
            self._items.move_to_end(key)
            return answer
        if key in self._in_flight:
            return await asyncio.shield(self._in_flight[key])
        future = self._in_flight[key] = asyncio.get_running_loop().create_future()
        try:
            answer = _encoded(await produce())
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters re-raise it; without waiters asyncio stays quiet
            raise
        finally:
            del self._in_flight[key]
        future.set_result(answer)
        self._keep(key, answer)
        return answer

    def _keep(self, key: str, answer: Encoded) -> None:
        # Counted by their JSON; a gzip form, when made, adds less than half of that.
        if len(answer.json) > self.max_bytes // 10:
            return
        self._items[key] = answer
        self._bytes += len(answer.json)
        while len(self._items) > self.size or self._bytes > self.max_bytes:
            self._bytes -= len(self._items.popitem(last=False)[1].json)


def request_id(req: BaseModel) -> str:
    """A request's id: a digest of its JSON as model_dump_json writes it, every field, defaults included, so that {}
    and the explicit defaults share it. The same in every worker; what the cache keeps the answer under, and how a
    later request names it (a comparison's comparison_id)."""
    return hashlib.blake2b(req.model_dump_json().encode(), digest_size=16).hexdigest()


def _encoded(answer: bytes | Encoded) -> Encoded:
    return answer if isinstance(answer, Encoded) else Encoded(answer)
