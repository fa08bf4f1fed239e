"""Request and response shapes of the guided lesson's routes (/api/lesson, /api/head-split)."""

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from app.schemas import HEAD_CHOICES, N_LAYER_MAX, Line, check_n_head
from model.gpt import PositionMode


class StepSetup(BaseModel):
    a: str = Field(description="Line A, loaded into #line-a.")
    b: str | None = Field(description="Line B; null when the step reads line A only.")
    position: Literal["learned", "rope", "none"] = Field(description="Position mode.")
    weights: Literal["random", "trained"] = Field(description="Untrained from seed 0, or the shipped weights.")
    n_layer: int | None = Field(description="Blocks of the untrained model; null for trained weights.")
    n_head: int | None = Field(description="Heads of the untrained model; null for trained weights.")
    causal: bool = Field(description="Whether the causal mask is on.")


class SelfTestQuestion(BaseModel):
    id: str = Field(description="Key of the question's texts.")
    choices: list[str] = Field(description="Ids of the answer choices.")
    answer: str = Field(description="The choice that agrees with the lesson's answer.")


class LessonStep(BaseModel):
    id: str = Field(description="Stem of the step's text keys in static/i18n/lesson/{lang}.json.")
    kind: str = Field(description="Which charts and which verdict the page draws.")
    section: str = Field(description="The lesson's section the step belongs to.")
    setup: StepSetup | None = Field(description="What the step loads into the controls; null: no lines.")
    choices: list[str] | None = Field(description="Ids of the answer choices; null for the self-test and summary.")
    questions: list[SelfTestQuestion] | None = Field(None, description="The self-test's questions.")
    lesson: dict[str, float] | None = Field(description="The figures the lesson printed for this step.")


class LessonSteps(BaseModel):
    steps: list[LessonStep] = Field(description="The lesson's steps, in order; step N is steps[N - 1].")


class HeadSplitQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n_embd: int = Field(32, ge=1, le=1024, description="Width of the vector, 1 to 1024 (the lesson's: 32).")
    n_head: int = Field(4, ge=1, le=64, description="Heads to cut it into; must divide n_embd (the lesson's: 4).")
    length: int = Field(5, ge=1, le=128, description="Characters in the line, 1 to 128 (the lesson's: 5).")

    @model_validator(mode="after")
    def _heads_divide(self):
        if self.n_embd % self.n_head:
            raise PydanticCustomError(
                "n_head_divides", "n_head must divide n_embd ({n_embd} is not a multiple of {n_head})",
                {"n_embd": self.n_embd, "n_head": self.n_head},
            )
        return self


class VerdictRequest(BaseModel):
    """The step's setup as the student left it. An omitted field keeps the step's own value
    (GET /api/lesson), so {} asks for the lesson's own verdict."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={
        "examples": [{"a": "白日依山尽", "b": "山依日白尽", "position": "none", "weights": "random", "n_layer": 2,
                      "causal": False}]
    })

    a: Line | None = Field(None, description="Line A.")
    b: Line | None = Field(None, description="Line B (ignored by steps that read line A only).")
    position: PositionMode | None = Field(None, description="learned, rope or none.")
    weights: Literal["random", "trained"] | None = Field(
        None, description="Untrained from seed 0, or the shipped weights."
    )
    n_layer: int | None = Field(None, ge=1, le=N_LAYER_MAX, description="Blocks of the untrained model, 1 to 4.")
    n_head: Annotated[int | None, AfterValidator(check_n_head)] = Field(
        None, description="Heads of the untrained model: 1, 2, 4 or 8.",
        json_schema_extra={"enum": [*HEAD_CHOICES, None]},
    )
    causal: bool | None = Field(None, description="Whether the causal mask is on.")


class Verdict(BaseModel):
    step: str = Field(description="The step's id.")
    outcome: str | None = Field(description="What the model did, as one of the step's choice ids; null when this "
                                "setup allows no verdict (two identical lines, a line too short to judge).")
    accepted: list[str] = Field(description="The choices that count as right: the outcome, and, where two results "
                                "are closer than their noise, the orders that swap them.")
    reason: str = Field(description="Why, as an id the page words in its language (static/i18n/lesson/*.json: "
                        "reason_{id}).")
    figures: dict[str, int | float] = Field(description="The numbers the verdict was decided on. For the same/"
                                      "different steps: gap (float32, as /api/compare shows it), gap64 (the float64 "
                                      "rerun), largest_logit and rounding_limit (1e-9 of it): the gap is rounding when "
                                      "gap64 < rounding_limit.")
    difference: Literal["rounding", "real"] | None = Field(description="The same/different steps: whether the "
                                                         "last position's gap is rounding or real; else null.")
    aligned: Literal["rounding", "real"] | None = Field(description="When line B is a reordering of line A: whether "
                                                      "layer 1's last-row attention, aligned by character, differs by "
                                                      "more than rounding (float64 rerun, limit 1e-9); else null.")
    ties: list[list[str]] = Field(description="Pairs of results closer than their noise (exercises 2 and 3).")
    setup_is_lessons: bool = Field(description="Whether the setup is the step's own, the one the lesson printed "
                                   "its figure for.")
    unknown: list[str] = Field(description="Characters outside the vocabulary: the model reads each as the one "
                               "unknown character.")
