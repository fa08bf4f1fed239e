"""Which model answers a request: the shipped trained weights or an untrained model from a seed."""

from app.domain.lesson_steps import LESSON_SHAPE
from app.errors import InputError
from app.services.registry import ModelRegistry
from model import GPT


def choose_model(registry: ModelRegistry, position: str, weights: str, n_layer: int | None, n_head: int | None,
                 seed: int) -> GPT:
    """The fields are those of /api/compare and /api/relative, so an InputError names a field of either."""
    if weights == "random":
        return registry.random(position, n_layer or LESSON_SHAPE["n_layer"], n_head or LESSON_SHAPE["n_head"], seed)
    if position not in registry.trained:
        raise InputError("weights", f"no trained weights ship for position '{position}'; use weights 'random'",
                         "no_trained_weights", {"position": position})
    model, _ = registry.trained[position]
    cfg = model.config
    for field, asked in (("n_layer", n_layer), ("n_head", n_head)):
        if asked is not None and asked != getattr(cfg, field):
            raise InputError(
                field,
                f"the trained '{position}' weights have n_layer {cfg.n_layer} and n_head {cfg.n_head}; "
                f"omit {field} or use weights 'random' for {field} {asked}",
                "trained_shape", {"n_layer": cfg.n_layer, "n_head": cfg.n_head},
            )
    return model
