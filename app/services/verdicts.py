"""Every verdict of the guided lesson, from the step's setup and lines, goes out from here: the same-or-different
steps are judged here, the other steps by their rules in step_judges.py, the explorer's gaps in explorer_verdict.py,
and judge_many runs the float64 reruns of many requests together.

A verdict is {step, outcome, accepted, reason, rule, figures, unknown}: the outcome is one of the step's
choice ids (None when the setup allows no verdict, e.g. two identical lines), `accepted` the choices
that count as right (the outcome alone, unless two results are closer than their noise), the reason an
id the pages word in their language as given (app/schemas/verdicts.py lists them), `rule` whether the outcome
is the model's rule rather than what it did, and the figures the numbers it was decided on.

"Rounding" is decided exactly (app/services/gaps.py): the same weights run again in float64, and a gap is
rounding when the float64 gap is below REL_ROUNDING of the largest |logit|. The explorer's verdict lets
float32 decide "real" where its gap is far above float32's own error, so a keystroke on fresh lines reruns
nothing; the lesson's same-or-different steps show gap64, so they always rerun the model shown.

A keystroke costs one comparison (docs/benchmarks.md): /api/compare's float32 pass leaves its GapFacts with
its cached answer, the verdict on the same request reads them instead of running float32 again, and the
float64 reruns of many requests run together (judge_many: one batch per model, filled as /api/compare's).
"""

import dataclasses
from dataclasses import dataclass

import torch
from pydantic import ValidationError

from app.domain.lesson_steps import GAP_STEPS, STEPS
from app.errors import InputError
from app.schemas.compare import CompareRequest
from app.services.alignment import alignment
from app.services.compare import (
    WITH,
    WITHOUT,
    batch_key,
    check_length,
    memory_groups,
    planned,
    run_many,
    unmasked_needed,
)
from app.services.explorer_verdict import CompareJudging, unknown_chars
from app.services.gaps import (
    FLOAT32_DECIDES,
    REL_ROUNDING,
    GapFacts,
    aligned_of,
    decided32,
    decided64,
    gap_facts,
    gap_of,
    last_gap,
)
from app.services.model_choice import choose_model
from app.services.registry import ModelRegistry
from app.services.step_judges import JUDGES, STEP_BY_ID, step_model
from app.services.twins import Line64, LineKey

# Steps that ask whether the last position's output changes between line A and line B: the choice
# ids meaning "the gap is rounding" and "the gap is real".
JUDGED_STEPS = tuple(step["id"] for step in STEPS if step["kind"] not in ("selftest", "summary"))


def check_step_fields(step_id: str, fields: dict) -> None:
    """A field the step does not use is refused by name: a step without a setup (null in GET /api/lesson) uses
    none, a step that reads line A only has no line B, a step that reads no line (a null) has neither, and only
    the relative step has a distance."""
    own = STEP_BY_ID[step_id]["setup"] or {}
    used = {key for key, value in own.items() if value is not None or key not in ("line_a", "line_b", "distance")}
    for name, value in fields.items():
        if value is not None and name not in used:
            rule = "has no setup" if not own else f"does not use {name}"
            raise InputError(name, f"step {step_id} {rule}: leave {name} out", "unused_field",
                             {"step": step_id})


def verdict(step_id: str, fields: dict, registry: ModelRegistry) -> dict:
    """fields: the setup fields the student changed (line_a, line_b, position, weights, n_layer, n_head, causal);
    the others are the step's own."""
    check_step_fields(step_id, fields)
    if step_id in GAP_STEPS:
        answer = judge_many([StepItem(step_id, fields, None)], registry)[0]
        if isinstance(answer, Exception):
            raise answer
        return answer
    setup = _setup(step_id, fields)
    _check_trained_shape(setup, fields, registry)
    return _finished(step_id, setup, JUDGES[step_id](step_id, setup, registry), registry)


def _setup(step_id: str, fields: dict) -> dict:
    setup = {**(STEP_BY_ID[step_id]["setup"] or {}), **{k: v for k, v in fields.items() if v is not None}}
    if setup.get("weights") == "trained":
        setup["n_layer"] = setup["n_head"] = None  # the shipped weights fix their own shape
    return setup


def _check_trained_shape(setup: dict, fields: dict, registry: ModelRegistry) -> None:
    """On the shipped weights, the step's own n_layer/n_head (an untrained model's) drop out (_setup), and a shape
    the student asked for must be theirs, by /api/compare's rule (an InputError: trained_shape)."""
    if setup.get("weights") == "trained":
        choose_model(registry, setup["position"], "trained", fields.get("n_layer"), fields.get("n_head"), 0)


def _finished(step_id: str, setup: dict, out: dict, registry: ModelRegistry) -> dict:
    out.setdefault("accepted", [] if out["outcome"] is None else [out["outcome"]])
    out.setdefault("ties", [])
    out.setdefault("aligned", None)
    out.setdefault("difference", None)
    out.setdefault("decided_by", None)
    out.setdefault("controls_by", {})
    out.setdefault("kinds", None)
    out.setdefault("rule", False)  # a judge sets it where its outcome is the model's rule, not what it did
    own = STEP_BY_ID[step_id]["setup"]
    chart_only = STEP_BY_ID[step_id].get("chart_only", ())
    return {"step": step_id, **out, "setup_is_lessons": own is None or _same_setup(setup, own, chart_only),
            "unknown": unknown_chars(registry.tokenizer, (setup.get("line_a") or "") + (setup.get("line_b") or ""))}


def _same_setup(setup: dict, own: dict, chart_only=()) -> bool:
    """The setup is the step's own but for the fields it only draws (its "chart_only", app/domain/lesson_steps.py)."""
    return all(setup.get(key) == value for key, value in own.items() if key not in chart_only)


# ---- same or different: the gap between line A's and line B's last position --------------------

# The controls a gap's reason is decided by: the same weights and lines run again (mask, with_position).
# content: mask off, no positions, where only the characters and their proportions count; mask: the step's mask on,
# no positions (the mask's leak of order); positions: mask off, with positions (order through positions).
CONTROLS = {"content": (False, WITHOUT), "mask": (True, WITHOUT), "positions": (False, WITH)}


def step_controls(position: str, causal: bool) -> list[str]:
    """The controls that mean something for this setup: no mask control with the mask off, no positions control
    without positions."""
    return ["content", *(["mask"] if causal else []), *(["positions"] if position != "none" else [])]


def gap_reason(ids_a: list[int], ids_b: list[int], rounding: bool, controls: dict[str, bool], position: str,
               causal: bool, n_layer: int, lines: tuple[str, str]) -> str:
    """Why the gap is what it is, from the controls (name -> whether its gap is real, CONTROLS): a gap the content
    control keeps comes from the characters; else from what the mask and the positions each make real alone.
    lines: line A and line B as typed, which tell apart what the ids cannot (blind_reason)."""
    if rounding:
        if ids_a[-1] != ids_b[-1] or controls["content"]:
            return "tiny"  # the lines differ in content, yet the weights barely react
        if sorted(ids_a) != sorted(ids_b):
            return "same_mix"  # the content control is rounding too: the same characters in the same proportions
        if position != "none":
            return "tiny"
        return "nomask" if not causal else blind_reason(*lines) if n_layer == 1 else "tiny"
    if controls["content"]:
        reason = "last_differs" if ids_a[-1] != ids_b[-1] else "content"
        # Content makes the gap; "not from order" holds only where order cannot reach the last output at all.
        return f"{reason}_open" if order_reaches_last(position, causal, n_layer) else reason
    mask, positions = controls.get("mask", False), controls.get("positions", False)
    if mask and positions:
        return "position_mask"
    return "mask" if mask else "position" if positions else "other"


def order_reaches_last(position: str, causal: bool, n_layer: int) -> bool:
    """Whether the order of the characters can reach the last position's output: through positions, or through the
    causal mask's leak from layer 2 on (layer 1's last row sees the whole line, masked or not)."""
    return position != "none" or (causal and n_layer > 1)


def blind_reason(line_a: str, line_b: str) -> str:
    """The model reads the lines as the same characters ending on the same one (its view: token ids). The lines as
    typed say why: a reordering (blind); else characters outside the vocabulary, all the one unknown id, make them
    alike: at the end (blind_unknown_last, the typed last characters differ) or elsewhere (blind_unknown)."""
    if line_a[-1] != line_b[-1]:
        return "blind_unknown_last"
    return "blind" if sorted(line_a) == sorted(line_b) else "blind_unknown"


def step_compare_request(step_id: str, fields: dict) -> CompareRequest | None:
    """The comparison this step's setup makes (with lesson_step), the fields given changing it: the one
    POST /api/lesson/{step}/compare makes, whose GapFacts the verdict reads; None when the setup makes none."""
    setup = _setup(step_id, fields)
    body = {"line_a": setup["line_a"], "line_b": setup.get("line_b") or setup["line_a"], "position": setup["position"],
            "weights": setup["weights"], "causal": setup["causal"], "lesson_step": step_id}
    if setup["weights"] == "random":
        body |= {"n_layer": setup["n_layer"], "n_head": setup["n_head"]}
    try:
        return CompareRequest(**body)
    except ValidationError:
        return None


def step_verdict32(req: CompareRequest, facts: GapFacts, registry: ModelRegistry) -> dict | None:
    """The verdict of lesson step req.lesson_step on this comparison, from its float32 pass, when float32 decides it
    (StepJudging); else None. None too when the comparison is not the one the step's setup makes (another seed, a
    depth left to the weights' default): its facts would be another model's, and the verdict route runs its own."""
    fields = {"line_a": req.line_a, "line_b": req.line_b, "position": req.position, "weights": req.weights,
              "causal": req.causal, "n_layer": req.n_layer, "n_head": req.n_head}
    if step_compare_request(req.lesson_step, fields) != req:
        return None
    judging = StepJudging(req.lesson_step, fields, facts, registry)
    return judging.answer([], registry) if judging.decided32() else None


class StepJudging:
    """A same-or-different step's verdict, in stages that many requests share (judge_many): the float32 gaps
    (read from /api/compare's GapFacts when given, else run), then, where float32 does not decide, float64 reruns:
    the model shown with positions (gap64, the step's figure, and layer 1's aligned last row) and the controls its
    reason is decided by (CONTROLS). float32 decides a gap real when it is far above float32's own error
    (app.services.gaps); the shown gap, for lines that are not a reordering of each other (no aligned row to judge).
    When it decides the shown gap and every control the reason needs, nothing reruns: what a student typing a new
    line B sends at almost every keystroke."""

    def __init__(self, step_id: str, fields: dict, facts: GapFacts | None, registry: ModelRegistry):
        self.step_id, self.setup, self.facts = step_id, _setup(step_id, fields), facts
        _check_trained_shape(self.setup, fields, registry)
        self.model = step_model(self.setup, registry)
        tok = registry.tokenizer
        self.typed = self.setup["line_a"], self.setup["line_b"]  # as typed: blind_reason
        self.ids_a, self.ids_b = tok.encode(self.setup["line_a"]), tok.encode(self.setup["line_b"])
        check_length("line_a", self.ids_a, self.model.config)
        check_length("line_b", self.ids_b, self.model.config)
        self.order = alignment(self.ids_a, self.ids_b)
        self.causal = self.setup["causal"]
        self.same = list(self.ids_a) == list(self.ids_b)

    def _job(self, causal: bool) -> tuple:
        return self.model, self.ids_a, self.ids_b, causal

    def jobs32(self) -> list[tuple]:
        """The shown model under the step's mask unless /api/compare ran it, and with the mask off (the controls)
        when a control needs that run and /api/compare did not make it."""
        jobs = [] if self.facts else [self._job(self.causal)]
        if unmasked_needed(self.model, self.ids_a, self.ids_b, self.causal) and \
                (self.facts is None or self.facts.unmasked is None):
            jobs.append(self._job(False))
        return jobs

    def measured(self, runs: list[dict]) -> None:
        if not runs:
            return
        if self.facts is None:
            shown, *rest = runs
            self.facts = gap_facts([shown], self.order, rest[0] if rest else None)
        else:
            unmasked = {flag: last_gap(runs[0], flag) for flag in (WITH, WITHOUT)}
            self.facts = dataclasses.replace(self.facts, unmasked=unmasked)

    def _control_gap(self, name: str):
        """A control's float32 Gap: the mask-off runs, or the step's own when its mask is off already or masks
        nothing at the last position (one layer: unmasked_needed)."""
        causal, flag = CONTROLS[name]
        if causal or not unmasked_needed(self.model, self.ids_a, self.ids_b, self.causal):
            return self.facts.gaps[0, flag]
        return self.facts.unmasked[flag]

    def _control_key(self, name: str, ids) -> LineKey:
        """The run a control reads, as _control_gap picks it: where the mask-off run is not a run of its own (one
        layer, or the mask off already), the shown run's key, so a control that is the shown model itself is quoted
        with the shown gap's float64 figure when that was rerun (one figure, one precision on one screen)."""
        causal, flag = CONTROLS[name]
        own = causal or not unmasked_needed(self.model, self.ids_a, self.ids_b, self.causal)
        return LineKey(self.model, ids, self.causal if own else False, flag)

    def _rerun_controls(self) -> list[str]:
        """The controls float32 does not decide and the reason needs: none for identical lines; only content when
        float32 finds its gap real (a content gap is the reason, whatever the others)."""
        if self.same:
            return []
        names = step_controls(self.model.config.position, self.causal)
        content = self._control_gap("content")
        if decided32(content.gap, content.scale):
            return []
        return [n for n in names if decided32(self._control_gap(n).gap, self._control_gap(n).scale) is None]

    def _shown_decided32(self) -> bool:
        shown = self.facts.gaps[0, WITH]
        return self.order is None and decided32(shown.gap, shown.scale) is not None

    def lines64(self) -> list[LineKey]:
        keys = [] if self._shown_decided32() else \
            [LineKey(self.model, ids, self.causal, WITH) for ids in (self.ids_a, self.ids_b)]
        keys += [self._control_key(n, ids) for n in self._rerun_controls() for ids in (self.ids_a, self.ids_b)]
        return list(dict.fromkeys(keys))

    def decided32(self) -> bool:
        """Whether float32 decides the verdict and its reason: no float64 rerun at all."""
        return not self.lines64()

    def _controls(self, got: dict) -> tuple[dict[str, bool], dict[str, float], dict[str, str]]:
        """Each control's judgement (real or not), gap and the precision its gap was measured in: float32's where it
        decides, else the float64 rerun's."""
        judged, figures, by = {}, {}, {}
        content_real = decided32(self._control_gap("content").gap, self._control_gap("content").scale)
        for name in step_controls(self.model.config.position, self.causal):
            a, b = (got.get(self._control_key(name, ids)) for ids in (self.ids_a, self.ids_b))
            if a is not None:
                gap = gap_of(a.last_logits, b.last_logits)
                judged[name] = decided64(gap.gap, gap.scale) == "real"
                by[f"gap_{name}"] = "float64"
            elif content_real and name != "content":
                continue  # the content control decided the reason: the others were not rerun
            else:
                gap = self._control_gap(name)
                judged[name] = decided32(gap.gap, gap.scale) is not None
                by[f"gap_{name}"] = "float32"
            figures[f"gap_{name}"] = gap.gap
        return judged, figures, by

    def answer(self, lines: list[Line64], registry: ModelRegistry) -> dict:
        config, setup, shown = self.model.config, self.setup, self.facts.gaps[0, WITH]
        got = dict(zip(self.lines64(), lines))
        figures = {"gap": shown.gap, "gap_without": self.facts.gaps[0, WITHOUT].gap, "n_layer": config.n_layer}
        controls_by = {}
        if not self.same:
            controls, control_figures, controls_by = self._controls(got)
            figures |= control_figures
        same, different = GAP_STEPS[self.step_id]
        if self._shown_decided32():  # float32 decided: its gap is over float32_limit, 100 times float32's own error
            figures |= {"largest_logit": shown.scale, "float32_limit": FLOAT32_DECIDES * shown.scale}
            reason = gap_reason(self.ids_a, self.ids_b, False, controls, config.position, self.causal,
                                config.n_layer, self.typed)
            out = {"outcome": different, "reason": reason, "figures": figures, "aligned": None,
                   "difference": "real", "decided_by": "float32", "controls_by": controls_by}
            return _finished(self.step_id, setup, out, registry)
        a, b = (got[LineKey(self.model, ids, self.causal, WITH)] for ids in (self.ids_a, self.ids_b))
        judged = gap_of(a.last_logits, b.last_logits)
        figures |= {"gap64": judged.gap, "largest_logit": judged.scale, "rounding_limit": REL_ROUNDING * judged.scale}
        aligned = None
        if self.order is not None:  # layer 1's last row: how the last character weighs the same characters in both
            figures["aligned_gap"] = self.facts.aligned[WITH][0]  # float32's, from float32 values
            figures["aligned_gap64"] = aligned_of(a.last_rows, b.last_rows, self.order)[0]
            aligned = decided64(figures["aligned_gap64"])
        if self.same:
            # Lines that differ only in characters outside the vocabulary are the same line to the model.
            reason = "identical" if setup["line_a"] == setup["line_b"] else "identical_unknown"
            out = {"outcome": None, "reason": reason,
                   "figures": figures, "aligned": aligned, "decided_by": "float64"}
            return _finished(self.step_id, setup, out, registry)
        rounding = decided64(judged.gap, judged.scale) == "rounding"
        reason = gap_reason(self.ids_a, self.ids_b, rounding, controls, config.position, self.causal, config.n_layer,
                            self.typed)
        out = {"outcome": same if rounding else different, "reason": reason, "figures": figures,
               "aligned": aligned, "difference": "rounding" if rounding else "real", "decided_by": "float64",
               "controls_by": controls_by}
        return _finished(self.step_id, setup, out, registry)


def compare_verdict(req: CompareRequest, registry: ModelRegistry, facts: GapFacts | None = None) -> dict:
    """POST /api/compare/verdict computed alone (judge_many batches it with others)."""
    answer = judge_many([CompareItem(req, facts)], registry)[0]
    if isinstance(answer, Exception):
        raise answer
    return answer


# ---- many verdicts at once ----------------------------------------------------------------------

@dataclass(frozen=True)
class CompareItem:
    """POST /api/compare/verdict's request, and its /api/compare's GapFacts when this worker has them."""

    req: CompareRequest
    facts: GapFacts | None

    @property
    def key(self) -> tuple:
        """What its model passes are shared with (app.pipeline.batcher): /api/compare's batch key."""
        return ("compare", *batch_key(self.req))


@dataclass(frozen=True)
class StepItem:
    """A same-or-different lesson step's verdict request: its fields, and its /api/compare's GapFacts."""

    step_id: str
    fields: dict
    facts: GapFacts | None

    @property
    def key(self) -> tuple:
        setup = _setup(self.step_id, self.fields)
        return "step", setup["position"], setup["weights"], setup["n_layer"], setup["n_head"]


def judging(item: CompareItem | StepItem, registry: ModelRegistry) -> CompareJudging | StepJudging:
    """Checks the item (an InputError names its bad field) and picks its models: in the model thread, since
    an untrained model is built on its first use."""
    if isinstance(item, CompareItem):
        return CompareJudging(item.req, item.facts, registry)
    return StepJudging(item.step_id, item.fields, item.facts, registry)


def judge_many(items: list, registry: ModelRegistry) -> list[dict | InputError]:
    """Each item's verdict, or the InputError that names its bad field. The float32 passes that no GapFacts
    answered run together (run_many), then the float64 reruns of single lines (registry.twins, which keeps them):
    the rows of every item that share a model run as one batch, and a verdict is the same in any batch (the
    fill rule)."""
    answers, work = planned(items, lambda item: judging(item, registry))
    with torch.inference_mode():
        for group in memory_groups(work):
            jobs = [w.jobs32() for _, w in group]
            runs = iter(run_many([job for js in jobs for job in js]))
            for (_, w), js in zip(group, jobs):
                w.measured([next(runs) for _ in js])
            keys = [w.lines64() for _, w in group]
            lines = iter(registry.twins.lines64([key for ks in keys for key in ks]))
            for (i, w), ks in zip(group, keys):
                answers[i] = w.answer([next(lines) for _ in ks], registry)
    return answers
