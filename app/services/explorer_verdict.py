"""The explorer's verdict on any comparison (POST /api/compare/verdict): whether each gap it shows is rounding or
real, decided in judge_many's stages as the lesson's steps are (app/services/verdicts.py), and the reasons the
depth panel gives."""



from app.schemas.compare import CompareRequest
from app.services.alignment import alignment
from app.services.compare import (
    WITH,
    WITHOUT,
    Plan,
    plan_compare,
)
from app.services.gaps import (
    REL_ROUNDING,
    GapFacts,
    aligned_of,
    decided32,
    decided32_weights,
    decided64,
    gap_facts,
    gap_of,
)
from app.services.registry import ModelRegistry
from app.services.twins import Line64, LineKey
from model import GPT
from model.experiments import LESSON_DEPTHS


def unknown_chars(tokenizer, text: str) -> list[str]:
    """The characters the model reads as its one unknown id, each once, in order of appearance."""
    return list(dict.fromkeys(ch for ch, flag in zip(text, tokenizer.encode(text).unknown) if flag))


def aligned_reason(ids_a: list[int], ids_b: list[int], judged: str, blind: bool, layer: int) -> str:
    """Why a layer's aligned last row is what it is. The last ids differ: the last query is another character
    in each line, so its row cannot be blank. Else rounding: blank. Else why it differs: position information
    (not blind), the layer below's outputs leaking the order through the mask (layer > 1), or something else."""
    if ids_a[-1] != ids_b[-1]:
        return "other_end"
    if judged == "rounding":
        return "blank"
    return "positions" if not blind else "leak" if layer > 1 else "other"


def depth_reasons(ids_a: list[int], ids_b: list[int], by_depth: list[dict], causal: bool) -> dict:
    """The depth panel's claims, from the untrained depths without position information. reason: the 1-layer
    model gives the same answer (rounding, or the same ids), or why not: the lines are not a reordering, they end
    on other ids, or they differ otherwise. leak: with the mask on and 1 layer the same, whether 2 layers differ.
    causal_off: with the mask off, whether every depth is rounding (then the mask was what leaked the order)."""
    judged = [row["without_position"] for row in by_depth]  # None: the same ids
    rounding = [j is None or j["difference"] == "rounding" for j in judged]
    if rounding[0]:
        reason = "same"
    elif alignment(ids_a, ids_b) is None:
        reason = "other_chars"
    elif ids_a[-1] != ids_b[-1]:
        reason = "other_end"
    else:
        reason = "differs"
    leak = None
    if len(judged) > 1 and rounding[0] and causal:
        leak = "no_leak" if rounding[1] else "leak"
    causal_off = None if causal else "rounding" if all(rounding) else "real"
    return {"reason": reason, "leak": leak, "causal_off": causal_off}


class CompareJudging:
    """POST /api/compare/verdict for one request, in judge_many's stages: whether each gap the explorer shows
    is rounding or real, for the model on screen and the lesson's untrained depths, with and without position
    information; and, when B is a reordering of A, each layer's aligned last row. float32 decides where it
    can (gaps.decided32), read from /api/compare's GapFacts when given; the float64 rerun decides the rest."""

    def __init__(self, req: CompareRequest, facts: GapFacts | None, registry: ModelRegistry):
        self.req, self.facts = req, facts
        self.plan: Plan = plan_compare(req, registry)  # /api/compare's: the same models, and the same 422s
        self.ids_a, self.ids_b = self.plan.ids_a, self.plan.ids_b
        self.tokenizer = registry.tokenizer_for(req.model)

    def jobs32(self) -> list[tuple]:
        p = self.plan
        return [] if self.facts else [(m, p.ids_a, p.ids_b, self.req.causal) for m in p.models]

    def measured(self, runs: list[dict]) -> None:
        if runs:
            by_model = dict(zip(self.plan.models, runs))
            self.facts = gap_facts([by_model[m] for m in self._models], alignment(self.ids_a, self.ids_b))

    def lines64(self) -> list[LineKey]:
        return list(dict.fromkeys(key for pair in self._pairs().values() for key in pair))

    def answer(self, lines: list[Line64], registry: ModelRegistry) -> dict:
        got = dict(zip(self.lines64(), lines))
        return explorer_verdict(self.req, self.tokenizer, self.facts,
                                {at: (got[a], got[b]) for at, (a, b) in self._pairs().items()})

    def _pairs(self) -> dict[tuple[int, bool], tuple[LineKey, LineKey]]:
        """(model, flag) -> both lines' keys, for each gap float32 cannot decide."""
        same = list(self.ids_a) == list(self.ids_b)
        lines = (self.ids_a, self.ids_b)
        return {(i, flag): tuple(LineKey(self._models[i], ids, self.req.causal, flag) for ids in lines)
                for i, flags in rerun_flags(self.facts, same).items() for flag in flags}

    @property
    def _models(self) -> list[GPT]:
        return [self.plan.model, *self.plan.depth_models]


def rerun_flags(facts: GapFacts, same: bool) -> dict[int, set[bool]]:
    """The models (0: shown, 1 to 3: depths) and flags whose gaps float32 cannot decide."""
    wanted: dict[int, set[bool]] = {}
    if not same:
        for (i, flag), gap in facts.gaps.items():
            if decided32(gap.gap, gap.scale) is None:
                wanted.setdefault(i, set()).add(flag)
    for flag, layers in (facts.aligned or {}).items():
        if any(decided32_weights(gap) is None for gap in layers):
            wanted.setdefault(0, set()).add(flag)
    return wanted


def explorer_verdict(req: CompareRequest, tokenizer, facts: GapFacts,
                     reruns: dict[tuple[int, bool], tuple[Line64, Line64]]) -> dict | None:
    """The explorer's verdict from the float32 GapFacts and, where float32 cannot decide, the float64 reruns
    ((model, flag) -> both lines); None when a rerun it needs is missing. Cheap: no model runs here."""
    ids_a, ids_b = tokenizer.encode(req.line_a), tokenizer.encode(req.line_b)
    same = list(ids_a) == list(ids_b)
    wanted = rerun_flags(facts, same)
    if any((i, flag) not in reruns for i, flags in wanted.items() for flag in flags):
        return None
    order = alignment(ids_a, ids_b)

    def gap(i: int, flag: bool) -> dict | None:
        if same:
            return None
        shown = facts.gaps[i, flag]
        if decided32(shown.gap, shown.scale):
            return {"gap": shown.gap, "gap64": None, "rounding_limit": REL_ROUNDING * shown.scale,
                    "difference": "real", "decided_by": "float32"}
        a, b = reruns[i, flag]
        judged = gap_of(a.last_logits, b.last_logits)
        return {"gap": shown.gap, "gap64": judged.gap, "rounding_limit": REL_ROUNDING * judged.scale,
                "difference": decided64(judged.gap, judged.scale), "decided_by": "float64"}

    def aligned(flag: bool) -> list[dict]:
        rerun = aligned_of(reruns[0, flag][0].last_rows, reruns[0, flag][1].last_rows, order) \
            if (0, flag) in reruns else None
        blind = not flag or req.position == "none"
        rows = [{"gap": gap32, "gap64": None, "difference": "real", "decided_by": "float32"}
                if decided32_weights(gap32)
                else {"gap": gap32, "gap64": rerun[layer], "difference": decided64(rerun[layer]),
                      "decided_by": "float64"}
                for layer, gap32 in enumerate(facts.aligned[flag])]
        return [{**row, "reason": aligned_reason(ids_a, ids_b, row["difference"], blind, layer),
                 "earlier_rows": blind and layer == 1 and len(ids_a) > 2}
                for layer, row in enumerate(rows, start=1)]

    by_depth = [{"n_layer": n, "with_position": gap(i, WITH), "without_position": gap(i, WITHOUT)}
                for i, n in enumerate(LESSON_DEPTHS, start=1)]
    return {
        "difference": {"with_position": gap(0, WITH), "without_position": gap(0, WITHOUT)},
        "by_depth": by_depth,
        "aligned": None if order is None else {"with_position": aligned(WITH), "without_position": aligned(WITHOUT)},
        "unknown": unknown_chars(tokenizer, req.line_a + req.line_b),
        "alignment": order,
        "depth": depth_reasons(ids_a, ids_b, by_depth, req.causal),
        "decided_by": "float64" if wanted else "float32",
    }
