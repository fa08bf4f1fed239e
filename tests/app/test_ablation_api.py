"""POST /api/ablate against an independent computation, its 422s, and its answers' bytes among others."""

import asyncio

import httpx
import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from shipped_models import app_on_shipped_models

from app.schemas.ablation import AblateRequest
from app.services.ablation import OffHeadError, heads_off_mask
from app.settings import Settings
from model import GPT, GPTConfig
from model.assets import WEIGHTS_DIR, checkpoint_path
from model.checkpoint import load_checkpoint
from model.tokenizer import CharTokenizer

LINE = "白日依山尽，黄河入海流。欲穷千里目，更上一层楼。"


def hooked_run(model, ids, off):
    """The issue's independent computation: a forward pre-hook zeroes each off head's slice of proj's
    input, on a model of its own loaded from the same file, the line run alone. -> (loss (T-1,), probs (T, V))."""
    hs = model.config.n_embd // model.config.n_head
    handles = []
    for layer, head in off:
        def zero(module, args, head=head):
            y = args[0].clone()
            y[..., (head - 1) * hs:head * hs] = 0.0
            return (y,)
        handles.append(model.blocks[layer - 1].attn.proj.register_forward_pre_hook(zero))
    try:
        with torch.no_grad():
            logits = model.trace(torch.tensor([ids])).logits[0].double()
    finally:
        for h in handles:
            h.remove()
    logp = logits.log_softmax(-1)
    return -logp[:-1].gather(1, torch.tensor(ids[1:])[:, None])[:, 0], logp.exp()


@pytest.fixture(scope="module")
def tokenizer():
    return CharTokenizer.load(WEIGHTS_DIR / "vocab.json")


@pytest.mark.parametrize("position,off", [("learned", [(1, 2)]), ("rope", [(2, 1), (1, 4)]), ("none", [(1, 1)])])
def test_losses_and_predictions_equal_a_hook_on_proj(client, tokenizer, position, off):
    body = {"line": LINE, "position": position, "off": [{"layer": la, "head": h} for la, h in off]}
    r = client.post("/api/ablate", json=body)
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["off"] == [{"layer": la, "head": h} for la, h in sorted(off)]
    assert sum(map(sum, got["heads_off"])) == len(off) and all(got["heads_off"][la - 1][h - 1] for la, h in off)
    model, _, _ = load_checkpoint(checkpoint_path(position))
    ids = list(tokenizer.encode(LINE))
    for run, heads in (("all_on", []), ("ablated", off)):
        loss, probs = hooked_run(model, ids, heads)
        np.testing.assert_allclose(got[run]["loss"], loss.numpy(), atol=2e-5)
        assert got[run]["mean_loss"] == pytest.approx(float(loss.mean()), abs=2e-5)
        for t, top in enumerate(got[run]["top_next"]):
            assert len(top) == 5 and [p["prob"] for p in top] == sorted((p["prob"] for p in top), reverse=True)
            want = [probs[t, tokenizer.encode(p["token"])[0]].item() for p in top]
            np.testing.assert_allclose([p["prob"] for p in top], want, atol=2e-6)
            assert top[0]["prob"] == pytest.approx(probs[t].max().item(), abs=2e-6)
    # Turning a head off changes what the model predicts, and only from the layers above the head.
    assert got["ablated"]["mean_loss"] != got["all_on"]["mean_loss"]
    first = min(la for la, _ in off)
    assert got["ablated"]["attention"][:first] == got["all_on"]["attention"][:first]
    assert len(got["all_on"]["loss"]) == len(LINE) - 1 and len(got["all_on"]["top_next"]) == len(LINE)


def test_no_head_off_gives_the_model_as_it_is(client):
    got = client.post("/api/ablate", json={"line": LINE, "off": []}).json()
    assert got["ablated"] == got["all_on"] and got["off"] == []


def test_the_shared_models_weights_are_unchanged(client, registry):
    model, _ = registry.trained["learned"]
    before = {k: v.clone() for k, v in model.state_dict().items()}
    off = [{"layer": la, "head": h} for la in (1, 2) for h in (1, 2, 3, 4)]
    assert client.post("/api/ablate", json={"line": "床前明月光", "off": off}).status_code == 200
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


@pytest.mark.parametrize("body,loc,msg", [
    ({"off": [{"layer": 1, "head": 5}]}, ["body", "off", 0, "head"], "head must be at most n_head (4): this model "
     "has no head 5"),
    ({"off": [{"layer": 1, "head": 1}, {"layer": 3, "head": 1}]}, ["body", "off", 1, "layer"],
     "layer must be at most n_layer (2): this model has no layer 3"),
    ({"weights": "random", "n_layer": 1, "n_head": 2, "off": [{"layer": 1, "head": 3}]}, ["body", "off", 0, "head"],
     "head must be at most n_head (2): this model has no head 3"),
    ({"off": [{"layer": 1, "head": 9}]}, ["body", "off", 0, "head"], "head must be at most n_head (4)"),
    # No model served has 17 heads (model.loading.LIMITS)
    ({"off": [{"layer": 1, "head": 17}]}, ["body", "off", 0, "head"], "less than or equal to 16"),
    ({"off": [{"layer": 0, "head": 1}]}, ["body", "off", 0, "layer"], "greater than or equal to 1"),
])
def test_a_head_that_does_not_exist_is_a_422_naming_the_field(client, body, loc, msg):
    r = client.post("/api/ablate", json={"line": LINE, **body})
    assert r.status_code == 422
    errors = r.json()["detail"]
    assert [e["loc"] for e in errors] == [loc]
    assert msg in errors[0]["msg"]
    if "at most" in msg:  # typed as pydantic's own bound, so a page words it as any other limit
        assert errors[0]["type"] == "less_than_equal" and errors[0]["ctx"] == {"le": int(msg.split("(")[1][0])}


def test_a_head_listed_twice_and_a_long_line_are_422s(client):
    twice = client.post("/api/ablate", json={"off": [{"layer": 2, "head": 1}, {"layer": 2, "head": 1}]})
    assert twice.status_code == 422 and [e["loc"] for e in twice.json()["detail"]] == [["body", "off", 1]]
    long = client.post("/api/ablate", json={"line": "月" * 129, "position": "rope"})
    assert long.status_code == 422 and long.json()["detail"][0]["loc"] == ["body", "line"]


def test_random_weights_with_eight_heads_accept_the_eighth(client):
    body = {"line": "床前明月光", "weights": "random", "n_head": 8, "seed": 3, "off": [{"layer": 2, "head": 8}]}
    got = client.post("/api/ablate", json=body).json()
    assert got["model"]["n_head"] == 8 and got["heads_off"][1][7] and got["model"]["seed"] == 3


def test_the_service_checks_the_loaded_model_too():
    """A weights folder may ship another shape than the request's schema assumes (2 x 4)."""
    one_layer = GPT(GPTConfig(vocab_size=10, n_layer=1, n_head=4, n_embd=16))
    with pytest.raises(OffHeadError) as caught:
        heads_off_mask(AblateRequest(off=[{"layer": 1, "head": 1}, {"layer": 2, "head": 4}]), one_layer)
    assert caught.value.detail() == [{"loc": ["body", "off", 1, "layer"], "type": "less_than_equal",
                                      "ctx": {"le": 1}, "msg": "layer must be at most n_layer (1): this model has "
                                      "no layer 2"}]


BODIES = [
    {"line": LINE, "off": [{"layer": 1, "head": 2}]},
    {"line": LINE, "off": [{"layer": 2, "head": 3}]},
    {"line": "明", "off": [{"layer": 1, "head": 1}]},  # one position: filled to 16 rows
    {"line": "床前明月光", "position": "rope", "off": [{"layer": 1, "head": 3}]},
    {"line": LINE * 2, "position": "none", "off": []},
    {"line": "夜来风雨声", "weights": "random", "n_layer": 3, "n_head": 8, "off": [{"layer": 3, "head": 7}]},
]


def test_an_answer_is_the_same_bytes_alone_or_among_others():
    """Without the response cache, every request computes: the bytes do not depend on what runs beside it."""
    with TestClient(app_on_shipped_models(Settings(response_cache_size=0))) as c:
        alone = [c.post("/api/ablate", json=b).content for b in BODIES]

        async def crowd():
            transport = httpx.ASGITransport(app=c.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as ac:
                return await asyncio.gather(*(ac.post("/api/ablate", json=b) for b in BODIES * 4))

        together = [r.content for r in c.portal.call(crowd)]
    assert together == alone * 4
    # The run with every head on is the same bytes whatever heads the other row turns off.
    on = [c for c in alone[:2]]
    assert on[0][on[0].index(b'"all_on"'):on[0].index(b'"ablated"')] == \
        on[1][on[1].index(b'"all_on"'):on[1].index(b'"ablated"')]


def test_documented_at_docs(client):
    spec = client.get("/openapi.json").json()
    op = spec["paths"]["/api/ablate"]["post"]
    assert "Turn heads off" in op["description"]
    schemas = spec["components"]["schemas"]
    for name in ("AblateRequest", "HeadRef", "AblationRun", "AblateResponse"):
        assert all(p.get("description") for p in schemas[name]["properties"].values()), name
    assert "as it is computed" in schemas["AblationRun"]["properties"]["attention"]["description"]
