"""Dynamic batching across requests, as inference servers do it (Triton's dynamic batcher, Ray
Serve's @serve.batch): fresh /api/compare misses share model passes."""

import asyncio
from collections import Counter
from collections.abc import Callable

from anyio import CapacityLimiter, to_thread

from app.pipeline.encoding import Encoded, encode


class Batcher:
    """A miss joins a queue, and the queue runs as one call of run_many in the model thread. While the
    model works, the next batch gathers by itself; a miss that finds the model idle waits at most
    max_wait seconds for company. A batch holds at most max_size items. run_many(items) returns, for
    each item, its answer or the exception it alone raised; answers must not depend on the rest of the
    batch (compare_many fills its batches to keep them exact).

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

    async def submit(self, item) -> object:
        """item's answer encoded (its JSON bytes, or the Encoded run_many made, such as a Comparison), or the
        exception raised for it."""
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
        return [a if isinstance(a, (Exception, Encoded)) else encode(a) for a in self.run_many(items)]
