"""The roster and remove (issue 29): names the teacher sees, a student the teacher removes is out of every
count, and limits that slow only requests without a credential, on both stores."""

import asyncio
import sqlite3
import time

import pytest
from class_clients import SCHOOL, TEACHER_ADDRESS, detail, open_class, served_to, store_settings
from class_servers import sse_data

from app.domain.lesson_steps import STEPS
from app.services.classes import Classes
from app.services.rate_limits import RateLimit
from app.stores import Lifetimes
from app.stores.redis import RedisStore
from app.stores.sqlite import SqliteStore

TEACHER_ROUTES = [("POST", "reveal", None), ("POST", "step", {"step": 2}), ("POST", "again", None),
                  ("POST", "lock", None), ("POST", "unlock", None), ("POST", "end", None),
                  ("POST", "remove", {"student": "made-up-student-0001"}), ("GET", "results", None),
                  ("GET", "results.csv", None)]


MISSES = 10  # the limit of wrong codes and tokens per address and minute in the forged-token test


@pytest.mark.parametrize("method,route,body", TEACHER_ROUTES)
def test_a_made_up_teacher_token_is_slowed_like_an_unknown_code(settings, method, route, body):
    """A teacher-only route answered 403 for a wrong token on a real code and 404 on an unknown one, unslowed: a
    guesser could sort codes into classes and not. Now each refusal of a token counts as a miss, and past the
    limit (HP_JOIN_MISSES_PER_MINUTE, 10 here) every code gets 429 alike; no token is 403 before any lookup; the
    teacher's own token still leads."""
    with served_to(settings.model_copy(update={"join_misses_per_minute": MISSES})) as at:
        teacher_client, phone = at(TEACHER_ADDRESS), at(SCHOOL)
        check_forged_tokens(teacher_client, phone, method, route, body)


def check_forged_tokens(teacher_client, phone, method, route, body):
    code, teacher, _ = open_class(teacher_client)
    unknown = "ZZZZZ2" if code != "ZZZZZ2" else "ZZZZZ3"
    forged = {"Authorization": "Bearer " + "A" * 43}

    def ask(at, code, headers=None):
        return at.request(method, f"/api/classes/{code}/{route}", json=body, headers=headers)
    assert ask(phone, code).status_code == ask(phone, unknown).status_code == 403  # no token: no lookup
    assert detail(ask(phone, unknown))["type"] == "teacher_only"
    statuses = [ask(phone, unknown if n % 2 else code, forged).status_code for n in range(MISSES + 10)]
    assert set(statuses[:MISSES]) == {403, 404} and set(statuses[MISSES:]) == {429}, statuses
    assert detail(ask(phone, code, forged))["type"] == "too_many_unknown_codes"
    assert phone.get(f"/api/classes/{code}", headers=teacher).status_code == 200  # the teacher's token anywhere
    assert ask(teacher_client, code, teacher).status_code == 200  # the teacher, at another address


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.slow)])
def settings(request, tmp_path):
    return store_settings(request, tmp_path)


@pytest.fixture
def clients(settings):
    """(the teacher's browser, a phone at the school's address)."""
    with served_to(settings) as at:
        yield at(TEACHER_ADDRESS), at(SCHOOL)


def seat(client, code, name=None):
    response = client.post(f"/api/classes/{code}/join", json=None if name is None else {"name": name})
    assert response.status_code == 201, response.text
    joined = response.json()
    return joined, {"Authorization": f"Bearer {joined['student_token']}"}


def roster(client, code, teacher):
    return client.get(f"/api/classes/{code}", headers=teacher).json()["students"]


def test_names_are_trimmed_checked_and_given_and_the_teacher_sees_the_roster(clients):
    teacher_client, phone = clients
    code, teacher, _ = open_class(teacher_client)
    mei, mei_token = seat(phone, code, "  Mei  ")
    assert mei["name"] == "Mei"
    unnamed = [seat(phone, code)[0]["name"] for _ in range(3)]
    blank, _ = seat(phone, code, "   ")
    # Names are unique in the class, so the teacher can tell students apart: a name another student has, or one
    # the server gave, gets a number.
    taken, _ = seat(phone, code, unnamed[0])
    given = [*unnamed, blank["name"]]
    assert len(set(given)) == 4 and all(name.rsplit(" ", 1)[1].isdigit() for name in given), given
    assert taken["name"] == unnamed[0] + " 2"
    assert [seat(phone, code, "Mei")[0]["name"] for _ in range(2)] == ["Mei 2", "Mei 3"]
    for body, kind in (({"name": "x" * 25}, "name_too_long"), ({"name": "Mei\nteacher"}, "name_control_character"),
                       ({"name": "a\u202eb"}, "name_control_character"), ({"name": 7}, "string_type"),
                       ({"nickname": "x"}, "extra_forbidden")):
        response = phone.post(f"/api/classes/{code}/join", json=body)
        assert response.status_code == 422, (body, response.text)
        assert detail(response)["type"] == kind and detail(response)["loc"][:2] == ["body", list(body)[0]]
    assert "24" in phone.post(f"/api/classes/{code}/join", json={"name": "x" * 25}).json()["detail"][0]["msg"]
    assert phone.post(f"/api/classes/{code}/join", json={"name": "x" * 24}).status_code == 201
    assert phone.post(f"/api/classes/{code}/answers", json={"step": 1, "choice": "same"},
                      headers=mei_token).status_code == 200
    view = teacher_client.get(f"/api/classes/{code}", headers=teacher).json()
    names = [s["name"] for s in view["students"]]
    assert names == ["Mei", *unnamed, blank["name"], unnamed[0] + " 2", "Mei 2", "Mei 3", "x" * 24]
    assert len(set(names)) == len(names)
    assert [s["answered"] for s in view["students"]] == [True] + [False] * 8
    assert view["students"][0]["student"] == mei["student"] and view["joined"] == 9
    assert all(abs(s["joined_at"] - time.time()) < 60 for s in view["students"]) and abs(view["now"] - time.time()) < 5
    # Anyone else, a student with their token included, sees no roster.
    assert "students" not in phone.get(f"/api/classes/{code}").json()
    assert "students" not in phone.get(f"/api/classes/{code}", headers=mei_token).json()
    # Coming back with the token: the same name.
    again = phone.post(f"/api/classes/{code}/join", headers=mei_token)
    assert again.status_code == 200 and again.json()["name"] == "Mei"


def test_a_removed_student_is_refused_counted_nowhere_and_told(clients):
    teacher_client, phone = clients
    code, teacher, _ = open_class(teacher_client)
    (_, kept_token), (gone, gone_token) = seat(phone, code, "Aya"), seat(phone, code, "Bot")

    def vote(token, step, choice):
        return phone.post(f"/api/classes/{code}/answers", json={"step": step, "choice": choice}, headers=token)
    assert vote(kept_token, 1, "same").status_code == 200 and vote(gone_token, 1, "different").status_code == 200
    teacher_client.post(f"/api/classes/{code}/step", json={"step": 2}, headers=teacher)
    step2 = STEPS[1]["choices"]
    assert vote(gone_token, 2, step2[0]).status_code == 200
    with phone.stream("GET", f"/api/classes/{code}/events", params={"student": gone["student"]}) as stream:
        lines = stream.iter_lines()
        assert sse_data(lines)["step"] == 2
        # Only the teacher removes.
        for headers in ({}, kept_token, gone_token):
            response = phone.post(f"/api/classes/{code}/remove", json={"student": gone["student"]}, headers=headers)
            assert response.status_code == 403
        removed = teacher_client.post(f"/api/classes/{code}/remove", json={"student": gone["student"]},
                                      headers=teacher)
        assert removed.status_code == 200 and removed.json() == {"removed": [gone["student"]]}
        assert sse_data(lines) == {"removed": True}  # their phone is told at once
    refused = vote(gone_token, 2, step2[1])
    assert refused.status_code == 403 and detail(refused)["type"] == "student_removed"
    assert "removed" in detail(refused)["msg"]
    rejoin = phone.post(f"/api/classes/{code}/join", headers=gone_token)
    assert rejoin.status_code == 403 and detail(rejoin)["type"] == "student_removed"
    view = teacher_client.get(f"/api/classes/{code}", headers=teacher).json()
    assert view["joined"] == 1 and view["answered"] == 0 and set(view["counts"].values()) == {0}
    assert [s["name"] for s in view["students"]] == ["Aya"]
    teacher_client.post(f"/api/classes/{code}/step", json={"step": 1}, headers=teacher)
    view = teacher_client.get(f"/api/classes/{code}", headers=teacher).json()
    assert view["counts"] == {"same": 1, "different": 0} and view["answered"] == 1  # step 1 without "Bot"
    # Removing again removes nobody; a removed student's stream ends at once with the word.
    assert teacher_client.post(f"/api/classes/{code}/remove", json={"student": gone["student"]},
                               headers=teacher).json() == {"removed": []}
    with phone.stream("GET", f"/api/classes/{code}/events", params={"student": gone["student"]}) as stream:
        assert sse_data(stream.iter_lines()) == {"removed": True}
    assert vote(kept_token, 1, "different").status_code == 200


def test_everyone_who_joined_after_a_moment_is_removed_at_once_once_the_teacher_confirmed_their_names(clients):
    teacher_client, phone = clients
    code, teacher, _ = open_class(teacher_client)
    real = [seat(phone, code, f"Student {n}")[0]["student"] for n in range(3)]
    moment = roster(teacher_client, code, teacher)[-1]["joined_at"]
    flood = [seat(phone, code) for _ in range(20)]
    for _, token in flood:
        phone.post(f"/api/classes/{code}/answers", json={"step": 1, "choice": "different"}, headers=token)
    names = [joined["name"] for joined, _ in flood]

    def remove(body):
        return teacher_client.post(f"/api/classes/{code}/remove", json=body, headers=teacher)
    # More than one is removed only with their names, as the page listed them when it asked: exactly them.
    for wrong in (None, names[:-1], [*names[:-1], "Student 0"]):
        refused = remove({"joined_after": moment} | ({} if wrong is None else {"names": wrong}))
        assert refused.status_code == 409 and detail(refused)["type"] == "removal_not_confirmed", refused.text
        assert sorted(detail(refused)["ctx"]["names"]) == sorted(names) and detail(refused)["ctx"]["count"] == 20
    assert roster(teacher_client, code, teacher)[3:] != []
    late, _ = seat(phone, code, "Late")  # joined after the page asked: the confirmed names no longer match
    refused = remove({"joined_after": moment, "names": names})
    assert refused.status_code == 409 and "Late" in detail(refused)["ctx"]["names"]
    removed = remove({"students": [joined["student"] for joined, _ in flood], "names": names[::-1]})
    assert removed.status_code == 200 and len(removed.json()["removed"]) == 20
    assert remove({"student": late["student"]}).json() == {"removed": [late["student"]]}  # one needs no names
    assert [s["student"] for s in roster(teacher_client, code, teacher)] == real
    view = teacher_client.get(f"/api/classes/{code}", headers=teacher).json()
    assert view["joined"] == 3 and view["counts"] == {"same": 0, "different": 0}
    assert view["door"] == "ask"  # a removal: whoever comes next waits for the teacher
    for body in ({}, {"student": real[0], "joined_after": moment}, {"joined_after": "soon"},
                 {"students": []}, {"waiting": False}, {"student": real[0], "waiting": True}):
        response = teacher_client.post(f"/api/classes/{code}/remove", json=body, headers=teacher)
        assert response.status_code == 422, body


def test_unknown_codes_from_the_school_slow_only_requests_without_a_credential(clients):
    """Issue 29: 60 unknown codes from one address locked out the whole class behind it."""
    teacher_client, phone = clients
    code, teacher, made = open_class(teacher_client)
    joined, token = seat(phone, code, "Real")
    unknown = "ZZZZZ2" if code != "ZZZZZ2" else "ZZZZZ3"
    for n in range(150):
        response = phone.get(f"/api/classes/{unknown}")
        assert response.status_code == (404 if n < 60 else 429), (n, response.text)
    slowed = phone.get(f"/api/classes/{code}")
    assert slowed.status_code == 429 and detail(slowed)["type"] == "too_many_unknown_codes"
    assert 1 <= int(slowed.headers["Retry-After"]) <= 60
    assert phone.post(f"/api/classes/{code}/join").status_code == 429  # a new join holds nothing yet
    forged = phone.post(f"/api/classes/{code}/answers", json={"step": 1, "choice": "same"},
                        headers={"Authorization": "Bearer " + "A" * 43})
    assert forged.status_code == 429  # 403 against 404 would tell a guesser that the code exists
    # The real student answers, comes back, and follows the steps; the teacher at the same address leads.
    assert phone.post(f"/api/classes/{code}/answers", json={"step": 1, "choice": "same"},
                      headers=token).status_code == 200
    assert phone.post(f"/api/classes/{code}/join", headers=token).status_code == 200
    assert phone.get(f"/api/classes/{code}", headers=token).status_code == 200
    assert phone.get(f"/api/classes/{code}", headers=teacher).json()["counts"] == {"same": 1, "different": 0}
    with phone.stream("GET", f"/api/classes/{code}/events", params={"student": joined["student"]}) as stream:
        lines = stream.iter_lines()
        assert sse_data(lines)["step"] == 1
        assert phone.post(f"/api/classes/{code}/step", json={"step": 3}, headers=teacher).status_code == 200
        assert sse_data(lines)["step"] == 3
    with phone.stream("GET", f"/api/classes/{code}/events", params={"teacher": made["teacher_stream"]}) as stream:
        assert stream.status_code == 200 and sse_data(stream.iter_lines())["step"] == 3
    for params in ({}, {"teacher": "0" * 32}, {"student": "made-up-student-01"}):
        with phone.stream("GET", f"/api/classes/{code}/events", params=params) as stream:
            assert stream.status_code == 429, params
    # The projector's QR code, an <img> that sends no token, carries the teacher's stream key.
    assert phone.get(f"/classes/{code}/qr.svg", params={"teacher": made["teacher_stream"]}).status_code == 200
    assert phone.get(f"/classes/{code}/qr.svg").status_code == 429


def test_a_class_can_always_be_started_from_loopback(settings):
    with served_to(settings) as at:
        student, here = at(SCHOOL), at("127.0.0.1")
        for _ in range(10):
            assert student.post("/api/classes").status_code == 201
        for _ in range(10):
            refused = student.post("/api/classes")
            assert refused.status_code == 429
        body = detail(refused)
        assert body["type"] == "too_many_classes_from_address"
        assert body["ctx"]["retry_minutes"] == 60 and body["ctx"]["window_minutes"] == 60
        assert "60 min" in body["msg"] and "HP_TEACHER_KEY" in body["msg"]
        assert 3500 < int(refused.headers["Retry-After"]) <= 3600
        for _ in range(3):
            assert here.post("/api/classes").status_code == 201
    # With HP_TEACHER_KEY, loopback still needs no key; any other address does.
    with served_to(settings.model_copy(update={"teacher_key": "k"})) as at:
        student, here = at(SCHOOL), at("::1")
        assert student.post("/api/classes").status_code == 401
        assert here.post("/api/classes").status_code == 201


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.slow)])
def make_store(request, tmp_path):
    if request.param == "sqlite":
        return lambda: SqliteStore(tmp_path / "classes.db", Lifetimes(3600, 3600), 0.05)
    url = request.getfixturevalue("redis_url").replace("/0", "/2")
    import redis
    redis.Redis.from_url(url).flushdb()
    return lambda: RedisStore(url, Lifetimes(3600, 3600))


def test_a_burst_of_joins_passes_the_limit_at_most_its_number_of_times(make_store):
    """Checked and counted in one step of the store: 300 at once, limit 100, exactly 100 pass."""
    async def run():
        store = make_store()
        classes = Classes(store, 10, 400)
        limit = RateLimit(store, classes.ask, "join", 100, 60.0, "too_many_joins_from_address", "wait {wait}")
        outcomes = await asyncio.gather(*(limit.hit("203.0.113.1") for _ in range(300)), return_exceptions=True)
        assert sum(o is None for o in outcomes) == 100
        assert {o.status for o in outcomes if o is not None} == {429}
        await limit.hit("203.0.113.2")  # another address is not touched
        await store.close()
    asyncio.run(run())


def test_a_window_forgets_its_events_and_the_store_keeps_none_past_it(tmp_path):
    async def run():
        store = SqliteStore(tmp_path / "classes.db", Lifetimes(3600, 3600), 0.05)
        classes = Classes(store, 10, 10)
        short = RateLimit(store, classes.ask, "t", 2, 0.5, "t", "wait {wait}")
        for n in range(200):  # 200 addresses, as a scan of a school's network would make
            await short.hit(f"10.0.{n // 250}.{n % 250}")
        await short.hit("10.9.9.9")
        await short.hit("10.9.9.9")
        with pytest.raises(Exception, match="wait 1 s"):
            await short.hit("10.9.9.9")
        await asyncio.sleep(0.6)
        await short.hit("10.9.9.9")  # its window has passed; and every address's events left with it
        await store.close()
    asyncio.run(run())
    assert sqlite3.connect(tmp_path / "classes.db").execute("SELECT count(*) FROM hits").fetchone()[0] == 1
