"""The operator's models (`serve --model`, HP_MODELS): listed by /api/options, chosen by a request's `model` field,
and answering compare, its verdict, ablate, relative and rope as the same model run directly."""

import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from fastapi.testclient import TestClient
from reference_gpt import ReferenceGPT

from app.main import create_app
from app.settings import Settings, model_specs
from model.checkpoint import save_checkpoint
from model.gpt import GPT, GPTConfig
from model.loading import load_model
from model.tokenizer import CharTokenizer

CLI = Path(sys.executable).with_name("heads-positions")
CHARS = "\n !',.:;?abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def nanogpt_file(folder: Path, model: GPT) -> Path:
    """model's weights as nanoGPT's train.py saves them (names of its model.py), with its meta.pkl beside."""
    state = {}
    for name, tensor in model.state_dict().items():
        for ours, theirs in (("tok_emb.", "transformer.wte."), ("pos_emb.", "transformer.wpe."),
                             ("ln_f.", "transformer.ln_f."), ("blocks.", "transformer.h.")):
            name = theirs + name.removeprefix(ours) if name.startswith(ours) else name
        for ours, theirs in ((".attn.qkv.", ".attn.c_attn."), (".attn.proj.", ".attn.c_proj."),
                             (".mlp.fc.", ".mlp.c_fc."), (".mlp.proj.", ".mlp.c_proj.")):
            name = name.replace(ours, theirs)
        state["_orig_mod." + name] = tensor.clone()
    cfg = model.config
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({"model": state, "model_args": {"n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_embd": cfg.n_embd,
                                               "block_size": cfg.block_size, "bias": cfg.bias,
                                               "vocab_size": cfg.vocab_size, "dropout": 0.0},
                "iter_num": 250, "best_val_loss": torch.tensor(2.25), "config": {"dataset": "shakespeare_char"}},
               folder / "ckpt.pt")
    (folder / "meta.pkl").write_bytes(pickle.dumps({"vocab_size": len(CHARS), "itos": dict(enumerate(CHARS)),
                                                    "stoi": {c: i for i, c in enumerate(CHARS)}}))
    return folder / "ckpt.pt"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    ours = GPT(GPTConfig(vocab_size=len(CHARS), block_size=64, n_layer=3, n_head=2, n_embd=32, position="rope"), 5)
    save_checkpoint(root / "heads8.pt", ours, CharTokenizer(CHARS[1:]), meta={"val_loss": 2.5})
    nano = GPT(GPTConfig(vocab_size=len(CHARS), block_size=64, n_layer=6, n_head=6, n_embd=48, bias=False), 7)
    return {"mine": root / "heads8.pt", "shakespeare": nanogpt_file(root / "out-shakespeare-char", nano)}


@pytest.fixture(scope="module")
def client(files):
    settings = Settings(models=f"mine={files['mine']},shakespeare={files['shakespeare']}")
    with TestClient(create_app(settings)) as c:
        yield c


@pytest.fixture(scope="module")
def direct(files):
    return {name: load_model(path) for name, path in files.items()}


def test_two_models_are_listed_in_options_with_their_description(client):
    models = client.get("/api/options").json()["models"]
    assert [m["name"] for m in models] == ["mine", "shakespeare"]
    mine, nano = models
    assert (mine["format"], mine["position"], mine["n_layer"], mine["n_head"], mine["n_embd"], mine["val_loss"]) == \
        ("heads-positions", "rope", 3, 2, 32, 2.5)
    assert (nano["format"], nano["position"], nano["n_layer"], nano["n_head"], nano["head_dim"], nano["vocab_size"],
            nano["val_loss"]) == ("nanogpt", "learned", 6, 6, 8, len(CHARS), 2.25)
    # The lesson's lines are Chinese, which neither vocabulary holds: two lines of characters it knows instead.
    assert nano["lines"] == ["the dog bit the man", "the man bit the dog"] and nano["lesson_lines"] is False


@pytest.mark.parametrize("name", ["mine", "shakespeare"])
def test_a_compare_on_each_model_equals_the_model_run_directly(client, direct, name):
    line_a, line_b = "to be, or not", "or not to be,"
    body = client.post("/api/compare", json={"model": name, "line_a": line_a, "line_b": line_b}).json()
    model, tok, _ = direct[name]
    cfg = model.config
    assert body["model"]["name"] == name and body["model"]["position"] == cfg.position
    assert (body["model"]["n_layer"], body["model"]["n_head"]) == (cfg.n_layer, cfg.n_head)
    for line, answer in zip((line_a, line_b), body["lines"]):
        ids = tok.encode(line)
        assert answer["ids"] == list(ids)
        trace = model.trace(torch.tensor([list(ids)]))
        np.testing.assert_allclose(np.array(answer["attention"]), torch.stack(trace.attention)[:, 0].numpy(),
                                   atol=1e-5)
        probs = torch.softmax(trace.logits[0, -1].double(), -1)
        top = torch.topk(probs, 5)
        assert [t["token"] for t in answer["top_next"]] == [tok.token(i) for i in top.indices.tolist()]
        np.testing.assert_allclose([t["prob"] for t in answer["top_next"]], top.values.numpy(), atol=1e-5)
    # The table by depth comes from untrained models of this model's vocabulary and width.
    assert [d["n_layer"] for d in body["by_depth"]] == [1, 2, 3]


@pytest.mark.parametrize("name", ["mine", "shakespeare"])
def test_the_verdict_on_each_model_agrees_with_an_independent_float64_run(client, direct, name):
    # The same characters in another order, the same last one, no mask: without positions the last output is the
    # same in exact arithmetic, so float32 cannot decide that gap and the verdict reruns the model's float64 twin.
    line_a, line_b = "to be or", "be to or"
    verdict = client.post("/api/compare/verdict", json={"model": name, "line_a": line_a, "line_b": line_b,
                                                        "causal": False})
    assert verdict.status_code == 200, verdict.text
    gaps = verdict.json()["difference"]
    model, tok, _ = direct[name]
    if model.config.bias:
        reference = ReferenceGPT(model)

        def last(line, flag):
            return reference.run(list(tok.encode(line)), causal=False, use_position=flag)[0][-1]
    else:  # ReferenceGPT reads biases: the same weights in a float64 GPT of this config instead
        twin = GPT(model.config).double()
        twin.load_state_dict(model.state_dict())

        def last(line, flag):
            ids = torch.tensor([list(tok.encode(line))])
            return twin.trace(ids, causal=False, use_position=flag).logits[0, -1].numpy()
    for flag, key, judged in ((True, "with_position", "real"), (False, "without_position", "rounding")):
        gap = float(np.abs(last(line_a, flag) - last(line_b, flag)).max())
        assert gaps[key]["difference"] == judged, gaps
        if judged == "real":
            assert gaps[key]["gap"] == pytest.approx(gap, abs=1e-6)  # float32 against float64
        else:
            assert gap < 1e-12 and gaps[key]["gap64"] < 1e-12


@pytest.mark.parametrize("name", ["mine", "shakespeare"])
def test_an_ablation_on_each_model_equals_the_model_run_directly(client, direct, name):
    model, tok, _ = direct[name]
    cfg = model.config
    off = [{"layer": cfg.n_layer, "head": cfg.n_head}]
    body = client.post("/api/ablate", json={"model": name, "line": "to be, or not", "off": off}).json()
    mask = torch.zeros(cfg.n_layer, cfg.n_head, dtype=torch.bool)
    mask[-1, -1] = True
    ids = torch.tensor([list(tok.encode("to be, or not"))])
    for key, heads_off in (("all_on", None), ("ablated", mask)):
        logp = torch.log_softmax(model.trace(ids, heads_off=heads_off).logits[0].double(), -1)
        loss = -logp[:-1].gather(1, ids[0, 1:, None])[:, 0]
        np.testing.assert_allclose(body[key]["loss"], loss.numpy(), atol=1e-4)
    assert body["off"] == off and body["model"]["name"] == name


def test_relative_and_rope_follow_the_named_model(client, direct):
    rel = client.post("/api/relative", json={"model": "mine", "first": "a", "second": "b", "distance": 3}).json()
    assert list(rel["scores"]) == ["rope"] and max(rel["starts"]) + 3 < 128
    assert len(rel["scores"]["rope"]) == 3 and len(rel["scores"]["rope"][0]) == 2
    rope = client.get("/api/rope", params={"model": "mine", "positions": "0,1"}).json()
    assert (rope["head_dim"], len(rope["theta"])) == (16, 8)


@pytest.mark.parametrize("body, field, says", [
    ({"model": "nobody"}, "model", "no model is served under the name 'nobody'"),
    ({"model": "mine", "position": "learned"}, "position", "model 'mine' is a 'rope' model"),
    ({"model": "mine", "weights": "random"}, "weights", "model 'mine' is trained weights"),
    ({"model": "shakespeare", "n_head": 4}, "n_head", "model 'shakespeare' have n_layer 6 and n_head 6"),
    ({"model": "../etc"}, "model", "String should match pattern"),
])
def test_a_bad_model_field_is_a_422_naming_the_field(client, body, field, says):
    answer = client.post("/api/compare", json=body)
    assert answer.status_code == 422
    detail = answer.json()["detail"][0]
    assert detail["loc"][-1] == field and says in detail["msg"]


def test_an_ablated_head_the_model_lacks_is_named(client):
    answer = client.post("/api/ablate", json={"model": "mine", "off": [{"layer": 4, "head": 1}]})
    assert answer.status_code == 422 and answer.json()["detail"][0]["loc"] == ["body", "off", 0, "layer"]


def test_model_entries_read_as_the_help_says():
    specs = model_specs("a=x.pt, out/ckpt.pt,meta=m.pkl ,b=y.pt,meta=z.pkl")
    assert [(s.name, str(s.path), s.meta and str(s.meta)) for s in specs] == \
        [("a", "x.pt", None), ("out", "out/ckpt.pt", "m.pkl"), ("b", "y.pt", "z.pkl")]


@pytest.mark.parametrize("text, says", [("a=x.pt,a=y.pt", "the name 'a' is given twice"),
                                        ("meta=m.pkl", "meta= follows the checkpoint"),
                                        ("my model=x.pt", "a model's name is 1 to 40")])
def test_a_bad_model_entry_is_named(text, says):
    with pytest.raises(ValueError, match=says):
        model_specs(text)


def serve(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`heads-positions serve` as the README starts it; these runs end before it listens."""
    return subprocess.run([CLI, "serve", "--port", "0", *args], env={**os.environ, **(env or {})},
                          capture_output=True, text=True, timeout=120)


def text_file(folder: Path) -> Path:
    (folder / "notes.txt").write_text("hello")
    return folder / "notes.txt"


def other_dict(folder: Path) -> Path:
    torch.save({"weights": {}}, folder / "w.pt")
    return folder / "w.pt"


def gpt2_bpe(folder: Path) -> Path:
    torch.save({"model": {}, "model_args": {"vocab_size": 50304}, "config": {"dataset": "openwebtext"}},
               folder / "ckpt.pt")
    return folder / "ckpt.pt"


def too_deep(folder: Path) -> Path:
    save_checkpoint(folder / "deep.pt", GPT(GPTConfig(vocab_size=5, n_layer=13, n_head=1, n_embd=8)),
                    CharTokenizer("abcd"))
    return folder / "deep.pt"


@pytest.mark.slow  # each starts the command, which opens the files in a process of its own
@pytest.mark.parametrize("make, says", [
    (text_file, "not a PyTorch checkpoint"), (other_dict, "neither a heads-positions checkpoint"),
    (gpt2_bpe, "a GPT-2 BPE model"), (too_deep, "13 layers is past this server's limit"),
])
def test_a_file_that_cannot_be_served_stops_serve_with_one_line_and_exit_2(tmp_path, make, says):
    path = make(tmp_path)
    for args, env in ((["--model", f"x={path}"], None), ([], {"HP_MODELS": str(path)})):
        done = serve(*args, env=env)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0] and says in lines[0], done.stderr


@pytest.mark.slow
def test_a_name_given_twice_stops_serve_before_it_opens_the_files(tmp_path):
    done = serve("--model", "a=x.pt", env={"HP_MODELS": "a=y.pt"})
    assert done.returncode == 2 and "HP_MODELS (or --model) 'a=y.pt': the name 'a' is given twice" in done.stderr


@pytest.mark.slow
def test_a_meta_pkl_with_a_payload_stops_serve_without_running_it(tmp_path, files):
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return open, (str(marker), "w")

    (tmp_path / "meta.pkl").write_bytes(pickle.dumps({"itos": {}, "stoi": {}, "x": Payload()}))
    done = serve("--model", f"s={files['shakespeare']},meta={tmp_path / 'meta.pkl'}")
    assert done.returncode == 2 and "must be plain data" in done.stderr and not marker.exists()
