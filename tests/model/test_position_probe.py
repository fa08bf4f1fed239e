"""The position probe against an independent computation: residuals and hook_z from the numpy float64 reference GPT
(tests/app/reference_gpt.py, which shares no code with model/), and a ridge written here in numpy with the intercept
as a column of the design matrix (model/position_probe.py centres instead)."""

import copy
import json

import numpy as np
import pytest
import torch
from reference_gpt import ReferenceGPT

from model.assets import WEIGHTS_DIR, checkpoint_path
from model.checkpoint import load_checkpoint
from model.poems import load_text
from model.position_probe import position_probe, site_names
from model.rope import rope_angles
from model.tokenizer import CharTokenizer
from model.windows import window_offsets

N_WINDOWS = 10  # windows 0..9 of the validation text: 4 and 9 test, 8 fit (1,024 positions for 128 features)
CHANCE_WINDOWS = 200  # below this the ridge overfits block 1's z without the mask: 46.5 on 40 windows, 32.04 on 200
CHANCE_MARGIN = 0.5  # positions: on 200 windows the none model without the mask missed chance (32.0) by 0.13 at most


@pytest.fixture(scope="module")
def val_ids():
    return torch.tensor(CharTokenizer.load(WEIGHTS_DIR / "vocab.json").encode(load_text("val")))


def float64_model(position):
    """The shipped model in float64, RoPE's angles taken again in float64 (as app/services/twins.py does)."""
    model = copy.deepcopy(load_checkpoint(checkpoint_path(position))[0]).double()
    if position == "rope":
        cfg = model.config
        angles = rope_angles(torch.arange(cfg.max_positions), cfg.head_dim, cfg.rope_base)
        model.rope_cos, model.rope_sin = angles.cos(), angles.sin()
    return model


def numpy_probe(features, block_size):
    """features (W, T, C) float64 -> (mae, {range: mae}, within, chance) on windows 4, 9, ..., fit on the rest."""
    W, T, C = features.shape
    test = np.arange(W) % 5 == 4
    y = np.tile(np.arange(T, dtype=np.float64), (W, 1))
    fx, fy = features[~test].reshape(-1, C), y[~test].reshape(-1)
    tx, ty = features[test].reshape(-1, C), y[test].reshape(-1)
    mu, sd = fx.mean(0), fx.std(0)
    sd[sd == 0] = 1.0
    design = np.hstack([np.ones((len(fx), 1)), (fx - mu) / sd])  # intercept first
    penalty = np.eye(C + 1)
    penalty[0, 0] = 0.0  # the intercept is not penalized
    beta = np.linalg.solve(design.T @ design + penalty, design.T @ fy)
    pred = np.clip(np.hstack([np.ones((len(tx), 1)), (tx - mu) / sd]) @ beta, 0, block_size - 1)
    err = np.abs(pred - ty)
    ranges = {f"{lo}-{hi}": err[(ty >= lo) & (ty <= hi)].mean() for lo, hi in ((0, 15), (16, 63), (64, 127))}
    return err.mean(), ranges, (err <= 2).mean(), np.abs(fy.mean() - ty).mean()


@pytest.mark.parametrize("position", ["learned", "rope", "none"])
@pytest.mark.parametrize("causal", [True, False])
def test_probe_figures_equal_a_numpy_probe_on_reference_residuals(val_ids, position, causal):
    model = float64_model(position)
    T = model.config.block_size
    offsets = window_offsets(len(val_ids), T, T, N_WINDOWS)
    got = position_probe(model, val_ids, offsets, causal)
    assert got["windows"] == N_WINDOWS and got["test_windows"] == 2
    ref = ReferenceGPT(model)
    traces = [ref.trace(val_ids[o:o + T].numpy(), causal) for o in offsets.tolist()]
    sites = [np.stack([t["residual"][layer] for t in traces]) for layer in range(model.config.n_layer + 1)]
    sites += [np.stack([t["z"][layer] for t in traces]) for layer in range(model.config.n_layer)]
    assert [{"site": s["site"], "layer": s["layer"]} for s in got["sites"]] == site_names(model.config.n_layer)
    for site, features in zip(got["sites"], sites):
        mae, ranges, within, chance = numpy_probe(features, T)
        assert site["mae"] == pytest.approx(mae, rel=1e-6)
        assert site["by_range"] == pytest.approx(ranges, rel=1e-6)
        assert site["within"] == pytest.approx(within, rel=1e-6)
        assert site["chance"] == pytest.approx(chance, rel=1e-6)


def test_none_without_the_mask_is_at_chance_at_every_site(val_ids):
    """No positions and no mask: every position of a window sees the same keys, so nothing there tells one position
    from another. On the CHANCE_WINDOWS first windows: every site within CHANCE_MARGIN of chance."""
    model = load_checkpoint(checkpoint_path("none"))[0]
    T = model.config.block_size
    got = position_probe(model, val_ids, window_offsets(len(val_ids), T, T, CHANCE_WINDOWS), causal=False)
    for site in got["sites"]:
        assert abs(site["mae"] - site["chance"]) <= CHANCE_MARGIN, site
    # The same model with the mask reads the position after block 1 far better than chance (the mask leaks order).
    masked = position_probe(model, val_ids, window_offsets(len(val_ids), T, T, 40), causal=True)["sites"]
    assert masked[1]["mae"] < masked[1]["chance"] - 5, masked[1]


def test_learned_embedding_holds_the_position(val_ids):
    """pos_emb is added before block 1: the probe reads the position there within a few places."""
    model = load_checkpoint(checkpoint_path("learned"))[0]
    T = model.config.block_size
    site = position_probe(model, val_ids, window_offsets(len(val_ids), T, T, 40))["sites"][0]
    assert site["mae"] < 5 < 30 < site["chance"]


@pytest.mark.slow
def test_the_shipped_figures_are_measured_as_stated(val_ids):
    """probe.json's none model at the end of training, with the mask: the probe on every third window, again."""
    shipped = json.loads((WEIGHTS_DIR / "probe.json").read_text(encoding="utf-8"))["probe"]
    model = load_checkpoint(checkpoint_path("none"))[0]
    T = model.config.block_size
    offsets = window_offsets(len(val_ids), T, T)[::shipped["window_stride"]]
    got = position_probe(model, val_ids, offsets)
    assert got["windows"] == shipped["windows"] and got["test_windows"] == shipped["test_windows"]
    final = next(m for m in shipped["models"] if m["position"] == "none")["steps"][-1]
    for site, stored in zip(got["sites"], final["causal"]):
        assert site["mae"] == pytest.approx(stored["mae"], abs=1e-4)
        assert site["within"] == pytest.approx(stored["within"], abs=1e-4)
