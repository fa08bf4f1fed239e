"""Fresh /api/compare requests batched across requests: every batched answer is bitwise the one
computed alone, whatever else was in its batch."""

import asyncio
import random
import threading

import httpx
import pytest
import torch
from shipped_models import app_on_shipped_models

from app.errors import InputError
from app.pipeline.batcher import Batcher
from app.pipeline.encoding import encode
from app.schemas.compare import CompareRequest
from app.services import compare as compare_service
from app.services.batch_shape import MAX_ROWS, MIN_POSITIONS, MIN_ROWS
from app.services.compare import batch_key, compare_many, run_many
from app.services.comparison import comparisons
from app.settings import Settings
from model import GPT


def compare(req: CompareRequest, registry) -> dict:
    """One request's answer computed alone, in a batch of its own: what every batched answer must equal."""
    answer = compare_many([req], registry)[0]
    if isinstance(answer, Exception):
        raise answer
    return answer.answer


def served_alone(req: CompareRequest, registry) -> bytes:
    """What /api/compare answers for one request computed alone: compare's answer, its id and the verdicts it
    carries."""
    answer = comparisons([req], registry)[0]
    if isinstance(answer, Exception):
        raise answer
    return answer.json


LONG = "春眠不觉晓处处闻啼鸟夜来风雨声花落知多少" * 10  # 200 characters: batches of this length split sooner

BODIES = [
    {},
    {"line_a": "床前明月光", "line_b": "疑是地上霜"},
    {"line_a": "明", "line_b": "月"},  # one position: batches are filled to 16 rows
    {"line_a": "明月", "line_b": "月明光"},
    {"line_a": "白日依山尽", "line_b": "白日依山尽黄河入"},  # padded from 5 to 8
    {"line_a": "白日依山尽", "line_b": "白日依山尽黄河入", "causal": False},  # no mask: each length alone
    {"line_a": "a<b>", "line_b": "春眠不觉晓", "position": "rope"},
    {"line_a": "床前明月光", "line_b": "光月明前床", "position": "none"},
    {"line_a": "床前明月光", "line_b": "光月明前床", "position": "rope", "causal": False},
    {"weights": "random", "n_head": 1, "n_layer": 2, "seed": 3},
    {"weights": "random", "n_head": 8, "n_layer": 1, "position": "rope"},  # the shown model is a lesson depth
    {"weights": "random", "n_head": 2, "n_layer": 4, "position": "none", "seed": 7},
    {"weights": "random", "n_head": 4, "n_layer": 3, "line_a": "夜来风雨声", "line_b": "花落知多少", "layer": 2},
    {"line_a": LONG, "line_b": LONG[::-1], "position": "rope", "layer": 1},
    {"line_a": LONG[:150], "line_b": "白日", "position": "none", "causal": False, "layer": 2},
    {"line_a": "x" * 129, "position": "learned"},  # too long for pos_emb: an InputError, alone or batched
    {"weights": "random", "n_layer": 1, "layer": 2},  # no layer 2 in one block: an InputError
]


@pytest.fixture(autouse=True)
def one_thread():
    """The worker's own setting: the shapes that keep answers exact were measured with it."""
    before = torch.get_num_threads()
    torch.set_num_threads(Settings().torch_threads)
    yield
    torch.set_num_threads(before)


def answer_bytes(answer):
    return answer if isinstance(answer, InputError) else encode(answer.answer)


def alone(req: CompareRequest, registry):
    try:
        return encode(compare(req, registry))
    except InputError as exc:
        return exc


def same(batched, expected) -> bool:
    if isinstance(expected, InputError):
        return isinstance(batched, InputError) and (batched.field, batched.message) == (
            expected.field, expected.message)
    return batched == expected


@pytest.mark.slow
def test_every_batched_answer_is_bitwise_the_one_computed_alone(registry):
    reqs = [CompareRequest(**body) for body in BODIES]
    expected = [alone(req, registry) for req in reqs]
    assert sum(isinstance(e, InputError) for e in expected) == 2
    order = list(range(len(reqs)))
    rng = random.Random(0)
    # The same requests in other batches: all at once, reversed, shuffled in threes, and beside many others.
    batchings = [[order], [order[::-1]]]
    shuffled = rng.sample(order, len(order))
    batchings.append([shuffled[i:i + 3] for i in range(0, len(order), 3)])
    crowd = [CompareRequest(line_a=rng.choice("白日依山尽"), line_b="黄河入海流"[: rng.randint(1, 5)])
             for _ in range(40)]
    for batching in batchings:
        for members in batching:
            answers = compare_many([reqs[i] for i in members], registry)
            for i, answer in zip(members, answers):
                assert same(answer_bytes(answer), expected[i]), f"{BODIES[i]} changed in a batch"
    answers = compare_many(crowd + reqs + crowd, registry)[len(crowd):len(crowd) + len(reqs)]
    assert all(same(answer_bytes(a), e) for a, e in zip(answers, expected))


def test_every_batch_is_filled_to_the_exact_shapes_and_bounded(registry, monkeypatch):
    shapes = []
    trace = GPT.trace

    def recording(self, idx, *args, **kwargs):
        shapes.append(tuple(idx.shape))
        return trace(self, idx, *args, **kwargs)

    monkeypatch.setattr(GPT, "trace", recording)
    model = registry.trained["learned"][0]
    jobs = [(model, [1] * 5, [2] * (1 + i % 5), True) for i in range(45)]  # 180 rows of length 5
    jobs += [(model, [3], [4], True), (model, [5] * 3, [6] * 7, False)]
    jobs += [(registry.trained["rope"][0], [7] * 300, [8] * 300, True)] * 3
    runs = run_many(jobs)
    # 180 rows of length 5 -> 128 + 52; one position -> 16 rows; no mask -> lengths 3 and 7 apart, each
    # filled up to 8 rows; 12 rows of 300 positions -> at most 2048 // 300 = 6 a batch, so 8, then 4 filled to 8.
    assert sorted(shapes) == sorted([(128, 5), (52, 5), (16, 1), (8, 3), (8, 7), (8, 300), (8, 300)])
    assert all(MIN_ROWS <= rows <= MAX_ROWS and rows * T >= MIN_POSITIONS for rows, T in shapes)
    assert all(len(r) == 4 for r in runs)  # every job got its four rows back
    assert runs[0][1, True].attention[0].shape == (model.config.n_head, 1, 1)


@pytest.mark.slow
def test_long_lines_are_answered_in_groups_of_bounded_memory(registry, monkeypatch):
    jobs_per_call = []
    real = compare_service.run_many

    def recording(jobs):
        jobs_per_call.append(len({id(job[1]) for job in jobs}))  # requests in this call
        return real(jobs)

    monkeypatch.setattr(compare_service, "run_many", recording)
    long_ones = [CompareRequest(line_a=(LONG * 2)[:k], line_b=LONG[:k // 2], position="rope") for k in (300, 250, 200)]
    short_ones = [CompareRequest(line_a="床前明月光", line_b=s) for s in ("疑是地上霜", "举头望明月", "低头思故乡")]
    answers = compare_many(long_ones + short_ones, registry)
    # 300^2 + 250^2 is over 32 * 64^2, 250^2 + 200^2 (+ 3 x 5^2) is not: the short ones join the second group.
    assert jobs_per_call == [1, 5]
    assert all(encode(a.answer) == encode(compare(r, registry)) for a, r in zip(answers, long_ones + short_ones))


def test_a_row_is_bitwise_the_same_in_any_batch_from_the_minimum_up(registry):
    """The measurement the batching rests on: one row's every output, beside 7 to 127 other rows."""
    gen = torch.Generator().manual_seed(0)
    for model in (registry.trained["learned"][0], registry.random("rope", 3, 8, 0)):
        for T in (1, 2, 5, 9):
            rows = torch.randint(0, registry.tokenizer.vocab_size, (MAX_ROWS, T), generator=gen)
            flags = torch.rand(MAX_ROWS, generator=gen) < 0.5
            at = torch.randint(0, T, (MAX_ROWS,), generator=gen)
            outputs = []
            for n in sorted({max(MIN_ROWS, -(-MIN_POSITIONS // T)), 17, 40, MAX_ROWS}):
                with torch.inference_mode():
                    tr = model.trace(rows[:n], use_position=flags[:n], causal=True, logits_at=at[:n])
                outputs.append([tr.logits[0], tr.embedding[0], *(a[0] for a in tr.attention),
                                *(x[0] for x in tr.residual)])
            for other in outputs[1:]:
                assert all(torch.equal(a, b) for a, b in zip(outputs[0], other)), (model.config, T)


def test_batcher_answers_each_item_alone_and_bounds_its_batches():
    batches = []

    def run_many_doubles(items):
        batches.append(len(items))
        return [ValueError(f"no {i}") if i == 13 else {"twice": 2 * i} for i in items]

    async def burst():
        batcher = Batcher(run_many_doubles, limiter=None, max_size=16, max_wait=0.002)
        results = await asyncio.gather(*(batcher.submit(i) for i in range(100)), return_exceptions=True)
        return batcher, results

    batcher, results = asyncio.run(burst())
    assert results[13].args == ("no 13",)
    assert [r for i, r in enumerate(results) if i != 13] == [encode({"twice": 2 * i}) for i in range(100) if i != 13]
    assert sum(batches) == 100 and max(batches) == 16 and len(batches) == 7
    assert batcher.sizes == {16: 6, 4: 1}


def test_a_batch_holds_one_key_and_is_answered_before_the_next_batch_runs():
    calls, evens_answered = [], threading.Event()

    def run_many(items):
        calls.append(list(items))
        if len(calls) == 2:  # blocks until the first batch's requests have their answers
            assert evens_answered.wait(5), "the first batch's answers waited for the next batch"
        return items

    async def burst():
        batcher = Batcher(run_many, limiter=None, max_size=3, max_wait=0.002, key=lambda i: i % 2)
        tasks = [asyncio.ensure_future(batcher.submit(i)) for i in range(7)]  # queued in this order
        first = await asyncio.gather(*tasks[0:6:2])
        evens_answered.set()
        return first, await asyncio.gather(*tasks[1::2], tasks[6])

    first, rest = asyncio.run(burst())
    assert first == [b"0", b"2", b"4"] and rest == [b"1", b"3", b"5", b"6"]
    # The oldest item's key first, at most 3 at a time; 6 waits for the next even batch.
    assert calls == [[0, 2, 4], [1, 3, 5], [6]]


def test_a_batch_that_fails_as_a_whole_fails_each_of_its_requests_and_the_next_batch_runs():
    calls = []

    def run_many_fails_once(items):
        calls.append(list(items))
        if len(calls) == 1:
            raise RuntimeError("out of memory")
        return items

    async def two_bursts():
        batcher = Batcher(run_many_fails_once, limiter=None, max_size=8, max_wait=0)
        first = await asyncio.gather(*(batcher.submit(i) for i in range(3)), return_exceptions=True)
        second = await asyncio.gather(*(batcher.submit(i) for i in range(3)))
        return first, second

    first, second = asyncio.run(two_bursts())
    assert [type(e) for e in first] == [RuntimeError] * 3
    assert second == [b"0", b"1", b"2"] and calls == [[0, 1, 2], [0, 1, 2]]


@pytest.mark.slow
def test_concurrent_http_requests_are_batched_and_answered_as_alone(registry):
    positions = ("learned", "rope", "none")
    bodies = [{"line_a": "床前明月光"[: 1 + i % 5], "line_b": "疑是地上霜", "position": positions[i % 3], "seed": i}
              for i in range(36)] + [{"line_a": "x" * 129}]
    app = app_on_shipped_models(Settings(batch_wait_ms=20))

    async def burst():
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
                responses = await asyncio.gather(*(client.post("/api/compare", json=b) for b in bodies))
                return responses, dict(app.state.batcher.sizes)

    responses, sizes = asyncio.run(burst())
    assert max(sizes) > 1 and sum(n * count for n, count in sizes.items()) == len(bodies)
    assert responses[-1].status_code == 422 and responses[-1].json()["detail"][0]["loc"] == ["body", "line_a"]
    for body, response in zip(bodies[:-1], responses):
        assert response.status_code == 200
        assert response.content == served_alone(CompareRequest(**body), registry), body


def test_batch_size_one_runs_each_request_alone(registry, monkeypatch):
    seen = []
    real = comparisons

    def recording(reqs, registry):
        seen.append(len(reqs))
        return real(reqs, registry)

    monkeypatch.setattr("app.main.comparisons", recording)
    app = app_on_shipped_models(Settings(batch_size=1, response_cache_size=0))

    async def burst():
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
                return await asyncio.gather(*(client.post("/api/compare", json={"seed": s, "weights": "random"})
                                              for s in range(5)))

    assert [r.status_code for r in asyncio.run(burst())] == [200] * 5
    assert seen == [1] * 5


def test_requests_share_a_batch_only_when_they_share_their_models(registry):
    calls = []

    def run_many(reqs):
        calls.append([(r.n_head, r.seed) for r in reqs])
        return [made.answer for made in compare_many(reqs, registry)]

    async def burst():
        batcher = Batcher(run_many, limiter=None, max_size=8, max_wait=0.002, key=batch_key)
        reqs = [CompareRequest(weights="random", n_head=h, seed=s) for h, s in ((1, 0), (4, 0), (1, 0), (4, 1), (4, 0))]
        return await asyncio.gather(*(batcher.submit(r) for r in reqs)), reqs

    answers, reqs = asyncio.run(burst())
    # The oldest request's key first; a head count or seed of its own is a batch of its own.
    assert calls == [[(1, 0), (1, 0)], [(4, 0), (4, 0)], [(4, 1)]]
    assert answers == [encode(compare(r, registry)) for r in reqs]
