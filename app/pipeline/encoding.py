"""An answer's JSON bytes, and its gzip form made once and kept with it.

float32 numpy arrays are written with float32's shortest exact digits (0.33333334, not
0.3333333432674408). The gzip settings are the app's GZipMiddleware's, so an answer gzipped here and
one gzipped by the middleware are the same bytes."""

import asyncio
import gzip
from functools import partial

import orjson
from anyio import to_thread


def encode(data) -> bytes:
    return orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY)


# Bodies under GZIP_MIN_BYTES are sent as they are, and from GZIP_THREAD_MIN_BYTES up they are compressed in a
# thread: a long line's answer of several MB would otherwise hold the event loop (and /healthz) for a while.
GZIP_LEVEL = 5
GZIP_MIN_BYTES = 1024
GZIP_THREAD_MIN_BYTES = 128 * 1024


class Encoded:
    """One answer's JSON, and its gzip form, made on the first request that accepts gzip and then kept
    with the answer: browsers always ask for gzip, and compressing an answer again for every request
    costs more than the rest of a cached answer's request (docs/benchmarks.md). Used from the event
    loop only."""

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
