"""GET /api/rope, POST /api/relative, GET /api/positions against the formulas."""

import json
import math

import numpy as np
import pytest


def test_rope_angles_follow_the_formula(client):
    body = client.get("/api/rope?positions=0,1,2,100&head_dim=32&base=10000").json()
    assert body["positions"] == [0, 1, 2, 100]
    assert len(body["theta"]) == 16
    for p, row in zip(body["positions"], body["angles"]):
        for i, angle in enumerate(row):
            assert angle == pytest.approx(p * 10000 ** (-2 * i / 32), rel=1e-12, abs=1e-300)
    other = client.get("/api/rope?positions=3&head_dim=8&base=500").json()
    assert other["theta"] == pytest.approx([500 ** (-2 * i / 8) for i in range(4)], rel=1e-12)


@pytest.mark.parametrize("query, field, words", [
    ("head_dim=7", "head_dim", "multiple of 2"),
    ("head_dim=2048", "head_dim", "1024"),
    ("positions=" + ",".join(["1"] * 4097), "positions", "4096"),
    ("positions=1,x", "positions", "whole numbers"),
    ("base=1", "base", "greater than 1"),
])
def test_rope_query_is_validated(client, query, field, words):
    r = client.get(f"/api/rope?{query}")
    assert r.status_code == 422
    assert any(d["loc"][-1] == field and words in d["msg"] for d in r.json()["detail"]), r.json()


@pytest.mark.parametrize("weights", ["random", "trained"])
def test_relative_scores_equal_under_rope_different_under_learned(client, weights):
    r = client.post("/api/relative", json={"first": "明", "second": "月", "weights": weights})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["starts"][0] == 0 and body["starts"][-1] + 1 <= 127
    rope, learned, none = (np.array(body["scores"][m]) for m in ("rope", "learned", "none"))
    assert rope.shape[-1] == len(body["starts"])
    assert np.ptp(rope, axis=-1).max() < 1e-4  # only the distance matters
    assert np.ptp(none, axis=-1).max() < 1e-4  # no position information at all
    assert np.ptp(learned, axis=-1).max() > 1e-3  # absolute positions change the score


def test_relative_rejects_two_characters_in_one_field(client):
    r = client.post("/api/relative", json={"first": "明月"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "first"


def test_position_similarity(client, registry):
    body = client.get("/api/positions").json()
    rope = np.array(body["rope"])
    assert rope.shape == (128, 128)
    np.testing.assert_allclose(np.diag(rope), 1.0, atol=1e-6)
    expected = sum(math.cos(3 * 10000 ** (-2 * i / 32)) for i in range(16)) / 16
    assert rope[10, 13] == pytest.approx(expected, abs=1e-6)
    learned = np.array(body["learned"])
    table = registry.trained["learned"][0].pos_emb.weight.detach().double().numpy()
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    np.testing.assert_allclose(learned, unit @ unit.T, atol=1e-5)
    # The rhythm: mean similarity of rows lag apart, and the most alike lag from 3 up.
    sim = unit @ unit.T
    by_lag = [np.mean([sim[i, i + lag] for i in range(128 - lag)]) for lag in range(65)]
    rhythm = body["learned_rhythm"]
    np.testing.assert_allclose(rhythm["by_lag"], by_lag, atol=1e-9)
    assert rhythm["period"] == 3 + int(np.argmax(by_lag[3:]))
    # Our trained table: a couplet of two five-character lines and their marks is 12 characters long.
    assert rhythm["period"] == 12
    # The runner-up the page names beside it: the most alike lag from 3 up after the period.
    rest = [lag for lag in range(3, 65) if lag != rhythm["period"]]
    assert rhythm["min_lag"] == 3 and rhythm["next_lag"] == max(rest, key=lambda lag: by_lag[lag])
    assert rhythm["at_next_lag"] == pytest.approx(by_lag[rhythm["next_lag"]], abs=1e-9)


def test_training_names_the_runs_of_each_exercise_in_the_order_they_are_compared(client):
    body = client.get("/api/training").json()
    heads = [body["runs"][i] for i in body["exercises"]["heads"]]
    modes = [body["runs"][i] for i in body["exercises"]["modes"]]
    assert [(r["position"], r["n_head"]) for r in heads] == [("learned", 1), ("learned", 4), ("learned", 8)]
    assert [(r["position"], r["n_head"]) for r in modes] == [("learned", 4), ("rope", 4), ("none", 4)]
    # The lesson's exercises order the same runs (the verdict's figures name each run once).
    for step, key in (("ex2", "heads"), ("ex3", "modes")):
        figures = client.post(f"/api/lesson/{step}/verdict", json={}).json()["figures"]
        names = [str(r["n_head"]) if key == "heads" else r["position"] for r in (heads if key == "heads" else modes)]
        assert sorted(k.removeprefix("loss_") for k in figures if k.startswith("loss_")) == sorted(names)


def test_the_length_verdict_carries_the_means_the_page_words(client):
    length = {r["position"]: r for r in client.get("/api/length").json()["runs"]}
    figures = client.post("/api/lesson/length/verdict", json={}).json()["figures"]
    for prefix, run in (("", length["rope"]), ("none_", length["none"])):
        n = run["train_length"]
        assert figures[f"{prefix}before"] == pytest.approx(np.mean(run["loss"][:n]), abs=1e-12)
        assert figures[f"{prefix}after"] == pytest.approx(np.mean(run["loss"][n:]), abs=1e-12)


def test_training_and_length_results_are_served(client):
    runs = client.get("/api/training").json()["runs"]
    assert {(r["position"], r["n_head"]) for r in runs} >= {("learned", 1), ("learned", 4), ("learned", 8),
                                                            ("rope", 4), ("none", 4)}
    for r in runs:
        assert len(r["steps"]) == len(r["val_loss"]) and r["steps"][-1] >= 1000
        assert r["val_loss"][-1] < 6.0 < 6.6  # well below the unigram entropy, 6.6 nats
    length = {r["position"]: r for r in client.get("/api/length").json()["runs"]}
    assert (length["learned"]["length"], length["rope"]["length"], length["none"]["length"]) == (128, 256, 256)
    assert all(len(r["loss"]) == r["length"] for r in length.values())


def test_heads_serves_the_shipped_head_statistics(client):
    from model.assets import WEIGHTS_DIR

    response = client.get("/api/heads")
    assert response.status_code == 200
    data = response.json()
    shipped = json.loads((WEIGHTS_DIR / "heads.json").read_text(encoding="utf-8"))
    training = json.loads((WEIGHTS_DIR / "training.json").read_text(encoding="utf-8"))["runs"]
    final_loss = {r["position"]: r["final_val_loss"] for r in training if r["n_head"] == 4}
    # heads.json's figures, with the shipped run's final validation loss beside them
    assert [{k: v for k, v in m.items() if k != "val_loss"} for m in data["models"]] == shipped["models"]
    assert [m["val_loss"] for m in data["models"]] == [final_loss[m["position"]] for m in shipped["models"]]
    assert data["max_offset"] == 16 and data["step"] == 10000
    for m in data["models"]:
        assert [len(layer["heads"]) for layer in m["layers"]] == [4, 4]
        for head in (h for layer in m["layers"] for h in layer["heads"]):
            assert len(head["by_offset"]) == 17 and 0 < sum(head["by_offset"]) <= 1 + 1e-9
            assert head["role"]["kind"] in {"spread", "mostly", "largest", "broad"}
