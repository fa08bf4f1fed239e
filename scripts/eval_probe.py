"""Where the shipped models keep order: the position probe (model/position_probe.py) at every site of the three
trained models, at every shipped training snapshot and the end of training, with and without the causal mask; and
the trained RoPE model's rotation speeds per head with each quarter band of pairs stopped (model/rope_speeds.py).
Everything on every third validation window of block_size characters (490 of the 1,468 heads.json reads; the
probe's test part is every fifth of those). Ships the figures as model/weights/probe.json (served at GET /api/probe
and GET /api/rope/speeds).

    python scripts/eval_probe.py      # about 15 minutes on 2 cores shared with other work
"""

import json
import time

import torch

from model.assets import SNAPSHOT_STEPS, WEIGHTS_DIR, checkpoint_path, snapshot_path
from model.checkpoint import load_checkpoint
from model.position_probe import RANGES, RIDGE, TEST_EVERY, WITHIN, is_test, position_probe
from model.rope_speeds import BANDS, band_effect, speeds
from model.train import load_data
from model.windows import window_offsets

OUT = WEIGHTS_DIR / "probe.json"
POSITIONS = ("learned", "rope", "none")
WINDOW_STRIDE = 3  # every third window: 42 probes (3 models, 7 steps, mask on and off) in minutes, not an hour
DIGITS = 4  # figures only: positions and shares to 1e-4 keep the file small


def rounded(value):
    if isinstance(value, float):
        return round(value, DIGITS)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def main() -> None:
    torch.set_num_threads(2)
    data = load_data()
    models = []
    offsets = None
    for position in POSITIONS:
        final, _, meta = load_checkpoint(checkpoint_path(position))
        T = final.config.block_size
        offsets = window_offsets(len(data.val), T, T)[::WINDOW_STRIDE]
        steps = []
        for step in (*SNAPSHOT_STEPS, meta["steps"]):
            model = final if step == meta["steps"] else load_checkpoint(snapshot_path(position, step))[0]
            started = time.monotonic()
            by_mask = {name: position_probe(model, data.val, offsets, causal)["sites"]
                       for name, causal in (("causal", True), ("no_mask", False))}
            print(f"{position} step {step}: {time.monotonic() - started:.0f} s, mae",
                  [round(s["mae"], 1) for s in by_mask["causal"]], "without the mask",
                  [round(s["mae"], 1) for s in by_mask["no_mask"]], flush=True)
            steps.append({"step": step, **by_mask})
        models.append({"position": position, "steps": steps})
    rope = load_checkpoint(checkpoint_path("rope"))[0]
    started = time.monotonic()
    rope_speeds = speeds(rope, data.val, offsets)
    bands = [band_effect(rope, data.val, offsets, band) for band in (None, *BANDS)]
    print(f"rope speeds and bands: {time.monotonic() - started:.0f} s;",
          [(b["band"], round(b["val_loss"], 3), round(b["previous"][1][3], 2)) for b in bands])
    probe = {"windows": len(offsets), "window_stride": WINDOW_STRIDE, "test_windows": int(is_test(len(offsets)).sum()),
             "test_every": TEST_EVERY, "ridge": RIDGE, "within": WITHIN, "ranges": [list(r) for r in RANGES],
             "models": models}
    OUT.write_text(json.dumps(rounded({"split": "val", "val_sha256": data.val_sha256, "probe": probe,
                                       "rope": {**rope_speeds, "bands": bands}}),
                              ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print("wrote", OUT, OUT.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
