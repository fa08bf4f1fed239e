"""Results computed once at training time and shipped as JSON beside the checkpoints."""

from app.services.registry import ModelRegistry
from model.gpt import POSITION_MODES


def shipped_results(registry: ModelRegistry, name: str, empty: dict | None = None) -> dict:
    """The shipped file's content; `empty` (default {"runs": []}) when the weights folder ships none."""
    return registry.results.get(name, {"runs": []} if empty is None else empty)


def exercise_runs(runs: list[dict], exercise: str) -> list[int]:
    """The indices of the runs of one exercise, in the order they are compared: exercise "2" compares head
    counts under learned (fewest heads first), "3" the position modes with 4 heads (learned, rope, none). A run
    names its exercises ("exercise"); a file without them is read by those rules."""
    def belongs(run: dict) -> bool:
        if run.get("exercise") is not None:
            named = run["exercise"] if isinstance(run["exercise"], list) else [run["exercise"]]
            return exercise in map(str, named)
        return run["position"] == "learned" if exercise == "2" else run["n_head"] == 4

    chosen = [i for i, run in enumerate(runs) if belongs(run)]
    if exercise == "2":
        return sorted(chosen, key=lambda i: runs[i]["n_head"])
    return sorted(chosen, key=lambda i: POSITION_MODES.index(runs[i]["position"]))


def training_results(registry: ModelRegistry) -> dict:
    """training.json, with each exercise's runs as indices into `runs` (heads: exercise 2; modes: exercise 3)."""
    results = shipped_results(registry, "training")
    runs = results.get("runs", [])
    return {**results, "exercises": {"heads": exercise_runs(runs, "2"), "modes": exercise_runs(runs, "3")}}
