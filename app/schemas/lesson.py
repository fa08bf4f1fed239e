"""Request and response shapes of the guided lesson's routes (/api/lesson, /api/head-split)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from model.gpt import PositionMode


class StepSetup(BaseModel):
    line_a: str | None = Field(description="Line A, loaded into #line-a; null when the step reads no line (its "
                               "verdict is on the model's shipped figures).")
    line_b: str | None = Field(description="Line B; null when the step reads line A only.")
    position: PositionMode = Field(description="Position mode.")
    weights: Literal["random", "trained"] = Field(description="Untrained from seed 0, or the shipped weights.")
    n_layer: int | None = Field(description="Blocks of the untrained model; null for trained weights.")
    n_head: int | None = Field(description="Heads of the untrained model; null for trained weights.")
    causal: bool = Field(description="Whether the causal mask is on.")
    distance: int | None = Field(None, description="The relative step: places between the pair's two characters; "
                                 "null for the other steps.")


class SelfTestQuestion(BaseModel):
    id: str = Field(description="Key of the question's texts.")
    choices: list[str] = Field(description="Ids of the answer choices.")
    answer: str = Field(description="The choice that agrees with the lesson's answer.")


class ExplorerShows(BaseModel):
    step: str = Field(description="Id of a later step whose answer the explorer would show from this step's screen.")
    when: dict[str, str | bool] = Field(description="The setup values under which it would: every one must be the "
                                        "page's (an empty object: whatever the setup).")


class LessonStep(BaseModel):
    id: str = Field(description="Stem of the step's text keys in static/i18n/lesson/{lang}.json.")
    kind: str = Field(description="Which charts and which verdict the page draws.")
    section: str = Field(description="The lesson's section the step belongs to.")
    setup: StepSetup | None = Field(description="What the step loads into the controls; null: no lines.")
    choices: list[str] | None = Field(description="Ids of the answer choices; null for the self-test and summary.")
    questions: list[SelfTestQuestion] | None = Field(None, description="The self-test's questions.")
    lesson: dict[str, float] | None = Field(description="The figures the lesson printed for this step.")
    chart_only: list[str] = Field([], description="Setup fields the step only draws, not part of what its question "
                                  "asks: changing them leaves the verdict's setup_is_lessons true.")
    explorer_shows: list[ExplorerShows] = Field([], description="Later steps the explorer would give away from this "
                                                "step: while one of them is unanswered, the page offers no link to the "
                                                "explorer but says after which step it opens.")
    losses_answer: str | None = Field(None, description="Id of a later step whose question the trained models' "
                                      "validation losses answer: while it is unanswered, the page does not show them "
                                      "(the trained weights' note, the length step's other curves); null from it on.")


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

