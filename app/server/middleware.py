"""Cross-cutting HTTP concerns: a request id on every response, security headers,
a cap on request bodies, an optional per-address rate limit, and a 500 that leaks nothing."""

import itertools
import logging
import secrets
from urllib.parse import parse_qsl

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import ClassError

log = logging.getLogger("heads_positions")

# Plotly draws with inline styles, hence style-src 'unsafe-inline'; scripts only from this origin.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


class BodyTooLarge(HTTPException):
    """An HTTPException, so FastAPI's body parsing passes it through as a 413."""

    def __init__(self, limit: int):
        super().__init__(413, f"request body too large: at most {limit} bytes")


# More significant digits than any body this app accepts; int() refuses strings of over 4,300 digits.
LENGTH_DIGITS = 18


def declared_length(scope: Scope) -> int | None:
    """The request's Content-Length, or None when it has none or it is not ASCII digits (bytes.isdigit
    is ASCII only). uvicorn passes on a number with thousands of leading zeros: only the significant
    digits are read, and a number too long to be any body here reads as 10**18."""
    value = next((value for name, value in scope.get("headers", []) if name == b"content-length"), None)
    if value is None or not value.isdigit():
        return None
    significant = value.lstrip(b"0")
    return int(significant or b"0") if len(significant) <= LENGTH_DIGITS else 10**LENGTH_DIGITS


def repeated_parameter(scope: Scope) -> str | None:
    """The first query parameter an API request gives twice (?head_dim=32&head_dim=8), or None: a route reads
    one value per parameter, and taking the last silently would answer a question nobody asked."""
    query = scope.get("query_string", b"")
    if b"&" not in query or not scope["path"].startswith("/api/"):
        return None
    seen = set()
    for name, _ in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if name in seen:
            return name
        seen.add(name)
    return None


class GuardMiddleware:
    """Pure ASGI, so it sees the body as it streams in: a client that lies about
    Content-Length, or sends chunks, is still cut off at max_body_bytes."""

    def __init__(self, app: ASGIApp, max_body_bytes: int, rate_limited: bool = False):
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.rate_limited = rate_limited  # HP_RATE_LIMIT_PER_MINUTE > 0: the lifespan's limits.requests counts
        # Request ids: a random prefix per process and a counter, 16 hex digits. uuid4 reads the OS's random
        # source on every request, a tenth of the event loop's time under load.
        self._id_prefix = secrets.token_hex(4)
        self._ids = itertools.count()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = f"{self._id_prefix}{next(self._ids) & 0xFFFFFFFF:08x}"
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS,
                                      (b"x-request-id", request_id.encode())]
            await send(message)

        refused = await self._over_rate_limit(scope)
        if refused is not None:
            await self._reject(429, refused.message, request_id, scope, receive, send_with_headers,
                               {"Retry-After": str(refused.retry_after)})
            return
        repeated = repeated_parameter(scope)
        if repeated is not None:
            await self._reject(422, [{"loc": ["query", repeated], "type": "repeated_parameter",
                                      "msg": f"{repeated} is given more than once: give it once"}],
                               request_id, scope, receive, send_with_headers)
            return
        declared = declared_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            await self._reject(413, BodyTooLarge(self.max_body_bytes).detail, request_id, scope, receive,
                               send_with_headers)
            return

        received = 0
        response_started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise BodyTooLarge(self.max_body_bytes)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal response_started
            response_started = response_started or message["type"] == "http.response.start"
            await send_with_headers(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge as exc:
            if not response_started:
                await self._reject(413, exc.detail, request_id, scope, receive, send_with_headers)
        except Exception:
            # The trace goes to the server log only; the client gets the id to quote.
            log.exception("unhandled error, request_id=%s", request_id)
            if not response_started:
                await self._reject(500, "internal error", request_id, scope, receive, send_with_headers)

    async def _over_rate_limit(self, scope: Scope):
        """The 429 ClassError of a request past HP_RATE_LIMIT_PER_MINUTE, or None. The window is the class
        store's (app/services/rate_limits.py), so it holds across workers; a store that does not answer lets
        the request through (the explorer needs no store)."""
        if not self.rate_limited or not scope["path"].startswith("/api/"):
            return None
        limits = getattr(scope["app"].state, "limits", None)
        if limits is None:  # still starting
            return None
        client = (scope.get("client") or ("?", 0))[0]
        try:
            await limits.requests.hit(client)
        except ClassError as error:
            return error if error.status == 429 else None
        return None

    @staticmethod
    async def _reject(status, message, request_id, scope, receive, send, headers=None) -> None:
        response = JSONResponse({"detail": message, "request_id": request_id}, status_code=status, headers=headers)
        await response(scope, receive, send)
