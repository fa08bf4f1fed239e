"""Issue 39: a lesson keystroke runs the mask-off control only when a reason needs a run of its own. With one layer
the last position's causal row masks no key, so the controls read the shown run; from two layers on the mask-off
run is made, as before. The figures the sentence quotes are checked against a mask-off run made apart. And the
ablation step, whose verdict reads no line, is still the question's setup when only line A changed."""

import pytest

from app.schemas.compare import CompareRequest
from app.services.compare import WITH, WITHOUT, compare_many


def lesson_compare(a: str, b: str, n_layer: int, position: str = "none", causal: bool = True, step="order"):
    return CompareRequest(line_a=a, line_b=b, position=position, weights="random", n_layer=n_layer, n_head=4,
                          causal=causal, lesson_step=step)


LINES = [("白日依山尽", "山依日白尽"), ("白日依山尽", "黄河入海流"), ("床前明月光", "床前明月")]


@pytest.mark.parametrize("a, b", LINES)
@pytest.mark.parametrize("position", ["none", "learned", "rope"])
def test_one_layer_runs_no_mask_off_pass_and_its_controls_equal_one(client, registry, a, b, position):
    (shown,) = compare_many([lesson_compare(a, b, 1, position)], registry)
    assert shown.facts.unmasked is None  # no second pass: it was made on every lesson keystroke
    req = lesson_compare(a, b, 1, position, causal=False).model_copy(update={"lesson_step": None})
    (apart,) = compare_many([req], registry)
    for flag in (WITH, WITHOUT):  # the mask-off run's last-position gaps are the shown run's, to float32's error
        off, on = apart.facts.gaps[0, flag], shown.facts.gaps[0, flag]
        assert off.gap == pytest.approx(on.gap, rel=1e-3, abs=1e-6 * off.scale), (flag, off, on)


def test_the_sentence_quotes_the_content_control_of_a_mask_off_run(client, registry):
    body = {"line_a": "白日依山尽", "line_b": "黄河入海流", "position": "none", "weights": "random", "n_layer": 1,
            "n_head": 4, "lesson_step": "order"}
    verdict = client.post("/api/compare", json=body).json()["step_verdict"]
    (off,) = compare_many([lesson_compare("白日依山尽", "黄河入海流", 1, causal=False).model_copy(
        update={"lesson_step": None})], registry)
    assert verdict["reason"] == "last_differs"
    assert verdict["figures"]["gap_content"] == pytest.approx(off.facts.gaps[0, WITHOUT].gap, rel=1e-3)


def test_two_layers_still_run_the_mask_off_pass(client, registry):
    (shown,) = compare_many([lesson_compare("白日依山尽", "山依日白尽", 2, step="leak")], registry)
    assert shown.facts.unmasked is not None
    (same,) = compare_many([lesson_compare("白日依山尽", "白日依山尽", 2, step="leak")], registry)
    assert same.facts.unmasked is None  # identical lines: no reason to decide


def test_the_ablation_step_with_another_line_a_is_still_the_questions_setup(client):
    """Its verdict reads the whole validation split: a new line A changes only the one-line chart, so the page must
    not say the setup changed (it did, and asked the step's own verdict again)."""
    own = client.post("/api/lesson/ablate/verdict", json={}).json()
    typed = client.post("/api/lesson/ablate/verdict", json={"line_a": "床前明月光，疑是地上霜。"}).json()
    assert typed["setup_is_lessons"] is True and typed["outcome"] == own["outcome"]
    assert typed["figures"] == own["figures"]
    other = client.post("/api/lesson/ablate/verdict", json={"position": "rope"}).json()
    assert other["setup_is_lessons"] is False
