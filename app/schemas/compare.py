"""The JSON API's request and response shapes. Every field carries a description: /docs shows them."""

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    WrapValidator,
    field_validator,
)
from pydantic_core import PydanticCustomError

from app.domain.lesson_steps import GAP_STEPS, LESSON_LINES
from app.domain.model_names import MODEL_NAME
from app.schemas.classes import ClassRules
from app.schemas.text import NoControls
from app.schemas.weights import WeightsUsed
from model.gpt import PositionMode
from model.loading import LIMITS

HEAD_CHOICES = (1, 2, 4, 8)  # the head counts that divide n_embd 128 and that the lesson trains
N_LAYER_MAX = 4
LAYER_MAX = LIMITS.n_layer  # the deepest model served: an operator's may be deeper than random weights go
MAX_SEED = 2**31
MAX_ROPE_POSITIONS = 4096
MAX_DISTANCE = 64  # the relative experiment's pair: half of pos_emb's 128 rows, so 11 starts still fit
MAX_ROPE_POSITION = 1_000_000  # past this, float64 angles lose the digits the table shows


def check_n_head(value: int | None) -> int | None:
    if value is not None and value not in HEAD_CHOICES:
        raise PydanticCustomError(
            "n_head_choice", "n_head must be 1, 2, 4 or 8: the head count must divide n_embd 128 (got {value})",
            {"value": value},
        )
    return value

def _distance_rule(value, handler):
    """One error for every way a distance can be wrong (2.5, 0, 65, "3"): the field and its whole rule, so a page
    can say "a whole number from 1 to 64" rather than "at most 64" or "wrong type"."""
    try:
        return handler(value)
    except ValidationError:
        raise PydanticCustomError(
            "distance", "distance must be a whole number of places from {min} to {max} (got {value})",
            {"min": 1, "max": MAX_DISTANCE, "value": repr(value)},
        ) from None


Distance = Annotated[int, Field(ge=1, le=MAX_DISTANCE), WrapValidator(_distance_rule)]

MAX_LINE_CHARS = 512
Line = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_LINE_CHARS),
    NoControls,
    Field(description="1 to 512 characters; at most 128 with position 'learned' (pos_emb has 128 rows). No control "
          "or format characters (such as U+202E, which reorders a line on screen); a line break is allowed."),
]


ModelChoice = Annotated[
    str | None,
    Field(None, pattern=f"^{MODEL_NAME}$",
          description="One of the operator's models by name (GET /api/options lists them, `serve --model`); its "
          "position mode answers, so omit `position` or give the model's. Omitted: the shipped or random weights."),
]


class CompareRequest(BaseModel):
    # strict: 0 is not false and "5" is not 5; the request must be what the schema says.
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={
        "examples": [{"line_a": LESSON_LINES["line_a"], "line_b": LESSON_LINES["line_b"], "position": "learned",
                      "weights": "random"}]
    })

    line_a: Line = LESSON_LINES["line_a"]
    line_b: Line = LESSON_LINES["line_b"]
    position: PositionMode = Field(
        "learned", description="learned: GPT-2's pos_emb table; rope: rotary encoding of q and k; none: no positions."
    )
    weights: Literal["random", "trained"] = Field(
        "trained", description="trained: the shipped weights (the default); random: the lesson's untrained model "
        "built from `seed`.",
    )
    n_layer: int | None = Field(
        None, ge=1, le=N_LAYER_MAX, description="Blocks, 1 to 4. Omitted: the chosen weights' depth."
    )
    n_head: Annotated[int | None, AfterValidator(check_n_head)] = Field(
        None,
        description="Heads, 1, 2, 4 or 8 (each divides n_embd 128). Omitted: the chosen weights' head count.",
        json_schema_extra={"enum": [*HEAD_CHOICES, None]},
    )
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed of the random weights, 0 to 2**31.")
    model: ModelChoice = None
    causal: bool = Field(True, description="false removes the causal mask (full attention): the control experiment.")
    layer: int | None = Field(
        None, ge=1, le=LAYER_MAX,
        description="Only this layer's attention maps (1-based), to keep long lines' answers small. "
        "Omitted: every layer. `attention_layers` in the answer says which layers `attention` holds.",
    )
    attention_without_position: bool = Field(
        True, description="false leaves each line's `attention_without_position` out (null): it halves a long "
        "line's answer when only the maps with position information are shown.",
    )
    lesson_step: Literal[tuple(GAP_STEPS)] | None = Field(
        None, description="A lesson step that asks whether the last position's output differs (order, leak, pair, "
        "posemb, nomask, ex1): the answer's `step_verdict` is then that step's verdict, as POST /api/lesson/{step}/"
        "verdict gives it, when float32 decides it. Ignored by /api/compare/verdict.",
    )


class Difference(BaseModel):
    max_abs: float = Field(description="max |a - b| over the last position's logits.")
    l2: float = Field(description="L2 norm of a - b over the last position's logits.")


class DifferencePair(BaseModel):
    with_position: Difference = Field(description="The model as it is.")
    without_position: Difference = Field(
        description="The same weights with position information removed: no pos_emb term, no rotation."
    )


class DepthDifference(DifferencePair):
    n_layer: int = Field(description="Depth of the untrained model, same seed, mode and heads.")


class NextToken(BaseModel):
    token: str = Field(description="A character; U+FFFD stands for the unknown id.")
    prob: float = Field(description="Softmax probability at the last position.")


class LineResult(BaseModel):
    text: str = Field(description="The line as sent.")
    tokens: list[str] = Field(description="The line's characters, one per position.")
    ids: list[int] = Field(description="Token ids; 0 is the unknown id.")
    unknown: list[bool] = Field(description="True where the character is outside the vocabulary.")
    attention: list[list[list[list[float]]]] = Field(
        description="Post-softmax pattern [layer][head][query][key] for the layers in `attention_layers`; "
        "masked (future) keys are exactly 0."
    )
    attention_without_position: list[list[list[list[float]]]] | None = Field(
        description="The same layers' patterns from the same weights run with use_position=False (no pos_emb "
        "term, no rotation). Under position 'none' it equals `attention`. Null when the request set "
        "attention_without_position to false."
    )
    top_next: list[NextToken] = Field(description="The 5 most likely next characters, most likely first.")


class ResidualDifference(BaseModel):
    with_position: list[list[float]] = Field(
        description="[layer][position]: L2 norm of the difference of the two residual streams. Row 0 is the "
        "input of block 1 (embeddings), row l the output of block l."
    )
    without_position: list[list[float]] = Field(description="The same, with position information removed.")


class RopeTable(BaseModel):
    base: float = Field(description="RoPE base of the model.")
    head_dim: int = Field(description="Head size: the vector that turns, in head_dim / 2 pairs.")
    theta: list[float] = Field(description="theta_i = base ** (-2i / head_dim), one per pair i.")
    angles: list[list[float]] = Field(description="[position][pair]: position * theta_i, radians.")


class HeadShapes(BaseModel):
    q: list[int] = Field(description="(B, T, C)")
    heads: list[int] = Field(description="(B, n_head, T, head_dim)")
    scores: list[int] = Field(description="(B, n_head, T, T)")


class AttentionParams(BaseModel):
    n_head: int = Field(description="Heads the n_embd-wide vector is cut into.")
    qkv: int = Field(description="Weights and biases of the qkv Linear.")
    proj: int = Field(description="Weights and biases of the proj Linear.")


class HeadSplit(BaseModel):
    n_embd: int = Field(description="Width of the vector that is split: the lesson's example uses 32.")
    n_head: int = Field(description="Heads it is cut into: 4 in the lesson's example.")
    shapes: HeadShapes = Field(description="q, heads and scores for one 5-character line. Joining the heads "
                               "back (transpose, then view) gives q's shape again.")
    params: list[AttentionParams] = Field(description="Attention parameters at this width for 1, 2, 4 and 8 heads.")


class ModelInfo(WeightsUsed):
    name: str | None = Field(None, description="The operator's model that answered; null for shipped or random "
                             "weights.")
    position: PositionMode = Field(description="How the model knows order: learned, rope or none.")
    n_layer: int = Field(description="Blocks.")
    n_head: int = Field(description="Heads per attention layer.")
    n_embd: int = Field(description="Width of the residual stream.")
    head_dim: int = Field(description="n_embd / n_head.")
    block_size: int = Field(description="Rows of pos_emb, and the training length.")
    vocab_size: int = Field(description="Characters in the vocabulary plus the unknown id.")


class CompareResponse(BaseModel):
    model: ModelInfo = Field(description="The model that answered.")
    attention_layers: list[int] = Field(description="The layers (1-based) in each line's `attention`, in order.")
    lines: list[LineResult] = Field(description="Line A, then line B.")
    difference: DifferencePair = Field(description="Last-position output difference between the two lines.")
    by_depth: list[DepthDifference] = Field(
        description="The lesson's table plus exercise 1: untrained models of 1, 2 and 3 layers, same seed and mode."
    )
    residual_difference: ResidualDifference | None = Field(description="Only when the lines have equal length.")
    rope: RopeTable | None = Field(description="The rotation angles of the lines' positions, when position is rope.")
    shapes: HeadShapes = Field(description="The head split of this model for line A.")
    params: list[AttentionParams] = Field(description="Attention parameters for 1, 2, 4 and 8 heads at this width.")
    alignment: list[int] | None = Field(
        None, description="When line B is a reordering of line A by token id (characters outside the vocabulary "
        "are all the one unknown id): for each position of A, the position of B holding the same id, repeats "
        "matched in order. The page's A − B takes B's rows and columns in this order. Null otherwise."
    )


class TrainedShape(BaseModel):
    n_layer: int = Field(description="Blocks.")
    n_head: int = Field(description="Heads per attention layer.")
    n_embd: int = Field(description="Width of the residual stream.")
    block_size: int = Field(description="Training length, and rows of pos_emb.")
    val_loss: float | None = Field(None, description="Validation loss of the shipped file, nats per character.")


class ServedModel(BaseModel):
    name: str = Field(description="What a request's `model` field names.")
    format: Literal["heads-positions", "nanogpt"] = Field(description="Written by `heads-positions train --out`, "
                                                          "or nanoGPT's train.py (ckpt.pt with its meta.pkl).")
    position: PositionMode = Field(description="How it knows order: nanoGPT's models are all 'learned'.")
    n_layer: int = Field(description="Blocks.")
    n_head: int = Field(description="Heads per attention layer.")
    n_embd: int = Field(description="Width of the residual stream.")
    head_dim: int = Field(description="n_embd / n_head.")
    block_size: int = Field(description="Training length, and rows of pos_emb.")
    vocab_size: int = Field(description="Ids of its vocabulary (ours count the unknown id; nanoGPT's have none).")
    params: int = Field(description="Parameters, lm_head counted once (tied to tok_emb).")
    val_loss: float | None = Field(description="Validation loss the file records (nanoGPT's best_val_loss), nats "
                                   "per character; null when it records none.")
    max_chars: int = Field(description="Longest line it reads.")
    lines: list[str] = Field(description="Two lines to start from: the lesson's when its vocabulary holds their "
                             "characters, else two made of characters it knows.")
    lesson_lines: bool = Field(description="Whether `lines` are the lesson's.")


class Options(BaseModel):
    positions: list[str] = Field(description="Position modes.")
    n_head: list[int] = Field(description="Head counts random weights accept.")
    n_layer_max: int = Field(description="Deepest random model.")
    max_chars: dict[str, int] = Field(description="Longest accepted line per position mode.")
    max_distance: int = Field(description="Largest distance between /api/relative's two characters.")
    trained: dict[str, TrainedShape] = Field(description="Shipped trained weights per position mode.")
    random: dict[str, int] = Field(description="n_layer and n_head of random weights when the request omits them.")
    defaults: CompareRequest = Field(description="What POST /api/compare assumes for omitted fields.")
    models: list[ServedModel] = Field(description="The operator's models (`serve --model`, HP_MODELS), in the "
                                        "order given; a request's `model` field names one.")
    langs: list[str] = Field(description="The languages the pages speak (?lang=).")
    max_ablate_chars: int = Field(description="Longest line POST /api/ablate accepts.")
    classes: ClassRules = Field(description="Class mode's code shape, name limit and recent-join window.")


class RopeQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    positions: str = Field(
        "0,1,2,3,4", description="Comma-separated whole positions >= 0, at most 4096 of them, e.g. 0,1,2."
    )
    head_dim: int = Field(32, ge=2, le=1024, multiple_of=2, description="Even head size, 2 to 1024.")
    model: str | None = Field(None, pattern=f"^{MODEL_NAME}$", description="One of the operator's models by name: "
                               "its head size and RoPE base replace head_dim and base, which must then be omitted "
                               "or equal to the model's.")
    # allow_inf_nan=False: nan compares false with every bound, and would be refused as "too large".
    base: float = Field(10000.0, gt=1.0, le=1e9, allow_inf_nan=False, description="RoPE base, > 1, at most 1e9.")

    @field_validator("positions")
    @classmethod
    def _parse_positions(cls, value: str) -> str:
        parts = [p.strip() for p in value.split(",")]
        if not all(parts):  # "1,,2", "1,2," or "": an empty entry is no position, not one to skip
            raise PydanticCustomError("positions", "positions must not have an empty entry between commas "
                                      "(as in 1,,2 or 1,2,): give whole numbers >= 0 separated by commas")
        if not all(p.isascii() and p.isdigit() for p in parts):
            raise PydanticCustomError("positions", "positions must be whole numbers >= 0 separated by commas")
        if len(parts) > MAX_ROPE_POSITIONS:
            raise PydanticCustomError("positions", "at most 4096 positions")
        if max(int(p) for p in parts) > MAX_ROPE_POSITION:
            raise PydanticCustomError("positions", "each position must be at most 1000000")
        return ",".join(parts)

    def position_list(self) -> list[int]:
        return [int(p) for p in self.positions.split(",")]


class RopeAngles(BaseModel):
    positions: list[int] = Field(description="The positions asked for, in order.")
    head_dim: int = Field(description="Head size; head_dim / 2 pairs.")
    base: float = Field(description="RoPE base.")
    theta: list[float] = Field(description="theta_i = base ** (-2i / head_dim), one per pair i.")
    angles: list[list[float]] = Field(description="[position][pair]: position * theta_i, radians.")


OneChar = Annotated[str, StringConstraints(min_length=1, max_length=1), NoControls,
                    Field(description="One character, not a control or format character.")]


class RelativeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    first: OneChar = "明"
    second: OneChar = "月"
    weights: Literal["random", "trained"] = Field("trained", description="As in /api/compare.")
    n_layer: int | None = Field(None, ge=1, le=N_LAYER_MAX, description="Blocks of random weights (default 2).")
    n_head: Annotated[int | None, AfterValidator(check_n_head)] = Field(
        None, description="Heads of random weights, 1, 2, 4 or 8 (default 4).",
        json_schema_extra={"enum": [*HEAD_CHOICES, None]},
    )
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed of the random weights.")
    model: str | None = Field(None, pattern=f"^{MODEL_NAME}$", description="One of the operator's models by name: "
                               "`scores` then holds its position mode only.")
    distance: Distance = Field(1, description="How many places after `first` `second` stands, "
                          f"1 to {MAX_DISTANCE}; the pair is run alone, nothing between them.")


class RelativeResponse(BaseModel):
    first: str = Field(description="The character whose key is scored.")
    second: str = Field(description="The character whose query scores it, `distance` places later.")
    distance: int = Field(description="Places between first and second.")
    starts: list[int] = Field(description="Absolute position of `first`; `second` stands `distance` places after it.")
    scores: dict[str, list[list[list[float]]]] = Field(
        description="Per position mode: [layer][head][start], the score of second's query on first's key."
    )
    unknown: list[bool] = Field(description="Whether first and second are outside the vocabulary.")


class Rhythm(BaseModel):
    by_lag: list[float] = Field(description="[lag] mean cosine similarity of the pos_emb rows lag apart, lag 0..64.")
    period: int = Field(description="The lag from 3 up at which the rows are most alike: the rhythm the table "
                        "learned (neighbours, lags 1 and 2, are alike in any smooth table).")
    at_period: float = Field(description="by_lag at the period.")
    median: float = Field(description="The median of by_lag from lag 3 up: how alike rows at a typical distance are.")
    shows: bool = Field(description="True when at_period is at least 0.2 above the median: the rhythm stands out.")
    min_lag: int = Field(3, description="The first lag read: neighbours (lags 1 and 2) are alike in any smooth "
                         "table.")
    next_lag: int | None = Field(None, description="The most alike lag from min_lag up after the period.")
    at_next_lag: float | None = Field(None, description="by_lag at next_lag.")


class PositionSimilarity(BaseModel):
    positions: int = Field(description="Positions compared: 0 to positions - 1.")
    step: int = Field(description="The training step of the pos_emb table compared (the shipped run's last step "
                      "unless a snapshot was asked for).")
    learned: list[list[float]] | None = Field(
        description="[m][n] cosine similarity of the trained pos_emb rows m and n; null without trained weights."
    )
    learned_rhythm: Rhythm | None = Field(
        None, description="The period of the trained pos_emb, read from its similarity by lag; null without it."
    )
    rope: list[list[float]] = Field(
        description="[m][n] cosine similarity of RoPE's rotations at m and n (head_dim 32): mean_i cos((m-n) theta_i)."
    )


class TrainingRun(BaseModel):
    model_config = ConfigDict(extra="allow")

    position: PositionMode = Field(description="Position mode of the run.")
    n_layer: int = Field(description="Blocks.")
    n_head: int = Field(description="Heads per attention layer.")
    steps: list[int] = Field(description="Steps at which the validation loss was measured.")
    val_loss: list[float] = Field(description="Validation loss (nats per character) at each of those steps.")


class Exercises(BaseModel):
    heads: list[int] = Field(description="Exercise 2: the runs comparing head counts under learned, fewest first "
                             "(indices into runs).")
    modes: list[int] = Field(description="Exercise 3: the runs comparing learned, rope and none with 4 heads, in "
                             "that order (indices into runs).")


class TrainingResults(BaseModel):
    runs: list[TrainingRun] = Field(description="Exercise 2 (1, 4, 8 heads) and exercise 3 (learned, rope, none).")
    exercises: Exercises = Field(description="Which runs each exercise compares, in the order it compares them.")


class LengthRun(BaseModel):
    model_config = ConfigDict(extra="allow")

    position: PositionMode = Field(description="Position mode of the trained model.")
    train_length: int = Field(description="The window length the model was trained on.")
    length: int = Field(description="Positions evaluated: 128 for learned (its table's rows), twice that otherwise.")
    loss: list[float] = Field(description="[position] mean validation loss, nats per character.")


class LengthResults(BaseModel):
    runs: list[LengthRun] = Field(description="One run per shipped trained model.")


class ErrorItem(BaseModel):
    loc: list[str | int] = Field(description="Where the problem is, e.g. [\"body\", \"line_a\"].")
    msg: str = Field(description="The rule that was broken, in English.")
    type: str = Field(description="A machine-readable name of the rule (pydantic's error type, e.g. "
                      "string_too_short), so a page can write the message in its own language.")
    ctx: dict[str, str | int | float | bool] | None = Field(
        None, description="The rule's values (e.g. max_length, ge, expected); never the input itself."
    )


class ErrorMessage(BaseModel):
    detail: str | list[ErrorItem] = Field(
        description="What was wrong; for a 422, a list naming each field (loc) and rule."
    )
    request_id: str | None = Field(None, description="Quote it to the teacher; the server log has the details.")


ERROR_RESPONSES = {
    400: {"model": ErrorMessage, "description": "The body is not valid UTF-8 JSON."},
    413: {"model": ErrorMessage, "description": "The body is larger than 64 KB."},
    429: {"model": ErrorMessage, "description": "Too many requests from this address (only when a limit is set)."},
    500: {"model": ErrorMessage, "description": "An unexpected error; the request id points to the server log."},
}
# The routes that address a comparison by its id: the worker may keep none under it.
COMPARISON_RESPONSES = {**ERROR_RESPONSES, 404: {
    "model": ErrorMessage, "description": "comparison_unknown: this worker keeps no comparison with this id (never "
                                          "made, or gone from its cache): send the body to the POST route instead."}}
