"""Which model answers a request: the shipped trained weights, an operator's model by name, or an untrained
model from a seed."""

from pydantic import BaseModel

from app.domain.lesson_steps import LESSON_SHAPE
from app.errors import InputError
from app.services.registry import ModelRegistry
from model import GPT


def with_model(req: BaseModel, registry: ModelRegistry) -> BaseModel:
    """The request as the named operator's model answers it: its position mode and trained weights, so every
    service downstream reads req.position as it does for the shipped models. Unchanged without `model`.
    The fields are those of /api/compare, /api/ablate and /api/relative; an InputError names a field of them."""
    name = getattr(req, "model", None)
    if name is None:
        return req
    if name not in registry.operator:
        served = ", ".join(registry.operator) or "none"
        raise InputError("model", f"no model is served under the name '{name}' (served: {served}); "
                         "GET /api/options lists them", "unknown_model", {"model": name})
    cfg = registry.operator[name].model.config
    given = req.model_fields_set
    if "weights" in given and req.weights != "trained":
        raise InputError("weights", f"model '{name}' is trained weights: omit weights or send 'trained'",
                         "model_is_trained", {"model": name})
    if "position" in given and req.position != cfg.position:
        raise InputError("position", f"model '{name}' is a '{cfg.position}' model: omit position or send "
                         f"'{cfg.position}'", "model_position", {"model": name, "position": cfg.position})
    if getattr(req, "step", None) is not None:
        raise InputError("step", f"step names a snapshot of the shipped runs; model '{name}' has none: omit step",
                         "model_has_no_steps", {"model": name})
    update = {"position": cfg.position} if "position" in type(req).model_fields else {}
    return req.model_copy(update=update | {"weights": "trained"})


def choose_model(registry: ModelRegistry, position: str, weights: str, n_layer: int | None, n_head: int | None,
                 seed: int, name: str | None = None) -> GPT:
    """name: an operator's model, checked by with_model. The fields are those of /api/compare and /api/relative,
    so an InputError names a field of either."""
    if name is not None:
        model, label = registry.operator[name].model, f"model '{name}'"
    elif weights == "random":
        return registry.random(position, n_layer or LESSON_SHAPE["n_layer"], n_head or LESSON_SHAPE["n_head"], seed)
    elif position not in registry.trained:
        raise InputError("weights", f"no trained weights ship for position '{position}'; use weights 'random'",
                         "no_trained_weights", {"position": position})
    else:
        model, label = registry.trained[position][0], f"the trained '{position}' weights"
    cfg = model.config
    for field, asked in (("n_layer", n_layer), ("n_head", n_head)):
        if asked is not None and asked != getattr(cfg, field):
            raise InputError(
                field,
                f"{label} have n_layer {cfg.n_layer} and n_head {cfg.n_head}; "
                f"omit {field} or use weights 'random' for {field} {asked}",
                "trained_shape", {"n_layer": cfg.n_layer, "n_head": cfg.n_head},
            )
    return model


def rope_shape(query, registry: ModelRegistry) -> tuple[int, float]:
    """GET /api/rope's head size and base: the query's, or those of the operator's model it names."""
    if query.model is None:
        return query.head_dim, query.base
    if query.model not in registry.operator:
        raise InputError("model", f"no model is served under the name '{query.model}'; GET /api/options lists them",
                         "unknown_model", {"model": query.model}, "query")
    cfg = registry.operator[query.model].model.config
    for field, own in (("head_dim", cfg.head_dim), ("base", cfg.rope_base)):
        if field in query.model_fields_set and getattr(query, field) != own:
            raise InputError(field, f"model '{query.model}' has {field} {own}: omit {field} or send {own}",
                             "model_shape", {field: own}, "query")
    return cfg.head_dim, cfg.rope_base
