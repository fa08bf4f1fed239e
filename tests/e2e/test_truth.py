"""Every sentence true: the A − B alignment, the view without positions, the layer count, the verdicts
computed from the answer, the lesson's terms and the server's errors in each language, links into the page."""

import json
import math
import re
import urllib.request
from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.e2e

LESSON_A, LESSON_B = "白日依山尽", "山依日白尽"
ROUNDING = 1e-6  # attention weights closer than this in float32 are rounding (the server's float64 rerun decides)

# Every diff heatmap's z, per head; null where masked.
DIFFS = """() => Array.from(document.querySelectorAll('.heatmap[data-line="diff"]'), (gd) => gd.data[0].z)"""
MAPS = """(line) => Array.from(document.querySelectorAll(`.heatmap[data-line="${line}"]`), (gd) => gd.data[0].z)"""
SCORES = """() => Array.from(document.querySelectorAll('.heatmap-row__score'), (n) => Number(n.dataset.value))"""
DEPTH_ROWS = """() => Array.from(document.querySelectorAll('#depth-table tbody tr'), (tr) =>
    Array.from(tr.querySelectorAll('td'), (td) => Number(td.dataset.value)))"""
# What a student reads: the header, the page and the footer (the language picker names its languages).
VISIBLE = """() => [document.querySelector('.site-header__titles'), document.querySelector('main'),
    document.querySelector('.site-footer')].map((n) => n.innerText).join('\\n')"""


def query(page) -> dict:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def plain(text: str) -> str:
    """A dictionary text as the page shows it: backticks mark code and are not drawn."""
    return text.replace("`", "")


def fill(text: str, **values) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", str(value))
    return text


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(v: float) -> str:
    """Two significant digits as the page writes them (i18n.js scientific(v, 2)): plain from 0.01 to 99
    (0.24), else a power of ten with narrow no-break spaces (2.7 × 10⁻⁷); 0 stays 0."""
    if v == 0:
        return "0"
    exponent = math.floor(math.log10(abs(v)))
    if -2 <= exponent <= 1:
        return f"{v:.{1 - exponent}f}"
    mantissa, power = f"{v:.1e}".split("e")
    return f"{mantissa}\u202f×\u202f10{str(int(power)).translate(SUPERSCRIPT)}"


def weight(v: float) -> str:
    """How the page writes an attention weight or a difference of weights: 0.49, or 3.1e-8 when tiny."""
    return f"{v:.2f}" if abs(v) >= 0.01 else sci(v)


def permutation(a: str, b: str) -> list[int]:
    """perm[i] = the position in b of a's i-th character, repeats matched in order."""
    free = {}
    for j, ch in enumerate(b):
        free.setdefault(ch, []).append(j)
    return [free[ch].pop(0) for ch in a]


def max_abs(rows) -> float:
    return max((abs(v) for row in rows for v in row if v is not None), default=0.0)


def post_api(server_url: str, path: str, body: dict) -> dict:
    request = urllib.request.Request(f"{server_url}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def compare_api(server_url: str, body: dict) -> dict:
    return post_api(server_url, "/api/compare", body)


def test_aligned_difference_is_blank_on_the_last_row_and_cell_by_cell_is_not(open_page, tools, server_url):
    t = tools.texts("en")
    page = open_page("/?weights=random&pos=none&n_layer=1&lang=en")
    assert page.get_attribute("#heatmaps", "data-aligned") == "true", "B is a reordering of A: aligned by default"
    assert "align" not in query(page)
    a, b, diffs = page.evaluate(MAPS, "a"), page.evaluate(MAPS, "b"), page.evaluate(DIFFS)
    perm = permutation(LESSON_A, LESSON_B)
    last = len(LESSON_A) - 1
    for h, diff in enumerate(diffs):
        # The page's map is A[q][k] − B[perm q][perm k], computed here from the two maps it draws.
        for q in range(len(perm)):
            for k in range(len(perm)):
                w = b[h][perm[q]][perm[k]]
                want = None if a[h][q][k] is None or w is None else a[h][q][k] - w
                got = diff[q][k]
                assert (got is None) == (want is None) and (got is None or abs(got - want) < 1e-12), (h, q, k)
        assert all(v is not None for v in diff[last]), "the last character sees every key in both lines"
        assert max_abs([diff[last]]) < ROUNDING, f"head {h + 1}: aligned last row is rounding"
    # Each head's number is the largest |A − B| of its own aligned map.
    assert page.evaluate(SCORES) == pytest.approx([max_abs(d) for d in diffs], abs=1e-12)
    assert page.text_content("#attn-diff-what") == plain(t["attn_diff_aligned"])
    largest = max(max_abs([d[last]]) for d in diffs)
    verdict = page.text_content("#attn-verdict")
    judged = post_api(server_url, "/api/compare/verdict", {"line_a": LESSON_A, "line_b": LESSON_B, "position": "none",
                                                           "weights": "random", "n_layer": 1})
    assert judged["aligned"]["with_position"][0]["difference"] == "rounding"
    before_rerun = t["attn_verdict_blank"].split("{value64}")[0]
    assert verdict.startswith(fill(before_rerun, ch="尽", value=weight(largest)))
    assert page.is_visible("#attn-verdict")

    tools.redraw_after(page, lambda: page.uncheck("#align"))
    assert query(page)["align"] == "0" and page.get_attribute("#heatmaps", "data-aligned") == "false"
    cells = page.evaluate(DIFFS)
    a = page.evaluate(MAPS, "a")
    b = page.evaluate(MAPS, "b")
    for h, diff in enumerate(cells):
        assert diff[last] == pytest.approx([x - y for x, y in zip(a[h][last], b[h][last])], abs=1e-12)
    assert max(max_abs([d[last]]) for d in cells) > 1e-3, "cell by cell, the last row compares other characters"
    assert page.text_content("#attn-diff-what") == plain(t["attn_diff_cells_reorder"])
    assert page.is_hidden("#attn-verdict")

    page.reload()
    tools.wait_rendered(page, 0)
    assert not page.is_checked("#align") and page.get_attribute("#heatmaps", "data-aligned") == "false"


def test_the_text_follows_the_lines_typed(open_page, tools):
    t = tools.texts("en")
    page = open_page("/?weights=random&pos=none&n_layer=1&lang=en")
    rows = page.evaluate(DEPTH_ROWS)  # under none, one column: without position
    assert rows[0][0] < 1e-5 < rows[1][0]
    assert page.text_content("#depth-verdict") == t["sentence_sep"].join(
        [fill(t["depth_verdict_same"], value=sci(rows[0][0])), fill(t["depth_verdict_leak"], value=sci(rows[1][0]))])

    # A reordering that ends on another character: alignment still holds, the last row cannot be blank.
    tools.redraw_after(page, lambda: page.fill("#line-b", "尽白日依山"))
    assert page.get_attribute("#heatmaps", "data-aligned") == "true"
    last_rows = max(max_abs([d[-1]]) for d in page.evaluate(DIFFS))
    assert page.text_content("#attn-verdict").startswith(
        fill(t["attn_verdict_other_end"], a="尽", b="山", value=weight(last_rows)))
    rows = page.evaluate(DEPTH_ROWS)
    assert rows[0][0] > 1e-5
    assert page.text_content("#depth-verdict") == fill(t["depth_verdict_other_end"], a="尽", b="山",
                                                       value=sci(rows[0][0]))

    # Other characters: nothing to align, and the page says it subtracts cell by cell.
    tools.redraw_after(page, lambda: page.fill("#line-b", "床前明月光"))
    assert page.get_attribute("#heatmaps", "data-aligned") == "false" and page.is_disabled("#align")
    assert page.text_content("#attn-diff-what") == plain(t["attn_diff_cells_other"])
    assert page.is_hidden("#attn-verdict")
    rows = page.evaluate(DEPTH_ROWS)
    assert page.text_content("#depth-verdict") == fill(t["depth_verdict_other_chars"], value=sci(rows[0][0]))


def test_layer_count_reaches_1_and_4(open_page, tools):
    page = open_page("/?weights=random&lang=en")
    assert page.is_enabled("#n-layer")
    assert page.eval_on_selector_all("#n-layer option", "opts => opts.map(o => o.value)") == ["1", "2", "3", "4"]
    for n in ("1", "4"):
        with page.expect_request("**/api/compare") as sent:
            tools.redraw_after(page, lambda n=n: page.select_option("#n-layer", n))
        assert json.loads(sent.value.post_data)["n_layer"] == int(n)
        assert query(page)["n_layer"] == n
        assert page.eval_on_selector_all("#layer", "s => s[0].options.length") == int(n)
        assert f"{n} layers" in page.text_content("#model-summary")
    tools.redraw_after(page, lambda: page.select_option("#layer", "4"))
    assert page.get_attribute("#heatmaps", "data-layer") == "4"
    # Trained weights fix their own depth: the control shows it and cannot change it.
    trained = open_page("/?lang=en")
    if trained.input_value("#weights") == "trained":
        assert trained.is_disabled("#n-layer")


@pytest.mark.parametrize("position", ["learned", "none"])
def test_attention_without_position_information(open_page, tools, server_url, position):
    page = open_page(f"/?weights=random&pos={position}&lang=en")
    seen = page.evaluate(MAPS, "a")
    tools.redraw_after(page, lambda: page.uncheck("#posinfo"))
    assert query(page)["posinfo"] == "0" and page.get_attribute("#heatmaps", "data-posinfo") == "false"
    blind = page.evaluate(MAPS, "a")
    # The maps are the answer's attention_without_position, masked where the key is in the future.
    answer = compare_api(server_url, {"line_a": LESSON_A, "line_b": LESSON_B, "position": position,
                                      "weights": "random", "n_head": 4})
    for h, z in enumerate(blind):
        want = answer["lines"][0]["attention_without_position"][0][h]
        for q, row in enumerate(z):
            for k, v in enumerate(row):
                assert (v is None) == (k > q) and (v is None or abs(v - want[q][k]) < 1e-7)
    difference = max(abs(x - y) for s, o in zip(seen, blind) for rs, ro in zip(s, o)
                     for x, y in zip(rs, ro) if x is not None)
    t = tools.texts("en")
    if position == "none":
        assert difference == 0, "under none there is no position information to remove"
        assert page.text_content("#attn-blind-note") == t["attn_blind_none"]
    else:
        assert difference > 1e-3, "pos_emb changes the weights"
        assert page.text_content("#attn-blind-note") == plain(t["attn_blind"])
    page.reload()
    tools.wait_rendered(page, 0)
    assert not page.is_checked("#posinfo") and page.evaluate(MAPS, "a") == blind


def test_head_split_shows_the_lessons_32_wide_example(page, tools):
    lesson, model = page.locator("#split-lesson"), page.locator("#split-model")
    # The lesson's column comes from GET /api/head-split, which may answer after the compare.
    tools.wait_until(page, "() => document.querySelector('#split-lesson').dataset.qkv !== undefined")
    assert [lesson.locator(f'[data-shape="{s}"]').first.text_content() for s in ("q", "heads", "scores", "joined")] \
        == ["(1, 5, 32)", "(1, 4, 5, 8)", "(1, 4, 5, 5)", "(1, 5, 32)"]
    assert lesson.get_attribute("data-qkv") == str(3 * 32 * 32 + 3 * 32) == "3168"
    assert lesson.get_attribute("data-proj") == str(32 * 32 + 32) == "1056"
    assert model.get_attribute("data-qkv") == str(3 * 128 * 128 + 3 * 128)
    assert model.get_attribute("data-proj") == str(128 * 128 + 128)
    assert "49,536" in page.text_content("#split-why") and "16,512" in page.text_content("#split-why")


def test_links_keep_the_fragment_and_every_panel_has_one(open_page, tools):
    page = open_page("/?lang=en#panel-depth")
    assert page.evaluate("location.hash") == "#panel-depth"
    tools.redraw_after(page, lambda: page.select_option("#weights", "random"))
    assert page.evaluate("location.hash") == "#panel-depth", "a change keeps the panel the link points at"
    panels = page.eval_on_selector_all("section.panel", "ss => ss.map(s => s.id)")
    anchors = page.eval_on_selector_all(".panel__anchor", "as => as.map(a => a.getAttribute('href'))")
    assert anchors == [f"#{p}" for p in panels]
    toc = page.eval_on_selector_all(".toc a", "as => as.map(a => a.getAttribute('href'))")
    assert set(toc) == {f"#{p}" for p in panels}
    page.click('.toc a[href="#panel-training"]')
    assert page.evaluate("location.hash") == "#panel-training"


def test_relative_panel_keeps_its_choice_in_the_url(open_page, tools):
    page = open_page("/?weights=random&lang=en&rel_first=床&rel_second=前&rel_head=3")
    assert page.input_value("#rel-first") == "床" and page.input_value("#rel-second") == "前"
    with page.expect_request("**/api/relative") as sent:
        page.locator("#panel-relative").scroll_into_view_if_needed()
    body = json.loads(sent.value.post_data)
    assert (body["first"], body["second"], body["weights"]) == ("床", "前", "random")
    tools.wait_until(page, "() => document.querySelector('#panel-relative').dataset.state === 'ready'")
    assert page.input_value("#rel-head") == "3"
    caption = page.text_content("#rel-caption")
    assert caption.startswith("床→前") and "head 3 of 4" in caption and "random weights" in caption
    page.select_option("#rel-layer", "2")
    tools.wait_until(page, "() => new URL(location.href).searchParams.get('rel_layer') === '2'")


def test_chart_text_is_readable_on_a_projector(open_page, tools):
    page = open_page("/?lang=en", width=1280, height=720)
    sizes = page.evaluate("""() => {
      const px = (sel) => Array.from(document.querySelectorAll(sel), (n) => parseFloat(getComputedStyle(n).fontSize));
      return {
        colorbar: px('.heatmap .colorbar text, #depth-plot .colorbar text'),
        titles: px(['.heatmap', '#depth-plot'].flatMap((p) => [`${p} .g-xtitle text`, `${p} .g-ytitle text`]).join()),
        ticks: px('#depth-plot .xtick text, #depth-plot .ytick text'),
      };
    }""")
    for kind, values in sizes.items():
        assert values and min(values) >= 14, f"{kind}: {sorted(set(values))}"


# The lesson's terms in each language, and what must not be left in it.
TERMS = {
    "zh": ["多头注意力与位置编码", "位置嵌入", "旋转位置编码", "因果掩码", "每一对分量", "均匀分布", "第 1 层之后",
           "q（查询）", "k（键）", "底数", "奈特", "训练好的"],
    "ja": ["マルチヘッドアテンションと位置エンコーディング", "練習問題", "次元", "位置の埋め込み",
           "回転位置エンコーディング", "クエリ", "キー", "底", "ナット", "Haviv ら"],
    "fr": ["Attention multi-têtes et encodage de position", "requête", "clé", "dimensions", "laisse fuiter l'ordre",
           "Haviv et al."],
}
FORBIDDEN = {
    "zh": ["每一对数", "平均分布", "block", "训练过的"],
    "ja": ["演習", "幅", "NoPE"],
    "fr": ["largeur", "vers 1e", "query", "key", "NoPE"],
}
# Code names, proper names and notation that stay as they are in every language.
CODE_AND_NAMES = {
    "pos_emb", "qkv", "proj", "RoPE", "softmax", "transpose", "view", "use_position", "False", "GPT", "Llama",
    "Qwen", "NoPos", "Haviv", "JSON", "json", "cos", "sin", "log", "max",
    "Barbero", "TransformerLens", "hook_z",  # the probe panels cite a paper and name the tool's hook
}
ENGLISH = {"the", "and", "with", "without", "layer", "layers", "head", "heads", "query", "key", "keys", "width",
           "loss", "trained", "random", "weights", "failed", "request", "line", "lines", "link", "panel", "shown"}


def read_everything(page, tools):
    """Scroll through the page so the lazy panels load, then return its visible text and chart text."""
    for panel in ("relative", "length", "positions", "training"):
        # Scrolled to again at every look, as a reader would: the panels above it still drawing can grow and push it
        # out of reach before it is seen (on a busy machine its data was then never asked for).
        tools.wait_until(page, f"""() => {{
            const panel = document.querySelector('#panel-{panel}');
            panel.scrollIntoView({{ block: 'nearest' }});
            return panel.dataset.state === 'ready';
        }}""", message=f"#panel-{panel} never drew")
    charts = page.evaluate("() => Array.from(document.querySelectorAll('.js-plotly-plot .main-svg text'), "
                           "(t) => t.textContent).join(' ')")
    return page.evaluate(VISIBLE), charts


@pytest.mark.parametrize("lang", ["zh", "ja", "fr"])
def test_each_language_speaks_the_lessons_terms(open_page, tools, lang):
    page = open_page(f"/?pos=rope&lang={lang}")
    text, charts = read_everything(page, tools)
    everything = f"{text}\n{charts}"
    for term in TERMS[lang]:
        assert term in everything, f"{lang}: the lesson's term {term!r} is missing"
    for word in FORBIDDEN[lang]:
        assert word not in everything, f"{lang}: {word!r} is not the lesson's term"
    words = set(re.findall(r"[A-Za-z][A-Za-z_]*[A-Za-z]", everything))
    if lang == "fr":
        left = {w for w in words if w.lower() in ENGLISH}
    else:
        left = words - CODE_AND_NAMES
    assert not left, f"{lang}: English left in the visible text: {sorted(left)}"


@pytest.mark.parametrize("lang", ["zh", "ja", "fr", "en"])
def test_errors_are_written_in_the_pages_language(open_page, tools, lang):
    open_page.allow("status of 422")
    t = tools.texts(lang)
    page = open_page(f"/?pos=rope&lang={lang}")
    # A line past RoPE's 512 characters: the server refuses it (string_too_long, ctx max_length 512).
    with page.expect_response("**/api/compare") as answer:
        page.fill("#line-b", "山" * 513)
    assert answer.value.status == 422
    tools.wait_until(page, "() => !document.querySelector('#line-b-error').hidden")
    assert page.text_content("#line-b-error") == fill(t["error_too_long"], max=512)
    assert page.text_content("#status") == t["status_invalid"], "an input to fix, not a failed request"

    # An empty line is an input mistake: no request, and no "the last request failed".
    requests = []
    page.on("request", lambda r: requests.append(r.url) if "/api/compare" in r.url else None)
    page.fill("#line-b", "")
    tools.wait_until(page, "(text) => document.querySelector('#line-b-error').textContent === text",
                     t["error_empty"])
    tools.wait_idle(page)
    assert page.text_content("#status") == t["status_invalid"] != t["status_error"]
    assert requests == []

    # Switching language words the error on screen again.
    other = "en" if lang != "en" else "zh"
    page.select_option("#lang", other)
    tools.wait_until(page, "(text) => document.querySelector('#line-b-error').textContent === text",
                     tools.texts(other)["error_empty"])


def test_chart_numbers_use_the_languages_decimal_separator(open_page, tools):
    """Plotly prints the text it is given (here the depth chart's hover labels): in French they read
    3,58 × 10⁻⁷ and 0,240, as the sentences beside them do."""
    page = open_page("/?weights=random&pos=none&n_layer=1&lang=fr")
    labels = page.evaluate("() => document.querySelector('#depth-plot').data.flatMap((trace) => trace.text)")
    written = re.compile(r"0|\d,\d\d\u202f×\u202f10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+|\d+,\d+")
    assert labels and all(written.fullmatch(label) for label in labels), labels
    verdict = page.text_content("#depth-verdict")
    assert re.search(r"\d,\d+\u202f×\u202f10⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]", verdict) and not re.search(r"\d\.\d", verdict), verdict


ALIGN_PAIRS = [
    ("白日依山尽", "山依日白尽"),  # a reordering
    ("白日依山Q", "Z白日依山"),  # Q and Z are both the unknown id: a reordering to the model, not by character
    ("白日依山尽", "白日依山尽黄河"),  # another length: no A − B at all
    ("白日依山尽", "床前明月光"),  # other characters
]


@pytest.mark.parametrize("lang", ["zh", "fr"])
def test_the_page_aligns_exactly_when_the_server_does(open_page, tools, server_url, lang):
    """data-aligned on the A − B maps is the verdict's `aligned` being set, and the sentences under them agree."""
    t = tools.texts(lang)
    page = open_page(f"/?weights=random&pos=none&n_layer=1&lang={lang}")
    for a, b in ALIGN_PAIRS:
        if (a, b) != (LESSON_A, LESSON_B):
            tools.redraw_after(page, lambda a=a, b=b: (page.fill("#line-a", a), page.fill("#line-b", b)))
            tools.wait_idle(page)
        judged = post_api(server_url, "/api/compare/verdict", {"line_a": a, "line_b": b, "position": "none",
                                                               "weights": "random", "n_layer": 1})
        aligned = judged["aligned"] is not None
        assert page.get_attribute("#heatmaps", "data-aligned") == str(aligned).lower(), (a, b)
        assert page.is_disabled("#align") == (not aligned), (a, b)
        if len(a) != len(b):
            assert page.is_hidden("#attn-diff-what") and page.is_hidden("#attn-verdict")
            continue
        what = "attn_diff_aligned" if aligned else "attn_diff_cells_other"
        assert page.text_content("#attn-diff-what") == plain(t[what])
        assert page.is_visible("#attn-verdict") == aligned, (a, b)
        # The depth sentence is the verdict's reason, in the page's language.
        reason = judged["depth"]["reason"]
        assert page.text_content("#depth-verdict").startswith(
            plain(t[f"depth_verdict_{reason}"]).split("{")[0]), (a, b, reason)
