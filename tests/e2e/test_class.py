"""Class mode in real browsers: one teacher and five students (one on a phone), joined by the QR code's
link. The students follow the teacher's steps, answer, see only their own answer and the reveal; the
teacher's counts and spread match what they sent; a student who reloads lands on the current step."""

import json
import re
import time
import urllib.request

import pytest
from class_pages import (
    class_app,
    class_state,
    end_class,
    join_phone,
    panel,
    start_class,
    visible,
    wait_panel,
    wait_step,
)
from class_pages import lesson_texts as texts

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server_url():
    """This module's own app (class_pages.class_app): open_page opens its pages here."""
    with class_app() as url:
        yield url

STUDENTS = [  # (locale, viewport): one phone at 390x844
    ("zh-CN", (1280, 900)), ("ja-JP", (1280, 900)), ("fr-FR", (1280, 900)), ("en-US", (1280, 900)),
    ("zh-CN", (390, 844)),
]
ANSWER_STEP = 4  # 我打你 / 你打我: same or different
PICKS = ["same", "same", "different", "same", "different"]


def test_a_teacher_leads_five_students_through_the_lesson(open_page, server_url, tools):
    teacher = open_page("/lesson?step=1&lang=en", locale="en-US", explorer=False)
    tools.wait_until(teacher, "() => Number(document.querySelector('#results').dataset.renderCount) > 0")
    teacher.click("#class-start")
    tools.wait_until(teacher, "() => /^[A-Z2-9]{6}$/.test(document.querySelector('#class-code').textContent)")
    code = teacher.text_content("#class-code")
    join_url = teacher.get_attribute("#class-link", "href")
    # The link carries the class's join key: a phone that opens it is never held by others' wrong codes.
    assert re.fullmatch(rf"{re.escape(server_url)}/lesson\?class={code}&key=[0-9a-f]{{24}}", join_url), join_url
    # The QR code on the teacher's screen is the server's drawing of that link.
    qr_src = teacher.get_attribute("#class-qr", "src")
    kept = json.loads(teacher.evaluate("() => localStorage.getItem('heads-positions.class.teacher')"))
    assert qr_src == f"/classes/{code}/qr.svg?teacher={kept['teacher_stream']}"
    with urllib.request.urlopen(server_url + qr_src, timeout=10) as response:
        assert response.headers["content-type"].startswith("image/svg+xml")
        assert b"<svg" in response.read()
    # The image arrives after its src is set, in the same task as the code's text: wait for it to load.
    tools.wait_until(teacher, "() => { const qr = document.querySelector('#class-qr');"
                              " return qr.complete && qr.naturalWidth > 0; }", message="the QR code did not load")
    # The token stays in the teacher's browser: in its storage, never in a link.
    assert kept["code"] == code and len(kept["token"]) >= 43
    assert kept["token"] not in teacher.url and kept["token"] not in join_url

    students = []
    for locale, (width, height) in STUDENTS:
        page = open_page(join_url.removeprefix(server_url), width=width, height=height, locale=locale, explorer=False)
        # The link asks the name first, on the first screen, in the phone's language; skipping gives one.
        tools.wait_until(page, "() => document.querySelector('[data-class-first]').checkVisibility()",
                         message="the join link did not ask the name")
        box = page.evaluate("() => document.querySelector('#class-first-skip').getBoundingClientRect().bottom")
        assert box <= height, f"the name's buttons are below the first screen ({box} > {height})"
        page.click("#class-first-skip")
        students.append(page)
    for page in students:
        wait_panel(page, tools, "step", "1")
        assert visible(page, "#class-student") and not visible(page, "#class-teacher")
        assert not visible(page, ".lesson-nav"), "a student's page follows the teacher: no navigation of its own"
    wait_panel(teacher, tools, "joined", str(len(students)))

    # Three steps with the lesson's own navigation; every student follows.
    for n in (2, 3, ANSWER_STEP):
        teacher.click("#next-step")
        wait_step(teacher, tools, n)
        for page in students:
            wait_step(page, tools, n)
            assert not visible(page, "#step-reveal"), "a step opens with its answer hidden"

    # Each student commits; one changes her mind before the reveal, and the last answer counts.
    students[2].check("[data-question] input[value='same']")
    students[2].click("[data-commit]")
    wait_panel(students[2], tools, "mine", "same")
    for page, pick, (locale, _) in zip(students, PICKS, STUDENTS):
        page.check(f"[data-question] input[value='{pick}']")
        page.click("[data-commit]")
        wait_panel(page, tools, "mine", pick)
        assert not visible(page, "#step-reveal"), "committing in class waits for the teacher's reveal"
        # Said where the student looks: under the question's button, in the page's language.
        assert texts(locale[:2])[f"pair_choice_{pick}"] in page.text_content("#commit-hint")
    wait_panel(teacher, tools, "answered", str(len(students)))
    # Peer instruction: while the class votes, the projector says how many answered, not how (issue 38) ...
    assert not visible(teacher, "#class-spread") and visible(teacher, "#class-spread-held")
    assert teacher.text_content("#class-counts") == texts("en")["class_counts"].replace(
        "{joined}", str(len(students))).replace("{answered}", str(len(students)))
    assert teacher.query_selector("#class-spread li") is None, "the spread is not even in the page"
    # ... until the teacher chooses to show it: one button, gone once pressed (the room has seen the spread).
    teacher.click("#class-spread-show")
    wait_panel(teacher, tools, "spread", "true")
    assert not visible(teacher, "#class-spread-held") and not visible(teacher, "#class-spread-show")
    for choice in ("same", "different"):
        tools.wait_until(teacher, "([c, n]) => document.querySelector(`#class-spread li[data-choice='${c}']`)"
                                  "?.dataset.count === String(n)", [choice, PICKS.count(choice)],
                         message=f"the teacher's spread never showed {PICKS.count(choice)} for {choice}")
    assert not visible(teacher, "#step-reveal"), "the teacher sees the spread before the reveal, not the answer"
    tools.screenshot(teacher, "class-teacher-spread")
    for page, pick in zip(students, PICKS):
        # Only their own answer: no spread and no count of the others on a student's screen.
        assert not visible(page, "#class-spread") and not visible(page, "#class-counts")
        assert panel(page, "mine") == pick

    teacher.click("#class-reveal")
    for page in students:
        wait_panel(page, tools, "revealed", "true")
        tools.wait_until(page, "() => !document.querySelector('#step-reveal').hidden "
                               "&& document.querySelector('#verdict').dataset.outcome !== undefined",
                         message="the reveal did not reach a student")
    tools.wait_until(teacher, "() => !document.querySelector('#class-said').hidden")
    said = teacher.text_content("#class-said")
    en = texts("en")
    outcome = teacher.evaluate("() => document.querySelector('#verdict').dataset.outcome")
    assert en["class_said"].split("{")[0] in said
    assert f"{PICKS.count('same')} of {len(PICKS)}" in said
    if outcome:
        assert en[f"pair_choice_{outcome}"] in said
    # A student's own answer against the model's, as in the lesson alone.
    students[3].wait_for_selector("#verdict[data-prediction]", state="attached")
    tools.screenshot(teacher, "class-teacher-revealed")
    tools.screenshot(students[4], "class-student-phone-revealed")

    # A student who reloads lands on the class's current step, here the next one, still hidden.
    teacher.click("#next-step")
    wait_step(teacher, tools, ANSWER_STEP + 1)
    students[4].reload()
    wait_step(students[4], tools, ANSWER_STEP + 1)
    wait_panel(students[4], tools, "revealed", "false")
    assert not visible(students[4], "#step-reveal")
    # The seat it came back to is the server's student, who is on the teacher's roster (its stream's credential).
    seat = json.loads(students[4].evaluate("() => localStorage.getItem('heads-positions.class.student')"))
    assert re.fullmatch(r"[A-Za-z0-9_-]{16,64}", seat["student"])
    request = urllib.request.Request(f"{server_url}/api/classes/{code}",
                                     headers={"Authorization": f"Bearer {kept['token']}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert seat["student"] in [s["student"] for s in json.loads(response.read())["students"]]

    end_class(open_page, teacher, code)
    for page in students:
        tools.wait_until(page, "() => !document.querySelector('[data-class-over]').hidden",
                         message="the end of the class did not reach a student")
        assert code in page.text_content("#class-over-text")
        # The end screen, not the teacher's "start a class" nor the step buttons.
        assert not visible(page, "#class-idle") and not visible(page, ".lesson-nav")


def test_enter_in_the_presenter_view_is_the_reveal_for_the_whole_class(open_page, server_url, tools):
    """One reveal: Enter on the projector reveals on the server, so every phone reveals and answers close."""
    teacher, code, join = start_class(open_page, tools, ANSWER_STEP, width=1280, height=720)
    student = join_phone(open_page, tools, join, width=390, height=844, locale="zh-CN")
    wait_step(student, tools, ANSWER_STEP)
    student.check("[data-question] input[value='same']")
    student.click("[data-commit]")
    wait_panel(student, tools, "mine", "same")
    wait_panel(teacher, tools, "answered", "1")
    teacher.click("#present")
    # Where the focus goes after the switch is test_lesson's matter; here only what Enter does counts.
    teacher.evaluate("() => document.activeElement.blur()")
    teacher.keyboard.press("Enter")
    tools.wait_until(teacher, "() => !document.querySelector('#step-reveal').hidden",
                     message="the teacher's screen did not reveal")
    deadline = time.monotonic() + 10
    while not class_state(server_url, code)["revealed"]:
        assert time.monotonic() < deadline, "the server's class never said revealed: true"
        time.sleep(0.1)
    wait_panel(student, tools, "revealed", "true")
    tools.wait_until(student, "() => !document.querySelector('#step-reveal').hidden "
                              "&& document.querySelector('#verdict').dataset.prediction !== undefined",
                     message="the reveal did not reach the student")
    # The student's answer is the one sent to the class, and it can no longer change.
    assert student.is_checked("[data-question] input[value='same']")
    assert student.is_disabled("[data-question] input[value='different']")


def test_a_students_arrow_keys_stay_on_the_class_step_and_say_why(open_page, tools):
    """The teacher moves the class; a student's own moves are refused, in the student's language."""
    teacher, code, join = start_class(open_page, tools, 2)
    for locale in ("zh-CN", "ja-JP", "fr-FR", "en-US"):
        student = join_phone(open_page, tools, join, locale=locale)
        wait_step(student, tools, 2)
        wait_panel(student, tools, "step", "2")
        student.locator("body").focus()
        for key in ("ArrowRight", "ArrowLeft", "ArrowRight"):
            student.keyboard.press(key)
        tools.wait_until(student, "() => document.querySelector('#class-held').dataset.refused === '3'",
                         message="the student's arrow keys were not refused")
        assert student.evaluate("() => document.querySelector('#results').dataset.step") == "2"
        assert "step=2" in student.url
        assert visible(student, "#class-held")
        expected = texts(locale[:2])["class_nav_held"].replace("{code}", code)
        # French sets a no-break space before its colon: compare the words, not the kind of space.
        assert re.sub(r"\s", " ", student.text_content("#class-held")) == re.sub(r"\s", " ", expected)
    # The teacher's own arrow key still moves the class.
    teacher.locator("body").focus()
    teacher.keyboard.press("ArrowRight")
    wait_panel(teacher, tools, "step", "3")


def test_a_student_who_closes_the_tab_comes_back_into_the_class_with_their_answer(open_page, server_url, tools):
    """The browser keeps the student's seat (code and token): a new tab on /lesson is the same student."""
    teacher, code, join = start_class(open_page, tools, ANSWER_STEP)
    student = join_phone(open_page, tools, join, locale="fr-FR")
    wait_step(student, tools, ANSWER_STEP)
    student.check("[data-question] input[value='different']")
    student.click("[data-commit]")
    wait_panel(student, tools, "mine", "different")
    wait_panel(teacher, tools, "answered", "1")
    assert f"class={code}" in student.url, "the student's address keeps the class"
    context = student.context
    student.close()
    again = context.new_page()
    again.goto(f"{server_url}/lesson?lang=fr")
    wait_step(again, tools, ANSWER_STEP)
    wait_panel(again, tools, "mine", "different")
    assert again.is_checked("[data-question] input[value='different']")
    assert not visible(again, ".lesson-nav") and visible(again, "#class-held")
    assert class_state(server_url, code)["joined"] == 1, "the same student, not a second one"
