"""A worker stops even when its class store will not close (a Redis client hung once closing under a
watcher, and the test client's exit waited for it forever)."""

import asyncio
import logging
import time

from fastapi.testclient import TestClient
from shipped_models import app_on_shipped_models

import app.main as main
from app.settings import Settings


def test_a_store_that_never_closes_does_not_keep_the_worker_from_stopping(monkeypatch, tmp_path, caplog):
    opened = main.open_store

    def hanging_store(settings):
        store = opened(settings)

        async def never():
            await asyncio.Event().wait()

        store.close = never
        return store

    monkeypatch.setattr(main, "open_store", hanging_store)
    monkeypatch.setattr(main, "SHUTDOWN_SECONDS", 0.2)
    with caplog.at_level(logging.WARNING, logger="uvicorn.error"):
        client = TestClient(app_on_shipped_models(Settings(data_dir=tmp_path)))
        client.__enter__()
        assert client.get("/healthz").status_code == 200
        start = time.monotonic()
        client.__exit__(None, None, None)
        assert time.monotonic() - start < 5
    assert "did not close within 0.2 s" in caplog.text
