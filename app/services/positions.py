"""How each mode encodes position: relative-distance scores and position similarity."""

from functools import lru_cache

import torch

from app.registry import ModelRegistry
from app.schemas.compare import RelativeRequest
from app.services.model_choice import choose_model
from model.gpt import GPTConfig
from model.probes import cosine_similarity_matrix, pair_scores, period, rope_similarity, similarity_by_lag

MAX_LAG = 64  # half the table: every lag up to it is averaged over at least 64 pairs of rows
def relative_starts(distance: int) -> list[int]:
    """Every sixth start: the two characters stand at start and start + distance, and learned's table ends
    at 127."""
    return list(range(0, 128 - distance, 6))


def relative_scores(req: RelativeRequest, registry: ModelRegistry) -> dict:
    enc = registry.tokenizer.encode(req.first + req.second)
    starts = relative_starts(req.distance)
    scores = {}
    for position in ("learned", "rope", "none"):
        model = choose_model(registry, position, req.weights, req.n_layer, req.n_head, req.seed)
        scores[position] = pair_scores(model, enc[0], enc[1], starts, req.distance).numpy()
    return {"first": req.first, "second": req.second, "distance": req.distance, "starts": starts,
            "scores": scores, "unknown": enc.unknown}


@lru_cache(maxsize=2)
def position_similarity(registry: ModelRegistry, n_positions: int = 128) -> dict:
    """Fixed for the life of the process, so computed once."""
    learned = registry.trained.get("learned")
    matrix = by_lag = None
    if learned is not None:
        with torch.no_grad():
            similarity = cosine_similarity_matrix(learned[0].pos_emb.weight[:n_positions])  # (P, P) float64
            by_lag = similarity_by_lag(similarity, MAX_LAG)
        matrix = similarity.float().numpy()
    # The shipped rope model's head_dim and base, else the lesson's (head_dim 32, base 10000).
    rope_cfg = registry.trained["rope"][0].config if "rope" in registry.trained else GPTConfig(1, position="rope")
    rope = rope_similarity(n_positions, rope_cfg.head_dim, rope_cfg.rope_base).float().numpy()
    rhythm = None if by_lag is None else {"by_lag": by_lag.tolist(), "period": period(by_lag)}
    return {"positions": n_positions, "learned": matrix, "learned_rhythm": rhythm, "rope": rope}
