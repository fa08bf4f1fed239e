"""Errors the services raise. They know nothing of HTTP: InputError is about a request's content, and the app
turns it into a 422 whose detail has the same shape as pydantic's; ClassError carries its own status."""


class InputError(ValueError):
    """type and ctx are machine-readable, as pydantic's: a page words the error in its own language
    from them, and the English message is for people reading the JSON. status: 422, or 404 for an id that names
    nothing kept (a comparison_id)."""

    def __init__(self, field: str, message: str, type: str = "value_error", ctx: dict | None = None,
                 location: str = "body", status: int = 422):
        super().__init__(message)
        self.field = field
        self.status = status
        self.location = location  # "body", "query" for a GET's parameter, or "path"
        self.message = message
        self.type = type
        self.ctx = ctx

    def detail(self) -> list[dict]:
        item = {"loc": [self.location, self.field], "msg": self.message, "type": self.type}
        return [item | {"ctx": self.ctx}] if self.ctx else [item]


class ClassError(Exception):
    """status: the HTTP status; type: what happened, for a page to word; ctx: the values in the wording;
    retry_after: seconds, sent as Retry-After (429 and 503)."""

    def __init__(self, status: int, type: str, message: str, ctx: dict | None = None,
                 retry_after: int | None = None):
        super().__init__(message)
        self.status = status
        self.type = type
        self.message = message
        self.ctx = ctx or {}
        self.retry_after = retry_after

    def detail(self) -> list[dict]:
        """The same shape as a 422's detail: one item with msg, type and ctx."""
        item = {"loc": [], "msg": self.message, "type": self.type}
        return [item | {"ctx": self.ctx}] if self.ctx else [item]
