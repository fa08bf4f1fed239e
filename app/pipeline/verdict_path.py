"""How the verdict routes run: POST /api/compare/verdict and POST /api/lesson/{step}/verdict on a request's body,
and GET /api/compare/{comparison_id}/verdict and GET /api/lesson/{step}/verdict/{comparison_id} on a comparison
/api/compare made.

The verdict on a comparison needs that comparison's float32 pass. When /api/compare has made the comparison in this
worker (kept, or being computed), the response cache holds it as one Comparison under its id: a verdict float32
decided is there already, made with the comparison, and is encoded and sent from the event loop; else its GapFacts
spare the verdict the float32 pass. What is left to run (a float32 pass nobody made, the float64 reruns) joins the
verdict batcher: verdicts of many requests run together (app.services.verdicts.judge_many), in threads of
/api/compare's limiter. The lesson's other steps run alone under the same limiter. Every answer is kept in the
response cache, under its request's id: a verdict by comparison_id is the verdict by the comparison's body, the same
answer."""

from app.domain.lesson_steps import GAP_STEPS
from app.errors import InputError
from app.pipeline.batcher import Batcher
from app.pipeline.encoding import Encoded, encode
from app.pipeline.response_cache import ResponseCache, request_id
from app.schemas.compare import CompareRequest
from app.schemas.verdicts import VerdictRequest
from app.services.comparison import Comparison
from app.services.registry import ModelRegistry
from app.services.verdicts import CompareItem, StepItem, check_step_fields, step_compare_request, verdict


class VerdictPath:
    def __init__(self, cache: ResponseCache, registry: ModelRegistry, batcher: Batcher):
        self.cache = cache
        self.registry = registry
        self.batcher = batcher  # runs judge_many, under cache.limiter

    async def compare(self, req: CompareRequest) -> Encoded:
        return await self.cache.answer_from("compare/verdict", req, lambda: self._compare(req))

    async def step(self, step_id: str, req: VerdictRequest) -> Encoded:
        fields = req.model_dump()
        check_step_fields(step_id, fields)
        route = f"lesson/{step_id}/verdict"
        if step_id not in GAP_STEPS:
            return await self.cache.answer(route, req, lambda: verdict(step_id, fields, self.registry))
        return await self.cache.answer_from(route, req, lambda: self._step(step_id, fields))

    async def compare_by_id(self, comparison_id: str) -> Encoded:
        """The explorer's verdict on the comparison of this id: the verdict on its request's body."""
        return await self.compare((await self.comparison(comparison_id)).request)

    async def step_by_id(self, step_id: str, comparison_id: str) -> Encoded:
        """Step step_id's verdict on the comparison of this id, which must be the one the step's setup makes (its
        `lesson_step`, as /api/lesson/{step}/compare makes it): the verdict on that setup's body."""
        req = (await self.comparison(comparison_id)).request
        fields = VerdictRequest(line_a=req.line_a, line_b=req.line_b, position=req.position, weights=req.weights,
                                n_layer=req.n_layer, n_head=req.n_head, causal=req.causal)
        if req.lesson_step != step_id or step_compare_request(step_id, fields.model_dump()) != req:
            raise InputError("comparison_id", f"comparison {comparison_id} is not step {step_id!r}'s setup: ask "
                             f"POST /api/lesson/{step_id}/compare for it, or send the setup to "
                             f"POST /api/lesson/{step_id}/verdict", "comparison_step", {"step": step_id},
                             location="path")
        return await self.step(step_id, fields)

    async def comparison(self, comparison_id: str) -> Comparison:
        """The comparison of this id that /api/compare made in this worker and the cache still keeps (or is
        making); a 404 naming comparison_id when there is none."""
        kept = await self.cache.kept("compare", comparison_id)
        if not isinstance(kept, Comparison):
            raise InputError("comparison_id", f"no comparison {comparison_id} is kept here: it was never made, or "
                             "it has left the cache; send its body to the verdict route instead",
                             "comparison_unknown", location="path", status=404)
        return kept

    async def _kept(self, req: CompareRequest | None) -> Comparison | None:
        kept = None if req is None else await self.cache.kept("compare", request_id(req))
        return kept if isinstance(kept, Comparison) else None

    async def _compare(self, req: CompareRequest) -> bytes | Encoded:
        """The explorer's verdict the comparison on req made, or judged by the verdict batcher (from its GapFacts
        when it was made)."""
        comparison = await self._kept(req)
        if comparison is not None and comparison.verdict is not None:
            return encode(comparison.verdict)
        return await self.batcher.submit(CompareItem(req, comparison and comparison.facts))

    async def _step(self, step_id: str, fields: dict) -> bytes | Encoded:
        """The step's verdict the comparison on its setup made, or judged by the verdict batcher."""
        comparison = await self._kept(step_compare_request(step_id, fields))
        if comparison is not None and comparison.step_verdict is not None:
            return encode(comparison.step_verdict)
        return await self.batcher.submit(StepItem(step_id, fields, comparison and comparison.facts))
