"""200 mixed requests at once return exactly what the same requests return one by one."""

import asyncio
import itertools

import httpx
import pytest

from app.main import create_app
from app.settings import Settings


def mixed_requests() -> list[dict]:
    lines = [("白日依山尽", "山依日白尽"), ("床前明月光", "疑是地上霜"), ("明月", "月明光"), ("a<b>", "春眠不觉晓")]
    combos = itertools.product(["learned", "rope", "none"], ["random", "trained"], [True, False], lines)
    requests = [{"line_a": a, "line_b": b, "position": p, "weights": w, "causal": c} for p, w, c, (a, b) in combos]
    return [dict(r, seed=i % 3) if r["weights"] == "random" else r for i, r in enumerate(requests)]


async def run(app, bodies, concurrently: bool) -> list[bytes]:
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            async def one(body):
                r = await client.post("/api/compare", json=body)
                assert r.status_code == 200, r.text
                return r.content

            if concurrently:
                return await asyncio.gather(*(one(b) for b in bodies))
            return [await one(b) for b in bodies]


@pytest.mark.slow
def test_200_concurrent_mixed_requests_match_sequential_answers():
    bodies = (mixed_requests() * 5)[:200]
    assert len(bodies) == 200 and len({str(b) for b in bodies}) >= 40
    # No response cache: every request really runs the model, and up to 8 threads share each model object.
    settings = Settings(response_cache_size=0, model_threads=8)
    sequential = asyncio.run(run(create_app(settings), bodies, concurrently=False))
    concurrent = asyncio.run(run(create_app(settings), bodies, concurrently=True))
    assert concurrent == sequential
