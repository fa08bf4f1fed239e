"""Phones open every new step at its title (issue 38): three phones (390x844; ja, fr, en) follow a class through
every step the API lists; after each reveal they are scrolled down, as a student reading the chart leaves them,
and when the teacher moves on, each shows the new step's title within its first screen."""

import json
import urllib.request

import pytest
from class_pages import class_app, join_phone, start_class, wait_panel

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PHONE = {"width": 390, "height": 844}
LOCALES = ("ja-JP", "fr-FR", "en-US")
TITLE = "() => { const r = document.querySelector('#step-title').getBoundingClientRect(); return [r.top, r.bottom]; }"


@pytest.fixture(scope="module")
def server_url():
    with class_app() as url:
        yield url


def test_phones_open_each_new_step_at_its_title(open_page, server_url, tools):
    with urllib.request.urlopen(f"{server_url}/api/lesson", timeout=10) as response:
        steps = json.loads(response.read())["steps"]
    teacher, _, join = start_class(open_page, tools, 1, width=1280, height=720, lang="ja")
    phones = {locale: join_phone(open_page, tools, join, **PHONE, locale=locale) for locale in LOCALES}
    for phone in phones.values():
        wait_panel(phone, tools, "step", "1")
    wait_panel(teacher, tools, "joined", str(len(phones)))
    off = {}
    for n, step in enumerate(steps, 1):
        if step["choices"]:
            for phone in phones.values():
                choice = step["choices"][0]
                phone.check(f"[data-question] input[value='{choice}']")
                phone.click("[data-commit]")
                wait_panel(phone, tools, "mine", choice)
            teacher.click("#class-reveal")
            for phone in phones.values():
                wait_panel(phone, tools, "revealed", "true")
                tools.wait_until(phone, "() => document.querySelector('#verdict').dataset.outcome !== undefined",
                                 timeout=60, message=f"step {n}'s answer never came to a phone")
        if n == len(steps):
            break
        for phone in phones.values():
            # Down to the bottom, as a student who read the answer leaves it (or the step's end, without one).
            phone.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight)")
            assert phone.evaluate(TITLE)[1] < 0, f"step {n}: the phone did not scroll past the title (the case)"
        teacher.click("#next-step")
        for locale, phone in phones.items():
            wait_panel(phone, tools, "step", str(n + 1))
            tools.wait_until(phone, "(n) => document.querySelector('#results').dataset.step === String(n)", n + 1)
            try:
                tools.wait_until(phone, f"() => {{ const [top, bottom] = ({TITLE})(); return top >= -1 "
                                        f"&& bottom <= {PHONE['height']}; }}", timeout=5)
            except AssertionError:
                off.setdefault(n + 1, []).append(f"{locale} title at {phone.evaluate(TITLE)}")
    assert not off, "\n".join(f"step {n}: {'; '.join(where)}" for n, where in off.items())
    tools.screenshot(phones["fr-FR"], "class-phone-last-step-fr", full_page=False)
