"""Rotary position encoding (RoPE, Su et al. 2021, "RoFormer").

Pairing convention: *interleaved*, as in the RoFormer paper. Pair i is the two
neighbouring dimensions (2i, 2i+1) of a head. We chose it over the GPT-NeoX /
Llama "halves" layout because the page shows one pair turning as a 2-D vector,
and with interleaving that pair is simply two adjacent numbers of q or k, which
is how the paper writes the rotation matrix. Both layouts give the same scores
up to a fixed permutation of the head's dimensions.
"""

import torch


def rope_frequencies(head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """theta_i = base ** (-2i / head_dim) for pair i = 0 .. head_dim/2 - 1; shape (head_dim/2,)."""
    if head_dim < 2 or head_dim % 2:
        raise ValueError(f"head_dim must be an even number >= 2 for RoPE, got {head_dim}")
    # float64 so the angle table the API serves is exact to double precision.
    pair = torch.arange(head_dim // 2, dtype=torch.float64)
    return base ** (-2.0 * pair / head_dim)


def rope_angles(positions: torch.Tensor, head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """The rotation angle of every pair at every position: (P,) -> (P, head_dim/2), in radians."""
    return positions.to(torch.float64)[:, None] * rope_frequencies(head_dim, base)[None, :]


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each interleaved pair of x by its angle.

    x: (B, nh, T, hs); cos, sin: (B, 1, T, hs/2) as GPT passes them, or (T, hs/2); both broadcast
    over the heads. Pair (x0, x1) becomes
    (x0 cos - x1 sin, x0 sin + x1 cos), a plain 2-D rotation.
    """
    x0, x1 = x[..., 0::2], x[..., 1::2]  # (B, nh, T, hs/2) each
    rotated = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)  # (B, nh, T, hs/2, 2)
    return rotated.flatten(-2)  # back to (B, nh, T, hs), pairs interleaved again
