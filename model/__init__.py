"""The lesson's GPT, its tokenizer and its experiments. Knows nothing of the web."""

import importlib

_HOMES = {"GPT": "model.gpt", "GPTConfig": "model.gpt", "Trace": "model.gpt", "CharTokenizer": "model.tokenizer",
          "load_model": "model.loading", "LIMITS": "model.loading"}
__all__ = list(_HOMES)


def __getattr__(name: str):
    # `from model import GPT` imports model.gpt (and PyTorch) on first use, not on `import model.assets`:
    # `heads-positions serve` reads the shipped files' place in its supervisor, which must not load PyTorch.
    if name not in _HOMES:
        raise AttributeError(f"module 'model' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
