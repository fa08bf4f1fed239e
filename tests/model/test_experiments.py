import pytest
import torch

from model import CharTokenizer
from model.experiments import head_split, order_sensitivity


def test_head_split_matches_the_lesson():
    report = head_split()
    assert report["shapes"] == {"q": [1, 5, 32], "heads": [1, 4, 5, 8], "scores": [1, 4, 5, 5]}
    assert report["params"] == [{"n_head": h, "qkv": 3168, "proj": 1056} for h in (1, 2, 4, 8)]


def test_parameter_counts_do_not_depend_on_heads_at_128():
    counts = {(p["qkv"], p["proj"]) for p in head_split(n_embd=128)["params"]}
    assert counts == {(128 * 384 + 384, 128 * 128 + 128)}


def test_order_sensitivity_reproduces_the_lesson_table():
    tok = CharTokenizer.from_text("白日依山尽黄河入海流")
    rows = order_sensitivity(tok, position="learned", seed=0)
    assert [r["n_layer"] for r in rows] == [1, 2, 3]
    assert rows[0]["without_position"]["max_abs"] < 1e-5
    assert rows[0]["with_position"]["max_abs"] > 1e-5
    assert rows[1]["without_position"]["max_abs"] > 1e-4
    assert rows[2]["without_position"]["max_abs"] > 1e-4
    # The L2 norm is the norm of the same difference vector, so never below max |a-b|.
    for r in rows:
        assert r["with_position"]["l2"] >= r["with_position"]["max_abs"]


def test_same_seed_same_numbers():
    tok = CharTokenizer.from_text("白日依山尽")
    torch.manual_seed(5)
    first = order_sensitivity(tok, position="rope", seed=3)
    torch.manual_seed(6)
    assert order_sensitivity(tok, position="rope", seed=3) == first


def test_pair_scores_depend_on_distance_under_rope_not_under_learned():
    from model import GPT, GPTConfig
    from model.probes import pair_scores

    starts = [0, 7, 30, 100]
    rope = GPT(GPTConfig(vocab_size=10, n_layer=2, position="rope"), seed=1).eval()
    learned = GPT(GPTConfig(vocab_size=10, n_layer=2, position="learned"), seed=1).eval()
    scores = pair_scores(rope, 3, 4, starts)
    assert scores.shape == (2, 4, 4)
    torch.testing.assert_close(scores, scores[..., :1].expand_as(scores), rtol=1e-4, atol=1e-5)
    scores = pair_scores(learned, 3, 4, starts)
    assert (scores.max(-1).values - scores.min(-1).values).abs().max() > 1e-4


def test_rope_similarity_is_a_function_of_distance():
    import math

    from model.probes import rope_similarity

    sim = rope_similarity(40, 32, 10000.0)
    for m, n in [(0, 0), (5, 2), (30, 1), (2, 39)]:
        expected = sum(math.cos((m - n) * 10000 ** (-2 * i / 32)) for i in range(16)) / 16
        assert sim[m, n].item() == pytest.approx(expected, abs=1e-12)
