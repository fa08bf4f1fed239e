"""Results the teacher finds again (issue 38), in real browsers: the end dialog says how long the server keeps them;
after "End" and a reload the teacher's page lists the class, and its two CSV files downloaded from the list equal
the API's; the results link (the token after the #) opens the summary in another browser; "delete now" asks,
deletes the results on the server, and the class leaves the list; the list and its files outlive a server
restart."""

import json
import tempfile
import urllib.error
import urllib.request

import pytest
from class_pages import class_app, join_phone, start_class, visible, wait_panel
from class_pages import lesson_texts as texts
from class_servers import served

pytestmark = pytest.mark.e2e

STEP = 4  # 我打你 / 你打我: same or different
VOTES = {"fr-FR": "same", "ja-JP": "different"}


@pytest.fixture(scope="module")
def server_url():
    with class_app() as url:
        yield url


def api(server_url: str, code: str, token: str, path: str, method: str = "GET") -> tuple[int, bytes]:
    request = urllib.request.Request(f"{server_url}/api/classes/{code}{path}", method=method,
                                     headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def downloaded(page, selector: str) -> bytes:
    """The file the button at `selector` downloads; the page asked for it as CSV (it sent Accept: application/json)."""
    with page.expect_request("**/api/classes/*/*.csv*") as asked, page.expect_download() as download:
        page.click(selector)
    accept = asked.value.headers["accept"]
    assert accept.split(",")[0].strip() == "text/csv", accept
    return open(download.value.path(), "rb").read()


def test_after_the_end_and_a_reload_the_teacher_finds_the_class_again(open_page, server_url, tools):
    # The teacher's last read of the counts may cross the end (404, which the page ignores once the class ended).
    open_page.allow(f"status of 404 (Not Found) {server_url}/api/classes/")
    teacher, code, join = start_class(open_page, tools, STEP)
    token = json.loads(teacher.evaluate("() => localStorage.getItem('heads-positions.class.teacher')"))["token"]
    for locale, choice in VOTES.items():
        phone = join_phone(open_page, tools, join, width=390, height=844, locale=locale)
        wait_panel(phone, tools, "step", str(STEP))
        phone.check(f"[data-question] input[value='{choice}']")
        phone.click("[data-commit]")
        wait_panel(phone, tools, "mine", choice)
    wait_panel(teacher, tools, "answered", str(len(VOTES)))
    teacher.click("#class-reveal")
    wait_panel(teacher, tools, "revealed", "true")

    # The dialog says the server's own period: HP_RESULTS_DAYS, 7 days unless set.
    open_page.allow(f"status of 404 (Not Found) {server_url}/api/classes/{code}")  # a read crossing the end: end_class
    teacher.click("#class-end")
    assert teacher.text_content("#class-end-text") == texts("en")["class_end_confirm"]["other"].replace("{days}", "7")
    teacher.click("#class-end-yes")
    teacher.wait_for_selector(f"#class-summary li[data-step='{STEP}']")
    link = f"/lesson?lang=en#results={code}&token={token}"
    assert teacher.get_attribute("#class-summary-link", "href") == server_url + link
    assert teacher.url == server_url + link, "the address bar holds the link to bookmark"

    teacher.reload()
    row = f"#class-past li[data-code='{code}']"
    teacher.wait_for_selector(row)
    assert visible(teacher, row)
    facts = teacher.text_content(f"{row} .lesson-class__past-facts")
    assert facts.startswith(code) and "2 students" in facts and "1 question" in facts, facts
    for file in ("results", "answers"):
        status, expected = api(server_url, code, token, f"/{file}.csv?lang=en")
        assert status == 200
        assert downloaded(teacher, f"{row} [data-past='{file}']") == expected, f"{file}.csv differs from the API's"
    teacher.click(f"{row} [data-past='summary']")
    teacher.wait_for_selector(f"#class-summary li[data-step='{STEP}'] li[data-round='1']")
    assert downloaded(teacher, "#class-download-answers") == api(server_url, code, token, "/answers.csv?lang=en")[1]
    tools.screenshot(teacher, "class-teacher-past-classes")

    # The bookmarked link opens the summary in a browser that never saw the class; the server's logs never
    # saw the token (a fragment is not sent).
    elsewhere = open_page(link, locale="ja-JP", explorer=False)
    elsewhere.wait_for_selector(f"#class-summary li[data-step='{STEP}'] li[data-round='1']")
    assert elsewhere.text_content("#class-summary-title") == texts("en")["class_summary_title"].replace("{code}", code)

    # "Delete now" asks first; "keep them" keeps them.
    teacher.click("#class-summary-close")
    assert teacher.url == server_url + "/lesson?lang=en" or "#" not in teacher.url
    teacher.click(f"{row} [data-past='delete']")
    assert teacher.text_content("#class-delete-text") == texts("en")["class_delete_confirm"].replace("{code}", code)
    teacher.click("#class-delete-no")
    assert api(server_url, code, token, "/results")[0] == 200 and visible(teacher, row)
    teacher.click(f"{row} [data-past='delete']")
    teacher.click("#class-delete-yes")
    tools.wait_until(teacher, "(s) => !document.querySelector(s)", row, message="the deleted class stayed listed")
    assert api(server_url, code, token, "/results")[0] == 404
    teacher.reload()
    teacher.wait_for_selector("[data-class-start]")
    assert teacher.query_selector(row) is None


@pytest.mark.slow
def test_the_list_and_its_files_outlive_a_server_restart(browser, open_page, tools):
    with tempfile.TemporaryDirectory(prefix="hp-results-") as folder, \
            served({"HP_DATA_DIR": folder, "HP_CLASSES_PER_HOUR": "1000"}) as server:
        opener = type(open_page)(browser, server.url, open_page.pool)  # pages of this server, checked as open_page's
        for expected in ("ERR_CONNECTION_REFUSED", "ERR_CONNECTION_RESET", "ERR_EMPTY_RESPONSE",
                         "ERR_INCOMPLETE_CHUNKED_ENCODING", "status of 503", "status of 404"):
            opener.allow(expected)  # the restart, as the pages live through it
        try:
            teacher, code, join = start_class(opener, tools, STEP)
            token = json.loads(teacher.evaluate("() => localStorage.getItem('heads-positions.class.teacher')"))["token"]
            phone = join_phone(opener, tools, join, width=390, height=844, locale="fr-FR")
            wait_panel(phone, tools, "step", str(STEP))
            phone.check("[data-question] input[value='same']")
            phone.click("[data-commit]")
            wait_panel(teacher, tools, "answered", "1")
            teacher.click("#class-end")
            teacher.click("#class-end-yes")
            teacher.wait_for_selector(f"#class-summary li[data-step='{STEP}']")
            server.stop()
            server.start()
            teacher.goto(f"{server.url}/lesson?lang=en")
            row = f"#class-past li[data-code='{code}']"
            teacher.wait_for_selector(row)
            for file in ("results", "answers"):
                status, expected = api(server.url, code, token, f"/{file}.csv?lang=en")
                assert status == 200 and downloaded(teacher, f"{row} [data-past='{file}']") == expected
        finally:
            found = opener.close()
        assert not found, "the page reported problems:\n" + "\n".join(found)
