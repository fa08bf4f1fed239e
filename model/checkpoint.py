"""Save and load a trained GPT with its vocabulary and training record, in one file."""

import os
from dataclasses import asdict
from pathlib import Path

import torch

from model.gpt import GPT, GPTConfig
from model.tokenizer import CharTokenizer

# fp16 halves the files (with the training snapshots, the tracked files must stay under 60 MB); values near 0.02 keep
# about 3 significant digits, and the recorded validation loss is measured after the round-trip.
STORE_DTYPE = torch.float16
TIED = "lm_head.weight"  # the same tensor as tok_emb.weight, so stored once


def save_checkpoint(path: str | Path, model: GPT, tokenizer: CharTokenizer, meta: dict | None = None,
                    training_state: dict | None = None) -> None:
    """training_state (optimizer, step, RNG) makes the file resumable; leave it out to ship."""
    weights = {k: v.detach().to(STORE_DTYPE) for k, v in model.state_dict().items() if k != TIED}
    payload = {"config": asdict(model.config), "weights": weights, "vocab": tokenizer.to_dict(), "meta": meta or {}}
    if training_state is not None:
        payload["training_state"] = training_state
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write beside, then rename: an interrupted save never leaves a half-written file to resume from.
    partial = path.with_name(path.name + ".part")
    torch.save(payload, partial)
    os.replace(partial, path)


def load_checkpoint(path: str | Path) -> tuple[GPT, CharTokenizer, dict]:
    """Returns the model in eval mode and float32, its tokenizer, and the meta dict."""
    payload = torch.load(path, map_location="cpu", weights_only=True)
    model = GPT(GPTConfig(**payload["config"]))
    weights = {k: v.float() for k, v in payload["weights"].items()}
    weights[TIED] = weights["tok_emb.weight"]
    model.load_state_dict(weights)
    model.eval()
    return model, CharTokenizer.from_dict(payload["vocab"]), payload["meta"]


def load_training_state(path: str | Path) -> dict | None:
    return torch.load(path, map_location="cpu", weights_only=True).get("training_state")
