"""Issue 37: the float64 twins and their kept line runs live on the model registry (registry.twins), not in module
globals: two registries keep apart, and an untrained model the registry drops is dropped by its twins too (a kept
line's key no longer keeps it alive)."""

import gc
import weakref

import numpy as np
import torch

from app.services.registry import ModelRegistry
from app.services.twins import LineKey


def test_a_model_the_registry_drops_is_not_kept_alive_by_its_float64_runs(registry):
    small = ModelRegistry(registry.tokenizer, {}, cache_size=1)
    model = small.random("learned", 1, 4, 123)
    (run,) = small.twins.lines64([LineKey(model, [1, 2, 3], True, True)])
    assert run.last_logits.dtype == np.float64
    gone = weakref.ref(model)
    del model
    small.random("learned", 1, 4, 124)  # the cache holds one model: the first is dropped
    gc.collect()
    assert gone() is None


def test_each_registry_keeps_its_own_twins(registry):
    one, two = (ModelRegistry(registry.tokenizer, {}, cache_size=2) for _ in range(2))
    assert one.twins is not two.twins
    model = one.random("rope", 1, 2, 5)
    assert one.twins.twin(model) is one.twins.twin(model)  # made once per registry
    assert two.twins.twin(model) is not one.twins.twin(model)
    assert one.twins.twin(model).rope_cos.dtype == torch.float64  # RoPE's angles taken again in float64
