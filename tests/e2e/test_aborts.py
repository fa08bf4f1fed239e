"""The page's own aborts: fast typing cancels request after request, on a one-worker server."""

import json
import random
import urllib.request

import pytest

pytestmark = pytest.mark.e2e

KEYSTROKES = 80  # 200 took 112 s of the suite; 80 still abort dozens of requests (32 of 70 in one run)
LONGEST = 16  # characters: long enough that answers take a while, short enough to draw quickly
DEBOUNCE_MS = 300  # more than the pages' BURST_MS (static/js/shared/burst.js), which a busy page waits after a key
CHARS = "白日依山尽黄河入海流欲穷千里目更上一层楼床前明月光疑是地上霜"
DRAWN_A = """() => { const gd = document.querySelector('.heatmap[data-line="a"][data-head="0"]');
    return gd && gd.data ? gd.data[0].z : null; }"""


def test_eighty_keystrokes_each_aborting_the_last_request(page, tools, server_url, server_log):
    compares = {"sent": 0, "aborted": 0}
    answers = []
    page.on("request", lambda r: r.url.endswith("/api/compare") and compares.update(sent=compares["sent"] + 1))
    page.on("requestfailed", lambda r: r.url.endswith("/api/compare")
            and compares.update(aborted=compares["aborted"] + 1))
    # Only answers the page received whole: an answer whose headers arrive just before the next keystroke
    # aborts it fires "response" but never "requestfinished".
    page.on("requestfinished", lambda r: r.url.endswith("/api/compare") and answers.append(r.response()))

    # A fake clock lets every keystroke outlast the page's debounce without waiting 300 ms for real:
    # each key sends its request at once, and that aborts the one before it if still out.
    page.clock.install()
    line = page.locator("#line-a")
    line.click()
    line.press("Control+a")
    rng = random.Random(0)
    for i in range(KEYSTROKES):
        # Up to LONGEST characters, then deletions and additions in turn.
        if i < LONGEST or i % 2 or not line.input_value():
            page.keyboard.type(rng.choice(CHARS))
        else:
            page.keyboard.press("Backspace")
        page.clock.run_for(DEBOUNCE_MS + 1)
    final = line.input_value()
    page.clock.run_for(2000)
    tools.wait_until(page, f"() => ({DRAWN_A})()?.length === {len(final)}", timeout=30,
                     message="the page never drew the last line")
    tools.wait_idle(page)
    print(f"\n{KEYSTROKES} keystrokes: {compares['sent']} compare requests, {compares['aborted']} aborted by the "
          f"next, {len(answers)} answered")
    # A keystroke that brings back the line last answered redraws that answer instead of asking again,
    # but it still aborts the request that was out.
    assert compares["sent"] >= KEYSTROKES // 2, "most keystrokes sent their own request"
    assert compares["aborted"] > 0, "some requests were aborted while out"

    # The answer for the final line equals a fresh request for the same body, and the page drew it. It need
    # not be the last one received: typing back the line answered before redraws that answer and drops the
    # request that was out, even if that request's answer had already arrived.
    finals = [r for r in answers if json.loads(r.request.post_data)["line_a"] == final]
    assert finals, "no answer was for the final line"
    last = finals[-1]
    body = json.loads(last.request.post_data)
    request = urllib.request.Request(server_url + "/api/compare", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        fresh = json.load(response)
    assert fresh == last.json()
    pattern = fresh["lines"][0]["attention"][0][0]  # layer 1, head 0: [query][key]
    drawn = page.evaluate(DRAWN_A)
    assert all(abs(drawn[q][k] - pattern[q][k]) < 1e-6 for q in range(len(final)) for k in range(q + 1))
    # The server is the same process: no worker died and was restarted behind the supervisor.
    with urllib.request.urlopen(server_url + "/healthz") as response:
        assert response.status == 200
    assert server_log().count("Started server process") == 1
