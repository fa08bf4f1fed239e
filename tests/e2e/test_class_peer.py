"""Peer instruction in real browsers (issue 30): the teacher asks the class to vote again, the phones say so in
their language and vote a second time, the teacher's panel shows both rounds; ending asks first, then the
summary and its CSV; a class lost to a Redis restarted without persistence is called lost, not ended; the
projector after a reveal and after the next step. A phone's join screen: test_class_join.py."""

import codecs
import json
import tempfile
import urllib.request

import pytest
from class_pages import class_app, end_class, join_phone, start_class, visible, wait_panel
from class_pages import lesson_texts as texts
from class_servers import redis_server, served

pytestmark = pytest.mark.e2e

STEP = 4  # 我打你 / 你打我: same or different
FIRST = {"zh-CN": "same", "fr-FR": "same", "ja-JP": "different"}
SECOND = {"zh-CN": "different", "fr-FR": "different", "ja-JP": "different"}
BOX = "(s) => { const r = document.querySelector(s).getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; }"


@pytest.fixture(scope="module")
def server_url():
    with class_app() as url:
        yield url


def vote(page, tools, choice: str) -> None:
    page.check(f"[data-question] input[value='{choice}']")
    page.click("[data-commit]")
    wait_panel(page, tools, "mine", choice)


def wait_spread(teacher, tools, counts: dict, first: dict | None = None) -> None:
    for choice, n in counts.items():
        was = "" if first is None else str(first[choice])
        tools.wait_until(teacher, "([c, n, was]) => { const li = document.querySelector("
                                  "`#class-spread li[data-choice='${c}']`); return li?.dataset.count === n "
                                  "&& li.dataset.first === was; }", [choice, str(n), was],
                         message=f"the teacher's spread never showed {choice}: {was} -> {n}")


def results(server_url: str, code: str, token: str, path: str = "results") -> bytes:
    request = urllib.request.Request(f"{server_url}/api/classes/{code}/{path}?lang=en",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


def test_two_rounds_then_the_end_asks_and_leaves_a_summary(open_page, server_url, tools):
    teacher, code, join = start_class(open_page, tools, STEP)
    token = json.loads(teacher.evaluate("() => localStorage.getItem('heads-positions.class.teacher')"))["token"]
    phones = {locale: join_phone(open_page, tools, join, width=390, height=844, locale=locale) for locale in FIRST}
    for page in phones.values():
        wait_panel(page, tools, "step", str(STEP))
    for locale, page in phones.items():
        vote(page, tools, FIRST[locale])
    first = {c: list(FIRST.values()).count(c) for c in ("same", "different")}
    wait_panel(teacher, tools, "answered", str(len(FIRST)))
    assert teacher.query_selector("#class-spread li") is None, "the spread is held back during the first vote"
    teacher.click("#class-spread-show")
    wait_spread(teacher, tools, first)
    assert visible(teacher, "#class-again") and teacher.text_content("#class-again") == texts("en")["class_again"]

    teacher.click("#class-again")
    wait_panel(teacher, tools, "round", "2")
    for locale, page in phones.items():
        # The phone's first vote is closed: it says, in its language, to talk to a neighbour and vote again.
        tools.wait_until(page, "(t) => document.querySelector('#class-mine').textContent === t",
                         texts(locale[:2])["class_again_student"], message=f"{locale} was not asked to vote again")
        assert page.is_enabled("[data-commit]")
    tools.screenshot(phones["ja-JP"], "class-phone-vote-again")
    for locale, page in phones.items():
        vote(page, tools, SECOND[locale])
    second = {c: list(SECOND.values()).count(c) for c in ("same", "different")}
    wait_spread(teacher, tools, second, first)  # both rounds side by side: round 1's count, then round 2's
    assert not visible(teacher, "#class-again"), "a step has at most two rounds"
    tools.screenshot(teacher, "class-teacher-two-rounds")
    teacher.click("#class-reveal")
    wait_panel(teacher, tools, "revealed", "true")
    # After the reveal the right answer's bar is marked: the choices the server accepted (its results say).
    accepted = next(s for s in json.loads(results(server_url, code, token))["steps"] if s["step"] == STEP)["accepted"]
    tools.wait_until(teacher, "(right) => [...document.querySelectorAll('#class-spread li[data-choice]')].every("
                              "(li) => (li.dataset.right === 'true') === right.includes(li.dataset.choice)"
                              " && li.classList.contains('is-right') === right.includes(li.dataset.choice))",
                     accepted, message="the right answer's bar was not marked")
    marks = teacher.evaluate("() => [...document.querySelectorAll('#class-spread li.is-right .lesson-class__right')]"
                             ".map((m) => m.getAttribute('aria-label'))")
    assert marks == [texts("en")["class_right_mark"]] * len(accepted) and accepted
    assert not visible(teacher, "#class-spread-show"), "after the reveal the spread shows, without a button"

    # Ending asks first, in the page's language; "Keep going" keeps the class.
    teacher.click("#class-end")
    assert visible(teacher, "#class-end-dialog")
    # It says the server's own period (HP_RESULTS_DAYS: 7 days unless set).
    said = texts("en")["class_end_confirm"]["other"].replace("{days}", "7")
    assert teacher.text_content("#class-end-dialog p") == said
    teacher.click("#class-end-no")
    assert not visible(teacher, "#class-end-dialog") and visible(teacher, "#class-teacher")
    end_class(open_page, teacher, code)
    teacher.wait_for_selector("#class-summary li[data-step='4'] li[data-round='2']")
    kept = json.loads(results(server_url, code, token))
    step = next(s for s in kept["steps"] if s["step"] == STEP)
    for r in step["rounds"]:
        shown = teacher.get_attribute(f"#class-summary li[data-step='4'] li[data-round='{r['round']}']", "data-right")
        assert shown == str(r["right"]) and r["answered"] == len(FIRST)
    assert [r["counts"] for r in step["rounds"]] == [first, second]
    # Which choices were right is the server's verdict for the teacher's screen (here the step's own setup).
    request = urllib.request.Request(f"{server_url}/api/lesson/pair/verdict", data=b"{}",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        assert step["accepted"] == json.loads(response.read())["accepted"]
    box = teacher.evaluate(BOX, "#class-summary")
    assert box["top"] >= 0 and box["top"] < 900, "the summary is not on the first screen"
    tools.screenshot(teacher, "class-teacher-summary")
    with teacher.expect_download() as download:
        teacher.click("#class-download")
    saved = open(download.value.path(), "rb").read()
    assert saved.startswith(codecs.BOM_UTF8) and saved == results(server_url, code, token, "results.csv")


@pytest.mark.slow
def test_a_class_lost_to_a_redis_restart_is_called_lost(browser, open_page, tools):
    with redis_server() as redis, tempfile.TemporaryDirectory(prefix="hp-lost-") as folder, \
            served({"HP_DATA_DIR": folder, "HP_REDIS_URL": redis.url, "HP_CLASSES_PER_HOUR": "1000"}) as server:
        opener = type(open_page)(browser, server.url, open_page.pool)
        for expected in ("ERR_CONNECTION_REFUSED", "ERR_CONNECTION_RESET", "ERR_EMPTY_RESPONSE",
                         "ERR_INCOMPLETE_CHUNKED_ENCODING", "status of 503", "status of 404"):
            opener.allow(expected)
        try:
            teacher, code, join = start_class(opener, tools, 2)
            phone = join_phone(opener, tools, join, width=390, height=844, locale="zh-CN")
            wait_panel(phone, tools, "step", "2")
            redis.stop()
            redis.start()  # without persistence: it comes back empty
            phone.wait_for_selector("[data-class-over]:not([hidden])", timeout=30_000)
            assert phone.text_content("#class-over-text") == texts("zh")["class_lost_wait"]
            tools.wait_until(teacher, "() => document.querySelector('#class-status').dataset.key === 'class_lost'",
                             timeout=30, message="the teacher was not told the class was lost")
            assert teacher.text_content("#class-status") == texts("en")["class_lost"]
            assert visible(teacher, "[data-class-start]"), "the teacher can start a new class from there"
            tools.screenshot(phone, "class-phone-lost")
        finally:
            found = opener.close()
        assert not found, "the page reported problems:\n" + "\n".join(found)


# The code's capital letters, measured as drawn: the ascent of its text in its computed font.
LETTERS = """() => { const n = document.querySelector('[data-class-code]'); const s = getComputedStyle(n);
  const g = document.createElement('canvas').getContext('2d'); g.font = `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
  const m = g.measureText(n.textContent); return m.actualBoundingBoxAscent; }"""
SIZES = """() => ['#class-counts', '#class-spread .lesson-class__choice', '#class-spread .lesson-class__n']
  .map((s) => parseFloat(getComputedStyle(document.querySelector(s)).fontSize))"""


CHART = "#charts .lesson-chart:not([hidden])"


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenter"])
def test_the_projector_opens_each_step_at_its_question_after_a_reveal(open_page, server_url, tools, present):
    teacher, code, join = start_class(open_page, tools, STEP, width=1280, height=720, lang="ja")
    if present:
        teacher.click("#present")
    phone = join_phone(open_page, tools, join, width=390, height=844, locale="ja-JP")
    wait_panel(phone, tools, "step", str(STEP))
    vote(phone, tools, "same")
    wait_panel(teacher, tools, "answered", "1")
    teacher.click("#class-spread-show")  # the spread, held back while the class votes (issue 38)
    wait_spread(teacher, tools, {"same": 1, "different": 0})
    assert teacher.evaluate(LETTERS) >= 48, "the code's letters are under 48 px"
    assert min(teacher.evaluate(SIZES)) >= 24, "the class panel's counts and labels are under 24 px"
    # As the teacher in the issue: the presenter's keys (Enter reveals and scrolls to the verdict, → moves on);
    # in the normal view, the question's own button, which reads Reveal for the teacher, then Next.
    if present:
        teacher.keyboard.press("Enter")
    else:
        teacher.click("[data-commit]")
    tools.wait_until(teacher, "() => !document.querySelector('#step-reveal').hidden")
    wait_panel(teacher, tools, "revealed", "true")
    # Once drawn, the view moves to the verdict: it starts at the top of the 1280x720 screen.
    tools.wait_until(teacher, "() => { const r = document.querySelector('#verdict').getBoundingClientRect();"
                              " return document.querySelector('#verdict').dataset.outcome !== undefined"
                              " && r.top >= 0 && r.bottom <= 720; }", timeout=30,
                     message="the view did not move to the teacher's verdict")
    # The verdict and its chart (the first; the presenter's one on screen) fit the 1280x720 screen, drawn.
    tools.wait_until(teacher, "(s) => document.querySelector(s)?.querySelector('.main-svg') !== null", CHART,
                     timeout=30, message="the verdict's chart was not drawn")
    tools.wait_idle(teacher)
    for selector in ("#verdict", CHART):
        box = teacher.evaluate(BOX, selector)
        assert 0 <= box["top"] and box["bottom"] <= 720, f"{selector} is not within the 1280x720 screen: {box}"
    tools.screenshot(teacher, f"class-projector-reveal-{'presenter' if present else 'normal'}", full_page=False)
    # Scrolled down to the verdict, as Enter leaves it, or as a teacher scrolls to read it.
    teacher.evaluate("() => document.querySelector('#step-reveal').scrollIntoView({block: 'start'})")
    assert teacher.evaluate(BOX, "#step-title")["top"] < 0, "the page is not scrolled (the case under test)"
    if present:
        teacher.keyboard.press("ArrowRight")
    else:
        teacher.click("#next-step")
    wait_panel(teacher, tools, "step", str(STEP + 1))
    tools.wait_until(teacher, "() => document.querySelector('#results').dataset.step === '5'")
    for selector in ("#step-title", "#step-question"):
        box = teacher.evaluate(BOX, selector)
        assert 0 <= box["top"] < 720, f"{selector} is off the first screen: {box}"
    tools.screenshot(teacher, f"class-projector-next-step-{'presenter' if present else 'normal'}")
