"""Sentences on one screen agree with each other and with their bars, and name the line they speak of (issue 39,
item 4): step 6 with line A of 5 characters and line B of 129 names line B; step 6's choice speaks of a line with a
129th character, as the verdict does; step 5 under none has no positions to remove and says so, with one bar."""

import json
from pathlib import Path

import pytest

from app.domain.lesson_steps import STEPS

pytestmark = pytest.mark.e2e

LESSON_I18N = Path(__file__).resolve().parents[2] / "static" / "i18n" / "lesson"
TEXTS = json.loads((LESSON_I18N / "en.json").read_text())


def committed(open_page, tools, step: int):
    page = open_page(f"/lesson?step={step}&lang=en", locale="en-US")
    count = tools.render_count(page)
    page.locator("[data-question] input[type=radio]").first.check()
    page.click("[data-commit]")
    tools.wait_rendered(page, count)
    return page


def test_step_6_names_the_line_that_is_too_long(open_page, tools):
    open_page.allow("status of 422")
    page = committed(open_page, tools, 6)
    page.fill("#line-a", "白日依山尽")
    page.fill("#line-b", "白" * 129)
    tools.wait_until(page, "() => document.querySelector('#verdict').innerText.includes('Line B has 129')",
                     message=page.inner_text("#verdict"))
    verdict = page.inner_text("#verdict")
    assert "refuses line B" in verdict and "Line A has" not in verdict


def test_step_6s_accepted_line_and_its_choice_agree(open_page, tools):
    page = committed(open_page, tools, 6)
    verdict = page.inner_text("#verdict")
    assert TEXTS["limit_choice_error"] in verdict  # the choice the model's outcome is named by
    assert "129th character" in TEXTS["limit_choice_error"]


def test_step_5_under_none_has_no_positions_to_remove(open_page, tools):
    page = committed(open_page, tools, 5)
    page.check("input[name=position][value=none]")
    want = TEXTS["notice_posemb_none"].split("{")[0]
    tools.wait_until(page, "(want) => document.querySelector('#notice').innerText.startsWith(want)", want,
                     message=page.inner_text("#notice"))
    assert "(none)" not in page.inner_text("#notice")
    # The bars' description lists one bar, the model on screen: no "positions removed" bar beside it.
    alt = page.evaluate("() => { const f = document.querySelector('#charts .lesson-chart');"
                        " return document.getElementById(f.getAttribute('aria-describedby')).textContent; }")
    assert TEXTS["bar_without_positions"] not in alt and TEXTS["bar_this"] in alt, alt
    # The notice (waited for above) and the caption speak of the one bar drawn, not of a grey bar beside it.
    caption = page.inner_text("#charts .lesson-chart .lesson-chart__caption")
    assert caption == TEXTS["chart_bars_one"], caption


def test_step_8_counts_the_positions_of_the_line_it_names(open_page, tools):
    page = committed(open_page, tools, 8)
    # The step's own lines are of one length: the verdict names both, and neither as the longer.
    a, b = page.input_value("#line-a"), page.input_value("#line-b")
    assert len(a) == len(b), (a, b)
    verdict = page.inner_text("#verdict")
    assert f"{len(a)} positions of lines A and B" in verdict and "the longer line" not in verdict, verdict
    page.fill("#line-a", "白日")
    page.fill("#line-b", "白日依山尽黄河入海流")
    tools.wait_until(page, "() => document.querySelector('#verdict').innerText.includes('10 positions of line B')",
                     message=page.inner_text("#verdict"))


def test_step_9s_note_follows_the_weights(open_page, tools):
    page = committed(open_page, tools, 9)
    assert page.inner_text("#setup-note") == TEXTS["relative_setup_note"]
    page.select_option("#weights", "random")
    tools.wait_until(page, "(want) => document.querySelector('#setup-note').innerText === want",
                     TEXTS["relative_setup_note_random"], message=page.inner_text("#setup-note"))


# Every step that asks without a setup to change (7, 10, 11, 17, 18 today), and one with a setup.
WITHOUT_SETUP = [n for n, s in enumerate(STEPS, start=1) if s["setup"] is None and s["choices"]]


@pytest.mark.parametrize(("step", "key"), [*((n, "committed_no_setup") for n in WITHOUT_SETUP), (1, "committed")])
def test_the_hint_speaks_of_a_setup_only_where_there_is_one(open_page, tools, step, key):
    page = committed(open_page, tools, step)
    assert page.inner_text("#commit-hint") == TEXTS[key]


@pytest.mark.parametrize(("step", "shown", "not_shown"), [(2, "1.9 × 10⁻²", "0.0190"), (5, "2.8 × 10⁻³", "2.80")])
def test_the_lessons_figures_are_shown_as_printed(open_page, tools, step, shown, not_shown):
    page = committed(open_page, tools, step)
    text = page.inner_text("#lesson-figure-text").replace("\u202f", " ").replace("\u00a0", " ")
    assert shown in text and not_shown not in text, text


def test_step_1_is_graded_on_the_setup_its_question_describes(open_page, tools):
    """Step 1 asks about the one-layer model without positions: switched to pos_emb, the page shows pos_emb's live
    result, says the answer is graded on the question's setup, and grades it (and the summary records it) there."""
    page = open_page("/lesson?step=1&lang=en", locale="en-US")
    count = tools.render_count(page)
    page.check("[data-question] input[value=same]")
    page.click("[data-commit]")
    count = tools.wait_rendered(page, count)
    assert page.get_attribute("#verdict", "data-prediction") == "right"
    page.check("input[name=position][value=learned]")
    tools.wait_until(page, "() => document.querySelector('#verdict').dataset.outcome === 'different'",
                     message=page.inner_text("#verdict"))
    assert TEXTS["graded_question_setup"] in page.inner_text("#verdict")
    assert page.get_attribute("#verdict", "data-prediction") == "right"
    page.goto(page.url.replace("step=1", f"step={len(STEPS)}"))  # the summary
    tools.wait_rendered(page, 0)
    first = page.locator(".summary-table tbody tr").first.inner_text()
    assert TEXTS["order_choice_same"] in first and TEXTS["order_choice_different"] not in first, first
