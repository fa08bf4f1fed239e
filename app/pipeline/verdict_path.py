"""How the verdict routes run: POST /api/compare/verdict and POST /api/lesson/{step}/verdict.

The verdict on a comparison needs that comparison's float32 pass. When /api/compare has answered the same
request in this worker (kept, or being computed), its Measured comes with its answer: a verdict float32 decided
is there already, made with the comparison, and is encoded and sent from the event loop; else its GapFacts spare
the verdict the float32 pass. What is left to run (a float32 pass nobody made, the float64 reruns) joins the
verdict batcher: verdicts of many requests run together (app.services.verdicts.judge_many), in threads of
/api/compare's limiter. The lesson's other steps run alone under the same limiter. Every answer is kept in the
response cache."""

from collections.abc import Callable

from app.domain.lesson_steps import GAP_STEPS
from app.pipeline.batcher import Batcher
from app.pipeline.encoding import Encoded, encode
from app.pipeline.response_cache import ResponseCache
from app.schemas.compare import CompareRequest
from app.schemas.verdicts import VerdictRequest
from app.services.gaps import GapFacts
from app.services.registry import ModelRegistry
from app.services.verdicts import CompareItem, StepItem, check_step_fields, step_compare_request, verdict


class VerdictPath:
    def __init__(self, cache: ResponseCache, registry: ModelRegistry, batcher: Batcher):
        self.cache = cache
        self.registry = registry
        self.batcher = batcher  # runs judge_many, under cache.limiter

    async def compare(self, req: CompareRequest) -> Encoded:
        route = "compare/verdict"
        return await self.cache.answer_from(
            route, req, lambda: self._made_or_run(route, req, lambda facts: CompareItem(req, facts)))

    async def step(self, step_id: str, req: VerdictRequest) -> Encoded:
        fields = req.model_dump(by_alias=True)  # the step's setup names the lines a and b
        check_step_fields(step_id, fields)
        route = f"lesson/{step_id}/verdict"
        if step_id not in GAP_STEPS:
            return await self.cache.answer(route, req, lambda: verdict(step_id, fields, self.registry))
        compared = step_compare_request(step_id, fields)
        return await self.cache.answer_from(
            route, req, lambda: self._made_or_run(route, compared, lambda facts: StepItem(step_id, fields, facts)))

    async def _made_or_run(self, route: str, compared: CompareRequest | None,
                           item: Callable[[GapFacts | None], object]) -> bytes | Encoded:
        """The verdict /api/compare made on `compared` for this route, or item(its GapFacts, or None) judged by the
        verdict batcher."""
        measured = None
        if compared is not None:
            kept = await self.cache.peek("compare", compared)
            measured = None if kept is None else kept.facts
        if measured is not None and route in measured.verdicts:
            return encode(measured.verdicts[route])
        return await self.batcher.submit(item(None if measured is None else measured.facts))
