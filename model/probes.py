"""Measurements on a model that explain how it encodes position."""

import torch

from model.gpt import GPT
from model.rope import rope_angles


@torch.no_grad()
def pair_scores(model: GPT, first: int, second: int, starts, distance: int = 1) -> torch.Tensor:
    """The score (pre-softmax q·k / sqrt(hs)) of `second`'s query on `first`'s key when the two tokens
    stand alone at positions start and start + distance, for each start.
    Returns (n_layer, n_head, len(starts)). Under RoPE it is the same for every start (only the
    distance matters: the angles subtract); under learned positions it changes with start."""
    idx = torch.tensor([[first, second]])
    per_start = [torch.stack([s[0, :, 1, 0] for s in model.trace(idx, positions=[start, start + distance]).scores])
                 for start in starts]
    return torch.stack(per_start, dim=-1)  # (n_layer, n_head, S)


@torch.no_grad()
def layer1_query_key(model: GPT, first: int, second: int, head: int = 0, pair: int = 0) -> tuple:
    """`second`'s query and `first`'s key in layer 1, one head, one RoPE pair, before any rotation:
    ((q0, q1), (k0, k1)) as floats in the model's dtype. Under RoPE, layer 1 reads tok_emb alone, so these do
    not depend on where the two stand; the rotation by position is all that changes with the start."""
    block, C = model.blocks[0], model.config.n_embd
    hs = model.config.head_dim
    x = block.ln_1(model.tok_emb(torch.tensor([[first, second]])))  # (1, 2, C)
    q, k, _ = block.attn.qkv(x).split(C, dim=2)  # 3 x (1, 2, C)
    cols = slice(head * hs + 2 * pair, head * hs + 2 * pair + 2)  # head `head`'s pair `pair`: 2 components
    return tuple(q[0, 1, cols].tolist()), tuple(k[0, 0, cols].tolist())


def cosine_similarity_matrix(vectors: torch.Tensor) -> torch.Tensor:
    """(P, D) -> (P, P) cosine similarity of every pair of rows."""
    unit = vectors.double() / vectors.double().norm(dim=-1, keepdim=True)
    return unit @ unit.T


def rope_similarity(n_positions: int, head_dim: int, base: float) -> torch.Tensor:
    """How alike RoPE makes two positions: each position m as the vector of its rotations
    (cos m·theta_i, sin m·theta_i) over the pairs, compared by cosine similarity. Entry (m, n)
    equals the mean over pairs of cos((m - n) theta_i): it depends on m - n only."""
    angles = rope_angles(torch.arange(n_positions), head_dim, base)  # (P, hs/2)
    return cosine_similarity_matrix(torch.cat([angles.cos(), angles.sin()], dim=-1))


def similarity_by_lag(similarity: torch.Tensor, max_lag: int) -> torch.Tensor:
    """(P, P) -> (max_lag + 1,): the mean similarity of positions `lag` apart, lag = 0..max_lag.
    A table that learned a rhythm of period p is more alike at lag p than at the lags around it."""
    return torch.stack([similarity.diagonal(lag).mean() for lag in range(max_lag + 1)])


# Neighbours (lags 1 and 2) are alike in any smooth table: a rhythm is read from this lag up.
MIN_LAG = 3


def period(by_lag: torch.Tensor, min_lag: int = MIN_LAG) -> int:
    """The lag from min_lag up at which positions are most alike. Neighbours (lags 1 and 2) are
    alike in any smooth table, so they do not count as a rhythm."""
    return min_lag + int(by_lag[min_lag:].argmax())
