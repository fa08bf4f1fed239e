"""Class mode through an outage (issue 23): the served app is stopped mid-class and started again on the same
port. Every screen says "reconnecting…" while it is down and "back" when it returns; the teacher's step does
not move without the server; a student's answer sent during the outage is sent again until the server has
it, is marked as received, and is counted once."""

import json
import tempfile
import urllib.request
from pathlib import Path

import pytest
from class_pages import join_phone, start_class, wait_connection, wait_panel
from class_servers import Served, redis_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

LESSON_I18N = Path(__file__).resolve().parents[2] / "static" / "i18n" / "lesson"
ANSWER_STEP = 4  # 我打你 / 你打我: same or different


def texts(lang: str) -> dict:
    return json.loads((LESSON_I18N / f"{lang}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def app_server():
    """An app of this module's own (its classes in a folder of its own), which the test stops and starts."""
    with tempfile.TemporaryDirectory(prefix="hp-outage-") as folder:
        server = Served({"HP_DATA_DIR": folder}).start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def open_on(browser, open_page, app_server):
    """Pages on app_server, with the same checks as open_page (its class: PageOpener in conftest.py)."""
    opener = type(open_page)(browser, app_server.url, open_page.pool)
    # While the app is down, chromium logs each refused request, each event stream cut by the stop, and a 503
    # of the restart, as console errors.
    for expected in ("ERR_CONNECTION_REFUSED", "ERR_CONNECTION_RESET", "ERR_EMPTY_RESPONSE",
                     "ERR_INCOMPLETE_CHUNKED_ENCODING", "status of 503"):
        opener.allow(expected)
    yield opener
    found = opener.close()
    assert not found, "the page reported problems:\n" + "\n".join(found)


def panel(page, name: str) -> str:
    return page.evaluate("(name) => document.querySelector('#class-panel').dataset[name] ?? ''", name)






def class_state(url: str, code: str, token: str) -> dict:
    request = urllib.request.Request(f"{url}/api/classes/{code}", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def test_an_outage_is_said_on_every_screen_and_loses_no_answer(open_on, app_server, tools):
    teacher, code, join = start_class(open_on, tools, ANSWER_STEP)
    token = json.loads(teacher.evaluate("() => localStorage.getItem('heads-positions.class.teacher')"))["token"]
    students = [join_phone(open_on, tools, join, width=390, height=844, locale=locale) for locale in ("fr-FR", "ja-JP")]
    for page in students:
        wait_panel(page, tools, "step", str(ANSWER_STEP))
    wait_panel(teacher, tools, "joined", "2")
    for lang in ("fr", "en"):  # the teacher's page loads the French texts now, while the server answers
        teacher.select_option("#lang", lang)
        tools.wait_until(teacher, "(l) => document.documentElement.lang === l", lang)

    app_server.stop()
    for page, lang in zip([teacher, *students], ["en", "fr", "ja"]):
        wait_connection(page, tools, "reconnecting")
        assert page.text_content("[data-class-connection]") == texts(lang)["class_reconnecting"]
        assert page.get_attribute("[data-class-connection]", "role") == "status"

    # The teacher's next step waits for the server: the projector stays, and says the move failed.
    teacher.click("#next-step")
    tools.wait_until(teacher, "() => !document.querySelector('#class-status').hidden",
                     message="the failed move was not said")
    failed = texts("en")["class_move_failed"].replace("{n}", str(ANSWER_STEP + 1))
    assert failed in teacher.text_content("#class-status")
    # The line is worded from data: switched to French (its texts were loaded before the outage), it says the same
    # in French.
    teacher.select_option("#lang", "fr")
    failed_fr = texts("fr")["class_move_failed"].replace("{n}", str(ANSWER_STEP + 1))
    tools.wait_until(teacher, "(text) => document.querySelector('#class-status').textContent.includes(text)",
                     failed_fr, message="the failed move's line stayed in English after the switch to French")
    assert failed not in teacher.text_content("#class-status")
    assert teacher.evaluate("() => document.querySelector('#results').dataset.step") == str(ANSWER_STEP)
    # A student answers during the outage: kept, and not yet marked as received.
    students[0].check("[data-question] input[value='different']")
    students[0].click("[data-commit]")
    wait_panel(students[0], tools, "sent", "pending")
    students[0].wait_for_timeout(2500)  # a few attempts while the app is down
    assert panel(students[0], "sent") == "pending"

    app_server.start()  # the same port, the same folder: the class is still there
    for page in (teacher, *students):
        wait_connection(page, tools, "back", timeout=40)
    wait_panel(students[0], tools, "sent", "received", timeout=30)
    assert panel(students[0], "mine") == "different"
    fr = texts("fr")["class_mine"].split("{")[0].strip()
    assert fr in students[0].text_content("#class-mine")
    state = class_state(app_server.url, code, token)
    assert state["answered"] == 1 and state["counts"] == {"same": 0, "different": 1}, state
    wait_panel(teacher, tools, "answered", "1")
    # Another student, after the outage: two answers, each counted once.
    students[1].check("[data-question] input[value='same']")
    students[1].click("[data-commit]")
    wait_panel(students[1], tools, "sent", "received")
    state = class_state(app_server.url, code, token)
    assert state["answered"] == 2 and state["counts"] == {"same": 1, "different": 1}, state

    # Back: the teacher's move goes through, and every phone follows.
    teacher.click("#next-step")
    wait_panel(teacher, tools, "step", str(ANSWER_STEP + 1))
    for page in students:
        wait_panel(page, tools, "step", str(ANSWER_STEP + 1))
    assert not teacher.is_visible("#class-status")


def test_a_paused_redis_is_said_on_every_idle_screen_and_the_class_goes_on(browser, open_page, tools):
    """Redis paused (SIGSTOP) for 10 s while nobody acts: before the store's heartbeat, idle screens showed
    nothing. Now every screen says "reconnecting…", then "back", and the class goes on where it was."""
    with redis_server() as redis, tempfile.TemporaryDirectory(prefix="hp-paused-") as folder:
        server = Served({"HP_DATA_DIR": folder, "HP_REDIS_URL": redis.url}).start()
        opener = type(open_page)(browser, server.url, open_page.pool)
        opener.allow("status of 503")  # a request that met the paused store
        try:
            teacher, _, join = start_class(opener, tools, ANSWER_STEP)
            students = [join_phone(opener, tools, join, width=390, height=844, locale=locale)
                        for locale in ("zh-CN", "fr-FR")]
            for page in students:
                wait_panel(page, tools, "step", str(ANSWER_STEP))
            wait_panel(teacher, tools, "joined", "2")

            redis.pause()
            try:
                for page, lang in zip([teacher, *students], ["en", "zh", "fr"]):
                    wait_connection(page, tools, "reconnecting", timeout=15)
                    assert page.text_content("[data-class-connection]") == texts(lang)["class_reconnecting"]
                teacher.wait_for_timeout(6000)  # the rest of the 10 s pause
            finally:
                redis.resume()
            for page in (teacher, *students):
                wait_connection(page, tools, "back", timeout=20)
            teacher.click("#next-step")
            for page in (teacher, *students):
                wait_panel(page, tools, "step", str(ANSWER_STEP + 1))
        finally:
            found = opener.close()
            server.stop()
        assert not found, "the page reported problems:\n" + "\n".join(found)
