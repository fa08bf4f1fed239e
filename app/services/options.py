"""GET /api/options: what the page may offer, read from the loaded models."""

from app.domain.lesson_steps import LESSON_SHAPE
from app.schemas.ablation import MAX_ABLATE_CHARS
from app.schemas.compare import HEAD_CHOICES, MAX_DISTANCE, N_LAYER_MAX, CompareRequest
from app.services.i18n import LANGS
from app.services.registry import ModelRegistry
from model.gpt import POSITION_MODES, GPTConfig


def max_chars(position: str) -> int:
    return GPTConfig(vocab_size=1, position=position).max_positions


def options(registry: ModelRegistry) -> dict:
    trained = {}
    for position, (model, meta) in registry.trained.items():
        cfg = model.config
        trained[position] = {"n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_embd": cfg.n_embd,
                             "block_size": cfg.block_size, "val_loss": meta.get("val_loss")}
    return {
        "positions": list(POSITION_MODES),
        "n_head": list(HEAD_CHOICES),
        "n_layer_max": N_LAYER_MAX,
        "max_chars": {p: max_chars(p) for p in POSITION_MODES},
        "max_distance": MAX_DISTANCE,
        "trained": trained,
        "random": dict(LESSON_SHAPE),
        "defaults": CompareRequest().model_dump(),
        "langs": list(LANGS),
        "max_ablate_chars": MAX_ABLATE_CHARS,
    }
