"""How the verdict routes run: POST /api/compare/verdict and POST /api/lesson/{step}/verdict.

The verdict on a comparison needs that comparison's float32 pass. When /api/compare has answered the same
request in this worker (kept, or being computed), its GapFacts come with its answer and the verdict runs no
float32 again; the explorer then decides every gap of fresh lines in float32 and answers on the event loop.
What is left to run (a float32 pass nobody made, the float64 reruns) joins the verdict batcher: verdicts of
many requests run together (app.services.verdicts.judge_many), in threads of /api/compare's limiter. The
lesson's other steps run alone under the same limiter. Every answer is kept in the response cache."""

from app.batcher import Batcher
from app.encoding import Encoded, encode
from app.registry import ModelRegistry
from app.response_cache import ResponseCache
from app.schemas.compare import CompareRequest
from app.schemas.verdicts import VerdictRequest
from app.services.gaps import GapFacts
from app.services.verdicts import GAP_STEPS, CompareItem, StepItem, explorer_verdict, step_compare_request, verdict


class VerdictPath:
    def __init__(self, cache: ResponseCache, registry: ModelRegistry, batcher: Batcher):
        self.cache = cache
        self.registry = registry
        self.batcher = batcher  # runs judge_many, under cache.limiter

    async def compare(self, req: CompareRequest) -> Encoded:
        async def produce():
            facts = await self._facts(req)
            if facts is not None:
                answer = explorer_verdict(req, self.registry.tokenizer, facts, {})
                if answer is not None:  # float32 decided every gap: nothing to run
                    return encode(answer)
            return await self.batcher.submit(CompareItem(req, facts))

        return await self.cache.answer_from("compare/verdict", req, produce)

    async def step(self, step_id: str, req: VerdictRequest) -> Encoded:
        fields = req.model_dump(by_alias=True)  # the step's setup names the lines a and b
        route = f"lesson/{step_id}/verdict"
        if step_id not in GAP_STEPS:
            return await self.cache.answer(route, req, lambda: verdict(step_id, fields, self.registry))

        async def produce():
            compared = step_compare_request(step_id, fields)
            facts = None if compared is None else await self._facts(compared)
            return await self.batcher.submit(StepItem(step_id, fields, facts))

        return await self.cache.answer_from(route, req, produce)

    async def _facts(self, req: CompareRequest) -> GapFacts | None:
        compared = await self.cache.peek("compare", req)
        return None if compared is None else compared.facts
