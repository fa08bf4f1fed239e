"""Class mode under load: many students in one class, the teacher moving through the steps.

    python scripts/load_class.py                      # starts `heads-positions serve --workers 2` itself
    python scripts/load_class.py --redis-url redis://127.0.0.1:6379/0
    python scripts/load_class.py --url http://127.0.0.1:8000   # a server that is already running

1. `--students` students join (POST /join: each gets its student token), then open the class's event
   stream (server-sent events, one connection each).
2. The teacher moves `--steps` steps, one every `--pause` seconds. For each move: the time from the
   teacher's request until the last student's stream has the new step.
3. Every student answers the current step once with its token, the answers spread over
   `--answer-window` seconds. Then the teacher's count must equal the answers sent: none lost.
All students come from this one address: a server started here allows that (HP_JOINS_PER_MINUTE); one
given by --url needs HP_JOINS_PER_MINUTE of at least --students.
docs/class-mode.md quotes its output.
"""

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
FIRST_STEP = 1  # steps 2..11 follow; step 11 ("split") asks a question, answered at the end


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", help="a running server; without it, one is started here")
    p.add_argument("--workers", type=int, default=2, help="workers of the started server (default 2)")
    p.add_argument("--redis-url", help="start the server on this Redis instead of SQLite")
    p.add_argument("--students", type=int, default=300)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--pause", type=float, default=1.0, help="seconds between the teacher's moves")
    p.add_argument("--answer-window", type=float, default=4.0, help="seconds over which the answers are sent")
    p.add_argument("--settle", type=float, default=15.0,
                   help="seconds to wait after the started server is ready, until every worker has loaded")
    return p.parse_args()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(args) -> tuple[subprocess.Popen, str]:
    # A free port: with a fixed one, a server someone else left running there answered instead of ours.
    port = free_port()
    env = {**os.environ, "HP_DATA_DIR": tempfile.mkdtemp(prefix="hp-load-"), "HP_MAX_STUDENTS": "1000",
           "HP_JOINS_PER_MINUTE": str(max(100, 2 * args.students))}
    if args.redis_url:
        env["HP_REDIS_URL"] = args.redis_url
    cmd = [str(Path(sys.executable).with_name("heads-positions")), "serve", "--port", str(port),
           "--workers", str(args.workers)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=2):
                # The first worker answers while the others still load the models, which takes the CPU
                # for several seconds: a run that starts then measured Redis answers at 2.5 s, not 4 ms.
                time.sleep(args.settle)
                return proc, url
        except OSError:
            time.sleep(0.3)
    proc.terminate()
    raise SystemExit("the server did not start within 120 s")


class Student:
    def __init__(self, n: int):
        self.name = f"load {n}"
        self.id: str | None = None  # the server's id, from the join: the event stream's credential
        self.token: dict[str, str] = {}  # the Authorization header of its answers, once joined
        self.seen: dict[int, float] = {}  # step -> when this student's stream first had it
        self.ready = asyncio.Event()

    async def join(self, client: httpx.AsyncClient, code: str) -> float:
        """Seconds the join took."""
        started = time.perf_counter()
        joined = (await client.post(f"/api/classes/{code}/join", json={"name": self.name})).raise_for_status().json()
        self.token = {"Authorization": f"Bearer {joined['student_token']}"}
        self.id = joined["student"]
        return time.perf_counter() - started

    async def listen(self, client: httpx.AsyncClient, code: str) -> None:
        async with client.stream("GET", f"/api/classes/{code}/events", params={"student": self.id}) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    data = json.loads(line[6:])
                    self.seen.setdefault(data.get("step"), time.perf_counter())
                    self.ready.set()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(url: str, args) -> int:
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as streams, \
            httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as client:
        made = (await client.post("/api/classes")).raise_for_status().json()
        code, teacher = made["code"], {"Authorization": f"Bearer {made['teacher_token']}"}
        students = [Student(n) for n in range(args.students)]
        t0 = time.perf_counter()
        joins = [1000 * t for t in await asyncio.gather(*(s.join(client, code) for s in students))]
        joined = (await client.get(f"/api/classes/{code}")).json()["joined"]
        print(f"{args.students} students joined in {time.perf_counter() - t0:.2f} s, all at once (server counts "
              f"{joined}); each join: p50 {pct(joins, 0.5):.0f} ms, p99 {pct(joins, 0.99):.0f} ms")
        t0 = time.perf_counter()
        tasks = [asyncio.create_task(s.listen(streams, code)) for s in students]
        await asyncio.wait_for(asyncio.gather(*(s.ready.wait() for s in students)), 60)
        print(f"{args.students} event streams open in {time.perf_counter() - t0:.2f} s")

        last_student = []  # per move: the slowest student's delay
        every = []  # every student's delay for every move
        for step in range(FIRST_STEP + 1, FIRST_STEP + 1 + args.steps):
            sent = time.perf_counter()
            (await client.post(f"/api/classes/{code}/step", json={"step": step}, headers=teacher)).raise_for_status()
            deadline = sent + 10
            while not all(step in s.seen for s in students) and time.perf_counter() < deadline:
                await asyncio.sleep(0.005)
            delays = [s.seen.get(step, float("inf")) - sent for s in students]
            last_student.append(max(delays))
            every.extend(delays)
            await asyncio.sleep(args.pause)
        missing = sum(d == float("inf") for d in every)
        ms = [1000 * d for d in last_student]
        print(f"teacher moved {args.steps} steps; until the last of {args.students} students had the step: "
              f"p50 {pct(ms, 0.5):.0f} ms, p99 {pct(ms, 0.99):.0f} ms, max {max(ms):.0f} ms")
        each = [1000 * d for d in every if d != float("inf")]
        print(f"  each student's delay ({len(each)} deliveries): p50 {pct(each, 0.5):.0f} ms, "
              f"p99 {pct(each, 0.99):.0f} ms; missed {missing}")

        step = FIRST_STEP + args.steps
        choices = (await client.get("/api/lesson")).json()["steps"][step - 1]["choices"]
        picks = [random.choice(choices) for _ in students]

        async def answer(student: Student, choice: str, delay: float) -> tuple[int, float]:
            await asyncio.sleep(delay)
            sent = time.perf_counter()
            response = await client.post(f"/api/classes/{code}/answers", json={"step": step, "choice": choice},
                                         headers=student.token)
            return response.status_code, 1000 * (time.perf_counter() - sent)

        started = time.perf_counter()
        results = await asyncio.gather(*(answer(s, c, random.uniform(0, args.answer_window))
                                         for s, c in zip(students, picks)))
        took = time.perf_counter() - started
        codes = [status for status, _ in results]
        answer_ms = [ms for _, ms in results]
        view = (await client.get(f"/api/classes/{code}", headers=teacher)).json()
        accepted = codes.count(200)
        counted = sum(view["counts"].values())
        expected = {c: picks.count(c) for c in choices}
        print(f"{len(codes)} answers sent in {took:.2f} s: {accepted} accepted; the teacher counts {counted} "
              f"(answered {view['answered']}); spread {'matches' if view['counts'] == expected else 'DIFFERS'}; "
              f"each answer: p50 {pct(answer_ms, 0.5):.0f} ms, p99 {pct(answer_ms, 0.99):.0f} ms")
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await client.post(f"/api/classes/{code}/end", headers=teacher)
        ok = (missing == 0 and joined == len(students) and accepted == counted == len(students)
              and view["counts"] == expected)
        print("OK" if ok else "FAILED")
        return 0 if ok else 1


def main() -> int:
    args = parse_args()
    proc = None
    url = args.url
    if url is None:
        proc, url = start_server(args)
    try:
        return asyncio.run(run(url, args))
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=20)


if __name__ == "__main__":
    sys.exit(main())
