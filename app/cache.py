"""A bounded cache of encoded JSON answers, keyed by the normalised request.

Forty students pressing the same preset in the same second then cost one model run. A hit
is answered on the event loop; a miss runs the model in the thread pool, so the loop (and
/healthz) never waits on torch."""

from collections import OrderedDict
from collections.abc import Callable
from threading import Lock

import orjson
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool


def encode(data) -> bytes:
    # float32 numpy arrays are written with float32's shortest exact digits.
    return orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY)


class ResponseCache:
    """At most `size` answers and `max_bytes` in all; an answer over a tenth of that (a 512-character
    line's attention maps run to tens of MB) is not kept."""

    def __init__(self, size: int, max_bytes: int = 64 * 2**20):
        self.size = size
        self.max_bytes = max_bytes
        self._bytes = 0
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._lock = Lock()

    async def answer(self, route: str, req: BaseModel, compute: Callable[[], object]) -> bytes:
        # model_dump_json writes every field, defaults included: {} and the explicit defaults share a key.
        key = f"{route} {req.model_dump_json()}"
        with self._lock:
            body = self._items.get(key)
            if body is not None:
                self._items.move_to_end(key)
                return body
        body = await run_in_threadpool(lambda: encode(compute()))
        if self.size and len(body) <= self.max_bytes // 10:
            with self._lock:
                if key not in self._items:
                    self._items[key] = body
                    self._bytes += len(body)
                while len(self._items) > self.size or self._bytes > self.max_bytes:
                    self._bytes -= len(self._items.popitem(last=False)[1])
        return body
