"""One comparison, from its request to its verdicts: what POST /api/compare makes, what the response cache keeps as
one thing, and what the verdict routes read by its id (app.pipeline.verdict_path).

A student typing needs the maps and the sentences under them for every keystroke. For lines that differ, float32
decides every gap (app.services.gaps), so a verdict costs no model run: it is made here, from the comparison's own
float32 pass, and the page sends one request per keystroke instead of two (issue 28: two requests cost a class's
server a third more than one). `verdict` is the explorer's (the verdict route's answer on this request), and, when the
request names a `lesson_step`, `step_verdict` is that step's. Where a gap is too small for float32 to decide, the
verdict is null and the page asks its route by the comparison's id, whose float64 rerun decides it; each verdict says
which precision decided it (`decided_by`)."""

from app.errors import InputError
from app.pipeline.encoding import Encoded, encode
from app.pipeline.response_cache import request_id
from app.schemas.compare import CompareRequest
from app.schemas.verdicts import VerdictRequest
from app.services.compare import Float32Pass, compare_many
from app.services.explorer_verdict import explorer_verdict
from app.services.gaps import GapFacts
from app.services.registry import ModelRegistry
from app.services.verdicts import check_step_fields, step_compare_request, step_verdict32


class Comparison(Encoded):
    """One /api/compare request and what was made from it: `request` (as the cache keys it, with_model applied),
    `facts` (its float32 pass's GapFacts, which the verdicts read instead of running that pass again), `verdict` and
    `step_verdict` (the verdicts float32 decided, as the JSON carries them, or None), and the answer's JSON
    (Encoded), which names the comparison by `id` (comparison_id: request_id of the request). Read-only once made."""

    __slots__ = ("id", "request", "facts", "verdict", "step_verdict")

    def __init__(self, request: CompareRequest, measured: Float32Pass, verdict: dict | None,
                 step_verdict: dict | None):
        self.id = request_id(request)
        self.request = request
        self.facts: GapFacts = measured.facts
        self.verdict = verdict
        self.step_verdict = step_verdict
        super().__init__(encode({"comparison_id": self.id, **measured.answer, "verdict": verdict,
                                 "step_verdict": step_verdict}))


def comparisons(reqs: list[CompareRequest], registry: ModelRegistry) -> list[Comparison | InputError]:
    """Each request's Comparison (compare_many's float32 pass, with the verdicts float32 decides), or the
    InputError that names its bad field."""
    made = compare_many(reqs, registry)
    for i, (req, measured) in enumerate(zip(reqs, made)):
        if isinstance(measured, Float32Pass):
            verdict = explorer_verdict(req, registry.tokenizer_for(req.model), measured.facts, {})
            step = step_verdict32(req, measured.facts, registry) if req.lesson_step else None
            made[i] = Comparison(req, measured, verdict, step)
    return made


def step_comparison(step_id: str, req: VerdictRequest) -> CompareRequest:
    """The comparison a same-or-different step's setup makes, changed by the fields of a verdict body (the step's
    own where one is left out), naming the step (lesson_step): built here only, so that no page builds it, and the
    verdict routes find it by the same rule (step_compare_request)."""
    fields = req.model_dump()
    check_step_fields(step_id, fields)
    compared = step_compare_request(step_id, fields)
    if compared is None:
        raise InputError("body", f"step {step_id}'s setup with these fields makes no comparison", "no_comparison",
                         {"step": step_id})
    return compared
