"""The training snapshots are the shipped runs stopped early, and snapshots.json measures them as heads.json
measures the shipped checkpoints."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from model.assets import SNAPSHOT_STEPS, SNAPSHOTS_PATH, TRAINING_RESULTS_PATH, checkpoint_path, snapshot_path
from model.checkpoint import load_checkpoint
from model.heads import KINDS, ablation_statistics, head_statistics
from model.poems import load_text
from model.train import CHECK_WINDOWS, evaluate, load_data, window_offsets

POSITIONS = ("learned", "rope", "none")
SNAPSHOTS = [(p, step) for p in POSITIONS for step in SNAPSHOT_STEPS]


@pytest.fixture(scope="module")
def val():
    data = load_data()
    return data.val, load_text("val")


@pytest.fixture(scope="module")
def measured():
    return {(m["position"], s["step"]): s
            for m in json.loads(SNAPSHOTS_PATH.read_text(encoding="utf-8"))["models"] for s in m["snapshots"]}


@pytest.mark.parametrize(("position", "step"), SNAPSHOTS)
def test_a_snapshot_is_the_shipped_run_at_that_step(position, step):
    """Same config as the shipped checkpoint (its output path aside), and the same records up to that step."""
    _, _, meta = load_checkpoint(snapshot_path(position, step))
    _, _, final = load_checkpoint(checkpoint_path(position))
    assert meta["step"] == step
    assert {k: v for k, v in meta["train_config"].items() if k != "out"} == \
        {k: v for k, v in final["train_config"].items() if k != "out"}
    run = next(r for r in json.loads(TRAINING_RESULTS_PATH.read_text(encoding="utf-8"))["runs"]
               if r["command"] == final["command"])
    kept = [i for i, s in enumerate(run["steps"]) if s <= step]
    assert meta["record"]["steps"] == [run["steps"][i] for i in kept]
    assert meta["record"]["val_loss"] == [run["val_loss"][i] for i in kept]
    assert meta["record"]["train_loss"] == [run["train_loss"][i] for i in kept]


@pytest.mark.slow  # 18 snapshots, each measured on the whole validation split: 5 s of the fast tier
@pytest.mark.parametrize(("position", "step"), SNAPSHOTS)
def test_a_snapshots_val_loss_is_its_own(val, position, step):
    ids, _ = val
    model, _, meta = load_checkpoint(snapshot_path(position, step))
    offsets = window_offsets(len(ids), model.config.block_size, model.config.block_size)
    assert meta["val_slice"]["windows"] == len(offsets)
    assert evaluate(model, ids, offsets[:CHECK_WINDOWS]) == pytest.approx(meta["check"]["val_loss"], abs=1e-5)


@pytest.mark.slow  # 18 snapshots, 64 windows each
@pytest.mark.parametrize(("position", "step"), SNAPSHOTS)
def test_recorded_attention_agrees_with_a_fresh_run_on_part_of_the_split(val, measured, position, step):
    """The first 64 windows (7,168 queries) against the whole split's figures: within 0.05 at each offset."""
    ids, text = val
    model, _, _ = load_checkpoint(snapshot_path(position, step))
    fresh = head_statistics(model, ids, text, n_windows=64)
    got = measured[(position, step)]
    assert got["windows"] == (len(ids) - 1) // model.config.block_size
    for layer, want_layer in zip(got["layers"], fresh["layers"]):
        for h, w in zip(layer["heads"], want_layer["heads"]):
            assert h["by_offset"] == pytest.approx(w["by_offset"], abs=0.05)
            assert h["line_above"] == pytest.approx(w["line_above"], abs=0.05)
            assert h["entropy"] == pytest.approx(w["entropy"], abs=0.2)


@pytest.mark.slow  # 64 windows, 9 variants each
def test_recorded_ablation_agrees_with_a_fresh_run_on_part_of_the_split(val, measured):
    """As heads.json's test: a fresh run on the first 64 windows lands within 0.1 nats overall, 0.3 by kind.
    (How near a part comes varies by snapshot: the whole split is checked exactly below.)"""
    ids, text = val
    model, _, _ = load_checkpoint(snapshot_path("learned", 250))
    fresh = ablation_statistics(model, ids, text, n_windows=64)
    got = measured[("learned", 250)]
    assert got["ablation"]["windows"] == got["windows"], "the whole split"
    pairs = zip((h["ablation"] for layer in got["layers"] for h in layer["heads"]),
                (h["ablation"] for layer in fresh["layers"] for h in layer["heads"]))
    for g, w in pairs:
        assert g["loss_increase"] == pytest.approx(w["loss_increase"], abs=0.1)
        for k in KINDS:
            assert g["by_kind"][k] == pytest.approx(w["by_kind"][k], abs=0.3), k


@pytest.mark.slow  # four passes over the whole validation split: about 30 s of CPU
def test_recorded_figures_are_the_whole_split_of_the_snapshot(val, measured):
    """One snapshot measured again as eval_snapshots.py measures it, on the whole split, equal to 1e-6: every
    head's attention, the loss with every head on, and one head per layer turned off (the first and the last
    head: each head off costs a pass over the split; every head is checked on part of the split above)."""
    ids, text = val
    model, _, _ = load_checkpoint(snapshot_path("rope", 1000))
    got = measured[("rope", 1000)]
    attention = head_statistics(model, ids, text)
    for layer, want_layer in zip(got["layers"], attention["layers"]):
        for h, w in zip(layer["heads"], want_layer["heads"]):
            assert h["by_offset"] == pytest.approx(w["by_offset"], abs=1e-6)
            assert h["line_above"] == pytest.approx(w["line_above"], abs=1e-6)
            assert h["entropy"] == pytest.approx(w["entropy"], abs=1e-6)
    cfg = model.config
    off = [(1, 1), (cfg.n_layer, cfg.n_head)]
    ablation = ablation_statistics(model, ids, text, heads=off)
    assert got["ablation"]["characters"] == ablation["characters"]
    assert got["ablation"]["loss"] == pytest.approx(ablation["loss"], abs=1e-6)
    recorded = {(layer["layer"], h["head"]): h["ablation"] for layer in got["layers"] for h in layer["heads"]}
    fresh = {(layer["layer"], h["head"]): h["ablation"] for layer in ablation["layers"] for h in layer["heads"]}
    assert sorted(fresh) == off
    for pair in off:
        assert recorded[pair]["loss_increase"] == pytest.approx(fresh[pair]["loss_increase"], abs=1e-6)
        for k in KINDS:
            assert recorded[pair]["by_kind"][k] == pytest.approx(fresh[pair]["by_kind"][k], abs=1e-6), (pair, k)


def test_the_tracked_files_stay_under_60_mb():
    """The snapshots are most of the repository's weight: everything git tracks must stay under 60 MB."""
    root = Path(__file__).resolve().parents[2]
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout.split(b"\0")
    total = sum((root / os.fsdecode(f)).stat().st_size for f in files if f and (root / os.fsdecode(f)).exists())
    assert total < 60 * 2**20, f"{total / 2**20:.1f} MB tracked"
