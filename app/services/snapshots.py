"""The shipped runs as they trained: each snapshot's heads (snapshots.json, measured as heads.json measures the
shipped checkpoints), its validation loss, and what the page says happened when, decided here once.

A snapshot is the shipped run itself stopped after that many steps (scripts/train_snapshots.py checks its
curve against the shipped one); the last step is the shipped checkpoint, so its figures are heads.json's.
"""

from functools import lru_cache

from app.errors import InputError
from app.services.positions import position_similarity
from app.services.registry import ModelRegistry
from model import GPT
from model.assets import SHIPPED_RUN_STEPS
from model.gpt import POSITION_MODES
from model.heads import NAMED, couplet_heads, largest_offset_share, previous_character_head

POSITIONS = POSITION_MODES


def final_step(registry: ModelRegistry) -> int:
    """The shipped runs' length: the step the shipped checkpoints stand at."""
    metas = [meta for _, meta in registry.trained.values() if "steps" in meta]
    return metas[0]["steps"] if metas else SHIPPED_RUN_STEPS


def _snapshots(registry: ModelRegistry) -> dict[str, dict[int, dict]]:
    return {m["position"]: {s["step"]: s for s in m["snapshots"]}
            for m in registry.results.get("snapshots", {}).get("models", [])}


def _shipped(registry: ModelRegistry) -> dict[str, dict]:
    """heads.json's models with the shipped run's final validation loss, by position."""
    final_loss = {r["position"]: r["final_val_loss"] for r in registry.results.get("training", {}).get("runs", [])
                  if r["command"].endswith(f"--out model/weights/{r['position']}.pt")}
    return {m["position"]: {**m, "val_loss": final_loss.get(m["position"])}
            for m in registry.results.get("heads", {}).get("models", [])}


def steps(registry: ModelRegistry) -> list[int]:
    """Every step whose heads ship: the snapshots', then the last."""
    return sorted({step for by_step in _snapshots(registry).values() for step in by_step} | {final_step(registry)})


def check_step(registry: ModelRegistry, step: int, location: str = "query") -> int:
    known = steps(registry)
    if step not in known:
        raise InputError("step", f"step must be one of the training steps that ship: {known}", "snapshot_step",
                         {"steps": known}, location=location)
    return step


def snapshot_model(registry: ModelRegistry, position: str, step: int, shipped: GPT) -> GPT:
    """The trained `position` model after `step` steps; the shipped one at the last step."""
    if check_step(registry, step, location="body") == final_step(registry):
        return shipped
    model = registry.snapshot(position, step)
    if model is None:
        raise InputError("step", f"no snapshot of the '{position}' run ships at step {step}", "snapshot_step",
                         {"steps": steps(registry)})
    return model


def heads_at(registry: ModelRegistry, step: int | None) -> dict:
    """/api/heads' answer for one training step (None: the last): heads.json's shape, each model as it stood then."""
    step = final_step(registry) if step is None else check_step(registry, step)
    if step == final_step(registry):
        models = list(_shipped(registry).values())
    else:
        models = [{"position": p, **by_step[step]} for p, by_step in _snapshots(registry).items() if step in by_step]
    heads = registry.results.get("heads", {})
    return {"max_offset": heads.get("max_offset"), "step": step,
            "models": [{k: v for k, v in m.items() if k not in ("sha256", "step")} for m in models]}


def similarity_at(registry: ModelRegistry, step: int | None) -> dict:
    """/api/positions' answer at one training step (None: the shipped weights' step)."""
    step = final_step(registry) if step is None else check_step(registry, step)
    return {**position_similarity(registry, None if step == final_step(registry) else step), "step": step}


def _model_at(registry: ModelRegistry, position: str, step: int) -> dict | None:
    if step == final_step(registry):
        return _shipped(registry).get(position)
    return _snapshots(registry).get(position, {}).get(step)


def _stays_from(present: list[bool], at: list[int]) -> int | None:
    """The first step from which `present` holds at every later step: when a thing has formed, not flickered."""
    first = None
    for step, is_there in zip(at, present):
        first = (first or step) if is_there else None
    return first


def _by_step(registry: ModelRegistry, position: str, at: list[int]) -> dict:
    val_loss, previous, couplets, layer1 = [], [], [], []
    for step in at:
        model = _model_at(registry, position, step)
        val_loss.append(model["val_loss"])
        first_layer = model["layers"][0]["heads"]
        best = max(first_layer, key=lambda h: h["by_offset"][1])
        previous.append({"step": step, "layer": 1, "head": best["head"], "share": best["by_offset"][1],
                         "present": previous_character_head(first_layer) is not None})
        couplets.append({"step": step, "heads": [{"layer": layer, "head": h["head"], "share": h["line_above"]}
                                                 for layer, h in couplet_heads(model["layers"])]})
        head, offset = largest_offset_share(first_layer)
        layer1.append({"step": step, "head": head["head"], "offset": offset, "share": head["by_offset"][offset],
                       "flat": head["by_offset"][offset] < NAMED})
    return {"position": position, "val_loss": val_loss, "previous_head": previous, "couplet_heads": couplets,
            "layer1": layer1,
            "findings": {"previous_head": _stays_from([p["present"] for p in previous], at),
                         "couplet_heads": _stays_from([bool(c["heads"]) for c in couplets], at),
                         "layer1_flat": all(row["flat"] for row in layer1)}}


@lru_cache(maxsize=2)
def timeline(registry: ModelRegistry) -> dict:
    """What formed when, for every shipped position mode, from each step's measured numbers. Fixed for the life
    of the process (the shipped files do not change), so computed once, as position_similarity."""
    at = steps(registry)
    models = [_by_step(registry, p, at) for p in POSITIONS
              if all(_model_at(registry, p, step) is not None for step in at)]
    rhythm = []
    if "learned" in registry.trained:
        for step in at:
            found = similarity_at(registry, step)["learned_rhythm"]
            rhythm.append({"step": step, **{k: v for k, v in found.items() if k != "by_lag"}})
    return {"steps": at, "final_step": final_step(registry), "named": NAMED, "models": models, "rhythm": rhythm,
            "rhythm_from": _stays_from([r["shows"] for r in rhythm], at) if rhythm else None}
