"""POST /api/compare: everything the page draws for two lines, computed from one model."""

from functools import lru_cache

import numpy as np
import torch

from app.errors import InputError
from app.registry import ModelRegistry
from app.schemas import CompareRequest
from app.services.model_choice import choose_model
from model import GPT, CharTokenizer
from model.experiments import HEAD_COUNTS, LESSON_DEPTHS, attention_params, head_shapes, logits_difference
from model.gpt import Trace
from model.rope import rope_angles, rope_frequencies

TOP_K = 5


def compare(req: CompareRequest, registry: ModelRegistry) -> dict:
    model = choose_model(req, registry)
    cfg = model.config
    tok = registry.tokenizer
    enc = {"line_a": tok.encode(req.line_a), "line_b": tok.encode(req.line_b)}
    for field, ids in enc.items():
        if len(ids) > cfg.max_positions:
            raise InputError(field, _too_long(len(ids), cfg.position, cfg.max_positions))
    ids_a, ids_b = enc["line_a"], enc["line_b"]

    with torch.inference_mode():
        traces = {flag: _trace_pair(model, ids_a, ids_b, flag, req.causal) for flag in (True, False)}
        by_depth = [_depth_row(req, registry, cfg.n_head, n, ids_a, ids_b) for n in LESSON_DEPTHS]

    shown = traces[True]  # what the model does as configured
    return {
        "model": {
            "position": cfg.position, "weights": req.weights, "n_layer": cfg.n_layer, "n_head": cfg.n_head,
            "n_embd": cfg.n_embd, "head_dim": cfg.head_size, "block_size": cfg.block_size,
            "seed": req.seed if req.weights == "random" else None, "causal": req.causal,
            "vocab_size": cfg.vocab_size,
        },
        "lines": [_line(text, e, t, tok) for text, e, t in zip((req.line_a, req.line_b), (ids_a, ids_b), shown)],
        "difference": _differences(traces),
        "by_depth": by_depth,
        "residual_difference": _residual_difference(traces) if len(ids_a) == len(ids_b) else None,
        "rope": rope_table(range(max(len(ids_a), len(ids_b))), cfg.head_size, cfg.rope_base)
        if cfg.position == "rope" else None,
        "shapes": head_shapes(cfg.n_embd, cfg.n_head, len(ids_a)),
        "params": _params(cfg.n_embd),
    }


def _too_long(length: int, position: str, limit: int) -> str:
    if position == "learned":
        return f"at most {limit} characters with position 'learned': pos_emb has {limit} rows (got {length})"
    return f"at most {limit} characters with position '{position}' (got {length})"


def _trace_pair(model: GPT, ids_a, ids_b, use_position: bool, causal: bool) -> tuple[Trace, Trace]:
    """Per-line traces of batch size 1. Lines of equal length share one batched pass, (2, T)."""
    if len(ids_a) == len(ids_b):
        both = model.trace(torch.tensor([ids_a, ids_b]), use_position=use_position, causal=causal)
        return _unbatch(both, 0), _unbatch(both, 1)
    return tuple(model.trace(torch.tensor([ids]), use_position=use_position, causal=causal) for ids in (ids_a, ids_b))


def _unbatch(trace: Trace, i: int) -> Trace:
    def f(t):
        return t[i : i + 1]

    return Trace(f(trace.logits), f(trace.embedding), [f(x) for x in trace.attention], [f(x) for x in trace.scores],
                 [f(x) for x in trace.queries], [f(x) for x in trace.keys], [f(x) for x in trace.residual])


def _line(text: str, ids, trace: Trace, tok: CharTokenizer) -> dict:
    probs = torch.softmax(trace.logits[0, -1].double(), dim=-1)
    top = torch.topk(probs, TOP_K)
    return {
        "text": text,
        "tokens": list(text),
        "ids": list(ids),
        "unknown": ids.unknown,
        # [layer][head][query][key]; float32 numpy so the JSON carries float32's shortest digits.
        "attention": np.stack([p[0].numpy() for p in trace.attention]),
        "top_next": [{"token": tok.token(i), "prob": p} for p, i in zip(top.values.tolist(), top.indices.tolist())],
    }


def _differences(traces: dict) -> dict:
    return {
        "with_position": logits_difference(traces[True][0].logits[0, -1], traces[True][1].logits[0, -1]),
        "without_position": logits_difference(traces[False][0].logits[0, -1], traces[False][1].logits[0, -1]),
    }


def _depth_row(req: CompareRequest, registry: ModelRegistry, n_head: int, n_layer: int, ids_a, ids_b) -> dict:
    model = registry.random(req.position, n_layer, n_head, req.seed)
    traces = {flag: _trace_pair(model, ids_a, ids_b, flag, req.causal) for flag in (True, False)}
    return {"n_layer": n_layer, **_differences(traces)}


def _residual_difference(traces: dict) -> dict:
    def norms(pair):
        a, b = pair
        rows = [a.embedding] + a.residual, [b.embedding] + b.residual
        # Each row (1, T, C) -> the per-position L2 norm of a - b, (T,).
        return np.stack([(x - y)[0].double().norm(dim=-1).numpy() for x, y in zip(*rows)])

    return {"with_position": norms(traces[True]), "without_position": norms(traces[False])}


def rope_table(positions, head_dim: int, base: float) -> dict:
    positions = torch.as_tensor(list(positions), dtype=torch.float64)
    return {"base": base, "head_dim": head_dim, "theta": rope_frequencies(head_dim, base).numpy(),
            "angles": rope_angles(positions, head_dim, base).numpy()}


@lru_cache(maxsize=8)
def _params(n_embd: int) -> list[dict]:
    return [attention_params(n_embd, h) for h in HEAD_COUNTS if n_embd % h == 0]
