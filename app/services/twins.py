"""float64 twins of the models: the same weights in float64, for the verdicts' reruns."""

import copy
import weakref
from threading import Lock

import torch

from model import GPT
from model.rope import rope_angles

_twins: "weakref.WeakKeyDictionary[GPT, GPT]" = weakref.WeakKeyDictionary()
_twins_lock = Lock()


def float64_twin(model: GPT) -> GPT:
    """A float64 copy of the model, made once per model. The model itself is never changed."""
    with _twins_lock:
        twin = _twins.get(model)
        if twin is None:
            twin = copy.deepcopy(model).double()
            if model.config.position == "rope":
                # The buffers were rounded to float32 when the model was built: take them again in float64,
                # or cos(m·θ)cos(n·θ) + sin(m·θ)sin(n·θ) = cos((m − n)·θ) holds only to float32's digits.
                angles = rope_angles(torch.arange(model.config.max_positions), model.config.head_dim,
                                     model.config.rope_base)  # (P, hs/2) float64
                twin.rope_cos, twin.rope_sin = angles.cos(), angles.sin()
            _twins[model] = twin
    return twin
