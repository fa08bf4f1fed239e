"""POST /api/ablate: one line through one model with every head on, and with some heads turned off.

A head that is off gives zeros to `proj` (GPT.trace's heads_off); no weight changes, so one model object
serves every request at once. Both runs are two rows of one batch, filled as /api/compare fills its batches
(fill_rows), so an answer is the same bytes whatever else the server is doing.
"""

import numpy as np
import torch

from app.errors import InputError
from app.schemas.ablation import AblateRequest, head_message
from app.services.batch_shape import fill_rows
from app.services.compare import TOP_K, check_length
from app.services.model_choice import choose_model
from app.services.registry import ModelRegistry
from app.services.snapshots import snapshot_model
from model import GPT, CharTokenizer


class OffHeadError(InputError):
    """A head in `off` that the loaded model does not have, named at ["body", "off", i, field]."""

    def __init__(self, i: int, field: str, limit_name: str, limit: int, value: int):
        super().__init__("off", head_message(field, limit_name, limit, value), "less_than_equal", {"le": limit})
        self.loc = ["body", "off", i, field]

    def detail(self) -> list[dict]:
        return [{"loc": self.loc, "msg": self.message, "type": self.type, "ctx": self.ctx}]


def ablate(req: AblateRequest, registry: ModelRegistry) -> dict:
    model = choose_model(registry, req.position, req.weights, req.n_layer, req.n_head, req.seed, req.model)
    if req.step is not None:
        model = snapshot_model(registry, req.position, req.step, model)
    cfg = model.config
    mask = heads_off_mask(req, model)
    tok = registry.tokenizer_for(req.model)
    ids = tok.encode(req.line)
    check_length("line", ids, cfg)
    T = len(ids)
    # Row 0 every head on, row 1 the heads off; the copies fill_rows adds are never read.
    rows = fill_rows([torch.zeros_like(mask), mask], T)
    with torch.inference_mode():
        trace = model.trace(torch.tensor([list(ids)] * len(rows)), heads_off=torch.stack(rows))
    logits = trace.logits.double()  # (R, T, vocab): float64 for the softmax, as /api/compare's top_next
    attention = [p.numpy() for p in trace.attention]  # per layer (R, nh, T, T)
    off = [{"layer": int(layer) + 1, "head": int(head) + 1} for layer, head in mask.nonzero().tolist()]
    return {
        "model": {
            "name": req.model, "position": cfg.position, "weights": req.weights, "n_layer": cfg.n_layer,
            "n_head": cfg.n_head,
            "n_embd": cfg.n_embd, "head_dim": cfg.n_embd // cfg.n_head, "block_size": cfg.block_size,
            "seed": req.seed if req.weights == "random" else None, "causal": True, "vocab_size": cfg.vocab_size,
            "step": req.step,
        },
        "line": req.line,
        "tokens": list(req.line),
        "unknown": ids.unknown,
        "off": off,
        "heads_off": mask.tolist(),
        "all_on": _run(logits[0], attention, 0, ids, tok),
        "ablated": _run(logits[1], attention, 1, ids, tok),
    }


def heads_off_mask(req: AblateRequest, model: GPT) -> torch.Tensor:
    """(n_layer, n_head) bool from the request's 1-based heads. The request's schema checked them against the
    shape it implies; this checks them against the model loaded, which a weights folder may shape otherwise."""
    cfg = model.config
    mask = torch.zeros(cfg.n_layer, cfg.n_head, dtype=torch.bool)
    for i, ref in enumerate(req.off):
        if ref.layer > cfg.n_layer:
            raise OffHeadError(i, "layer", "n_layer", cfg.n_layer, ref.layer)
        if ref.head > cfg.n_head:
            raise OffHeadError(i, "head", "n_head", cfg.n_head, ref.head)
        mask[ref.layer - 1, ref.head - 1] = True
    return mask


def _run(logits: torch.Tensor, attention: list[np.ndarray], row: int, ids, tok: CharTokenizer) -> dict:
    """logits (T, vocab) float64 of one row; its loss on each next character of the line."""
    logp = torch.log_softmax(logits, dim=-1)  # (T, vocab)
    targets = torch.tensor(list(ids)[1:], dtype=torch.long)  # (T - 1,): the character each position predicts
    loss = -logp[:-1].gather(1, targets[:, None])[:, 0]  # (T - 1,)
    top = torch.topk(logp.exp(), TOP_K, dim=-1)  # (T, TOP_K)
    return {
        "loss": loss.tolist(),
        "mean_loss": float(loss.mean()) if len(loss) else None,
        "top_next": [[{"token": tok.token(i), "prob": p} for p, i in zip(probs, idx)]
                     for probs, idx in zip(top.values.tolist(), top.indices.tolist())],
        # [layer][head][query][key], float32 numpy so the JSON carries float32's shortest digits.
        "attention": np.stack([p[row] for p in attention]),
    }
