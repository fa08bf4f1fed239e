"""The shipped checkpoints and results: they load, match what they record, and beat a unigram model."""

import json
from pathlib import Path

import pytest
import torch

from model.checkpoint import load_checkpoint, load_training_state, save_checkpoint
from model.corpus import VOCAB_PATH, load_vocab
from model.gpt import GPT, GPTConfig
from model.poems import load_info, load_text
from model.tokenizer import CharTokenizer
from model.train import evaluate, window_offsets

WEIGHTS = Path(VOCAB_PATH).parent
POSITIONS = ("learned", "rope", "none")
# The entropy of the training text's characters is 6.6 nats: what a model without context achieves.
BEATS_UNIGRAM = 6.0
RESULTS = json.loads((WEIGHTS / "training.json").read_text(encoding="utf-8"))["runs"]


@pytest.fixture(scope="module")
def val_ids() -> torch.Tensor:
    return torch.tensor(load_vocab().encode(load_text("val")))


@pytest.mark.parametrize("position", POSITIONS)
def test_shipped_checkpoint_reproduces_its_val_loss(position, val_ids):
    model, tokenizer, meta = load_checkpoint(WEIGHTS / f"{position}.pt")
    cfg = model.config
    assert (cfg.position, cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.block_size) == (position, 2, 4, 128, 128)
    assert tokenizer.chars == load_vocab().chars
    assert load_training_state(WEIGHTS / f"{position}.pt") is None  # shipped without the optimizer
    slice_ = meta["val_slice"]
    assert slice_["sha256"] == load_info()["val"]["sha256"]
    offsets = window_offsets(len(val_ids), cfg.block_size, slice_["stride"])
    assert len(offsets) == slice_["windows"] and slice_["window"] == cfg.block_size + 1
    check = meta["check"]
    assert evaluate(model, val_ids, offsets[: check["windows"]]) == pytest.approx(check["val_loss"], abs=1e-3)
    assert meta["val_loss"] < BEATS_UNIGRAM


def test_shipped_files_stay_small():
    assert sum((WEIGHTS / f"{p}.pt").stat().st_size for p in POSITIONS) <= 20_000_000


def test_results_cover_both_exercises_with_one_budget():
    by_exercise = {e: {(r["position"], r["n_head"]) for r in RESULTS if e in r["exercise"]} for e in ("2", "3")}
    assert by_exercise["3"] == {("learned", 4), ("rope", 4), ("none", 4)}
    assert by_exercise["2"] == {("learned", 1), ("learned", 4), ("learned", 8)}
    assert len({r["steps"][-1] for r in RESULTS}) == 1 and RESULTS[0]["steps"][-1] >= 1000
    assert all("--seed 0 " in r["command"] for r in RESULTS)
    assert all(r["final_val_loss"] < BEATS_UNIGRAM for r in RESULTS)
    shipped = {p: load_checkpoint(WEIGHTS / f"{p}.pt")[2]["val_loss"] for p in POSITIONS}
    assert {r["position"]: r["final_val_loss"] for r in RESULTS if "3" in r["exercise"]} == shipped


def test_fp16_round_trip_keeps_the_tied_weights(tmp_path):
    model = GPT(GPTConfig(vocab_size=20, block_size=8, n_layer=1, n_head=2, n_embd=16))
    save_checkpoint(tmp_path / "m.pt", model, CharTokenizer("abcdefghijklmnopqrs"), {"note": 1})
    loaded, tokenizer, meta = load_checkpoint(tmp_path / "m.pt")
    assert loaded.lm_head.weight is loaded.tok_emb.weight and meta == {"note": 1}
    assert torch.allclose(loaded.tok_emb.weight, model.tok_emb.weight, atol=1e-4)
