"""Errors the services raise about a request's content. They know nothing of HTTP; the app
turns them into a 422 whose detail has the same shape as pydantic's."""


class InputError(ValueError):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message

    def detail(self) -> list[dict]:
        return [{"loc": ["body", self.field], "msg": self.message, "type": "value_error"}]
