"""The JSON API. The page uses exactly these routes; /docs documents them."""

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from app.deps import Cache, Registry, compare_path, verdict_path
from app.pipeline.responses import JSONBytes, NumpyJSONResponse, encoded_json
from app.schemas.ablation import AblateRequest, AblateResponse
from app.schemas.compare import (
    COMPARISON_RESPONSES,
    ERROR_RESPONSES,
    CompareRequest,
    LengthResults,
    Options,
    PositionSimilarity,
    RelativeRequest,
    RelativeResponse,
    RopeAngles,
    RopeQuery,
    TrainingResults,
)
from app.schemas.heads import HeadResults, SnapshotTimeline, StepQuery
from app.schemas.probe import ProbeQuery, ProbeResponse, RopeSpeedsQuery, RopeSpeedsResponse
from app.schemas.verdicts import CompareVerdict, CompareWithVerdict
from app.services.ablation import ablate
from app.services.model_choice import rope_shape, with_model
from app.services.options import options
from app.services.positions import relative_scores
from app.services.probe import probe, rope_speeds
from app.services.results import shipped_results, training_results
from app.services.rope import rope_table
from app.services.snapshots import heads_at, similarity_at, timeline

router = APIRouter(prefix="/api", tags=["api"], responses=ERROR_RESPONSES)
ComparisonId = Annotated[str, Path(pattern="^[0-9a-f]{32}$", description="`comparison_id` of /api/compare's answer "
                                   "(or of /api/lesson/{step}/compare's): 32 hexadecimal digits.")]


@router.post("/compare", response_model=CompareWithVerdict, response_class=JSONBytes)
async def post_compare(req: CompareRequest, request: Request):
    """Run the model on two lines: per-head attention, the output difference with and without
    position information, the lesson's table by depth, the RoPE angles, and the verdict on the gaps when float32
    decides it (else null: ask /compare/verdict)."""
    cache, batcher = compare_path(request)
    req = with_model(req, request.app.state.registry)
    answer = await cache.answer_batched("compare", req, batcher)
    return await encoded_json(answer, request.headers)


@router.post("/compare/verdict", response_model=CompareVerdict, response_class=JSONBytes)
async def post_compare_verdict(req: CompareRequest, request: Request):
    """For the same body as /compare: whether each last-position gap and each layer's aligned last row is
    rounding or real (the explorer's sentences). float32 decides where its gap is far above its own error;
    the same weights run again in float64 decide the rest. Asked after /compare on the same body, it reads
    that comparison's float32 pass instead of running it again."""
    answer = await verdict_path(request).compare(with_model(req, request.app.state.registry))
    return await encoded_json(answer, request.headers)


@router.get("/compare/{comparison_id}/verdict", response_model=CompareVerdict, response_class=JSONBytes,
            responses=COMPARISON_RESPONSES)
async def get_compare_verdict(comparison_id: ComparisonId, request: Request):
    """POST /compare/verdict's answer on the comparison /compare made and answered with this `comparison_id`,
    without sending its body again: the same answer as on that body. 404 when this worker keeps no such comparison
    (never made, or gone from its cache): send the body to POST /compare/verdict."""
    answer = await verdict_path(request).compare_by_id(comparison_id)
    return await encoded_json(answer, request.headers)


@router.post("/ablate", response_model=AblateResponse, response_class=JSONBytes)
async def post_ablate(req: AblateRequest, request: Request, registry: Registry, cache: Cache):
    """Turn heads off and see what breaks: the line with every head on and with the heads in `off` turned
    off (their output zeroed before proj; no weight changes). For each: the loss predicting each next
    character of the line, the top 5 next characters at each position, and every head's attention map."""
    req = with_model(req, registry)
    answer = await cache.answer("ablate", req, lambda: ablate(req, registry))
    return await encoded_json(answer, request.headers)


@router.get("/options", response_model=Options)
def get_options(registry: Registry):
    """What can be asked: position modes, head counts, line limits and the shipped trained shapes."""
    return options(registry)


@router.get("/rope", response_model=RopeAngles, response_class=NumpyJSONResponse)
def get_rope(query: Annotated[RopeQuery, Query()], registry: Registry):
    """RoPE's rotation angle for each position and frequency pair: position * base ** (-2i / head_dim)."""
    head_dim, base = rope_shape(query, registry)
    positions = query.position_list()
    return NumpyJSONResponse({"positions": positions, **rope_table(positions, head_dim, base)})


@router.post("/relative", response_model=RelativeResponse, response_class=JSONBytes)
async def post_relative(req: RelativeRequest, request: Request, registry: Registry, cache: Cache):
    """Two characters, one after the other, moved along the line: the score of the second's query on
    the first's key at each absolute start, for each position mode. Flat under rope and none."""
    req = with_model(req, registry)
    answer = await cache.answer("relative", req, lambda: relative_scores(req, registry))
    return await encoded_json(answer, request.headers)


@router.get("/positions", response_model=PositionSimilarity, response_class=NumpyJSONResponse)
def get_positions(query: Annotated[StepQuery, Query()], registry: Registry):
    """Cosine similarity between positions: the trained pos_emb rows (at a training step, if asked), and
    RoPE's rotations (which no training changes)."""
    return NumpyJSONResponse(similarity_at(registry, query.step))


@router.get("/training", response_model=TrainingResults)
def get_training(registry: Registry):
    """Validation curves of the shipped training runs: the lesson's exercises 2 and 3."""
    return training_results(registry)


@router.get("/length", response_model=LengthResults)
def get_length(registry: Registry):
    """Validation loss by position of the trained models, up to twice the training length for rope and none."""
    return shipped_results(registry, "length")


@router.get("/heads", response_model=HeadResults)
def get_heads(query: Annotated[StepQuery, Query()], registry: Registry):
    """What each head of the trained models looks at, measured once on the whole validation split:
    attention by offset, on punctuation, one line up, the loss with it off; and each head's role as data (its kind
    and the shares it names), which the page words in its language. With `step`, the same for the shipped runs
    stopped at that training step."""
    return heads_at(registry, query.step)


@router.get("/snapshots", response_model=SnapshotTimeline)
def get_snapshots(registry: Registry):
    """Watch the heads form: for each training step that ships, each run's validation loss, its layer-1
    previous-character head, its couplet heads, how flat layer 1 is by offset, and the pos_emb table's rhythm;
    and the first step from which each has formed."""
    return timeline(registry)


@router.get("/probe", response_model=ProbeResponse, response_class=JSONBytes)
async def get_probe(query: Annotated[ProbeQuery, Query()], request: Request, registry: Registry, cache: Cache):
    """Where a model keeps order: a ridge probe that reads each character's absolute position from the residual
    stream before block 1 and after each block, and from each block's attention output before proj (hook_z);
    its test error by site. Trained and snapshot weights: measured once on the validation poems (probe.json);
    random: measured on request on a fixed subset of them, then kept."""
    answer = await cache.answer("probe", query, lambda: probe(query, registry))
    return await encoded_json(answer, request.headers)


@router.get("/rope/speeds", response_model=RopeSpeedsResponse)
def get_rope_speeds(query: Annotated[RopeSpeedsQuery, Query()], registry: Registry):
    """Which of RoPE's rotation speeds each head of the trained RoPE model uses: each pair's mean share of the
    score on the query's own key, on the previous character's, and weighted by attention; and the validation loss
    and attention to the previous character with a quarter band of pairs stopped (θ = 0, no weight changes)."""
    return rope_speeds(registry, query.band)
