"""Measure every training snapshot's heads as scripts/eval_heads.py measures the shipped checkpoints (what
each head looks at, and the loss increase with it alone off, on the whole validation split), and ship the
result as model/weights/snapshots.json (served at GET /api/heads?step=N).

    python scripts/eval_snapshots.py    # after scripts/train_snapshots.py; about 4 minutes a snapshot here

A snapshot already measured (same file, by its SHA-256) is kept, so the script can run while the snapshots
are still being trained, and again once they are all there. The last step, 10,000, is the shipped checkpoint:
its figures are heads.json's.
"""

import hashlib
import json
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context

import torch

from model.assets import SNAPSHOT_STEPS, SNAPSHOTS_PATH, snapshot_path
from model.checkpoint import load_checkpoint
from model.heads import MAX_OFFSET, ablation_statistics, head_statistics, with_ablation, with_roles
from model.poems import load_text
from model.train import load_data

POSITIONS = ("learned", "rope", "none")
WORKERS = 2  # one CPU thread each


def sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def measure(position: str, step: int) -> dict:
    torch.set_num_threads(1)
    path = snapshot_path(position, step)
    data = load_data()
    text = load_text("val")
    model, _, meta = load_checkpoint(path)
    stats = with_ablation(with_roles(head_statistics(model, data.val, text)),
                          ablation_statistics(model, data.val, text))
    return {"step": step, "sha256": sha256(path), "val_loss": meta["val_loss"],
            **{k: v for k, v in stats.items() if k != "position"}}


def main() -> None:
    data = load_data()
    kept = json.loads(SNAPSHOTS_PATH.read_text(encoding="utf-8")) if SNAPSHOTS_PATH.exists() else {"models": []}
    done = {(m["position"], s["step"]): s for m in kept["models"] for s in m["snapshots"]}
    wanted = [(p, step) for p in POSITIONS for step in SNAPSHOT_STEPS if snapshot_path(p, step).exists()]
    todo = [key for key in wanted if key not in done or done[key]["sha256"] != sha256(snapshot_path(*key))]
    print(f"{len(wanted) - len(todo)} snapshots already measured, {len(todo)} to measure")
    start = time.time()
    with ProcessPoolExecutor(WORKERS, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(measure, *key): key for key in todo}
        for future in as_completed(futures):
            done[futures[future]] = future.result()
            print(f"[{time.time() - start:5.0f} s] {futures[future]}: val loss {done[futures[future]]['val_loss']}")
    models = [{"position": p, "snapshots": [done[(p, step)] for step in SNAPSHOT_STEPS if (p, step) in done]}
              for p in POSITIONS]
    SNAPSHOTS_PATH.write_text(json.dumps({"split": "val", "val_sha256": data.val_sha256, "max_offset": MAX_OFFSET,
                                          "models": models}, ensure_ascii=False, indent=1), encoding="utf-8")
    print("wrote", SNAPSHOTS_PATH)


if __name__ == "__main__":
    main()
