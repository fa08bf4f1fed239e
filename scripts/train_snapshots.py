"""Train the three shipped position modes again, keeping snapshots of the weights on the way.

    python scripts/train_snapshots.py                # to the end of the runs (10,000 steps)
    python scripts/train_snapshots.py --until 3000   # stop after the last early snapshot; run again to go on

Each run is exactly the shipped one (TrainConfig's defaults, 4 heads, seed 0): only the output path
differs, so its state (runs/snapshots/MODE.pt.state) never touches the shipped checkpoint. A run is a
pure function of its config (see model/train.py), so the snapshots are the shipped run's own weights at
those steps. The script checks that: every train and val record up to where it stopped must equal
model/weights/training.json's, and a finished run's weights must equal the shipped checkpoint's bit for
bit, or it exits 1. The last snapshot is the shipped checkpoint itself.

On this machine a run takes about 16 s per 100 steps on one CPU thread, two at once: the three runs
to the end take about 55 minutes.
"""

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

import torch

from model.assets import SNAPSHOT_STEPS, checkpoint_path, snapshot_path
from model.checkpoint import load_checkpoint
from model.train import TrainConfig, train

ROOT = Path(__file__).resolve().parents[1]
MODES = ("learned", "rope", "none")
WORKERS = 2  # one CPU thread each, as scripts/train_all.py


def config(mode: str) -> TrainConfig:
    return TrainConfig(position=mode, n_head=4, out=f"runs/snapshots/{mode}.pt")


def run(mode: str, until: int) -> dict:
    torch.set_num_threads(1)
    cfg = config(mode)
    wanted = {step: ROOT / snapshot_path(mode, step) for step in SNAPSHOT_STEPS if step <= until}
    return train(cfg, progress=False, resume=cfg.state_path.exists(), stop_at=until if until < cfg.steps else None,
                 snapshots=wanted)


def shipped_record(mode: str) -> dict:
    runs = json.loads((ROOT / "model/weights/training.json").read_text(encoding="utf-8"))["runs"]
    return next(r for r in runs if r["command"].endswith(f"--out model/weights/{mode}.pt"))


def differences(mode: str, record: dict) -> list[str]:
    """Where this run's records differ from the shipped run's, step by step."""
    shipped = shipped_record(mode)
    expected = {step: (v, t) for step, v, t in zip(shipped["steps"], shipped["val_loss"], shipped["train_loss"])}
    return [f"step {step}: val {v}, train {t}; shipped {expected.get(step)}"
            for step, v, t in zip(record["steps"], record["val_loss"], record["train_loss"])
            if expected.get(step) != (v, t)]


def differs_from_shipped(mode: str) -> list[str]:
    """The weights of the finished run that are not bit for bit the shipped checkpoint's."""
    ours, shipped = (load_checkpoint(path)[0].state_dict() for path in (ROOT / config(mode).out, checkpoint_path(mode)))
    return [name for name in shipped if not torch.equal(ours[name], shipped[name])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--until", type=int, default=TrainConfig.steps,
                        help="stop each run after this step (its state is kept to go on later)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    args = parser.parse_args()
    start = time.time()
    failed = False
    with ProcessPoolExecutor(WORKERS, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(run, mode, args.until): mode for mode in args.modes}
        for future in as_completed(futures):
            mode, record = futures[future], future.result()
            wrong = differences(mode, record)
            if record["steps"][-1] == config(mode).steps:
                wrong += [f"weights {name} differ from the shipped checkpoint's" for name in differs_from_shipped(mode)]
            failed |= bool(wrong)
            print(f"[{time.time() - start:5.0f} s] {mode}: step {record['steps'][-1]}, val {record['val_loss'][-1]}; "
                  + (f"DIFFERS from the shipped run: {wrong[:3]}" if wrong else
                     f"all {len(record['steps'])} records equal the shipped run's"
                     + (", and so do the final weights, bit for bit" if record["steps"][-1] == config(mode).steps
                        else "")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
