"""Train every model of the lesson's exercises from the shipped corpus and write model/weights/training.json.

    python scripts/train_all.py    # after `pip install -e .`; about two hours here on 2 CPU cores

Exercise 3 compares the position modes (learned, rope, none; 4 heads): their checkpoints ship in
model/weights/. Exercise 2 compares 1, 4 and 8 heads (learned): the 4-head run is exercise 3's learned
one, the others land in runs/ (not shipped). Every run has TrainConfig's defaults apart from the
compared setting: the same data, seed and step budget. Each run equals its recorded `command`.

Run again after an interruption, it keeps the runs that ended (a checkpoint whose recorded config is the
run's own) and continues the others from their last record (out + ".state"): the same weights as an
uninterrupted run.
"""

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

import torch

from model.train import TrainConfig, finished_record, train

ROOT = Path(__file__).resolve().parents[1]
RESULTS = "model/weights/training.json"
RUNS = [  # (exercises, config), slowest first so that the two workers end together
    (["2"], TrainConfig(position="learned", n_head=8, out="runs/learned-h8.pt")),
    (["3"], TrainConfig(position="rope", n_head=4, out="model/weights/rope.pt")),
    (["2", "3"], TrainConfig(position="learned", n_head=4, out="model/weights/learned.pt")),
    (["2"], TrainConfig(position="learned", n_head=1, out="runs/learned-h1.pt")),
    (["3"], TrainConfig(position="none", n_head=4, out="model/weights/none.pt")),
]
FIELDS = ("position", "n_layer", "n_head", "steps", "val_loss", "train_loss", "final_val_loss", "tokens_per_s",
          "seconds", "command")
WORKERS = 2  # one CPU thread each: two cores, and threads beyond that only fight


def run(cfg: TrainConfig) -> dict:
    torch.set_num_threads(1)
    return train(cfg, progress=False, resume=cfg.state_path.exists())


def main() -> None:
    os.chdir(ROOT)  # the configs' paths, and so the recorded commands, are relative to the repository
    start = time.time()
    records = {i: record for i, (_, cfg) in enumerate(RUNS) if (record := finished_record(cfg)) is not None}
    for i in records:
        print(f"{RUNS[i][1].out}: already trained with this config, val loss {records[i]['final_val_loss']:.4f}")
    with ProcessPoolExecutor(WORKERS, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(run, cfg): i for i, (_, cfg) in enumerate(RUNS) if i not in records}
        print(f"training {len(futures)} models, {WORKERS} at a time, {RUNS[0][1].steps} steps each")
        for future in as_completed(futures):
            i = futures[future]
            records[i] = future.result()
            print(f"[{time.time() - start:5.0f} s] {RUNS[i][1].out}: val loss {records[i]['final_val_loss']:.4f}, "
                  f"{records[i]['tokens_per_s']:,} tokens/s")
    runs = [{"exercise": exercises, **{k: records[i][k] for k in FIELDS}} for i, (exercises, _) in enumerate(RUNS)]
    Path(RESULTS).write_text(json.dumps({"runs": runs}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS} in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
