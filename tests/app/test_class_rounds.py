"""Vote again (issue 30, server side): POST /again opens a second round before the reveal; each round counts
only its own answers; removed and unjoined tokens vote in neither; on both stores."""

import asyncio
import sqlite3

import pytest
from class_servers import sse_data
from fastapi.testclient import TestClient
from shipped_models import app_on_shipped_models

from app.services.classes import Classes
from app.settings import Settings
from app.stores import Lifetimes
from app.stores.sqlite import SqliteStore

STEP = 4  # 我打你 / 你打我: same or different



@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.slow)])
def client(request, tmp_path):
    settings = {"data_dir": tmp_path}
    if request.param == "redis":
        import redis
        url = request.getfixturevalue("redis_url")
        redis.Redis.from_url(url).flushdb()
        settings["redis_url"] = url
    with TestClient(app_on_shipped_models(Settings(**settings))) as client:
        yield client


def test_two_rounds_count_their_own_answers_and_the_reveal_closes_the_last(client):
    made = client.post("/api/classes").json()
    code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
    seats = [client.post(f"/api/classes/{code}/join").json() for _ in range(4)]
    tokens = [{"Authorization": f"Bearer {s['student_token']}"} for s in seats]
    client.post(f"/api/classes/{code}/step", json={"step": STEP}, headers=teacher).raise_for_status()

    def vote(n, choice):
        return client.post(f"/api/classes/{code}/answers", json={"step": STEP, "choice": choice}, headers=tokens[n])

    def view():
        return client.get(f"/api/classes/{code}", headers=teacher).json()
    for n, choice in enumerate(["same", "same", "same", "different"]):
        assert vote(n, choice).status_code == 200
    assert (view()["round"], view()["counts"], view()["answered"]) == (1, {"same": 3, "different": 1}, 4)
    for headers in ({}, tokens[0]):
        assert client.post(f"/api/classes/{code}/again", headers=headers).status_code == 403
    with client.stream("GET", f"/api/classes/{code}/events", params={"student": seats[0]["student"]}) as stream:
        lines = stream.iter_lines()
        assert sse_data(lines)["round"] == 1
        again = client.post(f"/api/classes/{code}/again", headers=teacher)
        assert again.status_code == 200 and again.json() == {"round": 2}
        assert sse_data(lines)["round"] == 2  # the phones are told to vote again
    assert (view()["round"], view()["counts"], view()["answered"]) == (2, {"same": 0, "different": 0}, 0)
    assert [s["answered"] for s in view()["students"]] == [False] * 4
    # Round 2: two change their minds, one keeps hers, one does not vote again.
    for n, choice in enumerate(["different", "different", "same"]):
        assert vote(n, choice).status_code == 200
    assert view()["counts"] == {"same": 1, "different": 2} and view()["answered"] == 3
    # Removed: out of both rounds. Forged: in neither.
    client.post(f"/api/classes/{code}/remove", json={"student": seats[1]["student"]}, headers=teacher)
    assert vote(1, "same").status_code == 403
    forged = client.post(f"/api/classes/{code}/answers", json={"step": STEP, "choice": "same"},
                         headers={"Authorization": "Bearer " + "A" * 43})
    assert forged.status_code == 403
    assert view()["counts"] == {"same": 1, "different": 1} and view()["answered"] == 2
    third = client.post(f"/api/classes/{code}/again", headers=teacher)
    assert third.status_code == 409 and third.json()["detail"][0]["type"] == "too_many_rounds"
    client.post(f"/api/classes/{code}/reveal", headers=teacher).raise_for_status()
    assert vote(3, "same").status_code == 409  # the reveal closed round 2
    closed = client.post(f"/api/classes/{code}/again", headers=teacher)
    assert closed.status_code == 409 and closed.json()["detail"][0]["type"] == "answers_closed"
    # A student coming back sees their last round's answer; the next step opens at round 1.
    back = client.post(f"/api/classes/{code}/join", headers=tokens[0]).json()
    assert back["answers"] == {str(STEP): "different"}
    client.post(f"/api/classes/{code}/step", json={"step": STEP + 1}, headers=teacher).raise_for_status()
    assert view()["round"] == 1
    # A retry of a round-1 answer whose reply was lost, after the class moved on, is still taken once.
    assert vote(3, "different").status_code == 200
    client.post(f"/api/classes/{code}/step", json={"step": STEP}, headers=teacher).raise_for_status()
    # Step 4 opened again shows its round 1 as it was kept, without the removed student's vote.
    assert view()["round"] == 1 and view()["counts"] == {"same": 2, "different": 1}


def test_a_step_without_a_question_has_no_second_vote(client):
    made = client.post("/api/classes").json()
    code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
    from app.domain.lesson_steps import STEPS
    plain = next(n for n, s in enumerate(STEPS, 1) if s["choices"] is None)
    client.post(f"/api/classes/{code}/step", json={"step": plain}, headers=teacher).raise_for_status()
    refused = client.post(f"/api/classes/{code}/again", headers=teacher)
    assert refused.status_code == 409 and refused.json()["detail"][0]["type"] == "step_without_question"


def test_a_classes_db_from_before_rounds_keeps_its_answers_in_round_1(tmp_path):
    old = sqlite3.connect(tmp_path / "classes.db")
    old.executescript("""
        CREATE TABLE classes (code TEXT PRIMARY KEY, token_hash TEXT NOT NULL, step INTEGER NOT NULL,
            revealed INTEGER NOT NULL, version INTEGER NOT NULL, touched REAL NOT NULL,
            locked INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE students (code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, student TEXT NOT NULL,
            token_hash TEXT, PRIMARY KEY (code, student));
        CREATE TABLE answers (code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, step INTEGER NOT NULL,
            student TEXT NOT NULL, choice TEXT NOT NULL, PRIMARY KEY (code, step, student));""")
    old.execute("INSERT INTO classes VALUES ('ABCDEF', 'x', 4, 0, 7, strftime('%s', 'now'), 0)")
    old.execute("INSERT INTO students VALUES ('ABCDEF', 'old-student-0000001', 'y')")
    old.execute("INSERT INTO answers VALUES ('ABCDEF', 4, 'old-student-0000001', 'same')")
    old.commit()
    old.close()

    async def run():
        store = SqliteStore(tmp_path / "classes.db", Lifetimes(3600, 3600), 0.05)
        classes = Classes(store, 10, 10)
        state = await classes.state("ABCDEF")
        assert (state.round, state.answered) == (1, 1)
        assert await classes.counts("ABCDEF", state) == {"same": 1, "different": 0}
        assert await classes.again("ABCDEF") == 2
        await store.close()
    asyncio.run(run())
