"""A bounded cache of encoded JSON answers, keyed by the normalised request.

Forty students pressing the same preset in the same second then cost one model run: the first
request computes, the others wait for its answer (single flight), and later ones find it cached.
A hit is answered on the event loop; a miss runs the model in a worker thread, so the loop (and
/healthz) never waits on torch. At most `model_threads` misses run at once: more threads only
fight over the GIL and the cores, and starve the event loop; the rest wait on the loop, which
costs nothing. Fresh /api/compare misses are batched across requests (Batcher)."""

import asyncio
import gzip
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from functools import partial

import orjson
from anyio import CapacityLimiter, to_thread
from pydantic import BaseModel


def encode(data) -> bytes:
    # float32 numpy arrays are written with float32's shortest exact digits.
    return orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY)


# gzip as the app's GZipMiddleware does it, with the same three numbers: bodies under GZIP_MIN_BYTES are
# sent as they are, and from GZIP_THREAD_MIN_BYTES up they are compressed in a thread: a long line's
# answer of several MB would hold the event loop (and /healthz) for a tenth of a second or more.
GZIP_LEVEL = 5
GZIP_MIN_BYTES = 1024
GZIP_THREAD_MIN_BYTES = 128 * 1024


class Encoded:
    """One answer's JSON, and its gzip form, made on the first request that accepts gzip and then kept
    with the answer. Browsers always ask for gzip, and compressing the explorer's 9 KB answer takes
    about 140 us, more than the rest of a cached answer's request. Used from the event loop only."""

    __slots__ = ("json", "_gzip")

    def __init__(self, json: bytes):
        self.json = json
        # The gzip form, or for a large body the task making it in a thread: the requests that share this
        # answer (a class pressing the same step at once) then wait for one compression.
        self._gzip: bytes | asyncio.Future | None = None

    async def gzip(self) -> bytes:
        if self._gzip is None:
            compress = partial(gzip.compress, self.json, compresslevel=GZIP_LEVEL, mtime=0)
            if len(self.json) < GZIP_THREAD_MIN_BYTES:
                self._gzip = compress()
            else:
                self._gzip = asyncio.ensure_future(to_thread.run_sync(compress))
        if isinstance(self._gzip, bytes):
            return self._gzip
        task = self._gzip
        try:
            return await asyncio.shield(task)  # a request that goes away leaves the task to the others
        except Exception:
            # A compression that failed (out of memory, say) is not kept: the next request tries again.
            if self._gzip is task:
                self._gzip = None
            raise


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
        # What requests were sent as (app.repeats) -> their key. At most `size` of them, the least recently
        # used out first; several may lead to one answer, and one to an answer since evicted (it then finds
        # nothing).
        self._sent: OrderedDict[Hashable, str] = OrderedDict()

    async def answer(self, route: str, req: BaseModel, compute: Callable[[], object],
                     sent: Hashable | None = None) -> Encoded:
        """compute() runs alone in the model thread, on a miss. sent: what req was sent as
        (app.repeats.sent_key), remembered so that the same bytes find the answer without being parsed."""
        return await self._answer(route, req, lambda: self._run(compute), sent)

    async def answer_batched(self, route: str, req: BaseModel, batcher: "Batcher",
                             sent: Hashable | None = None) -> Encoded:
        """On a miss, req joins the batcher's next batch. sent: as in answer()."""
        return await self._answer(route, req, lambda: batcher.submit(req), sent)

    def repeated(self, sent: Hashable) -> Encoded | None:
        """The kept answer to a request sent as these bytes before, if it is still kept."""
        key = self._sent.get(sent)
        answer = self._items.get(key) if key is not None else None
        if answer is not None:
            self._items.move_to_end(key)
            self._sent.move_to_end(sent)
        return answer

    async def _run(self, compute: Callable[[], object]) -> bytes:
        return await to_thread.run_sync(lambda: encode(compute()), limiter=self.limiter)

    async def _answer(self, route: str, req: BaseModel, produce: Callable[[], Awaitable[bytes]],
                      sent: Hashable | None) -> Encoded:
        if not self.size:
            return Encoded(await produce())
        # model_dump_json writes every field, defaults included: {} and the explicit defaults share a key.
        key = f"{route} {req.model_dump_json()}"
        answer = self._items.get(key)
        if answer is not None:
            self._items.move_to_end(key)
            self._remember(sent, key)
            return answer
        if key in self._in_flight:
            answer = await asyncio.shield(self._in_flight[key])
            self._remember(sent, key)
            return answer
        future = self._in_flight[key] = asyncio.get_running_loop().create_future()
        try:
            answer = Encoded(await produce())
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters re-raise it; without waiters asyncio stays quiet
            raise
        finally:
            del self._in_flight[key]
        future.set_result(answer)
        self._keep(key, answer)
        self._remember(sent, key)
        return answer

    def _remember(self, sent: Hashable | None, key: str) -> None:
        if sent is None or key not in self._items:
            return
        self._sent[sent] = key
        self._sent.move_to_end(sent)
        while len(self._sent) > self.size:
            self._sent.popitem(last=False)

    def _keep(self, key: str, answer: Encoded) -> None:
        # Counted by their JSON; a gzip form, when made, adds about 40% of that (9,129 -> 3,583 bytes).
        if len(answer.json) > self.max_bytes // 10:
            return
        self._items[key] = answer
        self._bytes += len(answer.json)
        while len(self._items) > self.size or self._bytes > self.max_bytes:
            self._bytes -= len(self._items.popitem(last=False)[1].json)


class Batcher:
    """Dynamic batching across requests, as inference servers do it (Triton's dynamic batcher, Ray
    Serve's @serve.batch). A miss joins a queue, and the queue runs as one call of run_many in the
    model thread. While the model works, the next batch gathers by itself; a miss that finds the
    model idle waits at most max_wait seconds for company. A batch holds at most max_size items.
    run_many(items) returns, for each item, its answer or the exception it alone raised; answers
    must not depend on the rest of the batch (compare_many fills its batches to keep them exact).

    key(item) names the work an item shares with others (for compare: the models it runs). A batch
    holds the items that share the oldest waiting item's key, and is answered as soon as it is done:
    items of other keys would share no model pass with it, and would only delay its answers."""

    def __init__(self, run_many: Callable[[list], list], limiter: CapacityLimiter, max_size: int, max_wait: float,
                 key: Callable[[object], object] = lambda item: None):
        self.run_many = run_many
        self.limiter = limiter
        self.max_size = max(1, max_size)
        self.max_wait = max_wait
        self.key = key
        self.sizes: Counter[int] = Counter()  # batches run, by number of items: what the benchmark reports
        self._queue: list[tuple[object, asyncio.Future]] = []
        self._drain_task: asyncio.Task | None = None

    async def submit(self, item) -> bytes:
        future = asyncio.get_running_loop().create_future()
        self._queue.append((item, future))
        if self._drain_task is None:
            self._drain_task = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            if len(self._queue) < self.max_size:
                await asyncio.sleep(self.max_wait)
            while self._queue:
                batch = self._take()
                self.sizes[len(batch)] += 1
                try:
                    answers = await to_thread.run_sync(self._encoded, [item for item, _ in batch],
                                                       limiter=self.limiter)
                except Exception as exc:  # a failure of the batch as a whole reaches each of its requests
                    answers = [exc] * len(batch)
                for (_, future), answer in zip(batch, answers):
                    if future.done():  # its client went away
                        continue
                    if isinstance(answer, Exception):
                        future.set_exception(answer)
                    else:
                        future.set_result(answer)
        finally:
            self._drain_task = None

    def _take(self) -> list[tuple[object, asyncio.Future]]:
        """At most max_size waiting items with the oldest one's key, oldest first; the others keep their order."""
        wanted = self.key(self._queue[0][0])
        batch, rest = [], []
        for entry in self._queue:
            (batch if len(batch) < self.max_size and self.key(entry[0]) == wanted else rest).append(entry)
        self._queue = rest
        return batch

    def _encoded(self, items: list) -> list:
        return [a if isinstance(a, Exception) else encode(a) for a in self.run_many(items)]
