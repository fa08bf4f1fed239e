"""Class mode's rules, against both stores: SQLite (the default) and a real Redis."""

import asyncio
import hashlib
import json
import re
import sqlite3

import pytest
import redis
from class_servers import served_broadcaster, sse_data
from fastapi.testclient import TestClient
from shipped_models import app_on_shipped_models

from app.domain.lesson_steps import STEPS
from app.errors import ClassError
from app.services.class_events import event_stream
from app.services.classes import Classes
from app.settings import Settings
from app.stores import Lifetimes
from app.stores.redis import RedisStore
from app.stores.sqlite import SqliteStore

CODE = re.compile(r"^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}$")
SELFTEST = next(i for i, s in enumerate(STEPS, 1) if s["choices"] is None)
LONG = Lifetimes(idle=12 * 3600, unjoined=30 * 60)



# The Redis store needs a real redis-server: slow tier.
@pytest.fixture(scope="module", params=["sqlite", pytest.param("redis", marks=pytest.mark.slow)])
def store_kind(request):
    return request.param


@pytest.fixture(scope="module")
def app_client(store_kind, tmp_path_factory, request):
    # Many classes from the test client's one address: the per-address limit has its own tests.
    settings = {"data_dir": tmp_path_factory.mktemp(store_kind), "classes_per_hour": 1000}
    if store_kind == "redis":
        settings["redis_url"] = request.getfixturevalue("redis_url")
    with TestClient(app_on_shipped_models(Settings(**settings))) as client:
        yield client


def forget_limits(app) -> None:
    """Each test starts with no misses or joins on record for the test client's one address."""
    store = app.state.classes.store
    if store.name == "sqlite":
        store.db.execute("DELETE FROM hits")
    else:
        sync = redis.Redis.from_url(app.state.settings.redis_url)
        for key in sync.scan_iter("hp:hits:*"):
            sync.delete(key)


@pytest.fixture
def client(app_client):
    forget_limits(app_client.app)
    return app_client


def open_class(client):
    response = client.post("/api/classes")
    assert response.status_code == 201, response.text
    made = response.json()
    return made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}, made


def join(client, code, headers=None):
    response = client.post(f"/api/classes/{code}/join", headers=headers or {})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['student_token']}"}


def answer(client, code, student, step, choice):
    return client.post(f"/api/classes/{code}/answers", json={"step": step, "choice": choice}, headers=student)


def summary(view: dict) -> dict:
    """The teacher's view without its roster, waiting list, wrong codes, refused joins and clock, which tests read on
    their own."""
    return {key: value for key, value in view.items()
            if key not in ("students", "waiting", "wrong_codes", "refused_joins", "now")}


def error_type(response):
    return response.json()["detail"][0]["type"]


def test_a_new_class_has_a_readable_code_a_long_token_and_a_join_link(client, store_kind):
    code, teacher, made = open_class(client)
    assert CODE.match(code)
    token = made["teacher_token"]
    assert len(token) >= 43  # base64url of 32 bytes: 256 bits
    assert re.search(rf"/lesson\?class={code}&key=[0-9a-f]{{24}}$", made["join_url"]), made["join_url"]
    assert made["join_urls"] == [made["join_url"]] and made["loopback"] is False
    assert made["results_days"] == 7  # HP_RESULTS_DAYS's default: what the end dialog promises
    assert client.get(f"/api/classes/{code}").json() == {
        "step": 1, "round": 1, "revealed": False, "joined": 0, "answered": 0, "door": "open", "locked": False}
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


def test_a_student_joins_with_a_token_the_store_keeps_only_hashed(client, store_kind):
    code, teacher, _ = open_class(client)
    response = client.post(f"/api/classes/{code}/join")
    assert response.status_code == 201
    joined = response.json()
    assert len(joined["student_token"]) >= 43 and joined["answers"] == {}
    digest = hashlib.sha256(joined["student_token"].encode()).hexdigest()
    settings = client.app.state.settings
    if store_kind == "sqlite":
        rows = sqlite3.connect(settings.data_dir / "classes.db").execute(
            "SELECT * FROM students WHERE code = ?", (code,)).fetchall()
        values = [str(v) for row in rows for v in row]
    else:
        kv = redis.Redis.from_url(settings.redis_url, decode_responses=True)
        values = [*kv.hkeys(f"hp:class:{code}:tokens"), *kv.hvals(f"hp:class:{code}:tokens")]
    assert digest in values and joined["student"] in values
    assert not any(joined["student_token"] in v for v in values)
    assert client.get(f"/api/classes/{code}").json()["joined"] == 1


def test_answers_without_a_token_with_a_forged_one_or_another_classs_count_nothing(client):
    """The mischief of issue 23: made-up students filled the spread. Now only a joined student's token answers."""
    code, teacher, _ = open_class(client)
    other, _, _ = open_class(client)
    real = join(client, code)
    elsewhere = join(client, other)
    assert answer(client, code, real, 1, "same").status_code == 200
    before = client.get(f"/api/classes/{code}", headers=teacher).json()

    response = client.post(f"/api/classes/{code}/answers", json={"step": 1, "choice": "different"})
    assert response.status_code == 401 and error_type(response) == "student_token_missing"
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert "join" in response.json()["detail"][0]["msg"]
    for forged in ({"Authorization": "Bearer " + "A" * 43}, elsewhere, teacher):
        for _ in range(30):
            response = answer(client, code, forged, 1, "different")
            assert response.status_code == 403 and error_type(response) == "student_token_wrong", response.text
    # The old body, with a made-up student id, is refused as it stands.
    response = client.post(f"/api/classes/{code}/answers",
                           json={"student": "made-up-student-0001", "step": 1, "choice": "different"})
    assert response.status_code == 422
    after = client.get(f"/api/classes/{code}", headers=teacher).json()
    assert {k: v for k, v in after.items() if k != "now"} == {k: v for k, v in before.items() if k != "now"}
    assert {k: after[k] for k in ("step", "revealed", "joined", "answered", "locked", "counts")} == {
        "step": 1, "revealed": False, "joined": 1, "answered": 1, "locked": False,
        "counts": {"same": 1, "different": 0}}
    # Event streams with made-up ids join nobody.
    with client.stream("GET", f"/api/classes/{code}/events", params={"student": "made-up-student-0002"}) as stream:
        assert sse_data(stream.iter_lines())["joined"] == 1
    assert client.get(f"/api/classes/{code}").json()["joined"] == 1


def test_a_student_who_comes_back_with_their_token_is_the_same_student_with_their_answers(client):
    code, teacher, _ = open_class(client)
    first = client.post(f"/api/classes/{code}/join").json()
    mine = {"Authorization": f"Bearer {first['student_token']}"}
    assert answer(client, code, mine, 1, "different").status_code == 200
    assert client.post(f"/api/classes/{code}/reveal", headers=teacher).status_code == 200
    again = client.post(f"/api/classes/{code}/join", headers=mine)
    assert again.status_code == 200
    assert again.json() == {"student": first["student"], "student_token": first["student_token"],
                            "name": first["name"], "answers": {"1": "different"}, "waiting": False}
    assert client.get(f"/api/classes/{code}").json()["joined"] == 1
    # Another class's token is no way in: it makes a new student here.
    other, _, _ = open_class(client)
    stranger = client.post(f"/api/classes/{other}/join", headers=mine)
    assert stranger.status_code == 201 and stranger.json()["student"] != first["student"]


def test_only_the_teachers_token_moves_reveals_locks_and_ends(client):
    code, teacher, _ = open_class(client)
    student = join(client, code)
    wrong = {"Authorization": "Bearer " + "x" * 43}
    for path, body in [("step", {"step": 2}), ("reveal", None), ("lock", None), ("unlock", None), ("end", None)]:
        for headers, kind in (({}, "teacher_only"), (wrong, "teacher_token_wrong"), (student, "teacher_token_wrong")):
            response = client.post(f"/api/classes/{code}/{path}", json=body, headers=headers)
            assert response.status_code == 403, (path, headers, response.text)
            assert error_type(response) == kind and "teacher" in response.json()["detail"][0]["msg"]
    assert client.get(f"/api/classes/{code}", headers=wrong).status_code == 403
    # A student's page may send its token with every request: it sees what anyone sees, no spread.
    assert "counts" not in client.get(f"/api/classes/{code}", headers=student).json()
    assert client.get(f"/api/classes/{code}").json()["step"] == 1
    assert client.post(f"/api/classes/{code}/step", json={"step": 3}, headers=teacher).status_code == 200
    assert client.get(f"/api/classes/{code}").json()["step"] == 3


def test_a_locked_class_refuses_new_students_and_keeps_its_own(client):
    code, teacher, _ = open_class(client)
    inside = join(client, code)
    assert client.post(f"/api/classes/{code}/lock", headers=teacher).status_code == 200
    assert client.get(f"/api/classes/{code}").json()["locked"] is True
    for _ in range(3):
        response = client.post(f"/api/classes/{code}/join")
        assert response.status_code == 403 and error_type(response) == "class_locked"
        assert "closed" in response.json()["detail"][0]["msg"]
    # The students inside stay, come back, and answer.
    assert client.post(f"/api/classes/{code}/join", headers=inside).status_code == 200
    assert answer(client, code, inside, 1, "same").status_code == 200
    assert client.get(f"/api/classes/{code}").json()["joined"] == 1
    assert client.post(f"/api/classes/{code}/unlock", headers=teacher).status_code == 200
    assert client.post(f"/api/classes/{code}/join").status_code == 201
    assert client.get(f"/api/classes/{code}").json() | {"answered": None} == {
        "step": 1, "round": 1, "revealed": False, "joined": 2, "answered": None, "door": "open", "locked": False}


def test_students_answer_the_current_step_with_its_choices_until_the_reveal(client):
    code, teacher, _ = open_class(client)
    a, b, c = (join(client, code) for _ in range(3))
    assert answer(client, code, a, 1, "same").status_code == 200
    assert answer(client, code, b, 1, "different").status_code == 200
    # The last answer before the reveal counts.
    response = answer(client, code, b, 1, "same")
    assert response.status_code == 200 and response.json() == {"ok": True, "step": 1, "choice": "same"}
    # Not the current step: 409 naming the current one.
    response = answer(client, code, c, 2, "same")
    assert response.status_code == 409 and error_type(response) == "step_not_current"
    assert response.json()["detail"][0]["ctx"] == {"step": 2, "current": 1}
    # Not one of the step's choices (step 3's choices are stays/gone).
    response = answer(client, code, c, 1, "stays")
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "choice"] and "stays" in response.json()["detail"][0]["msg"]
    assert answer(client, code, c, 1, "<b>same</b>").status_code == 422
    view = summary(client.get(f"/api/classes/{code}", headers=teacher).json())
    assert view == {"step": 1, "round": 1, "revealed": False, "joined": 3, "answered": 2,
                    "door": "open", "locked": False,
                    "counts": {"same": 2, "different": 0}}
    assert "counts" not in client.get(f"/api/classes/{code}").json()

    assert client.post(f"/api/classes/{code}/reveal", headers=teacher).status_code == 200
    for student in (a, c):
        response = answer(client, code, student, 1, "different")
        assert response.status_code == 409 and error_type(response) == "answers_closed"
    # A retry of an answer already kept (its reply was lost) is taken, and counted once.
    assert answer(client, code, a, 1, "same").status_code == 200
    assert client.get(f"/api/classes/{code}", headers=teacher).json()["counts"] == {"same": 2, "different": 0}

    # The next step opens hidden, with nobody's answer yet.
    client.post(f"/api/classes/{code}/step", json={"step": 3}, headers=teacher)
    view = summary(client.get(f"/api/classes/{code}", headers=teacher).json())
    assert view == {"step": 3, "round": 1, "revealed": False, "joined": 3, "answered": 0,
                    "door": "ask", "locked": False,  # the first reveal turned the door to ask
                    "counts": {"stays": 0, "gone": 0}}
    assert answer(client, code, c, 3, "gone").status_code == 200
    # The retry of step 1's answer, after the class moved on, is still taken once.
    assert answer(client, code, b, 1, "same").status_code == 200
    client.post(f"/api/classes/{code}/step", json={"step": 1}, headers=teacher)
    assert client.get(f"/api/classes/{code}", headers=teacher).json()["counts"] == {"same": 2, "different": 0}
    # A step without a single question takes no class answers.
    client.post(f"/api/classes/{code}/step", json={"step": SELFTEST}, headers=teacher)
    response = answer(client, code, c, SELFTEST, "same")
    assert response.status_code == 409 and error_type(response) == "step_without_question"


def test_steps_are_checked(client):
    code, teacher, _ = open_class(client)
    for step in (0, len(STEPS) + 1, "2"):
        response = client.post(f"/api/classes/{code}/step", json={"step": step}, headers=teacher)
        assert response.status_code == 422 and response.json()["detail"][0]["loc"] == ["body", "step"]


def test_a_late_student_gets_the_current_step_first(client):
    code, teacher, _ = open_class(client)
    join(client, code)
    client.post(f"/api/classes/{code}/step", json={"step": 4}, headers=teacher)
    client.post(f"/api/classes/{code}/reveal", headers=teacher)
    with client.stream("GET", f"/api/classes/{code}/events", params={"student": "late-student-000001"}) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        assert sse_data(stream.iter_lines()) == {"step": 4, "round": 1, "revealed": True, "joined": 1, "answered": 0,
                                                 "door": "ask", "locked": False}


def test_an_ended_class_is_gone(client):
    code, teacher, _ = open_class(client)
    student = join(client, code)
    assert client.post(f"/api/classes/{code}/end", headers=teacher).status_code == 200
    for response in (client.get(f"/api/classes/{code}"), answer(client, code, student, 1, "same"),
                     client.post(f"/api/classes/{code}/join"),
                     client.post(f"/api/classes/{code}/step", json={"step": 2}, headers=teacher)):
        assert response.status_code == 404 and error_type(response) == "class_not_found"
        assert "no class" in response.json()["detail"][0]["msg"]


def test_sixty_students_join_from_one_address_but_guessing_codes_is_stopped(client):
    code, teacher, _ = open_class(client)
    students = [join(client, code) for _ in range(60)]
    for student in students:
        assert answer(client, code, student, 1, "same").status_code == 200
    assert client.get(f"/api/classes/{code}").json()["joined"] == 60
    # Unknown codes: 60 misses a minute, then every join attempt from the address waits.
    unknown = "ZZZZZ" + ("2" if code != "ZZZZZ2" else "3")
    for _ in range(60):
        assert client.get(f"/api/classes/{unknown}").status_code == 404
    response = client.get(f"/api/classes/{code}")
    assert response.status_code == 429 and error_type(response) == "too_many_unknown_codes"
    assert 1 <= int(response.headers["Retry-After"]) <= 61
    assert client.post(f"/api/classes/{code}/join").status_code == 429


@pytest.fixture
def make_store(store_kind, tmp_path, request):
    """(lifetimes) -> a store of its own, made inside the test's event loop."""
    if store_kind == "sqlite":
        return lambda lifetimes=LONG: SqliteStore(tmp_path / "classes.db", lifetimes, 0.05)
    # Database 1: the app's classes above live in database 0 and would count against max_classes.
    url = request.getfixturevalue("redis_url").replace("/0", "/1")
    redis.Redis.from_url(url).flushdb()
    return lambda lifetimes=LONG: RedisStore(url, lifetimes)


def test_limits_on_classes_and_students(make_store):
    async def run():
        store = make_store()
        classes = Classes(store, max_classes=2, max_students=3)
        code, _ = await classes.create()
        await classes.create()
        with pytest.raises(ClassError, match="at most 2") as error:
            await classes.create()
        assert (error.value.status, error.value.type) == (503, "too_many_classes_open")
        for _ in range(3):
            await classes.join(code)
        with pytest.raises(ClassError, match="at most 3 students") as error:
            await classes.join(code)
        assert (error.value.status, error.value.type, error.value.ctx) == (409, "class_full", {"max_students": 3})
        assert (await classes.state(code)).joined == 3
        await store.close()
    asyncio.run(run())


@pytest.mark.slow  # waits for classes to expire
def test_classes_nobody_joined_expire_soon_and_joined_ones_live_on(make_store):
    async def run():
        store = make_store(Lifetimes(idle=60, unjoined=1))  # 1 s stands in for 30 min, 60 s for 12 h
        classes = Classes(store, 10, 10)
        empty, _ = await classes.create()
        taught, _ = await classes.create()
        await classes.join(taught)
        await asyncio.sleep(2.2)
        with pytest.raises(ClassError, match="no class"):
            await classes.state(empty)
        assert (await classes.state(taught)).joined == 1
        await store.close()

        store = make_store(Lifetimes(idle=1, unjoined=1))
        classes = Classes(store, 10, 10)
        code, _ = await classes.create()
        await classes.join(code)
        await asyncio.sleep(2.2)
        with pytest.raises(ClassError, match="no class"):
            await classes.state(code)
        await store.close()
    asyncio.run(run())


def test_events_fan_out_from_one_watcher_per_class(make_store):
    """Twenty students' streams in one process: the store is watched once, not once per student, and the
    watcher stops with the last stream."""
    async def run():
        store = make_store()
        watched = []
        changes = store.changes

        def counted(code):
            watched.append(code)
            return changes(code)
        store.changes = counted
        classes = Classes(store, 10, 100)
        broadcaster = served_broadcaster(store)
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


async def student_stream(store, keepalive: float):
    """A new class on `store` and a student's event stream of it, its first event read: (classes, broadcaster,
    code, stream)."""
    classes = Classes(store, 10, 100)
    broadcaster = served_broadcaster(store)
    code, _ = await classes.create()
    stream = event_stream(broadcaster, code, await classes.state(code), teacher_view=False, keepalive=keepalive)
    assert (await anext(stream)).startswith("retry: 1000\ndata: ")
    return classes, broadcaster, code, stream


def test_a_students_stream_sends_a_comment_within_the_keepalive_while_others_answer(make_store):
    """nginx drops a stream idle for 60 s. A student's stream sends no joins or answers, so those changes
    must not put its keep-alive comment off: with a join every 0.05 s and a keep-alive of 0.2 s, a stream whose
    timer each change restarted would say nothing at all, and the 3-s wait for each of its comments would fail."""
    async def run():
        store = make_store()
        classes, broadcaster, code, stream = await student_stream(store, keepalive=0.2)

        async def busy():
            while True:
                await classes.join(code)
                await asyncio.sleep(0.05)
        joining = asyncio.create_task(busy())
        for _ in range(4):
            assert await asyncio.wait_for(anext(stream), 3) == ": keep-alive\n\n"
        joining.cancel()
        await stream.aclose()
        await store.close()
    asyncio.run(run())


def test_a_stream_cancelled_just_as_a_change_comes_ends(make_store):
    """A stopping worker cancels every open stream. A change that comes in the same turn of the event loop must not
    swallow the cancellation (asyncio.wait_for does, on Python 3.11): the stream would live on, and the worker,
    or a test client closing, would wait for it for ever."""
    async def run():
        store = make_store()
        _, broadcaster, code, stream = await student_stream(store, keepalive=30)
        reader = asyncio.create_task(anext(stream))
        await asyncio.sleep(0.1)  # the stream now waits for a change
        channel = broadcaster.channels[code]
        channel.publish(channel.state)  # a change a student's stream does not send...
        reader.cancel()  # ...and the cancellation, in the same turn
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(reader, 2)
        assert broadcaster.channels == {}  # the stream left its channel: it has ended
        await broadcaster.close()
        await store.close()
    asyncio.run(run())


def test_a_classes_db_from_before_student_tokens_keeps_its_classes(tmp_path):
    """A server upgraded mid-term opens the file the old one wrote: its classes go on, its students join again."""
    old = sqlite3.connect(tmp_path / "classes.db")
    old.executescript("""
        CREATE TABLE classes (code TEXT PRIMARY KEY, token_hash TEXT NOT NULL, step INTEGER NOT NULL,
            revealed INTEGER NOT NULL, version INTEGER NOT NULL, touched REAL NOT NULL);
        CREATE TABLE students (code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, student TEXT NOT NULL,
            PRIMARY KEY (code, student));
        CREATE TABLE answers (code TEXT NOT NULL REFERENCES classes ON DELETE CASCADE, step INTEGER NOT NULL,
            student TEXT NOT NULL, choice TEXT NOT NULL, PRIMARY KEY (code, step, student));""")
    teacher = "t" * 43
    old.execute("INSERT INTO classes VALUES ('ABCDEF', ?, 3, 0, 7, strftime('%s', 'now'))",
                (hashlib.sha256(teacher.encode()).hexdigest(),))
    old.execute("INSERT INTO students VALUES ('ABCDEF', 'old-student-0000001')")
    old.commit()
    old.close()

    async def run():
        store = SqliteStore(tmp_path / "classes.db", LONG, 0.05)
        classes = Classes(store, 10, 10)
        assert await classes.is_teacher("ABCDEF", teacher)
        student, token, _, _ = await classes.join("ABCDEF")
        await classes.answer("ABCDEF", token, 3, "gone")
        state = await classes.state("ABCDEF")
        assert (state.step, state.joined, state.answered, state.locked) == (3, 2, 1, False)
        await classes.set_door("ABCDEF", "closed")
        assert (await classes.state("ABCDEF")).locked
        await store.close()
    asyncio.run(run())


def test_three_hundred_students_joining_at_once_all_get_a_seat(make_store):
    """A class scanning the QR code together: 300 joins and 300 reads at once, in one process. redis-py's
    default pool refused the 101st connection (MaxConnectionsError), which read as a store outage."""
    async def run():
        store = make_store()
        classes = Classes(store, 10, 400)
        code, _ = await classes.create()
        seats = await asyncio.gather(*(classes.join(code) for _ in range(300)))
        states = await asyncio.gather(*(classes.state(code) for _ in range(300)))
        assert len({student for student, _, _, _ in seats}) == 300
        assert len({name for _, _, name, _ in seats}) == 300  # the names the server gave are unique
        assert {state.joined for state in states} == {300}
        await store.close()
    asyncio.run(run())
