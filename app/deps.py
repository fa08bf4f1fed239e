"""What routes receive by injection: the models and settings the lifespan loaded. Each is async, so
FastAPI calls it on the event loop: a plain def would cost a trip to its thread pool per request."""

from typing import Annotated

from fastapi import Depends, Request

from app.registry import ModelRegistry
from app.response_cache import ResponseCache
from app.settings import Settings
from app.vendor import VendoredScript


async def get_registry(request: Request) -> ModelRegistry:
    return request.app.state.registry


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_cache(request: Request) -> ResponseCache:
    return request.app.state.cache


async def get_plotly(request: Request) -> VendoredScript:
    return request.app.state.plotly


Registry = Annotated[ModelRegistry, Depends(get_registry)]
AppSettings = Annotated[Settings, Depends(get_settings)]
Plotly = Annotated[VendoredScript, Depends(get_plotly)]
Cache = Annotated[ResponseCache, Depends(get_cache)]
