"""The guided lesson's server side: the page in four languages, its step data, QR codes, /api/head-split,
and that every text the lesson's scripts ask for exists in every language."""

import io
import json
import re
from html import unescape
from pathlib import Path

import pytest
import segno
from fastapi.testclient import TestClient
from shipped_models import app_on_shipped_models

from app.domain.lesson_steps import STEPS
from model.experiments import head_split

ROOT = Path(__file__).resolve().parents[2]
LANGS = ["zh", "ja", "fr", "en"]


@pytest.fixture(scope="module")
def client():
    with TestClient(app_on_shipped_models()) as c:
        yield c


def lesson_texts(lang: str) -> dict:
    return json.loads((ROOT / "static" / "i18n" / "lesson" / f"{lang}.json").read_text(encoding="utf-8"))


def main_texts(lang: str) -> dict:
    return json.loads((ROOT / "static" / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))


def page_data(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="lesson-data">(.*?)</script>', html, re.S)
    assert match, "the page carries its data for the first paint"
    return json.loads(match.group(1))


@pytest.mark.parametrize("lang", LANGS)
def test_page_opens_the_asked_step_in_each_language(client, lang):
    response = client.get(f"/lesson?step=5&lang={lang}")
    assert response.status_code == 200
    html = response.text
    assert f'<html lang="{lang}">' in html
    assert 'data-step="5"' in html
    assert lesson_texts(lang)["posemb_title"] in unescape(html)  # L&#39;embedding in French
    for control in ('id="line-a"', 'id="line-b"', 'id="present"', "data-question", "data-commit", "data-reveal",
                    "data-verdict"):
        assert control in html
    data = page_data(html)
    assert data["steps"] == client.get("/api/lesson").json()["steps"]
    assert data["options"] == client.get("/api/options").json()
    assert data["lesson_texts"] == lesson_texts(lang)


@pytest.mark.parametrize("step", ["0", str(len(STEPS) + 1), "x", "-1", ""])
def test_a_bad_step_in_a_link_opens_the_first(client, step):
    response = client.get(f"/lesson?step={step}&lang=en")
    assert response.status_code == 200
    assert 'data-step="1"' in response.text


def test_steps_follow_the_lesson_and_load_valid_setups(client):
    steps = client.get("/api/lesson").json()["steps"]
    assert [s["id"] for s in steps][:5] == ["order", "leak", "nomask", "pair", "posemb"]
    assert steps[-1]["id"] == "summary" and steps[-2]["id"] == "selftest"
    for step in steps:
        setup = step["setup"]
        if not setup or setup["line_a"] is None:  # no setup, or one that reads no line (the shipped probe's steps)
            continue
        body = {"line_a": setup["line_a"], "line_b": setup["line_b"] or setup["line_a"], "position": setup["position"],
                "weights": setup["weights"], "causal": setup["causal"]}
        if setup["weights"] == "random":
            body |= {"n_layer": setup["n_layer"], "n_head": setup["n_head"]}
        assert client.post("/api/compare", json=body).status_code == 200, step["id"]
    limit = next(s for s in steps if s["id"] == "limit")
    assert len(limit["setup"]["line_a"]) == client.get("/api/options").json()["max_chars"]["learned"] == 128


# Written out by hand from the lesson's order: the explorer's depth panel (untrained models of 1 to 3 layers and the
# mask-off control, beside two lines compared without positions under the mask) answers the mask-off step (3) and
# the first exercise (16); its length panel's losses answer the third exercise's ranking (18).
DEPTH_PANEL = {"position": "none", "causal": True}
EXPLORER_SHOWS = {
    "order": [("nomask", DEPTH_PANEL), ("ex1", DEPTH_PANEL)],
    "leak": [("nomask", DEPTH_PANEL), ("ex1", DEPTH_PANEL)],
    "nomask": [("ex1", DEPTH_PANEL)],
    "pair": [("ex1", DEPTH_PANEL)],
    "posemb": [("ex1", DEPTH_PANEL)],
    "limit": [("ex1", DEPTH_PANEL)],
    "rotate": [("ex1", DEPTH_PANEL)],
    "length": [("ex3", {})],
}


def test_each_step_names_the_later_answers_its_explorer_link_would_give_away(client):
    steps = client.get("/api/lesson").json()["steps"]
    ids = [step["id"] for step in steps]
    for n, step in enumerate(steps, 1):
        shows = [(item["step"], item["when"]) for item in step["explorer_shows"]]
        assert shows == EXPLORER_SHOWS.get(step["id"], []), f"step {n} ({step['id']})"
        for later, when in shows:
            assert ids.index(later) + 1 > n, f"step {n} holds back step {later}, which comes before it"
            assert set(when) <= set(step["setup"] or {}), f"step {n}: {when} names a field its setup lacks"


def test_the_steps_before_the_ranking_of_losses_hold_the_trained_losses_back(client):
    """The third exercise (step 18) ranks the three trained models by their validation losses: the seventeen steps
    before it say so, and the page holds the losses back there (the trained weights' note, step 10's curves)."""
    steps = client.get("/api/lesson").json()["steps"]
    assert [step["id"] for step in steps][17] == "ex3"
    assert [step["losses_answer"] for step in steps] == ["ex3"] * 17 + [None] * (len(steps) - 17)


def test_the_lessons_printed_head_split_is_what_the_model_counts():
    """The page sets the lesson's printed parameter counts beside ours: for the head split they must agree."""
    printed = next(s["lesson"] for s in STEPS if s["id"] == "split")
    counted = next(p for p in head_split(32, 4, 5)["params"] if p["n_head"] == 4)
    assert printed == {"qkv": counted["qkv"], "proj": counted["proj"]}


@pytest.mark.parametrize("lang", LANGS)
def test_qr_code_encodes_the_steps_link(client, lang):
    response = client.get(f"/lesson/qr.svg?step=3&lang={lang}")
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/svg+xml"
    svg = response.text
    assert svg.startswith("<svg") and "3" in re.search(r"<title>(.*?)</title>", svg).group(1)
    # Exactly a QR code of the page's own address for that step (the test client's host is testserver).
    expected = io.BytesIO()
    segno.make(f"http://testserver/lesson?step=3&lang={lang}", error="m").save(
        expected, kind="svg", xmldecl=False, scale=6, border=2, dark="#1d2330", light="#ffffff",
        title=lesson_texts(lang)["qr_title"].format(n=3))
    assert response.content == expected.getvalue()


@pytest.mark.parametrize("query, field", [("step=0", "step"), (f"step={len(STEPS) + 1}", "step"),
                                                  ("step=2&lang=de", "lang")])
def test_qr_code_rejects_bad_links(client, query, field):
    response = client.get(f"/lesson/qr.svg?{query}")
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", field]


def test_head_split_is_the_lessons(client):
    data = client.get("/api/head-split").json()
    assert data["shapes"] == {"q": [1, 5, 32], "heads": [1, 4, 5, 8], "scores": [1, 4, 5, 5]}
    # Linear(32, 96) and Linear(32, 32), weights plus biases, whatever the head count.
    assert {(p["n_head"], p["qkv"], p["proj"]) for p in data["params"]} == {
        (h, 32 * 96 + 96, 32 * 32 + 32) for h in (1, 2, 4, 8)}


def test_head_split_other_widths(client):
    data = client.get("/api/head-split?n_embd=128&n_head=8&length=7").json()
    assert data["shapes"]["heads"] == [1, 8, 7, 16]
    assert {p["qkv"] for p in data["params"]} == {128 * 384 + 384}


@pytest.mark.parametrize("query, needle", [
    ("n_embd=30&n_head=4", "n_head must divide n_embd"),
    ("length=0", "greater than or equal to 1"),
    ("n_embd=2048", "less than or equal to 1024"),
])
def test_head_split_bad_input_names_the_rule(client, query, needle):
    response = client.get(f"/api/head-split?{query}")
    assert response.status_code == 422
    assert needle in json.dumps(response.json())


def test_every_language_has_every_lesson_text():
    keys = [set(lesson_texts(lang)) for lang in LANGS]
    assert all(k == keys[0] for k in keys)
    for lang in LANGS:
        texts = lesson_texts(lang)
        for step in STEPS:
            assert f"{step['id']}_title" in texts and f"{step['id']}_framing" in texts, (lang, step["id"])
            if step["choices"] and step["kind"] not in ("ex2", "ex3"):  # those two name runs, from main texts
                assert f"{step['id']}_question" in texts
                for choice in step["choices"]:
                    assert f"{step['id']}_choice_{choice}" in texts, (lang, step["id"], choice)
            if step["lesson"]:
                assert f"{step['id']}_lesson" in texts
            for q in step.get("questions") or []:
                for key in (f"selftest_{q['id']}", f"selftest_{q['id']}_answer",
                            *[f"selftest_{q['id']}_choice_{c}" for c in q["choices"]]):
                    assert key in texts, (lang, key)
        for key, value in texts.items():
            if isinstance(value, dict):  # plural forms, picked by the language's rule for vars[count]
                forms = {k: v for k, v in value.items() if k != "count"}
                assert "other" in forms and set(forms) <= {"zero", "one", "two", "few", "many", "other"}, key
                assert all(f"{{{value['count']}}}" in form for form in forms.values()), (lang, key)
            else:
                assert value.strip() or key == "sentence_sep", (lang, key)  # "" in zh and ja


def test_every_text_the_scripts_ask_for_exists():
    """tr("key") literals in the lesson's and class mode's scripts name a key of the lesson's or the explorer's
    texts."""
    sources = [path for page in ("lesson", "class") for path in (ROOT / "static" / "js" / page).glob("*.js")]
    asked = set()
    for path in sources:
        asked |= set(re.findall(r'\btr\("([a-z0-9_]+)"', path.read_text(encoding="utf-8")))
    assert len(asked) > 60
    for lang in LANGS:
        known = set(lesson_texts(lang)) | set(main_texts(lang))
        assert not asked - known, (lang, sorted(asked - known))


def test_the_verdict_names_the_lines_line_a_and_line_b_and_refuses_a_and_b_by_name(client):
    """One name per field on every route: line_a and line_b, as /api/compare; a and b, their earlier names, are
    refused like any unknown field, the 422 naming the field."""
    new = client.post("/api/lesson/order/verdict", json={"line_a": "白日依山尽", "line_b": "尽山依日白"})
    assert new.status_code == 200
    for old in ({"a": "白日依山尽"}, {"b": "尽山依日白"}):
        r = client.post("/api/lesson/order/verdict", json=old)
        (detail,) = r.json()["detail"]
        assert r.status_code == 422 and detail["loc"] == ["body", *old] and detail["type"] == "extra_forbidden"
    lesson = client.post("/api/lesson/order/verdict", json={}).json()
    assert new.json()["outcome"] == "different" and lesson["setup_is_lessons"]
    assert not new.json()["setup_is_lessons"]  # the lines sent were used, not the step's own
    r = client.post("/api/lesson/order/verdict", json={"line_a": "", "line_b": "尽"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "line_a"]
    schema = client.get("/openapi.json").json()["components"]["schemas"]["VerdictRequest"]["properties"]
    assert {"line_a", "line_b"} <= set(schema) and not {"a", "b"} & set(schema)


def test_a_line_the_model_refuses_is_named_line_a_or_line_b(client):
    """The verdict's own refusals (past pos_emb's rows) name the field as /api/compare does: line_a, line_b."""
    r = client.post("/api/lesson/posemb/verdict", json={"line_a": "白" * 130, "line_b": "日"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "line_a"], r.json()
    r = client.post("/api/lesson/posemb/verdict", json={"line_a": "日", "line_b": "白" * 130})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "line_b"]
    r = client.post("/api/lesson/heads/verdict", json={"line_a": "白" * 130})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "line_a"]
