"""Measure what each head of the shipped checkpoints looks at, and how much worse the model predicts with
that head alone off, on the whole validation split; ship the result as model/weights/heads.json (served at
GET /api/heads).

    python scripts/eval_heads.py                  # everything (the ablation alone took 38 minutes here)
    python scripts/eval_heads.py --ablation-only  # keep the file's attention statistics, redo the ablation
"""

import argparse
import json
import time

import torch

from model.assets import TRAINING_RESULTS_PATH, checkpoint_path
from model.checkpoint import load_checkpoint
from model.heads import MAX_OFFSET, ablation_statistics, head_statistics, with_ablation, with_roles
from model.poems import load_text
from model.train import load_data

OUT = TRAINING_RESULTS_PATH.with_name("heads.json")
POSITIONS = ("learned", "rope", "none")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ablation-only", action="store_true",
                        help="keep the attention statistics and sentences of the shipped heads.json")
    args = parser.parse_args()
    torch.set_num_threads(2)
    data = load_data()
    text = load_text("val")
    kept = None
    if args.ablation_only:
        kept = json.loads(OUT.read_text(encoding="utf-8"))
        assert kept["val_sha256"] == data.val_sha256, "heads.json was measured on another validation split"
        assert [m["position"] for m in kept["models"]] == list(POSITIONS)
    models = []
    for i, position in enumerate(POSITIONS):
        model, _, _ = load_checkpoint(checkpoint_path(position))
        stats = kept["models"][i] if kept else with_roles(head_statistics(model, data.val, text))
        started = time.monotonic()
        ablation = ablation_statistics(model, data.val, text)
        print(f"{position}: ablation of {ablation['windows']} windows in {time.monotonic() - started:.0f} s")
        stats = with_ablation(stats, ablation)
        models.append({"position": position, **{k: v for k, v in stats.items() if k != "position"}})
        for layer in stats["layers"]:
            for head in layer["heads"]:
                print(position, layer["layer"], head["head"], head["role"]["kind"], head["role"]["named"],
                      {k: round(v, 3) for k, v in head["ablation"]["by_kind"].items()})
    OUT.write_text(json.dumps({"split": "val", "val_sha256": data.val_sha256, "max_offset": MAX_OFFSET,
                               "models": models}, ensure_ascii=False, indent=1))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
