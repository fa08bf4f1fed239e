"""The app factory. Nothing happens at import time; the lifespan loads the models once."""

import asyncio
import gc
import logging
import re
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import torch
from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.errors import ClassError, InputError
from app.pipeline.batcher import Batcher
from app.pipeline.encoding import GZIP_LEVEL, GZIP_MIN_BYTES, GZIP_THREAD_MIN_BYTES
from app.pipeline.response_cache import ResponseCache
from app.pipeline.verdict_path import VerdictPath
from app.routes import api, classes, docs, health, lesson, pages
from app.server.middleware import GuardMiddleware
from app.services.class_events import Broadcaster
from app.services.classes import Classes
from app.services.compare import batch_key
from app.services.comparison import comparisons
from app.services.rate_limits import ClassLimits
from app.services.registry import ModelRegistry
from app.services.vendor import load_plotly
from app.services.verdicts import judge_many
from app.settings import Settings, model_specs
from app.stores import open_store

ROOT = Path(__file__).resolve().parent.parent
SHUTDOWN_SECONDS = 5  # how long the class store may take to close when a worker stops


async def _close_classes(events: Broadcaster, store) -> None:
    await events.close()
    await store.close()


def create_app(settings: Settings | None = None, registry: ModelRegistry | None = None) -> FastAPI:
    """registry: models already loaded from settings' weights and models, to serve instead of loading them in the
    lifespan. Models are only read, so apps may share one: the tests build about fifty apps in a process."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        torch.set_num_threads(settings.torch_threads)
        models = registry or ModelRegistry.load(settings.weights_dir, settings.model_cache_size,
                                                model_specs(settings.models))
        app.state.registry = models
        app.state.plotly = load_plotly()
        app.state.cache = ResponseCache(settings.response_cache_size, model_threads=settings.model_threads)
        app.state.batcher = Batcher(lambda reqs: comparisons(reqs, models), app.state.cache.limiter,
                                    settings.batch_size, settings.batch_wait_ms / 1000, key=batch_key)
        verdicts = Batcher(lambda items: judge_many(items, models), app.state.cache.limiter,
                           settings.batch_size, settings.batch_wait_ms / 1000, key=lambda item: item.key)
        app.state.verdicts = VerdictPath(app.state.cache, models, verdicts)
        store = open_store(settings)
        app.state.classes = Classes(store, settings.max_classes, settings.max_students)
        app.state.class_events = Broadcaster(store, settings.class_heartbeat_seconds, settings.class_stall_seconds)
        app.state.limits = ClassLimits(store, app.state.classes.ask, settings)
        # The models, vocabulary and tables loaded above are about 200,000 objects that live as long as the
        # worker. A full collection scanned them all, stopping the event loop; frozen, they are skipped by every
        # collection (docs/benchmarks.md: gc.freeze).
        gc.collect()
        gc.freeze()
        yield
        try:
            # A store that does not let go (seen once: a Redis client closing under a watcher) must not keep the
            # worker from stopping: the connections die with the process anyway.
            await asyncio.wait_for(_close_classes(app.state.class_events, store), SHUTDOWN_SECONDS)
        except asyncio.TimeoutError:
            logging.getLogger("uvicorn.error").warning(
                "the class store did not close within %s s; stopping without it", SHUTDOWN_SECONDS)
        # uvicorn's own logger, which its default configuration prints; scripts/bench.py reads this line.
        sizes = dict(sorted(app.state.batcher.sizes.items()))
        logging.getLogger("uvicorn.error").info("compare batches by number of requests: %s", sizes)

    app = FastAPI(
        title="Heads & Positions",
        summary="A small GPT's attention heads and position encodings, computed on request.",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,  # FastAPI's pages load from a CDN with inline scripts; app.routes.docs serves them from here
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.registry = None
    app.state.static_dir = ROOT / "static"
    app.state.templates = Jinja2Templates(directory=ROOT / "templates")
    app.mount("/static", StaticFiles(directory=ROOT / "static"), name="static")
    app.include_router(health.router)
    app.include_router(api.router)
    app.include_router(pages.router)
    app.include_router(docs.router)
    app.include_router(lesson.router)
    app.include_router(classes.router)
    app.include_router(classes.qr_router)
    # JSON and static text shrink several times over; Plotly's bundle is already gzipped and passes through.
    app.add_middleware(GZipMiddleware, minimum_size=GZIP_MIN_BYTES, compresslevel=GZIP_LEVEL,
                       thread_minimum_size=GZIP_THREAD_MIN_BYTES)
    app.add_middleware(GuardMiddleware, max_body_bytes=settings.max_body_bytes,
                       rate_limited=settings.rate_limit_per_minute > 0)
    _add_error_handlers(app)
    return app


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(InputError)
    async def input_error(request: Request, exc: InputError):
        return JSONResponse({"detail": exc.detail()}, status_code=exc.status)

    @app.exception_handler(ClassError)
    async def class_error(request: Request, exc: ClassError):
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else {}
        if exc.status == 401:
            headers["WWW-Authenticate"] = "Bearer"
        return JSONResponse({"detail": exc.detail()}, status_code=exc.status, headers=headers)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        # FastAPI answers 400 "There was an error parsing the body" for a body json.loads gives up on other than
        # by a JSONDecodeError (fastapi.routing): the rule that body broke is in its cause.
        if exc.status_code == 400 and isinstance(exc.__cause__, Exception):
            return JSONResponse({"detail": [unparseable_body(exc.__cause__)]}, status_code=422)
        if exc.status_code == 405 and (allow := allowed_methods(request)):
            exc = StarletteHTTPException(405, exc.detail, headers={"Allow": allow})
        return await http_exception_handler(request, exc)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        # pydantic's errors minus 'input', which may echo a 64 KB body back. ctx keeps the rule's values
        # (max_length, ge, expected...) so the page can word the message in its language.
        errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"], **_rule_values(e.get("ctx"))}
                  for e in exc.errors()]
        return JSONResponse({"detail": errors}, status_code=422)


def allowed_methods(request: Request) -> str | None:
    """Every method the request's path answers, for a 405's Allow, from the app's own OpenAPI paths. Starlette names
    only the first route whose path matches, and one path can be two routes (GET and DELETE /api/classes/{code}).
    None for a path the schema does not list (the pages, /static)."""
    methods = set()
    for template, operations in request.app.openapi()["paths"].items():
        pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))  # {code} -> one path segment
        if re.fullmatch(pattern, request.url.path):
            methods |= {method.upper() for method in operations}
    return ", ".join(sorted(methods)) or None


CTX_MAX_CHARS = 100


def unparseable_body(cause: Exception) -> dict:
    """A 422 item naming the body and the rule it broke, for a body JSON cannot read."""
    if isinstance(cause, UnicodeDecodeError):
        msg, rule = "the body must be UTF-8 text", "utf8"
    elif isinstance(cause, RecursionError):
        msg, rule = "the body's arrays or objects are nested too deep", "depth"
    elif isinstance(cause, ValueError) and "digits" in str(cause):
        msg, rule = f"a number in the body has too many digits (at most {sys.get_int_max_str_digits()})", "digits"
    else:
        msg, rule = "the body is not JSON this server can read", "json"
    return {"loc": ["body"], "msg": msg, "type": "json_invalid", "ctx": {"rule": rule}}


def _rule_values(ctx: dict | None) -> dict:
    """{"ctx": {...}} with plain, short values only (an exception object or a long string could carry
    the input), or {} when none is left: the 422 schema allows ctx to be absent, not null."""
    values = {key: value for key, value in (ctx or {}).items()
              if isinstance(value, (int, float, bool)) or (isinstance(value, str) and len(value) <= CTX_MAX_CHARS)}
    return {"ctx": values} if values else {}
