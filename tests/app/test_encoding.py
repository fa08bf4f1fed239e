"""An answer's gzip form: made once, off the event loop when large, and not kept when it failed."""

import asyncio
import gzip
import threading

import numpy as np
import orjson
import pytest

from app.pipeline import encoding
from app.pipeline.encoding import Encoded

REAL_COMPRESS = gzip.compress  # for the tests' own checks, which the recording below must not count

@pytest.fixture
def compressions(monkeypatch):
    """Every gzip.compress call the app makes: (the bytes compressed, the thread it ran in)."""
    calls = []

    def recording(data, *args, **kwargs):
        calls.append((bytes(data), threading.get_ident()))
        return REAL_COMPRESS(data, *args, **kwargs)

    monkeypatch.setattr(encoding.gzip, "compress", recording)
    return calls


def test_a_cached_answer_is_gzipped_once_for_every_client_that_accepts_gzip(client, compressions):
    # A seed no other test asks for, so that this answer is not cached yet in the shared client.
    body = {"line_a": "白日依山尽", "line_b": "山依日白尽", "position": "learned", "seed": 7_654_321,
            "weights": "random"}
    plain = client.post("/api/compare", json=body, headers={"Accept-Encoding": "identity"})
    first = client.post("/api/compare", json=body, headers={"Accept-Encoding": "gzip, deflate"})
    again = client.post("/api/compare", json=body, headers={"Accept-Encoding": "gzip"})
    assert plain.status_code == first.status_code == again.status_code == 200
    assert "content-encoding" not in plain.headers and plain.headers["vary"] == "Accept-Encoding"
    for zipped in (first, again):
        assert zipped.headers["content-encoding"] == "gzip" and zipped.headers["vary"] == "Accept-Encoding"
        assert zipped.headers["content-type"] == "application/json"
        assert zipped.content == plain.content  # httpx undoes the gzip
        # One gzip layer, the whole answer: the middleware left the kept form alone.
        whole = REAL_COMPRESS(plain.content, compresslevel=encoding.GZIP_LEVEL, mtime=0)
        assert int(zipped.headers["content-length"]) == len(whole)
    assert orjson.loads(plain.content)["model"]["seed"] == 7_654_321
    assert [data for data, _ in compressions] == [plain.content]


def test_a_large_answer_is_gzipped_in_a_thread_off_the_event_loop(compressions):
    small, large = Encoded(b"[" + b"1," * 1000 + b"1]"), Encoded(b"[" + b"1," * 100_000 + b"1]")

    async def zipped(answer):
        return await answer.gzip(), threading.get_ident()

    data, loop_thread = asyncio.run(zipped(small))
    assert gzip.decompress(data) == small.json and compressions[-1][1] == loop_thread
    data, loop_thread = asyncio.run(zipped(large))
    assert gzip.decompress(data) == large.json and compressions[-1][1] != loop_thread


def test_requests_for_one_large_answer_at_once_share_one_compression(compressions):
    shared = Encoded(b"[" + b"2," * 100_000 + b"2]")

    async def together():
        return await asyncio.gather(*(shared.gzip() for _ in range(5)))

    forms = asyncio.run(together())
    assert len(set(forms)) == 1 and gzip.decompress(forms[0]) == shared.json
    assert asyncio.run(shared.gzip()) == forms[0] and len(compressions) == 1


def test_a_failed_compression_is_not_kept_with_the_answer(monkeypatch):
    failures = [MemoryError("no room for the gzip form")]

    def failing_once(*args, **kwargs):
        if failures:
            raise failures.pop()
        return REAL_COMPRESS(*args, **kwargs)

    monkeypatch.setattr(encoding.gzip, "compress", failing_once)
    large = Encoded(b"[" + b"3," * 100_000 + b"3]")  # compressed in a thread, as a task shared by its requests

    async def twice():
        with pytest.raises(MemoryError):
            await large.gzip()
        return await large.gzip()

    assert gzip.decompress(asyncio.run(twice())) == large.json


def test_float32_arrays_are_written_with_float32s_shortest_digits():
    assert encoding.encode({"p": np.array([1 / 3], dtype=np.float32)}) == b'{"p":[0.33333334]}'
