"""Apps for tests on the shipped models, loaded once per test process: the class tests build an app per test, and
each lifespan loaded the three checkpoints again (about 100 ms of CPU per app, fifty apps in the fast tier)."""

import functools
from pathlib import Path

from fastapi import FastAPI

from app.main import create_app
from app.services.registry import ModelRegistry
from app.settings import Settings


@functools.cache
def _shipped(weights_dir: Path, cache_size: int) -> ModelRegistry:
    return ModelRegistry.load(weights_dir, cache_size)


def app_on_shipped_models(settings: Settings | None = None) -> FastAPI:
    """create_app(settings) serving models loaded once. For tests of what the app does with the models, not of how
    it loads them: settings with operator models (`HP_MODELS`) get their own."""
    settings = settings or Settings()
    if settings.models:
        return create_app(settings)
    return create_app(settings, registry=_shipped(settings.weights_dir, settings.model_cache_size))
