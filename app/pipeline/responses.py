"""JSON encoding for the API: orjson, with numpy float32 arrays written in float32's
shortest exact digits (0.33333334, not 0.3333333432674408)."""

from fastapi.responses import JSONResponse
from starlette.datastructures import Headers

from app.pipeline.encoding import GZIP_MIN_BYTES, Encoded, encode


class NumpyJSONResponse(JSONResponse):
    def render(self, content) -> bytes:
        return encode(content)


class JSONBytes(JSONResponse):
    """JSON that is already encoded (by the response cache). A JSONResponse, so /docs shows
    the route's response model as its body."""

    def render(self, content: bytes) -> bytes:
        return content


async def encoded_json(answer: Encoded, request_headers: Headers) -> JSONBytes:
    """The answer gzipped once and kept, when the client accepts gzip; GZipMiddleware passes a body
    that already has a Content-Encoding through untouched."""
    if len(answer.json) >= GZIP_MIN_BYTES and "gzip" in request_headers.get("accept-encoding", ""):
        return JSONBytes(await answer.gzip(), headers={"content-encoding": "gzip", "vary": "Accept-Encoding"})
    return JSONBytes(answer.json)
