"""The models a worker holds: the shipped trained ones and the operator's (`serve --model`), loaded once, and a
bounded cache of untrained ones built from a seed. Models are only read after loading, so one object serves
every request thread at once."""

import json
from collections import OrderedDict
from pathlib import Path
from threading import Lock

from app.services.twins import Twins
from model import GPT, CharTokenizer, GPTConfig
from model.assets import checkpoint_path, snapshot_path
from model.checkpoint import load_checkpoint
from model.errors import ModelFileError
from model.gpt import POSITION_MODES
from model.loading import LoadedModel, load_model


def load_operator_models(specs) -> dict[str, LoadedModel]:
    """specs: app.settings.ModelSpec's, in order. Raises ModelFileError (one line: the file and the reason)."""
    return {spec.name: load_model(spec.path, spec.meta) for spec in specs}


def model_file_problems(specs) -> list[str]:
    """One line per model file that cannot be served, each naming the file and the reason: what `serve` checks in
    a process of its own before it listens."""
    problems = []
    for spec in specs:
        try:
            load_model(spec.path, spec.meta)
        except ModelFileError as error:
            problems.append(str(error))
    return problems


class ModelRegistry:
    def __init__(self, tokenizer: CharTokenizer, trained: dict[str, tuple[GPT, dict]], cache_size: int,
                 results: dict | None = None, weights_dir: Path | None = None,
                 operator: dict[str, LoadedModel] | None = None):
        self.tokenizer = tokenizer
        self.trained = trained
        self.operator = operator or {}  # the operator's models by name: each with its own tokenizer
        self.results = results or {}  # shipped JSON by name: "training", "length", "heads", "snapshots", "probe"
        self.weights_dir = weights_dir
        self._snapshots: dict[tuple[str, int], GPT] = {}  # loaded on first use: most requests never need one
        self._cache: OrderedDict[tuple, GPT] = OrderedDict()
        self._cache_size = cache_size
        self._lock = Lock()
        self.twins = Twins()  # the float64 twins of these models and their kept line runs: the verdicts' reruns

    @classmethod
    def load(cls, weights_dir: Path, cache_size: int, specs=()) -> "ModelRegistry":
        tokenizer = CharTokenizer.load(weights_dir / "vocab.json")
        trained = {}
        for position in POSITION_MODES:
            path = checkpoint_path(position, weights_dir)
            if path.exists():
                model, ckpt_tokenizer, meta = load_checkpoint(path)
                if ckpt_tokenizer.chars != tokenizer.chars:
                    raise ValueError(f"{path} was trained with another vocabulary than {weights_dir / 'vocab.json'}")
                trained[position] = (model, meta)
        results = {name: json.loads((weights_dir / f"{name}.json").read_text(encoding="utf-8"))
                   for name in ("training", "length", "heads", "snapshots", "probe")
                   if (weights_dir / f"{name}.json").exists()}
        return cls(tokenizer, trained, cache_size, results, weights_dir, load_operator_models(specs))

    def tokenizer_for(self, name: str | None) -> CharTokenizer:
        """The vocabulary of the operator's model `name`, or the shipped one (None); the name is checked already."""
        return self.tokenizer if name is None else self.operator[name].tokenizer

    def snapshot(self, position: str, step: int) -> GPT | None:
        """The shipped run's weights after `step` training steps (model/weights/snapshots/), None if not shipped.
        All of them together are about 70 MB in float32, so once loaded they stay."""
        key = (position, step)
        with self._lock:
            if key in self._snapshots:
                return self._snapshots[key]
        path = snapshot_path(position, step, self.weights_dir / "snapshots") if self.weights_dir else None
        if path is None or not path.exists():
            return None
        model = load_checkpoint(path)[0]
        with self._lock:
            return self._snapshots.setdefault(key, model)

    def random(self, position: str, n_layer: int, n_head: int, seed: int, like: GPTConfig | None = None) -> GPT:
        """An untrained model of the lesson's width and vocabulary, or of the vocabulary, width, length and biases
        of `like` (an operator's model, for its table by depth); equal arguments give identical weights."""
        shape = {} if like is None else {"vocab_size": like.vocab_size, "n_embd": like.n_embd,
                                         "block_size": like.block_size, "bias": like.bias}
        key = (position, n_layer, n_head, seed, *shape.values())
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        cfg = GPTConfig(**{"vocab_size": self.tokenizer.vocab_size, **shape}, n_layer=n_layer, n_head=n_head,
                        position=position)
        model = GPT(cfg, seed=seed).eval()
        with self._lock:
            self._cache[key] = model
            while len(self._cache) > self._cache_size:
                self.twins.forget(self._cache.popitem(last=False)[1])
        return model
