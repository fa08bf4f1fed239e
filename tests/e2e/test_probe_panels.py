"""The panels 'Where order is kept' (GET /api/probe) and 'RoPE's rotation speeds' (GET /api/rope/speeds) in zh and
fr, at 1280x720 and on a phone: every number drawn or worded is the API's, read at test time; the mask switch, the
training-step slider and the band switch ask for the matching answer."""

import json
import urllib.parse
import urllib.request

import pytest

pytestmark = pytest.mark.e2e

SIZES = [(1280, 720), (390, 844)]
TRACES = """(sel) => document.querySelector(sel).data.map((t) => ({meta: t.meta, x: t.x, y: t.y, z: t.z ?? null}))"""


def api(server_url, path, **params):
    query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    with urllib.request.urlopen(f"{server_url}{path}?{query}") as response:
        return json.load(response)


def fill(template, **values):
    for key, value in values.items():
        template = template.replace("{" + key + "}", str(value))
    return template


def dec(value, digits, texts):
    return f"{value:.{digits}f}".replace(".", texts["decimal_sep"])


def along(sites):
    """The sites in the chart's order: before block 1, then each block's z and the residual after it."""
    by = {(s["site"], s["layer"]): s for s in sites}
    n = max(s["layer"] for s in sites)
    return [by["residual", 0]] + [by[k] for layer in range(1, n + 1) for k in (("z", layer), ("residual", layer))]


def drawn_models(page):
    return {t["meta"]: t["y"] for t in page.evaluate(TRACES, "#probe-plot")}


def expected_models(trained, untrained):
    out = {m["position"]: [s["mae"] for s in along(m["sites"])] for m in trained["models"]}
    out["untrained"] = [s["mae"] for s in along(untrained["models"][0]["sites"])]
    return out


def verdict(texts, trained, causal):
    none = next(m for m in trained["models"] if m["position"] == "none")["sites"]
    before = next(s for s in none if s["site"] == "residual" and s["layer"] == 0)
    after = next(s for s in none if s["site"] == "residual" and s["layer"] == 1)
    return fill(texts["probe_verdict" if causal else "probe_verdict_nomask"], before=dec(before["mae"], 1, texts),
                after=dec(after["mae"], 1, texts), early=dec(after["by_range"]["0-15"], 1, texts),
                chance=dec(before["chance"], 1, texts))


def wait_probe(tools, page, step, causal):
    tools.wait_until(page, """([step, causal]) => { const p = document.querySelector('#panel-probe');
        return p.dataset.state === 'ready' && p.dataset.stale === undefined && p.dataset.step === String(step)
            && p.dataset.causal === String(causal); }""", [step, causal])


@pytest.mark.parametrize("width, height", SIZES)
@pytest.mark.parametrize("lang", ["zh", "fr"])
def test_where_order_is_kept(open_page, tools, server_url, lang, width, height):
    texts = tools.texts(lang)
    page = open_page(f"/?lang={lang}&pos=none&weights=random&n_layer=1", width=width, height=height)
    tools.reveal(page, "#panel-probe")
    final = api(server_url, "/api/snapshots")["final_step"]
    wait_probe(tools, page, final, True)
    trained = api(server_url, "/api/probe")
    untrained = api(server_url, "/api/probe", weights="random", position="none", n_layer=1)
    assert drawn_models(page) == expected_models(trained, untrained)
    assert page.text_content("#probe-verdict") == verdict(texts, trained, True)
    assert page.text_content("#panel-probe-title") == texts["panel_probe_title"]
    assert "Haviv" in page.text_content("#panel-probe")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width
    tools.screenshot(page, f"probe-{lang}-{width}")

    # The mask switch: every model without the causal mask; the none model falls to chance.
    page.uncheck("#probe-causal")
    wait_probe(tools, page, final, False)
    trained_off = api(server_url, "/api/probe", causal="false")
    untrained_off = api(server_url, "/api/probe", weights="random", position="none", n_layer=1, causal="false")
    assert drawn_models(page) == expected_models(trained_off, untrained_off)
    assert page.text_content("#probe-verdict") == verdict(texts, trained_off, False)

    # The training-step slider: the trained models as they stood at 500 steps.
    page.check("#probe-causal")
    steps = api(server_url, "/api/snapshots")["steps"]
    page.eval_on_selector("#probe-step", """(input, i) => { input.value = String(i);
        input.dispatchEvent(new Event('input', { bubbles: true })); }""", steps.index(500))
    wait_probe(tools, page, 500, True)
    assert drawn_models(page) == expected_models(api(server_url, "/api/probe", step=500), untrained)


@pytest.mark.parametrize("width, height", SIZES)
@pytest.mark.parametrize("lang", ["zh", "fr"])
def test_rope_speeds_and_the_band_switch(open_page, tools, server_url, lang, width, height):
    texts = tools.texts(lang)
    page = open_page(f"/?lang={lang}", width=width, height=height)
    tools.reveal(page, "#panel-speeds")
    speeds = api(server_url, "/api/rope/speeds")
    (trace,) = page.evaluate(TRACES, "#speeds-plot")
    heads = [h for layer in speeds["layers"] for h in layer["heads"]]
    assert trace["z"] == [[h["attended"][i] for h in heads] for i in range(len(speeds["theta_degrees"]))]
    assert len(trace["y"]) == 16 and dec(57.3, 1, texts) in trace["y"][0]  # pair 0 turns 57.3° per character
    assert page.is_hidden("#speeds-verdict")

    page.select_option("#speeds-measure", "distance_1")
    tools.wait_until(page, "(v) => document.querySelector('#speeds-plot').data[0].z[0][4] === v",
                     heads[4]["distance_1"][0])

    page.check('input[name="speeds-band"][value="fastest"]')
    tools.wait_until(page, "() => document.querySelector('#panel-speeds').dataset.band === 'fastest'")
    answer = api(server_url, "/api/rope/speeds", band="fastest")
    on, off = answer["all_on"], answer["stopped"]
    layer, head = max(((li, hi) for li, row in enumerate(on["previous"]) for hi, _ in enumerate(row)),
                      key=lambda lh: on["previous"][lh[0]][lh[1]])
    wanted = fill(texts["speeds_verdict"], band=texts["speeds_band_fastest"], before=dec(on["val_loss"], 3, texts),
                  after=dec(off["val_loss"], 3, texts), layer=layer + 1, head=head + 1,
                  share_before=round(100 * on["previous"][layer][head]),
                  share_after=round(100 * off["previous"][layer][head]))
    assert page.text_content("#speeds-verdict") == wanted
    assert "Barbero" in page.text_content("#panel-speeds")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width
    tools.screenshot(page, f"speeds-{lang}-{width}")
