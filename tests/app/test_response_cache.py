"""The response cache, seen from outside: which requests run the model, and what each gets back."""

import asyncio

import pytest

from app.pipeline.batcher import Batcher
from app.pipeline.response_cache import ResponseCache
from app.schemas.compare import CompareRequest


def answer(cache, req, value):
    """(the answer's JSON, how many times the model ran for it)."""
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


def test_the_same_request_on_another_route_is_another_answer():
    cache = ResponseCache(size=4)
    asyncio.run(cache.answer("compare", CompareRequest(), lambda: "compare"))
    assert asyncio.run(cache.answer("relative", CompareRequest(), lambda: "relative")).json == b'"relative"'


def test_the_least_recently_used_answer_goes_first():
    cache = ResponseCache(size=2)
    for seed in (0, 1):
        answer(cache, CompareRequest(seed=seed), {"seed": seed})
    assert answer(cache, CompareRequest(seed=0), "unused")[1] == 0  # 0 is now the most recently used
    answer(cache, CompareRequest(seed=2), {"seed": 2})  # a third answer: 1 goes
    assert answer(cache, CompareRequest(seed=0), "unused") == (b'{"seed":0}', 0)
    assert answer(cache, CompareRequest(seed=1), {"seed": "again"}) == (b'{"seed":"again"}', 1)


def test_the_cache_is_bounded_by_bytes():
    cache = ResponseCache(size=100, max_bytes=1000)
    for seed in range(12):  # 12 answers of 92 bytes: over 1,000 bytes, so the oldest ones go
        answer(cache, CompareRequest(seed=seed), "x" * 90)
    assert answer(cache, CompareRequest(seed=0), "x" * 90)[1] == 1
    assert answer(cache, CompareRequest(seed=11), "x" * 90)[1] == 0
    big = "x" * 200  # over a tenth of max_bytes: never kept
    assert answer(cache, CompareRequest(seed=99), big)[1] == 1
    assert answer(cache, CompareRequest(seed=99), big)[1] == 1


def test_size_zero_keeps_and_shares_nothing():
    cache = ResponseCache(size=0)
    calls = []

    def compute():
        calls.append(1)
        return {"ok": True}

    async def burst():
        return await asyncio.gather(*(cache.answer("compare", CompareRequest(), compute) for _ in range(3)))

    assert {a.json for a in asyncio.run(burst())} == {b'{"ok":true}'} and len(calls) == 3


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
    cache = ResponseCache(size=8)

    def fail():
        raise ValueError("bad line")

    async def burst():
        return await asyncio.gather(*(cache.answer("compare", CompareRequest(), fail) for _ in range(3)),
                                    return_exceptions=True)

    assert [type(e) for e in asyncio.run(burst())] == [ValueError] * 3
    with pytest.raises(ValueError):
        asyncio.run(cache.answer("compare", CompareRequest(), fail))
    assert answer(cache, CompareRequest(), {"ok": True}) == (b'{"ok":true}', 1)


def test_equal_batched_misses_join_one_batch_item_and_are_then_cached():
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
