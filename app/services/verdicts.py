"""Every verdict of the guided lesson, decided here and only here, from the step's setup and lines.

A verdict is {step, outcome, accepted, reason, figures, unknown}: the outcome is one of the step's
choice ids (None when the setup allows no verdict, e.g. two identical lines), `accepted` the choices
that count as right (the outcome alone, unless two results are closer than their noise), the reason an
id the pages word in their language, and the figures the numbers it was decided on.

"Rounding" is decided exactly (app/services/gaps.py): the same weights run again in float64, and a gap is
rounding when the float64 gap is below REL_ROUNDING of the largest |logit|. The explorer's verdict lets
float32 decide "real" where its gap is far above float32's own error, so a keystroke on fresh lines reruns
nothing; the lesson's same-or-different steps show gap64, so they always rerun the model shown.

A keystroke costs one comparison (docs/benchmarks.md): /api/compare's float32 pass leaves its GapFacts with
its cached answer, the verdict on the same request reads them instead of running float32 again, and the
float64 reruns of many requests run together (judge_many: one batch per model, filled as /api/compare's).
"""

import dataclasses
import itertools
import math
from dataclasses import dataclass

import numpy as np
import torch
from pydantic import ValidationError

from app.domain.lesson_steps import GAP_STEPS, STEPS
from app.errors import InputError
from app.schemas.compare import CompareRequest
from app.schemas.probe import ProbeQuery
from app.services.alignment import alignment
from app.services.compare import (
    WITH,
    WITHOUT,
    Plan,
    batch_key,
    check_length,
    memory_groups,
    plan_compare,
    planned,
    run_many,
    unmasked_needed,
)
from app.services.gaps import (
    FLOAT32_DECIDES,
    REL_ROUNDING,
    GapFacts,
    aligned_of,
    decided32,
    decided32_weights,
    decided64,
    gap_facts,
    gap_of,
    last_gap,
)
from app.services.model_choice import choose_model
from app.services.options import max_chars
from app.services.positions import position_similarity, relative_starts
from app.services.probe import probe, rope_speeds
from app.services.registry import ModelRegistry
from app.services.results import exercise_runs
from app.services.rope import rope_table
from app.services.twins import Line64, LineKey, float64_twin, lines64
from model import GPT
from model.experiments import LESSON_DEPTHS, head_split
from model.heads import previous_character_head
from model.probes import MIN_LAG, layer1_query_key, pair_scores

RISE_NATS = 0.25  # nats per character over the in-training mean: RoPE's loss "climbs", not noise
SMOOTH = 16  # positions averaged when reading a loss curve
ABLATE_TIE = 0.1  # nats per character: two kinds of next character closer than this both count as right
HEADS_DIFFER = 0.25  # mean total-variation distance between two heads' rows: "they look at different places"
TABLE_NEIGHBOURS = 0.2  # cosine: neighbouring pos_emb rows this much more alike than far ones; a lag this close
# to the neighbours' likeness is "as alike as neighbours"
TABLE_EQUAL = 0.9  # cosine: every pair of rows at least this alike is "all the same"
FAR_ROWS = 32  # rows at least this far apart count as far
TAIL_EVALS = 20  # the last evaluations of a training run whose spread measures its noise
PROBE_CHANCE = 0.1  # a probe within this share of chance's error (3.2 of 32 places) reads no more than chance
PROBE_CLOSE = 0.25  # a probe that misses by under this share of chance's error (8 of 32 places) reads it closely
BAND_TIE = 0.01  # nats per character: two bands whose stopping costs are closer than this cost the same

STEP_BY_ID = {step["id"]: step for step in STEPS}
# Steps that ask whether the last position's output changes between line A and line B: the choice
# ids meaning "the gap is rounding" and "the gap is real".
JUDGED_STEPS = tuple(step["id"] for step in STEPS if step["kind"] not in ("selftest", "summary"))


def check_step_fields(step_id: str, fields: dict) -> None:
    """A field the step does not use is refused by name: a step without a setup (null in GET /api/lesson) uses
    none, a step that reads line A only has no line B, a step that reads no line (a null) has neither, and only
    the relative step has a distance."""
    own = STEP_BY_ID[step_id]["setup"] or {}
    used = {key for key, value in own.items() if value is not None or key not in ("a", "b", "distance")}
    for key, value in fields.items():
        if value is not None and key not in used:
            name = {"a": "line_a", "b": "line_b"}.get(key, key)
            rule = "has no setup" if not own else f"does not use {name}"
            raise InputError(name, f"step {step_id} {rule}: leave {name} out", "unused_field",
                             {"step": step_id})


def verdict(step_id: str, fields: dict, registry: ModelRegistry) -> dict:
    """fields: the setup fields the student changed (a, b, position, weights, n_layer, n_head, causal);
    the others are the step's own."""
    check_step_fields(step_id, fields)
    if step_id in GAP_STEPS:
        answer = judge_many([StepItem(step_id, fields, None)], registry)[0]
        if isinstance(answer, Exception):
            raise answer
        return answer
    setup = _setup(step_id, fields)
    _check_trained_shape(setup, fields, registry)
    return _finished(step_id, setup, _JUDGES[step_id](step_id, setup, registry), registry)


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
    own = STEP_BY_ID[step_id]["setup"]
    return {"step": step_id, **out, "setup_is_lessons": own is None or _same_setup(setup, own, CHART_ONLY.get(step_id)),
            "unknown": unknown_chars(registry.tokenizer, (setup.get("a") or "") + (setup.get("b") or ""))}


# Setup fields that only a step's chart reads, not its verdict: the ablation step's figures are the whole validation
# split's (heads.json), and line A is run with the head off only to draw one line; changing it changes no verdict.
CHART_ONLY = {"ablate": ("a",)}


def _same_setup(setup: dict, own: dict, chart_only=()) -> bool:
    return all(setup.get(key) == value for key, value in own.items() if key not in (chart_only or ()))


def unknown_chars(tokenizer, text: str) -> list[str]:
    """The characters the model reads as its one unknown id, each once, in order of appearance."""
    return list(dict.fromkeys(ch for ch, flag in zip(text, tokenizer.encode(text).unknown) if flag))


def _model(setup: dict, registry: ModelRegistry) -> GPT:
    return choose_model(registry, setup["position"], setup["weights"], setup["n_layer"], setup["n_head"], 0)


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
               causal: bool, n_layer: int) -> str:
    """Why the gap is what it is, from the controls (name -> whether its gap is real, CONTROLS): a gap the content
    control keeps comes from the characters; else from what the mask and the positions each make real alone."""
    if rounding:
        if ids_a[-1] != ids_b[-1] or controls["content"]:
            return "tiny"  # the lines differ in content, yet the weights barely react
        if sorted(ids_a) != sorted(ids_b):
            return "same_mix"  # the content control is rounding too: the same characters in the same proportions
        if position != "none":
            return "tiny"
        return "nomask" if not causal else "blind" if n_layer == 1 else "tiny"
    if controls["content"]:
        return "last_differs" if ids_a[-1] != ids_b[-1] else "content"
    mask, positions = controls.get("mask", False), controls.get("positions", False)
    if mask and positions:
        return "position_mask"
    return "mask" if mask else "position" if positions else "other"


def step_compare_request(step_id: str, fields: dict) -> CompareRequest | None:
    """The /api/compare request the lesson page sends for this step's setup (compareBody in
    static/js/explorer/controls.js, with lesson_step), whose GapFacts the verdict reads; None when the setup makes
    none."""
    setup = _setup(step_id, fields)
    body = {"line_a": setup["a"], "line_b": setup.get("b") or setup["a"], "position": setup["position"],
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
    fields = {"a": req.line_a, "b": req.line_b, "position": req.position, "weights": req.weights,
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
        self.model = _model(self.setup, registry)
        tok = registry.tokenizer
        self.ids_a, self.ids_b = tok.encode(self.setup["a"]), tok.encode(self.setup["b"])
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
        causal, flag = CONTROLS[name]
        return LineKey(self.model, ids, self.causal and causal, flag)

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

    def _controls(self, got: dict) -> tuple[dict[str, bool], dict[str, float]]:
        """Each control's judgement (real or not) and gap: float32's where it decides, else the float64 rerun's."""
        judged, figures = {}, {}
        content_real = decided32(self._control_gap("content").gap, self._control_gap("content").scale)
        for name in step_controls(self.model.config.position, self.causal):
            a, b = (got.get(self._control_key(name, ids)) for ids in (self.ids_a, self.ids_b))
            if a is not None:
                gap = gap_of(a.last_logits, b.last_logits)
                judged[name] = decided64(gap.gap, gap.scale) == "real"
            elif content_real and name != "content":
                continue  # the content control decided the reason: the others were not rerun
            else:
                gap = self._control_gap(name)
                judged[name] = decided32(gap.gap, gap.scale) is not None
            figures[f"gap_{name}"] = gap.gap
        return judged, figures

    def answer(self, lines: list[Line64], registry: ModelRegistry) -> dict:
        config, setup, shown = self.model.config, self.setup, self.facts.gaps[0, WITH]
        got = dict(zip(self.lines64(), lines))
        figures = {"gap": shown.gap, "gap_without": self.facts.gaps[0, WITHOUT].gap, "n_layer": config.n_layer}
        if not self.same:
            controls, control_figures = self._controls(got)
            figures |= control_figures
        same, different = GAP_STEPS[self.step_id]
        if self._shown_decided32():  # float32 decided: its gap is over float32_limit, 100 times float32's own error
            figures |= {"largest_logit": shown.scale, "float32_limit": FLOAT32_DECIDES * shown.scale}
            reason = gap_reason(self.ids_a, self.ids_b, False, controls, config.position, self.causal,
                                config.n_layer)
            out = {"outcome": different, "reason": reason, "figures": figures, "aligned": None,
                   "difference": "real"}
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
            out = {"outcome": None, "reason": "identical" if setup["a"] == setup["b"] else "identical_unknown",
                   "figures": figures, "aligned": aligned}
            return _finished(self.step_id, setup, out, registry)
        rounding = decided64(judged.gap, judged.scale) == "rounding"
        reason = gap_reason(self.ids_a, self.ids_b, rounding, controls, config.position, self.causal, config.n_layer)
        out = {"outcome": same if rounding else different, "reason": reason, "figures": figures,
               "aligned": aligned, "difference": "rounding" if rounding else "real"}
        return _finished(self.step_id, setup, out, registry)


# ---- the other steps: one rule each -------------------------------------------------------------

def _judge_limit(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """What happens to a character past pos_emb's last row: the model's own limit decides, whatever line A holds
    (a line within the table still gets a verdict: the question is about the next row, not this line). A line
    past the model's limit is refused: the refusal is the answer."""
    model = _model(setup, registry)
    n = max(len(setup["a"]), len(setup["b"] or ""))
    rows = max_chars("learned")  # pos_emb's rows
    figures = {"n": n, "rows": rows, "max": model.config.max_positions}
    if n > model.config.max_positions:
        return {"outcome": "error", "reason": "table_ends" if model.config.position == "learned" else "too_long",
                "figures": figures}
    outcome = "error" if model.config.max_positions <= rows else "works"  # does it take a line of rows + 1?
    if model.config.position != "learned":
        return {"outcome": outcome, "reason": "no_table", "figures": figures}
    return {"outcome": outcome, "reason": "within_table", "figures": {**figures, "more": rows - n + 1}}


def _judge_table(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """The trained pos_emb's rows by cosine, as the likeness of two rows depends on how far apart they are: the mean
    cosine of every pair of rows `lag` apart (by_lag, lags 1 to 64). "equal": every pair at least TABLE_EQUAL alike.
    "rhythm": some lag from MIN_LAG up is as alike as neighbours (within TABLE_NEIGHBOURS of lag 1), so likeness
    does not fade with distance. "neighbours": no farther lag comes near, and far rows are TABLE_NEIGHBOURS less
    alike. Else "unrelated"."""
    sim = position_similarity(registry)
    if sim["learned"] is None:
        return {"outcome": None, "reason": "no_results", "figures": {}}
    matrix = sim["learned"].astype(np.float64)
    n = len(matrix)
    far = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) >= FAR_ROWS
    by_lag = np.array(sim["learned_rhythm"]["by_lag"])  # (MAX_LAG + 1,), lag 0 is 1
    neighbours = float(by_lag[1])
    lags = np.arange(MIN_LAG, len(by_lag))
    least = int(lags[by_lag[lags].argmin()])  # from MIN_LAG: the least alike lag
    figures = {"neighbours": neighbours, "far": float(matrix[far].mean()), "least": float(matrix.min()),
               "period": sim["learned_rhythm"]["period"],
               "at_period": sim["learned_rhythm"]["by_lag"][sim["learned_rhythm"]["period"]],
               "least_lag": least, "at_least_lag": float(by_lag[least]),
               "alike_lags": int((by_lag[lags] >= neighbours - TABLE_NEIGHBOURS).sum())}
    if figures["least"] > TABLE_EQUAL:
        outcome = "equal"
    elif figures["alike_lags"] > 0:
        outcome = "rhythm"
    elif neighbours - figures["far"] > TABLE_NEIGHBOURS:
        outcome = "neighbours"
    else:
        outcome = "unrelated"
    return {"outcome": outcome, "reason": f"table_{outcome}", "figures": figures}


def _judge_rotate(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """Which pair turns fastest: RoPE's frequencies, θ_i = base^(−2i / head_dim)."""
    model = _model(setup, registry)
    if model.config.position != "rope":
        return {"outcome": None, "reason": "not_rope", "figures": {}}
    theta = rope_table([0], model.config.head_dim, model.config.rope_base)["theta"]
    first, last = float(theta[0]), float(theta[-1])
    outcome = "first" if first > last else "last" if first < last else "equal"
    # The lines' positions, as /api/compare's rope table counts them: the last has turned by (positions − 1)·θ.
    positions = max(len(setup["a"]), len(setup.get("b") or ""))
    return {"outcome": outcome, "reason": f"rotate_{outcome}",
            "figures": {"theta_first": first, "theta_last": last, "pairs": len(theta), "last_pair": len(theta) - 1,
                        "turn_first": 2 * math.pi / first, "turn_last": 2 * math.pi / last,
                        "degrees_first": math.degrees(first), "degrees_last": math.degrees(last),
                        "positions": positions, "turned_first": math.degrees(first * (positions - 1)),
                        "turned_last": math.degrees(last * (positions - 1))}}


def _judge_relative(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """Line A's first two characters run alone, `distance` apart, at every start: is layer 1 head 1's score
    of the second on the first the same at every start? Judged on the float64 twins, so "the same" is exact."""
    chars = list(setup["a"])
    if len(chars) < 2:
        return {"outcome": None, "reason": "need_two", "figures": {}}
    first, second = registry.tokenizer.encode(chars[0] + chars[1])
    distance = setup.get("distance") or 1
    starts = relative_starts(distance)
    spread, flat, figures = {}, {}, {"distance": distance, "starts": len(starts), "last_start": starts[-1]}
    for position in ("rope", "learned", "none"):
        model = choose_model(registry, position, setup["weights"], None, None, 0)
        scores = pair_scores(float64_twin(model), first, second, starts, distance)[0, 0]  # (starts,)
        spread[position] = float(scores.max() - scores.min())
        flat[position] = spread[position] < REL_ROUNDING * max(1.0, float(scores.abs().max()))
        figures[f"spread_{position}"] = spread[position]
        if position == "rope":  # pair 0's frequency, and the worked example of why only the distance counts
            figures.update(rope_worked_example(float64_twin(model), first, second, starts[0], starts[-1], distance))
    outcome = {(True, True): "both", (True, False): "rope", (False, True): "learned",
               (False, False): "neither"}[flat["rope"], flat["learned"]]
    return {"outcome": outcome, "reason": f"relative_{outcome}", "figures": figures}


def _turn(v: tuple, angle: float) -> tuple:
    """A 2-D rotation by `angle` radians: what RoPE does to one pair of q or k (model/rope.py apply_rope)."""
    return v[0] * math.cos(angle) - v[1] * math.sin(angle), v[0] * math.sin(angle) + v[1] * math.cos(angle)


def rope_worked_example(twin: GPT, first: int, second: int, s0: int, s1: int, distance: int) -> dict:
    """Pair 0 of layer 1 head 1, in numbers: `first`'s key at n = s, `second`'s query at m = s + distance, turned by
    n·θ₀ and m·θ₀ at the first start s0 and the last s1. Their product is the same at both starts, and equals the
    query turned by (m − n)·θ₀ alone against the key unturned: a rotation keeps dot products, so only m − n counts."""
    cfg = twin.config
    theta = float(rope_table([0], cfg.head_dim, cfg.rope_base)["theta"][0])  # θ₀ = base^(−2·0/d) = 1 rad
    q, k = layer1_query_key(twin, first, second)

    def product(a: tuple, b: tuple) -> float:
        return a[0] * b[0] + a[1] * b[1]

    return {"theta_first": theta, "base": cfg.rope_base, "head_dim": cfg.head_dim,
            "q0": q[0], "q1": q[1], "k0": k[0], "k1": k[1], "dot_unturned": product(q, k),
            "dot_start0": product(_turn(q, (s0 + distance) * theta), _turn(k, s0 * theta)),
            "dot_start1": product(_turn(q, (s1 + distance) * theta), _turn(k, s1 * theta)),
            "dot_difference": product(_turn(q, distance * theta), k)}


def _smoothed(loss: list[float], p: int) -> float:
    """The loss around position p, averaged over SMOOTH positions: one hard poem line does not decide."""
    return float(np.mean(loss[max(0, p - SMOOTH // 2):p + SMOOTH // 2]))


def _judge_length(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """RoPE's validation loss per character past the training length. It rises from the first position where
    its smoothed loss passes its mean over the second half of the training length by RISE_NATS; it falls when
    its mean past the training length is that much below. Also: from where it is worse than no positions.
    before and after: the mean loss up to and past the training length, RoPE's, and none's as none_*."""
    runs = {r["position"]: r for r in registry.results.get("length", {}).get("runs", [])}
    rope, none = runs.get("rope"), runs.get("none")
    if rope is None:
        return {"outcome": None, "reason": "no_results", "figures": {}}
    loss, n = rope["loss"], rope["train_length"]
    inside = float(np.mean(loss[n // 2:n]))
    figures = {"before": float(np.mean(loss[:n])), "after": float(np.mean(loss[n:])), "inside": inside,
               "train_length": n, "length": len(loss), "smooth": SMOOTH, "rise_nats": RISE_NATS}
    last = min(len(loss), len(none["loss"]) if none else len(loss)) - SMOOTH // 2
    rise = next((p for p in range(n, last + 1) if _smoothed(loss, p) > inside + RISE_NATS), None)
    if rise is not None:
        figures["rise"] = rise
    if none is not None:  # the same means for the model without positions: its loss too rises past n
        figures["none_before"] = float(np.mean(none["loss"][:none["train_length"]]))
        figures["none_after"] = float(np.mean(none["loss"][none["train_length"]:]))
        worse = next((p for p in range(n, last + 1) if _smoothed(loss, p) > _smoothed(none["loss"], p)), None)
        if worse is not None:
            figures["worse"] = worse
    outcome = "rises" if rise is not None else "falls" if figures["after"] < inside - RISE_NATS else "flat"
    return {"outcome": outcome, "reason": f"length_{outcome}", "figures": figures}


def _judge_split(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """The lesson's 32-wide layer: its parameters with 4 heads against 1 head, counted on real modules."""
    params = {p["n_head"]: p for p in head_split(32, 4, 5)["params"]}
    total1 = params[1]["qkv"] + params[1]["proj"]
    total4 = params[4]["qkv"] + params[4]["proj"]
    outcome = "more" if total4 > total1 else "fewer" if total4 < total1 else "same"
    return {"outcome": outcome, "reason": f"split_{outcome}",
            "figures": {"qkv1": params[1]["qkv"], "proj1": params[1]["proj"],
                        "qkv4": params[4]["qkv"], "proj4": params[4]["proj"]}}


def head_distance(pattern: np.ndarray, causal: bool = True) -> dict:
    """pattern (nh, T, T) of one layer: the two heads whose rows differ most, by mean total-variation distance
    (half the L1 distance of two rows; 0 for the same row, 1 for rows with no key in common), over the rows that
    can differ: under the causal mask the first row sees only itself, 100% in every head, and is left out."""
    rows = pattern[:, 1:] if causal else pattern
    best = {"distance": 0.0, "h1": 1, "h2": 2, "rows": rows.shape[1]}
    for i, j in itertools.combinations(range(len(rows)), 2):
        distance = float(0.5 * np.abs(rows[i] - rows[j]).sum(-1).mean())
        if distance > best["distance"]:
            best = {"distance": distance, "h1": i + 1, "h2": j + 1, "rows": rows.shape[1]}
    return best


def _judge_heads(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """Layer 1's heads on line A: do they spread their attention alike? A 1-character line leaves nothing to
    compare: its one row is all on itself in every head."""
    model = _model(setup, registry)
    ids = registry.tokenizer.encode(setup["a"])
    check_length("line_a", ids, model.config)
    if model.config.n_head == 1:
        return {"outcome": None, "reason": "one_head", "figures": {}}
    if len(ids) == 1:
        return {"outcome": None, "reason": "one_char", "figures": {}}
    pattern = model.trace(torch.tensor([ids]), causal=setup["causal"]).attention[0][0].double().numpy()  # (nh, T, T)
    figures = head_distance(pattern, setup["causal"])
    outcome = "differ" if figures["distance"] > HEADS_DIFFER else "alike"
    return {"outcome": outcome, "reason": f"heads_{outcome}", "figures": figures}


def _training_runs(registry: ModelRegistry, step_id: str) -> list[dict]:
    """Exercise 2 compares head counts under learned; exercise 3 position modes with 4 heads (as /api/training)."""
    runs = registry.results.get("training", {}).get("runs", [])
    return [runs[i] for i in exercise_runs(runs, step_id.removeprefix("ex"))]


def _judge_training(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """Order the runs by final validation loss. Two runs closer than their noise (twice the combined
    standard deviation of their last TAIL_EVALS evaluations) are not ordered: either order is right."""
    runs = _training_runs(registry, step_id)
    if len(runs) < 2:
        return {"outcome": None, "reason": "no_results", "figures": {}}
    name = (lambda r: str(r["n_head"])) if step_id == "ex2" else (lambda r: r["position"])
    loss = {name(r): float(r.get("final_val_loss", r["val_loss"][-1])) for r in runs}
    noise = {name(r): float(np.std(r["val_loss"][-TAIL_EVALS:])) for r in runs}

    def tied(x: str, y: str) -> bool:
        return abs(loss[x] - loss[y]) < 2 * math.hypot(noise[x], noise[y])

    def agrees(order: list[str]) -> bool:
        return all(loss[x] <= loss[y] or tied(x, y) for x, y in itertools.combinations(order, 2))

    outcome = "<".join(sorted(loss, key=loss.get))
    choices = STEP_BY_ID[step_id]["choices"]
    accepted = [c for c in choices if set(c.split("<")) == set(loss) and agrees(c.split("<"))]
    ties = [[x, y] for x, y in itertools.combinations(sorted(loss, key=loss.get), 2) if tied(x, y)]
    figures = {f"loss_{k}": v for k, v in loss.items()} | {f"noise_{k}": v for k, v in noise.items()}
    # Each tie's two numbers as the verdict words them: how far apart the runs end, and the noise they are within.
    for x, y in ties:
        figures[f"gap_{x}_{y}"] = abs(loss[x] - loss[y])
        figures[f"within_{x}_{y}"] = 2 * math.hypot(noise[x], noise[y])
    return {"outcome": outcome, "reason": "too_close" if ties else "ordered", "figures": figures,
            "accepted": accepted, "ties": ties}


def _judge_ablate(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """Layer 1's previous-character head (the largest share one back) turned off on the whole validation
    split: which kind of next character gets hardest, per character (heads.json's ablation.by_kind)."""
    model = next((m for m in registry.results.get("heads", {}).get("models", [])
                  if m["position"] == setup["position"]), None)
    if model is None or "ablation" not in model:
        return {"outcome": None, "reason": "no_results", "figures": {}}
    if setup["weights"] != "trained":  # the corpus figures are the trained heads'
        return {"outcome": None, "reason": "ablate_trained_only", "figures": {}}
    if not setup["causal"]:  # ... measured with the causal mask on, as the models were trained
        return {"outcome": None, "reason": "ablate_causal_only", "figures": {}}
    head = previous_character_head(model["layers"][0]["heads"])
    if head is None:  # none has no previous-character head (1.8% one back)
        return {"outcome": None, "reason": "no_previous_head", "figures": {}}
    # The question asks which kind GAINS the most loss (what the head is for), not which is hardest with it off:
    # that one is mostly the kind that was hard already (the second line, with every head on).
    by_kind = head["ablation"]["by_kind"]
    before = model["ablation"]["loss"]  # per kind, every head on
    outcome = max(by_kind, key=by_kind.get)
    after = {kind: before[kind] + by_kind[kind] for kind in by_kind}
    return {"outcome": outcome, "accepted": [k for k, v in by_kind.items() if by_kind[outcome] - v < ABLATE_TIE],
            "reason": f"ablate_{outcome}",
            "figures": {"layer": 1, "head": head["head"], "share": head["by_offset"][1],
                        "total": head["ablation"]["loss_increase"], **by_kind,
                        **{f"before_{k}": before[k] for k in by_kind}, **{f"after_{k}": v for k, v in after.items()},
                        "characters": model["ablation"]["characters"]}}


def _judge_probe(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """The shipped position probe (GET /api/probe, the same function) on the residual stream after block 1 of the
    trained model on screen, with the mask on screen: "chance" when its test error is within PROBE_CHANCE of
    always guessing the mean position, "close" under PROBE_CLOSE of it, else "rough". Figures: that site's, the
    stream before block 1 (what the embedding holds), and the same site with the mask switched."""
    if setup["weights"] != "trained":  # the probe ships for the trained models; untrained ones are the panel's
        return {"outcome": None, "reason": "probe_trained_only", "figures": {}}
    at = {}
    for causal in (setup["causal"], not setup["causal"]):
        answer = probe(ProbeQuery(position=setup["position"], causal=causal), registry)
        if not answer["models"]:
            return {"outcome": None, "reason": "no_results", "figures": {}}
        at[causal] = {(s["site"], s["layer"]): s for s in answer["models"][0]["sites"]}
    shown, other = at[setup["causal"]], at[not setup["causal"]]
    after, before = shown["residual", 1], shown["residual", 0]
    chance = after["chance"]
    outcome = ("chance" if after["mae"] >= (1 - PROBE_CHANCE) * chance
               else "close" if after["mae"] < PROBE_CLOSE * chance else "rough")
    return {"outcome": outcome, "reason": f"probe_{outcome}",
            "figures": {"mae": after["mae"], "early": after["by_range"]["0-15"], "within": after["within"],
                        "chance": chance, "before": before["mae"], "other_mask": other["residual", 1]["mae"],
                        "chance_limit": (1 - PROBE_CHANCE) * chance, "close_limit": PROBE_CLOSE * chance,
                        "step": answer["step"], "test_windows": answer["test_windows"]}}


def _judge_bands(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """The trained RoPE model with its fastest or its slowest quarter of pairs stopped (GET /api/rope/speeds, the
    same function): which costs more validation loss; closer than BAND_TIE, the same. Figures: the loss with every
    pair turning and with each band stopped, and the attention on the previous character of the head that gives
    it most with every pair turning, before and after."""
    if setup["position"] != "rope":
        return {"outcome": None, "reason": "not_rope", "figures": {}}
    if setup["weights"] != "trained":
        return {"outcome": None, "reason": "bands_trained_only", "figures": {}}
    if not setup["causal"]:  # measured with the causal mask on, as the model was trained
        return {"outcome": None, "reason": "bands_causal_only", "figures": {}}
    stopped = {band: rope_speeds(registry, band) for band in ("fastest", "slowest")}
    on = stopped["fastest"]["all_on"]
    if on is None:
        return {"outcome": None, "reason": "no_results", "figures": {}}
    layer, head = max(((layer, head) for layer in range(len(on["previous"]))
                       for head in range(len(on["previous"][layer]))), key=lambda lh: on["previous"][lh[0]][lh[1]])
    figures = {"loss": on["val_loss"], "layer": layer + 1, "head": head + 1, "previous": on["previous"][layer][head],
               "windows": stopped["fastest"]["windows"]}
    degrees = stopped["fastest"]["theta_degrees"]
    for band, answer in stopped.items():
        effect = answer["stopped"]
        figures |= {f"loss_{band}": effect["val_loss"], f"cost_{band}": effect["val_loss"] - on["val_loss"],
                    f"previous_{band}": effect["previous"][layer][head],
                    f"degrees_{band}": max(degrees[p] for p in effect["pairs"]),
                    f"first_{band}": effect["pairs"][0], f"last_{band}": effect["pairs"][-1]}
    # How far the slowest band's fastest pair turns across a whole window: hardly at all.
    T = choose_model(registry, "rope", "trained", None, None, 0).config.block_size
    figures["turned_slowest"] = figures["degrees_slowest"] * (T - 1)
    figures["turned_fastest"] = figures["degrees_fastest"]  # one character: the fastest pair's turn
    gap = figures["cost_fastest"] - figures["cost_slowest"]
    outcome = "same" if abs(gap) < BAND_TIE else "fastest" if gap > 0 else "slowest"
    return {"outcome": outcome, "reason": f"bands_{outcome}", "figures": figures | {"tie": BAND_TIE}}


_JUDGES = {"ablate": _judge_ablate, "probe": _judge_probe, "bands": _judge_bands,
           "limit": _judge_limit, "table": _judge_table, "rotate": _judge_rotate,
           "relative": _judge_relative, "length": _judge_length, "split": _judge_split, "heads": _judge_heads,
           "ex2": _judge_training, "ex3": _judge_training}


# ---- the explorer: the same judgements for any comparison -----------------------------------------

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
    if any((i, flag) not in reruns for i, flags in rerun_flags(facts, same).items() for flag in flags):
        return None
    order = alignment(ids_a, ids_b)

    def gap(i: int, flag: bool) -> dict | None:
        if same:
            return None
        shown = facts.gaps[i, flag]
        if decided32(shown.gap, shown.scale):
            return {"gap": shown.gap, "gap64": None, "rounding_limit": REL_ROUNDING * shown.scale,
                    "difference": "real"}
        a, b = reruns[i, flag]
        judged = gap_of(a.last_logits, b.last_logits)
        return {"gap": shown.gap, "gap64": judged.gap, "rounding_limit": REL_ROUNDING * judged.scale,
                "difference": decided64(judged.gap, judged.scale)}

    def aligned(flag: bool) -> list[dict]:
        rerun = aligned_of(reruns[0, flag][0].last_rows, reruns[0, flag][1].last_rows, order) \
            if (0, flag) in reruns else None
        blind = not flag or req.position == "none"
        rows = [{"gap": gap32, "gap64": None, "difference": "real"} if decided32_weights(gap32)
                else {"gap": gap32, "gap64": rerun[layer], "difference": decided64(rerun[layer])}
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
    }


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
    answered run together (run_many), then the float64 reruns of single lines (twins.lines64, which keeps them):
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
            lines = iter(lines64([key for ks in keys for key in ks]))
            for (i, w), ks in zip(group, keys):
                answers[i] = w.answer([next(lines) for _ in ks], registry)
    return answers
