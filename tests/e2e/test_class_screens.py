"""Class mode's screens (issue 23): the projector at 1280x720, a phone after joining, the teacher's lock
switch, a student's end of the class, the join link's warning for 127.0.0.1, and every class error the
teacher can meet worded for what happened, in the page's language."""

import json
import re
import time

import pytest
from class_pages import class_app, class_state, end_class, join_phone, start_class, visible, wait_panel, wait_step
from class_pages import lesson_texts as texts

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server_url():
    """This module's own app (class_pages.class_app): open_page opens its pages here."""
    with class_app() as url:
        yield url

ANSWER_STEP = 4  # 我打你 / 你打我: same or different


BOX = "(s) => { const n = document.querySelector(s); const r = n.getBoundingClientRect(); " \
      "return {top: r.top, bottom: r.bottom, width: r.width, height: r.height}; }"


def words(text: str) -> str:
    """French sets no-break spaces before its colons: compare words, not the kind of space."""
    return re.sub(r"\s+", " ", text).strip()


def fill(template: str, **values) -> str:
    return words(re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), template))


def teacher_in_class(open_page, tools, lang: str, present: bool):
    locale = {"ja": "ja-JP", "fr": "fr-FR", "en": "en-US", "zh": "zh-CN"}[lang]
    query = f"/lesson?step={ANSWER_STEP}&lang={lang}" + ("&present=1" if present else "")
    teacher = open_page(query, width=1280, height=720, locale=locale, explorer=False)
    tools.wait_until(teacher, "() => Number(document.querySelector('#results').dataset.renderCount) > 0")
    teacher.click("[data-class-start]")
    tools.wait_until(teacher, "() => /^[A-Z2-9]{6}$/.test(document.querySelector('[data-class-code]').textContent)")
    return teacher, teacher.text_content("[data-class-code]")


@pytest.mark.parametrize("lang", ["ja", "fr"])
@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenter"])
def test_the_projector_shows_the_class_on_one_1280x720_screen(open_page, tools, lang, present):
    teacher, code = teacher_in_class(open_page, tools, lang, present)
    student = join_phone(open_page, tools, f"/lesson?class={code}", width=390, height=844, locale="en-US")
    wait_step(student, tools, ANSWER_STEP)
    student.check("[data-question] input[value='same']")
    student.click("[data-commit]")
    wait_panel(teacher, tools, "answered", "1")
    assert visible(teacher, "#class-spread-show")
    teacher.click("#class-spread-show")  # the spread, held back while the class votes (issue 38)
    tools.wait_until(teacher, "() => document.querySelector(\"[data-class-spread] li[data-choice='same']\")"
                              "?.dataset.count === '1'", message="the spread never counted the answer")
    tools.wait_until(teacher, "() => { const qr = document.querySelector('[data-class-qr]');"
                              " return qr.complete && qr.naturalWidth > 0; }", message="the QR code did not load")
    assert teacher.evaluate("() => window.scrollY") == 0, "the teacher never scrolled"
    # The QR code, or in its place the warning that no phone can open a server on 127.0.0.1 (as this one is).
    for selector in ("#step-question legend, #step-question .lesson-question__prompt, #question-body",
                     "#question-body input[value='different']", "[data-class-code]",
                     "[data-class-qr]:not([hidden]), #class-phones:not([hidden])",
                     "#class-counts", "[data-class-spread]", "[data-class-reveal]", "#next-step"):
        box = teacher.evaluate(BOX, selector)
        assert box["height"] > 0 and 0 <= box["top"] and box["bottom"] <= 720, f"{selector} is below the fold: {box}"
    size = teacher.evaluate("() => parseFloat(getComputedStyle(document.querySelector('[data-class-code]')).fontSize)")
    assert size >= 48, f"the code's letters are {size} px"
    tracks = teacher.evaluate("() => [...document.querySelectorAll('[data-class-spread] .lesson-class__track')]"
                              ".map((t) => t.getBoundingClientRect().width)")
    assert len(tracks) == 2 and min(tracks) >= 40, f"the spread's bars have no room: {tracks}"
    bar = teacher.evaluate("() => document.querySelector(\"[data-class-spread] li[data-choice='same']\")"
                           ".querySelector('.lesson-class__bar').getBoundingClientRect().width")
    assert bar >= 40, "the bar of the one answer has no width"
    path = f"/tmp/class-projector-{lang}-{'presenter' if present else 'normal'}.png"
    teacher.screenshot(path=path)


def test_a_phone_shows_the_question_and_the_class_first(open_page, tools):
    teacher, code, join = start_class(open_page, tools, ANSWER_STEP)
    student = join_phone(open_page, tools, join, width=390, height=844, locale="ja-JP")
    wait_step(student, tools, ANSWER_STEP)
    wait_panel(student, tools, "step", str(ANSWER_STEP))
    question = student.evaluate(BOX, "#question-body input[value='different']")
    assert question["bottom"] <= 844, f"the question's choices are below the first screen: {question}"
    held = student.evaluate(BOX, "#class-held")
    assert held["top"] < 844 / 2, f"'class {code}' is not near the top: {held}"
    assert code in student.text_content("#class-held")


def test_the_teacher_closes_joining_and_a_late_student_is_told(open_page, server_url, tools):
    teacher, code, join = start_class(open_page, tools, 2)
    first = join_phone(open_page, tools, join, locale="en-US")
    wait_panel(first, tools, "step", "2")
    wait_panel(teacher, tools, "joined", "1")
    teacher.select_option("#class-door", "closed")
    wait_panel(teacher, tools, "locked", "true")
    assert class_state(server_url, code)["locked"] is True
    open_page.allow("status of 403")
    late = join_phone(open_page, tools, join, locale="fr-FR")
    # The join screen, on the first screen: why, in the page's language, and a button (waiting alone cannot help).
    tools.wait_until(late, "() => !document.querySelector('[data-class-over]').hidden"
                           " && document.querySelector('#class-over').dataset.refused === '403'",
                     message="the late student was told nothing")
    fr = texts("fr")
    assert words(late.text_content("#class-over-text")) == words(
        fill(fr["class_join_refused"], code=code) + " " + fr["class_locked"])
    assert late.evaluate(BOX, "#class-over-text")["bottom"] <= 900
    assert not visible(late, "#class-student") and not visible(late, "#step-question")
    assert visible(late, "#class-retry")
    # The student already in stays in: the teacher still counts one, and opening again lets the late one in.
    teacher.select_option("#class-door", "open")
    wait_panel(teacher, tools, "locked", "false")
    late.click("#class-retry")
    wait_panel(late, tools, "step", "2")
    wait_panel(teacher, tools, "joined", "2")


def test_a_student_sees_the_end_of_the_class_after_a_reload_too(open_page, tools):
    teacher, code, join = start_class(open_page, tools, 2)
    student = join_phone(open_page, tools, join, width=390, height=844, locale="zh-CN")
    wait_panel(student, tools, "step", "2")
    end_class(open_page, teacher, code)
    expected = fill(texts("zh")["class_over"], code=code)
    for _ in range(2):  # when it happens, then after a reload
        tools.wait_until(student, "() => !document.querySelector('[data-class-over]').hidden",
                         message="the student saw no end screen")
        assert words(student.text_content("#class-over-text")) == expected
        box = student.evaluate(BOX, "#class-over-text")
        assert box["bottom"] <= 844, "the end screen is not on the first screen"
        for selector in ("[data-class-start]", ".lesson-nav", "#prev-step", "#next-step", "#step-question"):
            assert not visible(student, selector), f"{selector} shows on the student's end screen"
        student.reload()
    # The student may go on alone: the lesson comes back, with its own buttons.
    student.wait_for_selector("#class-alone", state="visible")
    student.click("#class-alone")
    assert visible(student, ".lesson-nav") and visible(student, "#step-question")


def test_a_teacher_on_127_0_0_1_is_told_that_phones_cannot_open_it(open_page, tools):
    """The session server listens on 127.0.0.1 only: the server offers no link a phone could open."""
    teacher = open_page("/lesson?step=1&lang=fr", width=1280, height=720, locale="fr-FR", explorer=False)
    tools.wait_until(teacher, "() => Number(document.querySelector('#results').dataset.renderCount) > 0")
    teacher.click("[data-class-start]")
    tools.wait_until(teacher, "() => !document.querySelector('#class-phones').hidden",
                     message="no warning that phones cannot reach 127.0.0.1")
    text = teacher.text_content("#class-phones")
    assert "heads-positions serve --host 0.0.0.0" in text and "127.0.0.1" in text
    # The warning takes the QR code's place on the projector's first screen; no code leads phones nowhere.
    assert not visible(teacher, "[data-class-qr]")
    box = teacher.evaluate(BOX, "#class-phones")
    assert box["height"] > 0 and 0 <= box["top"] and box["bottom"] <= 720, f"the warning is below the fold: {box}"


CREATE = "**/api/classes"


def refuse(status: int, error_type: str, ctx: dict | None = None, retry_after: int | None = None):
    """A route handler answering as the class API does: {detail: [{loc, msg, type, ctx}]}."""
    body = json.dumps({"detail": [{"loc": [], "msg": "refused", "type": error_type, "ctx": ctx or {}}]})
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}

    def handle(route):
        if route.request.method != "POST":
            route.continue_()
            return
        route.fulfill(status=status, body=body, content_type="application/json", headers=headers)
    return handle


@pytest.mark.parametrize(("status", "error_type", "ctx", "retry_after", "key", "values"), [
    (429, "too_many_classes_from_address", {"retry_after": 1750, "retry_minutes": 30}, 1750, "class_too_many_classes",
     {"minutes": 30}),
    (401, "teacher_key_missing", {}, None, "class_key_missing", {}),
    (403, "teacher_key_wrong", {}, None, "class_key_wrong", {}),
    (503, "too_many_classes_open", {"max_classes": 200}, 60, "class_server_full", {"max": 200}),
    (503, "class_store_unavailable", {"store": "redis"}, 2, "class_store_down", {"seconds": 2}),
    (None, None, None, None, "class_error", {}),
], ids=["429", "401-key", "403-key", "503-full", "503-store", "network"])
def test_starting_a_class_says_what_went_wrong_in_the_pages_language(open_page, tools, status, error_type, ctx,
                                                                     retry_after, key, values):
    if status is None:
        def handle(route):
            if route.request.method == "POST":
                route.abort("connectionrefused")
            else:
                route.continue_()
        open_page.allow("ERR_CONNECTION_REFUSED")
    else:
        handle = refuse(status, error_type, ctx, retry_after)
        open_page.allow(f"status of {status}")
    page = open_page("/lesson?step=1&lang=fr", locale="fr-FR", explorer=False, routes={CREATE: handle})
    tools.wait_until(page, "() => Number(document.querySelector('#results').dataset.renderCount) > 0")
    page.click("[data-class-start]")
    tools.wait_until(page, "() => !document.querySelector('#class-status').hidden", message="nothing was said")
    said = words(page.text_content("#class-status"))
    assert said == fill(texts("fr")[key], **values)
    box = page.evaluate(BOX, "#class-status")
    assert box["height"] > 0 and 0 <= box["top"] and box["bottom"] <= 900, f"said below the first screen: {box}"
    if key != "class_error":
        assert said != words(texts("fr")["class_error"]), "'the server did not answer' though it did"
    if key == "class_store_down":  # the store comes back by itself: the page says it is reconnecting
        assert page.evaluate("() => document.querySelector('[data-class-connection]').dataset.classConnection") \
            == "reconnecting"
        assert words(page.text_content("#class-connection")) == words(texts("fr")["class_reconnecting"])
    if key in ("class_key_missing", "class_key_wrong"):
        assert visible(page, "#class-key"), "no field for the teacher key"
    assert visible(page, "[data-class-start]"), "the teacher can try again"


def test_a_teacher_key_is_sent_when_the_server_asks_for_it(open_page, tools):
    seen = []

    def handle(route):
        if route.request.method != "POST":
            route.continue_()
            return
        seen.append(route.request.headers.get("x-teacher-key"))
        if seen[-1] != "s3cret-key":
            refuse(401, "teacher_key_missing")(route)
        else:
            route.continue_()
    open_page.allow("status of 401")
    page = open_page("/lesson?step=1&lang=en", locale="en-US", explorer=False, routes={CREATE: handle})
    tools.wait_until(page, "() => Number(document.querySelector('#results').dataset.renderCount) > 0")
    page.click("[data-class-start]")
    page.wait_for_selector("#class-key", state="visible")
    page.fill("#class-key", "s3cret-key")
    page.press("#class-key", "Enter")
    tools.wait_until(page, "() => /^[A-Z2-9]{6}$/.test(document.querySelector('[data-class-code]').textContent)",
                     message="the class did not start with the key")
    assert seen == [None, "s3cret-key"]
    deadline = time.monotonic() + 5
    while visible(page, "#class-status") and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert not visible(page, "#class-status")


PLOTS = """() => [...document.querySelectorAll('#charts .lesson-chart:not([hidden]) .js-plotly-plot .main-svg')]
  .filter((svg) => svg.getClientRects().length).map((svg) => svg.getBoundingClientRect().right)"""


def test_continuing_alone_after_the_end_fits_a_phone(open_page, tools):
    """The lesson was drawn behind the end screen (hidden: Plotly's 700 px default); "continue alone" brings it back
    at the phone's width (issue 38)."""
    teacher, code, join = start_class(open_page, tools, ANSWER_STEP)
    phone = join_phone(open_page, tools, join, width=390, height=844, locale="fr-FR")
    wait_panel(phone, tools, "step", str(ANSWER_STEP))
    phone.check("[data-question] input[value='same']")
    phone.click("[data-commit]")
    wait_panel(phone, tools, "mine", "same")
    teacher.click("#class-reveal")
    wait_panel(phone, tools, "revealed", "true")
    teacher.click("#class-end")
    teacher.click("#class-end-yes")
    phone.wait_for_selector("#class-alone", state="visible")
    phone.click("#class-alone")
    tools.wait_until(phone, PLOTS, message="no chart was drawn after continuing alone")
    tools.wait_idle(phone)
    tools.wait_until(phone, f"() => {{ const r = ({PLOTS})(); return r.length && Math.max(...r) <= 390; }}",
                     message="a chart reaches past the 390 px phone")
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= 390
