"""Issue 37: one name per field. Every JSON answer of the app names the two lines line_a and line_b, as
/api/compare's body does: no answer has a key `a` or `b`, at any depth (the lesson's steps and their setups,
every step's verdict, a comparison with its verdicts, a class's view and results after a reveal)."""

from app.domain.lesson_steps import STEPS

OLD_NAMES = {"a", "b"}


def keys_named(answer, names=OLD_NAMES, path="") -> list[str]:
    """The paths of the keys in `names`, at any depth of a decoded JSON answer."""
    if isinstance(answer, dict):
        return [f"{path}.{k}" for k in answer if k in names] + \
            [p for k, v in answer.items() for p in keys_named(v, names, f"{path}.{k}")]
    if isinstance(answer, list):
        return [p for i, v in enumerate(answer) for p in keys_named(v, names, f"{path}[{i}]")]
    return []


def test_the_walk_finds_an_old_name_at_any_depth():
    assert keys_named({"steps": [{"setup": {"a": "白", "line_b": None}}]}) == [".steps[0].setup.a"]
    assert keys_named([{"x": {"b": 1}}, {"line_a": "白"}]) == ["[0].x.b"]


def test_the_lesson_and_every_verdict_name_the_lines_line_a_and_line_b(client):
    lesson = client.get("/api/lesson").json()
    assert keys_named(lesson) == []
    with_lines = [s for s in lesson["steps"] if s["setup"] and s["setup"]["line_a"] is not None]
    assert with_lines and all({"line_a", "line_b"} <= set(s["setup"]) for s in with_lines)
    judged = [s for s in lesson["steps"] if s["choices"]]
    for step in judged:
        verdict = client.post(f"/api/lesson/{step['id']}/verdict", json={})
        assert verdict.status_code == 200, (step["id"], verdict.text)
        assert keys_named(verdict.json()) == [], step["id"]
    made = client.post("/api/lesson/order/compare", json={"line_b": "山依日白尽"}).json()
    assert keys_named(made) == []
    by_id = client.get(f"/api/lesson/order/verdict/{made['comparison_id']}").json()
    assert keys_named(by_id) == []


def test_a_comparison_and_its_verdicts_name_the_lines_line_a_and_line_b(client):
    for body in ({"line_a": "白日依山尽", "line_b": "山依日白尽", "position": "none"},
                 {"line_a": "床前明月光", "line_b": "疑是地上霜", "position": "rope"}):
        made = client.post("/api/compare", json=body).json()
        assert keys_named(made) == []
        assert keys_named(client.post("/api/compare/verdict", json=body).json()) == []
        assert keys_named(client.get(f"/api/compare/{made['comparison_id']}/verdict").json()) == []
    assert keys_named(client.get("/api/options").json()) == []


def test_a_class_summary_names_no_line_a_or_b(client):
    made = client.post("/api/classes").json()
    code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
    seat = client.post(f"/api/classes/{code}/join", json={"name": "Li"}).json()
    step = next(n for n, s in enumerate(STEPS, start=1) if s["id"] == "order")
    client.post(f"/api/classes/{code}/step", json={"step": step}, headers=teacher).raise_for_status()
    client.post(f"/api/classes/{code}/answers", json={"step": step, "choice": "same"},
                headers={"Authorization": f"Bearer {seat['student_token']}"}).raise_for_status()
    # The teacher's screen had other lines: the reveal takes the verdict's body (line_a, line_b).
    client.post(f"/api/classes/{code}/reveal", json={"line_b": "山依日白尽"}, headers=teacher).raise_for_status()
    for answer in (made, seat, client.get(f"/api/classes/{code}").json(),
                   client.get(f"/api/classes/{code}/results", headers=teacher).json()):
        assert keys_named(answer) == []
    refused = client.post(f"/api/classes/{code}/reveal", json={"b": "山依日白尽"}, headers=teacher)
    assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["body", "b"]
