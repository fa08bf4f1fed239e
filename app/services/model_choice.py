"""Which model answers a request: the shipped trained weights or an untrained model from a seed."""

from app.errors import InputError
from app.registry import ModelRegistry
from app.schemas import CompareRequest
from model import GPT

LESSON_SHAPE = {"n_layer": 2, "n_head": 4}  # the lesson's model, for untrained weights


def choose_model(req: CompareRequest, registry: ModelRegistry) -> GPT:
    if req.weights == "random":
        n_layer = req.n_layer or LESSON_SHAPE["n_layer"]
        n_head = req.n_head or LESSON_SHAPE["n_head"]
        return registry.random(req.position, n_layer, n_head, req.seed)
    if req.position not in registry.trained:
        raise InputError("weights", f"no trained weights ship for position '{req.position}'; use weights 'random'")
    model, _ = registry.trained[req.position]
    cfg = model.config
    for field in ("n_layer", "n_head"):
        asked = getattr(req, field)
        if asked is not None and asked != getattr(cfg, field):
            raise InputError(
                field,
                f"the trained '{req.position}' weights have n_layer {cfg.n_layer} and n_head {cfg.n_head}; "
                f"omit {field} or use weights 'random' for {field} {asked}",
            )
    return model
