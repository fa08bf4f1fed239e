"""JSON encoding for the API: orjson, with numpy float32 arrays written in float32's
shortest exact digits (0.33333334, not 0.3333333432674408)."""

from fastapi.responses import JSONResponse

from app.cache import encode


class NumpyJSONResponse(JSONResponse):
    def render(self, content) -> bytes:
        return encode(content)


class JSONBytes(JSONResponse):
    """JSON that is already encoded (by the response cache). A JSONResponse, so /docs shows
    the route's response model as its body."""

    def render(self, content: bytes) -> bytes:
        return content
