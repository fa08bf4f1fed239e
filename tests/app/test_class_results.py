"""Results the teacher keeps (issue 30): GET /results and /results.csv equal the answers sent, per step and round,
with the choices the server's verdict accepted at the reveal; readable after the end and after a restart; a class
that vanishes without an end is "lost", not "ended"; on both stores."""

import codecs
import csv
import io
import json
import sqlite3
from pathlib import Path

import httpx
import pytest
from class_servers import redis_server, served, sse_data
from fastapi.testclient import TestClient

from app.domain.lesson_steps import STEPS
from app.main import create_app
from app.settings import Settings

LESSON = Path(__file__).resolve().parents[2] / "static" / "i18n" / "lesson"
NAMES = ["美玲", "さくら", "Zoé", "Sam"]
# (step, round) -> the choice of each student (None: no answer); Sam is removed before the end.
VOTES = {(4, 1): ["same", "same", "different", "same"], (4, 2): ["different", "different", None, "same"],
         (5, 1): ["same", None, "different", "different"]}
REMOVED = 3
VISITED = (1, 4, 5, 6)  # then 17, the self-test, which asks no class question and is left out
SETUP_5 = {"line_a": "白日依山尽", "line_b": "山依日白尽", "position": "learned"}  # the teacher changed step 5's setup
RESULTS_DAYS = 2  # HP_RESULTS_DAYS, not the default (7), so the test sees the setting at work
DAY = 24 * 3600


@pytest.fixture(scope="module")
def redis():
    with redis_server() as server:  # without persistence: a restart empties it
        yield server


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.slow)])
def client(request, tmp_path):
    settings = {"data_dir": tmp_path, "results_days": RESULTS_DAYS}
    if request.param == "redis":
        import redis
        server = request.getfixturevalue("redis")
        redis.Redis.from_url(server.url).flushdb()
        settings["redis_url"] = server.url
    with TestClient(create_app(Settings(**settings))) as client:
        client.redis = request.getfixturevalue("redis") if request.param == "redis" else None
        yield client


def run_class(client) -> tuple[str, dict, list[dict], dict]:
    """A class as VOTES says, revealed on both steps and ended: (code, teacher header, seats, accepted by step)."""
    made = client.post("/api/classes").json()
    code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
    seats = [client.post(f"/api/classes/{code}/join", json={"name": name}).json() for name in NAMES]
    accepted = {}
    for step, setup in ((4, {}), (5, SETUP_5)):
        client.post(f"/api/classes/{code}/step", json={"step": step}, headers=teacher).raise_for_status()
        for round_ in (1, 2):
            if (step, round_) not in VOTES:
                continue
            if round_ == 2:
                client.post(f"/api/classes/{code}/again", headers=teacher).raise_for_status()
            for seat, choice in zip(seats, VOTES[step, round_]):
                if choice is not None:
                    client.post(f"/api/classes/{code}/answers", json={"step": step, "choice": choice},
                                headers={"Authorization": f"Bearer {seat['student_token']}"}).raise_for_status()
        client.post(f"/api/classes/{code}/reveal", json=setup, headers=teacher).raise_for_status()
        # What the lesson's own verdict route says for that setup: the server's decision, computed apart.
        accepted[step] = client.post(f"/api/lesson/{STEPS[step - 1]['id']}/verdict", json=setup).json()["accepted"]
    client.post(f"/api/classes/{code}/remove", json={"student": seats[REMOVED]["student"]},
                headers=teacher).raise_for_status()
    for step in (6, 17):  # 6 is visited, never answered nor revealed; 17 asks no question
        client.post(f"/api/classes/{code}/step", json={"step": step}, headers=teacher).raise_for_status()
    return code, teacher, seats, accepted


def expected_steps(seats: list[dict], accepted: dict, lang: str) -> list[dict]:
    """The results built from VOTES alone, the removed student left out of every count."""
    texts = json.loads((LESSON / f"{lang}.json").read_text(encoding="utf-8"))
    steps = []
    for step in VISITED:
        step_id, choices = STEPS[step - 1]["id"], STEPS[step - 1]["choices"]
        right = accepted.get(step)
        rounds = []
        for round_ in (1, 2):
            if round_ == 2 and (step, 2) not in VOTES:
                continue
            sent = VOTES.get((step, round_), [None] * len(seats))
            votes = [(seat, choice) for n, (seat, choice) in enumerate(zip(seats, sent)) if n != REMOVED]
            counted = [choice for _, choice in votes if choice is not None]
            rounds.append({"round": round_, "counts": {c: counted.count(c) for c in choices}, "answered": len(counted),
                           "right": None if right is None else sum(c in right for c in counted),
                           "not_answered": [{"student": seat["student"], "name": seat["name"]}
                                            for seat, choice in votes if choice is None]})
        steps.append({"step": step, "id": step_id, "question": texts[f"{step_id}_question"],
                      "choices": [{"id": c, "text": texts[f"{step_id}_choice_{c}"],
                                   "right": None if right is None else c in right} for c in choices],
                      "accepted": right, "rounds": rounds})
    return steps


def expected_rows(steps: list[dict]) -> list[list[str]]:
    rows = []
    for step in steps:
        for round_ in step["rounds"]:
            for choice in step["choices"]:
                rows.append([str(step["step"]), step["id"], step["question"], str(round_["round"]), choice["id"],
                             choice["text"], {True: "yes", False: "no", None: ""}[choice["right"]],
                             str(round_["counts"][choice["id"]]),
                             str(round_["answered"]), str(len(NAMES) - 1),
                             "; ".join(seat["name"] for seat in round_["not_answered"])])
    return rows


def check_results(get, code: str, teacher: dict, seats: list[dict], accepted: dict) -> None:
    for lang in ("zh", "ja", "fr", "en"):
        got = get(f"/api/classes/{code}/results", params={"lang": lang}, headers=teacher)
        assert got.status_code == 200, got.text
        body = got.json()
        assert (body["ended"], body["students"], body["lang"]) == (True, len(NAMES) - 1, lang)
        assert body["steps"] == expected_steps(seats, accepted, lang)
        table = get(f"/api/classes/{code}/results.csv", params={"lang": lang}, headers=teacher)
        assert table.status_code == 200 and table.headers["content-type"].startswith("text/csv")
        assert table.content.startswith(codecs.BOM_UTF8)  # a spreadsheet reads it as UTF-8
        rows = list(csv.reader(io.StringIO(table.content.decode("utf-8-sig"))))
        assert rows[0][:3] == ["step", "step_id", "question"]
        assert rows[1:] == expected_rows(expected_steps(seats, accepted, lang))
    for headers in ({}, {"Authorization": f"Bearer {seats[0]['student_token']}"}):
        refused = get(f"/api/classes/{code}/results", headers=headers)
        assert refused.status_code == 403, refused.text


def test_results_equal_the_answers_sent_after_the_end(client):
    code, teacher, seats, accepted = run_class(client)
    assert accepted[4] and accepted[5]  # both steps had a verdict to keep
    running = client.get(f"/api/classes/{code}/results", headers=teacher).json()
    assert running["ended"] is False and running["ended_at"] is None
    with client.stream("GET", f"/api/classes/{code}/events", params={"student": seats[0]["student"]}) as stream:
        lines = stream.iter_lines()
        assert sse_data(lines)["step"] == 17
        client.post(f"/api/classes/{code}/end", headers=teacher).raise_for_status()
        assert sse_data(lines) == {"ended": True}
    assert client.get(f"/api/classes/{code}").status_code == 404  # the class itself is closed
    answer = client.post(f"/api/classes/{code}/answers", json={"step": 6, "choice": "wrap"},
                         headers={"Authorization": f"Bearer {seats[0]['student_token']}"})
    assert answer.status_code == 404
    assert client.post(f"/api/classes/{code}/step", json={"step": 2}, headers=teacher).status_code == 404
    check_results(client.get, code, teacher, seats, accepted)


def test_a_class_gone_without_an_end_is_lost(client, tmp_path):
    made = client.post("/api/classes").json()
    code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
    seat = client.post(f"/api/classes/{code}/join").json()
    with client.stream("GET", f"/api/classes/{code}/events", params={"student": seat["student"]}) as stream:
        lines = stream.iter_lines()
        assert sse_data(lines)["step"] == 1
        if client.redis is not None:  # a Redis restarted without persistence: it comes back empty
            client.redis.stop()
            client.redis.start()
        else:  # a classes.db swapped for an empty one, as far as this class goes
            with sqlite3.connect(tmp_path / "classes.db") as db:
                db.execute("DELETE FROM classes WHERE code = ?", (code,))
        # The restart's outage first (and its end), then the word that the class is gone without an end.
        while (data := sse_data(lines)) in ({"type": "class_store_unavailable"}, {}):
            pass
        assert data == {"lost": True}
    assert client.get(f"/api/classes/{code}/results", headers=teacher).status_code == 404


def stored_keys(client, code: str) -> list:
    """What the class store still holds of the class: its rows in classes.db, or its keys in Redis."""
    if client.redis is not None:
        import redis
        return sorted(redis.Redis.from_url(client.redis.url).scan_iter(f"hp:*:{code}*"))
    store = client.app.state.classes.store
    return store.db.execute("SELECT code FROM classes WHERE code = ? UNION ALL SELECT code FROM students WHERE "
                            "code = ?", (code, code)).fetchall()


def test_an_ended_classs_results_are_kept_for_results_days_then_gone(client):
    code, teacher, seats, _ = run_class(client)
    client.post(f"/api/classes/{code}/end", headers=teacher).raise_for_status()
    body = client.get(f"/api/classes/{code}/results", headers=teacher).json()
    assert body["kept_until"] == pytest.approx(body["ended_at"] + RESULTS_DAYS * DAY)
    store = client.app.state.classes.store
    # The store's clock is its `now`: a minute before the end of HP_RESULTS_DAYS the record is there ...
    assert client.portal.call(store.record, code, body["ended_at"] + RESULTS_DAYS * DAY - 60) is not None
    assert client.get(f"/api/classes/{code}/results", headers=teacher).status_code == 200
    # ... a second after it, gone from the store, and so from every route at today's time too.
    assert client.portal.call(store.record, code, body["ended_at"] + RESULTS_DAYS * DAY + 1) is None
    assert stored_keys(client, code) == []
    for path in ("results", "results.csv"):
        assert client.get(f"/api/classes/{code}/{path}", headers=teacher).status_code == 404
    assert client.delete(f"/api/classes/{code}", headers=teacher).status_code == 404


def test_the_teacher_deletes_an_ended_classs_results_at_once(client):
    code, teacher, seats, _ = run_class(client)
    student = {"Authorization": f"Bearer {seats[0]['student_token']}"}
    running = client.delete(f"/api/classes/{code}", headers=teacher)
    assert (running.status_code, running.json()["detail"][0]["type"]) == (409, "class_running")
    client.post(f"/api/classes/{code}/end", headers=teacher).raise_for_status()
    for headers, refusal in (({}, "teacher_only"), (student, "teacher_token_wrong")):
        refused = client.delete(f"/api/classes/{code}", headers=headers)
        assert (refused.status_code, refused.json()["detail"][0]["type"]) == (403, refusal)
    assert client.get(f"/api/classes/{code}/results", headers=teacher).status_code == 200
    assert stored_keys(client, code) != []
    deleted = client.delete(f"/api/classes/{code}", headers=teacher)
    assert (deleted.status_code, deleted.content) == (204, b"")
    assert stored_keys(client, code) == []
    for path in ("results", "results.csv"):
        assert client.get(f"/api/classes/{code}/{path}", headers=teacher).status_code == 404
    assert client.delete(f"/api/classes/{code}", headers=teacher).status_code == 404


@pytest.mark.slow
@pytest.mark.parametrize("store", ["sqlite", "redis"])
def test_results_outlive_a_restart(tmp_path, store):
    with redis_server(appendonly=True) as redis:
        env = {"HP_DATA_DIR": str(tmp_path), "HP_RESULTS_DAYS": "3"} | (
            {"HP_REDIS_URL": redis.url} if store == "redis" else {})
        with served(env) as server, httpx.Client(base_url=server.url, timeout=60) as client:
            code, teacher, seats, accepted = run_class(client)
            client.post(f"/api/classes/{code}/end", headers=teacher).raise_for_status()
            server.stop()
            if store == "redis":
                redis.stop()
                redis.start()
            server.start()
            check_results(client.get, code, teacher, seats, accepted)
            body = client.get(f"/api/classes/{code}/results", headers=teacher).json()
            assert body["kept_until"] == pytest.approx(body["ended_at"] + 3 * DAY)  # HP_RESULTS_DAYS=3
            assert client.delete(f"/api/classes/{code}", headers=teacher).status_code == 204
            assert client.get(f"/api/classes/{code}/results", headers=teacher).status_code == 404
