"""Limits, headers and failures: nothing a client sees leaks the server's insides."""

import logging

from fastapi.testclient import TestClient
from shipped_models import app_on_shipped_models

from app.settings import Settings


def test_rate_limit_is_off_by_default_and_per_address_when_set(client):
    for _ in range(5):
        assert client.get("/api/options").status_code == 200
    with TestClient(app_on_shipped_models(Settings(rate_limit_per_minute=2))) as limited:
        assert [limited.get("/api/options").status_code for _ in range(3)] == [200, 200, 429]
        r = limited.get("/api/options")
        assert "rate limit" in r.json()["detail"] and r.headers["x-request-id"] == r.json()["request_id"]
        assert limited.get("/healthz").status_code == 200  # only /api/ is limited


def test_an_internal_error_gives_a_request_id_and_no_trace(monkeypatch, caplog):
    import app.main

    def broken(reqs, registry):
        raise RuntimeError("secret detail from deep inside")

    monkeypatch.setattr(app.main, "comparisons", broken)  # what the lifespan's batcher calls
    with TestClient(app_on_shipped_models(), raise_server_exceptions=False) as c, caplog.at_level(logging.ERROR):
        r = c.post("/api/compare", json={"seed": 12345})
    assert r.status_code == 500
    body = r.json()
    assert body == {"detail": "internal error", "request_id": r.headers["x-request-id"]}
    assert "secret" not in r.text and "Traceback" not in r.text
    assert any(body["request_id"] in rec.getMessage() for rec in caplog.records)


def test_chunked_body_over_the_limit_is_cut_off():
    with TestClient(app_on_shipped_models(Settings(max_body_bytes=1000))) as c:
        def chunks():
            for _ in range(10):
                yield b" " * 500

        r = c.post("/api/compare", content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413 and "1000" in r.json()["detail"]


def test_page_and_static_files_carry_the_security_headers(client):
    for path in ("/", "/static/css/app.css", "/openapi.json"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert r.headers["x-content-type-options"] == "nosniff"
        assert "script-src 'self'" in r.headers["content-security-policy"]


def test_a_content_length_of_thousands_of_digits_is_weighed_not_a_crash():
    """What app.server.middleware.declared_length reads only the significant digits for."""
    import asyncio

    from app.server.middleware import GuardMiddleware

    async def answer(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def status(declared: bytes) -> int:
        sent = []

        async def receive():
            return {"type": "http.request", "body": b"x" * 33, "more_body": False}

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": "/api/compare", "headers": [(b"content-length", declared)]}
        await GuardMiddleware(answer, max_body_bytes=1000)(scope, receive, send)
        return sent[0]["status"]

    for declared, want in ((b"0" * 5000 + b"33", 200), (b"0" * 5000 + b"1001", 413), (b"9" * 5000, 413),
                           (b"1000", 200), (b"1001", 413)):
        assert asyncio.run(status(declared)) == want, declared[-8:]


def test_a_wrong_method_is_told_every_method_the_path_answers(client):
    """GET and DELETE /api/classes/{code} are two routes: the 405's Allow names both (RFC 9110), not the first."""
    answer = client.request("OPTIONS", "/api/classes/ABCDEF")
    assert answer.status_code == 405
    assert answer.headers["allow"] == "DELETE, GET"
    assert client.request("PUT", "/api/compare").headers["allow"] == "POST"
