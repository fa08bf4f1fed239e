"""Class mode's request and response shapes (/docs shows every description)."""

from typing import Annotated

from fastapi import Path
from pydantic import BaseModel, ConfigDict, Field

from app.lesson_steps import STEPS
from app.services.classes import CODE_ALPHABET, CODE_LENGTH

ClassCode = Annotated[str, Path(
    pattern=f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$",
    description=f"The class code: {CODE_LENGTH} characters from {CODE_ALPHABET} (no 0, O, 1, I or L).",
)]
StepNumber = Annotated[int, Field(
    ge=1, le=len(STEPS), description=f"1-based step of the guided lesson, 1 to {len(STEPS)} (as /lesson?step=N).")]
# Made by each student's browser (random, e.g. 16 bytes in base64url): no account, no name.
StudentId = Annotated[str, Field(
    pattern=r"^[A-Za-z0-9_-]{16,64}$",
    description="The student's browser's random id: 16 to 64 characters from A-Z a-z 0-9 _ -.")]


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
    choice: str = Field(min_length=1, max_length=32,
                        description="One of the step's choice ids (GET /api/lesson lists them), e.g. same.")


class Done(BaseModel):
    ok: bool = True
