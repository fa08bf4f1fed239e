from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

router = APIRouter(tags=["health"])


# async: answered on the event loop, with no trip through the thread pool, so a busy model thread
# does not delay it.
@router.get("/healthz")
async def healthz():
    """Alive: the process answers."""
    return {"status": "ok"}


@router.get("/readyz")
async def readyz(request: Request):
    """Ready: the models are loaded."""
    if getattr(request.app.state, "registry", None) is None:
        return JSONResponse({"status": "loading"}, status_code=503)
    return {"status": "ready", "trained": sorted(request.app.state.registry.trained)}
