import copy

import pytest
import torch
import torch.nn.functional as F

from model import GPT, GPTConfig
from model.gpt import attention

A_LINE, B_LINE = "白日依山尽", "山依日白尽"


def tiny(position="learned", n_layer=1, n_head=4, n_embd=32, seed=0, **kw):
    cfg = GPTConfig(vocab_size=20, n_layer=n_layer, n_head=n_head, n_embd=n_embd, position=position, **kw)
    return GPT(cfg, seed=seed).eval()


def ids(text):
    # A fixed mapping for the lesson's characters; the model only needs distinct ids.
    table = {c: i + 1 for i, c in enumerate("白日依山尽明月")}
    return torch.tensor([[table[c] for c in text]])


def last_diff(model, use_position, causal=True):
    a = model.trace(ids(A_LINE), use_position=use_position, causal=causal).logits[0, -1]
    b = model.trace(ids(B_LINE), use_position=use_position, causal=causal).logits[0, -1]
    return (a - b).abs().max().item()


@pytest.mark.parametrize("position", ["learned", "rope", "none"])
def test_attention_rows_sum_to_one_and_future_is_exactly_zero(position):
    trace = tiny(position, n_layer=2).trace(ids(A_LINE))
    assert len(trace.attention) == 2
    for pattern in trace.attention:
        assert pattern.shape == (1, 4, 5, 5)
        torch.testing.assert_close(pattern.sum(-1), torch.ones(1, 4, 5))
        assert (pattern.triu(1) == 0).all()
    assert [r.shape for r in trace.residual] == [(1, 5, 32)] * 2


def test_explicit_attention_equals_fused_kernel():
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 4, 7, 8, generator=gen) for _ in range(3))
    y, _, _ = attention(q, k, v, causal=True)
    torch.testing.assert_close(y, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    y, _, _ = attention(q, k, v, causal=False)
    torch.testing.assert_close(y, F.scaled_dot_product_attention(q, k, v, is_causal=False))


def test_forward_returns_logits_and_loss():
    model = tiny()
    logits, loss = model(ids(A_LINE))
    assert logits.shape == (1, 5, 20) and loss is None
    _, loss = model(ids(A_LINE), targets=ids(B_LINE))
    assert loss.item() == pytest.approx(F.cross_entropy(logits[0], ids(B_LINE)[0]).item(), rel=1e-5)
    torch.testing.assert_close(model.trace(ids(A_LINE)).logits, logits)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_without_positions_one_layer_is_blind_to_order_two_layers_are_not(seed):
    assert last_diff(tiny("none", n_layer=1, seed=seed), True) < 1e-5
    assert last_diff(tiny("none", n_layer=2, seed=seed), True) > 1e-4


@pytest.mark.parametrize("position", ["learned", "rope"])
def test_positions_let_one_layer_tell_the_lines_apart(position):
    model = tiny(position, n_layer=1)
    assert last_diff(model, use_position=True) > 1e-5
    assert last_diff(model, use_position=False) < 1e-5


@pytest.mark.parametrize("n_layer", [1, 2, 3])
def test_without_mask_and_positions_every_depth_is_blind_to_order(n_layer):
    model = tiny("none", n_layer=n_layer)
    assert last_diff(model, True, causal=False) < 1e-5
    assert last_diff(model, True, causal=True) > 1e-4 or n_layer == 1


def test_use_position_false_equals_zeroed_pos_emb_without_touching_weights():
    model = tiny("learned", n_layer=2)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    zeroed = copy.deepcopy(model)
    with torch.no_grad():
        zeroed.pos_emb.weight.zero_()  # what the lesson does
    got = model(ids(A_LINE), use_position=False)[0]
    assert torch.equal(got, zeroed(ids(A_LINE))[0])
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), f"{k} changed during inference"


def test_rope_logits_do_not_depend_on_start_but_learned_do():
    rope, learned = tiny("rope", n_layer=2), tiny("learned", n_layer=2)
    torch.testing.assert_close(rope(ids(A_LINE), start=0)[0], rope(ids(A_LINE), start=40)[0], rtol=1e-5, atol=1e-5)
    assert not torch.allclose(learned(ids(A_LINE), start=0)[0], learned(ids(A_LINE), start=40)[0])


def test_same_seed_same_weights_whatever_the_global_rng():
    torch.manual_seed(123)
    a = tiny(seed=7)
    torch.manual_seed(999)
    torch.rand(10)
    b = tiny(seed=7)
    c = tiny(seed=8)
    for (name, pa), pb in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(pa, pb), name
    assert not torch.equal(a.tok_emb.weight, c.tok_emb.weight)


def test_parameter_names_follow_the_lesson():
    names = dict(tiny().named_parameters())
    for name in ["tok_emb.weight", "pos_emb.weight", "blocks.0.attn.qkv.weight", "blocks.0.attn.qkv.bias",
                 "blocks.0.attn.proj.weight", "blocks.0.attn.proj.bias", "ln_f.weight"]:
        assert name in names
    assert tiny().pos_emb.weight.shape == (128, 32)
    assert not hasattr(tiny("rope"), "pos_emb") and not hasattr(tiny("none"), "pos_emb")


def test_learned_rejects_positions_past_the_table():
    model = tiny("learned")
    with pytest.raises(ValueError, match="128"):
        model(torch.zeros(1, 129, dtype=torch.long))
    with pytest.raises(ValueError, match="128"):
        model(ids(A_LINE), start=124)
    tiny("rope")(torch.zeros(1, 200, dtype=torch.long))


@pytest.mark.parametrize("kwargs, field", [
    ({"n_embd": 30, "n_head": 4}, "n_embd"),
    ({"n_embd": 12, "n_head": 4, "position": "rope"}, "head_dim"),
    ({"n_layer": 0}, "n_layer"),
    ({"vocab_size": 0}, "vocab_size"),
    ({"block_size": -1}, "block_size"),
    ({"n_head": 0}, "n_head"),
    ({"position": "sinusoidal"}, "position"),
    ({"dropout": 1.5}, "dropout"),
])
def test_bad_config_raises_value_error_naming_the_field(kwargs, field):
    base = {"vocab_size": 10, "n_embd": 32, "n_head": 4}
    with pytest.raises(ValueError, match=field):
        GPTConfig(**{**base, **kwargs})


def test_config_is_frozen():
    cfg = GPTConfig(vocab_size=10)
    with pytest.raises(AttributeError):
        cfg.n_layer = 3


@pytest.mark.parametrize("position", ["learned", "rope", "none"])
def test_one_batch_can_mix_rows_with_and_without_positions(position):
    model = tiny(position, n_layer=2)
    both = torch.cat([ids(A_LINE), ids(A_LINE)])
    mixed = model.trace(both, use_position=torch.tensor([True, False]))
    torch.testing.assert_close(mixed.logits[0], model.trace(ids(A_LINE)).logits[0], rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(mixed.logits[1], model.trace(ids(A_LINE), use_position=False).logits[0],
                               rtol=1e-6, atol=1e-6)


def test_logits_at_computes_the_head_only_where_asked():
    model = tiny("rope", n_layer=2)
    x = torch.cat([ids(A_LINE), ids(B_LINE)])
    full = model.trace(x).logits
    picked = model.trace(x, logits_at=torch.tensor([4, 2])).logits
    assert picked.shape == (2, 1, 20)
    torch.testing.assert_close(picked[:, 0], torch.stack([full[0, 4], full[1, 2]]))


def test_right_padding_leaves_earlier_positions_unchanged_under_the_causal_mask():
    model = tiny("learned", n_layer=2)
    short = ids("白日依")
    padded = torch.cat([short, torch.zeros(1, 2, dtype=torch.long)], dim=1)
    a, b = model.trace(short), model.trace(padded)
    torch.testing.assert_close(b.logits[:, :3], a.logits, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(b.attention[1][..., :3, :3], a.attention[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("position", ["learned", "rope"])
def test_explicit_positions_place_tokens_apart(position):
    """positions replaces start..start+T-1: contiguous ones give the same bits; two tokens d apart with nothing
    between them see each other at distance d (RoPE's score then depends on d alone, learned's on where)."""
    model = tiny(position)
    x = ids("白日")
    assert torch.equal(model.trace(x, start=7).logits, model.trace(x, positions=[7, 8]).logits)
    apart = [model.trace(x, positions=[s, s + 5]).scores[0][0, :, 1, 0] for s in (0, 40, 90)]
    same = all(torch.allclose(apart[0], a, atol=1e-5) for a in apart[1:])
    assert same == (position == "rope")
    with pytest.raises(ValueError, match="grew beyond"):
        model.trace(x, positions=[0, model.config.max_positions])
