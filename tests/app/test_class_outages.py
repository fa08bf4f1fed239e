"""Class mode when its store goes away: Redis stopped and started mid-class (a real redis-server with its
append-only file, as in compose.yaml), and SQLite locked past its busy timeout. Requests get 503 naming the
class store, /readyz names the part that is down, the event streams say so, and nothing needs a restart."""

import asyncio
import sqlite3
import time

import pytest
from class_servers import RedisServer, served_broadcaster
from fastapi.testclient import TestClient
from shipped_models import app_on_shipped_models

from app.errors import ClassError
from app.services.class_events import event_stream
from app.services.classes import Classes
from app.settings import Settings
from app.stores import Lifetimes
from app.stores.redis import RedisStore
from app.stores.sqlite import SqliteStore


@pytest.mark.slow  # a real redis-server
def test_redis_stopped_mid_class_is_a_503_that_names_the_store_and_class_mode_comes_back(tmp_path, caplog):
    """The store outage of issue 23: Redis stopped mid-class made every class request a 500 with a traceback
    while /readyz said ready. Now: 503 class_store_unavailable with Retry-After, /readyz names the class
    store, the event stream says `outage` and then `back`, and the class is intact once Redis returns."""
    (tmp_path / "redis").mkdir()
    redis = RedisServer(str(tmp_path / "redis"), appendonly=True).start()
    settings = Settings(data_dir=tmp_path / "data", redis_url=redis.url)
    try:
        with TestClient(app_on_shipped_models(settings)) as client:
            made = client.post("/api/classes").json()
            code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
            student = {"Authorization": f"Bearer {client.post(f'/api/classes/{code}/join').json()['student_token']}"}
            client.post(f"/api/classes/{code}/answers", json={"step": 1, "choice": "same"},
                        headers=student).raise_for_status()
            redis.stop()
            caplog.clear()
            refused = [client.get(f"/api/classes/{code}"),
                       client.post(f"/api/classes/{code}/answers", json={"step": 1, "choice": "different"},
                                   headers=student),
                       client.post(f"/api/classes/{code}/step", json={"step": 2}, headers=teacher),
                       client.post(f"/api/classes/{code}/join"),
                       client.post("/api/classes")]
            for response in refused:
                assert response.status_code == 503, response.text
                assert response.json()["detail"][0]["type"] == "class_store_unavailable"
                assert "class store (redis)" in response.json()["detail"][0]["msg"]
                assert response.headers["Retry-After"] == "2"
            ready = client.get("/readyz")
            assert ready.status_code == 503
            assert ready.json()["parts"]["models"] == "ready"
            assert ready.json()["parts"]["class_store"].startswith("down: the class store (redis)")
            assert client.get("/readyz", params={"part": "models"}).status_code == 200
            assert not [r for r in caplog.records if r.exc_info], "a traceback in the log"
            assert len([r for r in caplog.records if "does not answer" in r.getMessage()]) == 1

            redis.start()
            # Back by itself: the same class, its answer, its tokens.
            view = client.get(f"/api/classes/{code}", headers=teacher)
            assert view.status_code == 200, view.text
            kept = {k: v for k, v in view.json().items()
                    if k not in ("students", "waiting", "wrong_codes", "refused_joins", "now")}
            assert kept == {"step": 1, "round": 1, "revealed": False, "joined": 1, "answered": 1,
                            "door": "open", "locked": False,
                            "counts": {"same": 1, "different": 0}}
            assert client.post(f"/api/classes/{code}/answers", json={"step": 1, "choice": "different"},
                               headers=student).status_code == 200
            assert client.get("/readyz").status_code == 200
    finally:
        redis.stop()


@pytest.mark.slow  # a real redis-server
def test_a_class_stream_says_outage_while_redis_is_stopped_and_back_with_the_state_after(tmp_path):
    async def run(redis):
        store = RedisStore(redis.url, Lifetimes(3600, 3600))
        classes = Classes(store, 10, 10)
        code, _ = await classes.create()
        state = await classes.state(code)
        stream = event_stream(served_broadcaster(store), code, state, teacher_view=True, keepalive=0.5)
        assert '"step": 1' in await anext(stream)

        async def next_event():
            while (text := await asyncio.wait_for(anext(stream), 10)) == ": keep-alive\n\n":
                pass
            return text
        redis.stop()
        assert (await next_event()).startswith("event: outage\n")
        with pytest.raises(ClassError) as error:
            await classes.set_step(code, 2)
        assert (error.value.status, error.value.type) == (503, "class_store_unavailable")
        redis.start()
        back = await next_event()
        assert back.startswith("event: back\n") and '"step": 1' in back
        await classes.set_step(code, 4)
        assert '"step": 4' in await next_event()
        await stream.aclose()
        await store.close()
    (tmp_path / "redis").mkdir()
    redis = RedisServer(str(tmp_path / "redis"), appendonly=True).start()
    try:
        asyncio.run(run(redis))
    finally:
        redis.stop()


def test_sqlite_locked_by_another_process_is_a_503_and_class_mode_comes_back(tmp_path):
    """SQLite's outage: the file stays locked past the busy timeout (here 0.2 s), as when another process
    holds it or the disk stalls."""
    async def run():
        store = SqliteStore(tmp_path / "classes.db", Lifetimes(3600, 3600), 0.05, busy_seconds=0.2)
        classes = Classes(store, 10, 10)
        code, _ = await classes.create()
        holder = sqlite3.connect(tmp_path / "classes.db", isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        for call in (classes.join(code), classes.set_step(code, 2), classes.ping()):
            with pytest.raises(ClassError) as error:
                await call
            assert (error.value.status, error.value.type) == (503, "class_store_unavailable")
            assert error.value.ctx == {"store": "sqlite"}
        holder.execute("ROLLBACK")
        holder.close()
        await classes.join(code)
        await classes.set_step(code, 2)
        assert (await classes.state(code)).joined == 1
        await store.close()
    asyncio.run(run())


async def _outage_and_back(store, classes, pause, resume) -> float:
    """Open a teacher's and a student's stream, pause the store, and return how long it took both to say
    `outage`; after resume, both say `back` with the class's state, and a later move reaches them."""
    code, _ = await classes.create()
    await classes.set_step(code, 3)
    state = await classes.state(code)
    broadcaster = served_broadcaster(store)
    streams = [event_stream(broadcaster, code, state, teacher_view=view, keepalive=0.5) for view in (True, False)]
    for stream in streams:
        assert '"step": 3' in await anext(stream)

    async def next_event(stream):
        """The next event that is not a keep-alive comment, within 15 s."""
        async def skip_keepalives():
            while (text := await anext(stream)) == ": keep-alive\n\n":
                pass
            return text
        return await asyncio.wait_for(skip_keepalives(), 15)

    pause()
    paused = time.monotonic()
    try:
        for stream in streams:
            assert (await next_event(stream)).startswith("event: outage\n")
        noticed = time.monotonic() - paused
        await asyncio.sleep(max(0.0, PAUSE_SECONDS - noticed))
    finally:
        resume()
    for stream in streams:
        back = await next_event(stream)
        assert back.startswith("event: back\n") and '"step": 3' in back, back
    await classes.set_step(code, 5)
    for stream in streams:
        assert '"step": 5' in await next_event(stream)
        await stream.aclose()
    await broadcaster.close()
    return noticed


PAUSE_SECONDS = 10  # issue 30: a store paused for 10 s


@pytest.mark.slow  # a real redis-server, paused for 10 s
def test_a_paused_redis_is_an_outage_on_every_stream_within_5_seconds(tmp_path):
    """SIGSTOP leaves every connection open and silent: no error reaches the pub/sub watcher, so only the
    heartbeat's unanswered ping can tell (before it, idle screens showed nothing until someone acted)."""
    async def run(redis):
        store = RedisStore(redis.url, Lifetimes(3600, 3600))
        noticed = await _outage_and_back(store, Classes(store, 10, 10),
                                         redis.pause, redis.resume)
        await store.close()
        return noticed
    redis = RedisServer().start()
    try:
        assert asyncio.run(run(redis)) < 5
    finally:
        redis.stop()


@pytest.mark.slow  # holds the file locked for 10 s
def test_a_sqlite_file_held_locked_is_an_outage_on_every_stream_within_5_seconds(tmp_path):
    """With the default busy timeout (10 s) a locked file makes the poll wait without an error."""
    holder = sqlite3.connect(tmp_path / "classes.db", isolation_level=None, check_same_thread=False)

    async def run():
        store = SqliteStore(tmp_path / "classes.db", Lifetimes(3600, 3600), 0.05)
        noticed = await _outage_and_back(store, Classes(store, 10, 10),
                                         lambda: holder.execute("BEGIN EXCLUSIVE"), lambda: holder.execute("ROLLBACK"))
        await store.close()
        return noticed
    assert asyncio.run(run()) < 5
