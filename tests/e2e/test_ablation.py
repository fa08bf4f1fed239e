"""Turning a head off in the explorer: the loss bars and the predictions for line A change to what
/api/ablate says, and turning the head back on restores them exactly; the gallery shows each head's
measured figures and switches the same heads."""

import json
import urllib.parse
import urllib.request

import pytest

pytestmark = pytest.mark.e2e

LINE = "白日依山尽，黄河入海流。"


def ablate(server_url, off):
    body = json.dumps({"line": LINE, "position": "learned", "weights": "trained", "off": off}).encode()
    request = urllib.request.Request(server_url + "/api/ablate", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


SHOWN = """() => {
    const panel = document.querySelector('#panel-ablation');
    const plot = document.querySelector('#ablation-plot');
    return {
        state: panel.dataset.state, off: panel.dataset.off, renders: Number(panel.dataset.renderCount || 0),
        traces: (plot.data || []).map((t) => ({ name: t.name, y: Array.from(t.y) })),
        summary: document.querySelector('#ablation-summary').textContent,
        position: Number(document.querySelector('#ablation-next').dataset.position),
        lists: Array.from(document.querySelectorAll('#ablation-next .next-list'), (l) => ({
            run: l.dataset.run, title: l.querySelector('.next-list__title').textContent,
            tokens: Array.from(l.querySelectorAll('.next-token'), (t) => t.textContent),
            probs: Array.from(l.querySelectorAll('.next-prob'), (t) => t.textContent)})),
        pressed: document.querySelector('.head-switch[data-layer="1"][data-head="2"]').getAttribute('aria-pressed'),
        label: document.querySelector('.head-switch[data-layer="1"][data-head="2"]').textContent,
    };
}"""


def wait_drawn(page, tools, after, off):
    return tools.wait_until(page, """([after, off]) => {
        const p = document.querySelector('#panel-ablation');
        return p.dataset.state === 'ready' && p.dataset.off === off && Number(p.dataset.renderCount || 0) > after;
    }""", [after, off], message=f"the ablation panel did not draw with off={off!r}")


def fill(template: str, **values) -> str:
    for key, value in values.items():
        template = template.replace("{" + key + "}", str(value))
    return template


@pytest.mark.parametrize("lang", ["zh", "fr"])
def test_turning_a_head_off_changes_the_bars_and_predictions_and_on_restores_them(open_page, server_url, tools,
                                                                                   lang):
    texts = tools.texts(lang)
    page = open_page(f"/?lang={lang}&pos=learned&a={urllib.parse.quote(LINE)}#panel-ablation")
    page.locator("#panel-ablation").scroll_into_view_if_needed()
    wait_drawn(page, tools, 0, "")
    before = page.evaluate(SHOWN)
    on = ablate(server_url, [])
    assert [t["y"] for t in before["traces"]] == [on["all_on"]["loss"]]
    assert before["pressed"] == "false" and before["label"] == fill(texts["ablation_switch_on"], head=2)
    assert [ls["run"] for ls in before["lists"]] == ["all_on"]

    page.click('.head-switch[data-layer="1"][data-head="2"]')
    after = wait_drawn(page, tools, before["renders"], "1-2") and page.evaluate(SHOWN)
    off = ablate(server_url, [{"layer": 1, "head": 2}])
    assert after["pressed"] == "true" and after["label"] == fill(texts["ablation_switch_off"], head=2)
    # The bars: every head on as before, and beside them the API's loss with L1H2 off, which differs.
    name = fill(texts["ablation_off_run"], heads=fill(texts["ablation_head_short"], layer=1, head=2))
    assert [t["name"] for t in after["traces"]] == [texts["ablation_all_on"], name]
    assert after["traces"][0]["y"] == on["all_on"]["loss"]
    assert after["traces"][1]["y"] == off["ablated"]["loss"] != on["all_on"]["loss"]
    # The predictions at the position whose loss grew most, before and after, as the API gives them.
    grew = [b - a for a, b in zip(off["all_on"]["loss"], off["ablated"]["loss"])]
    t = grew.index(max(grew))
    assert after["position"] == t
    assert [ls["run"] for ls in after["lists"]] == ["all_on", "ablated"]
    assert after["lists"][1]["title"] == name
    for shown, run in zip(after["lists"], ("all_on", "ablated")):
        assert shown["tokens"] == [x["token"] for x in off[run]["top_next"][t]]
    assert after["lists"][0]["probs"] != after["lists"][1]["probs"]
    assert fill(texts["ablation_mean"].split("{on}")[0], heads=fill(texts["ablation_head_short"], layer=1, head=2)) \
        in after["summary"]

    page.click('.head-switch[data-layer="1"][data-head="2"]')
    restored = wait_drawn(page, tools, after["renders"], "") and page.evaluate(SHOWN)
    assert restored["traces"] == before["traces"], "switching the head back on restores the bars exactly"
    assert restored["lists"] == before["lists"] and restored["pressed"] == "false"


def test_the_gallery_shows_the_measured_figures_and_switches_the_same_head(open_page, server_url, tools):
    with urllib.request.urlopen(server_url + "/api/heads") as response:
        heads = json.load(response)
    learned = next(m for m in heads["models"] if m["position"] == "learned")
    page = open_page(f"/?lang=en&pos=learned&a={urllib.parse.quote(LINE)}")
    page.locator("#panel-ablation").scroll_into_view_if_needed()
    wait_drawn(page, tools, 0, "")
    page.locator("#panel-gallery").scroll_into_view_if_needed()
    page.wait_for_selector('#panel-gallery[data-state="ready"]')
    card = '.gallery-head[data-position="learned"][data-layer="1"][data-head="2"]'
    want = learned["layers"][0]["heads"][1]["ablation"]
    bars = page.evaluate(f"() => Array.from(document.querySelector('{card} .plot--gallery-ablation').data[0].y)")
    assert bars == [want["by_kind"][k] for k in ("punctuation", "second_line", "other")]
    assert f"+{want['loss_increase']:.2f} nats per character" in page.text_content(f"{card} .gallery-head__ablation")
    # Only the mode whose line the explorer shows can be switched from the gallery.
    assert page.is_hidden('.gallery-switch[data-position="rope"]')
    renders = page.evaluate("() => Number(document.querySelector('#panel-ablation').dataset.renderCount)")
    page.click(f"{card} .gallery-switch")
    wait_drawn(page, tools, renders, "1-2")
    off = ablate(server_url, [{"layer": 1, "head": 2}])
    effect = page.text_content(f"{card} .gallery-head__effect")
    assert effect == (f"Line A, L1H2 off: {off['all_on']['mean_loss']:.2f} → {off['ablated']['mean_loss']:.2f} "
                      "nats per character")
    assert page.get_attribute('.head-switch[data-layer="1"][data-head="2"]', "aria-pressed") == "true"


def test_the_heads_turned_off_are_in_the_address_and_a_link_or_back_brings_them_back(open_page, server_url, tools):
    """The heads turned off are part of the page's one state: a switch writes them into the address (off=1-2), a
    link with off= opens with them off and the panel drawn as /api/ablate answers, a head the model does not have
    is dropped, and going back brings the earlier switches back."""
    page = open_page(f"/?lang=en&pos=learned&a={urllib.parse.quote(LINE)}")
    page.locator("#panel-ablation").scroll_into_view_if_needed()
    wait_drawn(page, tools, 0, "")
    renders = page.evaluate("() => Number(document.querySelector('#panel-ablation').dataset.renderCount)")
    page.click('.head-switch[data-layer="1"][data-head="2"]')
    wait_drawn(page, tools, renders, "1-2")
    assert urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["off"] == ["1-2"]

    # A link: two heads off, one of them (layer 9) not in the model. The panel asks for the others only.
    linked = open_page(f"/?lang=en&pos=learned&off=2-1,1-2,9-1&a={urllib.parse.quote(LINE)}")
    linked.locator("#panel-ablation").scroll_into_view_if_needed()
    wait_drawn(linked, tools, 0, "1-2 2-1")
    want = ablate(server_url, [{"layer": 1, "head": 2}, {"layer": 2, "head": 1}])
    drawn = linked.evaluate("() => Array.from(document.querySelector('#ablation-plot').data.at(-1).y)")
    assert drawn == pytest.approx(want["ablated"]["loss"], abs=1e-6)
    assert urllib.parse.parse_qs(urllib.parse.urlparse(linked.url).query)["off"] == ["1-2,2-1"]

    # Back and forward: a new line pushes an entry; back brings the line and its switches.
    renders = linked.evaluate("() => Number(document.querySelector('#panel-ablation').dataset.renderCount)")
    linked.click('.head-switch[data-layer="2"][data-head="1"]')
    wait_drawn(linked, tools, renders, "1-2")
    linked.fill("#line-a", "床前明月光")
    linked.locator("#line-a").dispatch_event("change")
    tools.wait_until(linked, "() => new URLSearchParams(location.search).get('a') === '床前明月光'",
                     message="the new line never reached the address")
    renders = linked.evaluate("() => Number(document.querySelector('#panel-ablation').dataset.renderCount)")
    linked.click('.head-switch[data-layer="1"][data-head="1"]')
    wait_drawn(linked, tools, renders, "1-1 1-2")
    renders = linked.evaluate("() => Number(document.querySelector('#panel-ablation').dataset.renderCount)")
    linked.go_back()
    wait_drawn(linked, tools, renders, "1-2")
    assert linked.input_value("#line-a") == LINE
