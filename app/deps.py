"""Everything routes take from app.state, the models, settings and services the lifespan made, comes from
here: by injection (the Annotated aliases), or by a plain call where a route needs it inside its body. Each
dependency is async, so FastAPI calls it on the event loop: a plain def would cost a trip to its thread pool
per request."""

from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.templating import Jinja2Templates

from app.pipeline.batcher import Batcher
from app.pipeline.response_cache import ResponseCache
from app.pipeline.verdict_path import VerdictPath
from app.services.class_events import Broadcaster
from app.services.classes import Classes
from app.services.rate_limits import ClassLimits
from app.services.registry import ModelRegistry
from app.services.vendor import VendoredScript
from app.settings import Settings


async def get_registry(request: Request) -> ModelRegistry:
    return request.app.state.registry


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_cache(request: Request) -> ResponseCache:
    return request.app.state.cache


async def get_plotly(request: Request) -> VendoredScript:
    return request.app.state.plotly


async def get_classes(request: Request) -> Classes:
    return request.app.state.classes


async def get_broadcaster(request: Request) -> Broadcaster:
    return request.app.state.class_events


def templates(request: Request) -> Jinja2Templates:
    return request.app.state.templates


def static_dir(request: Request) -> Path:
    return request.app.state.static_dir


def compare_path(request: Request) -> tuple[ResponseCache, Batcher]:
    """/api/compare's cache and batcher by a plain call, not by Depends: each dependency is one more call on
    the event loop per request, a measurable share of a cached answer's time (docs/benchmarks.md)."""
    return request.app.state.cache, request.app.state.batcher


async def get_limits(request: Request) -> ClassLimits:
    return request.app.state.limits


def verdict_path(request: Request) -> VerdictPath:
    """The verdict routes' path (app.pipeline.verdict_path), by a plain call as compare_path."""
    return request.app.state.verdicts


def loaded(request: Request, name: str) -> Any | None:
    """What the lifespan has made so far under this name, or None while it is still starting (/readyz)."""
    return getattr(request.app.state, name, None)


Registry = Annotated[ModelRegistry, Depends(get_registry)]
AppSettings = Annotated[Settings, Depends(get_settings)]
Plotly = Annotated[VendoredScript, Depends(get_plotly)]
Cache = Annotated[ResponseCache, Depends(get_cache)]
ClassesDep = Annotated[Classes, Depends(get_classes)]
Events = Annotated[Broadcaster, Depends(get_broadcaster)]
Limits = Annotated[ClassLimits, Depends(get_limits)]
