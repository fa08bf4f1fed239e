"""Validation loss by position: does a mode still predict well past the length it trained on?

learned stops at its table's 128 rows; rope and none run on windows twice the training length.
"""

import torch
import torch.nn.functional as F

from model.gpt import GPT
from model.windows import spread_offsets, windows

LENGTH_FACTOR = 2  # evaluate rope and none on windows this many times the training length
WINDOWS = 512  # windows spread over the validation text (all 188k characters at length 256, with overlap)


@torch.no_grad()
def loss_by_position(model: GPT, ids: torch.Tensor, length: int, n_windows: int = WINDOWS) -> list[float]:
    """Mean next-character loss (nats) at each position 0..length-1 over n_windows windows of
    the text ids, spread over it. Returns `length` numbers."""
    model.eval()
    x, y = windows(ids, spread_offsets(len(ids), length, n_windows), length)  # (W, length) each
    total = torch.zeros(length, dtype=torch.float64)
    for xb, yb in zip(x.split(16), y.split(16)):
        logits, _ = model(xb)  # (b, length, vocab)
        loss = F.cross_entropy(logits.transpose(1, 2), yb, reduction="none")  # (b, length)
        total += loss.double().sum(0)
    return (total / len(x)).tolist()


def eval_length(model: GPT, ids: torch.Tensor, n_windows: int = WINDOWS) -> dict:
    cfg = model.config
    length = cfg.block_size if cfg.position == "learned" else LENGTH_FACTOR * cfg.block_size
    return {"position": cfg.position, "train_length": cfg.block_size, "length": length, "windows": n_windows,
            "loss": loss_by_position(model, ids, length, n_windows)}
