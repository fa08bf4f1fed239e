"""JSON encoding for the API: orjson, with numpy float32 arrays written in float32's
shortest exact digits (0.33333334, not 0.3333333432674408)."""

import orjson
from fastapi.responses import JSONResponse


class NumpyJSONResponse(JSONResponse):
    def render(self, content) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_SERIALIZE_NUMPY)
