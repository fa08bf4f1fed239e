"""GET /api/probe and GET /api/rope/speeds: the shipped figures as probe.json has them, an untrained model measured
on request on the stated subset of windows, and a 422 naming the field for a depth, step or band that does not
exist."""

import json

import pytest
import torch

from model.assets import SNAPSHOT_STEPS, WEIGHTS_DIR
from model.poems import load_text
from model.position_probe import position_probe
from model.windows import window_offsets

FINAL = 10_000


@pytest.fixture(scope="module")
def shipped():
    return json.loads((WEIGHTS_DIR / "probe.json").read_text(encoding="utf-8"))


def shipped_sites(shipped, position, step, mask="causal"):
    model = next(m for m in shipped["probe"]["models"] if m["position"] == position)
    return next(s for s in model["steps"] if s["step"] == step)[mask]


def error_field(r):
    assert r.status_code == 422, r.text
    return r.json()["detail"][0]["loc"]


def test_probe_json_covers_every_model_step_and_mask(shipped):
    probe = shipped["probe"]
    assert [m["position"] for m in probe["models"]] == ["learned", "rope", "none"]
    for m in probe["models"]:
        assert [s["step"] for s in m["steps"]] == [*SNAPSHOT_STEPS, FINAL]
        for s in m["steps"]:
            for mask in ("causal", "no_mask"):
                assert [(x["site"], x["layer"]) for x in s[mask]] == [
                    ("residual", 0), ("residual", 1), ("residual", 2), ("z", 1), ("z", 2)]
    assert probe["windows"] == 490 and probe["test_windows"] == 98 and probe["window_stride"] == 3


def test_trained_answers_are_the_shipped_figures(client, shipped):
    r = client.get("/api/probe")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["weights"] == "trained" and body["step"] == FINAL and body["causal"] is True
    assert body["windows"] == 490 and body["test_windows"] == 98 and body["ridge"] == 1.0
    assert [m["position"] for m in body["models"]] == ["learned", "rope", "none"]
    for m in body["models"]:
        assert m["n_layer"] == 2 and m["sites"] == shipped_sites(shipped, m["position"], FINAL)
    off = client.get("/api/probe", params={"position": "none", "causal": "false"}).json()
    assert [m["position"] for m in off["models"]] == ["none"]
    assert off["models"][0]["sites"] == shipped_sites(shipped, "none", FINAL, "no_mask")


def test_what_the_shipped_figures_say(shipped):
    """The issue's reading, on our windows: pos_emb holds the position before block 1; the none model reads it
    after block 1 only under the mask; RoPE writes almost none into the stream."""
    learned, none = shipped_sites(shipped, "learned", FINAL), shipped_sites(shipped, "none", FINAL)
    none_off, rope = shipped_sites(shipped, "none", FINAL, "no_mask"), shipped_sites(shipped, "rope", FINAL)
    assert learned[0]["mae"] < 3 and none[0]["mae"] == pytest.approx(none[0]["chance"], abs=0.5)
    assert none[1]["mae"] < none[1]["chance"] - 8
    assert all(abs(s["mae"] - s["chance"]) < 0.5 for s in none_off)
    assert all(s["mae"] > 29 for s in rope if s["site"] == "residual")


def test_a_snapshot_is_its_step(client, shipped):
    body = client.get("/api/probe", params={"step": 500, "position": "learned"}).json()
    assert body["step"] == 500 and body["models"][0]["sites"] == shipped_sites(shipped, "learned", 500)


@pytest.mark.parametrize("params, field", [
    ({"step": 123}, "step"),  # no snapshot ships at 123
    ({"weights": "random", "step": 500}, "step"),  # a step is a point in the training of the trained weights
    ({"n_layer": 3}, "n_layer"),  # the trained models have 2 layers
    ({"weights": "random", "n_layer": 5}, "n_layer"),  # untrained: 1 to 4
    ({"weights": "random", "n_layer": 0}, "n_layer"),
    ({"weights": "trained", "seed": 3}, "seed"),
    ({"position": "alibi"}, "position"),
    ({"weights": "pretrained"}, "weights"),
])
def test_a_depth_step_or_mode_that_does_not_exist_is_named(client, params, field):
    assert error_field(client.get("/api/probe", params=params)) == ["query", field]


def test_an_untrained_model_is_probed_on_every_ninth_window(client, registry):
    params = {"weights": "random", "n_layer": 1, "position": "none", "seed": 3}
    r = client.get("/api/probe", params=params)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["weights"] == "random" and body["seed"] == 3 and body["step"] is None
    assert body["windows"] == 164 and body["test_windows"] == 32
    ids = torch.tensor(registry.tokenizer.encode(load_text("val")))
    model = registry.random("none", 1, 4, 3)
    expected = position_probe(model, ids, window_offsets(len(ids), 128, 128)[::9])
    assert body["models"] == [{"position": "none", "n_layer": 1, "sites": expected["sites"]}]
    # No position before block 1: the probe is at chance there.
    assert body["models"][0]["sites"][0]["mae"] == pytest.approx(body["models"][0]["sites"][0]["chance"], abs=0.5)
    again = client.get("/api/probe", params=params)
    assert again.content == r.content


def test_rope_speeds_and_a_band(client, shipped):
    r = client.get("/api/rope/speeds", params={"band": "fastest"})
    assert r.status_code == 200, r.text
    body = r.json()
    rope = shipped["rope"]
    assert body["layers"] == rope["layers"] and body["theta_degrees"] == rope["theta_degrees"]
    assert body["theta_degrees"][0] == pytest.approx(57.2958) and body["windows"] == 490
    assert body["all_on"]["band"] is None and body["all_on"]["pairs"] == []
    assert body["stopped"]["band"] == "fastest" and body["stopped"]["pairs"] == [0, 1, 2, 3]
    assert body["stopped"]["val_loss"] > body["all_on"]["val_loss"] + 1
    assert client.get("/api/rope/speeds").json()["stopped"] is None
    slowest = client.get("/api/rope/speeds", params={"band": "slowest"}).json()["stopped"]
    assert slowest["val_loss"] == pytest.approx(body["all_on"]["val_loss"], abs=1e-3)


@pytest.mark.parametrize("params, field", [({"band": "fast"}, "band"), ({"speed": 1}, "speed")])
def test_a_band_that_does_not_exist_is_named(client, params, field):
    assert error_field(client.get("/api/rope/speeds", params=params)) == ["query", field]
