"""POST /api/compare: everything the page draws for two lines, computed from one model.

Each model runs once per request, on a batch of four rows: (A, B) with positions and
(A, B) without. The shorter line is padded on the right; under the causal mask no position
sees the padding, so each line's numbers are those of running it alone (tests check this).
"""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from app.errors import InputError
from app.registry import ModelRegistry
from app.schemas import CompareRequest
from app.services.model_choice import choose_model
from app.services.rope import rope_table
from model import GPT, CharTokenizer
from model.experiments import (
    HEAD_COUNTS,
    LESSON_DEPTHS,
    attention_params,
    head_shapes,
    head_split,
    logits_difference,
)

TOP_K = 5
WITH, WITHOUT = True, False


@dataclass
class LineRun:
    """One line through one model, with or without positions, unpadded."""

    last_logits: torch.Tensor  # (vocab_size,)
    attention: list[torch.Tensor]  # per layer (nh, T, T)
    stream: list[torch.Tensor]  # embeddings, then the residual after each block, each (T, C)


def compare(req: CompareRequest, registry: ModelRegistry) -> dict:
    model = choose_model(registry, req.position, req.weights, req.n_layer, req.n_head, req.seed)
    cfg = model.config
    tok = registry.tokenizer
    enc = {"line_a": tok.encode(req.line_a), "line_b": tok.encode(req.line_b)}
    for field, ids in enc.items():
        if len(ids) > cfg.max_positions:
            raise InputError(field, _too_long(len(ids), cfg.position, cfg.max_positions))
    ids_a, ids_b = enc["line_a"], enc["line_b"]
    if req.layer is not None and req.layer > cfg.n_layer:
        raise InputError("layer", f"layer must be at most n_layer ({cfg.n_layer}) (got {req.layer})")
    layers = [req.layer - 1] if req.layer else list(range(cfg.n_layer))

    with torch.inference_mode():
        runs = run_lines(model, ids_a, ids_b, req.causal)
        by_depth = []
        for n_layer in LESSON_DEPTHS:
            depth_model = registry.random(req.position, n_layer, cfg.n_head, req.seed)
            depth_runs = runs if depth_model is model else run_lines(depth_model, ids_a, ids_b, req.causal)
            by_depth.append({"n_layer": n_layer, **_differences(depth_runs)})

    return {
        "model": {
            "position": cfg.position, "weights": req.weights, "n_layer": cfg.n_layer, "n_head": cfg.n_head,
            "n_embd": cfg.n_embd, "head_dim": cfg.head_size, "block_size": cfg.block_size,
            "seed": req.seed if req.weights == "random" else None, "causal": req.causal,
            "vocab_size": cfg.vocab_size,
        },
        "attention_layers": [i + 1 for i in layers],
        "lines": [_line(text, ids, runs[i, WITH], runs[i, WITHOUT], tok, layers)
                  for i, (text, ids) in enumerate(((req.line_a, ids_a), (req.line_b, ids_b)))],
        "difference": _differences(runs),
        "by_depth": by_depth,
        "residual_difference": _residual_difference(runs) if len(ids_a) == len(ids_b) else None,
        "rope": rope_table(range(max(len(ids_a), len(ids_b))), cfg.head_size, cfg.rope_base)
        if cfg.position == "rope" else None,
        "shapes": head_shapes(cfg.n_embd, cfg.n_head, len(ids_a)),
        "params": _params(cfg.n_embd),
        "lesson_split": _lesson_split(),
    }


def run_lines(model: GPT, ids_a: list[int], ids_b: list[int], causal: bool) -> dict:
    """{(line 0|1, WITH|WITHOUT): LineRun}. Without the mask, padding would be seen, so lines of
    unequal length then run as two batches."""
    lines = [ids_a, ids_b]
    if causal or len(ids_a) == len(ids_b):
        groups = [[0, 1]]
    else:
        groups = [[0], [1]]
    runs = {}
    for group in groups:
        T = max(len(lines[i]) for i in group)
        rows = [(i, flag) for flag in (WITH, WITHOUT) for i in group]
        idx = torch.tensor([lines[i] + [0] * (T - len(lines[i])) for i, _ in rows])  # (R, T), right-padded
        trace = model.trace(idx, use_position=torch.tensor([flag for _, flag in rows]), causal=causal,
                            logits_at=torch.tensor([len(lines[i]) - 1 for i, _ in rows]))
        stream = [trace.embedding, *trace.residual]
        for r, (i, flag) in enumerate(rows):
            n = len(lines[i])
            runs[i, flag] = LineRun(trace.logits[r, 0], [p[r, :, :n, :n] for p in trace.attention],
                                    [s[r, :n] for s in stream])
    return runs


def _too_long(length: int, position: str, limit: int) -> str:
    if position == "learned":
        return f"at most {limit} characters with position 'learned': pos_emb has {limit} rows (got {length})"
    return f"at most {limit} characters with position '{position}' (got {length})"


def _line(text: str, ids, run: LineRun, blind: LineRun, tok: CharTokenizer, layers: list[int]) -> dict:
    """run: the line with position information; blind: the same weights without it (use_position=False)."""
    probs = torch.softmax(run.last_logits.double(), dim=-1)
    top = torch.topk(probs, TOP_K)
    return {
        "text": text,
        "tokens": list(text),
        "ids": list(ids),
        "unknown": ids.unknown,
        # [layer][head][query][key]; float32 numpy so the JSON carries float32's shortest digits.
        "attention": np.stack([run.attention[i].numpy() for i in layers]),
        "attention_without_position": np.stack([blind.attention[i].numpy() for i in layers]),
        "top_next": [{"token": tok.token(i), "prob": p} for p, i in zip(top.values.tolist(), top.indices.tolist())],
    }


def _differences(runs: dict) -> dict:
    return {
        "with_position": logits_difference(runs[0, WITH].last_logits, runs[1, WITH].last_logits),
        "without_position": logits_difference(runs[0, WITHOUT].last_logits, runs[1, WITHOUT].last_logits),
    }


def _residual_difference(runs: dict) -> dict:
    def norms(flag):
        # Each stream entry (T, C) -> the per-position L2 norm of a - b, (T,); rows: embeddings, block 1, ...
        pairs = zip(runs[0, flag].stream, runs[1, flag].stream)
        return np.stack([(a - b).double().norm(dim=-1).numpy() for a, b in pairs])

    return {"with_position": norms(WITH), "without_position": norms(WITHOUT)}


@lru_cache(maxsize=1)
def _lesson_split() -> dict:
    """The lesson's own example (32 wide, 4 heads of 8, 5 characters), beside the app's model."""
    return head_split()


@lru_cache(maxsize=8)
def _params(n_embd: int) -> list[dict]:
    return [attention_params(n_embd, h) for h in HEAD_COUNTS if n_embd % h == 0]
