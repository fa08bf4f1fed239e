"""How each mode encodes position: relative-distance scores and position similarity."""

from functools import lru_cache

import torch

from app.errors import InputError
from app.schemas.compare import RelativeRequest
from app.services.model_choice import choose_model
from app.services.registry import ModelRegistry
from model.gpt import POSITION_MODES, GPTConfig
from model.probes import (
    MIN_LAG,
    cosine_similarity_matrix,
    pair_scores,
    period,
    rope_similarity,
    similarity_by_lag,
)

MAX_LAG = 64  # half the table: every lag up to it is averaged over at least 64 pairs of rows
RHYTHM_MARGIN = 0.2  # cosine: the period's rows this much more alike than the median lag's: a rhythm shows


def relative_starts(distance: int, positions: int = 128) -> list[int]:
    """Every sixth start: the two characters stand at start and start + distance, and learned's table ends
    at 127 (an operator's model: at its last position, if sooner)."""
    return list(range(0, positions - distance, 6))


def relative_scores(req: RelativeRequest, registry: ModelRegistry) -> dict:
    enc = registry.tokenizer_for(req.model).encode(req.first + req.second)
    if req.model is None:
        models = {p: choose_model(registry, p, req.weights, req.n_layer, req.n_head, req.seed) for p in POSITION_MODES}
        starts = relative_starts(req.distance)
    else:
        model = choose_model(registry, "", "trained", req.n_layer, req.n_head, req.seed, req.model)
        models = {model.config.position: model}
        starts = relative_starts(req.distance, min(128, model.config.max_positions))
        if not starts:
            raise InputError("distance", f"distance must be less than model '{req.model}' reads positions "
                             f"({model.config.max_positions})", "less_than", {"lt": model.config.max_positions})
    scores = {}
    for position, model in models.items():
        scores[position] = pair_scores(model, enc[0], enc[1], starts, req.distance).numpy()
    return {"first": req.first, "second": req.second, "distance": req.distance, "starts": starts,
            "scores": scores, "unknown": enc.unknown}


def rhythm(by_lag: torch.Tensor) -> dict:
    """The table's period and whether it stands out: its rows `period` apart are RHYTHM_MARGIN more alike
    than the rows at the median lag (from MIN_LAG, as period reads it); and the runner-up, the most alike lag
    from MIN_LAG up after the period, which the page names beside it."""
    lag = period(by_lag)
    baseline = float(by_lag[MIN_LAG:].quantile(0.5))  # the mean of the two middle lags (62 lags), as the usual median
    others = by_lag.clone()
    others[:MIN_LAG] = others[lag] = -torch.inf
    next_lag = int(others.argmax())
    return {"by_lag": by_lag.tolist(), "period": lag, "at_period": float(by_lag[lag]), "median": baseline,
            "shows": float(by_lag[lag]) - baseline >= RHYTHM_MARGIN, "min_lag": MIN_LAG, "next_lag": next_lag,
            "at_next_lag": float(by_lag[next_lag])}


@lru_cache(maxsize=16)
def position_similarity(registry: ModelRegistry, step: int | None = None, n_positions: int = 128) -> dict:
    """Fixed for the life of the process, so computed once per training step (None: the shipped weights)."""
    learned = registry.trained.get("learned") if step is None else (registry.snapshot("learned", step), None)
    matrix = learned_rhythm = None
    if learned is not None and learned[0] is not None:
        with torch.no_grad():
            similarity = cosine_similarity_matrix(learned[0].pos_emb.weight[:n_positions])  # (P, P) float64
            learned_rhythm = rhythm(similarity_by_lag(similarity, MAX_LAG))
        matrix = similarity.float().numpy()
    # The shipped rope model's head_dim and base, else the lesson's (head_dim 32, base 10000). RoPE has no
    # trained position weights: its table is the same at every training step.
    rope_cfg = registry.trained["rope"][0].config if "rope" in registry.trained else GPTConfig(1, position="rope")
    rope = rope_similarity(n_positions, rope_cfg.head_dim, rope_cfg.rope_base).float().numpy()
    return {"positions": n_positions, "learned": matrix, "learned_rhythm": learned_rhythm, "rope": rope}
