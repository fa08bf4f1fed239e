"""float32 decides a gap real only far above its own error; float64 reruns of single lines are the same in any
batch; a verdict after its comparison runs no float32 pass again (app/services/gaps.py, twins.py)."""

import json
import random

import numpy as np
import pytest
import torch

from app.pipeline.encoding import encode
from app.schemas.compare import CompareRequest
from app.services.alignment import alignment
from app.services.compare import WITH, WITHOUT, run_many
from app.services.gaps import (
    FLOAT32_DECIDES,
    FLOAT32_DECIDES_WEIGHTS,
    REL_ROUNDING,
    aligned_gaps,
    aligned_of,
    gap_of,
    last_gap,
)
from app.services.twins import LineKey, Twins
from app.services.verdicts import compare_verdict, verdict
from model import GPT

CHARS = "白日依山尽黄河入海流欲穷千里目更上一层楼床前明月光疑是地霜举头望低思故乡春眠不觉晓处闻啼鸟"
PAIRS = [("白日依山尽", "山依日白尽"), ("我打你", "你打我"), ("白日尽", "白白日日尽尽"), ("春眠不觉晓", "处处闻啼鸟"),
         ("日日白尽", "白日日尽"), ("白日", "白日依山尽"), ("尽", "白尽"), ("a白日尽", "日a白尽")]


def random_pairs(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        a = "".join(rng.choice(CHARS) for _ in range(rng.randint(1, 12)))
        pairs += [(a, "".join(rng.sample(a, len(a)))), (a, a[:-1] + rng.choice(CHARS))]
    return pairs


def models(registry, depths, heads):
    return [registry.random(p, n, h, 0) for p in ("learned", "rope", "none") for n in depths for h in heads] + \
        [registry.trained[p][0] for p in ("learned", "rope", "none")]


def worst_float32_error(registry, models_, pairs) -> tuple[float, float]:
    """The largest |float32 gap − float64 gap| / largest |logit|, and the largest aligned last-row error, over
    every model, mask, flag and pair."""
    worst, worst_aligned = 0.0, 0.0
    tok = registry.tokenizer
    for model in models_:
        for causal in (True, False):
            for a, b in pairs:
                ids_a, ids_b = tok.encode(a), tok.encode(b)
                runs = run_many([(model, ids_a, ids_b, causal)])[0]
                order = alignment(ids_a, ids_b)
                for flag in (WITH, WITHOUT):
                    keys = [LineKey(model, ids, causal, flag) for ids in (ids_a, ids_b)]
                    line_a, line_b = registry.twins.lines64(keys)
                    exact = gap_of(line_a.last_logits, line_b.last_logits)
                    worst = max(worst, abs(last_gap(runs, flag).gap - exact.gap) / exact.scale)
                    if order is not None:
                        errors = np.subtract(aligned_gaps(runs, order, flag),
                                             aligned_of(line_a.last_rows, line_b.last_rows, order))
                        worst_aligned = max(worst_aligned, float(np.abs(errors).max()))
    return worst, worst_aligned


def test_float32_decides_only_a_hundred_times_above_its_own_error(registry):
    """A float32 gap over FLOAT32_DECIDES of the largest |logit| is real: float32's own error stays 100 times
    under that, so the float64 gap is then at least 0.99e-4 of it, far above the rounding line (1e-9). The same
    for the aligned attention rows and FLOAT32_DECIDES_WEIGHTS."""
    worst, worst_aligned = worst_float32_error(registry, models(registry, (1, 2), (4,)), PAIRS[:5])
    assert worst < FLOAT32_DECIDES / 100 and worst_aligned < FLOAT32_DECIDES_WEIGHTS / 100, (worst, worst_aligned)
    assert worst > 100 * REL_ROUNDING, "float32 does round: this measures it"


@pytest.mark.slow  # every mode, depth and head count, 48 pairs
def test_float32_error_margin_at_every_setup(registry):
    worst, worst_aligned = worst_float32_error(registry, models(registry, (1, 2, 3, 4), (1, 4, 8)),
                                               PAIRS + random_pairs(20, seed=1))
    assert worst < FLOAT32_DECIDES / 100 and worst_aligned < FLOAT32_DECIDES_WEIGHTS / 100, (worst, worst_aligned)


def test_a_float64_line_is_bitwise_the_same_beside_any_others(registry):
    tok = registry.tokenizer
    rng = random.Random(0)
    for model in (registry.trained["rope"][0], registry.random("learned", 3, 8, 0)):
        line = tok.encode("白日依山尽")
        alone = Twins().lines64([LineKey(model, line, True, True)])[0]  # nothing kept: every call runs
        for crowd in (3, 20, 200):
            # Lines of 1 to 8 characters: one batch, padded to 8 positions.
            others = [LineKey(model, [rng.randrange(tok.vocab_size) for _ in range(rng.randint(1, 8))], True,
                              rng.random() < 0.5) for _ in range(crowd)]
            beside = Twins().lines64(others[:crowd // 2] + [LineKey(model, line, True, True)] + others[crowd // 2:])
            got = beside[crowd // 2]
            assert np.array_equal(got.last_logits, alone.last_logits)
            assert all(np.array_equal(x, y) for x, y in zip(got.last_rows, alone.last_rows))


def count_traces(monkeypatch) -> list[torch.dtype]:
    """Every model pass from now on, by its weights' dtype."""
    passes = []
    trace = GPT.trace

    def counted(self, *args, **kwargs):
        passes.append(self.lm_head.weight.dtype)
        return trace(self, *args, **kwargs)

    monkeypatch.setattr(GPT, "trace", counted)
    return passes


def test_the_explorers_verdict_after_its_comparison_runs_no_model(client, registry, monkeypatch):
    body = {"line_a": "床前明月光", "line_b": "疑是地上霜举", "position": "learned"}
    assert client.post("/api/compare", json=body).status_code == 200
    passes = count_traces(monkeypatch)
    got = client.post("/api/compare/verdict", json=body)
    assert got.status_code == 200 and passes == [], passes
    judged = got.json()
    assert judged["difference"]["with_position"]["difference"] == "real"
    assert judged["difference"]["with_position"]["gap64"] is None  # float32 decided
    # Alone (no comparison before it) the verdict runs the float32 pass itself, and says the same.
    alone = compare_verdict(CompareRequest(**body), registry)
    assert passes and all(dtype == torch.float32 for dtype in passes)
    assert json.loads(encode(alone)) == judged


@pytest.mark.parametrize("setup", [
    {"position": "learned"}, {"position": "rope"}, {"position": "none"},
    {"position": "learned", "weights": "random", "n_layer": 3, "n_head": 8, "causal": False},
    {"position": "rope", "weights": "random", "n_layer": 2, "n_head": 1, "seed": 3},
])
def test_the_comparison_carries_the_verdict_exactly_when_float32_decides_it(client, registry, setup):
    """/api/compare's `verdict` is the verdict computed alone (its own float32 pass, its own float64 reruns), byte for
    byte, for lines that differ (float32 decides every gap), and the verdict route then sends it; null where a gap
    needs the float64 rerun (a reordering's aligned rows, the same line twice), and the verdict route then answers
    from that rerun. Lines of other lengths and an unknown character included."""
    rng = random.Random(28)
    fresh = [("".join(rng.choice(CHARS) for _ in range(7)), "".join(rng.choice(CHARS) for _ in range(7)))
             for _ in range(4)] + [("白日依山尽", "黄河入海流欲穷"), ("a白日", "白日依山尽Q")]
    for a, b in fresh + [("白日依山尽", "山依日白尽"), ("白日依山尽", "白日依山尽")]:
        body = {"line_a": a, "line_b": b, **setup}
        carried = client.post("/api/compare", json=body).json()["verdict"]
        asked = client.post("/api/compare/verdict", json=body)
        assert asked.status_code == 200
        alone = json.loads(encode(compare_verdict(CompareRequest(**body), registry)))
        assert asked.json() == alone, (a, b)
        if (a, b) in fresh:
            assert carried == alone, (a, b)
        else:
            assert carried is None, (a, b)  # float32 cannot decide an aligned row that is rounding
            assert alone["aligned"] is not None


def test_a_rounding_gap_is_rerun_in_float64_only(client, monkeypatch):
    # A seed no other test asks for: this verdict is not in the response cache yet.
    body = {"line_a": "白日依山尽", "line_b": "山依日白尽", "position": "none", "weights": "random", "n_layer": 1,
            "seed": 28}
    answer = client.post("/api/compare", json=body).json()
    monkeypatch.setattr(client.app.state.registry, "twins", Twins())  # no float64 line kept from another test
    passes = count_traces(monkeypatch)
    judged = client.post("/api/compare/verdict", json=body).json()
    assert passes and all(dtype == torch.float64 for dtype in passes)
    gap = judged["difference"]["with_position"]
    assert gap["difference"] == "rounding" and gap["gap64"] < gap["rounding_limit"]
    assert gap["gap"] == answer["difference"]["with_position"]["max_abs"]


def test_the_lessons_verdict_after_its_comparison_reruns_only_line_b_in_float64(client, monkeypatch):
    setup = {"position": "none", "weights": "random", "n_layer": 1, "n_head": 4}
    client.app.state.registry.twins = Twins()  # no float64 line kept from another test
    passes = {}
    for b in ("山依日白尽", "日白依山尽", "山依日白尽月"):
        client.post("/api/compare", json={"line_a": "白日依山尽", "line_b": b, "lesson_step": "order", **setup})
        passes[b] = count_traces(monkeypatch)
        got = client.post("/api/lesson/order/verdict",
                          json={"line_a": "白日依山尽", "line_b": b, "causal": True, **setup})
        assert got.status_code == 200
        monkeypatch.undo()
    # Line A's float64 runs were kept from the first verdict: line B alone, in float64, once. At one layer the last
    # position masks nothing, so the content control the reason is decided by (the mask off) is that same run.
    assert passes["日白依山尽"] == [torch.float64]
    # Not a reordering, and a gap float32 decides: no model runs at all, and the figures say float32 decided.
    assert passes["山依日白尽月"] == []
    figures = got.json()["figures"]
    assert "gap64" not in figures and figures["float32_limit"] == FLOAT32_DECIDES * figures["largest_logit"]
    assert figures["gap"] > figures["float32_limit"]
    assert got.json()["outcome"] == "different"


STEP_SETUPS = [
    ("order", {"position": "none", "weights": "random", "n_layer": 1, "n_head": 4}),
    ("leak", {"position": "none", "weights": "random", "n_layer": 2, "n_head": 4}),
    ("nomask", {"position": "none", "weights": "random", "n_layer": 2, "n_head": 4, "causal": False}),
    ("posemb", {"position": "learned", "weights": "trained"}),
    ("pair", {"position": "none", "weights": "trained"}),
    ("ex1", {"position": "rope", "weights": "random", "n_layer": 3, "n_head": 8}),
]


@pytest.mark.parametrize("step,setup", STEP_SETUPS)
def test_a_lesson_steps_comparison_carries_its_verdict_exactly_when_float32_decides_it(client, registry, step, setup):
    """With lesson_step, /api/compare's `step_verdict` is the step's verdict computed alone (its own float32 pass and
    float64 rerun), for lines that are not a reordering of each other; null for a reordering and the same line twice,
    which the verdict route then decides in float64. The verdict route answers the same in every case."""
    rng = random.Random(step)
    fresh = [("".join(rng.choice(CHARS) for _ in range(7)), "".join(rng.choice(CHARS) for _ in range(5)))
             for _ in range(3)] + [("白日依山尽", "黄河入海流欲穷"), ("a白日", "白日依山尽Q")]
    for a, b in fresh + [("白日依山尽", "山依日白尽"), ("白日依山尽", "白日依山尽")]:
        body = {"line_a": a, "line_b": b, "causal": setup.get("causal", True), **setup}
        answer = client.post("/api/compare", json={**body, "lesson_step": step})
        assert answer.status_code == 200
        fields = {"line_a": a, "line_b": b, **{k: v for k, v in body.items() if k not in ("line_a", "line_b")}}
        alone = json.loads(encode(verdict(step, fields, registry)))
        asked = client.post(f"/api/lesson/{step}/verdict", json=fields)
        assert asked.status_code == 200 and asked.json() == alone, (step, a, b)
        if (a, b) in fresh:
            assert answer.json()["step_verdict"] == alone, (step, a, b)
            assert "float32_limit" in alone["figures"]
        else:
            assert answer.json()["step_verdict"] is None, (step, a, b)
        # The explorer's verdict rides along as without lesson_step.
        assert answer.json()["verdict"] == client.post("/api/compare", json=body).json()["verdict"]


def test_a_comparison_that_is_not_the_steps_setup_carries_no_step_verdict(client, registry):
    """The step's verdict is on the step's own model (seed 0, the step's depth): a comparison on another seed, or
    with the depth left to the weights' default, measured another model and carries none; the route answers."""
    lines = {"line_a": "床前明月光", "line_b": "疑是地上霜"}
    for other in ({"weights": "random", "n_layer": 2, "n_head": 4, "seed": 5},
                  {"weights": "random", "n_head": 4}):
        body = {**lines, "position": "none", "lesson_step": "leak", **other}
        answer = client.post("/api/compare", json=body)
        assert answer.status_code == 200 and answer.json()["step_verdict"] is None
    asked = client.post("/api/lesson/leak/verdict", json={**lines, "position": "none", "weights": "random",
                                                         "n_head": 4})
    assert asked.json()["outcome"] == "different" and asked.json()["figures"]["n_layer"] == 2  # the step's depth


@pytest.mark.parametrize("step", ["limit", "heads", "", 1, "ORDER"])
def test_a_lesson_step_without_a_gap_verdict_is_refused_by_name(client, step):
    got = client.post("/api/compare", json={"line_a": "白日", "line_b": "日白", "lesson_step": step})
    assert got.status_code == 422
    assert "lesson_step" in got.text and "order" in got.text and "ex1" in got.text
