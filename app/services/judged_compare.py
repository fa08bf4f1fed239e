"""POST /api/compare's answers, each with the verdicts that float32 decides alone.

A student typing needs the maps and the sentences under them for every keystroke. For lines that differ, float32
decides every gap (app.services.gaps), so a verdict costs no model run: it is made here, from the comparison's
own float32 pass, and the page sends one request per keystroke instead of two (issue 28: two requests cost a
class's server a third more than one). `verdict` is the explorer's (POST /api/compare/verdict's answer), and, when
the request names a `lesson_step`, `step_verdict` is that step's (POST /api/lesson/{step}/verdict's). Where a gap is
too small for float32 to decide, the verdict is null and the page asks its route, whose float64 rerun decides it."""

from dataclasses import dataclass

from app.errors import InputError
from app.pipeline.encoding import Encoded, encode
from app.schemas.compare import CompareRequest
from app.services.compare import Answer, compare_many
from app.services.explorer_verdict import explorer_verdict
from app.services.gaps import GapFacts
from app.services.registry import ModelRegistry
from app.services.verdicts import step_verdict32


@dataclass(frozen=True)
class Measured:
    """What an answer gives the verdict routes on the same request, besides its JSON: its float32 GapFacts, and the
    verdicts already made from them, by the route that answers them ("compare/verdict", "lesson/order/verdict"),
    so that a route asked after the comparison sends them without making them again. Kept as made: only a route
    that is asked encodes its verdict, off the comparison's hot path (the pages read it from the comparison)."""

    facts: GapFacts
    verdicts: dict[str, dict]


def compare_judged(reqs: list[CompareRequest], registry: ModelRegistry) -> list[Answer | InputError]:
    """compare_many's answers, each with `verdict` and `step_verdict`: the verdicts float32 decides, or None."""
    answers = compare_many(reqs, registry)
    for req, answer in zip(reqs, answers):
        if isinstance(answer, Answer):
            answer["verdict"] = explorer_verdict(req, registry.tokenizer_for(req.model), answer.facts, {})
            answer["step_verdict"] = req.lesson_step and step_verdict32(req, answer.facts, registry)
    return answers


def encoded(answer: Answer) -> Encoded:
    """The answer's JSON, with its Measured: each verdict it carries, by its route."""
    verdicts = {}
    if answer["verdict"] is not None:
        verdicts["compare/verdict"] = answer["verdict"]
    if answer["step_verdict"] is not None:
        verdicts[f"lesson/{answer['step_verdict']['step']}/verdict"] = answer["step_verdict"]
    return Encoded(encode(answer), Measured(answer.facts, verdicts))
