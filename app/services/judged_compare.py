"""POST /api/compare's answers, each with the explorer's verdict on it when float32 decides that verdict alone.

A student typing needs the maps and the sentences under them for every keystroke. For lines that differ, float32
decides every gap (app.services.gaps), so the verdict costs no model run: it is made here, from the comparison's
own float32 pass, and the page sends one request per keystroke instead of two (issue 28: two requests cost a
class's server a third more than one). Where a gap is too small for float32 to decide, `verdict` is null and the
page asks POST /api/compare/verdict, whose float64 rerun decides it; that route answers any caller alike."""

from app.errors import InputError
from app.registry import ModelRegistry
from app.schemas.compare import CompareRequest
from app.services.compare import Answer, compare_many
from app.services.verdicts import explorer_verdict


def compare_judged(reqs: list[CompareRequest], registry: ModelRegistry) -> list[Answer | InputError]:
    """compare_many's answers, each with `verdict`: explorer_verdict's answer from the float32 pass, or None."""
    answers = compare_many(reqs, registry)
    for req, answer in zip(reqs, answers):
        if isinstance(answer, Answer):
            answer["verdict"] = explorer_verdict(req, registry.tokenizer, answer.facts, {})
    return answers
