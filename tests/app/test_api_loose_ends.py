"""Inputs that got a 500, a 400 naming nothing, or were silently taken: each gets a 4xx naming the field and the rule
(issue 39, item 13)."""

import pytest

from app.domain.lesson_steps import STEPS

NO_SETUP = [step["id"] for step in STEPS if step["setup"] is None and step["choices"] is not None]


@pytest.mark.parametrize("step", NO_SETUP)
def test_a_step_without_a_setup_refuses_every_setup_field_by_name(client, step):
    assert client.post(f"/api/lesson/{step}/verdict", json={}).status_code == 200
    for field, value in (("weights", "trained"), ("position", "rope"), ("line_a", "白日"), ("causal", False)):
        got = client.post(f"/api/lesson/{step}/verdict", json={field: value})
        assert got.status_code == 422, (step, field, got.text)
        detail = got.json()["detail"][0]
        assert detail["loc"] == ["body", field] and detail["type"] == "unused_field", detail
        assert f"step {step} has no setup" in detail["msg"]


@pytest.mark.parametrize(("step", "field", "value"), [
    ("order", "distance", 2), ("posemb", "distance", 1), ("heads", "line_b", "白日"), ("ablate", "line_b", "白日"),
    ("relative", "line_b", "月明"),
])
def test_a_field_the_step_does_not_use_is_refused(client, step, field, value):
    got = client.post(f"/api/lesson/{step}/verdict", json={field: value})
    assert got.status_code == 422, got.text
    detail = got.json()["detail"][0]
    assert detail["loc"] == ["body", field] and f"does not use {field}" in detail["msg"]


def test_the_fields_a_step_uses_are_still_taken(client):
    assert client.post("/api/lesson/relative/verdict", json={"distance": 3}).status_code == 200
    assert client.post("/api/lesson/heads/verdict", json={"line_a": "床前明月光"}).status_code == 200
    assert client.post("/api/lesson/order/verdict", json={"line_b": "山依日白尽"}).status_code == 200


def test_a_non_ascii_teacher_key_is_no_500(client):
    code = client.post("/api/classes").json()["code"]
    got = client.get(f"/classes/{code}/qr.svg", params={"teacher": "é"})
    assert got.status_code < 500, got.text
    with client.stream("GET", f"/api/classes/{code}/events", params={"teacher": "é"}) as stream:
        assert stream.status_code == 200  # the stream opens, as for any key that is not the teacher's


def test_the_event_stream_refuses_a_query_parameter_it_does_not_have(client):
    """As every other route: a misspelt ?studnet= is named, not taken for the teacher's view."""
    code = client.post("/api/classes").json()["code"]
    # A stream: on a route that takes the parameter silently, it opens (200) and never ends, so only its status is read.
    with client.stream("GET", f"/api/classes/{code}/events", params={"studnet": "late-student-000001"}) as got:
        assert got.status_code == 422
        got.read()
    detail = got.json()["detail"][0]
    assert detail["loc"] == ["query", "studnet"] and detail["type"] == "extra_forbidden", detail
    got = client.get(f"/api/classes/{code}/events", params={"student": "short"})
    assert got.status_code == 422 and got.json()["detail"][0]["loc"] == ["query", "student"], got.text


@pytest.mark.parametrize(("body", "rule"), [
    (b'{"line_a": "\xe7\x99\xbd", "seed": ' + b"9" * 5000 + b"}", "digits"),
    ('{"line_a": "café"}'.encode("latin-1"), "utf8"),
    (b"[" * 5000 + b"]" * 5000, "depth"),
])
def test_an_unparseable_body_gets_a_422_naming_body_and_the_rule(client, body, rule):
    got = client.post("/api/compare", content=body, headers={"content-type": "application/json"})
    assert got.status_code == 422, got.text
    detail = got.json()["detail"][0]
    assert detail["loc"] == ["body"] and detail["ctx"]["rule"] == rule and detail["type"] == "json_invalid", detail


def test_post_classes_refuses_unknown_fields(client):
    got = client.post("/api/classes", json={"name": "x"})
    assert got.status_code == 422 and got.json()["detail"][0]["loc"] == ["body", "name"]
    assert got.json()["detail"][0]["type"] == "extra_forbidden"
    assert client.post("/api/classes", json={}).status_code == 201
    assert client.post("/api/classes").status_code == 201


@pytest.mark.parametrize(("char", "kind", "said"), [
    ("\u200b", "format", "an invisible format character"),
    ("\u202e", "reorders", "a character that reorders a line on screen"),
    ("\u0007", "control", "an invisible control character"),
])
def test_an_invisible_character_is_named_for_what_it_is(client, char, kind, said):
    got = client.post("/api/compare", json={"line_a": f"白{char}日"})
    assert got.status_code == 422
    detail = got.json()["detail"][0]
    assert detail["ctx"]["kind"] == kind and detail["msg"].endswith(said) and detail["ctx"]["index"] == 2
    assert ("reorder" in detail["msg"]) == (kind == "reorders")


def test_a_repeated_query_parameter_is_refused_by_name(client):
    got = client.get("/api/rope?head_dim=32&head_dim=8")
    assert got.status_code == 422
    assert got.json()["detail"][0]["loc"] == ["query", "head_dim"]
    assert got.json()["detail"][0]["type"] == "repeated_parameter"
    assert client.get("/api/rope?head_dim=32").status_code == 200
