"""Issue 32's loose ends of the API and the pages: each bad value gets a 422 naming the field and the rule, or,
in a page's link, a notice in the page's language; none is silently replaced."""

import json
import re
from html import unescape
from pathlib import Path

import pytest

from model.assets import VOCAB_PATH

STATIC = Path(__file__).resolve().parents[2] / "static"


def texts(lang: str, lesson: bool = False) -> dict:
    return json.loads((STATIC / "i18n" / ("lesson" if lesson else "") / f"{lang}.json").read_text())


def only_error(r, field: str, location: str = "body") -> dict:
    assert r.status_code == 422, r.text
    (error,) = r.json()["detail"]
    assert error["loc"] == [location, field], error
    return error


# ---- trained weights fix their own shape, in the lesson's verdicts as in /api/compare ----------------

@pytest.mark.parametrize("position", ("learned", "rope", "none"))
@pytest.mark.parametrize("field, value", (("n_layer", 3), ("n_layer", 1), ("n_head", 8)))
def test_a_verdict_on_trained_weights_refuses_a_shape_they_do_not_have(client, registry, position, field, value):
    body = {"position": position, "weights": "trained", field: value}
    verdict = only_error(client.post("/api/lesson/order/verdict", json=body), field)
    compare = only_error(client.post("/api/compare", json=body), field)
    assert verdict["type"] == compare["type"] == "trained_shape"
    cfg = registry.trained[position][0].config
    assert verdict["ctx"] == {"n_layer": cfg.n_layer, "n_head": cfg.n_head}
    assert f"n_layer {cfg.n_layer}" in verdict["msg"] and f"{field} {value}" in verdict["msg"]


def test_a_verdict_on_trained_weights_takes_their_own_shape_or_none(client, registry):
    cfg = registry.trained["none"][0].config
    for body in ({"weights": "trained"}, {"weights": "trained", "n_layer": cfg.n_layer, "n_head": cfg.n_head}):
        got = client.post("/api/lesson/order/verdict", json=body)
        assert got.status_code == 200 and got.json()["figures"]["n_layer"] == cfg.n_layer
    # Random weights still take any depth: the step's untrained model, 3 layers deep.
    got = client.post("/api/lesson/order/verdict", json={"weights": "random", "n_layer": 3}).json()
    assert got["figures"]["n_layer"] == 3


# ---- /api/rope -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("base", ("nan", "NaN", "inf", "-inf", "infinity"))
def test_rope_refuses_a_base_that_is_not_a_finite_number(client, base):
    error = only_error(client.get(f"/api/rope?base={base}"), "base", "query")
    assert error["type"] == "finite_number" and "finite" in error["msg"]


@pytest.mark.parametrize("positions", ("1,,2", "1,2,", ",1", "", " ", "1, ,2"))
def test_rope_refuses_an_empty_position_between_commas(client, positions):
    error = only_error(client.get("/api/rope", params={"positions": positions}), "positions", "query")
    assert error["type"] == "positions" and "empty" in error["msg"]


def test_rope_still_reads_positions_with_spaces_after_the_commas(client):
    assert client.get("/api/rope", params={"positions": "1, 2"}).json()["positions"] == [1, 2]


# ---- invisible controls in a line -----------------------------------------------------------------------

BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
OTHER_CONTROLS = ["\u200b", "\u200e", "\ufeff", "\u00ad", "\x00", "\x07", "\t", "\r", "\x7f", "\x85"]
LINE_FIELDS = [  # (path, field, a body with a valid value for every other field)
    ("/api/compare", "line_a", {}), ("/api/compare", "line_b", {}),
    ("/api/lesson/order/verdict", "line_a", {}), ("/api/lesson/order/verdict", "line_b", {}),
    ("/api/lesson/ablate/verdict", "line_a", {}),
    ("/api/ablate", "line", {}),
    ("/api/relative", "first", {}), ("/api/relative", "second", {}),
]


@pytest.mark.parametrize("ch", BIDI + OTHER_CONTROLS, ids=lambda ch: f"U+{ord(ch):04X}")
@pytest.mark.parametrize("path, field, body", LINE_FIELDS, ids=lambda x: x if isinstance(x, str) else "")
def test_a_line_with_an_invisible_control_is_refused_naming_it(client, ch, path, field, body):
    value = ch if field in ("first", "second") else f"白日{ch}依山尽"
    error = only_error(client.post(path, json={**body, field: value}), field)
    code = f"U+{ord(ch):04X}"
    assert error["type"] == "control_character" and error["ctx"]["code"] == code and code in error["msg"]
    assert error["ctx"]["index"] == (1 if field in ("first", "second") else 3)


def test_a_line_break_is_a_character_of_the_vocabulary_and_is_taken(client):
    assert "\n" in json.loads(VOCAB_PATH.read_text())["chars"]
    assert client.post("/api/compare", json={"line_a": "白日依山尽，\n黄河入海流。"}).status_code == 200


def test_the_page_words_a_control_character_error_in_each_language():
    for lang in ("zh", "ja", "fr", "en"):
        for key in ("error_control", "error_control_reorders"):
            assert "{code}" in texts(lang)[key] and "{index}" in texts(lang)[key]
    script = (STATIC / "js" / "shared" / "errors.js").read_text()
    assert 'tr(ctx.kind === "reorders" ? "error_control_reorders" : "error_control"' in script


# ---- a link's value the page does not offer: said at the top, in the page's language ----------------------

def notices(html: str) -> list[str]:
    return [unescape(t) for t in re.findall(r"<p [^>]*data-notice>(.*?)</p>", html, re.S)]


@pytest.mark.parametrize("lang", ("zh", "ja", "fr", "en"))
@pytest.mark.parametrize("key, value, allowed, used", (
    ("pos", "alibi", "learned, rope, none", "pos=learned"), ("n_layer", "9", "1–4", "n_layer=2"),
    ("heads", "3", "1, 2, 4, 8", "heads=4"), ("weights", "pretrained", "random, trained", "weights=trained"),
))
def test_the_explorer_names_a_value_it_does_not_offer(client, lang, key, value, allowed, used):
    t = texts(lang)
    shown = notices(client.get(f"/?{key}={value}&lang={lang}").text)
    assert shown == [t["notice_bad_value"].format(name=key, asked=value, allowed=allowed, used=used)]
    assert f"{key}={value}" in shown[0]


def test_the_explorer_says_nothing_of_values_it_offers(client):
    assert notices(client.get("/?pos=rope&n_layer=3&heads=8&weights=random&lang=en").text) == []


@pytest.mark.parametrize("lang", ("zh", "ja", "fr", "en"))
@pytest.mark.parametrize("code", ("abc", "abcdef", "ABCDE0", "ABCDEFG"))
def test_the_lesson_names_a_class_code_that_cannot_be_one(client, lang, code):
    want = texts(lang, lesson=True)["notice_bad_class"].format(asked=code, length=6)
    assert notices(client.get(f"/lesson?class={code}&lang={lang}").text) == [want]


def test_a_class_code_of_the_right_shape_is_left_to_the_class_page(client):
    assert notices(client.get("/lesson?class=ABCDEF&lang=en").text) == []
