"""The server words no judgement for the page to finish: a same-or-different verdict's reason already says whether
order could have added to a gap that content makes (content_open, last_differs_open), and, for lines the model
reads as a reordering, whether the lines as typed are one or only look it through unknown characters (blind,
blind_unknown, blind_unknown_last); a verdict's `rule` says whether its outcome is the model's rule rather than
something it did.

Checked against tests/app/reference_gpt.py (numpy float64, no code shared with model/gpt.py): positions none,
pos_emb and RoPE, depths 1 to 3, the mask on and off, on the same line, the same characters, a reordering, other
characters, and characters outside the vocabulary at the end and elsewhere. Whether order can reach the last output
is not assumed: a reordering of line A that keeps its last character is run, and order reaches it where that gap
is real."""

import json
from collections import Counter
from pathlib import Path
from typing import get_args

import numpy as np
import pytest
from reference_gpt import LastLogits, ReferenceGPT

from app.domain.lesson_steps import STEPS
from app.schemas.verdicts import GapReason

PAIRS = {
    "identical": ("白日依山尽", "白日依山尽"),
    "unknown_only": ("ab尽", "ba尽"),  # a and b are outside the vocabulary: one id, the same line to the model
    "same_mix": ("白日尽", "白白日日尽尽"),
    "reordering": ("白日依山尽", "山依日白尽"),
    "other_chars": ("白日依山尽", "春眠不觉尽"),
    "other_end": ("白日依山尽", "黄河入海流"),
    "unknown_end": ("白日依山Q", "山依日白X"),  # Q and X: a reordering to the model, other last characters as typed
    "unknown_inside": ("白Q依山尽", "山依X白尽"),
    "unknown_reordered": ("白Q依山尽", "山依Q白尽"),  # a reordering as typed too
}
ROUNDING = 1e-9  # of the largest |logit|: under it a float64 gap is rounding (docs/api.md)


def real_gap(last: LastLogits, ids_a, ids_b, causal, use_position) -> bool:
    a, b = (last(ids, causal, use_position) for ids in (ids_a, ids_b))
    return float(np.abs(a - b).max()) >= ROUNDING * float(max(np.abs(a).max(), np.abs(b).max()))


def expected_reason(last, lines, ids, order_reaches, position, causal, n_layer) -> str:
    """The lesson's rule, written again, on the reference's gaps (real: whether the gap of the lines run with that
    mask and with or without positions is real)."""
    (a, b), (ids_a, ids_b) = lines, ids

    def real(mask, use_position):
        return real_gap(last, ids_a, ids_b, mask, use_position)

    if ids_a == ids_b:
        return "identical" if a == b else "identical_unknown"
    content = real(False, False)
    if not real(causal, True):
        if ids_a[-1] != ids_b[-1] or content:
            return "tiny"
        if Counter(ids_a) != Counter(ids_b):
            return "same_mix"
        if position == "none" and not causal:
            return "nomask"
        if position == "none" and n_layer == 1:  # the model reads a reordering ending on the same character
            if a[-1] != b[-1]:
                return "blind_unknown_last"
            return "blind" if Counter(a) == Counter(b) else "blind_unknown"
        return "tiny"
    if content:
        reason = "last_differs" if ids_a[-1] != ids_b[-1] else "content"
        return f"{reason}_open" if order_reaches else reason
    mask = causal and real(True, False)
    positions = position != "none" and real(False, True)
    return {(True, True): "position_mask", (True, False): "mask", (False, True): "position",
            (False, False): "other"}[mask, positions]


@pytest.mark.parametrize("causal", [True, False], ids=["mask", "nomask"])
@pytest.mark.parametrize("n_layer", [1, 2, 3])
@pytest.mark.parametrize("position", ["none", "learned", "rope"])
def test_the_reason_is_the_whole_judgement(client, registry, position, n_layer, causal):
    last = LastLogits(ReferenceGPT(registry.random(position, n_layer, 4, 0)))
    tok = registry.tokenizer
    a, r = (tok.encode(line) for line in PAIRS["reordering"])
    order_reaches = real_gap(last, a, r, causal, True)
    # The rule the lesson states, which the page used to apply: positions, or the mask's leak from 2 layers.
    assert order_reaches == (position != "none" or (causal and n_layer > 1)), (position, n_layer, causal)
    setup = {"position": position, "weights": "random", "n_layer": n_layer, "n_head": 4, "causal": causal}
    for name, lines in PAIRS.items():
        ids = tuple(tok.encode(line) for line in lines)
        got = client.post("/api/lesson/order/verdict", json={"line_a": lines[0], "line_b": lines[1], **setup})
        assert got.status_code == 200, got.text
        verdict = got.json()
        want = expected_reason(last, lines, ids, order_reaches, position, causal, n_layer)
        assert verdict["reason"] == want, (position, n_layer, causal, name, verdict["reason"], verdict["figures"])
        assert verdict["rule"] is False, (position, n_layer, causal, name)


@pytest.mark.parametrize(("lines", "reason"), [
    (PAIRS["reordering"], "blind"),
    (PAIRS["unknown_reordered"], "blind"),
    (PAIRS["unknown_end"], "blind_unknown_last"),
    (PAIRS["unknown_inside"], "blind_unknown"),
    # A reordering as typed, but the typed last characters differ: the unknown id at the end is why.
    (("Q白日依山X", "X山依日白Q"), "blind_unknown_last"),
])
def test_unknown_characters_name_the_blind_case(client, lines, reason):
    """Step 1's own setup (1 layer, no positions, the mask on) reads each pair as one reordering."""
    got = client.post("/api/lesson/order/verdict", json={"line_a": lines[0], "line_b": lines[1]}).json()
    assert got["difference"] == "rounding" and got["reason"] == reason, got


def test_only_a_line_within_the_table_is_judged_by_the_models_rule(client):
    """Step 6 on a line within pos_emb's 128 rows: the outcome is what the 129th character meets, a rule of the
    model; past the rows, or without a table, it is what the model did to the line itself."""
    for n, position, rule in ((1, "learned", True), (128, "learned", True), (129, "learned", False),
                              (50, "rope", False), (50, "none", False)):
        got = client.post("/api/lesson/limit/verdict", json={"line_a": "白" * n, "position": position}).json()
        assert got["rule"] is rule, (n, position, got)
    for step in STEPS:
        if step["kind"] in ("selftest", "summary"):
            continue
        got = client.post(f"/api/lesson/{step['id']}/verdict", json={}).json()
        # The limit step's own line is 128 characters: within the table.
        assert got["rule"] is (step["id"] == "limit"), (step["id"], got["reason"])


@pytest.mark.parametrize("lang", ["en", "fr", "ja", "zh"])
def test_every_gap_reason_has_its_sentence(lang):
    """The page words a same-or-different reason as given (reason_{id}): each id the schema allows has one."""
    texts = json.loads((Path(__file__).parents[2] / "static/i18n/lesson" / f"{lang}.json").read_text(encoding="utf-8"))
    assert [r for r in get_args(GapReason) if f"reason_{r}" not in texts] == []
