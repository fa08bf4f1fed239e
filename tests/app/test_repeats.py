"""A request sent again as the same bytes is answered from the cache without FastAPI parsing it
(app.repeats). Every answer must be the one an app without any cache gives, byte for byte."""

import asyncio

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.repeats import MAX_SENT_BYTES, RepeatedRequestMiddleware
from app.settings import Settings

JSON = {"content-type": "application/json"}
ROUTES = {  # path -> a body for it, by seed
    "/api/compare": '{"line_a": "白日依山尽", "line_b": "山依日白尽", "weights": "random", "seed": %d}',
    "/api/relative": '{"first": "白", "second": "日", "weights": "random", "seed": %d}',
}


class Served:
    """An app of its own, and the requests that reached a route (the cache calls they made)."""

    def __init__(self, settings: Settings, repeats: bool = True):
        app = create_app(settings)
        if not repeats:
            app.user_middleware = [m for m in app.user_middleware if m.cls is not RepeatedRequestMiddleware]
        self.client = TestClient(app)
        self.client.__enter__()
        self.routed: list[str] = []
        cache = self.client.app.state.cache
        for method in ("answer", "answer_batched"):
            original = getattr(cache, method)

            async def counting(*args, _original=original, **kwargs):
                self.routed.append(args[0])
                return await _original(*args, **kwargs)

            setattr(cache, method, counting)

    def post(self, path: str, body: bytes, **headers):
        return self.client.post(path, content=body, headers={**JSON, **headers})


@pytest.fixture(scope="module")
def served():
    s = Served(Settings())
    yield s
    s.client.__exit__(None, None, None)


@pytest.fixture(scope="module")
def uncached():
    """The reference: no response cache and no app.repeats, so every request goes through FastAPI and
    the model, and its body reaches FastAPI as the client sent it."""
    s = Served(Settings(response_cache_size=0), repeats=False)
    yield s
    s.client.__exit__(None, None, None)


def same_response(got, want) -> bool:
    def seen(r):
        return r.status_code, r.content, [(k, v) for k, v in r.headers.multi_items() if k != "x-request-id"]
    return seen(got) == seen(want)


@pytest.mark.parametrize("path", ROUTES)
def test_the_same_bytes_again_are_answered_without_the_route(served, uncached, path):
    body = (ROUTES[path] % 11).encode()
    before = len(served.routed)
    for encoding in ("identity", "gzip", "identity", "gzip, deflate"):
        got = served.post(path, body, **{"accept-encoding": encoding})
        assert got.status_code == 200
        assert same_response(got, uncached.post(path, body, **{"accept-encoding": encoding}))
    assert len(served.routed) - before == 1  # the first; the three repeats came from the cache


@pytest.mark.parametrize("path", ROUTES)
def test_other_bytes_for_the_same_request_go_through_the_route_once(served, uncached, path):
    body = (ROUTES[path] % 12).encode()
    spaced = body.replace(b", ", b",   ")
    before = len(served.routed)
    answers = [served.post(path, b) for b in (body, spaced, body, spaced)]
    assert len(served.routed) - before == 2
    assert all(same_response(a, uncached.post(path, body)) for a in answers)


def test_the_same_body_with_another_content_type_is_not_taken_for_it(served, uncached):
    body = (ROUTES["/api/compare"] % 13).encode()
    assert served.post("/api/compare", body).status_code == 200
    for content_type in ("text/plain", "application/json; charset=utf-8", "application/vnd.api+json"):
        before = len(served.routed)
        got = served.post("/api/compare", body, **{"content-type": content_type})
        assert same_response(got, uncached.post("/api/compare", body, **{"content-type": content_type}))
        assert len(served.routed) - before == (got.status_code == 200)  # a 422 never reaches the cache
    no_type = served.client.post("/api/compare", content=body)
    assert same_response(no_type, uncached.client.post("/api/compare", content=body))


def test_the_same_bytes_to_another_route_or_with_another_method_are_not_taken_for_them(served, uncached):
    for body in (b"{}", (ROUTES["/api/compare"] % 19).encode()):  # {} is a valid request to both routes
        for path in ROUTES:
            assert same_response(served.post(path, body), uncached.post(path, body))
        for method in ("GET", "PUT"):
            got = served.client.request(method, "/api/compare", content=body, headers=JSON)
            assert got.status_code == 405
            assert same_response(got, uncached.client.request(method, "/api/compare", content=body, headers=JSON))


def test_with_two_content_types_the_first_decides_as_in_fastapi(served, uncached):
    body = (ROUTES["/api/compare"] % 20).encode()
    assert served.post("/api/compare", body).status_code == 200
    for types in (["text/plain", "application/json"], ["application/json", "text/plain"]):
        headers = [("content-type", t) for t in types]
        got = served.client.post("/api/compare", content=body, headers=headers)
        assert got.status_code == (200 if types[0] == "application/json" else 422)
        assert same_response(got, uncached.client.post("/api/compare", content=body, headers=headers))


def test_what_is_remembered_is_bounded_in_count_and_length():
    small = Served(Settings(response_cache_size=4))
    try:
        body = (ROUTES["/api/compare"] % 21).encode()
        long_type = "application/json; p=" + "a" * MAX_SENT_BYTES  # FastAPI reads it as JSON
        for _ in range(2):
            assert small.post("/api/compare", body, **{"content-type": long_type}).status_code == 200
        assert len(small.routed) == 2 and not small.client.app.state.cache._sent
        for variant in range(10):  # ten ways of sending one request
            assert small.post("/api/compare", body, **{"content-type": f"application/json; v={variant}"}).is_success
        assert len(small.client.app.state.cache._sent) == 4
    finally:
        small.client.__exit__(None, None, None)


def test_a_refused_body_is_refused_every_time(served, uncached):
    for body in (b'{"line_a": ""}', b'{"seed": "5"}', b'{"line_a": "x"', b"[]", b""):
        answers = [served.post("/api/compare", body) for _ in range(3)]
        assert answers[0].status_code in (400, 422)
        assert all(same_response(a, uncached.post("/api/compare", body)) for a in answers)


def test_a_long_or_chunked_body_always_goes_through_the_route(served, uncached):
    body = (ROUTES["/api/compare"] % 14).encode()
    long = body + b" " * MAX_SENT_BYTES
    before = len(served.routed)
    for _ in range(2):
        assert same_response(served.post("/api/compare", long), uncached.post("/api/compare", long))
        chunked = served.client.post("/api/compare", content=iter([body[:20], body[20:]]), headers=JSON)
        assert chunked.request.headers.get("transfer-encoding") == "chunked"
        assert same_response(chunked, uncached.post("/api/compare", body))
    assert len(served.routed) - before == 4


def test_an_evicted_answer_is_computed_again():
    one = Served(Settings(response_cache_size=1))
    try:
        first, second = ((ROUTES["/api/compare"] % seed).encode() for seed in (15, 16))
        answers = [one.post("/api/compare", body).content for body in (first, first, second, first)]
        assert len(one.routed) == 3  # the second request only was a repeat of a kept answer
        assert answers[0] == answers[1] == answers[3] != answers[2]
    finally:
        one.client.__exit__(None, None, None)


def test_bytes_remembered_for_an_answer_no_longer_kept_go_through_the_route(uncached):
    own = Served(Settings())
    try:
        body = (ROUTES["/api/compare"] % 22).encode()
        assert own.post("/api/compare", body).status_code == 200
        cache = own.client.app.state.cache
        (key,) = cache._sent.values()
        cache._bytes -= len(cache._items.pop(key).json)  # evicted, while its request's bytes are remembered
        assert same_response(own.post("/api/compare", body), uncached.post("/api/compare", body))
        assert len(own.routed) == 2
    finally:
        own.client.__exit__(None, None, None)


def call(served: Served, body: bytes, content_length: bytes, messages: list[dict]) -> list[dict]:
    """The app called straight through ASGI, with headers and body messages no HTTP client sends."""
    sent = []

    async def run():
        waiting = iter(messages)

        async def receive():
            return next(waiting, {"type": "http.disconnect"})

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
                 "scheme": "http", "path": "/api/compare", "raw_path": b"/api/compare", "query_string": b"",
                 "root_path": "", "client": ("127.0.0.1", 1), "server": ("testserver", 80),
                 "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"),
                             (b"content-length", content_length)]}
        await served.client.app(scope, receive, send)

    served.client.portal.call(run)
    return sent


def test_a_body_in_pieces_reaches_the_route_whole(served, uncached):
    body = (ROUTES["/api/compare"] % 24).encode()
    pieces = [{"type": "http.request", "body": body[:30], "more_body": True},
              {"type": "http.request", "body": body[30:], "more_body": False}]
    length = str(len(body)).encode()
    before = len(served.routed)
    got, want = call(served, body, length, pieces), call(uncached, body, length, pieces)
    assert got[0]["status"] == 200 and len(served.routed) - before == 1
    assert got[1]["body"] == want[1]["body"]
    again = call(served, body, length, pieces)  # and now it is a repeat
    assert again[1]["body"] == want[1]["body"] and len(served.routed) - before == 1


def test_a_body_cut_short_is_not_answered_as_the_remembered_request(served, uncached):
    body = (ROUTES["/api/compare"] % 17).encode()
    assert served.post("/api/compare", body).status_code == 200
    # A client declared a longer body, sent the bytes of a remembered one and went away. What arrived is
    # not the request it meant to send: it gets what FastAPI answers a body cut short, not the kept answer.
    cut = [{"type": "http.request", "body": body, "more_body": True}]
    got = call(served, body, str(len(body) + 10).encode(), cut)
    want = call(uncached, body, str(len(body) + 10).encode(), cut)
    assert got[0]["status"] == want[0]["status"] != 200 and got[1]["body"] == want[1]["body"]


def test_odd_content_lengths_are_passed_on_not_a_crash(served, uncached):
    """uvicorn passes on a Content-Length with thousands of leading zeros; another server might pass on a
    byte that Starlette reads as a digit other than 0-9 (latin-1 0xB2 is "²": isdigit() yes, int() no)."""
    body = (ROUTES["/api/compare"] % 23).encode()
    assert served.post("/api/compare", body).status_code == 200
    whole = [{"type": "http.request", "body": body, "more_body": False}]
    for declared in (b"0" * 5000 + str(len(body)).encode(), b"\xb2", b"\xb9"):
        got, want = call(served, body, declared, whole), call(uncached, body, declared, whole)
        assert got[0]["status"] == want[0]["status"] != 500
        assert got[1]["body"] == want[1]["body"]


def test_repeats_count_against_the_rate_limit():
    limited = Served(Settings(rate_limit_per_minute=2))
    try:
        body = (ROUTES["/api/compare"] % 18).encode()
        assert [limited.post("/api/compare", body).status_code for _ in range(3)] == [200, 200, 429]
    finally:
        limited.client.__exit__(None, None, None)


def test_the_cache_remembers_as_many_requests_as_answers_least_recently_used_out_first():
    from app.cache import ResponseCache
    from app.schemas import CompareRequest

    cache = ResponseCache(size=2)

    async def ask(seed):
        sent = ("/api/compare", b"application/json", b"%d" % seed)
        await cache.answer("compare", CompareRequest(seed=seed), lambda: {"seed": seed}, sent)
        return sent

    sent = [asyncio.run(ask(seed)) for seed in range(4)]
    assert len(cache._sent) == 2
    assert [cache.repeated(s) is not None for s in sent] == [False, False, True, True]
    # A repeat counts as a use: after repeating seed 2, seed 4 pushes out seed 3.
    assert cache.repeated(sent[2]) is not None
    asyncio.run(ask(4))
    assert [cache.repeated(s) is not None for s in sent[2:]] == [True, False]


def test_requests_that_waited_for_the_same_answer_are_each_remembered():
    from app.cache import ResponseCache
    from app.schemas import CompareRequest

    cache = ResponseCache(size=8)
    sent = [("/api/compare", b"application/json", b'{"seed": 5}'), ("/api/compare", b"application/json", b'{"seed":5}')]

    async def together():
        # The first computes; the second, sent as other bytes, waits for its answer.
        return await asyncio.gather(*(cache.answer("compare", CompareRequest(seed=5), lambda: {"seed": 5}, s)
                                      for s in sent))

    first, second = asyncio.run(together())
    assert first is second and all(cache.repeated(s) is first for s in sent)
