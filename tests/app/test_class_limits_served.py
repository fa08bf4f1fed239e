"""Class mode's limits as served (issue 29): `heads-positions serve --workers 2`, on SQLite and on Redis. Every
request comes from 127.0.0.1, one address, as a whole class behind a school's network does."""

import asyncio
import random
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from class_servers import redis_server, served

from app.domain.class_codes import CODE_ALPHABET, CODE_LENGTH

pytestmark = pytest.mark.slow  # real servers: the app in subprocesses, and Redis

BURST = 300
JOINS_PER_MINUTE = 100
MISSES = 150
EVENT_TIMEOUT = 10  # seconds: a bound for a stuck stream, not a speed requirement


@pytest.fixture(params=["sqlite", "redis"])
def server(request, tmp_path):
    env = {"HP_DATA_DIR": str(tmp_path), "HP_JOINS_PER_MINUTE": str(JOINS_PER_MINUTE),
           "HP_JOIN_MISSES_PER_MINUTE": "60"}
    if request.param == "sqlite":
        with served(env, workers=2) as app:
            yield app
    else:
        with redis_server() as redis, served({**env, "HP_REDIS_URL": redis.url}, workers=2) as app:
            yield app


def test_a_burst_of_joins_from_one_address_passes_at_most_the_limit(server):
    """Issue 29 saw 226 to 300 of 300 accepted: the limit was checked before the write and counted after."""
    async def run():
        async with httpx.AsyncClient(base_url=server.url, timeout=60,
                                     limits=httpx.Limits(max_connections=BURST)) as client:
            made = (await client.post("/api/classes")).json()
            code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
            answers = await asyncio.gather(*(client.post(f"/api/classes/{code}/join") for _ in range(BURST)))
            statuses = [r.status_code for r in answers]
            refused = {r.json()["detail"][0]["type"] for r in answers if r.status_code == 429}
            view = (await client.get(f"/api/classes/{code}", headers=teacher)).json()
            return statuses, refused, view
    statuses, refused, view = asyncio.run(run())
    assert statuses.count(201) == JOINS_PER_MINUTE and statuses.count(429) == BURST - JOINS_PER_MINUTE, \
        {s: statuses.count(s) for s in set(statuses)}
    assert refused == {"too_many_joins_from_address"}
    assert view["joined"] == JOINS_PER_MINUTE and len(view["students"]) == JOINS_PER_MINUTE
    assert len({s["name"] for s in view["students"]}) == JOINS_PER_MINUTE


def test_a_burst_of_unknown_codes_from_one_address_answers_at_most_the_limit_of_404s(server):
    """Issue 37 saw 300 of 300 unknown codes answered 404 with a limit of 60: the window was checked before the
    lookup and counted after it. Counted in one atomic step, 60 are answered 404 and the rest wait (429); a late
    student with the class's join key still gets in, one without it waits."""
    codes = set()
    while len(codes) < BURST:
        codes.add("".join(random.choices(CODE_ALPHABET, k=CODE_LENGTH)))

    async def run():
        async with httpx.AsyncClient(base_url=server.url, timeout=60,
                                     limits=httpx.Limits(max_connections=BURST)) as client:
            made = (await client.post("/api/classes")).json()
            answers = await asyncio.gather(*(client.get(f"/api/classes/{code}") for code in codes - {made["code"]}))
            key = parse_qs(urlsplit(made["join_url"]).query)["key"][0]
            late = await client.post(f"/api/classes/{made['code']}/join", json={"name": "Late", "key": key})
            typed = await client.post(f"/api/classes/{made['code']}/join", json={"name": "Typed"})
            return answers, late, typed
    answers, late, typed = asyncio.run(run())
    statuses = [r.status_code for r in answers]
    assert statuses.count(404) == 60 and statuses.count(429) == len(answers) - 60, \
        {s: statuses.count(s) for s in set(statuses)}
    assert {r.json()["detail"][0]["type"] for r in answers if r.status_code == 429} == {"too_many_unknown_codes"}
    assert late.status_code == 201 and late.json()["name"] == "Late"
    assert typed.status_code == 429 and typed.json()["detail"][0]["type"] == "too_many_unknown_codes"


def test_unknown_codes_from_the_address_leave_its_students_and_teacher_alone(server):
    """150 unknown codes at once, each over a new connection, so both workers see them: requests without a
    credential wait, the class behind the same address goes on. At once, not one by one: on a loaded machine 150
    requests in turn outlasted the minute's window, and the first misses left it (CI-like runs saw 404s past
    the 60th)."""
    async def run():
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            made = (await client.post("/api/classes")).json()
            code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
            joined = (await client.post(f"/api/classes/{code}/join", json={"name": "Real"})).json()
            student = {"Authorization": f"Bearer {joined['student_token']}"}
        unknown = "ZZZZZ2" if code != "ZZZZZ2" else "ZZZZZ3"
        async def miss() -> int:
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as fresh:  # a connection of its own
                return (await fresh.get(f"/api/classes/{unknown}")).status_code
        statuses = await asyncio.gather(*(miss() for _ in range(MISSES)))
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            slowed = await client.get(f"/api/classes/{code}")
            events, teacher_events = asyncio.Queue(), asyncio.Queue()

            async def follow(params, queue):
                async with client.stream("GET", f"/api/classes/{code}/events", params=params) as stream:
                    await queue.put(stream.status_code)
                    async for line in stream.aiter_lines():
                        if line.startswith("data: "):
                            await queue.put(line)
            following = [asyncio.create_task(follow({"student": joined["student"]}, events)),
                         asyncio.create_task(follow({"teacher": made["teacher_stream"]}, teacher_events))]
            assert await asyncio.wait_for(events.get(), EVENT_TIMEOUT) == 200
            assert await asyncio.wait_for(teacher_events.get(), EVENT_TIMEOUT) == 200
            first = await asyncio.wait_for(events.get(), EVENT_TIMEOUT)
            answered = await client.post(f"/api/classes/{code}/answers", json={"step": 1, "choice": "same"},
                                         headers=student)
            moved = await client.post(f"/api/classes/{code}/step", json={"step": 3}, headers=teacher)
            second = await asyncio.wait_for(events.get(), EVENT_TIMEOUT)
            teacher_seen = [await asyncio.wait_for(teacher_events.get(), EVENT_TIMEOUT) for _ in range(1)]
            for task in following:
                task.cancel()
            await asyncio.gather(*following, return_exceptions=True)
            view = await client.get(f"/api/classes/{code}", headers=teacher)
            return statuses, slowed, first, answered, moved, second, view, teacher_seen
    statuses, slowed, first, answered, moved, second, view, teacher_seen = asyncio.run(run())
    assert statuses.count(404) == 60 and statuses.count(429) == MISSES - 60, statuses
    assert slowed.status_code == 429 and slowed.json()["detail"][0]["type"] == "too_many_unknown_codes"
    assert '"step": 1' in first and answered.status_code == 200 and moved.status_code == 200
    assert '"step": 3' in second
    assert '"joined": 1' in teacher_seen[0]  # the teacher's stream, from the same address, is open too
    assert view.status_code == 200 and view.json()["joined"] == 1
    assert [s["answered"] for s in view.json()["students"]] == [False]  # step 3 now: not answered yet
