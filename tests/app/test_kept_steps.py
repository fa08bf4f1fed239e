"""The lesson's two steps on where order is kept (issue 40): the probe step and the bands step. Their verdicts are
decided on the figures GET /api/probe and GET /api/rope/speeds answer, and the accepted answer is recomputed here
from probe.json itself."""

import json

import pytest

from app.domain.lesson_steps import STEPS
from app.services.step_judges import BAND_TIE, PROBE_CHANCE, PROBE_CLOSE
from model.assets import WEIGHTS_DIR

SHIPPED = json.loads((WEIGHTS_DIR / "probe.json").read_text())
STEP = {s["id"]: s for s in STEPS}
MODES = ["learned", "rope", "none"]


def shipped_site(position: str, causal: bool, site: str, layer: int) -> dict:
    """The probe's figures at one site of a trained model at the end of training, read from the file."""
    model = next(m for m in SHIPPED["probe"]["models"] if m["position"] == position)
    final = max(model["steps"], key=lambda s: s["step"])
    return next(s for s in final["causal" if causal else "no_mask"] if s["site"] == site and s["layer"] == layer)


def expected_read(site: dict) -> str:
    if site["mae"] >= (1 - PROBE_CHANCE) * site["chance"]:
        return "chance"
    return "close" if site["mae"] < PROBE_CLOSE * site["chance"] else "rough"


def test_both_steps_come_after_the_rope_and_heads_steps_and_read_no_line(client):
    steps = client.get("/api/lesson").json()["steps"]
    ids = [s["id"] for s in steps]
    assert ids.index("ablate") < ids.index("probe") == ids.index("bands") - 1 < ids.index("ex1")
    for step_id, position in (("probe", "none"), ("bands", "rope")):
        setup = steps[ids.index(step_id)]["setup"]
        assert setup["line_a"] is None and setup["line_b"] is None and setup["position"] == position
        assert setup["weights"] == "trained" and setup["causal"] is True


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("position", MODES)
def test_the_probe_verdict_is_the_apis_figures_after_block_1(client, position, causal):
    got = client.post("/api/lesson/probe/verdict", json={"position": position, "causal": causal})
    assert got.status_code == 200
    verdict = got.json()
    api = client.get("/api/probe", params={"position": position, "causal": str(causal).lower()}).json()
    sites = {(s["site"], s["layer"]): s for s in api["models"][0]["sites"]}
    other = client.get("/api/probe", params={"position": position, "causal": str(not causal).lower()}).json()
    f = verdict["figures"]
    assert f["mae"] == sites["residual", 1]["mae"] and f["chance"] == sites["residual", 1]["chance"]
    assert f["early"] == sites["residual", 1]["by_range"]["0-15"] and f["within"] == sites["residual", 1]["within"]
    assert f["before"] == sites["residual", 0]["mae"]
    assert f["other_mask"] == next(s["mae"] for s in other["models"][0]["sites"]
                                   if s["site"] == "residual" and s["layer"] == 1)
    # The accepted answer, recomputed from the shipped file.
    expected = expected_read(shipped_site(position, causal, "residual", 1))
    assert verdict["outcome"] == expected and verdict["accepted"] == [expected]
    assert expected in STEP["probe"]["choices"]
    assert verdict["setup_is_lessons"] == (position == "none" and causal)


def test_the_probe_step_teaches_what_its_figures_show(client):
    """The step's claim: the model without positions can be probed after block 1 with the mask on, better than
    chance, and not with the mask off (Haviv et al. 2022)."""
    on = client.post("/api/lesson/probe/verdict", json={}).json()
    off = client.post("/api/lesson/probe/verdict", json={"causal": False}).json()
    assert on["outcome"] != "chance" and off["outcome"] == "chance"
    assert on["figures"]["other_mask"] == off["figures"]["mae"] and off["figures"]["other_mask"] == on["figures"]["mae"]
    wrong = [c for c in STEP["probe"]["choices"] if c not in on["accepted"]]
    assert len(wrong) == len(STEP["probe"]["choices"]) - 1  # one right answer, the others wrong


def test_the_bands_verdict_is_the_apis_figures(client):
    verdict = client.post("/api/lesson/bands/verdict", json={}).json()
    f = verdict["figures"]
    api = {band: client.get("/api/rope/speeds", params={"band": band}).json() for band in ("fastest", "slowest")}
    on = api["fastest"]["all_on"]
    assert f["loss"] == on["val_loss"]
    layer, head = f["layer"] - 1, f["head"] - 1
    # The head that looks most at the previous character with every pair turning.
    assert on["previous"][layer][head] == max(max(row) for row in on["previous"]) == f["previous"]
    for band, answer in api.items():
        assert f[f"loss_{band}"] == answer["stopped"]["val_loss"]
        assert f[f"previous_{band}"] == answer["stopped"]["previous"][layer][head]
        assert f[f"cost_{band}"] == pytest.approx(answer["stopped"]["val_loss"] - on["val_loss"], abs=1e-12)
    # Recomputed from probe.json's bands.
    loss = {b["band"]: b["val_loss"] for b in SHIPPED["rope"]["bands"]}
    cost = {band: loss[band] - loss[None] for band in ("fastest", "slowest")}
    gap = cost["fastest"] - cost["slowest"]
    expected = "same" if abs(gap) < BAND_TIE else "fastest" if gap > 0 else "slowest"
    assert verdict["outcome"] == expected and verdict["accepted"] == [expected]
    assert expected in STEP["bands"]["choices"] and verdict["setup_is_lessons"]


@pytest.mark.parametrize("body, reason", [({"position": "learned"}, "not_rope"), ({"position": "none"}, "not_rope"),
                                          ({"weights": "random", "n_layer": 2, "n_head": 4}, "bands_trained_only"),
                                          ({"causal": False}, "bands_causal_only")])
def test_the_bands_step_on_another_setup_says_why_it_has_no_outcome(client, body, reason):
    got = client.post("/api/lesson/bands/verdict", json=body).json()
    assert got["outcome"] is None and got["accepted"] == [] and got["reason"] == reason
    assert got["setup_is_lessons"] is False


def test_the_probe_step_on_untrained_weights_says_its_figures_are_the_trained_models(client):
    got = client.post("/api/lesson/probe/verdict", json={"weights": "random", "n_layer": 1, "n_head": 4}).json()
    assert got["outcome"] is None and got["reason"] == "probe_trained_only"


@pytest.mark.parametrize("step", ["probe", "bands"])
@pytest.mark.parametrize("body, field, kind", [
    ({"line_a": "白日依山尽"}, "line_a", "unused_field"),
    ({"line_a": "白日依山尽"}, "line_a", "unused_field"),
    ({"line_b": "白日依山尽"}, "line_b", "unused_field"),
    ({"distance": 2}, "distance", "unused_field"),
    ({"position": "alibi"}, "position", "literal_error"),
    ({"causal": "no"}, "causal", "bool_type"),
    ({"weights": "best"}, "weights", "literal_error"),
    ({"n_layer": 3}, "n_layer", "trained_shape"),
    ({"n_layer": 9, "weights": "random"}, "n_layer", "less_than_equal"),
    ({"band": "fastest"}, "band", "extra_forbidden"),
])
def test_bad_or_unused_fields_are_refused_by_name(client, step, body, field, kind):
    got = client.post(f"/api/lesson/{step}/verdict", json=body)
    assert got.status_code == 422, got.text
    (error,) = got.json()["detail"]
    assert error["loc"][-1] == field and error["type"] == kind, error
    if kind == "unused_field":
        assert f"step {step} does not use {field}" in error["msg"]
