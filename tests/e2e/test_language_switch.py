"""Every sentence of a revealed step is worded at render time: after a language switch, every step (the self-test and
the summary included) reads exactly as the same step revealed in the new language from the start, and no sentence of
the old language is left (issue 39: steps 17 and 18 kept their Chinese verdict after a switch to French)."""

import json
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def steps(server_url):
    with urllib.request.urlopen(f"{server_url}/api/lesson", timeout=20) as response:
        return json.loads(response.read())["steps"]


def commit_first_choices(page) -> None:
    names = page.evaluate("() => [...new Set([...document.querySelectorAll('[data-question] input[type=radio]')]"
                          ".map((r) => r.name))]")
    for name in names:
        page.locator(f"[data-question] input[name='{name}']").first.check()
    page.click("[data-commit]")


def wait_step(page, tools, after: int) -> int:
    return tools.wait_rendered(page, after)

# The revealed step's words: the verdict's sentences, the notice, the lesson's figure, the charts' captions and
# descriptions, the unknown characters' note, and the self-test's and summary's tables.
REVEAL_TEXTS = """() => {
    const text = (node) => (node && !node.closest('[hidden]') ? node.innerText.trim() : '');
    const charts = [...document.querySelectorAll('.lesson-chart')].flatMap((figure) => [
        text(figure.querySelector('.lesson-chart__caption')),
        document.getElementById(figure.getAttribute('aria-describedby'))?.textContent.trim() ?? '',
        text(figure.querySelector('table, ol')),
    ]);
    return [text(document.querySelector('#verdict')), text(document.querySelector('#notice')),
            text(document.querySelector('#lesson-figure-text')), text(document.querySelector('[data-unknown]')),
            ...charts];
}"""


def revealed_texts(open_page, tools, lang: str, n_steps: int) -> dict[int, list[str]]:
    """Each step committed with its first choices and revealed in `lang` from the start, in order."""
    page = open_page(f"/lesson?step=1&lang={lang}", locale="en-US")
    count = tools.render_count(page)
    out = {}
    for n in range(1, n_steps + 1):
        if n > 1:
            page.locator("body").focus()
            page.keyboard.press("ArrowRight")
            count = wait_step(page, tools, count)
        if page.is_visible("[data-commit]"):
            commit_first_choices(page)
            count = wait_step(page, tools, count)
        out[n] = page.evaluate(REVEAL_TEXTS)
    return out


@pytest.mark.parametrize(("first", "then"), [("zh", "fr")])
def test_a_language_switch_after_the_reveal_rewords_every_step(open_page, tools, steps, first, then):
    want = revealed_texts(open_page, tools, then, len(steps))
    page = open_page(f"/lesson?step=1&lang={first}", locale="en-US")
    count = tools.render_count(page)
    for n in range(1, len(steps) + 1):
        if n > 1:
            page.select_option("#lang", first)
            tools.wait_until(page, "(lang) => document.documentElement.lang === lang", first)
            page.locator("body").focus()
            page.keyboard.press("ArrowRight")
            count = wait_step(page, tools, count)
        if page.is_visible("[data-commit]"):
            commit_first_choices(page)
            count = wait_step(page, tools, count)
        before = page.evaluate(REVEAL_TEXTS)
        page.select_option("#lang", then)
        tools.wait_until(page, f"(want) => JSON.stringify(({REVEAL_TEXTS})()) === JSON.stringify(want)", want[n],
                         message=f"step {n} after the switch: {page.evaluate(REVEAL_TEXTS)!r}, want {want[n]!r}")
        # No sentence of the old language is left: each old text that differs from the new language's is gone.
        after = page.evaluate(REVEAL_TEXTS)
        left = [t for t in before if t and t not in want[n] and any(t in a for a in after)]
        assert not left, (n, left)


FR = json.loads((Path(__file__).resolve().parents[2] / "static" / "i18n" / "fr.json").read_text())
FR_LESSON = json.loads((Path(__file__).resolve().parents[2] / "static" / "i18n" / "lesson" / "fr.json").read_text())


def test_the_setup_note_and_the_navigations_name_follow_a_switch(open_page, tools):
    """Step 13 runs the trained model: after a reveal in Japanese and a switch to French, the note under the weights
    and the navigation's accessible name and the QR code's description are French (issue 39: they stayed Japanese)."""
    page = open_page("/lesson?step=13&lang=ja", locale="en-US", width=390, height=844)
    count = tools.render_count(page)
    commit_first_choices(page)
    tools.wait_rendered(page, count)
    page.select_option("#lang", "fr")
    shape = FR["trained_shape"].split("{")[0]
    tools.wait_until(page, "(want) => document.querySelector('#setup-note').innerText.startsWith(want)", shape,
                     message=page.inner_text("#setup-note"))
    # Step 18 not answered yet: the note holds the loss back, in French too.
    assert FR["trained_val_loss_later"].split("{")[0] in page.inner_text("#setup-note")
    assert page.get_attribute(".lesson-nav", "aria-label") == FR_LESSON["nav_label"]
    assert page.get_attribute("#qr", "alt") == FR_LESSON["qr_alt"]  # it stayed Japanese (a student's review)
