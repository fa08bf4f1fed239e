"""The models a worker holds: the shipped trained ones, loaded once, and a bounded cache of
untrained ones built from a seed. Models are only read after loading, so one object serves
every request thread at once."""

import json
from collections import OrderedDict
from pathlib import Path
from threading import Lock

from model import GPT, CharTokenizer, GPTConfig
from model.assets import checkpoint_path, snapshot_path
from model.checkpoint import load_checkpoint
from model.gpt import POSITION_MODES


class ModelRegistry:
    def __init__(self, tokenizer: CharTokenizer, trained: dict[str, tuple[GPT, dict]], cache_size: int,
                 results: dict | None = None, weights_dir: Path | None = None):
        self.tokenizer = tokenizer
        self.trained = trained
        self.results = results or {}  # shipped JSON by name: "training", "length", "heads", "snapshots", "probe"
        self.weights_dir = weights_dir
        self._snapshots: dict[tuple[str, int], GPT] = {}  # loaded on first use: most requests never need one
        self._cache: OrderedDict[tuple, GPT] = OrderedDict()
        self._cache_size = cache_size
        self._lock = Lock()

    @classmethod
    def load(cls, weights_dir: Path, cache_size: int) -> "ModelRegistry":
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
        return cls(tokenizer, trained, cache_size, results, weights_dir)

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

    def random(self, position: str, n_layer: int, n_head: int, seed: int) -> GPT:
        """An untrained model of the lesson's width; equal arguments give identical weights."""
        key = (position, n_layer, n_head, seed)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        cfg = GPTConfig(vocab_size=self.tokenizer.vocab_size, n_layer=n_layer, n_head=n_head, position=position)
        model = GPT(cfg, seed=seed).eval()
        with self._lock:
            self._cache[key] = model
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return model
