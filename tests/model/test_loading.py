"""model.load_model: our checkpoints and nanoGPT's, the same logits from the same weights, and every refusal.

The nanoGPT files are written here from nanoGPT's documented format (train.py saves model, model_args, iter_num,
best_val_loss, config; model.py names its parameters transformer.wte, transformer.h.N.attn.c_attn, ...), and
checked against a forward pass written here from nanoGPT's maths, which shares no code with model/gpt.py."""

import math
import pickle

import numpy as np
import pytest
import torch

from model.checkpoint import save_checkpoint
from model.errors import ModelFileError
from model.gpt import GPT, GPTConfig
from model.loading import LIMITS, load_model, num_params
from model.tokenizer import CharTokenizer

CHARS = "\n !',.:;?abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # 61 characters, as shakespeare_char's


def small_gpt(bias: bool, vocab_size: int, seed: int = 3) -> GPT:
    """A small GPT whose weights are float16 numbers, so our fp16 checkpoint keeps them exactly."""
    model = GPT(GPTConfig(vocab_size=vocab_size, block_size=32, n_layer=2, n_head=3, n_embd=24, bias=bias), seed=seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_((p + 0.05 * torch.randn(p.shape, generator=torch.Generator().manual_seed(p.numel()))).half())
    return model.eval()


def nanogpt_state(model: GPT, compiled: bool) -> dict:
    """The weights under nanoGPT's names (model.py: transformer.wte/wpe/h.N.ln_1/attn.c_attn/attn.c_proj/ln_2/
    mlp.c_fc/mlp.c_proj/ln_f, lm_head), as its train.py saves them."""
    ours = model.state_dict()
    cfg = model.config
    state = {"transformer.wte.weight": ours["tok_emb.weight"], "transformer.wpe.weight": ours["pos_emb.weight"]}
    parts = [("weight",), ("weight", "bias")][cfg.bias]
    for n in range(cfg.n_layer):
        for nano, mine in (("ln_1", "ln_1"), ("attn.c_attn", "attn.qkv"), ("attn.c_proj", "attn.proj"),
                           ("ln_2", "ln_2"), ("mlp.c_fc", "mlp.fc"), ("mlp.c_proj", "mlp.proj")):
            for part in parts:
                state[f"transformer.h.{n}.{nano}.{part}"] = ours[f"blocks.{n}.{mine}.{part}"]
    for part in parts:
        state[f"transformer.ln_f.{part}"] = ours[f"ln_f.{part}"]
    state["lm_head.weight"] = ours["lm_head.weight"]
    prefix = "_orig_mod." if compiled else ""  # torch.compile's wrapper names every parameter so
    return {prefix + k: v.clone() for k, v in state.items()}


def write_nanogpt(folder, model: GPT, compiled: bool = False, dataset: str = "shakespeare_char"):
    cfg = model.config
    ckpt = {
        "model": nanogpt_state(model, compiled),
        "optimizer": {"state": {}, "param_groups": []},
        "model_args": {"n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_embd": cfg.n_embd,
                       "block_size": cfg.block_size, "bias": cfg.bias, "vocab_size": cfg.vocab_size, "dropout": 0.0},
        "iter_num": 5000,
        "best_val_loss": torch.tensor(1.4697),
        "config": {"dataset": dataset, "n_layer": cfg.n_layer, "batch_size": 64, "compile": compiled},
    }
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, folder / "ckpt.pt")
    return folder / "ckpt.pt"


def write_meta(path, chars: str = CHARS) -> None:
    """nanoGPT's data/shakespeare_char/prepare.py: stoi, itos, vocab_size, pickled."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps({"vocab_size": len(chars), "itos": dict(enumerate(chars)),
                                   "stoi": {c: i for i, c in enumerate(chars)}}))


def nanogpt_forward(state: dict, args: dict, ids: list[int]) -> np.ndarray:
    """nanoGPT's GPT.forward in numpy float64, from its state dict: LayerNorm(eps 1e-5, optional bias), causal
    attention of n_head heads, exact GELU, lm_head on every position. -> logits (T, vocab_size)."""
    w = {k.removeprefix("_orig_mod."): v.double().numpy() for k, v in state.items()}
    C, nh, T = args["n_embd"], args["n_head"], len(ids)

    def ln(x, name):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * w[name + ".weight"] + w.get(name + ".bias", 0.0)

    def linear(x, name):
        return x @ w[name + ".weight"].T + w.get(name + ".bias", 0.0)

    gelu = np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))
    x = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][:T]
    for n in range(args["n_layer"]):
        h = f"transformer.h.{n}."
        q, k, v = np.split(linear(ln(x, h + "ln_1"), h + "attn.c_attn"), 3, axis=-1)
        q, k, v = (t.reshape(T, nh, C // nh).transpose(1, 0, 2) for t in (q, k, v))  # (nh, T, hs)
        att = q @ k.transpose(0, 2, 1) / math.sqrt(C // nh)
        att = np.where(np.tril(np.ones((T, T))) == 0, -np.inf, att)
        att = np.exp(att - att.max(-1, keepdims=True))
        y = (att / att.sum(-1, keepdims=True)) @ v  # (nh, T, hs)
        x = x + linear(y.transpose(1, 0, 2).reshape(T, C), h + "attn.c_proj")
        x = x + linear(gelu(linear(ln(x, h + "ln_2"), h + "mlp.c_fc")).astype(np.float64), h + "mlp.c_proj")
    return ln(x, "transformer.ln_f") @ w["lm_head.weight"].T


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("compiled", [False, True])
def test_nanogpt_checkpoint_gives_the_logits_of_the_same_weights_in_our_format(tmp_path, bias, compiled):
    model = small_gpt(bias, vocab_size=len(CHARS))
    ckpt = write_nanogpt(tmp_path / "out-shakespeare-char", model, compiled)
    write_meta(tmp_path / "data" / "shakespeare_char" / "meta.pkl")
    ours_path = tmp_path / "ours.pt"
    # Our format needs our vocabulary, whose id 0 is the unknown id: the same weights under it read id i as
    # CHARS[i - 1], so the comparison feeds both models the same ids.
    save_checkpoint(ours_path, model, CharTokenizer(CHARS[1:]), meta={"val_loss": 1.5})

    nano, tok, desc = load_model(ckpt)
    ours, _, ours_desc = load_model(ours_path)
    ids = tok.encode("to be, or not to be:\nthat is")
    assert not any(ids.unknown)
    idx = torch.tensor([list(ids)])
    with torch.no_grad():
        got, expected = nano(idx)[0][0], ours(idx)[0][0]
    assert torch.equal(got, expected)
    written = torch.load(ckpt, weights_only=True)
    reference = nanogpt_forward(written["model"], written["model_args"], list(ids))
    np.testing.assert_allclose(got.double().numpy(), reference, atol=2e-5, rtol=0)
    assert (desc.format, desc.position, desc.n_layer, desc.n_head, desc.n_embd, desc.vocab_size) == \
        ("nanogpt", "learned", 2, 3, 24, len(CHARS))
    assert desc.name == "out-shakespeare-char" and desc.val_loss == pytest.approx(1.4697)
    assert (ours_desc.format, ours_desc.val_loss, ours.config.bias) == ("heads-positions", 1.5, bias)


def test_meta_is_found_beside_the_checkpoint_or_given(tmp_path):
    model = small_gpt(True, vocab_size=len(CHARS))
    ckpt = write_nanogpt(tmp_path / "out", model, dataset="elsewhere")
    with pytest.raises(ModelFileError, match="no meta.pkl"):
        load_model(ckpt)
    write_meta(tmp_path / "given.pkl")
    assert load_model(ckpt, meta=tmp_path / "given.pkl").tokenizer.chars == list(CHARS)
    write_meta(tmp_path / "out" / "meta.pkl")
    assert load_model(ckpt).tokenizer.chars == list(CHARS)


def test_a_character_outside_a_nanogpt_vocabulary_is_read_as_a_space_and_flagged(tmp_path):
    write_nanogpt(tmp_path, small_gpt(True, vocab_size=len(CHARS)))
    write_meta(tmp_path / "meta.pkl")
    tok = load_model(tmp_path / "ckpt.pt").tokenizer
    enc = tok.encode("a明 b")
    assert list(enc) == [CHARS.index("a"), CHARS.index(" "), CHARS.index(" "), CHARS.index("b")]
    assert enc.unknown == [False, True, False, False]
    assert tok.token(CHARS.index("a")) == "a" and tok.vocab_size == len(CHARS)


def test_a_meta_pkl_with_a_reduce_payload_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return open, (str(marker), "w")  # would create the file when unpickled

    write_nanogpt(tmp_path, small_gpt(True, vocab_size=len(CHARS)))
    (tmp_path / "meta.pkl").write_bytes(pickle.dumps({"stoi": {}, "itos": {}, "vocab_size": 0, "x": Payload()}))
    with pytest.raises(ModelFileError, match=r"meta.pkl: refused, a meta.pkl must be plain data: it names "
                                             r"(io|builtins)\.open"):
        load_model(tmp_path / "ckpt.pt")
    assert not marker.exists()
    pickle.loads((tmp_path / "meta.pkl").read_bytes())  # the same bytes, unpickled as usual, do run it
    assert marker.exists()


class Unsafe:
    """An object torch.save pickles by its class: weights_only refuses to build it."""


def test_files_that_are_neither_format_are_refused_with_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("not a checkpoint")
    torch.save({"state_dict": {}}, tmp_path / "other.pt")
    torch.save({"model": Unsafe(), "model_args": {}}, tmp_path / "objects.pt")
    for path, reason in ((tmp_path / "notes.txt", "not a PyTorch checkpoint"),
                         (tmp_path / "objects.pt", f"refused: it holds {Unsafe.__module__}.Unsafe, an object "),
                         (tmp_path / "other.pt", "neither a heads-positions checkpoint"),
                         (tmp_path / "missing.pt", "no such file")):
        with pytest.raises(ModelFileError) as error:
            load_model(path)
        assert str(error.value).startswith(f"{path}: {reason}") and "\n" not in str(error.value)


def test_a_gpt2_bpe_checkpoint_without_a_character_vocabulary_is_refused(tmp_path):
    torch.save({"model": {}, "model_args": {"n_layer": 12, "n_head": 12, "n_embd": 768, "block_size": 1024,
                                            "bias": True, "vocab_size": 50304}, "config": {"dataset": "openwebtext"}},
               tmp_path / "ckpt.pt")
    with pytest.raises(ModelFileError, match="GPT-2 BPE model"):
        load_model(tmp_path / "ckpt.pt")


@pytest.mark.parametrize("field, value, named", [("n_layer", LIMITS.n_layer + 1, "layers"),
                                                 ("n_head", LIMITS.n_head * 2, "heads"),
                                                 ("n_embd", LIMITS.n_embd * 2, "width"),
                                                 ("block_size", LIMITS.block_size + 1, "context")])
def test_a_model_past_the_limits_is_refused_before_it_is_built(tmp_path, field, value, named):
    args = {"n_layer": 2, "n_head": 2, "n_embd": 32, "block_size": 32, "bias": True, "vocab_size": len(CHARS),
            field: value}
    torch.save({"model": {"transformer.wte.weight": torch.zeros(len(CHARS), args["n_embd"])}, "model_args": args,
                "config": {}}, tmp_path / "ckpt.pt")
    write_meta(tmp_path / "meta.pkl")
    with pytest.raises(ModelFileError, match=f"{value:,} {named}.* past this server's limit"):
        load_model(tmp_path / "ckpt.pt")


def test_nanogpt_shakespeare_char_is_within_the_limits(tmp_path):
    """6 layers x 6 heads x 384, block 256, vocab 65, as nanoGPT's config/train_shakespeare_char.py trains it."""
    chars = CHARS + "&-$3"
    model = GPT(GPTConfig(vocab_size=65, block_size=256, n_layer=6, n_head=6, n_embd=384, bias=False)).eval()
    write_nanogpt(tmp_path, model)
    write_meta(tmp_path / "meta.pkl", chars)
    loaded, tok, desc = load_model(tmp_path / "ckpt.pt")
    assert (desc.n_layer, desc.n_head, desc.n_embd, desc.block_size, desc.vocab_size) == (6, 6, 384, 256, 65)
    assert desc.params <= LIMITS.params


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("position", ["learned", "rope", "none"])
def test_the_parameter_count_checked_before_building_is_the_models(bias, position):
    cfg = GPTConfig(vocab_size=65, block_size=40, n_layer=3, n_head=2, n_embd=16, bias=bias, position=position)
    assert num_params(cfg) == GPT(cfg).num_params()


def test_a_file_whose_config_would_be_past_the_parameter_limit_is_refused_before_it_is_built(tmp_path):
    # Within every other limit (12 x 768, block 1024): GPT-2 small's blocks alone are 85 M parameters.
    args = {"n_layer": 12, "n_head": 12, "n_embd": 768, "block_size": 1024, "bias": True, "vocab_size": len(CHARS)}
    torch.save({"model": {"transformer.wte.weight": torch.zeros(1)}, "model_args": args, "config": {}},
               tmp_path / "ckpt.pt")
    write_meta(tmp_path / "meta.pkl")
    with pytest.raises(ModelFileError, match="parameters is past this server's limit of 30,000,000"):
        load_model(tmp_path / "ckpt.pt")
