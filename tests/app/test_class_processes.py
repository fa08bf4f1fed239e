"""Class mode with real servers: a restart keeps the class (SQLite), and two replicas on one Redis
stay in step (server-sent events from the replica the students use, moves on the teacher's)."""

import asyncio
import contextlib
import json
import multiprocessing

import httpx
import pytest
from class_servers import Served, open_stores_at_once, redis_server, served

pytestmark = pytest.mark.slow  # real servers: the app in subprocesses, and Redis

# Processes that open new classes.db files at once, and how many files. Without the setup lock, some
# opener got "database is locked" in 4 runs of 4.
OPENERS, FILES = 8, 60
STUDENTS = [f"replica-student-{i:02d}-xyz" for i in range(5)]
EVENT_TIMEOUT = 10  # seconds: a bound for a stuck stream, not a speed requirement


async def follow(client: httpx.AsyncClient, url: str, params: dict, events: asyncio.Queue) -> None:
    async with client.stream("GET", url, params=params) as response:
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                await events.put(json.loads(line[len("data: "):]))


async def until(events: asyncio.Queue, **wanted) -> dict:
    """The first event that has every `wanted` value (earlier ones are skipped)."""
    async def first():
        while True:
            event = await events.get()
            if all(event.get(key) == value for key, value in wanted.items()):
                return event
    return await asyncio.wait_for(first(), EVENT_TIMEOUT)


@contextlib.asynccontextmanager
async def streams(base: str, code: str, params_list: list[dict]):
    """One event stream per params (a student's, or {} for the teacher's view); yields their queues."""
    async with httpx.AsyncClient(base_url=base, timeout=None) as client:
        queues = [asyncio.Queue() for _ in params_list]
        tasks = [asyncio.create_task(follow(client, f"/api/classes/{code}/events", params, queue))
                 for params, queue in zip(params_list, queues)]
        try:
            yield queues
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def summary(view: dict) -> dict:
    """The teacher's view without its roster, waiting list, wrong codes, refused joins and clock, which tests read on
    their own."""
    return {key: value for key, value in view.items()
            if key not in ("students", "waiting", "wrong_codes", "refused_joins", "now")}


def test_workers_that_open_a_new_sqlite_file_at_once_all_start(tmp_path):
    """`serve --workers 2` on a fresh data folder (every new Docker container) opens classes.db twice at
    once; a worker whose set-up failed would end its start-up, and the supervisor the whole server."""
    spawn = multiprocessing.get_context("spawn")  # as uvicorn starts its workers
    barrier, results = spawn.Barrier(OPENERS), spawn.Queue()
    # daemon: an opener that crashed would leave the others waiting at the barrier, and pytest's exit with them
    openers = [spawn.Process(target=open_stores_at_once, args=(tmp_path, FILES, barrier, results), daemon=True)
               for _ in range(OPENERS)]
    for opener in openers:
        opener.start()
    outcomes = [results.get(timeout=60) for _ in range(OPENERS * FILES)]
    for opener in openers:
        opener.join()
    assert outcomes == ["ok"] * (OPENERS * FILES), [outcome for outcome in outcomes if outcome != "ok"]


def join(base: str, code: str) -> dict:
    made = httpx.post(f"{base}/api/classes/{code}/join")
    made.raise_for_status()
    return {"Authorization": f"Bearer {made.json()['student_token']}"}


def test_a_restart_keeps_the_class_its_step_its_answers_and_its_tokens(tmp_path):
    env = {"HP_DATA_DIR": str(tmp_path)}
    with served(env, workers=2) as server:
        made = httpx.post(f"{server.url}/api/classes").json()
        code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
        httpx.post(f"{server.url}/api/classes/{code}/step", json={"step": 3}, headers=teacher).raise_for_status()
        students = [join(server.url, code) for _ in STUDENTS[:3]]
        for student, choice in zip(students, ["stays", "gone", "gone"]):
            httpx.post(f"{server.url}/api/classes/{code}/answers", json={"step": 3, "choice": choice},
                       headers=student).raise_for_status()
        before = summary(httpx.get(f"{server.url}/api/classes/{code}", headers=teacher).json())
        assert before == {"step": 3, "round": 1, "revealed": False, "joined": 3, "answered": 3,
                          "door": "open", "locked": False,
                          "counts": {"stays": 1, "gone": 2}}
        server.stop()
        server.start()
        after = httpx.get(f"{server.url}/api/classes/{code}", headers=teacher)
        assert summary(after.json()) == before
        # The same tokens still lead the class and answer after the restart.
        httpx.post(f"{server.url}/api/classes/{code}/answers", json={"step": 3, "choice": "stays"},
                   headers=students[1]).raise_for_status()
        httpx.post(f"{server.url}/api/classes/{code}/reveal", headers=teacher).raise_for_status()
        view = httpx.get(f"{server.url}/api/classes/{code}", headers=teacher).json()
        assert view["revealed"] is True and view["counts"] == {"stays": 2, "gone": 1}


def test_a_stopping_server_closes_the_classs_streams_at_once(tmp_path):
    """SIGTERM with phones connected (teacher review): the event streams, which never end by themselves, held the
    worker for uvicorn's whole graceful timeout, in which no screen heard anything, and were then cancelled with a
    traceback each in the log. They are closed at once; every stream sees its end, and the log stays clean."""
    async def run(server):
        async with httpx.AsyncClient(base_url=server.url) as client:
            made = (await client.post("/api/classes")).json()
            code = made["code"]
            async with streams(server.url, code, [{"student": s} for s in STUDENTS[:3]] + [{}]) as queues:
                for queue in queues:
                    await until(queue, step=1)
                await asyncio.to_thread(server.stop)
    server = Served({"HP_DATA_DIR": str(tmp_path)}).start()
    asyncio.run(run(server))
    log = server.read_log()
    assert "graceful shutdown exceeded" not in log and "Traceback" not in log, log
    assert "Shutting down" in log or "Finished server process" in log, log


def test_answers_sent_while_the_server_is_down_and_retried_after_count_once(tmp_path):
    """The outage of issue 23: the server stops mid-class. A student's answer sent meanwhile fails, is
    retried once the server is back, and counts once; so does a retry of an answer whose reply was lost,
    even after the teacher revealed."""
    with served({"HP_DATA_DIR": str(tmp_path)}) as server:
        base = server.url
        made = httpx.post(f"{base}/api/classes").json()
        code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
        first, second, third = (join(base, code) for _ in range(3))
        body = {"step": 1, "choice": "different"}
        httpx.post(f"{base}/api/classes/{code}/answers", json=body, headers=first).raise_for_status()
        server.stop()
        for student in (second, third):
            with pytest.raises(httpx.ConnectError):
                httpx.post(f"{base}/api/classes/{code}/answers", json=body, headers=student, timeout=2)
        server.start()
        base = server.url
        # Each student's page retries until it is acknowledged; the first one retries too (it never saw its reply).
        for student in (first, second, third, second):
            sent = httpx.post(f"{base}/api/classes/{code}/answers", json=body, headers=student)
            assert sent.status_code == 200 and sent.json() == {"ok": True, **body}
        httpx.post(f"{base}/api/classes/{code}/reveal", headers=teacher).raise_for_status()
        late = httpx.post(f"{base}/api/classes/{code}/answers", json=body, headers=third)
        assert late.status_code == 200
        view = summary(httpx.get(f"{base}/api/classes/{code}", headers=teacher).json())
        assert view == {"step": 1, "round": 1, "revealed": True, "joined": 3, "answered": 3,
                        "door": "ask", "locked": False,
                        "counts": {"same": 0, "different": 3}}


def test_two_workers_on_one_sqlite_file_keep_every_stream_in_step(tmp_path):
    async def run(base):
        async with httpx.AsyncClient(base_url=base) as client:
            made = (await client.post("/api/classes")).json()
            code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
            # Five streams over new connections land on both workers; each worker's watcher wakes its own.
            async with streams(base, code, [{"student": s} for s in STUDENTS]) as queues:
                for queue in queues:
                    await until(queue, step=1)
                for step in (2, 5):
                    moved = await client.post(f"/api/classes/{code}/step", json={"step": step}, headers=teacher)
                    moved.raise_for_status()
                    for queue in queues:
                        await until(queue, step=step)
    with served({"HP_DATA_DIR": str(tmp_path)}, workers=2) as server:
        asyncio.run(run(server.url))


def test_two_replicas_on_one_redis_stay_in_sync(tmp_path):
    async def run(teacher_base, student_base):
        async with httpx.AsyncClient(base_url=teacher_base) as teacher_client, \
                httpx.AsyncClient(base_url=student_base) as student_client:
            made = (await teacher_client.post("/api/classes")).json()
            code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
            tokens = []
            for _ in STUDENTS:  # joined on the students' replica; the teacher's sees them
                joined = (await student_client.post(f"/api/classes/{code}/join")).raise_for_status().json()
                tokens.append({"Authorization": f"Bearer {joined['student_token']}"})
            async with streams(student_base, code, [{"student": s} for s in STUDENTS]) as students, \
                    streams(teacher_base, code, [{}]) as (teacher_view,):
                for queue in students:
                    await until(queue, step=1)
                await until(teacher_view, joined=len(STUDENTS))
                for step, choices in ((2, ["same", "different"]), (3, ["stays", "gone"]), (5, ["same", "different"])):
                    (await teacher_client.post(f"/api/classes/{code}/step", json={"step": step},
                                               headers=teacher)).raise_for_status()
                    for queue in students:
                        await until(queue, step=step, revealed=False)
                    picks = [choices[i % 2] for i in range(len(STUDENTS))]
                    for token, choice in zip(tokens, picks):
                        answer = {"step": step, "choice": choice}
                        (await student_client.post(f"/api/classes/{code}/answers", json=answer,
                                                   headers=token)).raise_for_status()
                    # The teacher's own replica sees every answer of the other's.
                    await until(teacher_view, step=step, answered=len(STUDENTS))
                    view = (await teacher_client.get(f"/api/classes/{code}", headers=teacher)).json()
                    assert view["counts"] == {c: picks.count(c) for c in choices}
                (await teacher_client.post(f"/api/classes/{code}/reveal", headers=teacher)).raise_for_status()
                for queue in students:
                    await until(queue, step=5, revealed=True)
                refused = await student_client.post(f"/api/classes/{code}/answers",
                                                    json={"step": 5, "choice": "different"}, headers=tokens[0])
                assert refused.status_code == 409
                (await teacher_client.post(f"/api/classes/{code}/end", headers=teacher)).raise_for_status()
                for queue in students:
                    await until(queue, ended=True)
            assert (await student_client.get(f"/api/classes/{code}")).status_code == 404
    with redis_server() as redis:
        # Separate data folders: nothing can pass between the replicas but Redis.
        env = {"HP_REDIS_URL": redis.url}
        with served({**env, "HP_DATA_DIR": str(tmp_path / "a")}) as a, \
                served({**env, "HP_DATA_DIR": str(tmp_path / "b")}) as b:
            asyncio.run(run(a.url, b.url))

