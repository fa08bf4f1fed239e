"""What each head does: the head gallery, the heads named on the student's own maps, and the period of
the trained pos_emb, each checked against the API's numbers."""

import json
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

# The sentences /api/heads sent for each shipped head before model/ stopped wording them: the page's own words
# for the roles it sends now must read the same, in every language. [position][layer - 1][head - 1][lang]
SENTENCES = json.loads((Path(__file__).parent / "data" / "head_sentences.json").read_text("utf-8"))["sentences"]


def sentence(position: str, layer: int, head: int, lang: str) -> str:
    return SENTENCES[position][layer - 1][head - 1][lang]


def api(server_url, path):
    with urllib.request.urlopen(server_url + path) as response:
        return json.load(response)


@pytest.mark.parametrize("lang", ["zh", "fr"])
def test_gallery_draws_every_head_with_its_sentence(open_page, server_url, lang):
    heads = api(server_url, "/api/heads")
    page = open_page(f"/?lang={lang}&pos=rope")
    page.locator("#panel-gallery").scroll_into_view_if_needed()
    page.wait_for_selector('#panel-gallery[data-state="ready"]')
    shown = page.evaluate("""() => Array.from(document.querySelectorAll('.gallery-head'), (f) => ({
        position: f.dataset.position, layer: Number(f.dataset.layer), head: Number(f.dataset.head),
        sentence: f.querySelector('.gallery-head__sentence').textContent,
        bars: f.querySelector('.plot--gallery').data[0].y}))""")
    assert len(shown) == 3 * 2 * 4
    # The mode chosen above comes first, and is marked.
    assert shown[0]["position"] == "rope"
    assert page.locator(".gallery-mode.is-chosen").get_attribute("data-position") == "rope"
    for item in shown:
        model = next(m for m in heads["models"] if m["position"] == item["position"])
        want = model["layers"][item["layer"] - 1]["heads"][item["head"] - 1]
        assert item["sentence"] == sentence(item["position"], item["layer"], item["head"], lang)
        assert item["bars"] == pytest.approx(want["by_offset"], abs=1e-12)


def test_trained_maps_name_each_head_and_random_ones_do_not(open_page, server_url, tools):
    heads = api(server_url, "/api/heads")
    learned = next(m for m in heads["models"] if m["position"] == "learned")
    page = open_page("/?lang=en&pos=learned&layer=1")
    tools.wait_until(page, "() => document.querySelector('.heatmap-row__role').textContent !== ''")
    roles = page.eval_on_selector_all(".heatmap-row__role", "(ns) => ns.map((n) => n.textContent)")
    assert roles == [f"On the validation poems: {sentence('learned', 1, h['head'], 'en')}."
                     for h in learned["layers"][0]["heads"]]
    page.select_option("#weights", "random")
    tools.wait_until(page, "() => document.querySelector('.heatmap-row__role').textContent === ''")


SHOWS = """([roles, sentence]) => {
    const shown = Array.from(document.querySelectorAll('.heatmap-row__role'), (n) => n.textContent);
    const card = document.querySelector('.gallery-head[data-position="none"][data-layer="2"][data-head="2"]');
    return JSON.stringify(shown) === JSON.stringify(roles)
        && card?.querySelector('.gallery-head__sentence').textContent === sentence;
}"""


def test_punctuation_total_is_shown_and_the_sentences_follow_a_language_switch(open_page, server_url, tools):
    """none, layer 2, head 2 puts 87% on punctuation, 22% on the latest mark: the gallery and the heads'
    names on the maps give both figures in the page's language, and re-word them when the language changes."""
    none = next(m for m in api(server_url, "/api/heads")["models"] if m["position"] == "none")
    layer2 = none["layers"][1]["heads"]
    h = layer2[1]
    assert (round(100 * h["punctuation"]), round(100 * h["last_mark"])) == (87, 22)
    assert sentence("none", 2, 2, "fr") == \
        "regarde surtout la ponctuation (87\u202f%, dont 22\u202f% sur le dernier signe)"
    page = open_page("/?lang=fr&pos=none&layer=2")
    page.locator("#panel-gallery").scroll_into_view_if_needed()
    for lang in ("fr", "ja"):
        if lang != "fr":
            page.select_option("#lang", lang)
        role = tools.texts(lang)["attn_head_role"]
        roles = [role.replace("{role}", sentence("none", 2, x["head"], lang)) for x in layer2]
        tools.wait_until(page, SHOWS, [roles, sentence("none", 2, 2, lang)], message=f"{lang}: sentences not shown")
    assert "87%" in sentence("none", 2, 2, "ja") and "22%" in sentence("none", 2, 2, "ja")


def test_the_position_panel_states_the_period_the_table_learned(open_page, server_url):
    rhythm = api(server_url, "/api/positions")["learned_rhythm"]
    page = open_page("/?lang=en")
    page.locator("#panel-positions").scroll_into_view_if_needed()
    page.wait_for_selector('#panel-positions[data-state="ready"]')
    text = page.locator("#sim-rhythm").inner_text()
    period = rhythm["period"]
    assert f"most alike {period} positions apart" in text
    assert f"{rhythm['by_lag'][period]:.2f}" in text
    assert period == 12 and "couplet of five-character lines" in text
