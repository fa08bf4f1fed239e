from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz():
    """Alive: the process answers."""
    return {"status": "ok"}


@router.get("/readyz")
def readyz(request: Request):
    """Ready: the models are loaded."""
    if getattr(request.app.state, "registry", None) is None:
        return JSONResponse({"status": "loading"}, status_code=503)
    return {"status": "ready", "trained": sorted(request.app.state.registry.trained)}
