"""What each trained head looks at, measured on the validation poems.

For every layer and head: the mean attention by offset (the key d characters before the query),
on the window's first character, on punctuation (all of it, and the latest mark alone), and on the
character one line up that stands parallel to the one being predicted; and the mean entropy of an attention row.

Statistics are taken over queries at positions >= MAX_OFFSET, so that every offset 0..MAX_OFFSET
exists for every query counted, and no row is the near-certain first few of a window.

ablation_statistics measures what each head does for the prediction: the loss increase with that head
alone off, split by the kind of the next character (punctuation, a couplet's second line, the rest).

describe then reads each head's role from its numbers, as data (kinds and shares) that the page words in its
language, one rule per function: "mostly" (is_mostly), punctuation and its latest mark
(punctuation_preference), "spread" (is_spread).
"""

import torch
import torch.nn.functional as F

from model.gpt import GPT
from model.windows import window_offsets, windows

MAX_OFFSET = 16  # by_offset covers d = 0..16: a seven-character couplet and its punctuation
PUNCTUATION = frozenset("，。！？；：、,.!?;:")
LINE_ENDS = frozenset("，。！？；")
WINDOWS_PER_FORWARD = 32


def poem_line_lengths(text: str) -> list[int]:
    """For each character of the text, the line length (5 or 7) of the regular poem it is in, else 0.

    A poem is one line of the text; it is regular when every line of it (text between ，。！？；)
    has the same length, 5 or 7 characters."""
    out = []
    for poem in text.split("\n"):
        lines, current = [], 0
        for ch in poem:
            if ch in LINE_ENDS:
                lines.append(current)
                current = 0
            else:
                current += 1
        regular = not current and len(lines) >= 2 and len(set(lines)) == 1 and lines[0] in (5, 7)
        out.extend([lines[0] if regular else 0] * len(poem))
        out.append(0)  # the newline between poems
    return out[: len(text)]


def parallel_keys(text: str) -> list[int]:
    """For each position q, the offset back to the key one line up that stands parallel to the
    character q predicts (q + 1): 5 in five-character poems (a line and its mark are 6 long, and the
    target is one ahead of the query), 7 in seven-character ones; 0 where there is none (the target is
    punctuation, in the poem's first line, or the poem is irregular)."""
    lengths = poem_line_lengths(text)
    out = [0] * len(text)
    line_index = 0
    for i, ch in enumerate(text):
        if ch == "\n":
            line_index = 0
            continue
        if ch in LINE_ENDS:
            line_index += 1
            continue
        L = lengths[i]
        if L and line_index >= 1 and i >= 1:
            out[i - 1] = L  # the query before this character predicts it
    return out


def uniform_entropy(block_size: int) -> float:
    """The mean entropy of an even attention row over the queries head_statistics counts.

    Query q sees its q + 1 keys (the causal mask), so its even row has entropy log(q + 1); every
    window counts the same queries, MAX_OFFSET..block_size - 1."""
    q = torch.arange(MAX_OFFSET, block_size, dtype=torch.float64)
    return float(torch.log(q + 1).mean())


def head_statistics(model: GPT, ids: torch.Tensor, text: str, n_windows: int | None = None) -> dict:
    """{"windows", "punctuation_uniform", "entropy_uniform", "layers": [{"layer", "heads": [{"head", "by_offset",
    "first", "entropy", "punctuation", "last_mark", "line_above"}]}]},
    layers and heads 1-based, from windows of block_size characters every block_size ids of `ids`
    (the encoded `text`, one id per character). punctuation_uniform is what a head spreading its
    attention evenly would put on punctuation: the yardstick for "prefers punctuation"; entropy_uniform
    is the mean entropy of such even rows: the yardstick for "spread"."""
    assert len(ids) == len(text), f"ids ({len(ids)}) and text ({len(text)}) must align one to one"
    model.eval()
    cfg = model.config
    T = cfg.block_size
    offsets = window_offsets(len(ids), T, T, n_windows)
    is_punct = torch.tensor([ch in PUNCTUATION for ch in text])
    parallel = torch.tensor(parallel_keys(text))
    q_pos = torch.arange(MAX_OFFSET, T)  # the queries counted, (Q,)
    d = torch.arange(MAX_OFFSET + 1)
    shape = (cfg.n_layer, cfg.n_head)
    by_offset = torch.zeros(*shape, MAX_OFFSET + 1, dtype=torch.float64)
    first = torch.zeros(shape, dtype=torch.float64)
    entropy = torch.zeros(shape, dtype=torch.float64)
    punct = torch.zeros(shape, dtype=torch.float64)
    above, n_above = torch.zeros(shape, dtype=torch.float64), 0
    last_mark, n_marked = torch.zeros(shape, dtype=torch.float64), 0
    uniform_punct = 0.0
    n_rows = 0
    with torch.inference_mode():
        for batch in offsets.split(WINDOWS_PER_FORWARD):
            x, _ = windows(ids, batch, T)  # (W, T)
            trace = model.trace(x)
            pos = batch[:, None] + torch.arange(T)  # (W, T): each window position's index in the text
            key_punct = is_punct[pos].double()  # (W, T)
            uniform_punct += float((key_punct.cumsum(1) / torch.arange(1, T + 1))[:, MAX_OFFSET:].sum())
            back = parallel[pos][:, MAX_OFFSET:]  # (W, Q): offset to the parallel key, 0 where none
            has = back > 0
            n_above += int(has.sum())
            # The latest punctuation key at or before each query, -1 where the window has none yet: (W, Q).
            mark = torch.where(key_punct.bool(), torch.arange(T), -1).cummax(dim=1).values[:, MAX_OFFSET:]
            marked = mark >= 0
            n_marked += int(marked.sum())
            n_rows += len(batch) * len(q_pos)
            for layer, p in enumerate(trace.attention):
                rows = p[:, :, MAX_OFFSET:, :].double()  # (W, nh, Q, T): the counted queries' rows
                keys = (q_pos[:, None] - d).expand(len(q_pos), -1)  # (Q, D): key index at each offset
                on_offset = rows.gather(-1, keys.expand(*rows.shape[:2], -1, -1))  # (W, nh, Q, D)
                by_offset[layer] += on_offset.sum((0, 2))
                first[layer] += rows[..., 0].sum((0, 2))
                entropy[layer] += -(rows * rows.clamp_min(1e-30).log()).sum(-1).sum((0, 2))
                punct[layer] += (rows * key_punct[:, None, None, :]).sum(-1).sum((0, 2))
                key_above = (q_pos - back).clamp_min(0)  # (W, Q)
                on_above = rows.gather(-1, key_above[:, None, :, None].expand(-1, rows.shape[1], -1, 1))[..., 0]
                above[layer] += (on_above * has[:, None, :]).sum((0, 2))
                on_mark = rows.gather(-1, mark.clamp_min(0)[:, None, :, None].expand(-1, rows.shape[1], -1, 1))[..., 0]
                last_mark[layer] += (on_mark * marked[:, None, :]).sum((0, 2))
    layers = [
        {"layer": layer + 1, "heads": [
            {"head": h + 1,
             "by_offset": (by_offset[layer, h] / n_rows).tolist(),
             "first": float(first[layer, h] / n_rows),
             "entropy": float(entropy[layer, h] / n_rows),
             "punctuation": float(punct[layer, h] / n_rows),
             "last_mark": float(last_mark[layer, h] / max(n_marked, 1)),
             "line_above": float(above[layer, h] / max(n_above, 1))}
            for h in range(cfg.n_head)]}
        for layer in range(cfg.n_layer)
    ]
    return {"windows": len(offsets), "punctuation_uniform": uniform_punct / n_rows,
            "entropy_uniform": uniform_entropy(T), "layers": layers}


MOSTLY = 0.5  # a share is "mostly" only above one half, as the sentence shows it (51% and up)
NAMED = 0.1  # a share worth naming: over 5 times what an even row gives one key (1.8% on average)
PUNCTUATION_FACTOR = 2  # punctuation is a preference at twice what an even row gives it (a fifth of keys are marks)
SPREAD_MARGIN = 0.3  # nats: a head this close to an even row's entropy is "spread"
# Preferences that count the same keys: the same place one line up is 5 or 7 keys back.
OVERLAP = {frozenset({"line_above", ("back", 5)}), frozenset({"line_above", ("back", 7)})}


def is_spread(entropy: float, entropy_uniform: float) -> bool:
    """Near-uniform: the head's mean entropy is within SPREAD_MARGIN of an even row's."""
    return entropy_uniform - entropy <= SPREAD_MARGIN


def is_mostly(share: float) -> bool:
    """Above one half as the sentence writes it: 50.4% shows as 50%, which is no majority to the reader."""
    return round(100 * share) > 100 * MOSTLY


def previous_character_head(layer_heads: list[dict]) -> dict | None:
    """The layer's head with the largest share on the previous character, if that share is worth naming."""
    head = max(layer_heads, key=lambda h: h["by_offset"][1])
    return head if head["by_offset"][1] >= NAMED else None


def couplet_heads(layers: list[dict]) -> list[tuple[int, dict]]:
    """(layer, head) for every head whose share on the parallel character one line up is worth naming."""
    return [(layer["layer"], h) for layer in layers for h in layer["heads"] if h["line_above"] >= NAMED]


def largest_offset_share(layer_heads: list[dict]) -> tuple[dict, int]:
    """The head and offset with the largest mean attention at one offset in the layer: below NAMED, no head
    of the layer singles out any place by its distance (it is flat by offset)."""
    head = max(layer_heads, key=lambda h: max(h["by_offset"]))
    return head, max(range(len(head["by_offset"])), key=head["by_offset"].__getitem__)


def punctuation_preference(stats: dict, punctuation_uniform: float) -> dict:
    """The punctuation candidate: all marks when they are a preference (twice an even row's share),
    with the latest mark as a part of it when that mark alone is worth naming; else the latest mark alone."""
    if stats["punctuation"] >= PUNCTUATION_FACTOR * punctuation_uniform:
        part = stats["last_mark"] if stats["last_mark"] >= NAMED else None
        return {"kind": "punctuation", "share": stats["punctuation"], "part": part}
    return {"kind": "last_mark", "share": stats["last_mark"]}


def _key(candidate: dict):
    return (candidate["kind"], candidate["d"]) if candidate["kind"] == "back" else candidate["kind"]


def preferences(stats: dict, punctuation_uniform: float) -> list[dict]:
    """Everything a head can prefer, largest share first, leaving out what counts keys already named: each
    {"kind", "share", "d", "part"}, with d (the offset of "back") and part (punctuation's latest mark) else None."""
    by_offset = stats["by_offset"]
    candidates = [{"kind": "self", "share": by_offset[0]}, {"kind": "previous", "share": by_offset[1]}]
    candidates += [{"kind": "back", "d": d, "share": by_offset[d]} for d in range(2, len(by_offset))]
    candidates += [{"kind": "line_above", "share": stats["line_above"]}, {"kind": "first", "share": stats["first"]},
                   punctuation_preference(stats, punctuation_uniform)]
    out = []
    for c in sorted(candidates, key=lambda c: -c["share"]):
        if not any(frozenset({_key(c), _key(o)}) in OVERLAP for o in out):
            out.append({"kind": c["kind"], "share": c["share"], "d": c.get("d"), "part": c.get("part")})
    return out


def preference_role(ranked: list[dict], entropy: float, entropy_uniform: float) -> dict:
    """"mostly" the top preference when it holds more than half, with the next if it is worth naming;
    otherwise the "largest" two shares, and a third if it is worth naming. When not even the top one is
    worth naming, "broad", with the entropy beside the two largest, so 4% does not read as a preference."""
    top, second, third = ranked[:3]
    if is_mostly(top["share"]):
        kind, named = "mostly", [top, second] if second["share"] >= NAMED else [top]
    elif top["share"] < NAMED:
        kind, named = "broad", [top, second]
    else:
        kind, named = "largest", [top, second, third] if third["share"] >= NAMED else [top, second]
    return {"kind": kind, "named": named, "entropy": entropy, "entropy_uniform": entropy_uniform}


def describe(stats: dict, punctuation_uniform: float, entropy_uniform: float) -> dict:
    """What a head prefers, chosen from its numbers alone, as data the page words in its language:
    {"kind": "spread" | "mostly" | "largest" | "broad", "named": [preferences, largest share first],
    "entropy", "entropy_uniform"}. A preference is {"kind", "share", "d", "part"}: "d" is the offset of "back",
    "part" the latest mark's share within punctuation when that mark alone is worth naming; else None."""
    if is_spread(stats["entropy"], entropy_uniform):
        return {"kind": "spread", "named": [], "entropy": stats["entropy"], "entropy_uniform": entropy_uniform}
    return preference_role(preferences(stats, punctuation_uniform), stats["entropy"], entropy_uniform)


def with_roles(stats: dict) -> dict:
    """head_statistics' answer, each head with its role (describe)."""
    yardsticks = stats["punctuation_uniform"], stats["entropy_uniform"]
    return {**stats, "layers": [{**layer, "heads": [{**h, "role": describe(h, *yardsticks)} for h in layer["heads"]]}
                                for layer in stats["layers"]]}


# What the next character is, for the loss split of ablation_statistics.
KINDS = ("punctuation", "second_line", "other")


def next_kinds(text: str) -> list[int]:
    """For each position q, the kind (index into KINDS) of the character q predicts, text[q + 1]:
    punctuation; a character in the second line of a couplet of a regular poem (its 2nd, 4th, ... line,
    whose parallel character stands one line up: 5 back in five-character poems, 7 in seven, as
    parallel_keys counts it); else other. The text's last position predicts nothing and counts as other."""
    back = parallel_keys(text)
    out = [KINDS.index("other")] * len(text)
    line_index = 0
    for i, ch in enumerate(text):
        if ch == "\n":
            line_index = 0
        elif ch in LINE_ENDS:
            line_index += 1
        if i == 0:
            continue
        if ch in PUNCTUATION:
            out[i - 1] = KINDS.index("punctuation")
        elif back[i - 1] and line_index % 2 == 1:
            out[i - 1] = KINDS.index("second_line")
    return out


def ablation_statistics(model: GPT, ids: torch.Tensor, text: str, n_windows: int | None = None,
                        heads: list[tuple[int, int]] | None = None) -> dict:
    """How much worse the model predicts with one head off (its output zeroed before proj), head by head:
    every head, or the (layer, head) pairs in `heads` (counted from 1; each costs a pass over the windows).

    {"windows", "characters", "counts": {kind: n}, "loss": {"all": base, kind: base},
     "layers": [{"layer", "heads": [{"head", "ablation": {"loss_increase", "by_kind": {kind: increase}}}]}]}.
    Over the same windows and queries as head_statistics (positions >= MAX_OFFSET), each query's loss on
    the next character, nats per character; an increase is the mean loss with the head off minus the mean
    loss with every head on, over all counted queries and over those whose next character is of each kind."""
    assert len(ids) == len(text), f"ids ({len(ids)}) and text ({len(text)}) must align one to one"
    model.eval()
    cfg = model.config
    T = cfg.block_size
    offsets = window_offsets(len(ids), T, T, n_windows)
    kinds = torch.tensor(next_kinds(text))
    pairs = heads or [(layer + 1, h + 1) for layer in range(cfg.n_layer) for h in range(cfg.n_head)]
    # Variant 0 runs with every head on; variant v >= 1 with the head pairs[v - 1] alone off.
    variants = torch.zeros(1 + len(pairs), cfg.n_layer, cfg.n_head, dtype=torch.bool)
    for v, (layer, head) in enumerate(pairs, start=1):
        variants[v, layer - 1, head - 1] = True
    sums = torch.zeros(len(variants), len(KINDS), dtype=torch.float64)  # summed loss per variant and kind
    counts = torch.zeros(len(KINDS), dtype=torch.float64)
    with torch.inference_mode():
        for batch in offsets.split(WINDOWS_PER_FORWARD):
            x, y = windows(ids, batch, T)  # (W, T) each
            kind = kinds[batch[:, None] + torch.arange(MAX_OFFSET, T)]  # (W, Q): kind of each counted target
            one_hot = F.one_hot(kind, len(KINDS)).double()  # (W, Q, K)
            counts += one_hot.sum((0, 1))
            for v, off in enumerate(variants):
                logits = model.trace(x, heads_off=off).logits[:, MAX_OFFSET:]  # (W, Q, vocab)
                loss = F.cross_entropy(logits.transpose(1, 2), y[:, MAX_OFFSET:], reduction="none")  # (W, Q)
                sums[v] += (loss.double()[..., None] * one_hot).sum((0, 1))
    mean_all = sums.sum(1) / counts.sum()  # (variants,)
    mean_kind = sums / counts.clamp_min(1)  # (variants, K)

    def increase(v: int) -> dict:
        return {"loss_increase": float(mean_all[v] - mean_all[0]),
                "by_kind": {k: float(mean_kind[v, i] - mean_kind[0, i]) for i, k in enumerate(KINDS)}}

    layers = [{"layer": layer, "heads": [{"head": head, "ablation": increase(v)}
                                         for v, (in_layer, head) in enumerate(pairs, start=1) if in_layer == layer]}
              for layer in range(1, cfg.n_layer + 1)]
    return {"windows": len(offsets), "characters": int(counts.sum()),
            "counts": {k: int(counts[i]) for i, k in enumerate(KINDS)},
            "loss": {"all": float(mean_all[0]), **{k: float(mean_kind[0, i]) for i, k in enumerate(KINDS)}},
            "layers": layers}


def with_ablation(stats: dict, ablation: dict) -> dict:
    """head_statistics' answer (with or without summaries) with ablation_statistics' figures added: the
    model's as "ablation" (windows, characters, counts, loss), each head's as its "ablation"."""
    figures = {(layer["layer"], h["head"]): h["ablation"] for layer in ablation["layers"] for h in layer["heads"]}
    return {**stats, "ablation": {k: v for k, v in ablation.items() if k != "layers"},
            "layers": [{**layer, "heads": [{**h, "ablation": figures[layer["layer"], h["head"]]}
                                           for h in layer["heads"]]}
                       for layer in stats["layers"]]}
