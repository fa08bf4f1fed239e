import asyncio
from typing import Annotated, Literal, get_args

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from app.deps import loaded
from app.errors import ClassError

router = APIRouter(tags=["health"])
STORE_PING_SECONDS = 2.0  # a class store slower than this to answer a ping is down for a class
Part = Literal["models", "class_store"]
PARTS = get_args(Part)


# async: answered on the event loop, with no trip through the thread pool, so a busy model thread
# does not delay it.
@router.get("/healthz")
async def healthz():
    """Alive: the process answers."""
    return {"status": "ok"}


async def _class_store(request: Request) -> str:
    classes = loaded(request, "classes")
    if classes is None:
        return "loading"
    try:
        await asyncio.wait_for(classes.ping(), STORE_PING_SECONDS)
    except ClassError as error:
        return f"down: {error.message}"
    except asyncio.TimeoutError:
        return f"down: the class store ({classes.store.name}) did not answer within {STORE_PING_SECONDS:g} s"
    return "ready"


@router.get("/readyz")
async def readyz(request: Request, part: Annotated[list[Part] | None, Query(
        description="Only these parts (models, class_store); e.g. a Kubernetes readiness probe that must not take "
                    "every pod out of the Service because class mode's Redis is down asks for models only.")] = None):
    """Ready: each part answers. 503 names the parts that do not: the models still loading, or the class store
    (SQLite or Redis) not answering."""
    wanted = [p for p in PARTS if part is None or p in part]
    parts = {}
    if "models" in wanted:
        parts["models"] = "ready" if loaded(request, "registry") is not None else "loading"
    if "class_store" in wanted:
        parts["class_store"] = await _class_store(request)
    ready = all(state == "ready" for state in parts.values())
    body = {"status": "ready" if ready else "not ready", "parts": parts}
    if "models" in wanted and parts["models"] == "ready":
        body["trained"] = sorted(loaded(request, "registry").trained)
    return JSONResponse(body, status_code=200 if ready else 503)
