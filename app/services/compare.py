"""POST /api/compare: everything the page draws for two lines, computed from one model.

Each request needs four rows per model: (A, B) with positions and (A, B) without. The shorter
line is padded on the right; under the causal mask no position sees the padding, so each line's
numbers are those of running it alone (tests check this). compare_many answers many requests at
once: rows that want the same model, padded length and mask run as one batch (run_many).
"""

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from app.errors import InputError
from app.schemas.compare import CompareRequest
from app.services.alignment import alignment
from app.services.batch_shape import MAX_POSITIONS, MAX_ROWS, MIN_ROWS, fill_rows
from app.services.gaps import GapFacts, gap_facts
from app.services.model_choice import choose_model
from app.services.registry import ModelRegistry
from app.services.rope import rope_table
from model import GPT, CharTokenizer
from model.experiments import (
    HEAD_COUNTS,
    LESSON_DEPTHS,
    attention_params,
    head_shapes,
    logits_difference,
)

TOP_K = 5
WITH, WITHOUT = True, False
# Requests whose answers are built together hold all their traces at once; their attention maps grow
# as T^2, so a group's sum of T^2 is bounded (32 requests of 64 characters; a 512-character one alone).
MAX_GROUP_CELLS = 32 * 64 * 64


@dataclass(frozen=True)
class BatchOutputs:
    """What a batch's trace holds that answers read, as numpy views of its tensors (no copy): numpy
    slicing costs a fraction of a microsecond where a torch view costs several, and an answer reads
    dozens of slices per model."""

    logits: np.ndarray  # (R, vocab_size): each row's last position
    attention: list[np.ndarray]  # per layer (R, nh, T, T)
    stream: list[np.ndarray]  # the embeddings, then the residual after each block, each (R, T, C)


@dataclass(frozen=True)
class LineRun:
    """One line through one model, with or without positions, unpadded: row `row` of a batch's
    outputs, cut to the line's n positions."""

    out: BatchOutputs
    row: int
    n: int

    @property
    def last_logits(self) -> np.ndarray:  # (vocab_size,)
        return self.out.logits[self.row]

    @property
    def attention(self) -> list[np.ndarray]:  # per layer (nh, n, n)
        return [p[self.row, :, :self.n, :self.n] for p in self.out.attention]

    @property
    def stream(self) -> list[np.ndarray]:  # per entry (n, C)
        return [s[self.row, :self.n] for s in self.out.stream]


@dataclass
class Plan:
    """One checked request: its lines' ids, the model shown, and the lesson's untrained depths."""

    req: CompareRequest
    model: GPT
    ids_a: list[int]
    ids_b: list[int]
    layers: list[int]
    depth_models: list[GPT]  # one per LESSON_DEPTHS; the shown model itself when it is one of them

    @property
    def models(self) -> list[GPT]:
        return list(dict.fromkeys([self.model, *self.depth_models]))  # each model once, in order


@dataclass(frozen=True)
class Float32Pass:
    """One comparison's float32 pass: what /api/compare shows (`answer`, its JSON's fields) and what the verdicts on
    the same request read from it (`facts`), so that they need no second pass."""

    answer: dict
    facts: GapFacts


def compare_many(reqs: list[CompareRequest], registry: ModelRegistry) -> list[Float32Pass | InputError]:
    """Each request's answer, or the InputError that names its bad field. Every model runs once
    for a group of requests (run_many); an answer is bitwise the one the request gets alone."""
    answers, plans = planned(reqs, lambda req: plan_compare(req, registry))
    with torch.inference_mode():
        for group in memory_groups(plans):
            runs = iter(run_many([job for _, p in group for job in _jobs(p)]))
            for i, plan in group:
                by_model = {model: next(runs) for model in plan.models}
                unmasked = next(runs) if _controls(plan) else None
                answers[i] = Float32Pass(
                    _answer(plan, by_model, registry.tokenizer_for(plan.req.model)),
                    gap_facts([by_model[m] for m in (plan.model, *plan.depth_models)],
                              alignment(plan.ids_a, plan.ids_b), unmasked))
    return answers


def unmasked_needed(model: GPT, ids_a, ids_b, causal: bool) -> bool:
    """Whether a reason's controls need the shown model run again with the mask off. Not when the mask is off
    already, nor for identical lines (no reason to decide), nor with one layer: the last position's causal row
    masks no key, so its output is the mask-off run's, the same sums; the controls read the shown run there. From
    two layers on, the earlier positions' states under the mask differ, and the mask-off run is a run of its own."""
    return causal and model.config.n_layer > 1 and list(ids_a) != list(ids_b)


def _controls(plan: Plan) -> bool:
    """Whether the comparison also runs the shown model with the mask off: a lesson step's reason is decided by that
    control (GapFacts.unmasked), and a keystroke then stays one request; only when the control needs a run of its
    own (unmasked_needed: not with one layer, whose last position masks nothing, nor for identical lines)."""
    return plan.req.lesson_step is not None and unmasked_needed(plan.model, plan.ids_a, plan.ids_b, plan.req.causal)


def _jobs(plan: Plan) -> list[tuple]:
    """run_many's jobs for one comparison: each model under its mask, then the shown model's control."""
    p = plan
    return [(model, p.ids_a, p.ids_b, p.req.causal) for model in p.models] + \
        ([(p.model, p.ids_a, p.ids_b, False)] if _controls(p) else [])


def planned(items: list, plan) -> tuple[list, list]:
    """Each item checked and planned (plan(item) raises the InputError that names its bad field): the answers so
    far, holding each refused item's InputError in its place, and (index, plan) of the others."""
    answers: list = [None] * len(items)
    plans = []
    for i, item in enumerate(items):
        try:
            plans.append((i, plan(item)))
        except InputError as exc:
            answers[i] = exc
    return answers, plans


def batch_key(req: CompareRequest) -> tuple:
    """What a request's model passes are shared with: requests of one position mode, seed and head count
    run the same untrained models of the lesson's depths, and the same trained model of that mode.
    n_head None and n_head 4 name the same models, but a page sends one or the other, not both."""
    return req.position, req.seed, req.n_head


def memory_groups(plans: list[tuple[int, Plan]]):
    """plans: (index, anything with ids_a and ids_b). Consecutive plans whose padded lengths squared sum to at
    most MAX_GROUP_CELLS (one plan at least)."""
    group, cells = [], 0
    for i, plan in plans:
        size = max(len(plan.ids_a), len(plan.ids_b)) ** 2
        if group and cells + size > MAX_GROUP_CELLS:
            yield group
            group, cells = [], 0
        group.append((i, plan))
        cells += size
    if group:
        yield group


def plan_compare(req: CompareRequest, registry: ModelRegistry) -> Plan:
    model = choose_model(registry, req.position, req.weights, req.n_layer, req.n_head, req.seed, req.model)
    cfg = model.config
    tok = registry.tokenizer_for(req.model)
    enc = {"line_a": tok.encode(req.line_a), "line_b": tok.encode(req.line_b)}
    for field, ids in enc.items():
        check_length(field, ids, cfg)
    ids_a, ids_b = enc["line_a"], enc["line_b"]
    if req.layer is not None and req.layer > cfg.n_layer:
        raise InputError("layer", f"layer must be at most n_layer ({cfg.n_layer}) (got {req.layer})",
                         "less_than_equal", {"le": cfg.n_layer})
    layers = [req.layer - 1] if req.layer else list(range(cfg.n_layer))

    # An operator's model gets its table by depth from untrained models of its own vocabulary and width.
    like = cfg if req.model is not None else None
    depth_models = [registry.random(req.position, n_layer, cfg.n_head, req.seed, like) for n_layer in LESSON_DEPTHS]
    return Plan(req, model, ids_a, ids_b, layers, depth_models)


def _answer(plan: Plan, runs_by_model: dict, tok: CharTokenizer) -> dict:
    req, cfg, ids_a, ids_b, layers = plan.req, plan.model.config, plan.ids_a, plan.ids_b, plan.layers
    runs = runs_by_model[plan.model]
    by_depth = [{"n_layer": n_layer, **_differences(runs_by_model[depth_model])}
                for n_layer, depth_model in zip(LESSON_DEPTHS, plan.depth_models)]

    return {
        "model": {
            "name": req.model, "position": cfg.position, "weights": req.weights, "n_layer": cfg.n_layer,
            "n_head": cfg.n_head,
            "n_embd": cfg.n_embd, "head_dim": cfg.head_dim, "block_size": cfg.block_size,
            "seed": req.seed if req.weights == "random" else None, "causal": req.causal,
            "vocab_size": cfg.vocab_size,
        },
        "attention_layers": [i + 1 for i in layers],
        "lines": [_line(text, ids, runs[i, WITH], runs[i, WITHOUT] if req.attention_without_position else None,
                        tok, layers)
                  for i, (text, ids) in enumerate(((req.line_a, ids_a), (req.line_b, ids_b)))],
        "difference": _differences(runs),
        "by_depth": by_depth,
        "residual_difference": _residual_difference(runs) if len(ids_a) == len(ids_b) else None,
        "rope": rope_table(range(max(len(ids_a), len(ids_b))), cfg.head_dim, cfg.rope_base)
        if cfg.position == "rope" else None,
        "shapes": head_shapes(cfg.n_embd, cfg.n_head, len(ids_a)),
        "params": _params(cfg.n_embd),
        "alignment": alignment(ids_a, ids_b),
    }


def run_many(jobs: list[tuple[GPT, list[int], list[int], bool]]) -> list[dict]:
    """For each job (model, ids_a, ids_b, causal), {(line 0|1, WITH|WITHOUT): LineRun}. The rows of
    all jobs that share a model, a padded length and the mask run as one batch."""
    batches = defaultdict(list)  # (model, T, causal) -> [(job, line, flag)]
    for j, (model, ids_a, ids_b, causal) in enumerate(jobs):
        lines = [ids_a, ids_b]
        # A model without position information computes the same row with or without it: run it once.
        flags = (WITH,) if model.config.position == "none" else (WITH, WITHOUT)
        # Without the mask, padding would be seen: lines of unequal length then go to batches of their own length.
        groups = [[0, 1]] if causal or len(ids_a) == len(ids_b) else [[0], [1]]
        for group in groups:
            T = max(len(lines[i]) for i in group)
            batches[model, T, causal] += [(j, i, flag) for flag in flags for i in group]
    runs = [{} for _ in jobs]
    for (model, T, causal), rows in batches.items():
        size = max(MIN_ROWS, min(MAX_ROWS, MAX_POSITIONS // T))
        for first in range(0, len(rows), size):
            _run_batch(model, T, causal, [(jobs[j][1 + i], j, i, flag) for j, i, flag in rows[first:first + size]],
                       runs)
    for job_runs in runs:
        for i in (0, 1):
            job_runs.setdefault((i, WITHOUT), job_runs[i, WITH])
    return runs


def _run_batch(model: GPT, T: int, causal: bool, rows: list[tuple], runs: list[dict]) -> None:
    """rows: (ids, job, line, flag), filled up to MIN_ROWS and MIN_POSITIONS (fill_rows)."""
    filled = fill_rows(rows, T)
    idx = torch.tensor([ids + [0] * (T - len(ids)) for ids, *_ in filled])  # (R, T), right-padded
    trace = model.trace(idx, use_position=torch.tensor([flag for *_, flag in filled]), causal=causal,
                        logits_at=torch.tensor([len(ids) - 1 for ids, *_ in filled]))
    # The pre-softmax scores are left out: no answer reads them, and the batch holds half the memory.
    out = BatchOutputs(trace.logits[:, 0].numpy(), [p.numpy() for p in trace.attention],
                       [s.numpy() for s in (trace.embedding, *trace.residual)])
    for r, (ids, j, i, flag) in enumerate(rows):
        runs[j][i, flag] = LineRun(out, r, len(ids))


def check_length(field: str, ids: list[int], cfg) -> None:
    """A line longer than the model reads is the request's error, named by its field."""
    if len(ids) <= cfg.max_positions:
        return
    if cfg.position == "learned":
        message = f"at most {cfg.max_positions} characters with position 'learned': pos_emb has " \
                  f"{cfg.max_positions} rows (got {len(ids)})"
    else:
        message = f"at most {cfg.max_positions} characters with position '{cfg.position}' (got {len(ids)})"
    raise InputError(field, message, "too_many_positions", {"max_length": cfg.max_positions, "position": cfg.position})


def _line(text: str, ids, run: LineRun, blind: LineRun | None, tok: CharTokenizer, layers: list[int]) -> dict:
    """run: the line with position information; blind: the same weights without it (use_position=False),
    or None when the request leaves those maps out."""
    probs = torch.softmax(torch.from_numpy(run.last_logits).double(), dim=-1)
    top = torch.topk(probs, TOP_K)
    return {
        "text": text,
        "tokens": list(text),
        "ids": list(ids),
        "unknown": ids.unknown,
        # [layer][head][query][key]; float32 numpy so the JSON carries float32's shortest digits.
        "attention": np.stack([run.attention[i] for i in layers]),
        "attention_without_position": np.stack([blind.attention[i] for i in layers]) if blind else None,
        "top_next": [{"token": tok.token(i), "prob": p} for p, i in zip(top.values.tolist(), top.indices.tolist())],
    }


def _differences(runs: dict) -> dict:
    return {
        "with_position": logits_difference(runs[0, WITH].last_logits, runs[1, WITH].last_logits),
        "without_position": logits_difference(runs[0, WITHOUT].last_logits, runs[1, WITHOUT].last_logits),
    }


def _residual_difference(runs: dict) -> dict:
    def norms(flag):
        # Each stream entry (T, C) -> the per-position L2 norm of a - b, (T,); rows: embeddings, block 1, ...
        pairs = zip(runs[0, flag].stream, runs[1, flag].stream)
        return np.stack([np.linalg.norm((a - b).astype(np.float64), axis=-1) for a, b in pairs])

    return {"with_position": norms(WITH), "without_position": norms(WITHOUT)}


@lru_cache(maxsize=8)
def _params(n_embd: int) -> list[dict]:
    return [attention_params(n_embd, h) for h in HEAD_COUNTS if n_embd % h == 0]
