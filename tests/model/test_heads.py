"""Head statistics: recomputed here by a plain loop over rows, and the shipped heads.json checked against them."""

import json
import re

import numpy as np
import pytest
import torch

from model.assets import WEIGHTS_DIR, checkpoint_path
from model.checkpoint import load_checkpoint
from model.corpus import load_text
from model.heads import MAX_OFFSET, describe, head_statistics, parallel_keys
from model.tokenizer import CharTokenizer

MARKS = "，。！？；：、,.!?;:"


def parallel_by_poem(text: str) -> dict[int, int]:
    """{query index: key index} for every target in line 2+ of a regular five- or seven-character poem."""
    out, start = {}, 0
    for poem in text.split("\n"):
        lines = [s for s in re.split("[，。！？；]", poem)]
        body, tail = lines[:-1], lines[-1]
        if not tail and len(body) >= 2 and len({len(s) for s in body}) == 1 and len(body[0]) in (5, 7):
            L = len(body[0])
            for k in range(1, len(body)):
                for c in range(L):
                    g = start + k * (L + 1) + c  # the target's index in the text
                    out[g - 1] = g - (L + 1)
        start += len(poem) + 1
    return out


def loop_statistics(model, ids, text, n_windows):
    """The same figures as head_statistics, one attention row at a time in numpy."""
    T = model.config.block_size
    above_of = parallel_by_poem(text)
    sums, n_rows, n_above, n_marked = {}, 0, 0, 0
    for w in range(n_windows):
        start = w * T
        with torch.inference_mode():
            trace = model.trace(ids[start:start + T][None])
        for q in range(MAX_OFFSET, T):
            g = start + q
            marks = [k for k in range(q + 1) if text[start + k] in MARKS]
            n_rows += 1
            has_above = g in above_of and above_of[g] >= start
            n_above += has_above
            n_marked += bool(marks)
            for layer, p in enumerate(trace.attention):
                for h in range(model.config.n_head):
                    row = p[0, h, q].double().numpy()
                    s = sums.setdefault((layer, h), {"by_offset": np.zeros(MAX_OFFSET + 1), "first": 0.0,
                                                     "entropy": 0.0, "punctuation": 0.0, "last_mark": 0.0,
                                                     "line_above": 0.0})
                    for d in range(MAX_OFFSET + 1):
                        s["by_offset"][d] += row[q - d]
                    s["first"] += row[0]
                    nz = row[row > 0]
                    s["entropy"] -= float((nz * np.log(nz)).sum())
                    s["punctuation"] += sum(row[k] for k in marks)
                    if marks:
                        s["last_mark"] += row[marks[-1]]
                    if has_above:
                        s["line_above"] += row[above_of[g] - start]
    out = {}
    for key, s in sums.items():
        out[key] = {"by_offset": s["by_offset"] / n_rows, "first": s["first"] / n_rows,
                    "entropy": s["entropy"] / n_rows, "punctuation": s["punctuation"] / n_rows,
                    "last_mark": s["last_mark"] / n_marked, "line_above": s["line_above"] / n_above}
    return out


@pytest.fixture(scope="module")
def val():
    text = load_text("val")
    tok = CharTokenizer.load(WEIGHTS_DIR / "vocab.json")
    return torch.tensor(tok.encode(text)), text


def test_parallel_key_is_one_line_up_at_the_same_place():
    text = "寒惊蓟门叶，秋发小山枝。\n一二三，四五六七八。"
    back = parallel_keys(text)
    # The query 秋 predicts 发; 发's parallel character one line up is 惊, 5 keys before 秋.
    assert back[text.index("秋")] == 5 and text[text.index("秋") - 5] == "惊"
    # The mark before line 2 predicts its first character: 寒 stands above 秋.
    assert back[text.index("，")] == 5
    assert back[text.index("山")] == 5 and back[text.index("枝")] == 0  # 枝 predicts the mark 。
    assert not any(back[:5]) and not any(back[text.index("\n"):])  # line 1, and an irregular poem


@pytest.mark.parametrize("position", ["learned", "none"])
def test_statistics_equal_a_row_by_row_recount(val, position):
    ids, text = val
    model, _, _ = load_checkpoint(checkpoint_path(position))
    fast = head_statistics(model, ids, text, n_windows=3)
    slow = loop_statistics(model, ids, text, 3)
    assert fast["windows"] == 3
    for layer in fast["layers"]:
        for h in layer["heads"]:
            want = slow[layer["layer"] - 1, h["head"] - 1]
            np.testing.assert_allclose(h["by_offset"], want["by_offset"], atol=1e-9)
            for key in ("first", "entropy", "punctuation", "last_mark", "line_above"):
                assert h[key] == pytest.approx(want[key], abs=1e-9), key


def test_shipped_heads_json_is_the_whole_split_of_the_shipped_weights(val):
    ids, text = val
    shipped = json.loads((WEIGHTS_DIR / "heads.json").read_text(encoding="utf-8"))
    assert [m["position"] for m in shipped["models"]] == ["learned", "rope", "none"]
    model, _, _ = load_checkpoint(checkpoint_path("learned"))
    fresh = head_statistics(model, ids, text)
    learned = shipped["models"][0]
    assert learned["windows"] == fresh["windows"] == (len(ids) - 1) // model.config.block_size
    for got, want in zip(learned["layers"], fresh["layers"]):
        for g, w in zip(got["heads"], want["heads"]):
            np.testing.assert_allclose(g["by_offset"], w["by_offset"], atol=1e-6)
            assert g["line_above"] == pytest.approx(w["line_above"], abs=1e-6)
            assert g["summary"] == describe(w, fresh["punctuation_uniform"])


def test_what_the_lesson_says_the_heads_learned():
    shipped = {m["position"]: m for m in json.loads((WEIGHTS_DIR / "heads.json").read_text("utf-8"))["models"]}
    learned_1 = shipped["learned"]["layers"][0]["heads"]
    # One learned layer-1 head reads the previous character; others reach one line up (offset 5 or 7).
    assert max(h["by_offset"][1] for h in learned_1) > 0.35
    assert {max(range(1, MAX_OFFSET + 1), key=h["by_offset"].__getitem__) for h in learned_1} & {5, 7}
    # Without positions, layer 1 can only average what came before: flat by offset, high entropy.
    for h in shipped["none"]["layers"][0]["heads"]:
        assert max(h["by_offset"]) - min(h["by_offset"]) < 0.02 and h["entropy"] > 3.5


def test_sentences_follow_the_numbers():
    flat = {"by_offset": [0.02] * (MAX_OFFSET + 1), "first": 0.02, "entropy": 4.1, "punctuation": 0.2,
            "last_mark": 0.03, "line_above": 0.02}
    assert describe(flat, 0.16)["en"] == "spread over everything before it (entropy 4.1 nats)"
    assert describe(flat, 0.16)["fr"] == "se répartit sur tout ce qui précède (entropie 4,1 nats)"
    previous = {**flat, "by_offset": [0.05, 0.71] + [0.01] * (MAX_OFFSET - 1)}
    assert describe(previous, 0.16)["en"] == "mostly the previous character (71%)"
    assert describe(previous, 0.16)["zh"] == "主要看前一个字（71%）"
    couplet = {**previous, "line_above": 0.38, "by_offset": [0.05, 0.3] + [0.01] * (MAX_OFFSET - 1)}
    assert describe(couplet, 0.16)["en"] == "mostly the same place one line up (38%), then the previous character (30%)"
    # A fifth of the keys are marks: 23% on punctuation is no preference; 40% is.
    assert "punctuation" not in describe({**flat, "entropy": 2.0, "punctuation": 0.23}, 0.16)["en"]
    assert describe({**flat, "punctuation": 0.4}, 0.16)["en"] == "mostly punctuation (40%)"
