"""What the lesson's browser tests of sentences share (tests/e2e/test_step_sentences.py, test_one_idea_one_figure.py):
a step opened and answered, a setup change waited for, and the texts a sentence is built from. It lives beside
class_pages.py, on pytest's pythonpath."""

from class_pages import lesson_texts

from app.domain.lesson_steps import STEPS

__all__ = ["NUMBER", "change", "committed", "fill", "lesson_texts"]

NUMBER = {s["id"]: n for n, s in enumerate(STEPS, start=1)}  # step id -> its number in the lesson's URL


def fill(template: str, **values) -> str:
    """A text's {placeholders} filled, as the page's tr() fills them."""
    for key, value in values.items():
        template = template.replace("{" + key + "}", str(value))
    return template


def committed(open_page, tools, step: str, lang: str, width: int = 390, height: int = 844,
              choice: str | None = None):
    """Step `step` opened in lang (on a phone unless told) and answered with `choice` (its first choice unless
    named): (page, render count)."""
    page = open_page(f"/lesson?step={NUMBER[step]}&lang={lang}", locale=lang, width=width, height=height)
    count = tools.render_count(page)
    radio = "[data-question] input[type=radio]" if choice is None else f"[data-question] input[value='{choice}']"
    page.locator(radio).first.check()
    page.click("[data-commit]")
    return page, tools.wait_rendered(page, count)


def change(page, tools, count: int, action) -> int:
    """Open the folded setup (a phone folds it), make a change and wait for the answer to it."""
    toggle = page.locator("#setup-toggle")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false":
        toggle.click()
    action()
    return tools.wait_rendered(page, count)
