"""The JSON API. The page uses exactly these routes; /docs documents them."""

from fastapi import APIRouter

from app.deps import Registry
from app.responses import NumpyJSONResponse
from app.schemas import CompareRequest, CompareResponse, Options
from app.services.compare import compare
from app.services.options import options

router = APIRouter(prefix="/api", tags=["api"])


@router.post("/compare", response_model=CompareResponse, response_class=NumpyJSONResponse)
def post_compare(req: CompareRequest, registry: Registry):
    """Run the model on two lines: per-head attention, the output difference with and without
    position information, the lesson's table by depth, and the RoPE angles."""
    return NumpyJSONResponse(compare(req, registry))


@router.get("/options", response_model=Options)
def get_options(registry: Registry):
    """What can be asked: position modes, head counts, line limits and the shipped trained shapes."""
    return options(registry)
