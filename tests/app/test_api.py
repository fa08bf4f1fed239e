"""POST /api/compare and friends, checked against computations written out in the test."""

import math

import numpy as np
import pytest
import torch

from model import GPT, GPTConfig

LESSON = {"line_a": "白日依山尽", "line_b": "山依日白尽"}


def post(client, **body):
    return client.post("/api/compare", json={**LESSON, "weights": "random", **body})


def numpy_layer0_pattern(model: GPT, ids: list[int], use_position: bool = True) -> np.ndarray:
    """Layer 0's attention for a learned or none model, in float64 numpy from the raw weights."""
    sd = {k: v.double().numpy() for k, v in model.state_dict().items()}
    cfg = model.config
    x = sd["tok_emb.weight"][ids]
    if cfg.position == "learned" and use_position:
        x = x + sd["pos_emb.weight"][: len(ids)]
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    h = (x - mu) / np.sqrt(var + 1e-5) * sd["blocks.0.ln_1.weight"] + sd["blocks.0.ln_1.bias"]
    qkv = h @ sd["blocks.0.attn.qkv.weight"].T + sd["blocks.0.attn.qkv.bias"]
    C, hs, T = cfg.n_embd, cfg.head_dim, len(ids)
    patterns = []
    for head in range(cfg.n_head):
        q = qkv[:, head * hs : (head + 1) * hs]
        k = qkv[:, C + head * hs : C + (head + 1) * hs]
        s = q @ k.T / math.sqrt(hs)
        s[np.triu_indices(T, 1)] = -np.inf
        e = np.exp(s - s.max(-1, keepdims=True))
        patterns.append(e / e.sum(-1, keepdims=True))
    return np.stack(patterns)


def test_defaults_are_the_lesson_model(client):
    body = post(client).json()
    m = body["model"]
    assert (m["position"], m["n_layer"], m["n_head"], m["n_embd"], m["head_dim"]) == ("learned", 2, 4, 128, 32)
    assert body["shapes"] == {"q": [1, 5, 128], "heads": [1, 4, 5, 32], "scores": [1, 4, 5, 5]}
    assert {(p["qkv"], p["proj"]) for p in body["params"]} == {(128 * 384 + 384, 128 * 128 + 128)}
    assert [p["n_head"] for p in body["params"]] == [1, 2, 4, 8]
    assert body["rope"] is None


@pytest.mark.parametrize("position", ["learned", "none"])
def test_attention_equals_numpy_recomputation(client, registry, position):
    body = post(client, position=position, seed=3).json()
    model = GPT(GPTConfig(vocab_size=registry.tokenizer.vocab_size, n_layer=2, n_head=4, position=position), seed=3)
    for line in body["lines"]:
        assert line["tokens"] == list(line["text"])
        got = np.array(line["attention"])
        assert got.shape == (2, 4, 5, 5)
        np.testing.assert_allclose(got[0], numpy_layer0_pattern(model, line["ids"]), atol=2e-6)
        assert (np.triu(got, 1) == 0).all()
        np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-5)


def test_differences_and_top_next_match_the_model(client, registry):
    body = post(client, position="learned", seed=11).json()
    tok = registry.tokenizer
    model = GPT(GPTConfig(vocab_size=tok.vocab_size, n_layer=2, n_head=4), seed=11).eval()
    with torch.no_grad():
        for flag, key in ((True, "with_position"), (False, "without_position")):
            a = model(torch.tensor([tok.encode(LESSON["line_a"])]), use_position=flag)[0][0, -1].double()
            b = model(torch.tensor([tok.encode(LESSON["line_b"])]), use_position=flag)[0][0, -1].double()
            assert body["difference"][key]["max_abs"] == pytest.approx((a - b).abs().max().item(), rel=1e-3, abs=1e-6)
            assert body["difference"][key]["l2"] == pytest.approx((a - b).norm().item(), rel=1e-3, abs=1e-6)
        probs = torch.softmax(model(torch.tensor([tok.encode(LESSON["line_a"])]))[0][0, -1].double(), -1)
    top = body["lines"][0]["top_next"]
    assert len(top) == 5
    assert [t["prob"] for t in top] == sorted((t["prob"] for t in top), reverse=True)
    values, indices = probs.topk(5)
    assert [t["token"] for t in top] == [tok.token(i) for i in indices.tolist()]
    np.testing.assert_allclose([t["prob"] for t in top], values.numpy(), rtol=1e-4)


def test_by_depth_is_the_lessons_table(client):
    rows = post(client, position="none").json()["by_depth"]
    assert [r["n_layer"] for r in rows] == [1, 2, 3]
    assert rows[0]["without_position"]["max_abs"] < 1e-5  # rounding only
    assert rows[1]["without_position"]["max_abs"] > 1e-4  # the causal mask leaks order
    assert rows[2]["without_position"]["max_abs"] > 1e-4
    learned = post(client, position="learned").json()["by_depth"]
    assert learned[0]["with_position"]["max_abs"] > 1e-4
    # The model asked for is 2 layers deep: its difference is the table's second row.
    body = post(client, position="rope", n_layer=2).json()
    assert body["by_depth"][1]["with_position"] == pytest.approx(body["difference"]["with_position"], rel=1e-5)


def test_causal_false_makes_the_model_blind_to_order_at_every_depth(client):
    body = post(client, position="none", causal=False).json()
    assert body["model"]["causal"] is False
    for row in body["by_depth"]:
        assert row["without_position"]["max_abs"] < 1e-5
        assert row["with_position"]["max_abs"] < 1e-5
    pattern = np.array(body["lines"][0]["attention"])
    above = np.triu_indices(5, 1)
    assert (pattern[..., above[0], above[1]] > 0).all()  # full attention: no masked cell


def test_residual_difference_per_layer_and_position(client):
    body = post(client, position="none", n_layer=3).json()
    res = body["residual_difference"]["without_position"]
    assert np.array(res).shape == (4, 5)  # embeddings + 3 blocks, 5 positions
    # Same last character and no positions: layer 0 and block 1 cannot tell the last position apart.
    assert res[0][4] == 0.0 and res[1][4] < 1e-5
    assert res[3][4] > 1e-4
    assert post(client, line_a="白日依山").json()["residual_difference"] is None


def test_rope_table_follows_the_formula(client):
    body = post(client, position="rope", line_b="山依日白尽明月").json()
    rope = body["rope"]
    assert rope["head_dim"] == 32 and rope["base"] == 10000.0
    assert len(rope["angles"]) == 7 and len(rope["theta"]) == 16
    for p, row in enumerate(rope["angles"]):
        for i, angle in enumerate(row):
            assert angle == pytest.approx(p * 10000 ** (-2 * i / 32), rel=1e-12, abs=1e-15)


def test_unknown_characters_are_accepted_and_flagged(client):
    body = post(client, line_a="白☃😀", line_b="ab").json()
    assert body["lines"][0]["unknown"] == [False, True, True]
    assert body["lines"][0]["ids"][1:] == [0, 0]
    assert body["lines"][0]["tokens"] == ["白", "☃", "😀"]


def test_same_request_same_numbers(client):
    first = post(client, position="rope", seed=5, n_head=8).json()
    assert post(client, position="rope", seed=5, n_head=8).json() == first
    assert post(client, position="rope", seed=6, n_head=8).json() != first
    assert np.array(first["lines"][0]["attention"]).shape == (2, 8, 5, 5)


@pytest.mark.parametrize("position", ["learned", "none"])
def test_attention_without_position_is_the_blind_run(client, registry, position):
    body = post(client, position=position, seed=3).json()
    model = GPT(GPTConfig(vocab_size=registry.tokenizer.vocab_size, n_layer=2, n_head=4, position=position), seed=3)
    for line in body["lines"]:
        seen, blind = np.array(line["attention"]), np.array(line["attention_without_position"])
        assert blind.shape == seen.shape == (2, 4, 5, 5)
        np.testing.assert_allclose(blind[0], numpy_layer0_pattern(model, line["ids"], use_position=False), atol=2e-6)
        if position == "none":  # nothing to remove: the two runs are the same computation
            assert (blind == seen).all()
        else:
            assert np.abs(blind - seen).max() > 1e-3


def test_attention_without_position_can_be_left_out(client):
    full, lean = post(client).json(), post(client, attention_without_position=False).json()
    for a, b in zip(full["lines"], lean["lines"]):
        assert b["attention_without_position"] is None and a["attention_without_position"] is not None
        assert a["attention"] == b["attention"]


def test_errors_carry_type_and_rule_values_but_never_the_input(client):
    long_line = "白" * 600
    r = post(client, line_a=long_line, position="rope", n_layer=9, line_b="")
    assert r.status_code == 422
    detail = {d["loc"][-1]: d for d in r.json()["detail"]}
    assert detail["line_a"]["type"] == "string_too_long" and detail["line_a"]["ctx"] == {"max_length": 512}
    assert detail["line_b"]["type"] == "string_too_short" and detail["line_b"]["ctx"] == {"min_length": 1}
    assert detail["n_layer"]["type"] == "less_than_equal" and detail["n_layer"]["ctx"] == {"le": 4}
    assert "白白白" not in r.text and "input" not in r.text


@pytest.mark.parametrize("body, field, words", [
    ({"line_a": ""}, "line_a", "at least 1"),
    ({"line_b": "白" * 129}, "line_b", "128 rows"),
    ({"line_a": "白" * 513, "position": "rope"}, "line_a", "512"),
    ({"n_head": 3}, "n_head", "divide"),
    ({"n_head": 16}, "n_head", "divide"),
    ({"position": "sinusoidal"}, "position", "'learned', 'rope' or 'none'"),
    ({"weights": "pretrained"}, "weights", "'random' or 'trained'"),
    ({"n_layer": 0}, "n_layer", "greater than or equal to 1"),
    ({"n_layer": 5}, "n_layer", "less than or equal to 4"),
    ({"seed": -1}, "seed", "greater than or equal to 0"),
    ({"line_a": 5}, "line_a", "string"),
    ({"causal": "maybe"}, "causal", "boolean"),
    ({"colour": "red"}, "colour", "not permitted"),
])
def test_bad_input_names_the_field_and_the_rule(client, body, field, words):
    r = post(client, **body)
    assert r.status_code == 422
    detail = r.json()["detail"]
    assert any(d["loc"][-1] == field and words in d["msg"] for d in detail), detail


def test_learned_accepts_128_and_rope_none_accept_longer(client):
    assert post(client, line_a="白" * 128).status_code == 200
    for position in ("rope", "none"):
        assert post(client, position=position, line_a="白日" * 100).status_code == 200


def test_non_json_and_huge_bodies(client):
    r = client.post("/api/compare", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"][0]["type"] == "json_invalid"
    r = client.post("/api/compare", content=b"[" + b"1," * 40000 + b"1]", headers={"content-type": "application/json"})
    assert r.status_code == 413 and "65536" in r.json()["detail"]
    r = client.post("/api/compare", json=[1, 2])
    assert r.status_code == 422


def test_health_ready_options_docs(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json()["status"] == "ready"
    options = client.get("/api/options").json()
    assert options["max_chars"] == {"learned": 128, "rope": 512, "none": 512}
    assert options["n_head"] == [1, 2, 4, 8]
    assert options["random"] == {"n_layer": 2, "n_head": 4}
    assert options["trained"]["rope"]["n_head"] == 4
    schema = client.get("/openapi.json").json()
    ours = {name: body for name, body in schema["components"]["schemas"].items()
            if name not in ("HTTPValidationError", "ValidationError")}  # FastAPI's own
    undescribed = [f"{name}.{prop}" for name, body in ours.items()
                   for prop, spec in body.get("properties", {}).items() if not spec.get("description")]
    assert not undescribed, "/docs must describe every field"
    assert "/api/compare" in schema["paths"]
    assert client.get("/docs").status_code == 200


def test_security_headers_and_request_id(client):
    r = client.get("/healthz")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert "unsafe-eval" not in r.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"
    assert len(r.headers["x-request-id"]) == 16


def test_layer_keeps_one_layers_maps(client):
    full = post(client, position="rope", n_layer=3).json()
    assert full["attention_layers"] == [1, 2, 3]
    one = post(client, position="rope", n_layer=3, layer=2).json()
    assert one["attention_layers"] == [2]
    assert one["lines"][0]["attention"] == [full["lines"][0]["attention"][1]]
    r = post(client, n_layer=2, layer=3)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"][-1] == "layer"


@pytest.mark.parametrize("position", ["learned", "rope", "none"])
def test_trained_weights_are_the_default_and_predict(client, position):
    body = client.post("/api/compare", json={**LESSON, "position": position}).json()
    m = body["model"]
    assert (m["weights"], m["n_layer"], m["n_head"], m["seed"]) == ("trained", 2, 4, None)
    # After a five-character line, a Tang poem goes on with a comma: the trained model has learnt it,
    # where the untrained one spreads its bets over 4,001 ids (each well under 1%).
    top = body["lines"][0]["top_next"][0]
    assert top["token"] == "，" and top["prob"] > 0.3
    assert post(client, position=position).json()["lines"][0]["top_next"][0]["prob"] < 0.01


def test_trained_weights_refuse_another_shape(client):
    r = client.post("/api/compare", json={"weights": "trained", "n_head": 8})
    assert r.status_code == 422
    detail = r.json()["detail"][0]
    assert detail["loc"][-1] == "n_head" and "n_layer 2 and n_head 4" in detail["msg"]
    assert client.post("/api/compare", json={"weights": "trained", "n_head": 4, "n_layer": 2}).status_code == 200
