"""Errors the services raise about a request's content. They know nothing of HTTP; the app
turns them into a 422 whose detail has the same shape as pydantic's."""


class InputError(ValueError):
    """type and ctx are machine-readable, as pydantic's: a page words the error in its own language
    from them, and the English message is for people reading the JSON."""

    def __init__(self, field: str, message: str, type: str = "value_error", ctx: dict | None = None,
                 location: str = "body"):
        super().__init__(message)
        self.field = field
        self.location = location  # "body", or "query" for a GET's parameter
        self.message = message
        self.type = type
        self.ctx = ctx

    def detail(self) -> list[dict]:
        item = {"loc": [self.location, self.field], "msg": self.message, "type": self.type}
        return [item | {"ctx": self.ctx}] if self.ctx else [item]
