"""The lesson's two experiments as functions that return plain data.

1. Order sensitivity: how far apart the last position's logits of two lines are, with and
   without position information, for untrained models of several depths.
2. The head split: the shapes a 32-wide vector takes when cut into 4 heads of 8, and the
   attention layer's parameter counts for several head counts.
"""

import numpy as np
import torch

from model.gpt import GPT, CausalSelfAttention, GPTConfig
from model.tokenizer import CharTokenizer

LESSON_LINES = ("白日依山尽", "山依日白尽")
LESSON_DEPTHS = (1, 2, 3)  # the lesson's table (1, 2) plus exercise 1 (3 layers)
HEAD_COUNTS = (1, 2, 4, 8)


def logits_difference(a, b) -> dict:
    """a, b: (vocab_size,) float32 logits of one position each, torch tensors or numpy arrays. The
    difference is taken in float32, as the lesson's model(x)[0][0, -1] - ..., then measured in float64."""
    d = (np.asarray(a) - np.asarray(b)).astype(np.float64)
    return {"max_abs": float(np.abs(d).max()), "l2": float(np.linalg.norm(d))}


def last_position_difference(model: GPT, ids_a: list[int], ids_b: list[int], use_position: bool,
                             causal: bool = True) -> dict:
    """The lesson's model(x)[0][0, -1] for both lines, compared."""
    a = model.trace(torch.tensor([ids_a]), use_position=use_position, causal=causal).logits[0, -1]
    b = model.trace(torch.tensor([ids_b]), use_position=use_position, causal=causal).logits[0, -1]
    return logits_difference(a, b)


def order_sensitivity(tokenizer: CharTokenizer, line_a: str = LESSON_LINES[0], line_b: str = LESSON_LINES[1],
                      position: str = "learned", seed: int = 0, depths=LESSON_DEPTHS, n_head: int = 4,
                      n_embd: int = 128, causal: bool = True) -> list[dict]:
    """One row per depth: {"n_layer", "with_position", "without_position"} for untrained models."""
    ids_a, ids_b = tokenizer.encode(line_a), tokenizer.encode(line_b)
    rows = []
    for n_layer in depths:
        cfg = GPTConfig(vocab_size=tokenizer.vocab_size, n_layer=n_layer, n_head=n_head, n_embd=n_embd,
                        position=position)
        model = GPT(cfg, seed=seed).eval()
        rows.append({
            "n_layer": n_layer,
            "without_position": last_position_difference(model, ids_a, ids_b, False, causal),
            "with_position": last_position_difference(model, ids_a, ids_b, True, causal),
        })
    return rows


def attention_params(n_embd: int, n_head: int) -> dict:
    """Parameter counts of one attention layer, counted on a real module."""
    attn = CausalSelfAttention(GPTConfig(vocab_size=1, n_embd=n_embd, n_head=n_head))
    return {"n_head": n_head,
            "qkv": sum(p.numel() for p in attn.qkv.parameters()),
            "proj": sum(p.numel() for p in attn.proj.parameters())}


def head_shapes(n_embd: int, n_head: int, T: int) -> dict:
    """The shapes on the way through the head split, read off real tensors:
    q (1, T, C) -> heads (1, nh, T, hs) -> scores (1, nh, T, T)."""
    q = torch.zeros(1, T, n_embd)
    heads = q.view(1, T, n_head, n_embd // n_head).transpose(1, 2)
    scores = heads @ heads.transpose(-2, -1)
    return {"q": list(q.shape), "heads": list(heads.shape), "scores": list(scores.shape)}


def head_split(n_embd: int = 32, n_head: int = 4, T: int = 5, head_counts=HEAD_COUNTS) -> dict:
    """The lesson's section 2: a 32-wide vector in 4 heads of 8 on a 5-character line."""
    return {"n_embd": n_embd, "n_head": n_head, "shapes": head_shapes(n_embd, n_head, T),
            "params": [attention_params(n_embd, h) for h in head_counts if n_embd % h == 0]}
