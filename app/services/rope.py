"""The RoPE angle table, for GET /api/rope and the compare response."""

import torch

from model.rope import rope_angles, rope_frequencies


def rope_table(positions, head_dim: int, base: float) -> dict:
    """{"base", "head_dim", "theta": (head_dim/2,), "angles": (P, head_dim/2)} in float64 radians."""
    positions = torch.as_tensor(list(positions), dtype=torch.float64)
    return {"base": base, "head_dim": head_dim, "theta": rope_frequencies(head_dim, base).numpy(),
            "angles": rope_angles(positions, head_dim, base).numpy()}
