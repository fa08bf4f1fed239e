"""The door the teacher keeps (issue 38): open, ask, closed; the waiting room; removals the teacher confirms; and the
join link's key, which no one's wrong codes hold. On both stores."""

import asyncio
import sqlite3
from urllib.parse import parse_qs, urlsplit

import pytest
from class_clients import SCHOOL, TEACHER_ADDRESS, detail, open_class, served_to, store_settings
from class_servers import sse_data

from app.domain.class_names import ANIMALS
from app.services.classes import Classes
from app.services.lesson import qr_svg
from app.stores import Lifetimes
from app.stores.sqlite import SqliteStore

ELSEWHERE = "192.0.2.77"


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.slow)])
def at(request, tmp_path):
    """at(address): a client seen from that address, on a fresh store."""
    with served_to(store_settings(request, tmp_path)) as at:
        yield at


def bearer(joined: dict) -> dict:
    return {"Authorization": f"Bearer {joined['student_token']}"}


def vote(client, code, joined, choice="same", step=1):
    return client.post(f"/api/classes/{code}/answers", json={"step": step, "choice": choice}, headers=bearer(joined))


def test_with_the_door_on_ask_fifty_scripted_joins_wait_and_one_refusal_removes_them_all(at):
    teacher_client, phone = at(TEACHER_ADDRESS), at(SCHOOL)
    code, teacher, _ = open_class(teacher_client)
    real = [phone.post(f"/api/classes/{code}/join", json={"name": name}).json() for name in ("ゆき", "Tom", "Léa")]
    assert all(vote(phone, code, joined).status_code == 200 for joined in real)
    assert teacher_client.post(f"/api/classes/{code}/door", json={"door": "ask"}, headers=teacher).json() == {
        "ok": True}
    # The script: 50 joins named after real classmates, then 50 wrong answers.
    fakes = []
    for n in range(50):
        response = phone.post(f"/api/classes/{code}/join", json={"name": ("ゆき", "Tom")[n % 2]})
        assert response.status_code == 202, response.text
        assert response.json()["waiting"] is True and response.json()["answers"] == {}
        fakes.append(response.json())
    for joined in fakes:
        refused = vote(phone, code, joined, "different")
        assert refused.status_code == 403 and detail(refused)["type"] == "waiting_for_teacher"
    again = phone.post(f"/api/classes/{code}/join", headers=bearer(fakes[0]))  # coming back: still waiting
    assert again.status_code == 202 and again.json()["waiting"] is True
    view = teacher_client.get(f"/api/classes/{code}", headers=teacher).json()
    assert view["joined"] == 3 and view["answered"] == 3 and view["counts"] == {"same": 3, "different": 0}
    assert [s["name"] for s in view["students"]] == ["ゆき", "Tom", "Léa"]
    assert [s["student"] for s in view["waiting"]] == [f["student"] for f in fakes]
    assert [s["name"] for s in view["waiting"]] == [f["name"] for f in fakes]
    assert view["door"] == "ask" and view["locked"] is False
    # A real latecomer waits too, and the teacher admits her by name.
    aya = phone.post(f"/api/classes/{code}/join", json={"name": "Aya"})
    assert aya.status_code == 202
    aya = aya.json()
    admitted = teacher_client.post(f"/api/classes/{code}/admit", json={"student": aya["student"]}, headers=teacher)
    assert admitted.json() == {"admitted": [aya["student"]]}
    assert vote(phone, code, aya).status_code == 200
    # One refusal of everyone waiting, with their names as the page listed them.
    names = [f["name"] for f in fakes]
    unconfirmed = teacher_client.post(f"/api/classes/{code}/remove", json={"waiting": True}, headers=teacher)
    assert unconfirmed.status_code == 409 and detail(unconfirmed)["ctx"]["count"] == 50
    refused = teacher_client.post(f"/api/classes/{code}/remove", json={"waiting": True, "names": names},
                                  headers=teacher)
    assert refused.status_code == 200 and sorted(refused.json()["removed"]) == sorted(f["student"] for f in fakes)
    view = teacher_client.get(f"/api/classes/{code}", headers=teacher).json()
    assert view["waiting"] == [] and view["joined"] == 4 and view["counts"] == {"same": 4, "different": 0}
    for joined in fakes[:5]:
        gone = vote(phone, code, joined, "different")
        assert gone.status_code == 403 and detail(gone)["type"] == "student_removed"
        # A refused browser (the page keeps its token) cannot come back as someone new.
        rejoin = phone.post(f"/api/classes/{code}/join", headers=bearer(joined), json={"name": "Someone new"})
        assert rejoin.status_code == 403 and detail(rejoin)["type"] == "student_removed"
    assert teacher_client.post(f"/api/classes/{code}/admit", json={"all": True}, headers=teacher).json() == {
        "admitted": []}


def test_the_first_reveal_turns_an_open_door_to_ask_and_the_teacher_keeps_the_door(at):
    teacher_client, phone = at(TEACHER_ADDRESS), at(SCHOOL)

    def door(code, teacher, value=None):
        if value is not None:
            response = teacher_client.post(f"/api/classes/{code}/door", json={"door": value}, headers=teacher)
            assert response.status_code == 200, response.text
        return phone.get(f"/api/classes/{code}").json()["door"]

    def joins(code):
        return phone.post(f"/api/classes/{code}/join").status_code
    code, teacher, _ = open_class(teacher_client)
    assert door(code, teacher) == "open" and joins(code) == 201
    teacher_client.post(f"/api/classes/{code}/reveal", headers=teacher)
    assert door(code, teacher) == "ask" and joins(code) == 202
    assert door(code, teacher, "open") == "open" and joins(code) == 201
    teacher_client.post(f"/api/classes/{code}/step", json={"step": 3}, headers=teacher)
    teacher_client.post(f"/api/classes/{code}/reveal", headers=teacher)
    assert door(code, teacher) == "open"  # only the first reveal turns it
    assert door(code, teacher, "closed") == "closed" and joins(code) == 403
    assert phone.get(f"/api/classes/{code}").json()["locked"] is True
    # /lock and /unlock are the closed and open door.
    assert teacher_client.post(f"/api/classes/{code}/unlock", headers=teacher).status_code == 200
    assert door(code, teacher) == "open"
    assert teacher_client.post(f"/api/classes/{code}/lock", headers=teacher).status_code == 200
    assert door(code, teacher) == "closed"
    # A teacher who chose the door before the first reveal keeps it.
    other, other_teacher, _ = open_class(teacher_client)
    door(other, other_teacher, "open")
    teacher_client.post(f"/api/classes/{other}/reveal", headers=other_teacher)
    assert door(other, other_teacher) == "open"
    # Only the teacher keeps it, and only with one of the three states.
    assert phone.post(f"/api/classes/{other}/door", json={"door": "closed"}).status_code == 403
    for body in ({"door": "ajar"}, {"door": "open", "more": 1}, {}):
        response = teacher_client.post(f"/api/classes/{other}/door", json=body, headers=other_teacher)
        assert response.status_code == 422, body
    for body in ({}, {"all": False}, {"all": True, "student": "made-up-student-0001"}):
        response = teacher_client.post(f"/api/classes/{other}/admit", json=body, headers=other_teacher)
        assert response.status_code == 422, body
    assert phone.post(f"/api/classes/{other}/admit", json={"all": True}).status_code == 403


def test_a_waiting_phone_is_told_it_waits_then_that_it_is_in_or_refused(at):
    teacher_client, phone = at(TEACHER_ADDRESS), at(SCHOOL)
    code, teacher, _ = open_class(teacher_client)
    teacher_client.post(f"/api/classes/{code}/door", json={"door": "ask"}, headers=teacher)
    mei, bot = (phone.post(f"/api/classes/{code}/join", json={"name": n}).json() for n in ("Mei", "Bot"))
    with phone.stream("GET", f"/api/classes/{code}/events", params={"student": mei["student"]}) as stream:
        lines = stream.iter_lines()
        first = sse_data(lines)
        assert first["waiting"] is True and first["step"] == 1 and first["door"] == "ask"
        teacher_client.post(f"/api/classes/{code}/admit", json={"student": mei["student"]}, headers=teacher)
        admitted = sse_data(lines)
        assert "waiting" not in admitted and admitted["joined"] == 1
    assert vote(phone, code, mei).status_code == 200
    with phone.stream("GET", f"/api/classes/{code}/events", params={"student": bot["student"]}) as stream:
        lines = stream.iter_lines()
        assert sse_data(lines)["waiting"] is True
        teacher_client.post(f"/api/classes/{code}/remove", json={"student": bot["student"]}, headers=teacher)
        assert sse_data(lines) == {"removed": True}


def test_after_100_wrong_codes_a_join_through_the_link_joins_at_once(at):
    teacher_client, phone = at(TEACHER_ADDRESS), at(SCHOOL)
    code, teacher, made = open_class(teacher_client)
    key = parse_qs(urlsplit(made["join_url"]).query)["key"][0]
    assert parse_qs(urlsplit(made["join_url"]).query)["class"] == [code]
    assert all(parse_qs(urlsplit(url).query)["key"] == [key] for url in made["join_urls"])
    # The projector's QR code holds the link with its key.
    qr = teacher_client.get(f"/classes/{code}/qr.svg", params={"teacher": made["teacher_stream"]}).content
    assert qr == qr_svg(made["join_urls"][0], code)
    first = phone.post(f"/api/classes/{code}/join", json={"key": key})
    assert first.status_code == 201
    unknown = "ZZZZZ2" if code != "ZZZZZ2" else "ZZZZZ3"
    statuses = [phone.post(f"/api/classes/{unknown}/join").status_code for _ in range(100)]
    assert statuses == [404] * 60 + [429] * 40
    # A phone typing the code is held, and told it is the network's wrong codes, not its own.
    typed = phone.post(f"/api/classes/{code}/join", json={"name": "Late"})
    assert typed.status_code == 429 and detail(typed)["type"] == "too_many_unknown_codes"
    assert "network" in detail(typed)["msg"] and "join link" in detail(typed)["msg"]
    # The phone that opens the link joins at once; a made-up key is no key.
    late = phone.post(f"/api/classes/{code}/join", json={"name": "Late", "key": key})
    assert late.status_code == 201 and late.json()["name"] == "Late"
    assert phone.post(f"/api/classes/{code}/join", json={"key": "0" * 24}).status_code == 429
    assert phone.post(f"/api/classes/{unknown}/join", json={"key": key}).status_code == 429  # another code's key
    # The teacher (at another address) is told how many wrong codes came from the class's network.
    view = teacher_client.get(f"/api/classes/{code}", headers=teacher).json()
    assert view["wrong_codes"] == 60  # counted until the limit; those refused after it never reached a lookup
    other, other_teacher, _ = open_class(teacher_client)
    assert teacher_client.get(f"/api/classes/{other}", headers=other_teacher).json()["wrong_codes"] == 0
    assert "wrong_codes" not in phone.get(f"/api/classes/{code}", headers=bearer(late.json())).json()
    # Another network is not counted into this class's.
    elsewhere = at(ELSEWHERE)
    assert elsewhere.get(f"/api/classes/{unknown}").status_code == 404
    assert teacher_client.get(f"/api/classes/{code}", headers=teacher).json()["wrong_codes"] == 60


@pytest.mark.parametrize("lang", ["zh", "ja", "fr", "en"])
def test_a_student_without_a_name_gets_a_friendly_one_in_the_phones_language(at, lang):
    teacher_client, phone = at(TEACHER_ADDRESS), at(SCHOOL)
    code, _, _ = open_class(teacher_client)
    names = [phone.post(f"/api/classes/{code}/join", json={"lang": lang}).json()["name"] for _ in range(3)]
    assert all(name.rsplit(" ", 1)[0] in ANIMALS[lang] for name in names), names
    assert len(set(names)) == 3
    assert phone.post(f"/api/classes/{code}/join").json()["name"].rsplit(" ", 1)[0] in ANIMALS["en"]
    bad = phone.post(f"/api/classes/{code}/join", json={"lang": "de"})
    assert bad.status_code == 422 and detail(bad)["loc"] == ["body", "lang"]


def test_a_locked_class_of_a_classes_db_from_before_the_door_keeps_its_door_closed(tmp_path):
    old = sqlite3.connect(tmp_path / "classes.db")
    old.executescript("""
        CREATE TABLE classes (code TEXT PRIMARY KEY, token_hash TEXT NOT NULL, step INTEGER NOT NULL,
            revealed INTEGER NOT NULL, version INTEGER NOT NULL, touched REAL NOT NULL,
            locked INTEGER NOT NULL DEFAULT 0, round INTEGER NOT NULL DEFAULT 1, ended_at REAL);""")
    old.execute("INSERT INTO classes VALUES ('ABCDEF', 'x', 2, 0, 7, strftime('%s', 'now'), 1, 1, NULL)")
    old.execute("INSERT INTO classes VALUES ('GHJKMN', 'x', 2, 0, 7, strftime('%s', 'now'), 0, 1, NULL)")
    old.commit()
    old.close()

    async def run():
        store = SqliteStore(tmp_path / "classes.db", Lifetimes(3600, 3600), 0.05)
        classes = Classes(store, 10, 10)
        assert (await classes.state("ABCDEF")).door == "closed"
        assert (await classes.state("GHJKMN")).door == "open"
        await classes.reveal("ABCDEF", _no_verdict)
        assert (await classes.state("ABCDEF")).door == "closed"  # the teacher's lock was a choice
        await classes.reveal("GHJKMN", _no_verdict)
        assert (await classes.state("GHJKMN")).door == "ask"
        await store.close()
    asyncio.run(run())


async def _no_verdict(step_id):
    return []


def test_a_join_key_that_is_not_ascii_is_no_key_not_a_500(at):
    """Schemathesis sent {"key": "é"}: compare_digest refused the str and the join answered 500."""
    teacher_client, phone = at(TEACHER_ADDRESS), at(SCHOOL)
    code, _, _ = open_class(teacher_client)
    for key in ("é", "ゆき" * 20, ""):
        joined = phone.post(f"/api/classes/{code}/join", json={"key": key})
        assert joined.status_code == 201, (key, joined.text)


def test_a_name_the_teacher_refused_cannot_wait_again_but_another_name_from_the_same_address_does(at):
    """Issue 38: after a refusal the script joined again at once, as new students at the door. The name is refused
    (whatever its case or width), never the address: the whole school shares it."""
    teacher_client, phone = at(TEACHER_ADDRESS), at(SCHOOL)
    code, teacher, _ = open_class(teacher_client)
    yuki, tom = (phone.post(f"/api/classes/{code}/join", json={"name": n}).json() for n in ("ゆき", "Tom"))
    teacher_client.post(f"/api/classes/{code}/door", json={"door": "ask"}, headers=teacher)
    fakes = [phone.post(f"/api/classes/{code}/join", json={"name": n}).json() for n in ("ゆき", "Tom", "Bot")]
    assert [f["name"] for f in fakes] == ["ゆき 2", "Tom 2", "Bot"] and all(f["waiting"] for f in fakes)
    names = [f["name"] for f in fakes]
    refused = teacher_client.post(f"/api/classes/{code}/remove", json={"waiting": True, "names": names},
                                  headers=teacher)
    assert refused.status_code == 200 and len(refused.json()["removed"]) == 3
    assert teacher_client.get(f"/api/classes/{code}", headers=teacher).json()["refused_joins"] == 0
    # The names sent, and the names the teacher saw, in other cases, widths and spacing.
    again = ["ゆき", "Tom", "Bot", "TOM", "ｔｏｍ", "ＢＯＴ", "bot", "ゆき 2", "ゆき\u30002", "tom  2"]
    for name in again:
        response = phone.post(f"/api/classes/{code}/join", json={"name": name})
        assert response.status_code == 403, (name, response.text)
        assert detail(response)["type"] == "refused_name" and detail(response)["ctx"] == {"code": code, "name": name}
        assert "another name" in detail(response)["msg"]
    # A different name from the same address waits normally, and so does a phone that sends none.
    aya = phone.post(f"/api/classes/{code}/join", json={"name": "Aya"})
    nameless = phone.post(f"/api/classes/{code}/join")
    assert aya.status_code == 202 and aya.json()["name"] == "Aya" and nameless.status_code == 202
    view = teacher_client.get(f"/api/classes/{code}", headers=teacher).json()
    assert view["refused_joins"] == len(again)
    assert [s["name"] for s in view["waiting"]] == ["Aya", nameless.json()["name"]]
    assert [s["name"] for s in view["students"]] == ["ゆき", "Tom"]
    # The real students who came first keep their seats and come back with their tokens.
    assert vote(phone, code, yuki).status_code == 200
    assert phone.post(f"/api/classes/{code}/join", headers=bearer(tom)).status_code == 200
    # A student removed from the roster (not at the door) leaves their name refused too, even with the door open.
    teacher_client.post(f"/api/classes/{code}/door", json={"door": "open"}, headers=teacher)
    teacher_client.post(f"/api/classes/{code}/remove", json={"student": tom["student"]}, headers=teacher)
    teacher_client.post(f"/api/classes/{code}/door", json={"door": "open"}, headers=teacher)
    assert detail(phone.post(f"/api/classes/{code}/join", json={"name": "tom"}))["type"] == "refused_name"
    assert phone.post(f"/api/classes/{code}/join", json={"name": "Tomás"}).status_code == 201
    # The count is the teacher's: not in the view without the teacher's token; another class refuses nothing.
    assert "refused_joins" not in phone.get(f"/api/classes/{code}").json()
    assert teacher_client.get(f"/api/classes/{code}", headers=teacher).json()["refused_joins"] == len(again) + 1
    other, other_teacher, _ = open_class(teacher_client)
    assert phone.post(f"/api/classes/{other}/join", json={"name": "Tom"}).status_code == 201
    assert teacher_client.get(f"/api/classes/{other}", headers=other_teacher).json()["refused_joins"] == 0
