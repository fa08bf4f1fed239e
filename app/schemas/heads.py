"""Shapes of GET /api/heads: what each trained head looks at, measured on the validation poems."""

from pydantic import BaseModel, Field

from model.gpt import PositionMode


class HeadSummary(BaseModel):
    zh: str = Field(description="The sentence in Chinese.")
    ja: str = Field(description="The sentence in Japanese.")
    fr: str = Field(description="The sentence in French.")
    en: str = Field(description="The sentence in English.")


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
    summary: HeadSummary = Field(description="What the head prefers, one sentence per language, made from these "
                                 "numbers.")
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
    layers: list[LayerStats] = Field(description="One per layer, in order.")


class HeadResults(BaseModel):
    max_offset: int | None = Field(None, description="The largest offset in by_offset.")
    models: list[ModelHeads] = Field(description="One per shipped trained model; statistics over queries at "
                                     "positions >= max_offset.")
