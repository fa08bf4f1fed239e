"""Where a model keeps order (GET /api/probe) and which of RoPE's speeds each head uses (GET /api/rope/speeds).

The trained models' figures, at every shipped snapshot and at the end of training, come from probe.json
(scripts/eval_probe.py). An untrained model is probed on request, on a fixed subset of the validation windows
(every UNTRAINED_STRIDE-th: 164 of 1,468), and the response cache keeps the answer.
"""

from functools import lru_cache

import torch

from app.domain.lesson_steps import LESSON_SHAPE
from app.errors import InputError
from app.schemas.probe import ProbeQuery
from app.services.registry import ModelRegistry
from app.services.snapshots import check_step, final_step
from model.gpt import POSITION_MODES
from model.poems import load_text
from model.position_probe import RIDGE, position_probe
from model.windows import window_offsets

UNTRAINED_STRIDE = 9  # every ninth validation window: 164 windows, 32 of them the test part


@lru_cache(maxsize=1)
def _validation_text() -> str:
    return load_text("val")


def untrained_offsets(n_ids: int, block_size: int) -> torch.Tensor:
    """The fixed subset of validation windows an untrained model is probed on."""
    return window_offsets(n_ids, block_size, block_size)[::UNTRAINED_STRIDE]


def _only_with(query: ProbeQuery, field: str, weights: str) -> None:
    if getattr(query, field) is not None and query.weights != weights:
        raise InputError(field, f"{field} is only for weights '{weights}' (got weights '{query.weights}')",
                         "probe_field", {"weights": weights}, location="query")


def probe(query: ProbeQuery, registry: ModelRegistry) -> dict:
    """/api/probe's answer."""
    _only_with(query, "n_layer", "random")
    _only_with(query, "seed", "random")
    _only_with(query, "step", "trained")
    positions = [query.position] if query.position else list(POSITION_MODES)
    if query.weights == "random":
        return _untrained(query, registry, positions)
    step = final_step(registry) if query.step is None else check_step(registry, query.step)
    shipped = registry.results.get("probe", {}).get("probe", {})
    mask = "causal" if query.causal else "no_mask"
    models = []
    for m in shipped.get("models", []):
        at = next((s for s in m["steps"] if s["step"] == step), None)
        if m["position"] in positions and at is not None:
            models.append({"position": m["position"], "n_layer": max(s["layer"] for s in at[mask]), "sites": at[mask]})
    return {"weights": query.weights, "step": step, "seed": None, "causal": query.causal,
            "windows": shipped.get("windows", 0), "test_windows": shipped.get("test_windows", 0), "ridge": RIDGE,
            "models": models}


def _untrained(query: ProbeQuery, registry: ModelRegistry, positions: list[str]) -> dict:
    n_layer, seed = query.n_layer or LESSON_SHAPE["n_layer"], query.seed or 0
    ids = torch.tensor(registry.tokenizer.encode(_validation_text()))
    models, measured = [], None
    for position in positions:
        model = registry.random(position, n_layer, LESSON_SHAPE["n_head"], seed)
        T = model.config.block_size
        measured = position_probe(model, ids, untrained_offsets(len(ids), T), query.causal)
        models.append({"position": position, "n_layer": n_layer, "sites": measured["sites"]})
    return {"weights": "random", "step": None, "seed": seed, "causal": query.causal, "windows": measured["windows"],
            "test_windows": measured["test_windows"], "ridge": RIDGE, "models": models}


def rope_speeds(registry: ModelRegistry, band: str | None) -> dict:
    """/api/rope/speeds' answer from probe.json: the trained RoPE model's pair shares and the band switch."""
    rope = registry.results.get("probe", {}).get("rope")
    if rope is None:
        return {"windows": 0, "theta_degrees": [], "layers": [], "all_on": None, "stopped": None}
    effects = {b["band"]: b for b in rope["bands"]}
    return {"windows": rope["windows"], "theta_degrees": rope["theta_degrees"], "layers": rope["layers"],
            "all_on": effects[None], "stopped": effects[band] if band else None}
