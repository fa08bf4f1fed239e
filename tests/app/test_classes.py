"""Class mode's rules, against both stores: SQLite (the default) and a real Redis."""

import asyncio
import hashlib
import json
import re
import sqlite3

import pytest
import redis
from class_servers import redis_server, sse_data
from fastapi.testclient import TestClient

from app.lesson_steps import STEPS
from app.main import create_app
from app.services.class_events import Broadcaster, event_stream
from app.services.classes import ClassError, Classes, JoinGuard
from app.settings import Settings
from app.stores.redis import RedisStore
from app.stores.sqlite import SqliteStore

CODE = re.compile(r"^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}$")
STUDENTS = [f"student-{i:03d}-abcdefgh" for i in range(70)]
SELFTEST = next(i for i, s in enumerate(STEPS, 1) if s["choices"] is None)


@pytest.fixture(scope="module")
def redis_url():
    with redis_server() as url:
        yield url


@pytest.fixture(scope="module", params=["sqlite", "redis"])
def store_kind(request):
    return request.param


@pytest.fixture(scope="module")
def app_client(store_kind, tmp_path_factory, request):
    settings = {"data_dir": tmp_path_factory.mktemp(store_kind)}
    if store_kind == "redis":
        settings["redis_url"] = request.getfixturevalue("redis_url")
    with TestClient(create_app(Settings(**settings))) as client:
        yield client


@pytest.fixture
def client(app_client):
    app_client.app.state.join_guard = JoinGuard(60)  # each test starts with no misses on record
    return app_client


def open_class(client):
    response = client.post("/api/classes")
    assert response.status_code == 201, response.text
    made = response.json()
    return made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}, made


def answer(client, code, student, step, choice):
    return client.post(f"/api/classes/{code}/answers", json={"student": student, "step": step, "choice": choice})


def test_a_new_class_has_a_readable_code_a_long_token_and_a_join_link(client, store_kind):
    code, teacher, made = open_class(client)
    assert CODE.match(code)
    token = made["teacher_token"]
    assert len(token) >= 43  # base64url of 32 bytes: 256 bits
    assert made["join_url"].endswith(f"/lesson?class={code}")
    assert client.get(f"/api/classes/{code}").json() == {"step": 1, "revealed": False, "joined": 0, "answered": 0}
    # The store keeps the token's sha256, never the token.
    digest = hashlib.sha256(token.encode()).hexdigest()
    settings = client.app.state.settings
    if store_kind == "sqlite":
        rows = sqlite3.connect(settings.data_dir / "classes.db").execute("SELECT * FROM classes").fetchall()
        values = [str(v) for row in rows for v in row]
    else:
        kv = redis.Redis.from_url(settings.redis_url, decode_responses=True)
        values = [v for key in kv.keys("hp:*") if kv.type(key) == "hash" for v in kv.hgetall(key).values()]
    assert digest in values
    assert not any(token in v for v in values)


def test_only_the_teachers_token_moves_reveals_and_ends(client):
    code, teacher, _ = open_class(client)
    wrong = {"Authorization": "Bearer " + "x" * 43}
    for path, body in [("step", {"step": 2}), ("reveal", None), ("end", None)]:
        for headers in ({}, wrong):
            response = client.post(f"/api/classes/{code}/{path}", json=body, headers=headers)
            assert response.status_code == 403, (path, headers, response.text)
            assert "teacher" in response.json()["detail"]
    assert client.get(f"/api/classes/{code}", headers=wrong).status_code == 403
    assert client.get(f"/api/classes/{code}").json()["step"] == 1
    assert client.post(f"/api/classes/{code}/step", json={"step": 3}, headers=teacher).status_code == 200
    assert client.get(f"/api/classes/{code}").json()["step"] == 3


def test_students_answer_the_current_step_with_its_choices_until_the_reveal(client):
    code, teacher, _ = open_class(client)
    a, b, c = STUDENTS[:3]
    assert answer(client, code, a, 1, "same").status_code == 200
    assert answer(client, code, b, 1, "different").status_code == 200
    # The last answer before the reveal counts.
    assert answer(client, code, b, 1, "same").status_code == 200
    # Not the current step: 409 naming the current one.
    response = answer(client, code, c, 2, "same")
    assert response.status_code == 409 and "step 1" in response.json()["detail"]
    # Not one of the step's choices (step 3's choices are stays/gone).
    response = answer(client, code, c, 1, "stays")
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "choice"] and "stays" in response.json()["detail"][0]["msg"]
    # No free text, and a student id of the right shape.
    response = answer(client, code, c, 1, "<b>same</b>")
    assert response.status_code == 422
    response = answer(client, code, "short", 1, "same")
    assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["body", "student"]
    view = client.get(f"/api/classes/{code}", headers=teacher).json()
    assert view == {"step": 1, "revealed": False, "joined": 2, "answered": 2, "counts": {"same": 2, "different": 0}}
    assert "counts" not in client.get(f"/api/classes/{code}").json()

    assert client.post(f"/api/classes/{code}/reveal", headers=teacher).status_code == 200
    for student in (a, c):
        response = answer(client, code, student, 1, "different")
        assert response.status_code == 409 and "revealed" in response.json()["detail"]
    assert client.get(f"/api/classes/{code}", headers=teacher).json()["counts"] == {"same": 2, "different": 0}

    # The next step opens hidden, with nobody's answer yet.
    client.post(f"/api/classes/{code}/step", json={"step": 3}, headers=teacher)
    view = client.get(f"/api/classes/{code}", headers=teacher).json()
    assert view == {"step": 3, "revealed": False, "joined": 2, "answered": 0, "counts": {"stays": 0, "gone": 0}}
    assert answer(client, code, c, 3, "gone").status_code == 200
    # A step without a single question takes no class answers.
    client.post(f"/api/classes/{code}/step", json={"step": SELFTEST}, headers=teacher)
    assert answer(client, code, c, SELFTEST, "same").status_code == 409


def test_steps_are_checked(client):
    code, teacher, _ = open_class(client)
    for step in (0, len(STEPS) + 1, "2"):
        response = client.post(f"/api/classes/{code}/step", json={"step": step}, headers=teacher)
        assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["body", "step"]


def test_a_late_student_gets_the_current_step_first(client):
    code, teacher, _ = open_class(client)
    client.post(f"/api/classes/{code}/step", json={"step": 4}, headers=teacher)
    client.post(f"/api/classes/{code}/reveal", headers=teacher)
    with client.stream("GET", f"/api/classes/{code}/events", params={"student": STUDENTS[5]}) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        assert sse_data(stream.iter_lines()) == {"step": 4, "revealed": True, "joined": 1, "answered": 0}


def test_an_ended_class_is_gone(client):
    code, teacher, _ = open_class(client)
    assert client.post(f"/api/classes/{code}/end", headers=teacher).status_code == 200
    for response in (client.get(f"/api/classes/{code}"), answer(client, code, STUDENTS[0], 1, "same"),
                     client.post(f"/api/classes/{code}/step", json={"step": 2}, headers=teacher)):
        assert response.status_code == 404 and "no class" in response.json()["detail"]


def test_sixty_students_join_from_one_address_but_guessing_codes_is_stopped(client):
    code, teacher, _ = open_class(client)
    for student in STUDENTS[:60]:
        assert answer(client, code, student, 1, "same").status_code == 200
    assert client.get(f"/api/classes/{code}").json()["joined"] == 60
    # Unknown codes: 60 misses a minute, then every join attempt from the address waits.
    unknown = "ZZZZZ" + ("2" if code != "ZZZZZ2" else "3")
    for _ in range(60):
        assert client.get(f"/api/classes/{unknown}").status_code == 404
    response = client.get(f"/api/classes/{code}")
    assert response.status_code == 429 and "wait" in response.json()["detail"]
    assert answer(client, code, STUDENTS[61], 1, "same").status_code == 429


@pytest.fixture
def make_store(store_kind, tmp_path, request):
    """(idle seconds) -> a store of its own, made inside the test's event loop."""
    if store_kind == "sqlite":
        return lambda idle: SqliteStore(tmp_path / "classes.db", idle, 0.05)
    # Database 1: the app's classes above live in database 0 and would count against max_classes.
    url = request.getfixturevalue("redis_url").replace("/0", "/1")
    redis.Redis.from_url(url).flushdb()
    return lambda idle: RedisStore(url, idle)


def test_limits_on_classes_and_students(make_store):
    async def run():
        store = make_store(12 * 3600)
        classes = Classes(store, max_classes=2, max_students=3)
        code, _ = await classes.create()
        await classes.create()
        with pytest.raises(ClassError, match="at most 2") as error:
            await classes.create()
        assert error.value.status == 503
        for student in STUDENTS[:3]:
            await classes.join(code, student)
        await classes.join(code, STUDENTS[0])  # joining twice is still one student
        with pytest.raises(ClassError, match="at most 3 students") as error:
            await classes.answer(code, STUDENTS[3], 1, "same")
        assert error.value.status == 409
        assert (await classes.state(code)).joined == 3
        await store.close()
    asyncio.run(run())


def test_a_class_idle_for_twelve_hours_is_gone(make_store):
    async def run():
        store = make_store(1)  # an idle time of 1 s stands in for 12 h
        classes = Classes(store, 10, 10)
        code, _ = await classes.create()
        await classes.join(code, STUDENTS[0])
        assert (await classes.state(code)).joined == 1
        await asyncio.sleep(2.2)
        with pytest.raises(ClassError, match="no class"):
            await classes.state(code)
        await store.close()
    asyncio.run(run())


def test_events_fan_out_from_one_watcher_per_class(make_store):
    """Twenty students' streams in one process: the store is watched once, not once per student, and the
    watcher stops with the last stream."""
    async def run():
        store = make_store(12 * 3600)
        watched = []
        changes = store.changes

        def counted(code):
            watched.append(code)
            return changes(code)
        store.changes = counted
        classes = Classes(store, 10, 100)
        broadcaster = Broadcaster(store)
        code, _ = await classes.create()
        state = await classes.state(code)

        async def student():
            stream = event_stream(broadcaster, code, state, teacher_view=False, keepalive=30)
            steps = []
            async for text in stream:
                steps.append(json.loads(text.split("data: ", 1)[1])["step"])
                if steps[-1] == 3:
                    await stream.aclose()
                    return steps
        readers = [asyncio.create_task(student()) for _ in range(20)]
        await asyncio.sleep(0.3)
        assert len(broadcaster.channels) == 1
        await classes.set_step(code, 3)
        assert await asyncio.wait_for(asyncio.gather(*readers), 10) == [[1, 3]] * 20
        assert watched == [code]
        assert broadcaster.channels == {}
        await store.close()
    asyncio.run(run())
