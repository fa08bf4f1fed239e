"""A 1-character line A on the steps that read line A alone: step 12 has no two rows to compare and step 13 no next
character to predict; each says so instead of "heads 1 and 1" or "0.00 → 0.00 nats" (issue 39, item 12)."""

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

LESSON_I18N = Path(__file__).resolve().parents[2] / "static" / "i18n" / "lesson"


@pytest.mark.parametrize(("step", "selector", "key"), [
    (12, "#verdict", "reason_one_char"), (13, "#notice", "notice_ablate_one_char"),
])
def test_one_character_says_there_is_nothing_to_compare(open_page, tools, step, selector, key):
    want = json.loads((LESSON_I18N / "en.json").read_text())[key]
    page = open_page(f"/lesson?step={step}&lang=en", locale="en-US")
    count = tools.render_count(page)
    page.locator("[data-question] input[type=radio]").first.check()
    page.click("[data-commit]")
    tools.wait_rendered(page, count)
    page.fill("#line-a", "月")
    tools.wait_until(page, "([sel, want]) => document.querySelector(sel).innerText.includes(want)", [selector, want],
                     message=f"step {step}: {page.inner_text(selector)!r}")
    assert "0.00" not in page.inner_text("#notice")
    if step == 12:  # said once: the notice repeated the verdict's sentence under it (issue 39)
        assert page.inner_text("#results").count(want) == 1, page.inner_text("#results")
