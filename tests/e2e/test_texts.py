"""Numbers as a high-school student reads them, in the page's language: powers of ten written 3.6 × 10⁻⁷
(never 3.6e-7), the decimal comma and digit grouping of French, and pages that say what they did with a
step or language they could not open."""

import json
import re
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

I18N = Path(__file__).resolve().parents[2] / "static" / "i18n"
# JavaScript's exponent form as toExponential() or String() print it: 3.58e-7, 1e-6, 8.3e+4.
EXPONENT_FORM = re.compile(r"\d(?:[.,]\d+)?e[-+−]?\d")
NNBSP = "\u202f"

# The page's own formatting module: the same instance the page uses, so it holds the page's texts.
FORMAT = """async (calls) => {
    const i18n = await import('/static/js/shared/i18n.js');
    return calls.map(([name, ...args]) => i18n[name](...args));
}"""


def lesson_texts(lang: str) -> dict:
    return json.loads((I18N / "lesson" / f"{lang}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("lang", "expected"), [
    ("fr", ["3,58 × 10⁻⁷", "8,3 × 10⁴", "10⁻⁶", "0,0123", "35 333", "1 234,5"]),
    ("en", ["3.58 × 10⁻⁷", "8.3 × 10⁴", "10⁻⁶", "0.0123", "35,333", "1,234.5"]),
    ("zh", ["3.58 × 10⁻⁷", "8.3 × 10⁴", "10⁻⁶", "0.0123", "35,333", "1,234.5"]),
])
def test_numbers_follow_the_pages_language(open_page, lang, expected):
    page = open_page(f"/?weights=random&pos=none&n_layer=1&lang={lang}")
    got = page.evaluate(FORMAT, [["scientific", 3.58e-7, 3], ["num", "8.3e+4"], ["num", "1e-6"],
                                 ["scientific", 0.01234, 3], ["num", 35333], ["grouped", 1234.5]])
    # The spaces inside a number are narrow no-break spaces, so it never breaks across two lines.
    assert got == [text.replace(" ", NNBSP) for text in expected]


def test_the_explorer_shows_no_exponent_form_in_french(open_page, tools):
    """Under none with one layer, the gaps are rounding (about 10⁻⁷): the depth chart's labels, its table and
    its verdict write them as powers of ten with a decimal comma."""
    page = open_page("/?weights=random&pos=none&n_layer=1&lang=fr", locale="fr-FR")
    labels = page.evaluate("() => document.querySelector('#depth-plot').data.flatMap((trace) => trace.text)")
    small = [label for label in labels if "10" in label]
    assert small and all(re.fullmatch(r"\d,\d\d\u202f×\u202f10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+", label) for label in small), labels
    verdict = page.text_content("#depth-verdict")
    assert re.search(r"\d,\d\u202f×\u202f10⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]+,", verdict), verdict
    body = page.inner_text("body")
    assert not EXPONENT_FORM.search(body), EXPONENT_FORM.search(body)


def test_the_lessons_gap_step_writes_powers_of_ten(open_page, tools):
    """Step 1's reveal (verdict, bar labels, notice) in French: 3,58 × 10⁻⁷, never 3,58e-7."""
    page = open_page("/lesson?step=1&lang=fr", locale="fr-FR", explorer=False)
    count = tools.render_count(page)
    page.locator("[data-question] input[type=radio]").first.check()
    page.click("[data-commit]")
    tools.wait_rendered(page, count)
    tools.wait_until(page, "() => document.querySelector('.js-plotly-plot .bartext') !== null")
    shown = page.inner_text("[data-reveal]")
    bars = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot .bartext')].map((t) => t.textContent)")
    assert "10⁻" in shown + "".join(bars), shown
    for text in [shown, *bars]:
        assert not EXPONENT_FORM.search(text), text


@pytest.mark.parametrize("lang", ["zh", "ja", "fr", "en"])
def test_a_missing_step_is_named_in_the_pages_language(open_page, server_url, lang):
    with urllib.request.urlopen(f"{server_url}/api/lesson", timeout=20) as response:
        total = len(json.loads(response.read())["steps"])
    page = open_page(f"/lesson?step=99&lang={lang}", explorer=False)
    notice = page.text_content("[data-notice]")
    assert notice == lesson_texts(lang)["notice_no_step"].format(asked="99", total=total)
    assert page.get_attribute("[data-step]", "data-step") == "1"
    assert "step=1" in page.url, "the address now names the step on screen"


def test_an_unknown_language_is_named_in_the_language_shown(open_page, tools):
    """lang=xx on a French browser: the page opens in French and says, in French, that xx is not offered."""
    page = open_page("/?lang=xx", locale="fr-FR")
    assert page.get_attribute("html", "lang") == "fr"
    assert page.text_content("[data-notice]") == tools.texts("fr")["notice_no_lang"].format(asked="xx")
    lesson = open_page("/lesson?lang=xx&step=3", locale="en-US", explorer=False)
    assert lesson.text_content("[data-notice]") == tools.texts("en")["notice_no_lang"].format(asked="xx")
    assert lesson.get_attribute("[data-step]", "data-step") == "3"
