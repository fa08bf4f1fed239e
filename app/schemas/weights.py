"""The weights an answer was computed with, as every answer that names them says it: the shipped (trained) weights
or an untrained model from a seed, with or without the causal mask. ModelInfo (compare, ablation) and the probe's
answer share these fields, so both say it in the same words."""

from typing import Literal

from pydantic import BaseModel, Field


class WeightsUsed(BaseModel):
    weights: Literal["random", "trained"] = Field(description="Untrained from a seed, or the shipped weights.")
    seed: int | None = Field(description="The seed of random weights; null for trained weights.")
    causal: bool = Field(description="Whether the causal mask was applied.")
