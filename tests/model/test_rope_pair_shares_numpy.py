"""RoPE's pair shares computed a second time, independently of model/: numpy float64 from the checkpoint's tensors.
The residual stream entering each block and the attention pattern come from the reference GPT
(tests/app/reference_gpt.py, which shares no code with model/); q and k are taken here from that stream with the
block's ln_1 and qkv weights, each turned by its own absolute angle (position · θᵢ), and a pair's share is the
product of its two turned components over √head_dim: no relative-angle formula, no torch. The means must equal
model/rope_speeds.py's speeds() within 1e-6 relative, and the shares must add up to the reference's scores."""

import copy

import numpy as np
import pytest
import torch
from reference_gpt import ReferenceGPT

from model.assets import WEIGHTS_DIR, checkpoint_path
from model.checkpoint import load_checkpoint
from model.poems import load_text
from model.rope import rope_angles
from model.rope_speeds import speeds
from model.tokenizer import CharTokenizer
from model.windows import window_offsets

N_WINDOWS = 6  # validation windows 0..5: 768 queries per head
MEASURES = ("distance_0", "distance_1", "attended")


@pytest.fixture(scope="module")
def rope64():
    """The trained RoPE model in float64, its angles taken again in float64 (as app/services/twins.py does)."""
    model = copy.deepcopy(load_checkpoint(checkpoint_path("rope"))[0]).double()
    cfg = model.config
    angles = rope_angles(torch.arange(cfg.max_positions), cfg.head_dim, cfg.rope_base)
    model.rope_cos, model.rope_sin = angles.cos(), angles.sin()
    return model


@pytest.fixture(scope="module")
def windows_ids(rope64):
    ids = CharTokenizer.load(WEIGHTS_DIR / "vocab.json").encode(load_text("val"))
    T = rope64.config.block_size
    offsets = window_offsets(len(ids), T, T, N_WINDOWS)
    return torch.tensor(ids), offsets, [np.asarray(ids[o:o + T]) for o in offsets.tolist()]


def layer_norm(x, weight, bias):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * weight + bias


def turned(x, theta):
    """x (nh, T, hs) -> (nh, T, P, 2): pair i of the vector at position t turned by t·θᵢ."""
    nh, T, hs = x.shape
    pairs = x.reshape(nh, T, hs // 2, 2)
    angle = np.arange(T)[:, None] * theta[None, :]  # (T, P)
    c, s = np.cos(angle)[None], np.sin(angle)[None]
    return np.stack([pairs[..., 0] * c - pairs[..., 1] * s, pairs[..., 0] * s + pairs[..., 1] * c], axis=-1)


def numpy_shares(reference, ids):
    """[(shares (nh, P, T, T) with query rows and key columns, pattern (nh, T, T), scores (nh, T, T))] per layer."""
    cfg, w = reference.cfg, reference.w
    out = reference.trace(ids)
    C, nh = cfg.n_embd, cfg.n_head
    hs = C // nh
    theta = cfg.rope_base ** (-np.arange(0, hs, 2, dtype=np.float64) / hs)  # (P,)
    layers = []
    for layer, x in enumerate(out["residual"][:-1]):  # what enters each block
        p = f"blocks.{layer}."
        qkv = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"]) @ w[p + "attn.qkv.weight"].T \
            + w[p + "attn.qkv.bias"]  # (T, 3C)
        q, k = (qkv[:, i * C:(i + 1) * C].reshape(len(ids), nh, hs).transpose(1, 0, 2) for i in (0, 1))
        tq, tk = turned(q, theta), turned(k, theta)  # (nh, T, P, 2)
        shares = np.einsum("hmpc,hnpc->hpmn", tq, tk) / np.sqrt(hs)
        layers.append((shares, out["patterns"][layer], out["scores"][layer]))
    return layers


@pytest.fixture(scope="module")
def numpy_means(rope64, windows_ids):
    """Each layer's and head's mean shares over the windows: the three measures of speeds(), as (L, nh, P)."""
    _, _, windows = windows_ids
    reference = ReferenceGPT(rope64)
    cfg = rope64.config
    sums = {m: np.zeros((cfg.n_layer, cfg.n_head, cfg.head_dim // 2)) for m in MEASURES}
    causal = np.tril(np.ones((cfg.block_size, cfg.block_size), bool))
    for ids in windows:
        for layer, (shares, pattern, scores) in enumerate(numpy_shares(reference, ids)):
            # Summed over the pairs, the shares are the reference's scores (where the mask lets them through).
            np.testing.assert_allclose(shares.sum(1)[:, causal], scores[:, causal], rtol=0, atol=1e-10)
            sums["distance_0"][layer] += np.diagonal(shares, axis1=-2, axis2=-1).sum(-1)
            sums["distance_1"][layer] += np.diagonal(shares, offset=-1, axis1=-2, axis2=-1).sum(-1)
            sums["attended"][layer] += (pattern[:, None] * shares).sum((-2, -1))
    T, W = cfg.block_size, len(windows)
    return {"distance_0": sums["distance_0"] / (W * T), "distance_1": sums["distance_1"] / (W * (T - 1)),
            "attended": sums["attended"] / (W * T)}


@pytest.mark.parametrize("measure", MEASURES)
def test_the_pair_shares_equal_an_independent_numpy_computation(rope64, windows_ids, numpy_means, measure):
    ids, offsets, _ = windows_ids
    got = speeds(rope64, ids, offsets)
    assert got["windows"] == N_WINDOWS
    model = np.array([[head[measure] for head in layer["heads"]] for layer in got["layers"]])  # (L, nh, P)
    expected = numpy_means[measure]
    assert model.shape == expected.shape
    # 1e-6 relative to each head's largest share: a pair whose share is near 0 is compared on the head's scale.
    scale = np.abs(expected).max(-1, keepdims=True)
    assert np.all(np.abs(model - expected) <= 1e-6 * scale), np.abs(model - expected).max()


def test_the_shares_theta_is_the_papers(rope64):
    """θᵢ = base^(−2i/head_dim) in degrees per character, fastest first, as speeds() reports it."""
    cfg = rope64.config
    hs = cfg.head_dim
    expected = np.degrees(cfg.rope_base ** (-2.0 * np.arange(hs // 2) / hs))
    ids = torch.zeros(cfg.block_size + 1, dtype=torch.long)
    got = speeds(rope64, ids, torch.tensor([0]))["theta_degrees"]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
