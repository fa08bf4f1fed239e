"""The lesson steps that do not compare two lines' last outputs, one rule each: each judge reads the data its
question is about (the shipped tables, runs and snapshots, or a model run) and returns the outcome, the reason and
the figures it decided on. verdicts.verdict adds what every verdict carries."""

import itertools
import math

import numpy as np
import torch

from app.domain.lesson_steps import STEPS
from app.schemas.probe import ProbeQuery
from app.services.compare import (
    check_length,
)
from app.services.gaps import (
    REL_ROUNDING,
)
from app.services.model_choice import choose_model
from app.services.options import max_chars
from app.services.positions import position_similarity, relative_starts
from app.services.probe import probe, rope_speeds
from app.services.registry import ModelRegistry
from app.services.results import exercise_runs
from app.services.rope import rope_table
from model import GPT
from model.experiments import head_split
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


def step_model(setup: dict, registry: ModelRegistry) -> GPT:
    return choose_model(registry, setup["position"], setup["weights"], setup["n_layer"], setup["n_head"], 0)


# ---- the other steps: one rule each -------------------------------------------------------------

def _judge_limit(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """What happens to a character past pos_emb's last row: the model's own limit decides, whatever line A holds
    (a line within the table still gets a verdict: the question is about the next row, not this line). A line
    past the model's limit is refused: the refusal is the answer."""
    model = step_model(setup, registry)
    n = max(len(setup["line_a"]), len(setup["line_b"] or ""))
    rows = max_chars("learned")  # pos_emb's rows
    figures = {"n": n, "rows": rows, "max": model.config.max_positions}
    if n > model.config.max_positions:
        return {"outcome": "error", "reason": "table_ends" if model.config.position == "learned" else "too_long",
                "figures": figures}
    outcome = "error" if model.config.max_positions <= rows else "works"  # does it take a line of rows + 1?
    if model.config.position != "learned":
        return {"outcome": outcome, "reason": "no_table", "figures": figures}
    # The line is within the table: the outcome is the model's rule for the row after it, not what it did to this line.
    return {"outcome": outcome, "reason": "within_table", "rule": True, "figures": {**figures, "more": rows - n + 1}}


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
    model = step_model(setup, registry)
    if model.config.position != "rope":
        return {"outcome": None, "reason": "not_rope", "figures": {}}
    theta = rope_table([0], model.config.head_dim, model.config.rope_base)["theta"]
    first, last = float(theta[0]), float(theta[-1])
    outcome = "first" if first > last else "last" if first < last else "equal"
    # The lines' positions, as /api/compare's rope table counts them: the last has turned by (positions − 1)·θ.
    positions = max(len(setup["line_a"]), len(setup.get("line_b") or ""))
    return {"outcome": outcome, "reason": f"rotate_{outcome}",
            "figures": {"theta_first": first, "theta_last": last, "pairs": len(theta), "last_pair": len(theta) - 1,
                        "turn_first": 2 * math.pi / first, "turn_last": 2 * math.pi / last,
                        "degrees_first": math.degrees(first), "degrees_last": math.degrees(last),
                        "positions": positions, "turned_first": math.degrees(first * (positions - 1)),
                        "turned_last": math.degrees(last * (positions - 1))}}


def _judge_relative(step_id: str, setup: dict, registry: ModelRegistry) -> dict:
    """Line A's first two characters run alone, `distance` apart, at every start: is layer 1 head 1's score
    of the second on the first the same at every start? Judged on the float64 twins, so "the same" is exact."""
    chars = list(setup["line_a"])
    if len(chars) < 2:
        return {"outcome": None, "reason": "need_two", "figures": {}}
    first, second = registry.tokenizer.encode(chars[0] + chars[1])
    distance = setup.get("distance") or 1
    starts = relative_starts(distance)
    spread, flat, figures = {}, {}, {"distance": distance, "starts": len(starts), "last_start": starts[-1]}
    for position in ("rope", "learned", "none"):
        model = choose_model(registry, position, setup["weights"], None, None, 0)
        twin = registry.twins.twin(model)
        scores = pair_scores(twin, first, second, starts, distance)[0, 0]  # (starts,)
        spread[position] = float(scores.max() - scores.min())
        flat[position] = spread[position] < REL_ROUNDING * max(1.0, float(scores.abs().max()))
        figures[f"spread_{position}"] = spread[position]
        if position == "rope":  # pair 0's frequency, and the worked example of why only the distance counts
            figures.update(rope_worked_example(twin, first, second, starts[0], starts[-1], distance))
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
    model = step_model(setup, registry)
    ids = registry.tokenizer.encode(setup["line_a"])
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
    # Which kind is hardest with the head off is another question, with another answer when the head matters most
    # where the model was surest: the page words these, "still the hardest" only when both hardest are one kind.
    kinds = {"hardest_before": max(before, key=before.get), "hardest_after": max(after, key=after.get),
             "easiest_before": min(before, key=before.get)}
    return {"outcome": outcome, "accepted": [k for k, v in by_kind.items() if by_kind[outcome] - v < ABLATE_TIE],
            "reason": f"ablate_{outcome}", "kinds": kinds,
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


JUDGES = {"ablate": _judge_ablate, "probe": _judge_probe, "bands": _judge_bands,
           "limit": _judge_limit, "table": _judge_table, "rotate": _judge_rotate,
           "relative": _judge_relative, "length": _judge_length, "split": _judge_split, "heads": _judge_heads,
           "ex2": _judge_training, "ex3": _judge_training}
