"""The app served from a weights folder that holds only vocab.json: no trained model and no shipped
results. Every route still answers; what needs the trained weights says so, by field and type."""

import shutil

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings
from model.assets import WEIGHTS_DIR


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    weights = tmp_path_factory.mktemp("vocab_only")
    shutil.copy(WEIGHTS_DIR / "vocab.json", weights / "vocab.json")
    with TestClient(create_app(Settings(weights_dir=weights, data_dir=tmp_path_factory.mktemp("data")))) as c:
        yield c


def test_the_app_says_it_has_no_trained_models(bare):
    assert bare.get("/readyz").json()["trained"] == []
    assert bare.get("/api/options").json()["trained"] == {}


# /api/relative runs every position mode, the first of which is learned.
@pytest.mark.parametrize("path, body, position", [("/api/compare", {"position": "rope"}, "rope"),
                                                  ("/api/relative", {}, "learned")])
def test_trained_weights_are_refused_by_field_and_random_ones_still_answer(bare, path, body, position):
    refused = bare.post(path, json={**body, "weights": "trained"})
    assert refused.status_code == 422
    (error,) = refused.json()["detail"]
    assert error["loc"] == ["body", "weights"] and error["type"] == "no_trained_weights"
    assert error["ctx"] == {"position": position}
    assert bare.post(path, json={**body, "weights": "random"}).status_code == 200


@pytest.mark.parametrize("path, runs", [("/api/training", "runs"), ("/api/length", "runs"), ("/api/heads", "models"),
                                        ("/api/probe", "models"), ("/api/rope/speeds", "layers")])
def test_shipped_results_are_empty(bare, path, runs):
    response = bare.get(path)
    assert response.status_code == 200 and response.json()[runs] == []


def test_positions_have_no_learned_table_and_ropes_from_the_lessons_shape(bare, client):
    got = bare.get("/api/positions").json()
    assert got["learned"] is None and got["learned_rhythm"] is None
    # The shipped rope model has the lesson's head_dim and base, so both apps draw the same rotations.
    assert np.array_equal(np.array(got["rope"]), np.array(client.get("/api/positions").json()["rope"]))


@pytest.mark.parametrize("step", ["table", "length", "ex2", "ex3"])
def test_lesson_steps_on_shipped_results_give_no_verdict(bare, step):
    got = bare.post(f"/api/lesson/{step}/verdict", json={}).json()
    assert got["outcome"] is None and got["reason"] == "no_results"


@pytest.mark.parametrize("step", ["probe", "bands"])
def test_the_steps_on_the_shipped_probe_need_the_trained_weights(bare, step):
    """Their setup is the trained model: refused by the weights field, as /api/compare refuses it; untrained, the
    step says its figures are the trained models'."""
    refused = bare.post(f"/api/lesson/{step}/verdict", json={})
    assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["body", "weights"]
    body = {"weights": "random", "n_layer": 2, "n_head": 4, **({"position": "rope"} if step == "bands" else {})}
    got = bare.post(f"/api/lesson/{step}/verdict", json=body).json()
    assert got["outcome"] is None and got["reason"] == f"{step}_trained_only"


@pytest.mark.parametrize("path", ["/", "/lesson?step=7", "/lesson?step=14", "/lesson?step=17"])
def test_the_pages_still_open(bare, path):
    assert bare.get(path).status_code == 200
