"""Class mode's API seen from several addresses through one test client, on either store: the helpers the roster
and door tests share."""

import contextlib

from fastapi.testclient import TestClient
from shipped_models import app_on_shipped_models
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from app.settings import Settings

TEACHER_ADDRESS = "198.51.100.20"
SCHOOL = "203.0.113.50"  # every phone of the class, and the student with a script


class From:
    """The one test client (one event loop: Redis's connections belong to it), as seen from `address`: the
    app trusts X-Forwarded-For here, as uvicorn does from FORWARDED_ALLOW_IPS behind the README's proxy."""

    def __init__(self, client: TestClient, address: str):
        self.client = client
        self.address = address

    def __getattr__(self, method):
        def call(*args, headers=None, **kwargs):
            return getattr(self.client, method)(*args, headers={"X-Forwarded-For": self.address, **(headers or {})},
                                                 **kwargs)
        return call


def store_settings(request, tmp_path) -> Settings:
    """Settings for a fixture parametrized "sqlite" / "redis": a fresh SQLite folder, or the module's Redis
    (the redis_url fixture) emptied; the class limits at their defaults."""
    values = {"data_dir": tmp_path, "join_misses_per_minute": 60, "joins_per_minute": 100}
    if request.param == "redis":
        import redis
        url = request.getfixturevalue("redis_url")
        redis.Redis.from_url(url).flushdb()
        values["redis_url"] = url
    return Settings(**values)


@contextlib.contextmanager
def served_to(settings: Settings):
    """at(address) -> a From on one app built from settings."""
    with TestClient(ProxyHeadersMiddleware(app_on_shipped_models(settings), trusted_hosts="*")) as client:
        yield lambda address: From(client, address)


def open_class(client):
    """(code, the teacher's Authorization header, POST /api/classes' answer)."""
    made = client.post("/api/classes")
    assert made.status_code == 201, made.text
    return made.json()["code"], {"Authorization": f"Bearer {made.json()['teacher_token']}"}, made.json()


def detail(response):
    return response.json()["detail"][0]
