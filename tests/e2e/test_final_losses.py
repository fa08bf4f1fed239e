"""Exercises 2 and 3 (issue 39 item 11): the verdict orders each run's final loss on the whole validation split,
while the curves are measured on a fixed sample every few steps. The chart draws both (lines, and a diamond per
run at its last step), its y axis covers every value it draws, and the caption says which is which."""

import json
import urllib.request
from pathlib import Path

import pytest

from app.domain.lesson_steps import STEPS

pytestmark = pytest.mark.e2e

NUMBER = {s["id"]: n for n, s in enumerate(STEPS, start=1)}
EXERCISE = {"ex2": "heads", "ex3": "modes"}
LESSON_I18N = Path(__file__).resolve().parents[2] / "static" / "i18n" / "lesson"


def training(server_url: str) -> dict:
    with urllib.request.urlopen(f"{server_url}/api/training", timeout=30) as response:
        return json.load(response)


SIZES = [{"width": 1280, "height": 720}, {"width": 390, "height": 844}]


@pytest.mark.parametrize("size", SIZES, ids=["laptop", "phone"])
@pytest.mark.parametrize("lang", ["zh", "fr"])
@pytest.mark.parametrize("step", ["ex2", "ex3"])
def test_the_final_losses_are_drawn_beside_the_sampled_curves(open_page, server_url, tools, step, lang, size):
    answer = training(server_url)
    runs = [answer["runs"][i] for i in answer["exercises"][EXERCISE[step]]]
    page = open_page(f"/lesson?step={NUMBER[step]}&lang={lang}", explorer=False, locale="en-US", **size)
    tools.wait_rendered(page, 0)
    choice = page.get_attribute("[data-question] input", "value")
    tools.commit_step(page, f"{server_url}/lesson?step={NUMBER[step]}&lang={lang}", choice)
    plot = f".lesson-chart[data-name='training-{EXERCISE[step]}'] .lesson-plot"
    tools.wait_until(page, "(s) => document.querySelector(s)?._fullLayout !== undefined", plot)
    drawn = page.evaluate("""(s) => {
        const node = document.querySelector(s);
        return { traces: node.data.map((t) => ({ meta: t.meta, name: t.name, x: t.x, y: t.y })),
                 range: node._fullLayout.yaxis.range };
    }""", plot)
    finals = next(t for t in drawn["traces"] if t["meta"] == "final")
    assert finals["y"] == [r["final_val_loss"] for r in runs], "a diamond per run, at its whole-split final loss"
    assert finals["x"] == [r["steps"][-1] for r in runs], "each at its run's last step"
    assert finals["name"] == tools.texts(lang)["train_final_legend"], "the diamonds are named in the legend"
    # Every value drawn from the second measurement on lies inside the y axis (the first is cut off, said so).
    lo, hi = drawn["range"]
    shown = [y for t in drawn["traces"] for x, y in zip(t["x"], t["y"]) if x >= runs[0]["steps"][1]]
    outside = [y for y in shown if not lo <= y <= hi]
    assert not outside, f"drawn outside the y axis {drawn['range']}: {outside}"
    # The verdict's figures are the diamonds' (three decimals), and the caption names the sample's spacing.
    sentence = page.inner_text("#verdict [data-sentence='verdict']")
    sep = "," if lang == "fr" else "."
    for run in runs:
        assert f"{run['final_val_loss']:.3f}".replace(".", sep) in sentence, sentence
    caption = page.inner_text(f".lesson-chart[data-name='training-{EXERCISE[step]}'] .lesson-chart__caption")
    every = runs[0]["steps"][1] - runs[0]["steps"][0]
    template = json.loads((LESSON_I18N / f"{lang}.json").read_text(encoding="utf-8"))["chart_training"]
    assert caption == template.replace("{every}", str(every)), caption
    assert page.evaluate("() => document.documentElement.scrollWidth") <= size["width"]
    tools.screenshot(page, f"final-losses-{step}-{lang}-{size['width']}")
