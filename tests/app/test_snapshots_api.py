"""Watch the heads form: /api/snapshots, and step= on /api/heads, /api/positions and /api/ablate, checked
against the shipped files and an independent numpy reading of the snapshot weights."""

import hashlib
import json

import numpy as np
import pytest
from test_ablation_api import LINE, hooked_run

from model.assets import SNAPSHOT_STEPS, SNAPSHOTS_PATH, WEIGHTS_DIR, snapshot_path
from model.checkpoint import load_checkpoint
from model.tokenizer import CharTokenizer

FINAL = 10_000
NAMED = 0.1  # the lesson's share worth naming: 5 times an even row's share of one key


def shipped(name):
    return json.loads((WEIGHTS_DIR / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def snapshots():
    """{position: {step: heads.json-shaped model}} from the shipped files, the last step being heads.json's."""
    out = {m["position"]: {s["step"]: s for s in m["snapshots"]} for m in shipped("snapshots.json")["models"]}
    for m in shipped("heads.json")["models"]:
        out[m["position"]][FINAL] = m
    return out


@pytest.fixture(scope="module")
def timeline(client):
    r = client.get("/api/snapshots")
    assert r.status_code == 200, r.text
    return r.json()


def test_every_snapshot_of_every_mode_ships_and_is_measured():
    measured = {(m["position"], s["step"]) for m in shipped("snapshots.json")["models"] for s in m["snapshots"]}
    assert measured == {(p, step) for p in ("learned", "rope", "none") for step in SNAPSHOT_STEPS}
    for p, step in measured:
        assert snapshot_path(p, step).exists()


def test_the_timeline_lists_every_step_and_mode(timeline):
    assert timeline["steps"] == [*SNAPSHOT_STEPS, FINAL] and timeline["final_step"] == FINAL
    assert [m["position"] for m in timeline["models"]] == ["learned", "rope", "none"]


def stays_from(flags, steps):
    """Recounted: the first step after the last step without it."""
    missing = [s for s, f in zip(steps, flags) if not f]
    if not flags[-1]:
        return None
    return steps[0] if not missing else steps[steps.index(missing[-1]) + 1]


def test_findings_equal_a_recount_of_the_measured_shares(timeline, snapshots):
    steps = timeline["steps"]
    runs = {r["position"]: r for r in shipped("training.json")["runs"] if r["n_head"] == 4}
    for m in timeline["models"]:
        measured = [snapshots[m["position"]][s] for s in steps]
        want_loss = [x["val_loss"] for x in measured[:-1]] + [runs[m["position"]]["final_val_loss"]]
        assert m["val_loss"] == want_loss
        first = [x["layers"][0]["heads"] for x in measured]
        one_back = [max(h["by_offset"][1] for h in heads) for heads in first]
        assert [p["share"] for p in m["previous_head"]] == one_back
        assert [p["present"] for p in m["previous_head"]] == [s >= NAMED for s in one_back]
        couplets = [[(layer["layer"], h["head"]) for layer in x["layers"] for h in layer["heads"]
                     if h["line_above"] >= NAMED] for x in measured]
        assert [[(h["layer"], h["head"]) for h in c["heads"]] for c in m["couplet_heads"]] == couplets
        largest = [max(max(h["by_offset"]) for h in heads) for heads in first]
        assert [row["share"] for row in m["layer1"]] == largest
        assert m["findings"] == {
            "previous_head": stays_from([s >= NAMED for s in one_back], steps),
            "couplet_heads": stays_from([bool(c) for c in couplets], steps),
            "layer1_flat": all(s < NAMED for s in largest)}


def test_what_training_shows(timeline):
    """The issue's story, as the shipped runs tell it: the previous-character head forms under pos_emb and
    RoPE, never under none, whose layer 1 stays flat by offset the whole way; couplet heads form."""
    by = {m["position"]: m for m in timeline["models"]}
    assert by["learned"]["findings"]["previous_head"] is not None
    assert by["rope"]["findings"]["previous_head"] is not None
    assert by["none"]["findings"]["previous_head"] is None
    assert by["none"]["findings"]["layer1_flat"] and not by["learned"]["findings"]["layer1_flat"]
    assert by["learned"]["findings"]["couplet_heads"] is not None
    assert timeline["rhythm_from"] is not None and timeline["rhythm"][-1]["period"] == 12


def numpy_rhythm(pos_emb):
    """The pos_emb table's rhythm recomputed in numpy: cosine of every pair of rows, mean by lag 0..64."""
    unit = pos_emb / np.linalg.norm(pos_emb, axis=1, keepdims=True)
    sim = unit @ unit.T
    by_lag = np.array([np.diagonal(sim, lag).mean() for lag in range(65)])
    period = 3 + int(np.argmax(by_lag[3:]))
    median = float(np.median(by_lag[3:]))
    return sim, {"period": period, "at_period": by_lag[period], "median": median,
                 "shows": by_lag[period] - median >= 0.2}


@pytest.mark.parametrize("step", [*SNAPSHOT_STEPS, FINAL])
def test_positions_at_a_step_are_that_snapshots_table(client, timeline, step):
    r = client.get("/api/positions", params={"step": step})
    assert r.status_code == 200, r.text
    got = r.json()
    path = snapshot_path("learned", step) if step != FINAL else WEIGHTS_DIR / "learned.pt"
    weights = load_checkpoint(path)[0].pos_emb.weight.detach().double().numpy()
    sim, rhythm = numpy_rhythm(weights)
    assert got["step"] == step
    np.testing.assert_allclose(np.array(got["learned"]), sim, atol=1e-6)
    for key in ("period", "shows"):
        assert got["learned_rhythm"][key] == rhythm[key]
    for key in ("at_period", "median"):
        assert got["learned_rhythm"][key] == pytest.approx(rhythm[key], abs=1e-9)
    row = next(r for r in timeline["rhythm"] if r["step"] == step)
    assert row == {"step": step, **{k: got["learned_rhythm"][k] for k in ("period", "at_period", "median", "shows")}}
    assert got["rope"] == client.get("/api/positions").json()["rope"]  # RoPE has nothing to train


def test_heads_at_a_step_are_that_snapshots_figures(client, snapshots):
    for step in SNAPSHOT_STEPS:
        got = client.get("/api/heads", params={"step": step}).json()
        assert got["step"] == step
        for m in got["models"]:
            want = {k: v for k, v in snapshots[m["position"]][step].items() if k not in ("sha256", "step")}
            assert m == {"position": m["position"], **want}
    final = client.get("/api/heads", params={"step": FINAL}).json()
    assert final == client.get("/api/heads").json() and final["step"] == FINAL


@pytest.mark.parametrize("query", ["step=7", "step=10001", "step=-1", "step=abc", "step=250&x=1"])
def test_a_step_that_does_not_ship_is_a_422_naming_it(client, query):
    for path in ("/api/heads", "/api/positions"):
        r = client.get(f"{path}?{query}")
        assert r.status_code == 422, (path, query)
        assert r.json()["detail"][0]["loc"] in (["query", "step"], ["query", "x"])
    r = client.get("/api/heads?step=7")
    assert r.json()["detail"][0]["ctx"]["steps"] == [*SNAPSHOT_STEPS, FINAL]


@pytest.mark.parametrize(("position", "step", "off"), [("learned", 250, [(1, 2)]), ("rope", 1000, [(1, 4)]),
                                                       ("none", 100, [(2, 1)])])
def test_ablate_at_a_step_equals_a_hook_on_that_snapshot(client, position, step, off):
    tokenizer = CharTokenizer.load(WEIGHTS_DIR / "vocab.json")
    body = {"line": LINE, "position": position, "step": step, "off": [{"layer": la, "head": h} for la, h in off]}
    r = client.post("/api/ablate", json=body)
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["model"]["step"] == step
    model = load_checkpoint(snapshot_path(position, step))[0]
    ids = list(tokenizer.encode(LINE))
    for run, heads in (("all_on", []), ("ablated", off)):
        loss, _ = hooked_run(model, ids, heads)
        np.testing.assert_allclose(got[run]["loss"], loss.numpy(), atol=2e-5)
    final = client.post("/api/ablate", json={**body, "step": None}).json()
    assert final["all_on"]["loss"] != got["all_on"]["loss"]  # another model than the shipped one


@pytest.mark.parametrize(("body", "msg"), [({"step": 7}, "one of the training steps"),
                                            ({"step": 250, "weights": "random"}, "use weights 'trained'")])
def test_ablate_refuses_a_step_it_cannot_answer(client, body, msg):
    r = client.post("/api/ablate", json={"line": LINE, **body})
    assert r.status_code == 422
    detail = r.json()["detail"][0]
    assert detail["loc"] == ["body", "step"] and msg in detail["msg"]


def test_snapshots_json_names_the_files_it_measured():
    for m in shipped("snapshots.json")["models"]:
        for s in m["snapshots"]:
            assert hashlib.sha256(snapshot_path(m["position"], s["step"]).read_bytes()).hexdigest() == s["sha256"]
    assert SNAPSHOTS_PATH.exists()
