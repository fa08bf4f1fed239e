"""Shapes of GET /api/heads and /api/snapshots: what each trained head looks at, measured on the validation
poems, at the end of training and at snapshots on the way."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from model.gpt import PositionMode


class Preference(BaseModel):
    kind: Literal["self", "previous", "back", "line_above", "first", "last_mark", "punctuation"] = Field(
        description="What the head looks at: the query's own character, the previous one, the one d back, the "
        "parallel character one line up, the window's first, the latest punctuation mark, or punctuation.")
    share: float = Field(description="Its share of the head's attention.")
    d: int | None = Field(None, description="For back: how many characters back.")
    part: float | None = Field(None, description="For punctuation: the latest mark's share, when worth naming.")


class HeadRole(BaseModel):
    kind: Literal["spread", "mostly", "largest", "broad"] = Field(
        description="spread: within 0.3 nats of an even row's entropy; mostly: the top preference holds over half "
        "(as a whole percent); largest: the largest shares in order; broad: no share worth naming (10%).")
    named: list[Preference] = Field(description="The preferences named, largest share first (none when spread).")
    entropy: float = Field(description="The head's mean entropy, nats.")
    entropy_uniform: float = Field(description="An even row's mean entropy, nats.")


class KindIncrease(BaseModel):
    punctuation: float = Field(
        description="Over the queries whose next character is a punctuation mark (，。！？；：、)."
    )
    second_line: float = Field(
        description="Over the queries whose next character is in the second line of a couplet of a regular poem "
        "(its 2nd, 4th, ... line), whose parallel character stands one line up: 5 back in five-character poems, "
        "7 in seven-character ones."
    )
    other: float = Field(description="Over every other query.")


class HeadAblation(BaseModel):
    loss_increase: float = Field(
        description="Validation loss with this head alone off (its output zeroed before proj) minus the loss with "
        "every head on, nats per character, over the queries counted (positions >= max_offset)."
    )
    by_kind: KindIncrease = Field(description="The same increase over the queries whose next character is of each "
                                  "kind.")


class AblationInfo(BaseModel):
    windows: int = Field(description="Validation windows of block_size characters the ablation was measured on.")
    characters: int = Field(description="Next characters scored: windows x (block_size - max_offset).")
    counts: dict[str, int] = Field(description="How many of those next characters are of each kind (punctuation, "
                                   "second_line, other).")
    loss: dict[str, float] = Field(description="The loss with every head on, nats per character: over all of them "
                                   "(all) and by kind.")


class HeadStats(BaseModel):
    head: int = Field(description="1-based head number.")
    by_offset: list[float] = Field(
        description="[d] mean attention on the key d characters before the query, d = 0..max_offset."
    )
    first: float = Field(description="Mean attention on the window's first character.")
    entropy: float = Field(description="Mean entropy of an attention row, nats.")
    punctuation: float = Field(description="Mean attention on punctuation keys (，。！？；：、).")
    last_mark: float = Field(description="Mean attention on the latest punctuation key at or before the query.")
    line_above: float = Field(
        description="Mean attention on the previous line's character parallel to the one being predicted "
        "(5 keys back in five-character poems, 7 in seven-character ones), over the queries that have one."
    )
    role: HeadRole = Field(description="What the head prefers, read from these numbers (model/heads.py "
                           "describe); the page words it in its language.")
    ablation: HeadAblation | None = Field(
        None, description="What turning this head alone off costs on the validation poems; null if not measured."
    )


class LayerStats(BaseModel):
    layer: int = Field(description="1-based layer number.")
    heads: list[HeadStats] = Field(description="One per head, in order.")


class ModelHeads(BaseModel):
    position: PositionMode = Field(description="Position mode of the trained model.")
    windows: int = Field(description="Validation windows of block_size characters measured (the whole split).")
    punctuation_uniform: float = Field(
        description="What a head spreading its attention evenly would put on punctuation: the yardstick."
    )
    entropy_uniform: float = Field(
        description="Mean entropy of an even attention row over the queries counted, nats: a head within 0.3 of "
        "it is called spread."
    )
    ablation: AblationInfo | None = Field(
        None, description="What each head's `ablation` was measured on, and the loss with every head on."
    )
    val_loss: float | None = Field(
        None, description="The model's validation loss at this step, nats per character, on every window of the "
        "validation split (as training.json's final_val_loss); null if not recorded."
    )
    layers: list[LayerStats] = Field(description="One per layer, in order.")


class StepQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step: int | None = Field(
        None, ge=0, description="A training step whose weights ship (GET /api/snapshots lists them). Omitted: the "
        "end of training, the shipped checkpoints."
    )


class HeadResults(BaseModel):
    step: int | None = Field(None, description="The training step the heads stand at.")
    max_offset: int | None = Field(None, description="The largest offset in by_offset.")
    models: list[ModelHeads] = Field(description="One per shipped trained model; statistics over queries at "
                                     "positions >= max_offset.")


class PreviousHead(BaseModel):
    step: int = Field(description="Training step.")
    layer: int = Field(description="Always 1: the head is looked for in the first layer.")
    head: int = Field(description="Layer 1's head with the largest share on the previous character.")
    share: float = Field(description="Its mean attention on the previous character.")
    present: bool = Field(description="True when that share is worth naming (at least `named`): a "
                          "previous-character head, as the lesson's ablation step picks it.")


class CoupletHead(BaseModel):
    layer: int = Field(description="1-based layer.")
    head: int = Field(description="1-based head.")
    share: float = Field(description="Its mean attention on the parallel character one line up (line_above).")


class CoupletHeads(BaseModel):
    step: int = Field(description="Training step.")
    heads: list[CoupletHead] = Field(description="Every head whose line_above share is at least `named`.")


class LayerOneShape(BaseModel):
    step: int = Field(description="Training step.")
    head: int = Field(description="Layer 1's head with the largest share at a single offset.")
    offset: int = Field(description="That offset: 0 is the query itself, 1 the previous character.")
    share: float = Field(description="The share.")
    flat: bool = Field(description="True when the share is below `named`: no head of layer 1 singles out a place "
                       "by its distance.")


class Findings(BaseModel):
    previous_head: int | None = Field(description="The first step from which layer 1 has a previous-character head "
                                      "at every later step; null if it never forms.")
    couplet_heads: int | None = Field(description="The first step from which some head looks one line up at every "
                                      "later step; null if none forms.")
    layer1_flat: bool = Field(description="True when layer 1 is flat by offset at every step.")


class ModelTimeline(BaseModel):
    position: PositionMode = Field(description="Position mode of the run.")
    val_loss: list[float | None] = Field(description="[step] validation loss on the whole split, nats per character.")
    previous_head: list[PreviousHead] = Field(description="One per step.")
    couplet_heads: list[CoupletHeads] = Field(description="One per step.")
    layer1: list[LayerOneShape] = Field(description="One per step.")
    findings: Findings = Field(description="What formed when, read from the rows above.")


class RhythmAt(BaseModel):
    step: int = Field(description="Training step.")
    period: int = Field(description="The pos_emb table's period at that step (see /api/positions).")
    at_period: float = Field(description="Mean cosine similarity of rows `period` apart.")
    median: float = Field(description="The median of that similarity over lags 3 to 64.")
    shows: bool = Field(description="True when at_period is at least 0.2 above the median.")


class SnapshotTimeline(BaseModel):
    steps: list[int] = Field(description="The training steps whose heads and weights ship, the last one the "
                             "shipped checkpoints'.")
    final_step: int = Field(description="The last step: the shipped checkpoints.")
    named: float = Field(description="The share worth naming (0.1): over 5 times what an even row gives one key.")
    models: list[ModelTimeline] = Field(description="One per position mode whose snapshots all ship.")
    rhythm: list[RhythmAt] = Field(description="The learned pos_emb table at each step; empty without it.")
    rhythm_from: int | None = Field(description="The first step from which the table's rhythm shows at every later "
                                    "step; null if it never does.")
