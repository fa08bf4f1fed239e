"""What the class-mode browser tests share (tests/e2e/test_class*.py): their own served app, and waits on what
the class panel says. It lives beside class_servers.py, on pytest's pythonpath."""

import json
import tempfile
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from class_servers import served

LESSON_I18N = Path(__file__).resolve().parents[2] / "static" / "i18n" / "lesson"


@contextmanager
def class_app():
    """An app of the module's own: class tests start more classes from 127.0.0.1 than HP_CLASSES_PER_HOUR's
    default 10 allows one address, and keep them in a folder of their own. Yields its URL."""
    with tempfile.TemporaryDirectory(prefix="hp-class-e2e-") as folder, \
            served({"HP_DATA_DIR": folder, "HP_CLASSES_PER_HOUR": "1000"}) as server:
        yield server.url


def wait_panel(page, tools, name: str, value: str, timeout: float = 20) -> None:
    tools.wait_until(page, "([name, value]) => document.querySelector('#class-panel').dataset[name] === value",
                     [name, value], timeout=timeout, message=f"the class panel's {name} never became {value!r}")


def wait_connection(page, tools, state: str, timeout: float = 20) -> None:
    tools.wait_until(page, "(s) => { const n = document.querySelector('[data-class-connection]');"
                           " return !n.hidden && n.dataset.classConnection === s; }", state, timeout=timeout,
                     message=f"the page never said {state!r}")


def end_class(open_page, teacher, code: str) -> None:
    """The teacher ends the class (the dialog asks first). The teacher's page reads the class's counts again after
    each event (session.js refreshCounts); a read in flight as the class ends is answered 404, which the page takes
    for the end, and which chromium logs as a console error: that one is let pass, no other."""
    origin = "/".join(teacher.url.split("/", 3)[:3])
    open_page.allow(f"status of 404 (Not Found) {origin}/api/classes/{code}")
    teacher.click("#class-end")
    teacher.click("#class-end-yes")


def lesson_texts(lang: str) -> dict:
    return json.loads((LESSON_I18N / f"{lang}.json").read_text(encoding="utf-8"))


def panel(page, name: str) -> str:
    return page.evaluate("(name) => document.querySelector('#class-panel').dataset[name] ?? ''", name)


def wait_step(page, tools, n: int) -> None:
    tools.wait_until(page, "(n) => document.querySelector('#results').dataset.step === String(n)", n,
                     message=f"the page never showed step {n}")


def visible(page, selector: str) -> bool:
    return page.evaluate("(s) => { const n = document.querySelector(s); return !!n && !n.closest('[hidden]') "
                         "&& n.getClientRects().length > 0; }", selector)


def start_class(open_page, tools, step: int, width: int = 1280, height: int = 900, lang: str = "en"):
    """A teacher's page on `step` in `lang` (English) with a class started there: (page, code, join path)."""
    locale = {"en": "en-US", "fr": "fr-FR", "ja": "ja-JP", "zh": "zh-CN"}[lang]
    teacher = open_page(f"/lesson?step={step}&lang={lang}", width=width, height=height, locale=locale,
                        explorer=False)
    tools.wait_until(teacher, "() => Number(document.querySelector('#results').dataset.renderCount) > 0")
    teacher.click("[data-class-start]")
    tools.wait_until(teacher, "() => /^[A-Z2-9]{6}$/.test(document.querySelector('[data-class-code]').textContent)")
    code = teacher.text_content("[data-class-code]")
    wait_panel(teacher, tools, "step", str(step))
    return teacher, code, f"/lesson?class={code}"


def class_state(server_url: str, code: str) -> dict:
    """GET /api/classes/{code}, as any student sees it."""
    with urllib.request.urlopen(f"{server_url}/api/classes/{code}", timeout=10) as response:
        return json.loads(response.read())


def join_phone(open_page, tools, join: str, name: str = "", **page):
    """A phone opens the class's join link, which asks a name first (issue 38): `name`, or skipped for the server's
    friendly one in the phone's language. open_page's arguments (width, height, locale) pass through."""
    phone = open_page(join, explorer=False, **page)
    tools.wait_until(phone, "() => document.querySelector('[data-class-first]').checkVisibility()",
                     message="the join link did not ask a name first")
    if name:
        phone.fill("#class-first-name", name)
        phone.click("#class-first-join")
    else:
        phone.click("#class-first-skip")
    return phone
