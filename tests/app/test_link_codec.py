"""Issue 39, item 9: every query parameter of / and /lesson is read by one codec (app/services/link_codec.py).
A value the page cannot use, a repeated parameter, an invisible character in the relative panel's boxes and a
parameter the page does not have each give a notice in the page's language naming the parameter and what the
page opened with; the page receives the decisions (#page-link) and parses no query itself."""

import json
import re
from html import unescape
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[2] / "static"
LANGS = ("zh", "ja", "fr", "en")


def texts(lang: str) -> dict:
    return json.loads((STATIC / "i18n" / f"{lang}.json").read_text())


def notices(html: str) -> list[str]:
    return [unescape(t) for t in re.findall(r"<p [^>]*data-notice>(.*?)</p>", html, re.S)]


def link(html: str) -> dict:
    return json.loads(unescape(re.search(r'id="page-link">(.*?)</script>', html, re.S).group(1)))["state"]


def bad(lang, name, asked, allowed, used):
    return texts(lang)["notice_bad_value"].format(name=name, asked=asked, allowed=allowed, used=used)


# Each example of item 9 on /: the query, the notice's fields, and the value the page opens with.
EXPLORER = [
    ("layer=5", "layer", "5", "1–2", "layer=1", {"layer": 1}),
    ("layer=abc", "layer", "abc", "1–2", "layer=1", {"layer": 1}),
    ("causal=maybe", "causal", "maybe", "0, 1", "causal=1", {"causal": True}),
    ("posinfo=2", "posinfo", "2", "0, 1", "posinfo=1", {"posinfo": True}),
    ("align=yes", "align", "yes", "0, 1", "align=1", {"align": True}),
    ("rel_layer=7", "rel_layer", "7", "1–2", "rel_layer=1", {"rel_layer": 1}),
    ("rel_head=9", "rel_head", "9", "1–4", "rel_head=1", {"rel_head": 1}),
    ("step=12345", "step", "12345", "100, 250, 500, 1000, 2000, 3000, 10000", "step=10000", {"step": None}),
    ("off=9-9", "off", "9-9", "1-1 … 2-4", None, {"off": []}),
    ("off=garbage", "off", "garbage", "1-1 … 2-4", None, {"off": []}),
]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("query, name, asked, allowed, used, opened", EXPLORER)
def test_the_explorer_says_what_it_used_for_a_value_it_cannot_use(client, lang, query, name, asked, allowed, used,
                                                                  opened):
    page = client.get(f"/?{query}&lang={lang}").text
    used = used or texts(lang)["notice_no_heads_off"]
    assert notices(page) == [bad(lang, name, asked, allowed, used)]
    state = link(page)
    assert {k: state[k] for k in opened} == opened


@pytest.mark.parametrize("lang", LANGS)
def test_a_box_of_the_relative_panel_takes_one_visible_character(client, lang):
    t = texts(lang)
    page = client.get(f"/?rel_first=明明&lang={lang}").text
    assert notices(page) == [t["notice_one_character"].format(name="rel_first", asked="明明", used="明")]
    # U+202E reorders text on screen, U+200B is an invisible format character: refused as in the lines.
    page = client.get(f"/?rel_first=%E2%80%AE&rel_second=%E2%80%8B&lang={lang}").text
    assert notices(page) == [
        t["notice_invisible_reorders"].format(name="rel_first", code="U+202E", used="明"),
        t["notice_invisible"].format(name="rel_second", code="U+200B", used="月"),
    ]
    assert (link(page)["rel_first"], link(page)["rel_second"]) == ("明", "月")
    assert 'value="\u202e"' not in page


@pytest.mark.parametrize("lang", LANGS)
def test_a_repeated_parameter_is_said_and_none_of_its_values_taken(client, lang):
    t = texts(lang)
    page = client.get(f"/?pos=rope&pos=alibi&lang={lang}").text
    want = t["notice_repeated"].format(name="pos", count=2, asked=t["notice_values_sep"].join(["rope", "alibi"]),
                                       used="pos=learned")
    assert notices(page) == [want]
    assert link(page)["pos"] == "learned"
    assert 'value="rope" checked' not in page


def test_a_parameter_the_page_does_not_have_is_named(client):
    page = client.get("/?seed=-1&lang=en").text
    assert notices(page) == [texts("en")["notice_unknown_param"].format(name="seed", asked="-1")]
    lesson = client.get("/lesson?setp=3&lang=en").text
    assert notices(lesson) == [texts("en")["notice_unknown_param"].format(name="setp", asked="3")]


def test_full_width_digits_are_digits(client):
    page = client.get("/?layer=２&rel_head=３&lang=en").text
    assert notices(page) == []
    assert (link(page)["layer"], link(page)["rel_head"]) == (2, 3)
    lesson = client.get("/lesson?step=３&lang=en").text
    assert notices(lesson) == [] and link(lesson)["step"] == 3 and 'data-step="3"' in lesson
    # Any other script's digits are refused (Arabic-Indic three).
    lesson = client.get("/lesson?step=٣&lang=en").text
    assert link(lesson)["step"] == 1 and len(notices(lesson)) == 1


@pytest.mark.parametrize("lang", LANGS)
def test_the_lesson_says_what_it_used_for_present(client, lang):
    page = client.get(f"/lesson?present=maybe&lang={lang}").text
    assert notices(page) == [bad(lang, "present", "maybe", "0, 1", "present=0")]
    assert link(page)["present"] is False


def test_values_the_page_offers_say_nothing_and_are_taken(client):
    page = client.get("/?pos=rope&layer=2&causal=0&posinfo=0&align=0&rel_first=日&rel_layer=2&rel_head=4"
                      "&step=1000&off=2-4,1-1&lang=en").text
    assert notices(page) == []
    state = link(page)
    assert (state["pos"], state["layer"], state["causal"], state["posinfo"], state["align"]) == \
        ("rope", 2, False, False, False)
    assert (state["rel_first"], state["rel_layer"], state["rel_head"], state["step"], state["off"]) == \
        ("日", 2, 4, 1000, ["1-1", "2-4"])


def test_a_repeated_lang_is_said_and_negotiated_as_without(client):
    page = client.get("/lesson?lang=fr&lang=en", headers={"Accept-Language": "ja"}).text
    assert '<html lang="ja">' in page
    t = texts("ja")
    assert notices(page) == [t["notice_repeated"].format(name="lang", count=2, asked="fr、en", used="日本語")]


def test_no_script_parses_the_query():
    """The page receives the codec's decisions: no explorer or lesson script reads location.search."""
    scripts = [p for p in (STATIC / "js").rglob("*.js") if "vendor" not in p.parts]
    assert [str(p) for p in scripts if "URLSearchParams(location.search" in p.read_text()] == []


def test_heads_off_that_the_model_has_are_kept_when_others_are_refused(client):
    page = client.get("/?off=2-1,1-2,9-1&lang=en").text
    assert link(page)["off"] == ["1-2", "2-1"]
    assert notices(page) == [bad("en", "off", "2-1,1-2,9-1", "1-1 … 2-4", "off=1-2,2-1")]
