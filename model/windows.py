"""Windows of a text's ids, as training, evaluation and every measurement on the poems cut them. Light on
purpose: the served app measures on windows too, and must not import the trainer (opencc, tqdm)."""

import torch


def window_offsets(n_ids: int, block_size: int, stride: int, count: int | None = None) -> torch.Tensor:
    """Start of each window of block_size + 1 ids, every `stride` ids from 0, at most `count` of them."""
    return torch.arange(0, n_ids - block_size, stride)[:count]


def spread_offsets(n_ids: int, block_size: int, count: int) -> torch.Tensor:
    """`count` windows spread over the whole text, so a record is not about its first poems only."""
    return window_offsets(n_ids, block_size, max(1, (n_ids - block_size) // count), count)


def windows(ids: torch.Tensor, offsets: torch.Tensor, block_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets (B, T): each target is the next character of its input."""
    w = ids[offsets[:, None] + torch.arange(block_size + 1)]  # (B, T + 1)
    return w[:, :-1].contiguous(), w[:, 1:].contiguous()  # contiguous: GPT.forward views targets as (B*T,)
