"""The door and the join link in real browsers (issue 38): a Japanese teacher at a 1280x720 projector keeps the door
on ask; phones (ja, fr, 390x844) open the join link, give a name first (or skip it for a friendly one in their
language), wait at the door, and are admitted or refused by name; after a hundred wrong codes from the school's
address a phone that opens the link joins at once, one that types the code is told it is the network's wrong codes,
and the teacher sees how many there were; a refused name cannot come back, and the projector counts its tries."""

import json
import re
import urllib.error
import urllib.request

import pytest
from class_pages import class_app, start_class, wait_panel
from class_pages import lesson_texts as texts

from app.domain.class_names import ANIMALS

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
FIRST_SCREEN = "(s) => { const r = document.querySelector(s).getBoundingClientRect(); return r.bottom; }"


@pytest.fixture(scope="module")
def server_url():
    with class_app() as url:
        yield url


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def fill(text: str, **values) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), text)


def teacher_view(server_url, teacher, code) -> dict:
    token = json.loads(teacher.evaluate("() => localStorage.getItem('heads-positions.class.teacher')"))["token"]
    request = urllib.request.Request(f"{server_url}/api/classes/{code}", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def open_link(open_page, tools, link_path, lang):
    phone = open_page(link_path, **PHONE, locale={"ja": "ja-JP", "fr": "fr-FR", "en": "en-US", "zh": "zh-CN"}[lang],
                      explorer=False)
    tools.wait_until(phone, "() => document.querySelector('[data-class-first]').checkVisibility()",
                     message="the join link did not ask the name first")
    t = texts(lang)
    code = re.search(r"class=([A-Z2-9]{6})", link_path).group(1)
    assert words(phone.text_content("#class-over-text")) == words(fill(t["class_name_first"], code=code))
    for selector in ("#class-first-name", "#class-first-join", "#class-first-skip"):
        assert phone.evaluate(FIRST_SCREEN, selector) <= PHONE["height"], f"{selector} is below the first screen"
    assert phone.evaluate("() => window.scrollY") == 0
    assert not phone.evaluate("() => document.querySelector('#step-question')?.checkVisibility() ?? false")
    return phone


def test_the_door_asks_and_the_teacher_admits_or_refuses_by_name(open_page, server_url, tools):
    teacher, code, _ = start_class(open_page, tools, 4, width=1280, height=720, lang="ja")
    link = teacher.get_attribute("#class-link", "href")
    assert re.search(rf"\?class={code}&key=[0-9a-f]{{24}}$", link)
    teacher.select_option("#class-door", "ask")
    wait_panel(teacher, tools, "door", "ask")
    path = link[link.index("/lesson"):]

    # Japanese: skips the name, gets a friendly one in Japanese, and waits at the door, told so in Japanese.
    ja = open_link(open_page, tools, path, "ja")
    ja.click("#class-first-skip")
    wait_panel(ja, tools, "waiting", "true")
    assert words(ja.text_content("#class-mine")) == words(fill(texts("ja")["class_waiting_me"], code=code))
    # French: gives a name; the box says its limit as she types, and a longer name is said, not cut.
    fr = open_link(open_page, tools, path, "fr")
    fr.fill("#class-first-name", "L" * 30)
    assert fr.get_attribute("#class-first-count", "data-over") == "true"
    assert words(fr.text_content("#class-first-count")) == words(texts("fr")["class_name_too_long"])
    fr.click("#class-first-join")
    assert fr.evaluate("() => document.querySelector('[data-class-first]').checkVisibility()"), \
        "a name over the limit joined anyway"
    fr.fill("#class-first-name", "Léa")
    assert words(fr.text_content("#class-first-count")) == words(fill(texts("fr")["class_name_count"], n=3, max=24))
    fr.click("#class-first-join")
    wait_panel(fr, tools, "waiting", "true")
    assert words(fr.text_content("#class-mine")) == words(fill(texts("fr")["class_waiting_me"], code=code))

    # The projector: the door's state and "2 waiting", each with admit and refuse.
    wait_panel(teacher, tools, "waiting", "2")
    assert teacher.evaluate("() => document.querySelector('#class-door').value") == "ask"
    assert "2" in teacher.text_content("#class-waiting-count")
    view = teacher_view(server_url, teacher, code)
    ja_seat, fr_seat = view["waiting"]
    assert ja_seat["name"].rsplit(" ", 1)[0] in ANIMALS["ja"] and fr_seat["name"] == "Léa"
    assert view["joined"] == 0
    teacher.click(f"[data-class-waiting-names] li[data-student='{ja_seat['student']}'] button[data-action='admit']")
    wait_panel(ja, tools, "waiting", "false")
    wait_panel(teacher, tools, "joined", "1")
    ja.check("[data-question] input[value='same']")
    ja.click("[data-commit]")
    wait_panel(ja, tools, "mine", "same")
    wait_panel(teacher, tools, "answered", "1")
    # Refusing the one left needs no confirmation; her phone is told, in French, and stays refused on reload.
    open_page.allow("status of 403")
    teacher.click("#class-refuse-all")
    wait_panel(teacher, tools, "waiting", "0")
    tools.wait_until(fr, "() => !document.querySelector('#class-over').hidden")
    assert words(fr.text_content("#class-over-text")) == words(fill(texts("fr")["class_over_removed"], code=code))
    fr.goto(link)
    tools.wait_until(fr, "() => !document.querySelector('#class-over').hidden")
    assert words(fr.text_content("#class-over-text")) == words(fill(texts("fr")["class_over_removed"], code=code))
    assert teacher_view(server_url, teacher, code)["joined"] == 1
    # Her name cannot come back from another browser, in capitals either: the phone says so in French, back at the
    # name box for another name; the projector's door box counts the join turned away, nobody waiting.
    again = open_link(open_page, tools, path, "fr")
    again.fill("#class-first-name", "LÉA")
    again.click("#class-first-join")
    tools.wait_until(again, "() => document.querySelector('#class-over').dataset.refused === '403'")
    said = fill(texts("fr")["class_name_refused"], name="LÉA")
    assert words(again.text_content("#class-over-text")).startswith(words(said))
    assert again.is_visible("#class-first-name") and not again.is_visible("#class-retry")
    tools.wait_until(teacher, "() => document.querySelector('[data-class-refused]').dataset.classRefused === '1'",
                     message="the projector did not count the refused join")
    assert words(teacher.text_content("#class-refused")) == words(fill(texts("ja")["class_refused_joins"], n=1))
    assert teacher.is_visible("#class-refused") and not teacher.is_visible("#class-admit-all")


@pytest.mark.parametrize("lang", ["ja", "fr", "en", "zh"])
def test_a_link_without_the_key_asks_the_name_first_too(open_page, server_url, tools, lang):
    """A link with the code alone (typed into the address, or shared without its key) asks the name first, in the
    phone's language, as the server's join link does; skipping gives a friendly name in that language."""
    teacher, code, join = start_class(open_page, tools, 4)
    assert "key=" not in join
    phone = open_link(open_page, tools, join, lang)
    phone.click("#class-first-skip")
    wait_panel(phone, tools, "step", "4")
    wait_panel(teacher, tools, "joined", "1")
    (seat,) = teacher_view(server_url, teacher, code)["students"]
    assert seat["name"].rsplit(" ", 1)[0] in ANIMALS[lang]


def test_after_a_hundred_wrong_codes_the_join_link_still_joins_at_once(open_page, server_url, tools):
    """Last in the module: its wrong codes hold this server's address for a minute."""
    teacher, code, _ = start_class(open_page, tools, 2, width=1280, height=720, lang="ja")
    link = teacher.get_attribute("#class-link", "href")
    unknown = "ZZ22ZZ"
    held = 0
    for _ in range(100):
        try:
            urllib.request.urlopen(f"{server_url}/api/classes/{unknown}", timeout=10)
        except urllib.error.HTTPError as refused:
            held += refused.code == 429
    assert held == 40
    open_page.allow("status of 429")
    # Typing the code: held, and told it is the network's wrong codes, not its own.
    typed = open_page("/lesson?step=2&lang=fr", **PHONE, locale="fr-FR", explorer=False)
    tools.wait_until(typed, "() => Number(document.querySelector('#results').dataset.renderCount) > 0")
    typed.fill("#class-code-input", code)
    typed.click("#class-join")
    tools.wait_until(typed, "() => document.querySelector('#class-over').dataset.refused === '429'")
    fr = texts("fr")
    assert words(typed.text_content("#class-over-text")) == words(
        fill(fr["class_join_refused"], code=code) + fr["sentence_sep"] + fr["class_too_many"])
    # The join link: the name, then in at once.
    phone = open_link(open_page, tools, link[link.index("/lesson"):], "ja")
    phone.fill("#class-first-name", "ゆき")
    phone.click("#class-first-join")
    wait_panel(phone, tools, "step", "2")
    wait_panel(teacher, tools, "joined", "1")
    # The projector says how many wrong codes came from the class's network in the last minute.
    tools.wait_until(teacher, "() => document.querySelector('[data-class-wrong-codes]').dataset.classWrongCodes "
                              "=== '60'", message="the teacher was not told of the wrong codes")
    assert "60" in teacher.text_content("#class-wrong-codes")
