import asyncio

import pytest

from app.cache import Encoded, ResponseCache
from app.schemas import CompareRequest


def answer(cache, req, value):
    calls = []

    def compute():
        calls.append(1)
        return value

    return asyncio.run(cache.answer("compare", req, compute)).json, len(calls)


def test_equal_requests_share_one_computation():
    cache = ResponseCache(size=2)
    assert answer(cache, CompareRequest(), {"x": 1}) == (b'{"x":1}', 1)
    # The defaults written out are the same request as the empty one.
    assert answer(cache, CompareRequest(line_a="白日依山尽", seed=0), {"x": 2}) == (b'{"x":1}', 0)


def test_the_cache_is_bounded_by_count_and_bytes():
    cache = ResponseCache(size=2, max_bytes=1000)
    for seed in range(3):
        answer(cache, CompareRequest(seed=seed), {"seed": seed})
    assert answer(cache, CompareRequest(seed=0), {"seed": "again"})[1] == 1  # evicted: oldest first
    big = "x" * 200  # over a tenth of max_bytes: never kept
    assert answer(cache, CompareRequest(seed=9), big)[1] == 1
    assert answer(cache, CompareRequest(seed=9), big)[1] == 1


def test_simultaneous_equal_requests_run_the_model_once():
    cache = ResponseCache(size=8)
    calls = []

    def compute():
        calls.append(1)
        return {"ok": True}

    async def burst():
        return await asyncio.gather(*(cache.answer("compare", CompareRequest(), compute) for _ in range(40)))

    answers = asyncio.run(burst())
    assert {a.json for a in answers} == {b'{"ok":true}'} and len(calls) == 1


def test_an_error_reaches_every_waiter_and_is_not_cached():
    import pytest

    cache = ResponseCache(size=8)

    def fail():
        raise ValueError("bad line")

    async def burst():
        return await asyncio.gather(*(cache.answer("compare", CompareRequest(), fail) for _ in range(3)),
                                    return_exceptions=True)

    assert [type(e) for e in asyncio.run(burst())] == [ValueError] * 3
    with pytest.raises(ValueError):
        asyncio.run(cache.answer("compare", CompareRequest(), fail))


def test_equal_batched_misses_join_one_batch_item_and_are_then_cached():
    from app.cache import Batcher

    items = []

    def run_many(reqs):
        items.extend(reqs)
        return [{"seed": r.seed} for r in reqs]

    async def burst():
        cache = ResponseCache(size=8)
        batcher = Batcher(run_many, cache.limiter, max_size=8, max_wait=0)
        reqs = [CompareRequest(seed=s % 2) for s in range(10)]
        first = await asyncio.gather(*(cache.answer_batched("compare", r, batcher) for r in reqs))
        again = await cache.answer_batched("compare", CompareRequest(seed=1), batcher)
        return [a.json for a in first], again.json, batcher.sizes

    first, again, sizes = asyncio.run(burst())
    assert first == [b'{"seed":0}', b'{"seed":1}'] * 5 and again == b'{"seed":1}'
    assert [r.seed for r in items] == [0, 1] and sizes == {2: 1}


def test_a_cached_answer_is_gzipped_once_for_every_client_that_accepts_gzip(client):
    import gzip

    import orjson

    body = {"line_a": "白日依山尽", "line_b": "山依日白尽", "position": "learned", "seed": 7, "weights": "random"}
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
        assert int(zipped.headers["content-length"]) == len(gzip.compress(plain.content, compresslevel=5, mtime=0))
    assert orjson.loads(plain.content)["model"]["seed"] == 7
    key = "compare " + CompareRequest(**body).model_dump_json()
    kept = client.app.state.cache._items[key]
    assert kept.json == plain.content and asyncio.run(kept.gzip()) is asyncio.run(kept.gzip())


def test_a_large_answer_is_gzipped_in_a_thread_off_the_event_loop(monkeypatch):
    import gzip

    from app import cache as cache_module

    threads = []
    run_sync = cache_module.to_thread.run_sync

    async def recording(fn, *args, **kwargs):
        threads.append(fn)
        return await run_sync(fn, *args, **kwargs)

    monkeypatch.setattr(cache_module.to_thread, "run_sync", recording)
    small, large = Encoded(b"[" + b"1," * 1000 + b"1]"), Encoded(b"[" + b"1," * 100_000 + b"1]")
    assert gzip.decompress(asyncio.run(small.gzip())) == small.json and not threads
    assert gzip.decompress(asyncio.run(large.gzip())) == large.json and len(threads) == 1
    # A class asking for one large answer at once: one compression, shared.
    shared = Encoded(b"[" + b"2," * 100_000 + b"2]")

    async def together():
        return await asyncio.gather(*(shared.gzip() for _ in range(5)))

    assert len(set(asyncio.run(together()))) == 1 and len(threads) == 2
    assert asyncio.run(shared.gzip()) == asyncio.run(together())[0] and len(threads) == 2


def test_a_failed_compression_is_not_kept_with_the_answer(monkeypatch):
    import gzip

    from app import cache as cache_module

    compress = gzip.compress
    failures = [MemoryError("no room for the gzip form")]

    def failing_once(*args, **kwargs):
        if failures:
            raise failures.pop()
        return compress(*args, **kwargs)

    monkeypatch.setattr(cache_module.gzip, "compress", failing_once)
    large = Encoded(b"[" + b"3," * 100_000 + b"3]")  # compressed in a thread, as a task shared by its requests

    async def twice():
        with pytest.raises(MemoryError):
            await large.gzip()
        return await large.gzip()

    assert gzip.decompress(asyncio.run(twice())) == large.json
