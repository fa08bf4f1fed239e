"""Which of RoPE's rotation speeds each head uses (Barbero et al. 2025, "Round and Round We Go! What makes Rotary
Positional Encodings useful?").

A head's score of query m on key n is a sum over its head_dim/2 pairs. With q and k before rotation, pair i
(θᵢ = base^(-2i/head_dim), interleaved as model/rope.py) contributes

    sᵢ(m, n) = q_{m,i} · R((n - m)θᵢ) k_{n,i} / √head_dim
             = (cos φ (q0 k0 + q1 k1) + sin φ (q1 k0 - q0 k1)) / √head_dim,  φ = (n - m)θᵢ,

because the model turns q by mθᵢ and k by nθᵢ, and R(a)ᵀR(b) = R(b - a) (the paper's R((m - n)θᵢ) with its
rotation the other way round). Fast pairs (small i) turn a lot from one character to the next: they can tell the
previous character from the others. Slow pairs hardly turn within 128 characters: they compare content.

The experiment that shows use: stop a band of pairs from turning (GPT.trace's pairs_off, θᵢ = 0 for them) and
measure the validation loss and each head's attention to the previous character.
"""

import math

import torch
import torch.nn.functional as F

from model.gpt import GPT
from model.rope import apply_rope, rope_angles, rope_frequencies
from model.windows import windows

WINDOWS_PER_FORWARD = 32
BANDS = ("fastest", "middle", "slowest")  # quarters of the pairs: 0 .. P/4-1, 3P/8 .. 5P/8-1, 3P/4 .. P-1


def band_pairs(band: str | None, n_pairs: int) -> torch.Tensor:
    """(n_pairs,) bool: the pairs of a band, fastest first (pair 0 turns fastest). None: no pair (the model)."""
    off = torch.zeros(n_pairs, dtype=torch.bool)
    if band is None:
        return off
    quarter = n_pairs // 4
    first = {"fastest": 0, "middle": (n_pairs - quarter) // 2, "slowest": n_pairs - quarter}[band]
    off[first:first + quarter] = True
    return off


def layer_qk(model: GPT, idx: torch.Tensor, pairs_off: torch.Tensor | None = None):
    """idx (B, T) -> (the trace, [(q, k) per layer]), q and k (B, nh, T, head_dim) as each block computes them from
    its input, before any rotation."""
    cfg = model.config
    B, T = idx.shape
    with torch.no_grad():
        trace = model.trace(idx, pairs_off=pairs_off, logits_at=torch.zeros(B, dtype=torch.long))  # no head needed
        qk = []
        for block, x in zip(model.blocks, [trace.embedding, *trace.residual[:-1]]):  # what enters each block
            q, k, _ = block.attn.qkv(block.ln_1(x)).split(cfg.n_embd, dim=2)  # (B, T, C) each
            qk.append(tuple(t.view(B, T, cfg.n_head, cfg.head_dim).transpose(1, 2) for t in (q, k)))  # (B, nh, T, hs)
    return trace, qk


def pair_shares(model: GPT, idx: torch.Tensor, pairs_off: torch.Tensor | None = None) -> list[torch.Tensor]:
    """idx (B, T) -> per layer sᵢ(m, n) as (B, nh, pairs, T, T), query rows and key columns, in the model's dtype,
    from the formula above; summed over the pairs it is the score (keys after the query are not masked here).
    pairs_off as in GPT.trace: those pairs do not turn (θᵢ = 0)."""
    cfg = model.config
    assert cfg.position == "rope", "pair shares need a rope model"
    T = idx.size(1)
    theta = rope_frequencies(cfg.head_dim, cfg.rope_base)  # (P,) float64
    if pairs_off is not None:
        theta = torch.where(pairs_off, 0.0, theta)
    pos = torch.arange(T, dtype=torch.float64)
    phi = (pos[None, :] - pos[:, None])[None] * theta[:, None, None]  # (P, T, T): (n - m)θᵢ, query rows
    dtype = model.tok_emb.weight.dtype
    cos, sin = phi.cos().to(dtype), phi.sin().to(dtype)
    out = []
    for q, k in layer_qk(model, idx, pairs_off)[1]:
        q0, q1, k0, k1 = q[..., 0::2], q[..., 1::2], k[..., 0::2], k[..., 1::2]  # (B, nh, T, P) each
        dot = torch.einsum("bhmp,bhnp->bhpmn", q0, k0) + torch.einsum("bhmp,bhnp->bhpmn", q1, k1)
        cross = torch.einsum("bhmp,bhnp->bhpmn", q1, k0) - torch.einsum("bhmp,bhnp->bhpmn", q0, k1)
        out.append((cos * dot + sin * cross) / math.sqrt(cfg.head_dim))  # (B, nh, P, T, T)
    return out


def theta_degrees(model: GPT) -> list[float]:
    """θᵢ of each pair in degrees per character, fastest first."""
    return torch.rad2deg(rope_frequencies(model.config.head_dim, model.config.rope_base)).tolist()


def speeds(model: GPT, ids: torch.Tensor, offsets: torch.Tensor) -> dict:
    """Each layer's heads' mean pair shares over the windows of `ids` at `offsets`:
    {"windows", "theta_degrees", "layers": [{"layer", "heads": [{"head", "distance_0", "distance_1", "attended"}]}]},
    each a list over the pairs, fastest first: sᵢ on the query's own key, on the previous character's key (queries
    from position 1), and Σₙ pattern(m, n) sᵢ(m, n), the share weighted by where the head looks; means over queries.

    Computed without the (pairs, T, T) tensor of pair_shares: sᵢ(m, n) is also the pair's part of the dot product
    of q turned by mθᵢ and k turned by nθᵢ, so Σₙ pattern(m, n) sᵢ(m, n) is the turned q's pairs times those of
    Σₙ pattern(m, n) k_n turned (one matmul)."""
    cfg = model.config
    T, P, hs = cfg.block_size, cfg.head_dim // 2, cfg.head_dim
    angles = rope_angles(torch.arange(T), hs, cfg.rope_base)  # (T, P) float64
    cos, sin = angles.cos(), angles.sin()
    shape = (cfg.n_layer, cfg.n_head, P)
    sums = {name: torch.zeros(shape, dtype=torch.float64) for name in ("distance_0", "distance_1", "attended")}
    n_queries = 0
    model.eval()
    for batch in offsets.split(WINDOWS_PER_FORWARD):
        x, _ = windows(ids, batch, T)  # (W, T)
        trace, qk = layer_qk(model, x)
        for layer, ((q, k), pattern) in enumerate(zip(qk, trace.attention)):
            q, k = (apply_rope(t.double(), cos, sin) for t in (q, k))  # (W, nh, T, hs), turned as the model does
            context = pattern.double() @ k  # (W, nh, T, hs): Σₙ pattern(m, n) k_n turned

            def by_pair(a, b):  # (W, nh, T', hs) x2 -> (nh, P): each pair's products, summed over windows and queries
                return (a * b).view(*a.shape[:-1], P, 2).sum(-1).sum((0, 2)) / math.sqrt(hs)

            sums["distance_0"][layer] += by_pair(q, k)
            sums["distance_1"][layer] += by_pair(q[:, :, 1:], k[:, :, :-1])
            sums["attended"][layer] += by_pair(q, context)
        n_queries += len(batch) * T
    means = {"distance_0": sums["distance_0"] / n_queries, "attended": sums["attended"] / n_queries,
             "distance_1": sums["distance_1"] / (n_queries - len(offsets))}
    return {"windows": len(offsets), "theta_degrees": theta_degrees(model),
            "layers": [{"layer": layer + 1, "heads": [{"head": h + 1, **{k: v[layer, h].tolist() for k, v in
                                                                           means.items()}}
                                                      for h in range(cfg.n_head)]}
                       for layer in range(cfg.n_layer)]}


@torch.no_grad()
def band_effect(model: GPT, ids: torch.Tensor, offsets: torch.Tensor, band: str | None) -> dict:
    """The model with one band of pairs stopped (None: every pair turns), on the windows of `ids` at `offsets`:
    {"band", "pairs": [the pairs stopped], "val_loss" (mean next-character loss, nats), "previous": [layer][head]
    mean attention on the previous character over queries from position 1}."""
    cfg = model.config
    T = cfg.block_size
    off = band_pairs(band, cfg.head_dim // 2)
    loss, previous = 0.0, torch.zeros(cfg.n_layer, cfg.n_head, dtype=torch.float64)
    model.eval()
    for batch in offsets.split(WINDOWS_PER_FORWARD * 4):
        x, y = windows(ids, batch, T)  # (W, T) each
        trace = model.trace(x, pairs_off=off)
        loss += float(F.cross_entropy(trace.logits.transpose(1, 2), y, reduction="sum"))
        for layer, pattern in enumerate(trace.attention):
            previous[layer] += pattern.double().diagonal(offset=-1, dim1=-2, dim2=-1).sum((0, -1))
    return {"band": band, "pairs": off.nonzero().flatten().tolist(), "val_loss": loss / (len(offsets) * T),
            "previous": (previous / (len(offsets) * (T - 1))).tolist()}
