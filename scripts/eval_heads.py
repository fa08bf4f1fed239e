"""Measure what each head of the shipped checkpoints looks at, on the whole validation split, and ship
the result as model/weights/heads.json (served at GET /api/heads).

    python scripts/eval_heads.py
"""

import json

import torch

from model.assets import TRAINING_RESULTS_PATH, checkpoint_path
from model.checkpoint import load_checkpoint
from model.corpus import load_text
from model.heads import MAX_OFFSET, head_statistics, with_summaries
from model.train import load_data

OUT = TRAINING_RESULTS_PATH.with_name("heads.json")


def main() -> None:
    torch.set_num_threads(2)
    data = load_data()
    text = load_text("val")
    models = []
    for position in ("learned", "rope", "none"):
        model, _, _ = load_checkpoint(checkpoint_path(position))
        stats = with_summaries(head_statistics(model, data.val, text))
        models.append({"position": position, **stats})
        for layer in stats["layers"]:
            for head in layer["heads"]:
                print(position, layer["layer"], head["head"], head["summary"]["en"])
    OUT.write_text(json.dumps({"split": "val", "val_sha256": data.val_sha256, "max_offset": MAX_OFFSET,
                               "models": models}, ensure_ascii=False, indent=1))
    print("wrote", OUT)


if __name__ == "__main__":
    main()
