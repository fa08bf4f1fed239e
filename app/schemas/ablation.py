"""Shapes of POST /api/ablate: one line run with every head on and with some heads turned off."""

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from app.domain.lesson_steps import COUPLET, LESSON_SHAPE
from app.schemas.compare import HEAD_CHOICES, MAX_SEED, N_LAYER_MAX, ModelChoice, ModelInfo, check_n_head
from app.schemas.text import NoControls
from model.gpt import PositionMode
from model.loading import LIMITS

MAX_ABLATE_CHARS = 128  # the training length: the answer carries two runs' attention maps of T x T
MAX_OFF = LIMITS.n_layer * LIMITS.n_head  # every head of the largest model served


class HeadRef(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    layer: int = Field(ge=1, le=LIMITS.n_layer, description="Layer, 1-based as on the page; at most the model's "
                       "n_layer.")
    head: int = Field(ge=1, le=LIMITS.n_head, description="Head in that layer, 1-based; at most the model's n_head.")


def head_message(field: str, limit_name: str, limit: int, value: int) -> str:
    return f"{field} must be at most {limit_name} ({limit}): this model has no {field} {value}"


def head_error(i: int, field: str, limit_name: str, limit: int, value: int) -> InitErrorDetails:
    """A head that the model does not have, named at ["off", i, field]: type less_than_equal as pydantic's own
    bound, so a page words it as any other limit (ctx le)."""
    return InitErrorDetails(
        type=PydanticCustomError("less_than_equal", head_message(field, limit_name, limit, value), {"le": limit}),
        loc=("off", i, field), input=value)


class AblateRequest(BaseModel):
    # strict, as /api/compare: 0 is not false and "5" is not 5.
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={
        "examples": [{"line": COUPLET, "position": "learned", "weights": "trained",
                      "off": [{"layer": 1, "head": 2}]}]
    })

    line: Annotated[str, NoControls] = Field(
        COUPLET, min_length=1, max_length=MAX_ABLATE_CHARS,
        description="1 to 128 characters (the training length), no control or format characters. Each position's "
        "loss predicts the next character of this line.",
    )
    position: PositionMode = Field("learned", description="As in /api/compare: learned, rope or none.")
    weights: Literal["random", "trained"] = Field("trained", description="As in /api/compare.")
    n_layer: int | None = Field(
        None, ge=1, le=N_LAYER_MAX, description="Blocks, 1 to 4. Omitted: the chosen weights' depth (2)."
    )
    n_head: Annotated[int | None, AfterValidator(check_n_head)] = Field(
        None, description="Heads, 1, 2, 4 or 8. Omitted: the chosen weights' head count (4).",
        json_schema_extra={"enum": [*HEAD_CHOICES, None]},
    )
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed of the random weights, 0 to 2**31.")
    model: ModelChoice = None
    step: int | None = Field(
        None, ge=0, description="With trained weights: the training step whose snapshot answers (GET /api/snapshots "
        "lists them). Omitted: the end of training, the shipped checkpoint."
    )
    off: list[HeadRef] = Field(
        [], max_length=MAX_OFF,
        description="The heads to turn off, each once: its output is set to zero before `proj` (zero-ablation of "
        "the head's output, TransformerLens's hook_z). No weight changes. Empty: both runs are the model as it is.",
    )

    @model_validator(mode="after")
    def _heads_exist(self) -> "AblateRequest":
        # The shape is the request's own or the default one (every shipped model is 2 x 4); the service checks
        # again against the model it loads, for weights folders that ship other shapes.
        n_layer = self.n_layer or LESSON_SHAPE["n_layer"]
        n_head = self.n_head or LESSON_SHAPE["n_head"]
        errors, seen = [], set()
        if self.step is not None and self.weights != "trained":
            errors.append(InitErrorDetails(
                type=PydanticCustomError("step_needs_trained", "step is a point in the training of the trained "
                                         "weights: use weights 'trained' or omit step"),
                loc=("step",), input=self.step))
        for i, ref in enumerate(self.off):
            # An operator's model has its own shape, which only the service knows: it checks these heads.
            if self.model is None and ref.layer > n_layer:
                errors.append(head_error(i, "layer", "n_layer", n_layer, ref.layer))
            if self.model is None and ref.head > n_head:
                errors.append(head_error(i, "head", "n_head", n_head, ref.head))
            if (ref.layer, ref.head) in seen:
                errors.append(InitErrorDetails(
                    type=PydanticCustomError("head_repeated", "each head may be listed once in off (layer {layer}, "
                                             "head {head} is listed again)", {"layer": ref.layer, "head": ref.head}),
                    loc=("off", i), input=ref.model_dump()))
            seen.add((ref.layer, ref.head))
        if errors:
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        return self


class NextChar(BaseModel):
    token: str = Field(description="A character; U+FFFD stands for the unknown id.")
    prob: float = Field(description="Softmax probability at this position.")


class AblationRun(BaseModel):
    loss: list[float] = Field(
        description="[position] the loss predicting the line's next character, -ln p(next), nats per character; "
        "one fewer than the line's characters (its last character has no next one in the line)."
    )
    mean_loss: float | None = Field(description="The mean of `loss`; null for a one-character line.")
    top_next: list[list[NextChar]] = Field(description="[position] the 5 most likely next characters, most likely "
                                            "first, with their probabilities.")
    attention: list[list[list[list[float]]]] = Field(
        description="Post-softmax pattern [layer][head][query][key], every head. An off head's map is shown as it "
        "is computed: turning a head off zeroes its output, not its pattern, so its own map and every map in its "
        "layer and the layers below it are the same as with every head on; `heads_off` marks it."
    )


class AblateModel(ModelInfo):
    step: int | None = Field(description="The training step of the trained weights, if one was asked for.")


class AblateResponse(BaseModel):
    model: AblateModel = Field(description="The model that answered (causal is always true here).")
    line: str = Field(description="The line as sent.")
    tokens: list[str] = Field(description="The line's characters, one per position.")
    unknown: list[bool] = Field(description="True where the character is outside the vocabulary: the model reads "
                                "it as the unknown id, and a loss predicting it is the loss of the unknown id.")
    off: list[HeadRef] = Field(description="The heads turned off, by layer then head.")
    heads_off: list[list[bool]] = Field(description="[layer][head] true for a head that is off in `ablated`.")
    all_on: AblationRun = Field(description="The line with every head on: the model as it is.")
    ablated: AblationRun = Field(description="The same line with the heads in `off` turned off.")
