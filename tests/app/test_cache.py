import asyncio

from app.cache import ResponseCache
from app.schemas import CompareRequest


def answer(cache, req, value):
    calls = []

    def compute():
        calls.append(1)
        return value

    return asyncio.run(cache.answer("compare", req, compute)), len(calls)


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

    assert set(asyncio.run(burst())) == {b'{"ok":true}'} and len(calls) == 1


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
        return first, again, batcher.sizes

    first, again, sizes = asyncio.run(burst())
    assert first == [b'{"seed":0}', b'{"seed":1}'] * 5 and again == b'{"seed":1}'
    assert [r.seed for r in items] == [0, 1] and sizes == {2: 1}
