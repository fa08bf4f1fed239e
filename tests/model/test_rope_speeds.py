"""RoPE's pair shares and the band switch: the shares add up to the score the model computes, in every head; a band
stops its pairs and nothing else; an empty band is the model exactly."""

import copy

import pytest
import torch

from model.assets import WEIGHTS_DIR, checkpoint_path
from model.checkpoint import load_checkpoint
from model.gpt import GPT, GPTConfig
from model.poems import load_text
from model.rope import rope_angles
from model.rope_speeds import BANDS, band_effect, band_pairs, layer_qk, pair_shares, speeds
from model.tokenizer import CharTokenizer
from model.windows import window_offsets, windows


@pytest.fixture(scope="module")
def val_ids():
    return torch.tensor(CharTokenizer.load(WEIGHTS_DIR / "vocab.json").encode(load_text("val")))


@pytest.fixture(scope="module")
def rope():
    return load_checkpoint(checkpoint_path("rope"))[0]


@pytest.fixture(scope="module")
def rope64(rope):
    """The trained RoPE model in float64, its angles taken again in float64 (as app/services/twins.py does)."""
    model = copy.deepcopy(rope).double()
    cfg = model.config
    angles = rope_angles(torch.arange(cfg.max_positions), cfg.head_dim, cfg.rope_base)
    model.rope_cos, model.rope_sin = angles.cos(), angles.sin()
    return model


def test_bands_are_quarters_fastest_first():
    assert band_pairs("fastest", 16).nonzero().flatten().tolist() == [0, 1, 2, 3]
    assert band_pairs("middle", 16).nonzero().flatten().tolist() == [6, 7, 8, 9]
    assert band_pairs("slowest", 16).nonzero().flatten().tolist() == [12, 13, 14, 15]
    assert not band_pairs(None, 16).any()


@pytest.mark.parametrize("band", [None, *BANDS])
def test_pair_shares_sum_to_the_score_in_every_head(rope64, val_ids, band):
    x, _ = windows(val_ids, window_offsets(len(val_ids), 128, 128, 2), 128)  # (2, 128)
    off = band_pairs(band, rope64.config.head_dim // 2)
    trace = rope64.trace(x, pairs_off=off)
    shares = pair_shares(rope64, x, off)
    causal = torch.ones(128, 128, dtype=torch.bool).tril()
    assert len(shares) == rope64.config.n_layer
    for s, scores in zip(shares, trace.scores):
        assert s.dtype == torch.float64 and s.shape == (2, 4, 16, 128, 128)
        total = s.sum(2)  # (B, nh, T, T)
        assert torch.allclose(total[..., causal], scores[..., causal], rtol=0, atol=1e-10)


def test_a_stopped_pair_gives_the_plain_dot_product(rope64, val_ids):
    """θᵢ = 0: the pair's share is q_m · k_n / √head_dim at every distance; pairs outside the band are untouched.
    Layer 1 reads tok_emb alone (RoPE writes nothing into the stream), so its q and k are the same either way."""
    x, _ = windows(val_ids, window_offsets(len(val_ids), 128, 128, 1), 128)
    stopped = pair_shares(rope64, x, band_pairs("fastest", 16))[0][0]  # layer 1: (nh, P, T, T)
    turning = pair_shares(rope64, x)[0][0]
    q, k = layer_qk(rope64, x)[1][0]  # (1, nh, T, hs) each, before rotation
    plain = torch.einsum("hmpc,hnpc->hpmn", q[0].unflatten(-1, (16, 2)), k[0].unflatten(-1, (16, 2))) / 32 ** 0.5
    assert torch.allclose(stopped[:, :4], plain[:, :4], rtol=0, atol=1e-12)
    assert torch.equal(stopped[:, 4:], turning[:, 4:])
    assert not torch.allclose(turning[:, :4], plain[:, :4], atol=1e-3)


def test_an_empty_band_is_the_model_exactly(rope, val_ids):
    x, _ = windows(val_ids, window_offsets(len(val_ids), 128, 128, 4), 128)
    plain, empty = rope.trace(x), rope.trace(x, pairs_off=torch.zeros(16, dtype=torch.bool))
    assert torch.equal(plain.logits, empty.logits)
    for a, b in zip(plain.attention + plain.residual, empty.attention + empty.residual):
        assert torch.equal(a, b)
    assert torch.equal(rope.trace(x, pairs_off=band_pairs("fastest", 16)).attention[0][:, :, 0], plain.attention[0][
        :, :, 0])  # the first query sees only itself: angle 0 either way
    assert not torch.equal(rope.trace(x, pairs_off=band_pairs("fastest", 16)).logits, plain.logits)


def test_the_band_switch_changes_no_weight(rope, val_ids):
    before = {k: v.clone() for k, v in rope.state_dict().items()}
    band_effect(rope, val_ids, window_offsets(len(val_ids), 128, 128, 2), "fastest")
    assert all(torch.equal(before[k], v) for k, v in rope.state_dict().items())


def test_pairs_off_needs_rope():
    model = GPT(GPTConfig(vocab_size=10, block_size=8, n_layer=1, n_head=2, n_embd=8))
    with pytest.raises(AssertionError, match="rope"):
        model.trace(torch.zeros(1, 4, dtype=torch.long), pairs_off=torch.zeros(2, dtype=torch.bool))


def test_speeds_are_the_means_of_the_pair_shares(rope64, val_ids):
    """speeds() takes a faster path (turned q and k, one matmul with the pattern): its figures equal the means
    of pair_shares' full (pairs, T, T) tensor."""
    offsets = window_offsets(len(val_ids), 128, 128, 3)
    got = speeds(rope64, val_ids, offsets)
    x, _ = windows(val_ids, offsets, 128)
    trace = rope64.trace(x)
    for layer, (s, pattern) in enumerate(zip(pair_shares(rope64, x), trace.attention)):
        d0 = s.diagonal(dim1=-2, dim2=-1).mean((0, -1))  # (nh, P)
        d1 = s.diagonal(offset=-1, dim1=-2, dim2=-1).mean((0, -1))
        attended = (s * pattern[:, :, None]).sum(-1).mean((0, -1))
        for h, head in enumerate(got["layers"][layer]["heads"]):
            assert head["distance_0"] == pytest.approx(d0[h].tolist(), rel=1e-9, abs=1e-12)
            assert head["distance_1"] == pytest.approx(d1[h].tolist(), rel=1e-9, abs=1e-12)
            assert head["attended"] == pytest.approx(attended[h].tolist(), rel=1e-9, abs=1e-12)
    assert got["theta_degrees"][0] == pytest.approx(57.29577951308232) and got["windows"] == 3


def test_stopping_the_fastest_pairs_costs_more_than_the_slowest(rope, val_ids):
    """Barbero et al.'s finding on our model (20 windows): the slowest quarter hardly turns within 128 characters,
    so stopping it changes the loss by less than 1e-3; the fastest quarter carries the previous-character head."""
    offsets = window_offsets(len(val_ids), 128, 128, 20)
    on, fast, slow = (band_effect(rope, val_ids, offsets, band) for band in (None, "fastest", "slowest"))
    assert abs(slow["val_loss"] - on["val_loss"]) < 1e-3 < fast["val_loss"] - on["val_loss"]
    assert fast["pairs"] == [0, 1, 2, 3] and on["pairs"] == []
    assert on["previous"][1][3] > 0.4 > 0.2 > fast["previous"][1][3]
