"""Results computed once at training time and shipped as JSON beside the checkpoints."""

from app.registry import ModelRegistry


def shipped_results(registry: ModelRegistry, name: str, empty: dict | None = None) -> dict:
    """The shipped file's content; `empty` (default {"runs": []}) when the weights folder ships none."""
    return registry.results.get(name, {"runs": []} if empty is None else empty)
