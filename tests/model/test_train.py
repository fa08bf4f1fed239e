"""The training loop on a tiny model and a slice of the real poems: seconds, not minutes."""

import argparse
from dataclasses import replace

import pytest
import torch

from app.commands import train as train_command
from model.checkpoint import load_checkpoint
from model.corpus import build_vocab
from model.gpt import GPT
from model.poems import load_text
from model.train import (
    Data,
    TrainConfig,
    finished_record,
    lr_at,
    make_optimizer,
    train,
    window_offsets,
    windows,
)

TINY = TrainConfig(n_layer=1, n_head=2, n_embd=32, block_size=16, batch_size=8, steps=40, lr=1e-2, warmup=4,
                   min_lr=1e-3, eval_every=10, eval_batches=2, device="cpu")


@pytest.fixture(scope="module")
def data() -> Data:
    """The first poems of the validation text, as train and val, under a 300-character vocabulary."""
    text = load_text("val")
    train_text, val_text = text[:20_000], text[20_000:24_000]
    tokenizer = build_vocab(train_text, size=300)
    train_ids, val_ids = (torch.tensor(tokenizer.encode(t)) for t in (train_text, val_text))
    return Data(tokenizer, train_ids, val_ids, "test slice")


def test_windows_pair_each_character_with_the_next():
    ids = torch.arange(100)
    x, y = windows(ids, window_offsets(len(ids), 8, stride=8, count=3), 8)
    assert x.tolist()[2] == list(range(16, 24)) and y.tolist()[2] == list(range(17, 25))
    offsets = window_offsets(len(ids), 8, stride=8)
    assert len(offsets) == 12 and offsets[-1] + 8 < len(ids)  # no target runs past the end


def test_learning_rate_warms_up_then_decays_to_min_lr():
    cfg = TrainConfig(steps=1000, warmup=100, lr=1e-3, min_lr=1e-4)
    rates = [lr_at(step, cfg) for step in range(cfg.steps + 1)]
    assert rates[0] == pytest.approx(1e-5) and rates[99] == pytest.approx(1e-3)
    assert all(a >= b for a, b in zip(rates[100:], rates[101:]))
    assert rates[-1] == pytest.approx(1e-4)


def test_weight_decay_only_on_matrices():
    model = GPT(TINY.model_config(50))
    decay, no_decay = make_optimizer(model, TINY).param_groups
    assert decay["weight_decay"] == TINY.weight_decay and no_decay["weight_decay"] == 0.0
    assert all(p.dim() == 2 for p in decay["params"]) and all(p.dim() == 1 for p in no_decay["params"])
    assert sum(len(g["params"]) for g in (decay, no_decay)) == len(list(model.parameters()))  # tied weight once


def test_training_lowers_the_loss_and_repeats_exactly(data):
    record = train(TINY, data, progress=False)
    assert record["steps"] == [0, 10, 20, 30, 40]
    assert record["val_loss"][-1] < record["val_loss"][0] - 1.0
    assert record["train_loss"][-1] < record["train_loss"][0] - 1.0
    assert record["final_val_loss"] < record["val_loss"][0] - 1.0
    assert record["tokens_per_s"] > 0
    assert train(TINY, data, progress=False)["val_loss"] == record["val_loss"]


def test_resume_gives_the_weights_of_an_uninterrupted_run(data, tmp_path):
    whole = replace(TINY, out=str(tmp_path / "whole.pt"))
    split = replace(TINY, out=str(tmp_path / "split.pt"))
    expected = train(whole, data, progress=False)
    train(split, data, progress=False, stop_at=13)  # mid-way between two records
    assert split.state_path.exists() and not (tmp_path / "split.pt").exists()
    resumed = train(split, data, progress=False, resume=True)
    assert not split.state_path.exists()  # removed once the run ends: only the fp16 checkpoint remains
    assert resumed["val_loss"] == expected["val_loss"] and resumed["train_loss"] == expected["train_loss"]
    a, b = load_checkpoint(whole.out)[0].state_dict(), load_checkpoint(split.out)[0].state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_finished_run_is_known_by_its_exact_config(data, tmp_path):
    cfg = replace(TINY, out=str(tmp_path / "run.pt"))
    assert finished_record(cfg) is None
    train(cfg, data, progress=False, stop_at=5)
    assert finished_record(cfg) is None  # interrupted: only the resumable state exists
    record = train(cfg, data, progress=False, resume=True)
    assert finished_record(cfg) == record
    assert finished_record(replace(cfg, steps=41)) is None  # another budget: train again


def test_resume_refuses_another_config(data, tmp_path):
    cfg = replace(TINY, out=str(tmp_path / "run.pt"))
    train(cfg, data, progress=False, stop_at=5)
    with pytest.raises(ValueError, match="another config"):
        train(replace(cfg, lr=2e-2), data, progress=False, resume=True)


def test_recorded_command_parses_back_to_the_same_config():
    cfg = replace(TINY, position="rope", out="runs/x.pt")
    parser = argparse.ArgumentParser()
    train_command.add_parser(parser.add_subparsers())
    args = parser.parse_args(cfg.command().split()[1:])
    assert TrainConfig(**{k: getattr(args, k) for k in vars(cfg)}) == replace(cfg, device="auto")


def test_a_cuda_device_on_a_machine_without_one_is_named_before_the_run(monkeypatch):
    from model.errors import ConfigError
    from model.train import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == torch.device("cpu")
    with pytest.raises(ConfigError, match=r"cuda:1: torch sees 0 CUDA device\(s\) on this machine"):
        resolve_device("cuda:1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(ConfigError, match=r"cuda:1: torch sees 1 CUDA device\(s\)"):
        resolve_device("cuda:1")
    assert resolve_device("cuda:0") == torch.device("cuda:0")


def test_snapshots_are_the_run_at_those_steps_and_leave_it_unchanged(data, tmp_path):
    plain = replace(TINY, out=str(tmp_path / "plain.pt"))
    kept = replace(TINY, out=str(tmp_path / "kept.pt"))
    expected = train(plain, data, progress=False)
    snapshots = {10: tmp_path / "at-10.pt", 25: tmp_path / "at-25.pt"}
    record = train(kept, data, progress=False, snapshots=snapshots)
    assert record["val_loss"] == expected["val_loss"] and record["train_loss"] == expected["train_loss"]
    a, b = load_checkpoint(plain.out)[0].state_dict(), load_checkpoint(kept.out)[0].state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    # The run stopped at step 25 and saved as it ships is the snapshot at 25, bit for bit.
    stopped = replace(TINY, out=str(tmp_path / "stopped.pt"))
    train(stopped, data, progress=False, stop_at=25)  # leaves its fp32 state at 25
    state = torch.load(tmp_path / "stopped.pt.state", weights_only=True)["training_state"]
    model, _, meta = load_checkpoint(snapshots[25])
    assert all(torch.equal(model.state_dict()[k], state["model"][k].half().float()) for k in state["model"])
    assert meta["step"] == 25 and meta["record"]["steps"] == [0, 10, 20]
    assert meta["record"]["val_loss"] == expected["val_loss"][:3]
    # Its validation loss is measured as a shipped checkpoint's: every window of the validation text.
    assert meta["val_slice"]["windows"] == len(window_offsets(len(data.val), TINY.block_size, TINY.block_size))


def test_a_second_process_cannot_train_the_same_run(data, tmp_path):
    """Two runs of one output would write the same state: the second is refused while the first holds it."""
    import fcntl

    cfg = replace(TINY, out=str(tmp_path / "run.pt"))
    with open(tmp_path / "run.pt.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as another process training this run would
        with pytest.raises(ValueError, match="another process is training"):
            train(cfg, data, progress=False)
    assert train(cfg, data, progress=False, stop_at=5)["steps"] == [0]  # free again once released
