"""The layers as rules, not a convention: the import contracts of pyproject.toml ([tool.importlinter]), and a
served app that runs without the trainer's packages (the `train` extra: opencc, tqdm)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


# opencc and tqdm made unimportable (a None in sys.modules raises ImportError), then the app is built, its
# lifespan run, and the routes that reach the most of model/ asked: the lesson's verdicts read the trained heads'
# roles (model.heads), the snapshots their timeline. torch itself tries tqdm and does without it.
WITHOUT_TRAINER = """
import sys
sys.modules["opencc"] = None
sys.modules["tqdm"] = None
from fastapi.testclient import TestClient
from app.main import create_app
with TestClient(create_app()) as client:
    for method, path, body in [
        ("post", "/api/compare", {"line_a": "白日依山尽", "line_b": "山依日白尽"}),
        ("post", "/api/lesson/order/verdict", {}),
        ("post", "/api/lesson/heads/verdict", {}),
        ("get", "/api/snapshots", None),
        ("get", "/api/heads", None),
    ]:
        answer = client.post(path, json=body) if method == "post" else client.get(path)
        assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
loaded = sorted(m for m in ("model.train", "model.corpus") if m in sys.modules)
print("loaded:", loaded)
"""


@pytest.mark.slow
def test_serving_runs_without_the_trainer():
    done = subprocess.run([sys.executable, "-c", WITHOUT_TRAINER], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("loaded: []"), done.stdout


def test_training_commands_name_the_missing_extra():
    code = """
import sys
sys.modules["tqdm"] = None
from model.errors import MissingExtra
from model.train import TrainConfig, train
try:
    train(TrainConfig(steps=2, warmup=1))
except MissingExtra as error:
    print(error)
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "tqdm is missing" in done.stdout and "pip install -e '.[train]'" in done.stdout
