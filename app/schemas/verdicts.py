"""Shapes of the verdicts: what the model did at a lesson step (POST /api/lesson/{step}/verdict), and whether
each gap the explorer shows is rounding (POST /api/compare/verdict). Both come from app/services/verdicts.py."""

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from app.schemas.compare import HEAD_CHOICES, MAX_DISTANCE, N_LAYER_MAX, Line, check_n_head
from model.gpt import PositionMode


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
    distance: int | None = Field(None, ge=1, le=MAX_DISTANCE, description="The relative step: how many places "
                                 "apart the pair stands, 1 to 64.")


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


Judged = Literal["rounding", "real"]


class GapJudged(BaseModel):
    gap: float = Field(description="max |a - b| over the last position's logits in float32, as /api/compare shows it.")
    gap64: float | None = Field(description="The same, the same weights run again in float64; null when float32 "
                                "decided alone: its gap is over 1e-4 of the largest |logit|, 100 times float32's "
                                "own error, so it cannot be rounding (app/services/gaps.py).")
    rounding_limit: float = Field(description="1e-9 of the largest |logit| (of the float64 rerun when there is one): "
                                  "under it the gap is rounding.")
    difference: Judged = Field(description="rounding when gap64 < rounding_limit, else real.")


class GapPair(BaseModel):
    with_position: GapJudged | None = Field(description="The model as it is; null when A and B are the same ids.")
    without_position: GapJudged | None = Field(description="The same weights without position information.")


class DepthGap(GapPair):
    n_layer: int = Field(description="Depth of the untrained model (same mode, heads and seed), as in /api/compare.")


class AlignedJudged(BaseModel):
    gap: float = Field(description="Largest |A - B| of the layer's last-row attention, B's keys put in A's order "
                       "(float32, as /api/compare's maps).")
    gap64: float | None = Field(description="The same in the float64 rerun; null when float32 decided alone "
                                "(gap over 1e-4).")
    difference: Judged = Field(description="rounding when gap64 < 1e-9 (attention weights are at most 1).")


class AlignedPair(BaseModel):
    with_position: list[AlignedJudged] = Field(description="[layer] with position information.")
    without_position: list[AlignedJudged] = Field(description="[layer] without it.")


class CompareVerdict(BaseModel):
    difference: GapPair = Field(description="The model on screen: is the last-position gap rounding?")
    by_depth: list[DepthGap] = Field(description="The lesson's untrained depths, as /api/compare's by_depth.")
    aligned: AlignedPair | None = Field(description="When B is a reordering of A: each layer's aligned last row; "
                                        "else null.")
    unknown: list[str] = Field(description="Characters outside the vocabulary, read as the one unknown character.")
