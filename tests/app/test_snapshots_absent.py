"""A weights folder with the shipped models but no training snapshots (no snapshots.json, no snapshots/): the
step API still answers, with the last step only, and that step is the shipped answer exactly. The explorer
relies on this to hide its training-step slider and show the shipped heads unchanged."""

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from model.assets import WEIGHTS_DIR

LINE = "白日依山尽，黄河入海流。"


@pytest.fixture(scope="module")
def unsnapped(tmp_path_factory):
    weights = tmp_path_factory.mktemp("no_snapshots")
    for path in WEIGHTS_DIR.iterdir():
        if path.is_file() and path.name != "snapshots.json":
            (weights / path.name).symlink_to(path)
    with TestClient(create_app(Settings(weights_dir=weights, data_dir=tmp_path_factory.mktemp("data")))) as c:
        yield c


def test_the_timeline_has_the_last_step_only(unsnapped):
    timeline = unsnapped.get("/api/snapshots").json()
    final = timeline["final_step"]
    runs = unsnapped.get("/api/training").json()["runs"]
    assert final == max(run["steps"][-1] for run in runs)
    assert timeline["steps"] == [final]
    assert {m["position"] for m in timeline["models"]} == {"learned", "rope", "none"}
    for model in timeline["models"]:
        rows = [model["val_loss"], model["previous_head"], model["couplet_heads"], model["layer1"]]
        assert [len(r) for r in rows] == [1, 1, 1, 1]
    # The table's rhythm at that step is /api/positions' own.
    rhythm = unsnapped.get("/api/positions").json()["learned_rhythm"]
    (row,) = timeline["rhythm"]
    assert row == {"step": final, **{k: rhythm[k] for k in ("period", "at_period", "median", "shows")}}


@pytest.mark.parametrize("path", ["/api/heads", "/api/positions"])
def test_the_last_step_is_the_shipped_answer(unsnapped, path):
    final = unsnapped.get("/api/snapshots").json()["final_step"]
    assert unsnapped.get(f"{path}?step={final}").json() == unsnapped.get(path).json()


@pytest.mark.parametrize("path", ["/api/heads?step=100", "/api/positions?step=100"])
def test_an_earlier_step_is_a_422_with_the_steps_that_ship(unsnapped, path):
    final = unsnapped.get("/api/snapshots").json()["final_step"]
    response = unsnapped.get(path)
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["query", "step"] and error["type"] == "snapshot_step"
    assert error["ctx"] == {"steps": [final]}


def test_ablate_at_the_last_step_is_the_shipped_model(unsnapped):
    body = {"line": LINE, "position": "rope", "weights": "trained", "off": [{"layer": 1, "head": 2}]}
    final = unsnapped.get("/api/snapshots").json()["final_step"]
    shipped = unsnapped.post("/api/ablate", json=body).json()
    at_final = unsnapped.post("/api/ablate", json={**body, "step": final}).json()
    assert at_final["model"].pop("step") == final and shipped["model"].pop("step") is None
    assert at_final == shipped
    refused = unsnapped.post("/api/ablate", json={**body, "step": 100})
    assert refused.status_code == 422
    (error,) = refused.json()["detail"]
    assert error["loc"] == ["body", "step"] and error["ctx"] == {"steps": [final]}
