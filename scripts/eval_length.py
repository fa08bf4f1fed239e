"""Compute the validation loss by position of the shipped checkpoints once, and ship the result
as model/weights/length.json (served at GET /api/length).

    python scripts/eval_length.py
"""

import json

import torch

from model.assets import TRAINING_RESULTS_PATH, checkpoint_path
from model.checkpoint import load_checkpoint
from model.length import eval_length
from model.train import load_data

OUT = TRAINING_RESULTS_PATH.with_name("length.json")


def main() -> None:
    torch.set_num_threads(2)
    data = load_data()
    runs = []
    for position in ("learned", "rope", "none"):
        model, _, _ = load_checkpoint(checkpoint_path(position))
        runs.append(eval_length(model, data.val))
        print(position, f"first {runs[-1]['loss'][0]:.3f}", f"last {runs[-1]['loss'][-1]:.3f}")
    OUT.write_text(json.dumps({"split": "val", "val_sha256": data.val_sha256, "runs": runs}, indent=1))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
