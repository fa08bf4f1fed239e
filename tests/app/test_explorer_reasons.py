"""The explorer's decisions come from the server: /api/compare's `alignment` (by token id, the rule the verdicts
use) and /api/compare/verdict's reasons, checked against rules written here from scratch and the float64 gaps."""

import pytest

UNKNOWN_REORDERING = ("白日依山Q", "Z白日依山")  # Q and Z are both the unknown id: a reordering to the model
BODY = {"position": "none", "weights": "random", "n_layer": 1}


def reordering_by_id(ids_a: list[int], ids_b: list[int]) -> list[int] | None:
    """perm[i] = the position in B of A's i-th id, repeats matched left to right; None when B is not a reordering."""
    if len(ids_a) != len(ids_b):
        return None
    used = [False] * len(ids_b)
    perm = []
    for token in ids_a:
        j = next((j for j, t in enumerate(ids_b) if t == token and not used[j]), None)
        if j is None:
            return None
        used[j] = True
        perm.append(j)
    return perm


@pytest.mark.parametrize("a,b", [("白日依山尽", "山依日白尽"), UNKNOWN_REORDERING, ("日日白尽", "白日日尽"),
                                 ("白日依山尽", "床前明月光"), ("白日", "白日依山尽"), ("我打你", "你打我")])
def test_alignment_is_by_token_id_in_the_answer_and_the_verdict(client, registry, a, b):
    body = {"line_a": a, "line_b": b, **BODY}
    answer = client.post("/api/compare", json=body).json()
    verdict = client.post("/api/compare/verdict", json=body).json()
    want = reordering_by_id(registry.tokenizer.encode(a), registry.tokenizer.encode(b))
    assert answer["alignment"] == want == verdict["alignment"]
    assert (verdict["aligned"] is not None) == (want is not None)


def test_unknown_characters_line_up_as_the_unknown_id(client):
    answer = client.post("/api/compare", json={"line_a": UNKNOWN_REORDERING[0], "line_b": UNKNOWN_REORDERING[1],
                                               **BODY}).json()
    # Q at A's end is the unknown id, as Z at B's start: they are matched, although the characters differ.
    assert answer["alignment"] == [1, 2, 3, 4, 0]


def test_aligned_reasons_follow_the_float64_gap_and_the_last_ids(client):
    same_end = client.post("/api/compare/verdict", json={"line_a": "白日依山尽", "line_b": "山依日白尽",
                                                         "position": "none", "weights": "random", "n_layer": 2}).json()
    layer1, layer2 = same_end["aligned"]["with_position"]
    # none, layer 1: the last character sees the same characters in both lines: rounding, a blank row.
    assert layer1["difference"] == "rounding" and layer1["reason"] == "blank" and layer1["earlier_rows"]
    # layer 2 reads layer 1's outputs, which differ with the prefixes: the mask leaks the order.
    assert layer2["difference"] == "real" and layer2["reason"] == "leak" and not layer2["earlier_rows"]
    learned = client.post("/api/compare/verdict", json={"line_a": "白日依山尽", "line_b": "山依日白尽",
                                                        "position": "learned", "weights": "random",
                                                        "n_layer": 1}).json()["aligned"]
    assert learned["with_position"][0]["reason"] == "positions"
    assert learned["without_position"][0]["reason"] == "blank"
    other_end = client.post("/api/compare/verdict", json={"line_a": "我打你", "line_b": "你打我", **BODY}).json()
    assert {row["reason"] for key in ("with_position", "without_position")
            for row in other_end["aligned"][key]} == {"other_end"}


@pytest.mark.parametrize("b,causal,reason,leak,causal_off", [
    ("山依日白尽", True, "same", "leak", None),  # 1 layer blind, 2 layers leak through the mask
    ("山依日白尽", False, "same", None, "rounding"),  # no mask: nothing leaks at any depth
    ("尽白日依山", True, "other_end", None, None),
    ("床前明月光", True, "other_chars", None, None),
    ("床前明月光", False, "other_chars", None, "real"),
    ("白日依山尽", True, "same", "no_leak", None),  # the same line: no gap at any depth
])
def test_depth_reasons(client, b, causal, reason, leak, causal_off):
    got = client.post("/api/compare/verdict", json={"line_a": "白日依山尽", "line_b": b, "position": "none",
                                                    "weights": "random", "causal": causal}).json()
    one = got["by_depth"][0]["without_position"]
    assert (one is None or one["difference"] == "rounding") == (reason == "same")
    assert got["depth"] == {"reason": reason, "leak": leak, "causal_off": causal_off}
