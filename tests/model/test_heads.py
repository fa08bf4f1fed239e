"""Head statistics: recomputed here by a plain loop over rows, and the shipped heads.json checked against them."""

import json
import re

import numpy as np
import pytest
import torch

from model.assets import WEIGHTS_DIR, checkpoint_path
from model.checkpoint import load_checkpoint
from model.gpt import GPT, GPTConfig
from model.heads import (
    MAX_OFFSET,
    describe,
    head_statistics,
    is_mostly,
    is_spread,
    parallel_keys,
    preference_role,
    preferences,
    punctuation_preference,
)
from model.poems import load_text
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


@pytest.mark.slow  # the whole validation split
def test_shipped_heads_json_is_the_whole_split_of_the_shipped_weights(val):
    ids, text = val
    shipped = json.loads((WEIGHTS_DIR / "heads.json").read_text(encoding="utf-8"))
    assert [m["position"] for m in shipped["models"]] == ["learned", "rope", "none"]
    model, _, _ = load_checkpoint(checkpoint_path("learned"))
    fresh = head_statistics(model, ids, text)
    learned = shipped["models"][0]
    assert learned["windows"] == fresh["windows"] == (len(ids) - 1) // model.config.block_size
    assert learned["entropy_uniform"] == pytest.approx(fresh["entropy_uniform"], abs=1e-12)
    for got, want in zip(learned["layers"], fresh["layers"]):
        for g, w in zip(got["heads"], want["heads"]):
            np.testing.assert_allclose(g["by_offset"], w["by_offset"], atol=1e-6)
            assert g["line_above"] == pytest.approx(w["line_above"], abs=1e-6)
            assert_same_role(g["role"], describe(w, fresh["punctuation_uniform"], fresh["entropy_uniform"]))


def assert_same_role(got, want):
    """The same kinds, offsets and parts exactly; shares and entropies to 1e-6, as the figures above (a fresh run
    on the whole split rounds differently from the shipped one in the 10th digit)."""
    if isinstance(want, dict):
        assert got.keys() == want.keys()
        for key in want:
            assert_same_role(got[key], want[key])
    elif isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same_role(g, w)
    elif isinstance(want, float):
        assert got == pytest.approx(want, abs=1e-6)
    else:
        assert got == want


def test_what_the_lesson_says_the_heads_learned():
    shipped = {m["position"]: m for m in json.loads((WEIGHTS_DIR / "heads.json").read_text("utf-8"))["models"]}
    learned_1 = shipped["learned"]["layers"][0]["heads"]
    # One learned layer-1 head reads the previous character; others reach one line up (offset 5 or 7).
    assert max(h["by_offset"][1] for h in learned_1) > 0.35
    assert {max(range(1, MAX_OFFSET + 1), key=h["by_offset"].__getitem__) for h in learned_1} & {5, 7}
    # Without positions, layer 1 can only average what came before: flat by offset, high entropy.
    for h in shipped["none"]["layers"][0]["heads"]:
        assert max(h["by_offset"]) - min(h["by_offset"]) < 0.02 and h["entropy"] > 3.5


# ---- the roles: each rule on hand-made numbers, then the shipped roles against their own numbers. The words are
# the page's (static/js/explorer/head-role.js, static/i18n): tests/e2e/test_head_roles.py checks them in the four
# languages.

PU, EU = 0.16, 4.16  # punctuation and entropy of an even row, about what the shipped models measure


def head(by_offset=(), **kw):
    """A head's numbers: 2% on every offset, 3% on the latest mark, a fifth on punctuation, unless given."""
    offsets = list(by_offset) + [0.02] * (MAX_OFFSET + 1 - len(by_offset))
    return {"by_offset": offsets, "first": 0.02, "entropy": 2.0, "punctuation": 0.2, "last_mark": 0.03,
            "line_above": 0.02, **kw}


def named(role: dict) -> list[tuple]:
    """The preferences a role names, as (kind, share) with the offset or the part where they have one."""
    return [(p["kind"], p["share"], *[p[k] for k in ("d", "part") if p[k] is not None]) for p in role["named"]]


def test_mostly_only_above_one_half():
    assert not is_mostly(0.49) and not is_mostly(0.504) and is_mostly(0.51)  # 50.4% shows as 50%
    over = describe(head([0.05, 0.51]), PU, EU)
    assert over["kind"] == "mostly" and named(over) == [("previous", 0.51)]
    under = describe(head([0.30, 0.49]), PU, EU)
    assert under["kind"] == "largest" and named(under) == [("previous", 0.49), ("self", 0.30)]


def test_below_one_half_names_the_top_three_worth_naming():
    three = describe(head([0.24, 0.32], last_mark=0.2), PU, EU)
    assert three["kind"] == "largest" and named(three) == [("previous", 0.32), ("self", 0.24), ("last_mark", 0.2)]
    # A third below a tenth is left out; after a majority, the next one is named only from a tenth.
    assert named(describe(head([0.24, 0.32, 0.09]), PU, EU)) == [("previous", 0.32), ("self", 0.24)]
    assert named(describe(head([0.12, 0.6]), PU, EU)) == [("previous", 0.6), ("self", 0.12)]
    assert named(describe(head([0.09, 0.6]), PU, EU)) == [("previous", 0.6)]
    # The same place one line up is 5 back in a five-character poem: the two are not named as two things.
    couplet = head([0.05, 0.3, 0.02, 0.02, 0.02, 0.2], line_above=0.38)
    assert named(describe(couplet, PU, EU)) == [("line_above", 0.38), ("previous", 0.3)]
    assert named(describe(head([0.05, 0.1, 0.02, 0.02, 0.02, 0.3]), PU, EU))[0] == ("back", 0.3, 5)


def test_punctuation_total_is_reported_with_the_latest_mark_as_its_part():
    # none L2H2: 87% on punctuation, 22% of it on the latest mark. It read "mostly the latest mark (22%)".
    marks = describe(head(punctuation=0.87, last_mark=0.22), PU, EU)
    assert marks["kind"] == "mostly" and named(marks) == [("punctuation", 0.87, 0.22)]
    # The latest mark is named as a part only when it holds a share worth naming.
    assert punctuation_preference(head(punctuation=0.87, last_mark=0.05), PU) == {
        "kind": "punctuation", "share": 0.87, "part": None}
    assert named(describe(head(punctuation=0.87, last_mark=0.05), PU, EU)) == [("punctuation", 0.87)]
    # Punctuation is a preference only at twice an even row's share: below that, the latest mark stands alone.
    assert punctuation_preference(head(punctuation=0.31, last_mark=0.3), PU) == {"kind": "last_mark", "share": 0.3}
    assert punctuation_preference(head(punctuation=0.32, last_mark=0.3), PU)["kind"] == "punctuation"
    assert ("punctuation", 0.4) in named(describe(head(punctuation=0.4), PU, EU))


def test_spread_means_within_0_3_nats_of_an_even_row():
    assert is_spread(EU - 0.29, EU) and not is_spread(EU - 0.31, EU)
    inside = describe(head(entropy=EU - 0.29), PU, EU)
    assert inside == {"kind": "spread", "named": [], "entropy": EU - 0.29, "entropy_uniform": EU}
    # Just outside, and no place with a tenth: not "spread", and its largest shares are not called preferences.
    outside = describe(head(entropy=EU - 0.31), PU, EU)
    assert outside["kind"] == "broad" and named(outside) == [("last_mark", 0.03), ("self", 0.02)]
    # A head with a clear preference far from even is described by it.
    sharp = preference_role(preferences(head([0.05, 0.71]), PU), 1.0, EU)
    assert sharp["kind"] == "mostly" and sharp["named"][0] == {"kind": "previous", "share": 0.71, "d": None,
                                                               "part": None}


def test_model_knows_no_language():
    """model/ returns data; the page words it (static/i18n): no language code, no sentence template."""
    for path in (WEIGHTS_DIR.parent).glob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"""["'](zh|ja|fr|en)["']""", source), path
        assert not re.search(r"\{[a-z]\}", source), path  # a template's slot, as {x} or {p}
        assert not re.search(r"[\u3040-\u30ff\u4e00-\u9fff]{2,}[^\"]*[（(]", source), path  # a CJK phrase


def test_a_head_that_attends_evenly_measures_the_even_rows_entropy(val):
    """entropy_uniform is the yardstick for "spread": a head with its queries at zero scores every key it
    sees alike, so its measured entropy must equal entropy_uniform, and it must be called spread."""
    ids, text = val
    cfg = GPTConfig(vocab_size=int(ids.max()) + 1, block_size=40, n_layer=1, n_head=2, n_embd=16)
    model = GPT(cfg, seed=3)
    with torch.no_grad():
        model.blocks[0].attn.qkv.weight[: cfg.n_embd] = 0  # the q rows: every score is 0
        model.blocks[0].attn.qkv.bias[: cfg.n_embd] = 0
    stats = head_statistics(model, ids, text, n_windows=2)
    assert stats["entropy_uniform"] == pytest.approx(np.log(np.arange(MAX_OFFSET + 1, 41)).mean(), abs=1e-12)
    for h in stats["layers"][0]["heads"]:
        assert h["entropy"] == pytest.approx(stats["entropy_uniform"], abs=1e-6)
        assert describe(h, stats["punctuation_uniform"], stats["entropy_uniform"])["kind"] == "spread"


def shipped_heads():
    shipped = json.loads((WEIGHTS_DIR / "heads.json").read_text(encoding="utf-8"))
    for m in shipped["models"]:
        for layer in m["layers"]:
            for h in layer["heads"]:
                yield pytest.param(m, h, id=f"{m['position']}-L{layer['layer']}H{h['head']}")


@pytest.mark.parametrize(("model", "h"), list(shipped_heads()))
def test_every_shipped_role_agrees_with_its_own_numbers(model, h):
    """Read from the role, not rebuilt by describe: each share is one of the head's numbers, "mostly" only above
    one half, "spread" exactly when within 0.3 nats of even, and punctuation named when preferred."""
    stats = [*h["by_offset"], h["first"], h["punctuation"], h["last_mark"], h["line_above"]]
    strong_punctuation = h["punctuation"] >= 2 * model["punctuation_uniform"]
    top = max([*h["by_offset"], h["first"], h["line_above"], h["last_mark"]]
              + [h["punctuation"]] * strong_punctuation)
    spread = model["entropy_uniform"] - h["entropy"] <= 0.3
    role = h["role"]
    shares = [p["share"] for p in role["named"]] + [p["part"] for p in role["named"] if p["part"] is not None]
    assert all(share in stats for share in shares), role
    assert (role["kind"] == "mostly") == (not spread and round(100 * top) > 50), role
    if role["kind"] == "mostly":
        assert role["named"][0]["share"] == top
    assert (role["kind"] == "spread") == spread
    assert role["entropy"] == h["entropy"] and role["entropy_uniform"] == model["entropy_uniform"]
    if strong_punctuation and not spread:
        assert h["punctuation"] in shares, role
