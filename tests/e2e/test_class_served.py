"""Class mode on servers started for it (issue 23): one listening on every address, whose teacher's page on
127.0.0.1 shows the link a phone can open, and a phone joins by it; one on Redis, stopped mid-class, where
every screen says "reconnecting…" and then "back", and an answer sent meanwhile counts once."""

import json
import tempfile
import urllib.request

import pytest
from class_pages import join_phone, wait_connection, wait_panel
from class_servers import RedisServer, Served

pytestmark = [pytest.mark.e2e, pytest.mark.slow]
ANSWER_STEP = 4


def opener_on(browser, open_page, url: str):
    """Pages on `url`, with open_page's checks (its class: PageOpener in conftest.py)."""
    opener = type(open_page)(browser, url, open_page.pool)
    # While the store or the app is down, chromium logs each refused request or 503 as a console error.
    for expected in ("status of 503", "ERR_INCOMPLETE_CHUNKED_ENCODING"):
        opener.allow(expected)
    return opener


def close(opener) -> None:
    found = opener.close()
    assert not found, "the page reported problems:\n" + "\n".join(found)






def start_class(opener, tools, step: int = 1):
    teacher = opener(f"/lesson?step={step}&lang=en", locale="en-US", explorer=False)
    tools.wait_until(teacher, "() => Number(document.querySelector('#results').dataset.renderCount) > 0")
    teacher.click("[data-class-start]")
    tools.wait_until(teacher, "() => /^[A-Z2-9]{6}$/.test(document.querySelector('[data-class-code]').textContent)")
    return teacher, teacher.text_content("[data-class-code]")


def test_a_teacher_on_127_0_0_1_gets_the_link_a_phone_can_open(browser, open_page, tools):
    with tempfile.TemporaryDirectory(prefix="hp-links-") as folder:
        server = Served({"HP_DATA_DIR": folder}, host="0.0.0.0").start()
        teachers = opener_on(browser, open_page, server.url)
        try:
            teacher, code = start_class(teachers, tools)
            made = json.loads(teacher.evaluate("() => localStorage.getItem('heads-positions.class.teacher')"))
            # What the server offers (app/services/join_links.py): a link on each address it answers on.
            assert made["loopback"] is True and made["join_urls"], made
            link = teacher.get_attribute("#class-link", "href")
            assert link == made["join_urls"][0] and "127.0.0.1" not in link
            assert teacher.text_content("#class-link") == link
            assert teacher.is_hidden("#class-phones"), "a warning though phones can open the link"
            # A phone opens that very link (another origin than the teacher's page), and is in the class.
            origin = link.split("/lesson")[0]
            phones = opener_on(browser, open_page, origin)
            try:
                phone = phones(link.removeprefix(origin), width=390, height=844, locale="fr-FR", explorer=False)
                # The link carries the class's join key, so it asks the name first (issue 38); this phone skips it.
                tools.wait_until(phone, "() => document.querySelector('#class-first-skip')?.checkVisibility()",
                                 message="the join link did not ask the name first")
                phone.click("#class-first-skip")
                wait_panel(phone, tools, "step", "1")
                wait_panel(teacher, tools, "joined", "1")
                assert code in phone.text_content("#class-held")
            finally:
                close(phones)
        finally:
            close(teachers)
            server.stop()


def test_redis_stopped_mid_class_says_reconnecting_then_back_and_keeps_the_answer(browser, open_page, tools):
    redis = RedisServer(appendonly=True).start()
    with tempfile.TemporaryDirectory(prefix="hp-store-") as folder:
        server = Served({"HP_DATA_DIR": folder, "HP_REDIS_URL": redis.url}).start()
        opener = opener_on(browser, open_page, server.url)
        try:
            teacher, code = start_class(opener, tools, ANSWER_STEP)
            token = json.loads(teacher.evaluate("() => localStorage.getItem('heads-positions.class.teacher')"))["token"]
            student = join_phone(opener, tools, f"/lesson?class={code}", width=390, height=844, locale="ja-JP")
            wait_panel(student, tools, "step", str(ANSWER_STEP))
            wait_panel(teacher, tools, "joined", "1")

            redis.stop()
            # The app answers, the store does not: the streams say so (event: outage), and so do the pages.
            for page in (teacher, student):
                wait_connection(page, tools, "reconnecting")
            student.check("[data-question] input[value='same']")
            student.click("[data-commit]")
            wait_panel(student, tools, "sent", "pending")
            teacher.click("#next-step")
            tools.wait_until(teacher, "() => document.querySelector('#class-status').dataset.key === 'class_store_down'"
                                      " && !document.querySelector('#class-status').hidden",
                             message="the teacher's failed move did not name the store")
            assert teacher.evaluate("() => document.querySelector('#results').dataset.step") == str(ANSWER_STEP)

            redis.start()  # same port and folder: the append-only file brings the class back
            for page in (teacher, student):
                wait_connection(page, tools, "back", timeout=40)
            wait_panel(student, tools, "sent", "received", timeout=30)
            request = urllib.request.Request(f"{server.url}/api/classes/{code}",
                                             headers={"Authorization": f"Bearer {token}"})
            with urllib.request.urlopen(request, timeout=10) as response:
                state = json.loads(response.read())
            assert state["answered"] == 1 and state["counts"]["same"] == 1, state
            wait_panel(teacher, tools, "answered", "1")
        finally:
            close(opener)
            server.stop()
            redis.stop()
