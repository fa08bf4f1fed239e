"""Issue 39, item 8: on a laptop's first screen (1280×720), before the student commits, the question, every choice and
the commit button are in view, on every step the API lists with a question, in all four languages (French is the
longest)."""

import json
import urllib.request

import pytest

pytestmark = pytest.mark.e2e

LAPTOP = {"width": 1280, "height": 720}

# The bottom of the commit button and of every choice, and the top of the question, once the fonts are in.
BOXES = """async () => {
    await document.fonts.ready;
    const box = (el) => el.getBoundingClientRect();
    return {
        question: box(document.querySelector('[data-question] legend')).top,
        choices: [...document.querySelectorAll('[data-question] .lesson-choice')].map((el) => box(el).bottom),
        commit: box(document.querySelector('[data-commit]')).bottom,
        scrolled: window.scrollY,
    };
}"""


@pytest.mark.parametrize("lang", ("fr", "zh", "ja", "en"))
def test_the_question_its_choices_and_the_button_are_on_a_laptops_first_screen(open_page, tools, server_url, lang):
    steps = json.load(urllib.request.urlopen(f"{server_url}/api/lesson"))["steps"]
    asked = [n for n, step in enumerate(steps, 1) if step.get("choices") or step.get("questions")]
    assert len(asked) >= 17
    page = open_page(f"/lesson?step={asked[0]}&lang={lang}", **LAPTOP)
    below = []
    for n in asked:
        page.goto(f"{server_url}/lesson?step={n}&lang={lang}")
        tools.wait_rendered(page, 0)
        boxes = page.evaluate(BOXES)
        assert boxes["scrolled"] == 0 and boxes["choices"], (n, boxes)
        lowest = max(boxes["commit"], *boxes["choices"])
        if boxes["question"] < 0 or lowest > LAPTOP["height"]:
            below.append((n, steps[n - 1]["id"], round(lowest)))
    assert not below, f"{lang}: below the first 720 px (step, id, bottom): {below}"
