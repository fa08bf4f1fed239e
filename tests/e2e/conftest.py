"""Browser tests: the real app served by `heads-positions serve`, driven by the system chromium through Playwright.

Missing chromium or playwright is a failure, not a skip: CI must not go green without a browser.
Every page a test opens records console errors, page errors, Content-Security-Policy violations
and requests to other hosts; the test fails if there are any.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO_ROOT / "screenshots"
I18N = REPO_ROOT / "static" / "i18n"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Chromium 156 runs its whole browser UI even headless: every browser context (a window) loads the omnibox's
    # two WebUI popups in a renderer of their own, and a spare renderer is kept warm for the next navigation.
    # The tests open hundreds of contexts; without these, one context costs about half the CPU (measured:
    # six contexts on about:blank, 2.8 s of chromium's CPU with them, 1.2 s without).
    "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,SpareRendererForSitePerProcess",
]
SERVER_START_TIMEOUT = 90  # seconds: the lifespan loads the models
WAIT_TIMEOUT = 20  # seconds for any one condition in the page
POLL_MS = 50  # how often the page asks a waited condition again
# The page's side of Tools.wait_until: the condition's value as Python would judge it (an empty array or object is
# false there, true in JavaScript), boxed so that a value such as 0 is not taken for an answer; an error is kept.
# The condition must answer at once (not a promise: Playwright would take the promise itself for true).
WAITED = """(arg) => {{
  try {{
    const value = ({expression})(arg);
    const empty = value !== null && typeof value === "object" && Object.keys(value).length === 0;
    if (!value || empty) return false;
    window.__waitError = null;
    return {{ value }};
  }} catch (error) {{
    window.__waitError = String(error);
    return false;
  }}
}}"""
LAST_ERROR = "() => { const error = window.__waitError || null; window.__waitError = null; return error; }"
# Runs in every page before its own scripts: each CSP violation is kept in window.__cspViolations and
# also logged as a console error, so it fails the test even if the page navigates away afterwards.
CSP_LISTENER = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  const text = `${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`;
  window.__cspViolations.push(text);
  console.error(`CSP violation: ${text}`);
});
"""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _read_log(log, limit: int | None = 4000) -> str:
    log.seek(0)
    text = log.read().decode("utf-8", "replace")
    return text[-limit:] if limit else text


SERVER_LOG = {}  # "read": the server_url process's whole log so far, once it runs


@pytest.fixture
def server_log(server_url):
    """() -> the served app's log: `serve` restarts a worker that dies, and its log is where that shows."""
    return SERVER_LOG["read"]


@pytest.fixture(scope="session")
def server_url():
    """The app served the README's way: `heads-positions serve` from the venv, one worker. Its class store is a
    folder of its own (HP_DATA_DIR): the servers of parallel test processes (pytest -n) share no classes.db, so
    one's wrong codes from 127.0.0.1 never hold another's joins."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [str(Path(sys.executable).with_name("heads-positions")), "serve", "--port", str(port), "--workers", "1"]
    with tempfile.TemporaryFile() as log, tempfile.TemporaryDirectory(prefix="hp-e2e-") as data:
        # Its own process group, so a supervisor that will not stop is killed together with its worker.
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                env={**os.environ, "HP_DATA_DIR": data})
        try:
            deadline = time.monotonic() + SERVER_START_TIMEOUT
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"the app exited with code {proc.returncode} before answering /healthz:\n"
                                f"{_read_log(log)}")
                try:
                    with urllib.request.urlopen(f"{url}/healthz", timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"the app did not answer {url}/healthz within {SERVER_START_TIMEOUT} s:\n"
                                f"{_read_log(log)}")
                time.sleep(0.2)
            SERVER_LOG["read"] = lambda: _read_log(log, limit=None)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture(scope="session")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright for Python is missing: `pip install playwright` (or `pip install -e .[test]`). "
                    "Do not run `playwright install`; these tests use the system chromium.")
    executable = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if not Path(executable).is_file():
        pytest.fail(f"No chromium at {executable}: `apt-get install -y chromium fonts-noto-cjk`, "
                    "or point CHROMIUM_PATH at a chromium binary.")
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        except Exception as exc:  # noqa: BLE001 - any launch failure is a test failure with its reason
            pytest.fail(f"chromium at {executable} did not start: {exc}")
        yield browser
        browser.close()


class PageProblems:
    """Console errors, uncaught exceptions, CSP violations and off-site requests seen by one page."""

    def __init__(self, origin: str):
        self.origin = origin
        self.items: list[str] = []
        self.origins: set[str] = set()  # the http origins its main frame showed
        self.page = None

    def attach(self, page) -> None:
        """Listen to the page (its init script, CSP_LISTENER, is added once, where the page is made)."""
        self.page = page
        page.on("console", self._console)
        page.on("pageerror", self._page_error)
        # Watched, not routed: a route on every URL sends each request through this process and turns off the
        # browser's cache (Playwright's page.route), which made ten lesson pages load in 33 s instead of 17.
        # The machines that run these tests have no route to other hosts, so such a request fails as offline.
        page.on("request", self._request)
        page.on("framenavigated", self._navigated)

    def detach(self) -> None:
        for event, listener in (("console", self._console), ("pageerror", self._page_error),
                                ("request", self._request), ("framenavigated", self._navigated)):
            self.page.remove_listener(event, listener)

    def _page_error(self, exc) -> None:
        self.items.append(f"page error: {exc}")

    def _navigated(self, frame) -> None:
        if frame.parent_frame is None and frame.url.startswith("http"):
            self.origins.add("/".join(frame.url.split("/", 3)[:3]))

    def collect_csp(self) -> None:
        """Read the page's own record too, in case a violation was not logged to the console."""
        if self.page is None or self.page.is_closed():
            return
        try:
            found = self.page.evaluate("() => window.__cspViolations || []")
        except Exception:  # noqa: BLE001 - a page that crashed reports that through pageerror
            return
        for text in found:
            if not any(f"CSP violation: {text}" in item for item in self.items):
                self.items.append(f"CSP violation: {text}")

    def _console(self, message) -> None:
        if message.type == "error":
            where = message.location.get("url", "") if message.location else ""
            self.items.append(f"console error: {message.text} {where}".strip())

    def _request(self, request) -> None:
        url = request.url
        # The page must work offline: no CDN, no fonts from elsewhere (data: and blob: stay in the page).
        if not (url.startswith((self.origin + "/", "data:", "blob:")) or url == self.origin):
            self.items.append(f"request to another host: {url}")


class PagePool:
    """Pages kept open from one test to the next, each in a browser context of its own.

    A new page starts a new renderer process, which parses and compiles the app's modules and Plotly's bundle
    again with cold caches: 36 lesson steps opened and revealed cost 39 s of CPU in a new page each and 22 s in
    one page (measured in a cgroup, which counts the renderers that exit). A page goes back to the pool only as
    a test found it: its listeners are the ones it had, it has no route, it showed one origin, and its context holds
    no other page; its session storage is emptied, it is left on about:blank and its history reset to that one entry.
    Before it is handed out again, every other storage of the origin it is about to open is cleared
    (Storage.clearDataForOrigin)."""

    def __init__(self, browser):
        self.browser = browser
        self.free: dict[str, list] = {}  # by locale, which a context fixes
        self.cdp = {}  # page -> its devtools session

    def take(self, origin: str, width: int, height: int, locale: str):
        """(page, its listener counts before the test)."""
        if self.free.get(locale):
            page = self.free[locale].pop()
            page.set_viewport_size({"width": width, "height": height})
        else:
            page = fresh_page(self.browser, width, height, locale)
            self.cdp[page] = page.context.new_cdp_session(page)
        self.cdp[page].send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"})
        return page, listener_counts(page)

    def give_back(self, page, locale: str, counts: dict, seen: "PageProblems") -> None:
        from playwright.sync_api import Error as PlaywrightError  # imported here: see browser() on its absence

        context = page.context
        kept = (not page.is_closed() and len(context.pages) == 1 and listener_counts(page) == counts
                and not page._impl_obj._routes and not context._impl_obj._routes and len(seen.origins) <= 1)
        if kept:
            try:
                page.evaluate("() => { try { sessionStorage.clear(); } catch (e) { /* about:blank */ } }")
                page.goto("about:blank")
                # A fresh tab's history: Chromium keeps 50 entries, and a test that counts its own (history.length
                # after a pushState) must not meet the entries of the tests before it.
                self.cdp[page].send("Page.resetNavigationHistory")
                page.mouse.move(0, 0)
            except PlaywrightError:
                kept = False
        if kept:
            self.free.setdefault(locale, []).append(page)
        else:
            self.cdp.pop(page, None)
            context.close()


def fresh_page(browser, width: int, height: int, locale: str):
    """A page in a new browser context, with the CSP listener every page of these tests runs first."""
    page = browser.new_context(viewport={"width": width, "height": height}, locale=locale).new_page()
    page.add_init_script(CSP_LISTENER)
    return page


def listener_counts(page) -> dict:
    """How many listeners the page has for each event: a test that added one of its own does not pass its page on."""
    events = page._impl_obj
    return {event: events.listener_count(event) for event in events.event_names()}


class PageOpener:
    """open_page(path="/", width=1280, height=900, locale="zh-CN") -> a loaded Playwright page.

    On the explorer it waits for the first render; open_page(path, explorer=False) opens other pages
    (/docs, /redoc) with the same checks and waits only for the load event.

    open_page(path, routes={"**/api/x": handler}) routes requests before the page loads (in a context of its own).
    open_page.allow("status of 422") lets console errors containing that text pass, for a test
    that provokes them on purpose (chromium logs every failed fetch as a console error).
    With a pool (PagePool), pages come from it and go back to it at close().
    """

    def __init__(self, browser, server_url: str, pool: PagePool | None = None):
        self.browser = browser
        self.server_url = server_url
        self.pool = pool
        self.contexts = []
        self.taken = []  # (page, locale, listener counts, PageProblems): pages of the pool
        self.problems: list[PageProblems] = []
        self.allowed: list[str] = []

    def __call__(self, path: str = "/", width: int = 1280, height: int = 900, locale: str = "zh-CN",
                 explorer: bool = True, routes: dict | None = None):
        seen = PageProblems(self.server_url)
        if self.pool and not routes:
            page, counts = self.pool.take(self.server_url, width, height, locale)
            self.taken.append((page, locale, counts, seen))
        else:
            page = fresh_page(self.browser, width, height, locale)
            self.contexts.append(page.context)
        page.set_default_timeout(WAIT_TIMEOUT * 1000)
        page.set_default_navigation_timeout(WAIT_TIMEOUT * 1000)
        seen.attach(page)
        self.problems.append(seen)
        for pattern, handler in (routes or {}).items():
            page.route(pattern, handler)
        page.goto(self.server_url + path)
        if explorer:
            Tools.wait_rendered(page, 0)
        return page

    def allow(self, text: str) -> None:
        self.allowed.append(text)

    def close(self) -> list[str]:
        for seen in self.problems:
            seen.collect_csp()
            if not seen.page.is_closed():
                seen.detach()
        for page, locale, counts, seen in self.taken:
            self.pool.give_back(page, locale, counts, seen)
        self.taken = []
        for context in self.contexts:
            context.close()
        found = [item for seen in self.problems for item in seen.items]
        return [item for item in found if not any(text in item for text in self.allowed)]


@pytest.fixture(scope="session")
def page_pool(browser) -> PagePool:
    return PagePool(browser)


@pytest.fixture
def open_page(browser, server_url, page_pool):
    opener = PageOpener(browser, server_url, page_pool)
    yield opener
    found = opener.close()
    assert not found, "the page reported problems:\n" + "\n".join(found)


@pytest.fixture
def page(open_page):
    return open_page()


# ---- helpers for the tests ----------------------------------------------------------------------


class Tools:
    """Waiting, reading and screenshot helpers, handed to the tests by the `tools` fixture."""

    @staticmethod
    def reveal(page, selector: str, timeout: float = WAIT_TIMEOUT) -> None:
        """Scroll a lazy panel into view and wait until it has drawn. A panel above it may grow after the
        scroll (a gallery drawing, the training-step slider appearing) and push it out of view before it
        starts loading, so it is scrolled to again while it has not started."""
        page.locator(selector).scroll_into_view_if_needed()
        Tools.wait_until(page, """(s) => {
            const panel = document.querySelector(s);
            if (panel.dataset.state === "idle") panel.scrollIntoView({ block: "center" });
            return panel.dataset.state === "ready";
        }""", selector, timeout, message=f"{selector} never became ready")

    @staticmethod
    def wait_until(page, expression: str, arg=None, timeout: float = WAIT_TIMEOUT, message: str = ""):
        """Wait until the function `expression` returns a value that Python reads as true (an empty list or object
        is not), and return it. The page polls it itself every POLL_MS (Playwright's wait_for_function): asking
        from here every 50 ms cost chromium, Playwright's driver and this process 3.7 ms of CPU per question,
        7% of a core for every test waiting. A navigation does not end the wait: it goes on in the new document.
        An expression that throws meanwhile (the old document gone, the new one without its elements yet: CI once
        read a null #results) is asked again; its last error is reported if the time runs out."""
        from playwright.sync_api import Error as PlaywrightError  # here: see browser() on its absence
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            found = page.wait_for_function(WAITED.format(expression=expression), arg=arg, polling=POLL_MS,
                                           timeout=timeout * 1000)
        except PlaywrightTimeout:
            try:
                error = page.evaluate(LAST_ERROR)
            except PlaywrightError as caught:  # the page itself is gone: that is the last error
                error = caught
            reason = message or f"timed out after {timeout} s waiting for: {expression} (arg={arg!r})"
            raise AssertionError(f"{reason}; last error: {error}" if error else reason) from None
        value = found.json_value()["value"]
        found.dispose()
        return value

    @staticmethod
    def wait_for(page, condition, message: str, timeout: float = WAIT_TIMEOUT) -> None:
        """Wait until condition() holds in this process, as a route handler's list of held requests: Playwright's sync
        API hands the page's events (a route, a request) to Python only while it waits on the page, so an event that
        already happened in the browser may not have reached its handler yet."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(message)
            page.wait_for_timeout(20)

    @staticmethod
    def render_count(page) -> int:
        return page.evaluate("() => Number(document.querySelector('#results').dataset.renderCount || 0)")

    @classmethod
    def commit_step(cls, page, url: str, choice: str) -> int:
        """Open a lesson step (url), commit `choice` and wait for its answer: the render count after it."""
        page.goto(url)
        count = cls.wait_rendered(page, 0)
        page.check(f"[data-question] input[value='{choice}']")
        page.click("[data-commit]")
        return cls.wait_rendered(page, count)

    @classmethod
    def wait_rendered(cls, page, after: int) -> int:
        """Wait until the page has drawn more than `after` times and is not busy; return the new count."""
        return cls.wait_until(
            page,
            """after => {
                const results = document.querySelector('#results');
                const n = Number(results.dataset.renderCount || 0);
                return n > after && results.getAttribute('aria-busy') === 'false' ? n : 0;
            }""",
            after,
            message=f"the page did not redraw (render count stayed at {after})",
        )

    @classmethod
    def wait_idle(cls, page) -> None:
        """Wait until no request is out and no render is drawing."""
        cls.wait_until(page, "() => document.querySelector('#results').getAttribute('aria-busy') === 'false'",
                       message="the page stayed busy")

    @classmethod
    def redraw_after(cls, page, action) -> int:
        before = cls.render_count(page)
        action()
        return cls.wait_rendered(page, before)

    @staticmethod
    def texts(lang: str) -> dict:
        return json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))

    @staticmethod
    def screenshot(page, name: str, full_page: bool = True, always: bool = False) -> Path | None:
        """The whole page, or (full_page=False) the screen as the viewer sees it, scrolled where it is, saved in
        screenshots/ for a person to look at when HP_SCREENSHOTS=1. No test reads them back, and a full page
        of charts costs the browser seconds of CPU on a loaded machine (one timed out at 20 s "waiting for
        fonts"), so a plain run takes none; `always` takes one anyway, for a test about to fail."""
        if not (always or os.environ.get("HP_SCREENSHOTS")):
            return None
        SCREENSHOTS.mkdir(exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path


@pytest.fixture(scope="session")
def tools() -> Tools:
    return Tools()
