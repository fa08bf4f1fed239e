"""A class lost under the projector (issue 38): Redis restarts empty mid-class (no append-only file), after a
reveal. The teacher's 1280x720 screen, in the normal and the presenter view, says at its top that the class is
lost, never "back", and shows no reveal of the lost class; the phone tells its student to wait for the teacher's new
code, in its language."""

import re
import tempfile

import pytest
from class_pages import join_phone, start_class, wait_panel
from class_pages import lesson_texts as texts
from class_servers import Served, redis_server

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ANSWER_STEP = 4  # 我打你 / 你打我: same or different
BOX = "(s) => { const r = document.querySelector(s).getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; }"
PILL = "() => { const n = document.querySelector('[data-class-connection]'); return n.hidden ? '' : " \
       "n.dataset.classConnection; }"


def words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenter"])
def test_a_lost_class_is_said_at_the_top_of_the_projector_and_shows_no_reveal(browser, open_page, tools, present):
    with redis_server() as redis, tempfile.TemporaryDirectory(prefix="hp-lost-") as folder:
        server = Served({"HP_DATA_DIR": folder, "HP_REDIS_URL": redis.url}).start()
        opener = type(open_page)(browser, server.url, open_page.pool)
        for expected in ("status of 503", "status of 404", "ERR_INCOMPLETE_CHUNKED_ENCODING"):
            opener.allow(expected)  # requests that met the restarting store, and the lost class's code
        try:
            teacher, code, join = start_class(opener, tools, ANSWER_STEP, width=1280, height=720, lang="ja")
            if present:
                teacher.click("#present")
            phone = join_phone(opener, tools, join, width=390, height=844, locale="fr-FR")
            wait_panel(phone, tools, "step", str(ANSWER_STEP))
            phone.check("[data-question] input[value='same']")
            phone.click("[data-commit]")
            wait_panel(teacher, tools, "answered", "1")
            teacher.click("#class-reveal")
            wait_panel(teacher, tools, "revealed", "true")
            tools.wait_until(teacher, "() => !document.querySelector('#step-reveal').hidden")

            # Watch the pill from now on: it must never say "back" for the lost class.
            teacher.evaluate("""() => { window.pills = [];
              new MutationObserver(() => window.pills.push(
                document.querySelector('[data-class-connection]').dataset.classConnection))
              .observe(document.querySelector('[data-class-connection]'), {attributes: true}); }""")
            redis.stop()
            redis.start()  # the same port, empty: no append-only file

            tools.wait_until(teacher, "() => !document.querySelector('#class-panel').dataset.step"
                                      " || document.querySelector('#class-teacher').hidden", timeout=30,
                             message="the projector never left the lost class")
            said = teacher.evaluate("() => document.querySelector('#class-status').dataset.key")
            assert said == "class_lost", said
            assert words(teacher.text_content("#class-status")) == words(texts("ja")["class_lost"])
            box = teacher.evaluate(BOX, "#class-status")
            assert 0 <= box["top"] and box["bottom"] <= 720, f"the lost class is said off the first screen: {box}"
            assert "back" not in teacher.evaluate("() => window.pills"), "the pill said back for a lost class"
            assert teacher.evaluate(PILL) != "back"
            # No reveal of the lost class stays on the projector.
            tools.wait_until(teacher, "() => document.querySelector('#step-reveal').hidden",
                             message="the lost class's reveal stays on the projector")
            tools.screenshot(teacher, f"class-lost-projector-{'presenter' if present else 'normal'}-ja",
                             full_page=False)
            # The phone: wait for the teacher's new code, in French.
            tools.wait_until(phone, "() => !document.querySelector('#class-over').hidden", timeout=30)
            assert words(phone.text_content("#class-over-text")) == words(texts("fr")["class_lost_wait"])
            assert phone.evaluate(BOX, "#class-over-text")["bottom"] <= 844
            assert phone.evaluate(PILL) != "back"
        finally:
            found = opener.close()
            server.stop()
        assert not found, "the page reported problems:\n" + "\n".join(found)
