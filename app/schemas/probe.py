"""Shapes of GET /api/probe (where a model keeps order: a linear probe of the absolute position at each site) and
GET /api/rope/speeds (which of RoPE's rotation speeds each head uses, and what stopping a band of them costs)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.compare import MAX_SEED, N_LAYER_MAX
from app.schemas.weights import WeightsUsed
from model.gpt import PositionMode


class ProbeQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    position: PositionMode | None = Field(
        None, description="learned, rope or none. Omitted: all three, in that order."
    )
    weights: Literal["trained", "random"] = Field(
        "trained", description="trained: the shipped weights (at `step`, if asked), measured once on the validation "
        "poems; random: an untrained model of `n_layer` blocks from `seed`, measured on request on a fixed subset of "
        "the windows (every ninth) and kept."
    )
    n_layer: int | None = Field(
        None, ge=1, le=N_LAYER_MAX, description="Blocks of the untrained model, 1 to 4 (only with weights=random). "
        "Omitted: 2, the trained models' depth."
    )
    step: int | None = Field(
        None, ge=0, description="With trained weights: a training step whose snapshot ships (GET /api/snapshots lists "
        "them), as in /api/heads. Omitted: the end of training."
    )
    seed: int | None = Field(
        None, ge=0, le=MAX_SEED, description="Seed of the untrained model (only with weights=random). Omitted: 0."
    )
    causal: bool = Field(True, description="false runs the model without the causal mask (full attention).")


class ProbeSite(BaseModel):
    site: Literal["residual", "z"] = Field(
        description="residual: the residual stream; z: a block's attention output before proj, the heads side by "
        "side (TransformerLens's hook_z)."
    )
    layer: int = Field(description="For residual: 0 is what enters block 1 (tok_emb, plus pos_emb in learned), l "
                       "the output of block l. For z: the block, 1-based.")
    mae: float = Field(description="Mean absolute error of the predicted position on the test windows, in places.")
    by_range: dict[str, float] = Field(description="The same error over the test positions 0-15, 16-63 and 64-127.")
    within: float = Field(description="Share of test positions predicted within ±2 places.")
    chance: float = Field(description="The error of always predicting the fit part's mean position (63.5).")


class ProbeModel(BaseModel):
    position: PositionMode = Field(description="Position mode of the model.")
    n_layer: int = Field(description="Blocks.")
    sites: list[ProbeSite] = Field(description="residual 0 .. n_layer, then z of blocks 1 .. n_layer.")


class ProbeResponse(WeightsUsed):
    step: int | None = Field(description="The training step of the trained weights; null for random.")
    windows: int = Field(description="Validation windows of block_size characters the probe read.")
    test_windows: int = Field(description="Of those, the test part: windows 4, 9, 14, ... (every fifth).")
    ridge: float = Field(description="λ of the ridge on features standardized with the fit part's mean and "
                         "standard deviation; the intercept is not penalized.")
    models: list[ProbeModel] = Field(description="One per position mode asked; empty when the figures do not ship.")


class RopeSpeedsQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    band: Literal["fastest", "middle", "slowest"] | None = Field(
        None, description="A quarter of the pairs to stop (θᵢ = 0 for them): fastest (pairs 0-3), middle (6-9) or "
        "slowest (12-15) of a 32-wide head. Omitted: none is stopped (`stopped` is null)."
    )


class HeadSpeeds(BaseModel):
    head: int = Field(description="1-based head.")
    distance_0: list[float] = Field(description="[pair] mean share sᵢ of the score of a query on its own key.")
    distance_1: list[float] = Field(description="[pair] mean share sᵢ of the score of a query on the previous "
                                    "character's key.")
    attended: list[float] = Field(description="[pair] Σₙ pattern(m, n) sᵢ(m, n): the share weighted by where the head "
                                  "looks, averaged over queries.")


class LayerSpeeds(BaseModel):
    layer: int = Field(description="1-based layer.")
    heads: list[HeadSpeeds] = Field(description="One per head.")


class BandEffect(BaseModel):
    band: Literal["fastest", "middle", "slowest"] | None = Field(description="The band stopped; null: none.")
    pairs: list[int] = Field(description="The pairs stopped (0 turns fastest).")
    val_loss: float = Field(description="Mean next-character loss on the windows, nats.")
    previous: list[list[float]] = Field(description="[layer][head] mean attention on the previous character, over "
                                        "queries from position 1.")


class RopeSpeedsResponse(BaseModel):
    windows: int = Field(description="Validation windows of block_size characters measured.")
    theta_degrees: list[float] = Field(description="[pair] θᵢ = base^(-2i/head_dim) in degrees per character, fastest "
                                       "first.")
    layers: list[LayerSpeeds] = Field(
        description="The trained RoPE model's pair shares: sᵢ(m, n) = q_m,i · R((n - m)θᵢ) k_n,i / √head_dim, q and k "
        "before rotation; summed over the pairs it is the score. Empty when the figures do not ship."
    )
    all_on: BandEffect | None = Field(description="The model as it is; null when the figures do not ship.")
    stopped: BandEffect | None = Field(description="The model with `band` stopped; null when no band was asked.")
