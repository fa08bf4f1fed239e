"""Shapes of the verdicts: what the model did at a lesson step (POST /api/lesson/{step}/verdict), and whether
each gap the explorer shows is rounding (POST /api/compare/verdict). Both come from app/services/verdicts.py."""

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from app.domain.lesson_steps import LESSON_LINES
from app.schemas.compare import (
    HEAD_CHOICES,
    MAX_DISTANCE,
    N_LAYER_MAX,
    CompareResponse,
    Distance,
    Line,
    check_n_head,
)
from model.gpt import PositionMode


class VerdictRequest(BaseModel):
    """The step's setup as the student left it. An omitted field keeps the step's own value
    (GET /api/lesson), so {} asks for the lesson's own verdict. The lines are line_a and line_b, as in
    /api/compare and in every answer; a and b, their earlier names, are refused like any unknown field."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={
        "examples": [{"line_a": LESSON_LINES["line_a"], "line_b": LESSON_LINES["line_b"], "position": "none",
                      "weights": "random", "n_layer": 2, "causal": False}]
    })

    line_a: Line | None = Field(None, description="Line A.")
    line_b: Line | None = Field(None, description="Line B, ignored by steps that read line A only.")
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
    distance: Distance | None = Field(None, description="The relative step: how many places apart the pair stands, "
                                      f"a whole number from 1 to {MAX_DISTANCE}.")


NextKind = Literal["punctuation", "second_line", "other"]


class AblateKinds(BaseModel):
    hardest_before: NextKind = Field(description="The kind of next character with the largest loss, every head on.")
    hardest_after: NextKind = Field(description="The same with the step's head off: the kind that is then hardest.")
    easiest_before: NextKind = Field(description="The kind with the smallest loss, every head on: where the model "
                                     "was surest.")


# Why a same-or-different step's gap is what it is (app/services/verdicts.py gap_reason), each worded by the page as
# reason_{id} (static/i18n/lesson/*.json).
GapReason = Literal[
    "identical", "identical_unknown", "tiny", "same_mix", "nomask", "blind", "blind_unknown", "blind_unknown_last",
    "content", "content_open", "last_differs", "last_differs_open", "mask", "position", "position_mask", "other",
]
# The other steps' reasons (app/services/step_judges.py): a case without an outcome, or the outcome's own id.
StepReason = Literal[
    "table_ends", "too_long", "no_table", "within_table", "no_results", "not_rope", "need_two", "one_head",
    "one_char", "too_close", "ordered", "no_previous_head",
    "ablate_trained_only", "ablate_causal_only", "probe_trained_only", "bands_trained_only", "bands_causal_only",
    "table_neighbours", "table_rhythm", "table_unrelated", "table_equal", "rotate_first", "rotate_last",
    "rotate_equal", "relative_rope", "relative_learned", "relative_both", "relative_neither", "length_rises",
    "length_flat", "length_falls", "split_more", "split_same", "split_fewer", "heads_alike", "heads_differ",
    "ablate_punctuation", "ablate_second_line", "ablate_other", "probe_close", "probe_rough", "probe_chance",
    "bands_fastest", "bands_slowest", "bands_same",
]

REASON_HELP = (
    "Why, as an id the page words in its language (static/i18n/lesson/*.json: reason_{id}, or the step's own "
    "prefix). The same/different steps: identical (the same line) and identical_unknown (lines the same but for "
    "characters outside the vocabulary, all one unknown id): no verdict. A rounding gap: same_mix (the same "
    "characters in the same proportions: 白日尽 / 白白日日尽尽); blind (1 layer, no positions, the mask on: line B "
    "is a reordering of line A); blind_unknown and blind_unknown_last (the same, but the lines as typed are not a "
    "reordering: characters outside the vocabulary make them alike, elsewhere or at the end, where the typed last "
    "characters differ); nomask (no positions, the mask off); tiny (the weights barely react). A real gap: content "
    "and last_differs (the content control alone keeps a gap, the lines ending on the same or on other ids) where "
    "order cannot reach the last output (no positions, and one layer or the mask off); content_open and "
    "last_differs_open the same where order could add to the gap (positions, or the mask on from 2 layers); "
    "mask (the causal mask leaks order), position (positions), position_mask (both), other (neither control "
    "alone). The other steps: one id per case (docs/api.md, Verdicts)."
)


class Verdict(BaseModel):
    step: str = Field(description="The step's id.")
    outcome: str | None = Field(description="What the model did, as one of the step's choice ids; null when this "
                                "setup allows no verdict (two identical lines, a line too short to judge).")
    accepted: list[str] = Field(description="The choices that count as right: the outcome, and, where two results "
                                "are closer than their noise, the orders that swap them.")
    reason: GapReason | StepReason = Field(description=REASON_HELP)
    rule: bool = Field(description="Whether the outcome is the model's rule for a case the setup does not reach "
                       "yet, not something the model did to it: step 6 (limit) on a line within pos_emb's table "
                       "(reason within_table), whose outcome is the 129th character's. The page says so beside "
                       "the student's answer.")
    figures: dict[str, int | float] = Field(description="The numbers the verdict was decided on. For the same/"
                                      "different steps: gap (float32, as /api/compare shows it), gap64 (the float64 "
                                      "rerun), largest_logit and rounding_limit (1e-9 of it): the gap is rounding when "
                                      "gap64 < rounding_limit. When float32 decides (lines that are not a reordering, "
                                      "gap over float32_limit, 1e-4 of largest_logit: 100 times float32's own error), "
                                      "there is no rerun: float32_limit instead of gap64 and rounding_limit. "
                                      "aligned_gap (float32's, from float32 values) and aligned_gap64: layer 1's "
                                      "aligned last row when B is a reordering of A. "
                                      "gap_content, gap_mask, gap_positions: the controls the reason is decided by "
                                      "(mask off and no positions; the mask on, no positions; mask off, with "
                                      "positions), each where the setup has it (docs/api.md, Verdicts).")
    difference: Literal["rounding", "real"] | None = Field(description="The same/different steps: whether the "
                                                         "last position's gap is rounding or real; else null.")
    aligned: Literal["rounding", "real"] | None = Field(description="When line B is a reordering of line A: whether "
                                                      "layer 1's last-row attention, aligned by character, differs by "
                                                      "more than rounding (float64 rerun, limit 1e-9); else null.")
    decided_by: Literal["float32", "float64"] | None = Field(
        description="The same/different steps: float32 when its gap alone decided (over float32_limit: no rerun, "
        "no gap64 in figures), float64 when the float64 rerun did; null for the other steps, which judge no gap.")
    controls_by: dict[str, Literal["float32", "float64"]] = Field(
        default_factory=dict, description="The same/different steps: the precision each control's figure (gap_content, "
        "gap_mask, gap_positions) was measured in: float32 where its gap alone decided, float64 where it was rerun; "
        "empty for the other steps.")
    ties: list[list[str]] = Field(description="Pairs of results closer than their noise (exercises 2 and 3).")
    kinds: AblateKinds | None = Field(description="Step 13 (ablate): the kinds of next character hardest and easiest "
                                      "with every head on, and hardest with the head off (heads.json's losses per "
                                      "kind, before_* and after_* in figures); null for the other steps.")
    setup_is_lessons: bool = Field(description="Whether the setup is the step's own, the one the lesson printed "
                                   "its figure for.")
    unknown: list[str] = Field(description="Characters outside the vocabulary: the model reads each as the one "
                               "unknown character.")


Judged = Literal["rounding", "real"]
DecidedBy = Literal["float32", "float64"]


class GapJudged(BaseModel):
    gap: float = Field(description="max |a - b| over the last position's logits in float32, as /api/compare shows it.")
    gap64: float | None = Field(description="The same, the same weights run again in float64; null when float32 "
                                "decided alone: its gap is over 1e-4 of the largest |logit|, 100 times float32's "
                                "own error, so it cannot be rounding (app/services/gaps.py).")
    rounding_limit: float = Field(description="1e-9 of the largest |logit| (of the float64 rerun when there is one): "
                                  "under it the gap is rounding.")
    difference: Judged = Field(description="rounding when gap64 < rounding_limit, else real.")
    decided_by: DecidedBy = Field(description="float32 when its gap alone decided (gap64 null), else float64.")


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
    decided_by: DecidedBy = Field(description="float32 when its gap alone decided (gap64 null), else float64.")
    reason: Literal["other_end", "blank", "positions", "leak", "other"] = Field(
        description="Why, as an id the page words (attn_verdict_* and attn_why_*): other_end, the lines end on "
        "other ids; blank, the row is rounding; else it differs because of position information (positions), the "
        "layer below leaking the order through the mask (leak), or something else (other).")
    earlier_rows: bool = Field(description="Whether the earlier rows can differ without any position information "
                               "(layer 1, no positions, more than two characters): each sees another prefix.")


class AlignedPair(BaseModel):
    with_position: list[AlignedJudged] = Field(description="[layer] with position information.")
    without_position: list[AlignedJudged] = Field(description="[layer] without it.")


class DepthReasons(BaseModel):
    reason: Literal["same", "other_chars", "other_end", "differs"] = Field(
        description="The untrained 1-layer model without positions: the same answer (rounding, or the same ids), "
        "or why not: B is not a reordering of A, they end on other ids, or they differ otherwise.")
    leak: Literal["leak", "no_leak"] | None = Field(
        description="With the mask on and the 1-layer model the same: whether 2 layers differ; else null.")
    causal_off: Judged | None = Field(
        description="With the mask off: rounding when every depth without positions is rounding; else real; "
        "null with the mask on.")


class CompareVerdict(BaseModel):
    difference: GapPair = Field(description="The model on screen: is the last-position gap rounding?")
    by_depth: list[DepthGap] = Field(description="The lesson's untrained depths, as /api/compare's by_depth.")
    aligned: AlignedPair | None = Field(description="When B is a reordering of A: each layer's aligned last row; "
                                        "else null.")
    unknown: list[str] = Field(description="Characters outside the vocabulary, read as the one unknown character.")
    alignment: list[int] | None = Field(description="As /api/compare's: B's position for each of A's, when B is a "
                                        "reordering of A by token id; else null. `aligned` is set exactly then.")
    depth: DepthReasons = Field(description="The depth panel's claims, as ids the page words (depth_verdict_*).")
    decided_by: DecidedBy = Field(description="float32 when float32 decided every gap (no rerun: what /api/compare "
                                  "carries), float64 when some gap was rerun in float64.")


class CompareWithVerdict(CompareResponse):
    comparison_id: str = Field(description="This comparison's id, a digest of its request: the verdict routes take "
                               "it (GET /api/compare/{comparison_id}/verdict, GET /api/lesson/{step}/verdict/"
                               "{comparison_id}) while this worker keeps the comparison, and read its float32 "
                               "pass instead of running it again.")
    verdict: CompareVerdict | None = Field(
        description="POST /api/compare/verdict's answer on this body when float32 decides every gap, as it does "
        "for lines that differ: the sentences then need no second request. Null when a gap is too small for "
        "float32 to tell rounding from a real difference: ask POST /api/compare/verdict, which reruns it in float64."
    )
    step_verdict: Verdict | None = Field(
        description="With `lesson_step`: POST /api/lesson/{lesson_step}/verdict's answer on the same setup when "
        "float32 decides it (lines that are not a reordering of each other, a gap far above float32's own "
        "error), so the lesson page needs no second request. Null otherwise: without `lesson_step`; when the gap "
        "needs the float64 rerun; or when this request is not the step's setup (another seed, or n_layer or "
        "n_head omitted where the step sets them): ask the verdict route."
    )
