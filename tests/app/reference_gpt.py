"""The lesson's GPT written again in numpy float64, from the weights alone: an independent computation to
check the server's verdicts against. It shares no code with model/gpt.py, only the maths of the lesson."""

import math

import numpy as np


def _layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _gelu(x):
    # The C library's erf, a value at a time (numpy has none); through a list, twice as fast as np.frompyfunc.
    erf = np.fromiter(map(math.erf, (x / math.sqrt(2.0)).ravel().tolist()), np.float64, x.size).reshape(x.shape)
    return 0.5 * x * (1.0 + erf)


def _rotate(x, positions, base):
    """x (nh, T, hs): each interleaved pair (2i, 2i+1) turned by position · base^(−2i/hs)."""
    hs = x.shape[-1]
    angle = positions[:, None] * base ** (-2.0 * np.arange(hs // 2) / hs)  # (T, hs/2)
    cos, sin = np.cos(angle), np.sin(angle)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = x0 * cos - x1 * sin
    out[..., 1::2] = x0 * sin + x1 * cos
    return out


class ReferenceGPT:
    def __init__(self, model):
        """model: a model.gpt.GPT; only its weights and config are read."""
        self.cfg = model.config
        self.w = {name: t.detach().double().numpy() for name, t in model.state_dict().items()}

    def run(self, ids, causal=True, start=0, use_position=True, positions=None):
        """-> (logits (T, vocab), [pattern (nh, T, T) per layer], [scores (nh, T, T) per layer]).
        use_position=False: no pos_emb term and no rotation, the lesson's model without position information.
        positions: each token's position, instead of start, start + 1, ..."""
        out = self.trace(ids, causal, start, use_position, positions)
        return out["logits"], out["patterns"], out["scores"]

    def trace(self, ids, causal=True, start=0, use_position=True, positions=None):
        """run's numbers as a dict (logits, patterns, scores), with the residual stream entering block 1 and after
        each block ("residual", n_layer + 1 of (T, C)) and each block's heads side by side before proj ("z")."""
        cfg, w = self.cfg, self.w
        T, C, nh = len(ids), cfg.n_embd, cfg.n_head
        hs = C // nh
        positions = np.arange(start, start + T) if positions is None else np.asarray(positions)
        x = w["tok_emb.weight"][ids]
        if cfg.position == "learned" and use_position:
            x = x + w["pos_emb.weight"][positions]
        patterns, all_scores, residual, zs = [], [], [x], []
        for layer in range(cfg.n_layer):
            p = f"blocks.{layer}."
            h = _layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
            qkv = h @ w[p + "attn.qkv.weight"].T + w[p + "attn.qkv.bias"]
            q, k, v = (qkv[:, i * C:(i + 1) * C].reshape(T, nh, hs).transpose(1, 0, 2) for i in range(3))
            if cfg.position == "rope" and use_position:
                q, k = (_rotate(t, positions.astype(np.float64), cfg.rope_base) for t in (q, k))
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(hs)
            if causal:
                scores = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, scores)
            e = np.exp(scores - scores.max(-1, keepdims=True))
            pattern = e / e.sum(-1, keepdims=True)
            y = (pattern @ v).transpose(1, 0, 2).reshape(T, C)
            x = x + y @ w[p + "attn.proj.weight"].T + w[p + "attn.proj.bias"]
            h = _layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
            x = x + _gelu(h @ w[p + "mlp.fc.weight"].T + w[p + "mlp.fc.bias"]) @ w[p + "mlp.proj.weight"].T \
                + w[p + "mlp.proj.bias"]
            patterns.append(pattern)
            all_scores.append(scores)
            residual.append(x)
            zs.append(y)
        logits = _layer_norm(x, w["ln_f.weight"], w["ln_f.bias"]) @ w["tok_emb.weight"].T  # the head is tied to tok_emb
        return {"logits": logits, "patterns": patterns, "scores": all_scores, "residual": residual, "z": zs}


class LastLogits:
    """A reference model's last logits by line and setting, each run once: tests compare line A with
    several lines B under each setting."""

    def __init__(self, ref: ReferenceGPT):
        self.ref, self.runs = ref, {}

    def __call__(self, ids, causal, use_position) -> np.ndarray:
        key = (tuple(ids), causal, use_position)
        if key not in self.runs:
            self.runs[key] = self.ref.run(ids, causal, use_position=use_position)[0][-1]
        return self.runs[key]
