"""Shapes of GET /api/heads: what each trained head looks at, measured on the validation poems."""

from pydantic import BaseModel, Field

from model.gpt import PositionMode


class HeadSummary(BaseModel):
    zh: str = Field(description="The sentence in Chinese.")
    ja: str = Field(description="The sentence in Japanese.")
    fr: str = Field(description="The sentence in French.")
    en: str = Field(description="The sentence in English.")


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
    layers: list[LayerStats] = Field(description="One per layer, in order.")


class HeadResults(BaseModel):
    max_offset: int | None = Field(None, description="The largest offset in by_offset.")
    models: list[ModelHeads] = Field(description="One per shipped trained model; statistics over queries at "
                                     "positions >= max_offset.")
