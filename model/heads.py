"""What each trained head looks at, measured on the validation poems.

For every layer and head: the mean attention by offset (the key d characters before the query),
on the window's first character, on punctuation (all of it, and the latest mark alone), and on the
character one line up that stands parallel to the one being predicted; and the mean entropy of an attention row.

Statistics are taken over queries at positions >= MAX_OFFSET, so that every offset 0..MAX_OFFSET
exists for every query counted, and no row is the near-certain first few of a window.
"""

import torch

from model.gpt import GPT
from model.train import window_offsets, windows

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


def head_statistics(model: GPT, ids: torch.Tensor, text: str, n_windows: int | None = None) -> dict:
    """{"windows", "punctuation_uniform", "layers": [{"layer", "heads": [{"head", "by_offset", "first", "entropy",
    "punctuation", "last_mark", "line_above"}]}]},
    layers and heads 1-based, from windows of block_size characters every block_size ids of `ids`
    (the encoded `text`, one id per character). punctuation_uniform is what a head spreading its
    attention evenly would put on punctuation: the yardstick for "prefers punctuation"."""
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
    return {"windows": len(offsets), "punctuation_uniform": uniform_punct / n_rows, "layers": layers}


# A head "prefers" what takes at least this share of its attention; a second preference is named too
# when it takes at least SECOND. A head with no preference and a high entropy is "spread out".
STRONG = 0.2
SECOND = 0.2
SPREAD_ENTROPY = 2.5  # nats; a uniform row over the 64 keys of a mid-window query has 4.2

# What a head can prefer, as a noun phrase with its share: {p} is the share, {d} the offset.
PHRASES = {
    "self": {"zh": "这个字自己（{p}）", "ja": "その文字自身（{p}）", "fr": "le caractère lui-même ({p})",
             "en": "the character itself ({p})"},
    "previous": {"zh": "前一个字（{p}）", "ja": "直前の文字（{p}）", "fr": "le caractère précédent ({p})",
                 "en": "the previous character ({p})"},
    "back": {"zh": "往前第 {d} 个字（{p}）", "ja": "{d} 文字前（{p}）", "fr": "le caractère {d} places avant ({p})",
             "en": "the character {d} back ({p})"},
    "line_above": {"zh": "上一句同一位置的字（{p}）", "ja": "前の句の同じ位置の文字（{p}）",
                   "fr": "la même place dans le vers précédent ({p})", "en": "the same place one line up ({p})"},
    "first": {"zh": "窗口的第一个字（{p}）", "ja": "窓の最初の文字（{p}）",
              "fr": "le premier caractère de la fenêtre ({p})", "en": "the window's first character ({p})"},
    "last_mark": {"zh": "最近的一个标点（{p}）", "ja": "直近の句読点（{p}）",
                  "fr": "le dernier signe de ponctuation ({p})", "en": "the latest punctuation mark ({p})"},
    "punctuation": {"zh": "标点（{p}）", "ja": "句読点（{p}）", "fr": "la ponctuation ({p})",
                    "en": "punctuation ({p})"},
}
ONE = {"zh": "主要看{x}", "ja": "主に{x}を見る", "fr": "regarde surtout {x}", "en": "mostly {x}"}
TWO = {"zh": "主要看{x}，其次看{y}", "ja": "主に{x}を見て、次に{y}を見る", "fr": "regarde surtout {x}, puis {y}",
       "en": "mostly {x}, then {y}"}
SPREAD = {"zh": "分散在前面所有的字上（熵 {e} 奈特）", "ja": "前の文字全体に広く分散する（エントロピー {e} ナット）",
          "fr": "se répartit sur tout ce qui précède (entropie {e} nats)",
          "en": "spread over everything before it (entropy {e} nats)"}
# Preferences that count the same keys twice are not named together.
OVERLAP = {("punctuation", "last_mark"), ("line_above", "back")}


def _share(value: float, lang: str) -> str:
    return f"{round(100 * value)}\u202f%" if lang == "fr" else f"{round(100 * value)}%"


def describe(stats: dict, punctuation_uniform: float) -> dict:
    """One sentence per language for what a head prefers, chosen from its numbers alone.

    Punctuation counts as a preference only at twice what an even spread gives it (a fifth of the keys
    in these poems are marks), and is named as "the latest mark" when that one mark holds enough."""
    by_offset = stats["by_offset"]
    peak = max(range(1, len(by_offset)), key=by_offset.__getitem__)
    candidates = [
        ("self", by_offset[0]), ("previous" if peak == 1 else "back", by_offset[peak]),
        ("line_above", stats["line_above"]), ("first", stats["first"]), ("last_mark", stats["last_mark"]),
    ]
    if stats["last_mark"] < STRONG and stats["punctuation"] >= 2 * punctuation_uniform:
        candidates.append(("punctuation", stats["punctuation"]))
    ranked = sorted(candidates, key=lambda c: -c[1])
    top = ranked[0]
    if top[1] < STRONG:
        entropy = f"{stats['entropy']:.1f}"
        return {lang: text.format(e=entropy.replace(".", ",") if lang == "fr" else entropy)
                for lang, text in SPREAD.items()}
    second = next((c for c in ranked[1:] if c[1] >= SECOND and (top[0], c[0]) not in OVERLAP
                   and (c[0], top[0]) not in OVERLAP), None)

    def phrase(kind: str, share: float, lang: str) -> str:
        return PHRASES[kind][lang].format(p=_share(share, lang), d=peak)

    return {lang: (TWO[lang].format(x=phrase(*top, lang), y=phrase(*second, lang)) if second
                   else ONE[lang].format(x=phrase(*top, lang))) for lang in ONE}


def with_summaries(stats: dict) -> dict:
    """head_statistics' answer, each head with its sentence in zh, ja, fr and en."""
    uniform = stats["punctuation_uniform"]
    return {**stats, "layers": [{**layer, "heads": [{**h, "summary": describe(h, uniform)} for h in layer["heads"]]}
                                for layer in stats["layers"]]}
