"""Watch the heads form: the training-step slider shared by the head gallery and the position-similarity
panel. Every figure on screen at a step is checked against the API's answer for that step (/api/heads?step=N,
/api/positions?step=N, /api/snapshots, /api/ablate with step), read at test time, so the tests hold for
whatever snapshots ship."""

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

LINE = "白日依山尽，黄河入海流。"
KINDS = ("punctuation", "second_line", "other")


def api(server_url, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server_url + path, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


@pytest.fixture
def timeline(server_url):
    found = api(server_url, "/api/snapshots")
    assert len(found["steps"]) > 1, "no training snapshots ship: model/weights/snapshots.json is missing"
    return found


# ---- the page's words, rebuilt from the dictionaries and the API's numbers -------------------------------


def fill(template: str, **values) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", str(value))
    return template


def grouped(n: int, lang: str) -> str:
    """A whole number as Intl.NumberFormat(lang) groups it: 10,000, or 10 000 (narrow no-break space) in French."""
    return f"{n:,}".replace(",", "\u202f") if lang == "fr" else f"{n:,}"


def decimal(text: str, texts: dict) -> str:
    return text.replace(".", texts["decimal_sep"])


def pct(share: float, texts: dict) -> str:
    return fill(texts["percent"], value=round(100 * share))


def say(texts: dict, parts: list[str]) -> str:
    return texts["sentence_sep"].join(p for p in parts if p)


def plain(text: str) -> str:
    """What a rich text shows: its `code` marks are rendered as <code>, without the backticks."""
    return text.replace("`", "")


def gallery_findings(tl: dict, step: int, texts: dict, lang: str) -> dict[str, str]:
    """The sentences the gallery shows at `step`, per mode, as the API's rows and findings say them."""
    out = {}
    st = grouped(step, lang)
    for model in tl["models"]:
        mode = texts[f"step_with_{model['position']}"]
        prev = next(r for r in model["previous_head"] if r["step"] == step)
        first = model["findings"]["previous_head"]
        parts = [fill(texts["step_prev_never"], mode=mode) if first is None
                 else fill(texts["step_prev_from"], mode=mode, **{"from": grouped(first, lang)})]
        parts.append(fill(texts["step_prev_at_yes"], step=st, head=prev["head"], share=pct(prev["share"], texts))
                     if prev["present"] else
                     fill(texts["step_prev_at_no"], step=st, head=prev["head"], share=pct(prev["share"], texts),
                          named=pct(tl["named"], texts)))
        couplets = next(r for r in model["couplet_heads"] if r["step"] == step)["heads"]
        first = model["findings"]["couplet_heads"]
        parts.append(texts["step_couplet_never"] if first is None
                     else fill(texts["step_couplet_from"], **{"from": grouped(first, lang)}))
        names = [fill(texts["step_head_share"], share=pct(h["share"], texts),
                      name=fill(texts["ablation_head_short"], layer=h["layer"], head=h["head"]))
                 for h in sorted(couplets, key=lambda h: -h["share"])]
        parts.append(fill(texts["step_couplet_at"], step=st, heads=texts["ablation_list_sep"].join(names)) if names
                     else fill(texts["step_couplet_at_none"], step=st))
        if model["position"] == "none":
            row = next(r for r in model["layer1"] if r["step"] == step)
            parts.append(texts["step_flat_always" if model["findings"]["layer1_flat"] else "step_flat_not_always"])
            parts.append(fill(texts["step_flat_at_yes" if row["flat"] else "step_flat_at_no"], step=st,
                              head=row["head"], offset=row["offset"], share=pct(row["share"], texts)))
        out[model["position"]] = plain(say(texts, parts))
    return out


def rhythm_findings(tl: dict, step: int, texts: dict, lang: str) -> str:
    row = next(r for r in tl["rhythm"] if r["step"] == step)
    first = next((r for r in tl["rhythm"] if r["step"] == tl["rhythm_from"]), None)
    parts = [fill(texts["step_rhythm_from"], period=first["period"], **{"from": grouped(first["step"], lang)})
             if first else texts["step_rhythm_never"]]
    parts.append(fill(texts["step_rhythm_at_yes" if row["shows"] else "step_rhythm_at_no"], step=grouped(step, lang),
                      period=row["period"], at=decimal(f"{row['at_period']:.2f}", texts),
                      median=decimal(f"{row['median']:.2f}", texts)))
    parts.append(texts["step_rope_fixed"])
    return plain(say(texts, parts))


# ---- reading the page --------------------------------------------------------------------------------------

CARDS = """() => Array.from(document.querySelectorAll('.gallery-head'), (f) => ({
    position: f.dataset.position, layer: Number(f.dataset.layer), head: Number(f.dataset.head),
    sentence: f.querySelector('.gallery-head__sentence').textContent,
    bars: Array.from(f.querySelector('.plot--gallery').data[0].y),
    ablation: f.querySelector('.plot--gallery-ablation')
        ? Array.from(f.querySelector('.plot--gallery-ablation').data[0].y) : null}))"""

FINDINGS = """(selector) => Object.fromEntries(Array.from(document.querySelectorAll(`${selector} .step-findings__item`),
    (p) => [p.dataset.position || '', p.textContent]))"""

LEARNED_MAP = "() => Array.from(document.querySelector('#sim-learned').data[0].z, (row) => Array.from(row))"


def wait_step(page, tools, panel: str, step: int) -> None:
    """Until `panel` shows the answer for `step`, drawn (ready, not marked stale)."""
    tools.wait_until(page, """([panel, step]) => {
        const p = document.querySelector(panel);
        return p.dataset.state === 'ready' && p.dataset.step === String(step) && !('stale' in p.dataset);
    }""", [panel, step], message=f"{panel} did not draw step {step}")


def address(page) -> dict:
    """The page's query, as lists of values."""
    return urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)


def open_at_gallery(open_page, tools, path, **kwargs):
    page = open_page(path, **kwargs)
    for panel in ("#panel-positions", "#panel-gallery"):
        page.locator(panel).scroll_into_view_if_needed()
        page.wait_for_selector(f'{panel}[data-state="ready"]')
    return page


# The sentences /api/heads sent for each head before model/ stopped wording them (the page words the roles now).
SENTENCES = json.loads((Path(__file__).parent / "data" / "head_sentences.json").read_text("utf-8"))


def sentence(position: str, step: int, layer: int, head: int, lang: str) -> str:
    at = SENTENCES["at_step"][position].get(str(step))
    return (at or SENTENCES["sentences"][position])[layer - 1][head - 1][lang]


def assert_gallery_is(page, heads: dict, lang: str) -> None:
    shown = page.evaluate(CARDS)
    assert len(shown) == sum(len(layer["heads"]) for m in heads["models"] for layer in m["layers"])
    for item in shown:
        model = next(m for m in heads["models"] if m["position"] == item["position"])
        want = model["layers"][item["layer"] - 1]["heads"][item["head"] - 1]
        assert item["sentence"] == sentence(item["position"], heads["step"], item["layer"], item["head"], lang)
        assert item["bars"] == want["by_offset"]
        if want.get("ablation"):
            assert item["ablation"] == [want["ablation"]["by_kind"][k] for k in KINDS]


def test_an_early_step_redraws_both_panels_and_the_last_step_restores_them(open_page, server_url, tools, timeline):
    """zh. The slider moved by keyboard in the gallery moves the one in the similarity panel; each panel then
    draws exactly the API's answer for that step, and the final step the shipped answer again."""
    first, final = timeline["steps"][0], timeline["final_step"]
    texts = tools.texts("zh")
    page = open_at_gallery(open_page, tools, "/?lang=zh&pos=learned")
    shipped_heads = api(server_url, "/api/heads")
    shipped_map = api(server_url, "/api/positions")["learned"]
    wait_step(page, tools, "#panel-gallery", final)
    assert_gallery_is(page, shipped_heads, "zh")
    label = fill(texts["step_of"], step=grouped(final, "zh"), final=grouped(final, "zh"))
    assert page.text_content("#panel-gallery .step-control__value") == label

    slider = page.locator("#gallery-step")
    slider.focus()
    page.keyboard.press("Home")  # the range's first value: the earliest snapshot
    wait_step(page, tools, "#panel-gallery", first)
    at_first = api(server_url, f"/api/heads?step={first}")
    assert at_first["step"] == first
    assert_gallery_is(page, at_first, "zh")
    assert page.evaluate(CARDS) != [], "the gallery is drawn"
    assert f"step={first}" in page.evaluate("() => location.search")
    # One state: the other panel's slider moved too, and its learned map is the table at that step.
    assert page.input_value("#sim-step") == "0"
    assert page.text_content("#panel-positions .step-control__value") == fill(
        texts["step_of"], step=grouped(first, "zh"), final=grouped(final, "zh"))
    wait_step(page, tools, "#panel-positions", first)
    early_map = api(server_url, f"/api/positions?step={first}")["learned"]
    assert page.evaluate(LEARNED_MAP) == early_map != shipped_map

    slider.focus()
    page.keyboard.press("End")
    wait_step(page, tools, "#panel-gallery", final)
    wait_step(page, tools, "#panel-positions", final)
    assert_gallery_is(page, shipped_heads, "zh")
    assert page.evaluate(LEARNED_MAP) == shipped_map
    assert "step=" not in page.evaluate("() => location.search"), "the last step is the default: no step= in the URL"


def test_back_and_forward_bring_back_the_training_step_with_the_mode(open_page, server_url, tools, timeline):
    """The step is part of the page's one state, which the address holds: a slider move replaces the entry (a drag
    is not history), a mode change pushes one, and going back or forward draws the step and mode of that entry."""
    first, final = timeline["steps"][0], timeline["final_step"]
    page = open_at_gallery(open_page, tools, "/?lang=en&pos=learned")
    wait_step(page, tools, "#panel-gallery", final)
    entries = page.evaluate("history.length")
    slider = page.locator("#gallery-step")
    slider.focus()
    page.keyboard.press("Home")
    wait_step(page, tools, "#panel-gallery", first)
    assert page.evaluate("history.length") == entries, "a slider move replaces the entry"
    tools.redraw_after(page, lambda: page.check('input[name="position"][value="rope"]'))
    assert page.evaluate("history.length") == entries + 1
    assert address(page)["step"] == [str(first)], "the new entry keeps the step"
    slider.focus()
    page.keyboard.press("End")
    wait_step(page, tools, "#panel-gallery", final)
    assert "step" not in address(page)

    tools.redraw_after(page, page.go_back)
    assert address(page)["step"] == [str(first)] and address(page)["pos"] == ["learned"]
    assert page.is_checked('input[name="position"][value="learned"]')
    wait_step(page, tools, "#panel-gallery", first)
    wait_step(page, tools, "#panel-positions", first)
    assert page.input_value("#gallery-step") == "0" and page.input_value("#sim-step") == "0"
    assert_gallery_is(page, api(server_url, f"/api/heads?step={first}"), "en")
    assert page.evaluate(LEARNED_MAP) == api(server_url, f"/api/positions?step={first}")["learned"]

    tools.redraw_after(page, page.go_forward)
    assert "step" not in address(page)
    assert page.is_checked('input[name="position"][value="rope"]')
    wait_step(page, tools, "#panel-gallery", final)
    wait_step(page, tools, "#panel-positions", final)
    assert_gallery_is(page, api(server_url, "/api/heads"), "en")


def test_the_findings_say_the_api_steps_and_shares_and_follow_a_language_switch(open_page, server_url, tools,
                                                                                 timeline):
    """A link with step= opens at that step (zh); the sentences word /api/snapshots' findings and the rows at
    that step; switching to French words them again."""
    step = timeline["steps"][1]
    page = open_at_gallery(open_page, tools, f"/?lang=zh&step={step}")
    wait_step(page, tools, "#panel-gallery", step)
    wait_step(page, tools, "#panel-positions", step)
    assert page.input_value("#gallery-step") == "1" == page.input_value("#sim-step")
    for lang in ("zh", "fr"):
        if lang == "fr":
            page.select_option("#lang", "fr")
        texts = tools.texts(lang)
        want = gallery_findings(timeline, step, texts, lang)
        tools.wait_until(page, f"(want) => JSON.stringify(({FINDINGS})('#gallery-findings')) === JSON.stringify(want)",
                         want,
                         message=f"{lang}: the gallery's findings are not the API's")
        rhythm = rhythm_findings(timeline, step, texts, lang)
        tools.wait_until(page, f"(want) => ({FINDINGS})('#sim-findings')[''] === want", rhythm,
                         message=f"{lang}: the rhythm's findings are not the API's")
        label = fill(texts["step_of"], step=grouped(step, lang), final=grouped(timeline["final_step"], lang))
        assert page.text_content("#panel-gallery .step-control__value") == label
        assert page.get_attribute("#gallery-step", "aria-valuetext") == label
    assert "lang=fr" in page.evaluate("() => location.search") and f"step={step}" in page.evaluate(
        "() => location.search")


SHOWN_BARS = """() => {
    const panel = document.querySelector('#panel-ablation');
    return {state: panel.dataset.state, off: panel.dataset.off, renders: Number(panel.dataset.renderCount || 0),
            traces: (document.querySelector('#ablation-plot').data || []).map((t) => Array.from(t.y)),
            summary: document.querySelector('#ablation-summary').textContent};
}"""


def test_a_head_switch_at_a_step_asks_for_that_step_and_draws_its_losses(open_page, server_url, tools, timeline):
    """fr. At an early step, the gallery's switch sends that step to /api/ablate, and the loss bars are the
    API's answer for the model at that step, not the shipped model's."""
    step = timeline["steps"][0]
    texts = tools.texts("fr")
    sent = []
    page = open_page(f"/?lang=fr&pos=learned&a={urllib.parse.quote(LINE)}")
    page.on("request", lambda r: sent.append(json.loads(r.post_data)) if r.url.endswith("/api/ablate") else None)
    page.locator("#panel-gallery").scroll_into_view_if_needed()
    page.wait_for_selector('#panel-gallery[data-state="ready"]')
    page.locator("#gallery-step").fill("0")
    wait_step(page, tools, "#panel-gallery", step)
    card = '.gallery-head[data-position="learned"][data-layer="1"][data-head="2"]'
    tools.wait_until(page, f"() => !document.querySelector('{card} .gallery-switch').hidden",
                     message="the learned model's switches are not offered at the step")
    before = page.evaluate(SHOWN_BARS)["renders"]
    page.click(f"{card} .gallery-switch")
    tools.wait_until(page, """(after) => {
        const p = document.querySelector('#panel-ablation');
        return p.dataset.state === 'ready' && p.dataset.off === '1-2' && Number(p.dataset.renderCount) > after;
    }""", before, message="the ablation panel did not draw L1H2 off")
    assert sent[-1]["step"] == step and sent[-1]["off"] == [{"layer": 1, "head": 2}]
    body = {"line": LINE, "position": "learned", "weights": "trained", "off": [{"layer": 1, "head": 2}]}
    at_step = api(server_url, "/api/ablate", {**body, "step": step})
    shipped = api(server_url, "/api/ablate", body)
    shown = page.evaluate(SHOWN_BARS)
    assert shown["traces"] == [at_step["all_on"]["loss"], at_step["ablated"]["loss"]]
    assert shown["traces"][0] != shipped["all_on"]["loss"], "the bars are the model at the step, not the shipped one"
    assert fill(texts["ablation_at_step"], step=grouped(step, "fr")) in shown["summary"]
    effect = page.text_content(f"{card} .gallery-head__effect")
    assert decimal(f"{at_step['ablated']['mean_loss']:.2f}", texts) in effect


def test_on_a_phone_the_slider_fits_and_moves(open_page, tools, timeline):
    """390 px wide, zh: the slider and its label fit the screen, nothing is wider than it, and a move draws."""
    page = open_at_gallery(open_page, tools, "/?lang=zh", width=390, height=844)
    box = page.locator("#gallery-step").bounding_box()
    assert box["width"] >= 150 and box["height"] >= 40, "wide and tall enough to drag with a thumb"
    for selector in ("#panel-gallery .step-control", "#panel-positions .step-control", "#gallery-findings",
                     "#sim-findings"):
        right = page.evaluate(f"() => document.querySelector('{selector}').getBoundingClientRect().right")
        assert right <= 390, f"{selector} reaches {right} px"
    page.locator("#gallery-step").fill("0")
    wait_step(page, tools, "#panel-gallery", timeline["steps"][0])
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    tools.screenshot(page, "training-steps-phone-zh")


def test_snapshot_losses_are_dots_on_the_training_curves(open_page, server_url, tools, timeline):
    page = open_page("/?lang=en")
    tools.reveal(page, "#panel-training")
    dots = page.evaluate("""() => document.querySelector('#training-modes').data
        .filter((t) => String(t.meta).startsWith('snapshot-'))
        .map((t) => ({meta: t.meta, x: Array.from(t.x), y: Array.from(t.y)}))""")
    want = {f"snapshot-{m['position']}": m["val_loss"] for m in timeline["models"]}
    assert {d["meta"]: d["y"] for d in dots} == want
    assert all(d["x"] == timeline["steps"] for d in dots)
    assert page.is_visible("#training-snapshots-note")
    assert page.text_content("#training-snapshots-note") == tools.texts("en")["train_snapshot_note"]


def test_without_snapshots_there_is_no_slider_and_the_shipped_heads_show(open_page, server_url, tools):
    """A weights folder without snapshots: /api/snapshots has the last step only. Its answer is the real one
    cut to that step."""
    real = api(server_url, "/api/snapshots")
    final = real["final_step"]
    last = lambda rows: [r for r in rows if r["step"] == final]  # noqa: E731
    cut = {**real, "steps": [final], "rhythm": last(real["rhythm"]),
           "rhythm_from": final if real["rhythm"] and last(real["rhythm"])[0]["shows"] else None,
           "models": [{**m, "val_loss": m["val_loss"][-1:], "previous_head": last(m["previous_head"]),
                       "couplet_heads": last(m["couplet_heads"]), "layer1": last(m["layer1"])} for m in real["models"]]}
    routes = {"**/api/snapshots": lambda route: route.fulfill(status=200, content_type="application/json",
                                                              body=json.dumps(cut))}
    page = open_at_gallery(open_page, tools, "/?lang=fr&step=100", routes=routes)
    wait_step(page, tools, "#panel-gallery", final)
    assert page.is_hidden("#panel-gallery .step-control") and page.is_hidden("#panel-positions .step-control")
    assert page.is_hidden("#gallery-findings") and page.is_hidden("#sim-findings")
    assert_gallery_is(page, api(server_url, "/api/heads"), "fr")
    assert "step=" not in page.evaluate("() => location.search"), "a step that does not ship is dropped"


def test_a_refused_step_is_worded_in_the_page_language(open_page, server_url, tools, timeline):
    """If the server refuses the step (it no longer ships it), the gallery says so in French with the steps that
    do ship, from the 422's ctx."""
    try:
        api(server_url, "/api/heads?step=7")
        pytest.fail("step 7 should not ship")
    except urllib.error.HTTPError as error:
        assert error.code == 422
        refusal = error.read().decode()
    detail = json.loads(refusal)["detail"][0]
    assert detail["loc"] == ["query", "step"] and detail["ctx"]["steps"] == timeline["steps"]
    routes = {re.compile(r"/api/heads\?step="): lambda route: route.fulfill(status=422, content_type="application/json",
                                                                 body=refusal)}
    open_page.allow("status of 422")
    page = open_at_gallery(open_page, tools, "/?lang=fr", routes=routes)
    page.locator("#gallery-step").fill("0")
    texts = tools.texts("fr")
    want = fill(texts["error_step"], steps=texts["ablation_list_sep"].join(grouped(s, "fr") for s in timeline["steps"]))
    tools.wait_until(page, "(want) => document.querySelector('#panel-gallery .js-load-error').textContent === want",
                     want, message="the refusal is not worded in French")
    assert page.evaluate("() => 'stale' in document.querySelector('#panel-gallery').dataset"), \
        "the charts of another step are marked as such"
