"""Layout on a phone (390 x 844) and on a projector-sized screen (1280 x 720), issue 24: the lesson's question
comes first and its setup folds behind a button; the heads are small multiples that fit one phone screen and
a tap enlarges one; Plotly's toolbar covers no legend or colour bar; figures never break across lines."""

import json
import urllib.request

import pytest

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 720}
LESSON_STEP_HEADS = 12  # "four trained heads": one map per head of line A


def open_lesson(open_page, tools, step: int, lang: str, size: dict):
    page = open_page(f"/lesson?step={step}&lang={lang}", explorer=False, locale="en-US", **size)
    tools.wait_rendered(page, 0)
    return page


def commit_first_choice(page, tools) -> None:
    before = tools.render_count(page)
    page.locator("[data-question] input[type=radio]").first.check()
    page.click("[data-commit]")
    tools.wait_rendered(page, before)


def box(page, selector: str) -> dict:
    return page.locator(selector).first.bounding_box()


# ---- 1. the lesson's question first, its setup folded on a phone ---------------------------------------


@pytest.mark.parametrize("lang", ["zh", "fr"])
def test_on_a_phone_the_question_is_on_the_first_screen_before_the_setup(open_page, tools, lang):
    page = open_lesson(open_page, tools, 1, lang, PHONE)
    legend = box(page, "#step-question legend")
    choice = box(page, "#step-question .lesson-choice")
    setup = box(page, "#step-setup")
    # The question's words and its first choice are on the first screen, at the top of the page.
    assert legend["y"] >= 0 and choice["y"] + choice["height"] <= PHONE["height"], (legend, choice)
    assert box(page, "#step-question")["y"] < setup["y"], "the setup comes before the question"
    tools.screenshot(page, f"layout-lesson-phone-{lang}")


@pytest.mark.parametrize("lang", ["zh", "ja", "fr", "en"])
def test_on_a_phone_the_lessons_title_is_whole(open_page, tools, lang):
    """Issue 39 item 14: the header's title was one line cut to an ellipsis on a phone ("Attention multi-têtes et
    e…"); it shows whole, on at most two lines, beside the language menu, and a Japanese line does not end inside
    a katakana word."""
    page = open_lesson(open_page, tools, 1, lang, PHONE)
    title = page.evaluate("""() => {
        const h1 = document.querySelector('.site-header h1');
        const range = document.createRange();
        range.selectNodeContents(h1);
        const lines = [...new Set([...range.getClientRects()].map((r) => Math.round(r.top)))].length;
        const style = getComputedStyle(h1);
        const cut = h1.scrollWidth > h1.clientWidth
            || (style.textOverflow === 'ellipsis' && style.overflow === 'hidden');
        return { text: h1.textContent, cut, lines, right: h1.getBoundingClientRect().right,
                 menu: document.querySelector('.lang-picker').getBoundingClientRect().left };
    }""")
    assert title["text"] == tools.texts(lang)["app_title"]
    assert not title["cut"], title
    assert title["lines"] <= 2 and title["right"] <= title["menu"], title
    if lang == "ja":
        # Each line of the title ends at a phrase's end, not inside マルチヘッド or アテンション or エンコーディング.
        ends = page.evaluate("""() => {
            const text = document.querySelector('.site-header h1').firstChild;
            const out = [];
            for (let i = 1; i < text.length; i++) {
                const r = document.createRange(); r.setStart(text, i - 1); r.setEnd(text, i);
                const s = document.createRange(); s.setStart(text, i); s.setEnd(text, i + 1);
                if (Math.round(s.getClientRects()[0].top) > Math.round(r.getClientRects()[0].top)) out.push(i);
            }
            return out;
        }""")
        breaks_at = [tools.texts(lang)["app_title"][i - 1:i + 1] for i in ends]
        assert all(pair[0] in "とのはを" or pair[1] in "位" for pair in breaks_at), breaks_at
    tools.screenshot(page, f"layout-title-phone-{lang}", full_page=False)


@pytest.mark.parametrize("lang", ["zh", "ja", "fr", "en"])
def test_on_a_phone_every_steps_question_and_commit_button_are_on_the_first_screen(open_page, tools, server_url,
                                                                                      lang):
    """Issue 32: at 390 x 844, before any scroll, every step that asks shows its whole question (each question of
    the self-test) and the button that commits the answer. The steps are the API's, so a new step is held to it."""
    with urllib.request.urlopen(f"{server_url}/api/lesson", timeout=20) as response:
        steps = json.loads(response.read())["steps"]
    page = open_lesson(open_page, tools, 1, lang, PHONE)
    asked = 0
    for n, step in enumerate(steps, start=1):
        if step["choices"] is None and step.get("questions") is None:
            continue
        page.goto(page.url.split("?")[0] + f"?step={n}&lang={lang}")
        tools.wait_rendered(page, 0)
        assert page.evaluate("() => window.scrollY") == 0
        legends = page.locator("#step-question legend")
        assert legends.count() == max(1, len(step.get("questions") or [])), step["id"]
        for i in range(legends.count()):
            legend = legends.nth(i).bounding_box()
            assert legend["y"] >= 0 and legend["y"] + legend["height"] <= PHONE["height"], (step["id"], i, legend)
        commit = box(page, "[data-commit]")
        assert page.locator("[data-commit]").is_visible(), step["id"]
        assert commit["y"] + commit["height"] <= PHONE["height"], (lang, step["id"], commit)
        asked += 1
    assert asked >= 16, asked
    tools.screenshot(page, f"layout-lesson-phone-selftest-{lang}")


def test_the_setup_folds_behind_a_button_on_a_phone(open_page, tools):
    page = open_lesson(open_page, tools, 1, "zh", PHONE)
    toggle = page.locator("#setup-toggle")
    assert toggle.is_visible() and toggle.get_attribute("aria-expanded") == "false"
    assert not page.locator("#line-a").is_visible() and not page.locator("#n-layer").is_visible()
    # The button names the lines the question is about.
    a, b = page.input_value("#line-a"), page.input_value("#line-b")
    assert a in toggle.inner_text() and b in toggle.inner_text()
    # By keyboard: the button opens the controls and closes them again.
    toggle.focus()
    page.keyboard.press("Enter")
    assert toggle.get_attribute("aria-expanded") == "true"
    assert page.locator("#line-a").is_visible() and page.locator("#causal").is_visible()
    page.keyboard.press("Space")
    assert toggle.get_attribute("aria-expanded") == "false" and not page.locator("#line-a").is_visible()
    # Another step's lines show in the button once the step fills them (step 4: 我打你 / 你打我).
    page.goto(page.url.replace("step=1", "step=4"))
    tools.wait_rendered(page, 0)
    text = page.inner_text("#setup-toggle")
    assert page.input_value("#line-a") in text and page.input_value("#line-b") in text
    assert "白日依山尽" not in text


def test_the_setup_stays_open_on_a_desktop(open_page, tools):
    page = open_lesson(open_page, tools, 1, "fr", DESKTOP)
    assert not page.locator("#setup-toggle").is_visible()
    for control in ["#line-a", "#line-b", "#weights", "#n-layer", "#heads", "#causal"]:
        assert page.locator(control).is_visible(), control
    assert page.locator("#setup-title").is_visible()
    tools.screenshot(page, "layout-lesson-desktop-fr")


# ---- 2. the heads as small multiples on a phone, a tap to enlarge ---------------------------------------


def span_of(page, selector: str) -> float:
    """Top of the first element to bottom of the last: how tall a screen must be to show them all."""
    boxes = [page.locator(selector).nth(i).bounding_box() for i in range(page.locator(selector).count())]
    assert len(boxes) == 4, f"{len(boxes)} elements for {selector}"
    return max(b["y"] + b["height"] for b in boxes) - min(b["y"] for b in boxes)


@pytest.mark.parametrize("lang", ["zh", "fr"])
def test_the_explorers_four_heads_fit_one_phone_screen(open_page, tools, lang):
    page = open_page(f"/?lang={lang}", **PHONE)
    assert page.locator("#heatmaps .heatmap-row").count() == 4
    # Every head's maps of A, B and A − B, side by side, and the heads one under another.
    for line in ["a", "b", "diff"]:
        assert span_of(page, f"#heatmaps .heatmap[data-line={line}]") <= PHONE["height"], line
    assert box(page, "#heatmaps .heatmap[data-line=diff]")["x"] + box(page, "#heatmaps .heatmap")["width"] <= 390
    page.locator("#heatmaps").scroll_into_view_if_needed()
    tools.screenshot(page, f"layout-explorer-phone-{lang}")


def test_the_lessons_four_heads_fit_one_phone_screen(open_page, tools):
    page = open_lesson(open_page, tools, LESSON_STEP_HEADS, "zh", PHONE)
    commit_first_choice(page, tools)
    assert span_of(page, "#charts .lesson-plot--square") <= PHONE["height"]


def test_on_a_desktop_the_maps_keep_their_colour_bars(open_page):
    page = open_page("/?lang=fr", **DESKTOP)
    assert page.locator("#heatmaps .heatmap.is-small").count() == 0
    # One colour bar per map (A, B, A − B), as before the phone's small multiples.
    maps = page.locator("#heatmaps .heatmap").count()
    assert maps == 12 and page.locator("#heatmaps .heatmap .colorbar").count() == maps


def test_a_tap_enlarges_a_map_and_a_tap_or_escape_returns(open_page):
    page = open_page("/?lang=fr", **PHONE)
    small = page.locator("#heatmaps .heatmap[data-line=diff][data-head='1']")
    assert small.get_attribute("role") == "button" and "Tête 2" in small.get_attribute("aria-label")
    width = small.bounding_box()["width"]
    small.click()
    dialog = page.locator("dialog.zoom")
    assert dialog.is_visible()
    enlarged = page.locator("dialog.zoom .zoom__plot")
    page.locator("dialog.zoom .zoom__plot .colorbar").wait_for()
    assert enlarged.bounding_box()["width"] > 2 * width
    assert "Tête 2" in page.inner_text("#zoom-title")
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    assert page.evaluate("() => document.activeElement.dataset.line") == "diff", "the focus went back to the map"
    # From the keyboard, then a tap on the enlarged map.
    page.keyboard.press("Enter")
    assert dialog.is_visible()
    page.locator("dialog.zoom .zoom__plot .colorbar").wait_for()
    enlarged.click(position={"x": 40, "y": 40})
    assert not dialog.is_visible()


# ---- 3. the toolbar covers no legend or colour bar -------------------------------------------------------

# Every chart with Plotly's toolbar: the bar's box against each legend's and colour bar's box (the bar is
# laid out even while hidden, and shows on hover or a tap).
COVERED = """(parts = '.legend, .colorbar') => {
  const hits = [];
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const bar = gd.querySelector('.modebar');
    if (!bar) continue;
    const m = bar.getBoundingClientRect();
    for (const part of gd.querySelectorAll(parts)) {
      const r = part.getBoundingClientRect();
      const x = Math.min(m.right, r.right) - Math.max(m.left, r.left);
      const y = Math.min(m.bottom, r.bottom) - Math.max(m.top, r.top);
      if (r.width && r.height && x > 0 && y > 0) {
        hits.push(`${gd.id || gd.className}: ${part.getAttribute('class') || part.textContent}`);
      }
    }
  }
  return hits;
}"""
# The explorer's charts with a legend or a colour bar, some of them drawn only when scrolled near.
EXPLORER_CHARTS = ["residual-with", "residual-without", "sim-rope", "rel-plot", "probe-plot", "speeds-plot",
                   "training-heads", "training-modes", "length-plot", "depth-plot"]


def scroll_through(page, wanted: list[str]) -> None:
    """Bring each chart near the screen (the panels below the fold fetch then), and wait until it is drawn."""
    for chart in wanted:
        page.locator(f"#{chart}").scroll_into_view_if_needed()
        page.locator(f"#{chart}.js-plotly-plot").wait_for(state="attached")
    # A panel whose answer takes seconds (the probe of an untrained model) draws after the others.
    page.wait_for_function("() => !document.querySelector('section.panel[data-state=\"loading\"]')")


def assert_nothing_covered(page, tools, parts: str = ".legend, .colorbar") -> None:
    """The toolbar covers no legend or colour bar (or other `parts`) once the charts have settled: the last charts
    make room for it in one relayout after they draw, so this waits for that (WAIT_TIMEOUT at most) rather than a
    fixed time, and a toolbar still over a legend then fails with the places it covers."""
    try:
        tools.wait_until(page, f"(parts) => ({COVERED})(parts).length === 0", parts)
    except AssertionError:
        pass  # the assertion below names what stays covered
    assert page.evaluate(COVERED, parts) == []


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["390", "1280"])
@pytest.mark.parametrize("lang", ["zh", "fr"])
def test_no_toolbar_covers_a_legend_or_colour_bar_in_the_explorer(open_page, tools, size, lang):
    page = open_page(f"/?lang={lang}", **size)
    scroll_through(page, EXPLORER_CHARTS)
    assert_nothing_covered(page, tools)
    page.locator("#residual-with").scroll_into_view_if_needed()
    page.locator("#residual-with").hover()
    tools.screenshot(page, f"layout-toolbar-{size['width']}-{lang}")


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["390", "1280"])
@pytest.mark.parametrize("step", [7, 10, 15])
def test_no_toolbar_covers_a_legend_or_colour_bar_in_the_lesson(open_page, tools, size, step):
    page = open_lesson(open_page, tools, step, "fr", size)
    if page.locator("[data-question] input[type=radio]").count():
        commit_first_choice(page, tools)
    assert page.locator("#charts .js-plotly-plot").count() > 0
    assert_nothing_covered(page, tools)


# The x labels of each chart on screen, left to right: their boxes, to check neighbours keep apart.
X_LABELS = """() => [...document.querySelectorAll('#charts .js-plotly-plot')].map((gd) =>
  [...gd.querySelectorAll('.xtick > text')].map((t) => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
  }).filter((r) => r.right > r.left).sort((a, b) => a.left - b.left))"""
X_LABEL_GAP = 6  # px between neighbouring x labels: closer, two bars' names read as one


@pytest.mark.parametrize("lang", ["ja", "fr"])
@pytest.mark.parametrize("step", [15, 16])
def test_on_a_phone_the_training_steps_toolbar_covers_no_tick_and_their_x_labels_keep_apart(open_page, tools, lang,
                                                                                          step):
    """Step 15 on a phone: the toolbar lay over the right axis's 100% and the bars' names touched (issue 39)."""
    page = open_lesson(open_page, tools, step, lang, PHONE)
    commit_first_choice(page, tools)
    assert page.locator("#charts .js-plotly-plot").count() > 0
    assert_nothing_covered(page, tools, ".legend, .colorbar, [class$='tick'] > text")
    for labels in page.evaluate(X_LABELS):
        for a, b in zip(labels, labels[1:]):
            apart = a["bottom"] <= b["top"] or b["bottom"] <= a["top"] or b["left"] - a["right"] >= X_LABEL_GAP
            gap = b["left"] - a["right"]
            assert apart, f"step {step} ({lang}): {a['text']!r} and {b['text']!r} are {gap:.0f} px apart"


# Each tick label and axis title of a chart of the lesson (by its name): its text and box.
CHART_TEXTS = """(name) => {
  const figure = document.querySelector(`.lesson-chart[data-name="${name}"]`);
  const boxes = (s) => [...figure.querySelectorAll(s)].filter((t) => t.textContent.trim()).map((t) => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
  });
  return {xticks: boxes('.xtick > text'), yticks: boxes('.ytick > text'), ytitle: boxes('.g-ytitle text')};
}"""
TITLE_GAP = 4  # px between an axis title and its tick labels: closer, the title touches them


def overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def show_chart(page, tools, name: str) -> None:
    """Page through the charts to the one named `name`, drawn and on screen."""
    while page.locator(f".lesson-chart[data-name='{name}']").is_hidden() and page.locator("#chart-next").is_visible():
        page.click("#chart-next")
    page.locator(f".lesson-chart[data-name='{name}']").scroll_into_view_if_needed()
    tools.wait_until(page, "(n) => document.querySelector(`.lesson-chart[data-name='${n}'] .main-svg .cartesianlayer`)",
                     name)


@pytest.mark.parametrize("lang", ["zh", "ja", "fr", "en"])
def test_on_a_projector_the_pairs_axis_title_keeps_off_its_labels(open_page, tools, lang):
    """Step 15's map of each pair's share: the y axis's title touched the pairs' labels at 1280 × 720 (issue 39)."""
    page = open_lesson(open_page, tools, 15, lang, DESKTOP)
    commit_first_choice(page, tools)
    show_chart(page, tools, "speeds")
    texts = page.evaluate(CHART_TEXTS, "speeds")
    assert texts["ytitle"] and texts["yticks"], texts
    title = texts["ytitle"][0]
    gap = min(label["left"] for label in texts["yticks"]) - title["right"]
    assert gap >= TITLE_GAP, f"{lang}: the title {title['text']!r} is {gap:.0f} px from the pairs' labels"


@pytest.mark.parametrize("lang", ["zh", "ja", "fr", "en"])
def test_on_a_phone_the_probes_site_labels_keep_apart(open_page, tools, lang):
    """Step 14's probe chart: the five sites' names nearly touched in Japanese on a phone, and their boxes overlapped
    in every language (issue 39). No two tick labels overlap, and neighbouring site names keep apart."""
    page = open_lesson(open_page, tools, 14, lang, PHONE)
    commit_first_choice(page, tools)
    show_chart(page, tools, "probe")
    texts = page.evaluate(CHART_TEXTS, "probe")
    assert len(texts["xticks"]) == 5, texts["xticks"]
    labels = texts["xticks"] + texts["yticks"]
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert not overlap(a, b), f"{lang}: {a['text']!r} and {b['text']!r} overlap: {a} {b}"
    sites = sorted(texts["xticks"], key=lambda label: label["left"])
    for a, b in zip(sites, sites[1:]):
        gap = b["left"] - a["right"]
        assert gap >= X_LABEL_GAP, f"{lang}: {a['text']!r} and {b['text']!r} are {gap:.0f} px apart"


# ---- 4. figures never break across lines -----------------------------------------------------------------

FIGURE_IN_TEXT = r"[-+−]?\d[\d.,\u00a0\u202f]*(?:e[-+]?\d+|[\s\u00a0\u202f]?×[\s\u00a0\u202f]?10[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)"
# For each figure of the node's text (a power of ten, in either writing), the number of lines it spans at
# the node's present width: a Range over its characters, one distinct top per line.
LINES_PER_FIGURE = """([selector, pattern]) => {
  const node = document.querySelector(selector);
  const text = node.textContent;
  const out = [];
  for (const match of text.matchAll(new RegExp(pattern, 'g'))) {
    const range = document.createRange();
    let offset = 0, started = false;
    const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const end = offset + t.nodeValue.length;
      if (!started && match.index < end) { range.setStart(t, match.index - offset); started = true; }
      const stop = match.index + match[0].length;
      if (started && stop <= end) { range.setEnd(t, stop - offset); break; }
      offset = end;
    }
    const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
    out.push([match[0], tops.size]);
  }
  return out;
}"""


def figure_lines_at_every_width(page, selector: str) -> list:
    """Narrow the node pixel by pixel: wherever a figure falls at a line's end, it must move down whole."""
    broken, seen = [], 0
    for width in range(120, 361, 3):
        page.evaluate("([s, w]) => { document.querySelector(s).style.width = `${w}px`; }", [selector, width])
        for figure, lines in page.evaluate(LINES_PER_FIGURE, [selector, FIGURE_IN_TEXT]):
            seen += 1
            if lines != 1:
                broken.append((width, figure, lines))
    assert seen, f"no figure in {selector}"
    return broken


def test_the_verdicts_figures_stay_on_one_line(open_page, tools):
    page = open_lesson(open_page, tools, 1, "fr", PHONE)
    commit_first_choice(page, tools)
    assert figure_lines_at_every_width(page, "#verdict") == []
    assert page.locator("#verdict .num").count() > 0


@pytest.mark.parametrize("figure", ["3.58e-7", "3,6 × 10⁻⁷", "3,6\u202f×\u202f10⁻⁷"], ids=["e", "spaces", "nnbsp"])
def test_a_figure_written_into_the_page_stays_on_one_line_whatever_its_form(open_page, tools, figure):
    # Whatever writes a sentence (textContent, as the pages do), and whichever way the figure is written:
    # JavaScript's exponent, or a power of ten with plain or no-break spaces.
    page = open_lesson(open_page, tools, 1, "fr", PHONE)
    page.evaluate("text => { document.querySelector('#step-kicker').textContent = text; }",
                  f"La différence est de {figure} en float32, c'est de l'arrondi.")
    page.wait_for_timeout(50)
    assert figure_lines_at_every_width(page, "#step-kicker") == []
    spans = page.locator("#step-kicker .num")
    assert spans.count() == 1 and spans.first.inner_text() == figure
    assert spans.first.evaluate("(n) => new Set([...n.getClientRects()].map((r) => Math.round(r.top))).size") == 1
    # The sentence reads the same: only its figure is wrapped.
    assert page.text_content("#step-kicker") == f"La différence est de {figure} en float32, c'est de l'arrondi."


@pytest.mark.parametrize("lang", ["zh", "ja", "fr"])
def test_the_lessons_code_is_set_in_the_monospace_font_in_every_language(open_page, tools, lang):
    # On the Chinese page a rule giving every zh element the CJK sans font outranked `code`'s own font.
    page = open_lesson(open_page, tools, 1, lang, DESKTOP)
    commit_first_choice(page, tools)
    code = page.locator("#snippet-code")
    code.wait_for(state="visible")
    assert code.inner_text().strip(), "the snippet is shown after the reveal"
    font = code.evaluate("(n) => getComputedStyle(n).fontFamily")
    assert font.startswith('"Noto Sans Mono CJK SC"'), font
    # and the page's prose keeps its sans font
    assert "Mono" not in page.locator("#step-title").evaluate("(n) => getComputedStyle(n).fontFamily")
