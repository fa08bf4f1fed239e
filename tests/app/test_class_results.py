"""Results the teacher keeps (issues 30 and 38): GET /results, /results.csv and /answers.csv equal the answers sent,
per step and round (and per student), with the choices the server's verdict accepted at the reveal, headers in the
teacher's language and no cell a spreadsheet would compute; readable after the end and after a restart, for
HP_RESULTS_DAYS, or until the teacher deletes them; a class that vanishes without an end is "lost", not "ended"; on
both stores."""

import codecs
import csv
import io
import json
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from class_servers import redis_server, served, sse_data
from fastapi.testclient import TestClient
from shipped_models import app_on_shipped_models

from app.domain.lesson_steps import STEPS
from app.services.class_results import ANSWER_COLUMNS, RESULT_COLUMNS, safe_cell
from app.settings import Settings

LESSON = Path(__file__).resolve().parents[2] / "static" / "i18n" / "lesson"
NAMES = ["美玲", "さくら", "Zoé", "Sam"]
# (step, round) -> the choice of each student (None: no answer); Sam is removed before the end.
VOTES = {(4, 1): ["same", "same", "different", "same"], (4, 2): ["different", "different", None, "same"],
         (5, 1): ["same", None, "different", "different"]}
# Sent before the choice in VOTES, in the same round: the later one is the answer kept.
CHANGED = {(5, 1): ["different", None, None, None]}
REMOVED = 3
# The steps the class voted on. Also visited: 1 and 6, passed without a vote or a reveal (the teacher's summary
# leaves them out, so the results do too), and the self-test (SELFTEST), which asks no class question.
VOTED = (4, 5)
SELFTEST = next(n for n, s in enumerate(STEPS, 1) if s["kind"] == "selftest")
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
    with TestClient(app_on_shipped_models(Settings(**settings))) as client:
        client.redis = request.getfixturevalue("redis") if request.param == "redis" else None
        yield client


def run_class(client) -> tuple[str, dict, list[dict], dict]:
    """A class as VOTES says, revealed on both steps and ended: (code, teacher header, seats, accepted by step).
    Each seat gets "sent": {(step, round): (choice, before, after)}, the wall-clock time around its answer kept."""
    made = client.post("/api/classes").json()
    code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
    seats = [client.post(f"/api/classes/{code}/join", json={"name": name}).json() | {"sent": {}} for name in NAMES]
    accepted = {}
    for step, setup in ((4, {}), (5, SETUP_5)):
        client.post(f"/api/classes/{code}/step", json={"step": step}, headers=teacher).raise_for_status()
        for round_ in (1, 2):
            if (step, round_) not in VOTES:
                continue
            if round_ == 2:
                client.post(f"/api/classes/{code}/again", headers=teacher).raise_for_status()
            for sent in (CHANGED.get((step, round_)), VOTES[step, round_]):
                for seat, choice in zip(seats, sent or []):
                    if choice is not None:
                        before = time.time()
                        client.post(f"/api/classes/{code}/answers", json={"step": step, "choice": choice},
                                    headers={"Authorization": f"Bearer {seat['student_token']}"}).raise_for_status()
                        seat["sent"][step, round_] = (choice, before, time.time())
        client.post(f"/api/classes/{code}/reveal", json=setup, headers=teacher).raise_for_status()
        # What the lesson's own verdict route says for that setup: the server's decision, computed apart.
        accepted[step] = client.post(f"/api/lesson/{STEPS[step - 1]['id']}/verdict", json=setup).json()["accepted"]
    client.post(f"/api/classes/{code}/remove", json={"student": seats[REMOVED]["student"]},
                headers=teacher).raise_for_status()
    for step in (6, SELFTEST):  # 6 is visited, never answered nor revealed; the self-test asks no class question
        client.post(f"/api/classes/{code}/step", json={"step": step}, headers=teacher).raise_for_status()
    return code, teacher, seats, accepted


def texts_of(lang: str) -> dict:
    return json.loads((LESSON / f"{lang}.json").read_text(encoding="utf-8"))


def expected_steps(seats: list[dict], accepted: dict, lang: str) -> list[dict]:
    """The results built from VOTES alone, the removed student left out of every count."""
    texts = texts_of(lang)
    steps = []
    for step in VOTED:
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


def expected_rows(steps: list[dict], lang: str) -> list[list[str]]:
    texts = texts_of(lang)
    rows = []
    for step in steps:
        for round_ in step["rounds"]:
            for choice in step["choices"]:
                rows.append([str(step["step"]), step["id"], step["question"], str(round_["round"]), choice["id"],
                             choice["text"],
                             {True: texts["class_csv_yes"], False: texts["class_csv_no"], None: ""}[choice["right"]],
                             str(round_["counts"][choice["id"]]),
                             str(round_["answered"]), str(len(NAMES) - 1),
                             "; ".join(seat["name"] for seat in round_["not_answered"])])
    return rows


def expected_answers(seats: list[dict], accepted: dict) -> list[tuple]:
    """(student, step, round, choice, right) per student but the removed, step voted on and round, from the votes
    sent: the last of each round."""
    rows = []
    for n, seat in enumerate(seats):
        if n == REMOVED:
            continue
        for step in VOTED:
            for round_ in (1, 2) if (step, 2) in VOTES else (1,):
                choice = VOTES[step, round_][n]
                assert choice == seat["sent"].get((step, round_), (None,))[0]  # what run_class sent last
                rows.append((seat["student"], step, round_, choice,
                             None if choice is None else choice in accepted[step]))
    return rows


def read_csv(response) -> list[list[str]]:
    """The file as a spreadsheet gets it: UTF-8 with a byte-order mark, read by Python's csv module."""
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv"), response.text
    assert response.content.startswith(codecs.BOM_UTF8)  # a spreadsheet reads it as UTF-8
    return list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"), newline="")))


def check_results(get, code: str, teacher: dict, seats: list[dict], accepted: dict) -> None:
    by_student = {seat["student"]: seat for seat in seats}
    for lang in ("zh", "ja", "fr", "en"):
        texts = texts_of(lang)
        got = get(f"/api/classes/{code}/results", params={"lang": lang}, headers=teacher)
        assert got.status_code == 200, got.text
        body = got.json()
        assert (body["ended"], body["students"], body["lang"]) == (True, len(NAMES) - 1, lang)
        assert body["steps"] == expected_steps(seats, accepted, lang)
        answers = [(row["student"], row["step"], row["round"], row["choice"], row["right"]) for row in body["answers"]]
        assert answers == expected_answers(seats, accepted)
        for row in body["answers"]:
            assert row["name"] == by_student[row["student"]]["name"]
            if row["choice"] is None:
                assert row["answered_at"] is None
            else:  # sent between these two moments
                _, before, after = by_student[row["student"]]["sent"][row["step"], row["round"]]
                assert before - 0.001 <= row["answered_at"] <= after + 0.001
        rows = read_csv(get(f"/api/classes/{code}/results.csv", params={"lang": lang}, headers=teacher))
        assert rows[0] == [texts[f"class_csv_{column}"] for column in RESULT_COLUMNS]
        assert rows[1:] == expected_rows(expected_steps(seats, accepted, lang), lang)
        rows = read_csv(get(f"/api/classes/{code}/answers.csv", params={"lang": lang}, headers=teacher))
        assert rows[0] == [texts[f"class_csv_{column}"] for column in ANSWER_COLUMNS]
        steps = {step["step"]: step for step in expected_steps(seats, accepted, lang)}
        expected = []
        for row, (student, step, round_, choice, right) in zip(body["answers"], expected_answers(seats, accepted)):
            at = row["answered_at"]
            expected.append([str(step), steps[step]["id"], steps[step]["question"], str(round_),
                             by_student[student]["name"], choice or "",
                             texts[f"{steps[step]['id']}_choice_{choice}"] if choice else "",
                             {True: texts["class_csv_yes"], False: texts["class_csv_no"], None: ""}[right],
                             datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S") if at else ""])
        assert rows[1:] == expected
        # Per student, the rows with a choice are exactly the votes sent (the last of each round).
        names = {seat["name"]: seat for n, seat in enumerate(seats) if n != REMOVED}
        assert {name for _, _, _, _, name, *_ in rows[1:]} == set(names)
        for name, seat in names.items():
            mine = {(int(r[0]), int(r[3])): r[5] for r in rows[1:] if r[4] == name and r[5]}
            assert mine == {key: choice for key, (choice, _, _) in seat["sent"].items()}
    for headers in ({}, {"Authorization": f"Bearer {seats[0]['student_token']}"}):
        for path in ("results", "results.csv", "answers.csv"):
            refused = get(f"/api/classes/{code}/{path}", headers=headers)
            assert refused.status_code == 403, refused.text


def test_results_equal_the_answers_sent_after_the_end(client):
    code, teacher, seats, accepted = run_class(client)
    assert accepted[4] and accepted[5]  # both steps had a verdict to keep
    running = client.get(f"/api/classes/{code}/results", headers=teacher).json()
    assert running["ended"] is False and running["ended_at"] is None
    with client.stream("GET", f"/api/classes/{code}/events", params={"student": seats[0]["student"]}) as stream:
        lines = stream.iter_lines()
        assert sse_data(lines)["step"] == SELFTEST
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


FORMULAS = ["=1+2", '=HYPERLINK("http://x.y")', "+SUM(1)", "-3", "@cmd", "Ann"]  # names: 24 characters at most


def test_no_csv_cell_is_a_formula_to_a_spreadsheet(client):
    made = client.post("/api/classes").json()
    code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
    seats = [client.post(f"/api/classes/{code}/join", json={"name": name}).json() for name in FORMULAS]
    assert [seat["name"] for seat in seats] == FORMULAS
    client.post(f"/api/classes/{code}/step", json={"step": 4}, headers=teacher).raise_for_status()
    for seat in seats[3:]:  # the first three do not answer: their names fill results.csv's not_answered cell
        client.post(f"/api/classes/{code}/answers", json={"step": 4, "choice": "same"},
                    headers={"Authorization": f"Bearer {seat['student_token']}"}).raise_for_status()
    client.post(f"/api/classes/{code}/end", headers=teacher).raise_for_status()
    body = client.get(f"/api/classes/{code}/results", headers=teacher).json()
    assert [row["name"] for row in body["answers"]] == FORMULAS  # JSON is no spreadsheet: the names as given
    for lang in ("en", "fr"):
        results = read_csv(client.get(f"/api/classes/{code}/results.csv", params={"lang": lang}, headers=teacher))
        answers = read_csv(client.get(f"/api/classes/{code}/answers.csv", params={"lang": lang}, headers=teacher))
        for cell in (cell for row in results + answers for cell in row):
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
        assert [row[4] for row in answers[1:]] == ["'=1+2", '\'=HYPERLINK("http://x.y")', "'+SUM(1)", "'-3",
                                                   "'@cmd", "Ann"]
        assert {row[10] for row in results[1:]} == {"'" + "; ".join(FORMULAS[:3])}


def test_a_cell_starting_with_a_tab_or_a_return_is_text_too():
    # Names cannot hold them (422 name_control_character), but a cell may: each is quoted as OWASP says.
    assert [safe_cell(v) for v in ("\tx", "\rx", "=x", "a=b", "", None, 3, -1)] == [
        "'\tx", "'\rx", "'=x", "a=b", "", "", "3", "'-1"]


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
