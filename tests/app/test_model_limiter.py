"""Every route that runs a model goes through one limiter: at most model_threads model passes at once per worker,
counted while they run (each pass held a little, so that unbounded ones would overlap)."""

import asyncio
import threading
import time

import httpx
import pytest
from shipped_models import app_on_shipped_models

from app.settings import Settings
from model import GPT

BODIES = [
    ("/api/compare/verdict", {"line_a": "床前明月光", "line_b": "疑是地上霜"}),
    ("/api/compare/verdict", {"line_a": "白日依山尽", "line_b": "山依日白尽", "position": "none", "weights": "random"}),
    ("/api/compare/verdict", {"line_a": "春眠不觉晓", "line_b": "处处闻啼鸟", "position": "rope"}),
    ("/api/lesson/order/verdict", {"line_a": "白日依山尽", "line_b": "山依日白尽"}),
    ("/api/lesson/leak/verdict", {"line_a": "夜来风雨声", "line_b": "花落知多少"}),
    ("/api/lesson/heads/verdict", {"line_a": "床前明月光"}),
    ("/api/lesson/relative/verdict", {"line_a": "明月", "distance": 3}),
    ("/api/ablate", {"line": "白日依山尽", "off": [{"layer": 1, "head": 2}]}),
    ("/api/relative", {"first": "明", "second": "月"}),
    ("/api/compare", {"line_a": "举头望明月", "line_b": "低头思故乡"}),
]


class Running:
    """Counts model passes running at once, and the most seen."""

    def __init__(self):
        self.now = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, trace):
        def counted(model, *args, **kwargs):
            with self.lock:
                self.now += 1
                self.most = max(self.most, self.now)
            try:
                time.sleep(0.005)  # long enough that two unbounded passes overlap
                return trace(model, *args, **kwargs)
            finally:
                with self.lock:
                    self.now -= 1
        return counted


def most_at_once(monkeypatch, model_threads: int, bodies: list) -> tuple[int, list[int]]:
    running = Running()
    monkeypatch.setattr(GPT, "trace", running(GPT.trace))
    app = app_on_shipped_models(Settings(model_threads=model_threads))

    async def burst():
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test", timeout=120) as client:
                return await asyncio.gather(*(client.post(path, json=body) for path, body in bodies * 2))

    statuses = [r.status_code for r in asyncio.run(burst())]
    return running.most, statuses


@pytest.mark.slow  # three apps, each loading the models
@pytest.mark.parametrize("model_threads", [1, 2])
def test_concurrent_verdicts_and_every_model_route_share_the_bound(monkeypatch, model_threads):
    most, statuses = most_at_once(monkeypatch, model_threads, BODIES)
    assert statuses == [200] * len(statuses), statuses
    assert most <= model_threads, f"{most} model passes at once with model_threads={model_threads}"
    assert most >= 1


def test_concurrent_verdicts_alone_run_one_model_pass_at_a_time(monkeypatch):
    """Only the verdict routes, which used to run in Starlette's thread pool beside everything else."""
    most, statuses = most_at_once(monkeypatch, 1, [b for b in BODIES if "verdict" in b[0]])
    assert statuses == [200] * len(statuses), statuses
    assert most == 1
