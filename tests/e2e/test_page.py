"""The page in a real browser: heatmaps, controls, URL state, languages, narrow screens, hostile text."""

import json
import urllib.request
from urllib.parse import parse_qs, quote, urlsplit

import pytest

pytestmark = pytest.mark.e2e

LINE_A, LINE_B = "白日依山尽", "山依日白尽"
HOSTILE = "<img src=x onerror=window.__pwned=1>"

TICKS = """([line, head, axis]) => Array.from(
    document.querySelectorAll(`.heatmap[data-line="${line}"][data-head="${head}"] .${axis}tick text`),
    (t) => t.textContent)"""
TRACE = """([line, head]) => {
    const gd = document.querySelector(`.heatmap[data-line="${line}"][data-head="${head}"]`);
    const t = gd && gd.data && gd.data[0];
    return t ? {z: t.z, zmin: t.zmin, zmax: t.zmax, zmid: t.zmid ?? null, colorscale: t.colorscale,
                hovertemplate: t.hovertemplate, yrange: gd._fullLayout.yaxis.range} : null;
}"""
HEATMAPS = """() => Array.from(document.querySelectorAll('.heatmap'), (el) => ({
    line: el.dataset.line, head: el.dataset.head, drawn: Boolean(el.querySelector('.main-svg'))}))"""


def query(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query, keep_blank_values=True).items()}


def heatmap_counts(page) -> dict:
    cells = page.evaluate(HEATMAPS)
    assert all(c["drawn"] for c in cells), "every heatmap container has a Plotly plot"
    counts = {"a": 0, "b": 0, "diff": 0}
    for c in cells:
        counts[c["line"]] += 1
    return counts


def wait_ticks(tools, page, line: str, chars: str, head: int = 0):
    tools.wait_until(page, f"() => ({TICKS})({json.dumps([line, head, 'x'])}).join('') === {json.dumps(chars)}",
                     message=f"line {line} never showed {chars!r} on its axis")
    tools.wait_idle(page)


def choose_position(tools, page, value: str):
    tools.redraw_after(page, lambda: page.check(f'input[name="position"][value="{value}"]'))


def test_default_page_draws_heads_and_panels(page, tools, server_url):
    assert page.evaluate("document.documentElement.lang") == "zh"
    assert page.input_value("#line-a") == LINE_A and page.input_value("#line-b") == LINE_B
    # The address bar carries the whole state from the first paint on. The weights are left out
    # until the user picks: by default they follow what ships (trained where it exists for the mode).
    assert query(page) == {"a": LINE_A, "b": LINE_B, "pos": "learned", "layer": "1", "heads": "4", "lang": "zh"}
    with urllib.request.urlopen(server_url + "/api/options") as response:
        trained = json.load(response)["trained"]
    assert page.input_value("#weights") == ("trained" if "learned" in trained else "random")

    assert heatmap_counts(page) == {"a": 4, "b": 4, "diff": 4}
    for head in range(4):
        assert page.evaluate(TICKS, ["a", head, "x"]) == list(LINE_A)
        assert page.evaluate(TICKS, ["a", head, "y"]) == list(LINE_A)
        assert page.evaluate(TICKS, ["b", head, "x"]) == list(LINE_B)
        assert page.evaluate(TICKS, ["b", head, "y"]) == list(LINE_B)

    a = page.evaluate(TRACE, ["a", 0])
    b = page.evaluate(TRACE, ["b", 0])
    diff = page.evaluate(TRACE, ["diff", 0])
    assert (a["zmin"], a["zmax"]) == (b["zmin"], b["zmax"]) == (0, 1)
    assert a["colorscale"] == b["colorscale"] == "Viridis"
    assert a["yrange"][0] > a["yrange"][1], "the y axis runs downwards: query 0 is the top row"
    assert "%{z:.3~r}" in a["hovertemplate"], "3 significant digits, plain decimals (never 3e-8)"
    assert a["z"][0][1:] == [None] * 4, "future keys are empty cells, not zeros"
    assert all(v is not None for v in a["z"][4])
    assert abs(sum(a["z"][2][:3]) - 1) < 1e-4, "a row of the pattern sums to 1"
    assert diff["zmid"] == 0 and diff["zmin"] == -diff["zmax"]

    # The other panels.
    depth = page.evaluate("""() => { const gd = document.querySelector('#depth-plot');
        return {traces: gd.data.length, type: gd.layout.yaxis.type}; }""")
    assert depth == {"traces": 4, "type": "log"}
    assert page.locator("#depth-table tbody tr").count() == 4
    assert page.locator("#next-lists .next-list").count() == 2  # line A and line B
    assert page.locator("#next-lists .next-list").first.locator(".next-item").count() == 5
    assert page.locator("#residual-with.js-plotly-plot").count() == 1
    assert page.locator("#residual-without.js-plotly-plot").count() == 1
    assert page.is_hidden("#panel-rope")
    assert page.locator('#shape-flow [data-shape="heads"]').text_content() == "(1, 4, 5, 32)"
    tools.screenshot(page, "desktop-default")


def test_page_runs_under_a_strict_content_security_policy(server_url):
    with urllib.request.urlopen(server_url + "/") as response:
        policy = response.headers.get("content-security-policy", "")
    script_src = next((d.strip() for d in policy.split(";") if d.strip().startswith("script-src")), "")
    assert script_src == "script-src 'self'", f"the page is tested under {policy!r}"


def test_typing_updates_the_plots_and_the_url(page, tools):
    history_before = page.evaluate("history.length")
    page.locator("#line-a").click()
    page.locator("#line-a").press("Control+a")
    page.locator("#line-a").press_sequentially("床前明月光", delay=40)
    wait_ticks(tools, page, "a", "床前明月光")
    page.fill("#line-b", "疑是地上霜")
    wait_ticks(tools, page, "b", "疑是地上霜")
    assert heatmap_counts(page) == {"a": 4, "b": 4, "diff": 4}
    assert query(page)["a"] == "床前明月光" and query(page)["b"] == "疑是地上霜"
    # One edit is one history entry: the keystrokes after the first replace it.
    assert page.evaluate("history.length") <= history_before + 2

    # Lines of different lengths: no A−B column, and the residual panel explains why it is empty.
    page.fill("#line-b", "疑是地上")
    wait_ticks(tools, page, "b", "疑是地上")
    assert heatmap_counts(page) == {"a": 4, "b": 4, "diff": 0}
    assert page.is_visible("#attn-diff-note") and page.is_visible("#residual-note")
    assert page.is_hidden("#residual-plots")


def test_each_position_mode(page, tools):
    t = tools.texts("zh")
    choose_position(tools, page, "rope")
    assert query(page)["pos"] == "rope"
    assert page.is_visible("#panel-rope")
    assert page.locator("#rope-plot.js-plotly-plot").count() == 1
    rope = page.evaluate("() => document.querySelector('#rope-plot').data[0].z.length")
    assert rope == len(LINE_A), "one row of angles per position"
    assert t["pos_rope"] in page.text_content("#model-summary")
    tools.screenshot(page, "desktop-rope")

    choose_position(tools, page, "none")
    assert page.is_hidden("#panel-rope")
    assert t["pos_none"] in page.text_content("#model-summary")
    assert heatmap_counts(page) == {"a": 4, "b": 4, "diff": 4}

    choose_position(tools, page, "learned")
    assert query(page)["pos"] == "learned"
    assert page.is_hidden("#panel-rope")


def test_layer_and_head_count(open_page, tools):
    page = open_page("/?weights=random")  # trained weights fix the head count
    layers = page.eval_on_selector_all("#layer option", "opts => opts.map(o => o.value)")
    assert layers == [str(n + 1) for n in range(len(layers))] and len(layers) >= 2
    first = page.evaluate(TRACE, ["a", 0])["z"]
    tools.redraw_after(page, lambda: page.select_option("#layer", "2"))
    assert page.get_attribute("#heatmaps", "data-layer") == "2"
    assert query(page)["layer"] == "2"
    assert page.evaluate(TRACE, ["a", 0])["z"] != first, "layer 2 shows other weights than layer 1"

    with page.expect_request("**/api/compare") as sent:
        tools.redraw_after(page, lambda: page.select_option("#heads", "8"))
    assert json.loads(sent.value.post_data)["n_head"] == 8
    assert page.locator(".heatmap-row").count() == 8
    assert heatmap_counts(page) == {"a": 8, "b": 8, "diff": 8}
    assert page.locator('#shape-flow [data-shape="heads"]').text_content() == "(1, 8, 5, 16)"
    assert query(page)["heads"] == "8"
    tools.screenshot(page, "desktop-8-heads")


def test_weights_choice_follows_the_options(page, tools, server_url):
    with urllib.request.urlopen(server_url + "/api/options") as response:
        options = json.load(response)
    trained = options["trained"].get("learned")
    t = tools.texts("zh")
    if not trained:
        assert page.is_disabled('#weights option[value="trained"]')
        assert page.is_visible("#weights-note")
        expected = t["trained_missing_mode"] if options["trained"] else t["trained_none"]
        assert page.text_content("#weights-note") == expected
        return
    # Trained weights ship for pos_emb: the page starts with them, without asking for a shape.
    assert page.input_value("#weights") == "trained"
    assert page.is_disabled("#heads")
    assert page.input_value("#heads") == str(trained["n_head"])
    assert page.locator(".heatmap-row").count() == trained["n_head"]
    assert str(trained["n_layer"]) in page.text_content("#weights-note")
    # Chinese joins sentences with no space (sentence_sep), as Japanese does.
    assert t["sentence_sep"] == "" and "。 " not in page.text_content("#weights-note")
    with page.expect_request("**/api/compare") as sent:
        tools.redraw_after(page, lambda: page.select_option("#weights", "random"))
    body = json.loads(sent.value.post_data)
    assert body["weights"] == "random" and body["n_head"] == 4
    assert query(page)["weights"] == "random" and page.is_enabled("#heads")
    with page.expect_request("**/api/compare") as sent:
        tools.redraw_after(page, lambda: page.select_option("#weights", "trained"))
    body = json.loads(sent.value.post_data)
    assert body["weights"] == "trained" and "n_head" not in body and "n_layer" not in body
    assert query(page)["weights"] == "trained"


def test_language_switch_without_reload(page, tools):
    page.evaluate("window.__sameDocument = true")
    for lang in ("ja", "fr", "en", "zh"):
        t = tools.texts(lang)
        tools.redraw_after(page, lambda lang=lang: page.select_option("#lang", lang))
        assert page.evaluate("document.documentElement.lang") == lang
        assert page.text_content('label[for="line-a"]').strip().endswith(t["line_a_label"])
        assert page.text_content("#panel-depth-title") == t["panel_depth_title"]
        assert page.text_content(".heatmap-row__title") == t["attn_head"].replace("{h}", "1")
        assert page.title() == t["page_title"]
        assert query(page)["lang"] == lang
        if lang == "ja":
            tools.screenshot(page, "desktop-ja")
    assert page.evaluate("window.__sameDocument") is True, "switching language must not reload the page"


def test_url_state_round_trip_and_back_button(open_page, tools):
    state = {"a": "床前明月光", "b": "疑是地上霜", "pos": "rope", "layer": "2", "heads": "2",
             "weights": "random", "lang": "fr"}
    page = open_page("/?" + "&".join(f"{k}={quote(v)}" for k, v in state.items()))
    assert page.input_value("#line-a") == state["a"] and page.input_value("#line-b") == state["b"]
    assert page.is_checked('input[name="position"][value="rope"]')
    assert page.input_value("#layer") == "2" and page.input_value("#heads") == "2"
    assert page.input_value("#lang") == "fr" and page.evaluate("document.documentElement.lang") == "fr"
    assert page.locator(".heatmap-row").count() == 2
    assert page.get_attribute("#heatmaps", "data-layer") == "2"
    assert page.is_visible("#panel-rope")
    assert page.evaluate(TICKS, ["a", 0, "x"]) == list(state["a"])
    assert query(page) == state

    choose_position(tools, page, "none")
    tools.redraw_after(page, lambda: page.select_option("#heads", "8"))
    assert query(page)["heads"] == "8" and query(page)["pos"] == "none"

    tools.redraw_after(page, page.go_back)
    assert query(page)["heads"] == "2" and query(page)["pos"] == "none"
    assert page.input_value("#heads") == "2" and page.locator(".heatmap-row").count() == 2

    tools.redraw_after(page, page.go_back)
    assert query(page) == state
    assert page.is_checked('input[name="position"][value="rope"]') and page.is_visible("#panel-rope")

    tools.redraw_after(page, page.go_forward)
    assert page.is_checked('input[name="position"][value="none"]') and page.is_hidden("#panel-rope")


def test_url_values_the_server_does_not_offer_fall_back_to_the_defaults(open_page, server_url):
    """The page reads the allowed values from the controls the server rendered from /api/options."""
    options = json.load(urllib.request.urlopen(f"{server_url}/api/options"))
    assert 3 not in options["n_head"] and "sideways" not in options["positions"] and options["n_layer_max"] < 99
    page = open_page("/?pos=sideways&heads=3&n_layer=99&weights=some&lang=en")
    assert query(page)["pos"] == "learned" and query(page)["heads"] == "4"
    assert query(page).get("weights") != "some" and query(page).get("n_layer") != "99"
    assert page.is_checked('input[name="position"][value="learned"]') and page.input_value("#heads") == "4"


def test_narrow_phone_screen(open_page, tools):
    page = open_page(width=390, height=844)
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    boxes = page.evaluate("""() => ['a', 'b', 'diff'].map((line) => {
        const r = document.querySelector(`.heatmap[data-line="${line}"][data-head="0"]`).getBoundingClientRect();
        return {left: r.left, top: r.top, bottom: r.bottom, right: r.right}; })""")
    # A head's A, B and A − B side by side, as small multiples (test_layout: every head on one screen).
    assert boxes[1]["left"] >= boxes[0]["right"] and boxes[2]["left"] >= boxes[1]["right"], "a head's maps in a row"
    assert all(b["right"] <= 390 for b in boxes)
    tools.screenshot(page, "phone-default")
    choose_position(tools, page, "rope")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
    tools.screenshot(page, "phone-rope")


def test_controls_are_reachable_by_keyboard(open_page):
    page = open_page("/?weights=random")  # with trained weights the head count is fixed and #heads disabled
    reached = set()
    for _ in range(40):
        page.keyboard.press("Tab")
        focused = page.evaluate("""() => { const el = document.activeElement;
            return {id: el.id, name: el.name || '', outline: getComputedStyle(el).outlineStyle}; }""")
        reached.add(focused["id"] or focused["name"])
        if focused["id"] in ("line-a", "heads", "lang"):
            assert focused["outline"] != "none", f"#{focused['id']} shows where the focus is"
    assert {"line-a", "line-b", "position", "heads", "weights", "layer", "causal", "download-json", "lang"} <= reached
    for control in ("line-a", "line-b", "heads", "weights", "layer", "causal", "lang"):
        assert page.locator(f'label[for="{control}"]').count() == 1, f"#{control} has a label"


def test_errors_appear_next_to_the_line_that_caused_them(page, open_page, tools):
    open_page.allow("status of 422")  # chromium logs the refused requests we send on purpose
    t = tools.texts("zh")
    page.fill("#line-a", "")
    tools.wait_until(page, "() => !document.querySelector('#line-a-error').hidden")
    assert page.text_content("#line-a-error") == t["error_empty"]
    assert page.get_attribute("#line-a", "aria-invalid") == "true"
    assert page.is_hidden("#line-b-error") and page.is_hidden("#general-error")
    assert query(page)["a"] == ""

    page.fill("#line-a", LINE_A)
    tools.wait_until(page, "() => document.querySelector('#line-a-error').hidden")
    assert page.get_attribute("#line-a", "aria-invalid") is None

    # pos_emb has 128 rows: a longer line is refused with position 'learned', accepted with RoPE.
    page.fill("#line-b", "山" * 130)
    tools.wait_until(page, "() => !document.querySelector('#line-b-error').hidden")
    assert page.text_content("#line-b-error") == t["error_too_long_learned"].replace("{max}", "128")
    tools.screenshot(page, "desktop-error")
    choose_position(tools, page, "rope")
    assert page.is_hidden("#line-b-error")
    assert page.evaluate(TICKS, ["b", 0, "y"])[0] == "山"


def test_hostile_text_stays_text(open_page, tools):
    page = open_page()
    page.fill("#line-a", HOSTILE)
    # 36 characters: the axis ticks every other one, and shows a space as ␣.
    every_other = "".join("␣" if c == " " else c for c in HOSTILE[::2])
    wait_ticks(tools, page, "a", every_other)
    categories = page.evaluate("() => document.querySelector('.heatmap[data-line=\"a\"]').data[0].x")
    assert categories[0] == "0 &lt;" and categories[-1] == f"{len(HOSTILE) - 1} &gt;", "escaped for Plotly"
    assert page.input_value("#line-a") == HOSTILE
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert HOSTILE in page.text_content(".heatmap-cell--a .heatmap-cell__text")

    # Hover the first cell of head 1, line A: the label names the characters literally.
    page.locator('.heatmap[data-line="a"][data-head="0"]').scroll_into_view_if_needed()
    box = page.locator('.heatmap[data-line="a"][data-head="0"] .nsewdrag').bounding_box()
    n = len(HOSTILE)
    page.mouse.move(box["x"] + box["width"] / (2 * n), box["y"] + box["height"] / (2 * n))
    tools.wait_until(page, "() => document.querySelector('.heatmap[data-head=\"0\"] .hoverlayer .hovertext')")
    hover = page.text_content('.heatmap[data-line="a"][data-head="0"] .hoverlayer')
    assert "0 <" in hover

    # The same text through the URL and the server-rendered first paint.
    shared = open_page("/?" + "&".join(f"{k}={quote(v)}" for k, v in {"a": HOSTILE, "b": "a<b>&amp;"}.items()))
    assert shared.input_value("#line-a") == HOSTILE and shared.input_value("#line-b") == "a<b>&amp;"
    wait_ticks(tools, shared, "b", "a<b>&amp;")
    assert shared.evaluate("window.__pwned") is None
    assert shared.evaluate("document.querySelectorAll('img').length") == 0


@pytest.mark.parametrize("payload", [
    "<script>window.__pwned=1</script>",
    "javascript:window.__pwned=1",
], ids=["script-tag", "javascript-link"])
def test_other_hostile_lines_stay_text(open_page, tools, payload):
    page = open_page()
    tools.redraw_after(page, lambda: page.fill("#line-b", payload))
    assert page.input_value("#line-b") == payload
    assert page.evaluate("new URL(location.href).searchParams.get('b')") == payload
    assert page.evaluate("window.__pwned") is None
    # The page's own inline scripts are JSON data (the options it embeds), never code.
    assert page.evaluate("document.querySelectorAll('script:not([src]):not([type=\"application/json\"])').length") == 0
    assert page.evaluate("document.querySelectorAll('a[href^=\"javascript\"]').length") == 0
    # The heatmaps carry the line position by position, each character escaped for Plotly.
    ticks = page.evaluate("() => document.querySelector('.heatmap[data-line=\"b\"]').data[0].x")
    assert len(ticks) == len(payload)
    shared = open_page("/?b=" + quote(payload))
    assert shared.input_value("#line-b") == payload and shared.evaluate("window.__pwned") is None


@pytest.mark.parametrize("payload, index, code, key", [
    # RIGHT-TO-LEFT OVERRIDE: would show the line reversed, and the sentence says so (issue 39)
    ("\u202e白日依山尽", 1, "U+202E", "error_control_reorders"),
    ("白\u0000日", 2, "U+0000", "error_control"),  # a NUL byte
], ids=["rtl-override", "nul-byte"])
def test_invisible_control_characters_are_refused_beside_line_b(open_page, tools, payload, index, code, key):
    """The server refuses control and format characters in a line (they can reorder it on screen); the page
    says which one, where, in its language, beside the line."""
    open_page.allow("status of 422")  # chromium logs the refused request
    page = open_page()
    page.fill("#line-b", payload)
    tools.wait_until(page, "() => !document.querySelector('#line-b-error').hidden")
    t = tools.texts(page.evaluate("document.documentElement.lang"))
    assert page.text_content("#line-b-error") == t[key].replace("{index}", str(index)).replace("{code}", code)
    assert page.is_hidden("#line-a-error")
    assert page.evaluate("window.__pwned") is None


QUOTE_WIDTH = """() => {
    // A curly quote and an M, each alone in the page's own type: width of the quote over the M's.
    const width = (text) => {
        const probe = document.createElement('span');
        probe.textContent = text;
        probe.style.position = 'absolute';
        document.body.appendChild(probe);
        const w = probe.getBoundingClientRect().width;
        probe.remove();
        return w;
    };
    return width('\u201c') / width('M');
}"""


@pytest.mark.parametrize("lang, locale", [("en", "en-US"), ("fr", "fr-FR"), ("zh", "zh-CN")])
def test_curly_quotes_are_set_as_each_language_sets_them(open_page, lang, locale):
    # The CJK fonts first in the stack draw “ ” a full character wide, right for Chinese; in the English
    # and French sentences ("You predicted “…”") they left a gap on each side.
    for path in (f"/?lang={lang}", f"/lesson?step=2&lang={lang}"):
        ratio = open_page(path, locale=locale, explorer=path.startswith("/?")).evaluate(QUOTE_WIDTH)
        assert (ratio > 1.0) if lang == "zh" else (ratio < 0.8), (path, ratio)
