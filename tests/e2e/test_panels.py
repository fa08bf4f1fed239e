"""The panels about how position is encoded: RoPE pairs, relative distance, the causal-mask control,
loss by length, position similarity, training curves, export, lazy loading and long lines."""

import json
import math
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest

pytestmark = pytest.mark.e2e

LAZY = {"relative": "#panel-relative", "length": "#panel-length", "positions": "#panel-positions",
        "training": "#panel-training"}
LAZY_APIS = ("/api/relative", "/api/positions", "/api/training", "/api/length")
DEPTH_ROWS = """() => Array.from(document.querySelectorAll('#depth-table tbody tr'), (tr) =>
    Array.from(tr.querySelectorAll('td'), (td) => Number(td.dataset.value)))"""
TRACES = """(sel) => { const gd = document.querySelector(sel);
    return gd && gd.data ? gd.data.map((t) => ({meta: t.meta ?? null, x: t.x, y: t.y})) : null; }"""
REQUESTED = """() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)"""
# A 200-character line, past the 128 of pos_emb: the page then asks for one layer at a time.
LONG_A = ("白日依山尽黄河入海流欲穷千里目更上一层楼" * 10)[:200]
LONG_B = ("床前明月光疑是地上霜举头望明月低头思故乡" * 10)[:200]


def query(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query, keep_blank_values=True).items()}


def choose_position(tools, page, value: str):
    tools.redraw_after(page, lambda: page.check(f'input[name="position"][value="{value}"]'))


def reveal(tools, page, name: str) -> None:
    """Scroll a lazy panel into view and wait until it has drawn its data (or its note)."""
    tools.reveal(page, LAZY[name])


def drawn(page, selector: str) -> bool:
    return page.evaluate("(s) => Boolean(document.querySelector(s)?.querySelector('.main-svg'))", selector)


def fetch(server_url: str, path: str):
    with urllib.request.urlopen(server_url + path) as response:
        return json.load(response)


def serve_nothing_trained(page, server_url: str) -> None:
    """Answer the three results routes as a copy of the app with no trained weights would."""
    positions = dict(fetch(server_url, "/api/positions"), learned=None)
    answers = {"training": {"runs": []}, "length": {"runs": []}, "positions": positions}

    def answer(body):
        return lambda route: route.fulfill(json=body)

    for name, body in answers.items():
        page.route(f"**/api/{name}", answer(body))


def test_lazy_panels_wait_until_they_are_seen(open_page, tools, server_url):
    page = open_page()
    tools.wait_idle(page)
    asked = page.evaluate(REQUESTED)
    assert "/api/compare" in asked and "/api/options" in asked
    assert not [p for p in asked if p in LAZY_APIS], f"first paint fetched below-the-fold data: {asked}"
    with page.expect_request("**/api/relative") as sent:
        reveal(tools, page, "relative")
    # The chart compares all three modes: trained weights only when all three ship, as the page's default.
    with urllib.request.urlopen(server_url + "/api/options") as response:
        trained = json.load(response)["trained"]
    body = json.loads(sent.value.post_data)
    if {"learned", "rope", "none"} <= set(trained):
        assert body["weights"] == "trained" and "n_head" not in body
    else:
        assert body["weights"] == "random" and body["n_head"] == 4
    for name in LAZY:
        reveal(tools, page, name)
    asked = page.evaluate(REQUESTED)
    for api in LAZY_APIS:
        assert api in asked, f"{api} was never fetched"
    # Fetched once per page: coming back to the panels after a redraw asks nothing again.
    page.evaluate("window.scrollTo(0, 0)")
    tools.redraw_after(page, lambda: page.select_option("#layer", "2"))
    for name in ("length", "positions", "training"):
        page.locator(LAZY[name]).scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    asked = page.evaluate(REQUESTED)
    for api in ("/api/positions", "/api/training", "/api/length"):
        assert asked.count(api) == 1, f"{api} fetched {asked.count(api)} times"


def test_every_panel_draws_in_every_mode(open_page, tools, server_url):
    page = open_page("/?weights=random")
    with urllib.request.urlopen(server_url + "/api/training") as response:
        has_training = bool(json.load(response)["runs"])
    with urllib.request.urlopen(server_url + "/api/length") as response:
        has_length = bool(json.load(response)["runs"])
    for mode in ("learned", "rope", "none"):
        if mode != "learned":
            choose_position(tools, page, mode)
        assert page.locator("#depth-plot.js-plotly-plot").count() == 1
        assert page.is_visible("#panel-rope") == (mode == "rope")
        if mode == "rope":
            for plot in ("#rope-plot", "#rope-pair-fast", "#rope-pair-slow"):
                assert drawn(page, plot), f"{plot} is drawn"
            pairs = page.evaluate("() => document.querySelector('#rope-pair-fast').data[1]")
            angles = page.evaluate("() => document.querySelector('#rope-plot').data[0].text")
            assert len(pairs["x"]) == 5, "one point per position of the line"
            assert abs(pairs["x"][1] - math.cos(1.0)) < 1e-6 and abs(pairs["y"][1] - math.sin(1.0)) < 1e-6
            assert len(angles) == 5
            labels = page.evaluate("() => document.querySelector('#rope-pair-fast').data[2].text")
            assert labels[0] == "白", "the points are labelled with line A's characters"
            page.select_option("#rope-pair", "15")
            tools.wait_until(page, "() => document.querySelector('#rope-pair-slow-caption').textContent.includes('15')")
        # Without positions the two residual charts would be one run twice: the panel shows one.
        assert page.is_visible("#residual-item-with") == (mode != "none")
        assert page.is_visible("#residual-text-none") == (mode == "none")
        assert drawn(page, "#residual-without")
        for name in LAZY:
            reveal(tools, page, name)
        assert drawn(page, "#rel-plot")
        assert drawn(page, "#sim-rope")
        assert page.is_visible("#length-empty") != has_length
        assert page.is_visible("#training-empty") != has_training
        if has_length:
            assert drawn(page, "#length-plot")
        if has_training:
            assert drawn(page, "#training-heads") and drawn(page, "#training-modes")
        page.evaluate("window.scrollTo(0, 0)")
    tools.screenshot(page, "desktop-panels-none")


@pytest.mark.parametrize("empty", [False, True], ids=["results", "nothing-trained"])
def test_shipped_results(open_page, tools, server_url, empty):
    page = open_page("/?lang=en")
    if empty:
        serve_nothing_trained(page, server_url)
    t = tools.texts("en")
    for name in ("length", "positions", "training"):
        reveal(tools, page, name)
    if empty:
        for note in ("#length-empty", "#training-empty", "#sim-learned-empty"):
            assert page.is_visible(note), f"{note} explains the missing results"
        assert page.text_content("#length-empty") == t["results_empty"]
        assert page.is_hidden("#length-body") and page.is_hidden("#training-body") and page.is_hidden("#sim-learned")
        assert drawn(page, "#sim-rope"), "RoPE's similarity needs no training"
        return
    length = page.evaluate(TRACES, "#length-plot")
    assert [tr["meta"] for tr in length] == ["learned", "rope", "none"]
    assert [len(tr["y"]) for tr in length] == [128, 256, 256]
    marker = page.evaluate("() => document.querySelector('#length-plot').layout.shapes[0].x0")
    assert 127 <= marker <= 128, "a vertical line at the training length"
    heads = page.evaluate(TRACES, "#training-heads")
    modes = page.evaluate(TRACES, "#training-modes")
    assert [tr["meta"] for tr in heads] == ["1", "4", "8"]
    modes_order = ["learned", "rope", "none"]
    assert [tr["meta"] for tr in modes] == [*modes_order, *(f"snapshot-{p}" for p in modes_order)]
    # each snapshot's whole-split loss as dots on its mode's curve, the API's figures
    timeline = fetch(server_url, "/api/snapshots")
    by_mode = {m["position"]: m["val_loss"] for m in timeline["models"]}
    for dots in modes[3:]:
        assert dots["x"] == timeline["steps"] and dots["y"] == by_mode[dots["meta"].removeprefix("snapshot-")]
    rows = page.evaluate("""() => Array.from(document.querySelectorAll('#training-table tbody tr'),
        (tr) => Array.from(tr.children, (c) => c.textContent))""")
    assert len(rows) == 5, "each run once, the shared pos_emb 4-head run included"
    runs = fetch(server_url, "/api/training")["runs"]
    finals = {f"{run.get('final_val_loss', run['val_loss'][-1]):.3f}" for run in runs}
    assert {row[3] for row in rows} == finals, "final_val_loss when recorded, else the last value"
    assert {row[2] for row in rows} == {f"{run['steps'][-1]:,}" for run in runs}, "steps grouped as English writes them"
    shipped_length = {run["position"]: run["loss"] for run in fetch(server_url, "/api/length")["runs"]}
    assert [tr["y"] for tr in length] == [shipped_length[p] for p in ("learned", "rope", "none")]
    assert drawn(page, "#sim-learned") and drawn(page, "#sim-rope")
    rope = page.evaluate("() => document.querySelector('#sim-rope').data[0].z")
    assert len(rope) == 128 and abs(rope[10][20] - rope[40][50]) < 1e-5, "RoPE's similarity depends on m - n only"
    tools.screenshot(page, "desktop-results")


def test_a_failed_head_split_says_so_until_it_loads(open_page, tools):
    """The lesson's 32-wide column comes from its own request: if that fails, the panel says so, and the
    next answer asks again."""
    failing = {"on": True}

    def head_split(route):
        if failing["on"]:
            route.fulfill(status=503, body="unavailable")
        else:
            route.fallback()

    open_page.allow("status of 503")
    open_page.allow("HTTP 503")  # the page's own log of the failure
    page = open_page("/?lang=en", routes={"**/api/head-split*": head_split})
    t = tools.texts("en")
    error = page.locator("#panel-heads .js-load-error")
    tools.wait_until(page, "() => !document.querySelector('#panel-heads .js-load-error').hidden",
                     message="the failed request was never reported")
    assert error.is_visible() and error.inner_text() == t["shipped_error"]
    assert page.locator('#split-lesson [data-shape="heads"]').inner_text() == ""
    failing["on"] = False
    choose_position(tools, page, "rope")  # a new answer
    tools.wait_until(page, "() => document.querySelector('#split-lesson [data-shape=heads]').textContent !== ''",
                     message="the lesson's column never filled")
    assert not error.is_visible()
    assert page.locator('#split-lesson [data-shape="heads"]').inner_text() == "(1, 4, 5, 8)"


def test_causal_switch_round_trips_and_silences_the_leak(open_page, tools):
    page = open_page("/?pos=none&weights=random")
    with_mask = page.evaluate(DEPTH_ROWS)
    # Under none there is nothing to add: one column, "without position", and its header alone.
    assert all(len(row) == 1 for row in with_mask) and page.is_hidden('#depth-table th[data-key="with"]')
    assert with_mask[1][0] > 1e-4, "2 layers without positions: the mask leaks order"
    assert page.is_hidden("#depth-causal-note") and "causal" not in query(page)

    with page.expect_request("**/api/compare") as sent:
        tools.redraw_after(page, lambda: page.uncheck("#causal"))
    assert json.loads(sent.value.post_data)["causal"] is False
    assert query(page)["causal"] == "0"
    rows = page.evaluate(DEPTH_ROWS)
    assert all(v < 1e-5 for row in rows for v in row), f"mask off, no positions: rounding only at every depth {rows}"
    assert page.is_visible("#depth-causal-note") and page.is_visible("#attn-causal-note")
    # Nothing is masked: every cell of the pattern has a value.
    z = page.evaluate("() => document.querySelector('.heatmap[data-line=\"a\"][data-head=\"0\"]').data[0].z")
    assert all(v is not None for row in z for v in row)

    page.reload()
    tools.wait_rendered(page, 0)
    assert not page.is_checked("#causal") and query(page)["causal"] == "0"
    assert all(v < 1e-5 for row in page.evaluate(DEPTH_ROWS) for v in row)

    tools.redraw_after(page, lambda: page.check("#causal"))
    assert "causal" not in query(page)
    assert page.evaluate(DEPTH_ROWS)[1][0] > 1e-4
    tools.redraw_after(page, page.go_back)
    assert not page.is_checked("#causal") and query(page)["causal"] == "0"


def test_relative_distance_chart(open_page, tools):
    page = open_page("/?weights=random")
    with page.expect_request("**/api/relative") as sent:
        reveal(tools, page, "relative")
    body = json.loads(sent.value.post_data)
    assert body["first"] == "明" and body["second"] == "月" and body["weights"] == "random" and body["n_head"] == 4
    traces = page.evaluate(TRACES, "#rel-plot")
    assert [tr["meta"] for tr in traces] == ["learned", "rope", "none"]
    assert all(tr["x"][:3] == [0, 6, 12] for tr in traces)

    def spread(values):
        return max(values) - min(values)

    by_mode = {tr["meta"]: tr["y"] for tr in traces}
    assert spread(by_mode["rope"]) < 1e-5, "under RoPE the score depends only on the distance"
    assert spread(by_mode["none"]) < 1e-5
    assert spread(by_mode["learned"]) > 1e-3, "pos_emb makes it depend on the absolute place"

    # Another head, another character, and the page's head count: each redraws from the right answer.
    count = int(page.get_attribute("#rel-plot", "data-render-count"))
    page.select_option("#rel-head", "3")
    tools.wait_until(page, "(n) => Number(document.querySelector('#rel-plot').dataset.renderCount) > n", count)
    assert "3" in page.text_content("#rel-caption")
    with page.expect_request("**/api/relative") as sent:
        page.fill("#rel-second", "光")
        tools.wait_until(page, "() => document.querySelector('#rel-caption').textContent.includes('光')")
    assert json.loads(sent.value.post_data)["second"] == "光"
    assert page.input_value("#rel-second") == "光"
    page.locator("#rel-first").click()
    page.keyboard.type("风")  # the box keeps one character: the one just typed
    assert page.input_value("#rel-first") == "风"
    # Its own 4-head request first, so that the one caught below is the 8-head one.
    tools.wait_until(page, "() => document.querySelector('#rel-caption').textContent.includes('风')"
                           " && document.querySelector('#panel-relative').dataset.state === 'ready'")
    with page.expect_request("**/api/relative") as sent:
        page.evaluate("window.scrollTo(0, 0)")
        tools.redraw_after(page, lambda: page.select_option("#heads", "8"))
    assert json.loads(sent.value.post_data)["n_head"] == 8
    tools.wait_until(page, "() => document.querySelector('#panel-relative').dataset.state === 'ready'")
    assert page.eval_on_selector_all("#rel-head option", "opts => opts.length") == 8
    flat = {tr["meta"]: spread(tr["y"]) for tr in page.evaluate(TRACES, "#rel-plot")}
    assert flat["rope"] < 1e-5


def test_exports(open_page, tools):
    page = open_page("/?lang=en")
    t = tools.texts("en")
    with page.expect_download() as download:
        page.click("#download-json")
    assert download.value.suggested_filename.endswith(".json")
    data = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert [line["text"] for line in data["lines"]] == ["白日依山尽", "山依日白尽"]
    assert data["model"]["position"] == "learned"

    buttons = page.evaluate("""() => Array.from(document.querySelectorAll('#depth-plot .modebar-btn'),
        (b) => [b.tagName, b.getAttribute('aria-label')])""")
    assert buttons == [["BUTTON", t["export_png"]], ["BUTTON", t["export_svg"]]]
    page.locator("#depth-plot").hover()
    with page.expect_download() as download:
        page.click(f'#depth-plot .modebar-btn[aria-label="{t["export_svg"]}"]')
    assert download.value.suggested_filename == "heads-positions-by-depth.svg"
    assert Path(download.value.path()).read_text(encoding="utf-8").startswith("<svg")
    with page.expect_download() as download:
        page.click(f'#depth-plot .modebar-btn[aria-label="{t["export_png"]}"]')
    assert download.value.suggested_filename == "heads-positions-by-depth.png"
    assert Path(download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_long_lines_ask_for_one_layer(open_page, tools):
    path = f"/?pos=rope&weights=random&a={quote(LONG_A)}&b={quote(LONG_B)}"
    page = open_page(path)
    sent = []
    page.on("request", lambda r: sent.append(json.loads(r.post_data)) if r.url.endswith("/api/compare") else None)
    ticks = page.evaluate("() => document.querySelector('.heatmap[data-line=\"a\"][data-head=\"0\"]').data[0].x")
    assert len(ticks) == 200
    assert page.is_visible("#panel-rope") and drawn(page, "#rope-pair-fast")
    tools.redraw_after(page, lambda: page.select_option("#layer", "2"))
    assert sent and sent[-1]["layer"] == 2, "a layer change asks the server for that layer"
    assert page.get_attribute("#heatmaps", "data-layer") == "2"
    assert sent[-1]["attention_without_position"] is False, "long lines leave out the maps not on screen"
    # The view without position information then asks for its own maps.
    tools.redraw_after(page, lambda: page.uncheck("#posinfo"))
    assert "attention_without_position" not in sent[-1] and sent[-1]["layer"] == 2
    assert page.get_attribute("#heatmaps", "data-posinfo") == "false"
    tools.redraw_after(page, lambda: page.check("#posinfo"))
    # Short lines again: every layer comes at once, and a layer change needs no request.
    page.fill("#line-a", "白日依山尽")
    page.fill("#line-b", "山依日白尽")
    tools.wait_until(page, "() => document.querySelector('.heatmap[data-line=\"a\"]').data[0].x.length === 5")
    tools.wait_idle(page)
    assert "layer" not in sent[-1] and "attention_without_position" not in sent[-1]
    before = len(sent)
    tools.redraw_after(page, lambda: page.select_option("#layer", "1"))
    assert len(sent) == before


def test_new_panels_follow_the_language_and_fit_a_phone(open_page, tools):
    page = open_page("/?pos=rope", width=390, height=844)
    for name in LAZY:
        reveal(tools, page, name)
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    tools.screenshot(page, "phone-panels-zh")
    page.evaluate("window.scrollTo(0, 0)")
    t = tools.texts("en")
    count = int(page.get_attribute("#rel-plot", "data-render-count"))
    tools.redraw_after(page, lambda: page.select_option("#lang", "en"))
    tools.wait_until(page, "(n) => Number(document.querySelector('#rel-plot').dataset.renderCount) > n", count)
    assert page.text_content("#panel-relative-title") == t["panel_rel_title"]
    assert page.text_content("#panel-training-title") == t["panel_train_title"]
    legend = page.evaluate("() => document.querySelector('#rel-plot').data.map((d) => d.name)")
    assert legend == [t["pos_learned"], t["pos_rope"], t["pos_none"]]
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    tools.screenshot(page, "phone-panels-en")


def test_the_csp_listener_hears_violations(open_page, tools):
    """The listener every page carries (conftest) works: an inline script is refused and recorded."""
    page = open_page()
    open_page.allow("CSP violation")
    open_page.allow("violates the following Content Security Policy")
    page.evaluate("""() => { const s = document.createElement('script');
        s.textContent = 'window.__inline = 1'; document.body.append(s); }""")
    found = tools.wait_until(page, "() => window.__cspViolations.length && window.__cspViolations")
    assert found[0].startswith("script-src")
    assert page.evaluate("window.__inline") is None


@pytest.mark.parametrize("lang", ["fr", "ja"])
def test_the_relative_panel_words_each_refusal_and_says_what_a_paste_left_out(open_page, tools, lang):
    """Issue 39 item 12: every 422 said "type a character in each box", and a paste of "ab" became "a" without a
    word. An invisible character is named as such, with its box; a paste of two says which one was kept."""
    t = tools.texts(lang)
    open_page.allow("status of 422")  # the refusal this test asks for
    page = open_page(f"/?lang={lang}")
    tools.reveal(page, "#panel-relative")
    page.fill("#rel-first", "\u200b")
    tools.wait_until(page, "() => !document.querySelector('#rel-error').hidden", message="no error for U+200B")
    error = page.inner_text("#rel-error")
    assert error != t["rel_error_empty"] and "U+200B" in error and t["rel_first_label"] in error, error
    page.fill("#rel-first", "")
    tools.wait_until(page, "(want) => document.querySelector('#rel-error').innerText === want", t["rel_error_empty"])
    page.fill("#rel-second", "山水")
    assert page.input_value("#rel-second") == "山"
    kept = page.inner_text("#rel-kept")
    assert "山" in kept and "水" in kept and t["rel_second_label"] in kept, kept
    # Worded again on a language switch, like every message on the page.
    page.select_option("#lang", "en")
    tools.wait_until(page, "(want) => document.querySelector('#rel-kept').innerText.includes(want)",
                     tools.texts("en")["rel_second_label"])
    page.fill("#rel-second", "水")
    tools.wait_until(page, "() => document.querySelector('#rel-kept').hidden")
