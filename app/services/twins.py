"""float64 twins of the models, and their runs of single lines: what the verdicts' reruns read.

A line runs in a batch of lines of its length bucket: under the causal mask, right-padded to the next multiple of
BUCKET positions (no position sees the padding), so that the lines a class types, 1 to 8 characters long, run as
one batch; without the mask, at its own length. Batches are filled as run_many's (fill_rows): a line's float64
numbers are then the same whatever ran beside it (tests/app/test_gaps.py), so its run is kept and read again.
While a student types line B, line A's run is already there: a keystroke reruns one line, not two. The twins and the
kept runs live on the model registry (registry.twins), which the app's lifespan makes."""

import copy
import weakref
from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from threading import Lock

import numpy as np
import torch

from app.services.batch_shape import MAX_POSITIONS, MIN_ROWS, fill_rows
from model import GPT
from model.rope import rope_angles

KEPT_LINES = 512  # line runs kept per worker: each holds vocab_size float64 logits (32 KB)
BUCKET = 8  # causal lines are padded to a multiple of this many positions


def float64_twin(model: GPT) -> GPT:
    """A float64 copy of the model. The model itself is never changed."""
    twin = copy.deepcopy(model).double()
    if model.config.position == "rope":
        # The buffers were rounded to float32 when the model was built: take them again in float64,
        # or cos(m·θ)cos(n·θ) + sin(m·θ)sin(n·θ) = cos((m − n)·θ) holds only to float32's digits.
        angles = rope_angles(torch.arange(model.config.max_positions), model.config.head_dim,
                             model.config.rope_base)  # (P, hs/2) float64
        twin.rope_cos, twin.rope_sin = angles.cos(), angles.sin()
    return twin


@dataclass(frozen=True)
class Line64:
    """One line through a model's float64 twin, alone: its last position's logits and, per layer, the last
    query's attention row."""

    last_logits: np.ndarray  # (vocab_size,)
    last_rows: list[np.ndarray]  # per layer (nh, n)


class LineKey(tuple):
    """(model, ids, causal, with_position); under position 'none' the flag changes nothing and reads True."""

    def __new__(cls, model: GPT, ids, causal: bool, flag: bool):
        return super().__new__(cls, (model, tuple(ids), causal, flag or model.config.position == "none"))


class Twins:
    """A worker's float64 twins, one per model, made on first use, and its last kept_lines line runs. Made with the
    model registry (registry.twins), which calls forget when it drops an untrained model: neither a twin nor a kept
    line then keeps that model alive. Used from many model threads at once, hence the locks."""

    def __init__(self, kept_lines: int = KEPT_LINES):
        self.kept_lines = kept_lines
        self._twins: weakref.WeakKeyDictionary[GPT, GPT] = weakref.WeakKeyDictionary()
        self._twins_lock = Lock()
        self._kept: OrderedDict[LineKey, Line64] = OrderedDict()
        self._kept_lock = Lock()

    def twin(self, model: GPT) -> GPT:
        """The model's float64 twin (float64_twin), made once."""
        with self._twins_lock:
            twin = self._twins.get(model)
            if twin is None:
                twin = self._twins[model] = float64_twin(model)
        return twin

    def forget(self, model: GPT) -> None:
        """Drop the model's twin and kept lines: the registry no longer holds the model."""
        with self._twins_lock:
            self._twins.pop(model, None)
        with self._kept_lock:
            for key in [key for key in self._kept if key[0] is model]:
                del self._kept[key]

    def lines64(self, keys: list[LineKey]) -> list[Line64]:
        """Each line's float64 run: kept ones read again, the others run together (one batch per model, length and
        mask)."""
        with self._kept_lock:
            found = {key: self._kept[key] for key in keys if key in self._kept}
            for key in found:
                self._kept.move_to_end(key)
        batches = defaultdict(list)
        for key in dict.fromkeys(k for k in keys if k not in found):
            n, causal = len(key[1]), key[2]
            batches[key[0], -(-n // BUCKET) * BUCKET if causal else n, causal].append(key)
        for (model, T, causal), rows in batches.items():
            size = max(MIN_ROWS, MAX_POSITIONS // T)
            for first in range(0, len(rows), size):
                found |= _run(self.twin(model), T, causal, rows[first:first + size])
        with self._kept_lock:
            for key in keys:
                self._kept[key] = found[key]
            while len(self._kept) > self.kept_lines:
                self._kept.popitem(last=False)
        return [found[key] for key in keys]


def _run(twin: GPT, T: int, causal: bool, rows: list[LineKey]) -> dict:
    filled = fill_rows(rows, T)
    idx = torch.tensor([list(key[1]) + [0] * (T - len(key[1])) for key in filled])  # (R, T), right-padded
    with torch.inference_mode():
        trace = twin.trace(idx, use_position=torch.tensor([key[3] for key in filled]), causal=causal,
                           logits_at=torch.tensor([len(key[1]) - 1 for key in filled]))
    # Copies: a kept line must not hold its whole batch's tensors. The last query's row, (nh, n).
    return {key: Line64(trace.logits[r, 0].numpy().copy(),
                        [p[r, :, len(key[1]) - 1, :len(key[1])].numpy().copy() for p in trace.attention])
            for r, key in enumerate(rows)}
