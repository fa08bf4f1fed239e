"""Class mode's request and response shapes (/docs shows every description)."""

import re
from typing import Annotated

from fastapi import Path
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from app.lesson_steps import STEPS
from app.services.classes import CODE_ALPHABET, CODE_LENGTH

CODE_PATTERN = f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$"
STUDENT_PATTERN = r"^[A-Za-z0-9_-]{16,64}$"


def _rule(error_type: str, message: str, check) -> AfterValidator:
    """A constraint whose message says what to send; the pattern stays in the schema for /docs and clients."""
    def validate(value):
        if not check(value):
            raise PydanticCustomError(error_type, message)
        return value
    return AfterValidator(validate)


ClassCode = Annotated[str, Path(
    json_schema_extra={"pattern": CODE_PATTERN},
    description=f"The class code: {CODE_LENGTH} characters from {CODE_ALPHABET} (no 0, O, 1, I or L).",
), _rule("class_code", f"code must be {CODE_LENGTH} characters from {CODE_ALPHABET}, as on the teacher's board",
         lambda v: re.fullmatch(CODE_PATTERN, v))]
StepNumber = Annotated[int, Field(
    json_schema_extra={"minimum": 1, "maximum": len(STEPS)},
    description=f"1-based step of the guided lesson, 1 to {len(STEPS)} (as /lesson?step=N).",
), _rule("step_range", f"step must be 1 to {len(STEPS)}, the lesson's steps", lambda v: 1 <= v <= len(STEPS))]
# Made by each student's browser (random, e.g. 16 bytes in base64url): no account, no name.
StudentId = Annotated[str, Field(
    json_schema_extra={"pattern": STUDENT_PATTERN},
    description="The student's browser's random id: 16 to 64 characters from A-Z a-z 0-9 _ -.",
), _rule("student_id", "student must be 16 to 64 characters from A-Z a-z 0-9 _ - (the browser's random id)",
         lambda v: re.fullmatch(STUDENT_PATTERN, v))]


class NewClass(BaseModel):
    code: str = Field(description="What students type to join.")
    teacher_token: str = Field(description="Secret: send it as Authorization: Bearer <token> to lead the class. "
                                           "The server keeps only its hash, so it cannot be shown again.")
    join_url: str = Field(description="The lesson page in this class: /lesson?class=CODE.")


class ClassView(BaseModel):
    step: int = Field(description="The step the teacher shows (1-based).")
    revealed: bool = Field(description="Whether the teacher revealed the step's answer.")
    joined: int = Field(description="Students who have joined.")
    answered: int = Field(description="Students who answered the current step.")
    counts: dict[str, int] | None = Field(
        None, description="Teacher only: students per choice at the current step; empty where it asks no question.")


class StepMove(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"examples": [{"step": 2}]})
    step: StepNumber


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={
        "examples": [{"student": "Xr4pV0cQ9mT2aLk8", "step": 1, "choice": "same"}]})
    student: StudentId
    step: StepNumber
    # Checked against the step's own choices by the service, whose message lists them.
    choice: str = Field(description="One of the step's choice ids (GET /api/lesson lists them), e.g. same.")


class Done(BaseModel):
    ok: bool = Field(True, description="Always true: the change is made and every screen of the class is told.")
