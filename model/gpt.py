"""A small character-level GPT, the lesson's model, in one file that reads top to bottom.

Order: attention (the explicit path whose weights we can show) -> MLP -> Block ->
GPTConfig -> Trace -> GPT. Names follow the lesson: tok_emb, pos_emb, drop, qkv, proj,
forward(idx, ..., start=...).
"""

import math
from dataclasses import dataclass
from typing import Literal, get_args

import torch
import torch.nn as nn
import torch.nn.functional as F

from model.errors import ConfigError
from model.rope import apply_rope, rope_angles

PositionMode = Literal["learned", "rope", "none"]
POSITION_MODES: tuple[str, ...] = get_args(PositionMode)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True):
    """Scaled dot-product attention written out, so the weights exist to be shown.

    q, k, v: (B, nh, T, hs). Returns y (B, nh, T, hs), the pattern (post-softmax) and the
    scores (pre-softmax, -inf where masked), both (B, nh, T, T) with query rows, key columns.
    A fused kernel (F.scaled_dot_product_attention) gives the same y but never the pattern.
    """
    T = q.size(-2)
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))  # (B, nh, T, T)
    if causal:
        # Query t may look at keys 0..t only; softmax turns -inf into an exact 0.
        future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    pattern = F.softmax(scores, dim=-1)
    return pattern @ v, pattern, scores


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: "GPTConfig"):
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)  # q, k and v of every head in one matmul
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)  # mixes what the heads gathered
        self.attn_drop = nn.Dropout(cfg.dropout)
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x, rope=None, causal=True, off=None):
        """off: None, or a (B, nh) bool tensor of the heads whose output is zeroed before proj."""
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)  # 3 x (B, T, C)
        # Split into heads: (B, T, C) -> (B, nh, T, hs)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        if rope is not None:
            cos, sin = rope  # (B, 1, T, hs/2) each: one row per line, broadcast over the heads
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        y, pattern, scores = attention(q, k, v, causal)
        y = self.attn_drop(y)
        if off is not None:
            # A head turned off gives zeros to proj (TransformerLens's zero-ablation of hook_z); its pattern is
            # still computed. masked_fill returns a new tensor: no weight and no other row changes.
            y = y.masked_fill(off.view(B, self.n_head, 1, 1), 0.0)  # (B, nh, T, hs)
        z = y.transpose(1, 2).contiguous().view(B, T, C)  # heads back side by side (hook_z): (B, T, C)
        return self.resid_drop(self.proj(z)), pattern, scores, z


class MLP(nn.Module):
    def __init__(self, cfg: "GPTConfig"):
        super().__init__()
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.gelu = nn.GELU()  # the exact (erf) GELU, as nanoGPT's nn.GELU()
        self.proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.drop(self.proj(self.gelu(self.fc(x))))


class Block(nn.Module):
    """Pre-LayerNorm transformer block, as in GPT-2 and nanoGPT."""

    def __init__(self, cfg: "GPTConfig"):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.mlp = MLP(cfg)

    def forward(self, x, rope=None, causal=True, off=None):
        a, pattern, scores, z = self.attn(self.ln_1(x), rope, causal, off)
        x = x + a
        x = x + self.mlp(self.ln_2(x))
        return x, pattern, scores, z


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int  # characters in the tokenizer, the unknown id included
    block_size: int = 128  # rows of pos_emb: the longest line a learned model can read
    n_layer: int = 2  # the lesson's table starts at 1 and 2 layers; 2 is the smallest that leaks order
    n_head: int = 4  # the lesson's GPT: 4 heads of 32
    n_embd: int = 128  # width of every vector in the residual stream
    dropout: float = 0.0  # 0 for inference and for the lesson's experiments: results must repeat exactly
    position: PositionMode = "learned"  # learned = GPT-2's pos_emb table, rope = rotary, none = NoPE
    rope_base: float = 10000.0  # RoFormer's base: in a 32-wide head the slowest pair turns once in ~35,300 positions
    bias: bool = True  # biases in every Linear and LayerNorm, as GPT-2; nanoGPT's bias=False leaves them out

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name} must be a whole number >= 1, got {value!r}")
        if self.position not in POSITION_MODES:
            raise ConfigError(f"position must be one of {', '.join(POSITION_MODES)}, got {self.position!r}")
        if self.n_embd % self.n_head:
            raise ConfigError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        if self.position == "rope" and self.head_dim % 2:
            raise ConfigError(
                f"head_dim = n_embd / n_head ({self.head_dim}) must be even with rope: "
                "RoPE rotates pairs of dimensions"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ConfigError(f"dropout must be in [0, 1), got {self.dropout!r}")
        if not isinstance(self.bias, bool):
            raise ConfigError(f"bias must be true or false, got {self.bias!r}")
        if not self.rope_base > 1.0:
            raise ConfigError(f"rope_base must be > 1, got {self.rope_base!r}")

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @property
    def max_positions(self) -> int:
        """The largest start + T the model accepts. Only pos_emb's table has a hard end;
        RoPE and no positions are kept to 4x the training length, which the app allows."""
        return self.block_size if self.position == "learned" else 4 * self.block_size


@dataclass
class Trace:
    """What one inference pass saw, for the visualiser. Lists run over layers."""

    logits: torch.Tensor  # (B, T, vocab_size)
    embedding: torch.Tensor  # (B, T, C): the residual stream entering block 1
    attention: list[torch.Tensor]  # post-softmax patterns, each (B, nh, T, T)
    scores: list[torch.Tensor]  # pre-softmax scores, -inf where masked, each (B, nh, T, T)
    residual: list[torch.Tensor]  # residual stream after each block, each (B, T, C)
    z: list[torch.Tensor]  # the heads' outputs side by side, before proj (TransformerLens's hook_z), each (B, T, C)


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig, seed: int = 0):
        super().__init__()
        self.config = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        if cfg.position == "learned":
            self.pos_emb = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight  # weight tying, as GPT-2 and nanoGPT
        if cfg.position == "rope":
            angles = rope_angles(torch.arange(cfg.max_positions), cfg.head_dim, cfg.rope_base)
            # Derived from the config, so not saved in checkpoints (persistent=False).
            self.register_buffer("rope_cos", angles.cos().float(), persistent=False)  # (max_positions, hs/2)
            self.register_buffer("rope_sin", angles.sin().float(), persistent=False)
        self.init_weights(seed)

    @torch.no_grad()
    def init_weights(self, seed: int) -> None:
        """GPT-2's initialisation drawn from a private generator: the same seed gives the
        same weights whatever the global RNG has done."""
        gen = torch.Generator().manual_seed(seed)
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                # Residual projections scaled down with depth (GPT-2 paper, section 2.3).
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * self.config.n_layer), generator=gen)
            elif p.dim() >= 2:
                nn.init.normal_(p, 0.0, 0.02, generator=gen)
            elif name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
                nn.init.ones_(p)
            else:
                nn.init.zeros_(p)

    def forward(self, idx, targets=None, start=0, use_position=True, heads_off=None):
        """idx (B, T) -> logits (B, T, vocab_size), and the loss when targets (B, T) are given.
        heads_off: as in trace."""
        logits = self._run(idx, start, use_position, causal=True, heads_off=heads_off).logits
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss

    @torch.no_grad()
    def trace(self, idx, start=0, use_position=True, causal=True, logits_at=None, heads_off=None,
              positions=None, pairs_off=None) -> Trace:
        """One inference pass that keeps every layer's attention and residual stream.

        causal=False removes the mask (full attention), for the position-leak control.
        use_position may also be a (B,) bool tensor, so one batch can hold rows with and
        rows without position information. logits_at, a (B,) tensor of positions, computes
        the output head only there (trace.logits is then (B, 1, vocab_size)): the head is
        the largest matmul, and the app needs only each line's last position.
        heads_off, a bool tensor (n_layer, n_head) or (B, n_layer, n_head) for one set per row, turns
        heads off: their output is zeroed before proj. None (or all False) computes the model as it is.
        positions, (T,) increasing, replaces start..start+T-1: two characters can stand m - n apart with
        nothing between them, as RoPE's relative-distance experiment needs.
        pairs_off, a (head_dim/2,) bool tensor, stops RoPE's pairs marked True from turning (theta_i = 0 for them,
        in every head and layer): Barbero et al.'s test of which speeds a model uses. None or all False: the model."""
        return self._run(idx, start, use_position, causal, logits_at, heads_off, positions, pairs_off)

    def _run(self, idx, start, use_position, causal, logits_at=None, heads_off=None, positions=None,
             pairs_off=None) -> Trace:
        cfg = self.config
        B, T = idx.size()
        pos = torch.arange(start, start + T) if positions is None else torch.as_tensor(positions)  # (T,)
        pos = pos.to(idx.device)
        if pos.min() < 0 or pos.max() >= cfg.max_positions:
            limit = "pos_emb has only" if cfg.position == "learned" else "this model allows"
            raise ValueError(f"positions {int(pos.min())}..{int(pos.max())} grew beyond {limit} "
                             f"{cfg.max_positions} positions")
        assert pairs_off is None or cfg.position == "rope", "pairs_off needs a rope model: only RoPE turns pairs"
        keep = torch.as_tensor(use_position, device=idx.device).expand(B)  # (B,) rows that get positions
        x = self.tok_emb(idx)  # (B, T, C)
        if cfg.position == "learned":
            # x + 0 is x exactly: a dropped row equals the lesson's pos_emb.weight.zero_(), and no weight changes.
            x = x + self.pos_emb(pos) * keep.view(B, 1, 1)
        x = self.drop(x)
        rope = None
        if cfg.position == "rope" and keep.any():
            # Rows without positions turn by angle 0 (cos 1, sin 0): the rotation is then exactly the identity.
            k = keep.view(B, 1, 1, 1)
            if pairs_off is not None:
                pairs_off = torch.as_tensor(pairs_off, dtype=torch.bool, device=idx.device)
                assert pairs_off.shape == (cfg.head_dim // 2,), \
                    f"pairs_off must be (head_dim/2,) = ({cfg.head_dim // 2},), got {tuple(pairs_off.shape)}"
                k = k & ~pairs_off  # (B, 1, 1, hs/2): a pair off turns by angle 0 at every position
            rope = (torch.where(k, self.rope_cos[pos], 1.0), torch.where(k, self.rope_sin[pos], 0.0))  # (B,1,T,hs/2)
        if heads_off is not None:
            heads_off = torch.as_tensor(heads_off, dtype=torch.bool, device=idx.device)
            assert heads_off.shape[-2:] == (cfg.n_layer, cfg.n_head), \
                f"heads_off must end in (n_layer, n_head) = ({cfg.n_layer}, {cfg.n_head}), got {tuple(heads_off.shape)}"
            heads_off = heads_off.expand(B, cfg.n_layer, cfg.n_head)  # (B, n_layer, nh)
        trace = Trace(None, x, [], [], [], [])
        for layer, block in enumerate(self.blocks):
            x, pattern, scores, z = block(x, rope, causal, None if heads_off is None else heads_off[:, layer])
            trace.attention.append(pattern)
            trace.scores.append(scores)
            trace.residual.append(x)
            trace.z.append(z)
        if logits_at is not None:
            x = x[torch.arange(B), torch.as_tensor(logits_at)].unsqueeze(1)  # (B, 1, C)
        trace.logits = self.lm_head(self.ln_f(x))
        return trace

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
