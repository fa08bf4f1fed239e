"""A class typing at once, for scripts/bench.py: N students each type a line into line B at KEYS_PER_SECOND,
and each sends as its page does. Loopback only, bounded in students and keystrokes.

The pages' rules (static/js/shared/burst.js, which the explorer's scheduleCompare and the lesson's onSetupChange use):
- a keystroke when the page is idle is sent at once; one that comes while it is busy waits until no key has come
  for BURST_MS, and then sends the line as it is;
- the latest request wins: sending aborts the request still out (HTTP/1.1: its connection is closed);
- the explorer is busy while /api/compare is out; its answer carries the verdict when float32 decides it (lines
  that differ); otherwise, once the answer is in, it asks /api/compare/verdict on the same body
  (static/js/shared/api.js), and a newer comparison does not abort that verdict;
- the lesson is busy until both answers are in: /api/compare, which names the step (lesson_step) and carries its
  verdict when float32 decides it (lines that are not a reordering), then, only when it did not,
  /api/lesson/{step}/verdict; a newer request aborts both.
Like Chromium, each student keeps its connections alive and sends on its most recently used idle one.

A keystroke's time runs from the key until both answers of a request that holds it (that one or a later one)
are in, the verdict of the answer on screen."""

import asyncio
import gzip
import json
import random
import re
import statistics
import time

KEYS_PER_SECOND = 4
LINE_CHARS = 7
BURST_MS = 50
LINE_A = "白日依山尽"
CHARS = "月光明春风花雨夜江水云天秋星石草木竹松溪山河海流千里目更上层楼床前疑是地霜举头望低思故乡"
# The explorer's default setup (trained pos_emb) and the lesson's step 1 as the pages send them.
PAGES = {
    "explorer": {"compare": {"position": "learned", "weights": "trained"}, "verdict": "/api/compare/verdict"},
    "lesson": {"compare": {"position": "none", "weights": "random", "n_head": 4, "n_layer": 1, "lesson_step": "order"},
               "verdict": "/api/lesson/order/verdict"},
}


def verdict_body(page: str, compare: dict) -> dict:
    """The verdict's body: the explorer's is the comparison's; the lesson's is api.js's verdictBody."""
    if page == "explorer":
        return compare
    body = {"line_a": compare["line_a"], "line_b": compare["line_b"], "causal": compare.get("causal", True)}
    return body | {k: v for k, v in compare.items() if k in ("position", "weights", "n_layer", "n_head")}


def carried(page: str, answer: bytes) -> bool:
    """Whether the comparison's answer carries the verdict the page reads: the explorer's, or the lesson step's."""
    return json.loads(answer)["verdict" if page == "explorer" else "step_verdict"] is not None


class Connections:
    """One student's keep-alive connections, the most recently used idle one first (as Chromium picks)."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, path: str, body: dict) -> tuple[int, bytes]:
        """The status and the body, unzipped."""
        data = json.dumps(body, ensure_ascii=False).encode()
        request = (f"POST {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
                   f"Accept-Encoding: gzip\r\nContent-Length: {len(data)}\r\n\r\n").encode() + data
        while self.idle:
            conn = self.idle.pop()
            try:
                return await self._send(conn, request)
            except (asyncio.IncompleteReadError, ConnectionError):
                continue  # the server closed it while idle (uvicorn's keep-alive timeout): as a browser, try another
        return await self._send(await asyncio.open_connection(self.host, self.port), request)

    async def _send(self, conn, request: bytes) -> tuple[int, bytes]:
        reader, writer = conn
        try:
            writer.write(request)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            body = await reader.readexactly(int(re.search(rb"(?i)content-length: *(\d+)", head).group(1)))
        except BaseException:  # aborted (a newer request) or failed: the connection goes
            writer.close()
            raise
        self.idle.append(conn)
        zipped = re.search(rb"(?i)content-encoding: *gzip", head)
        return int(head[9:12]), gzip.decompress(body) if zipped else body

    def close(self) -> None:
        for _, writer in self.idle:
            writer.close()


class Student:
    def __init__(self, page: str, connections: Connections, rng: random.Random, keystrokes: list[float]):
        self.page, self.http, self.rng = page, connections, rng
        self.latencies = keystrokes  # shared: one entry per keystroke, in ms
        self.line_b = ""
        self.keys: list[float] = []  # when each keystroke came
        self.pending: list[int] = []  # keystrokes whose answers are not in yet
        self.timer: asyncio.TimerHandle | None = None
        self.run: asyncio.Task | None = None  # the request out (explorer: its comparison only)
        self.shown = -1  # the keystroke whose comparison is on screen
        self.sent = 0
        self.errors = 0
        self.verdicts: set[asyncio.Task] = set()  # the explorer's verdicts out, which no newer request aborts

    def busy(self) -> bool:
        return self.run is not None and not self.run.done()

    def key(self) -> None:
        self.line_b += self.rng.choice(CHARS)
        self.keys.append(time.perf_counter())
        self.pending.append(len(self.keys) - 1)
        idle = self.timer is None and not self.busy()
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if idle:
            self.send()
        else:
            self.timer = asyncio.get_running_loop().call_later(BURST_MS / 1000, self.send)

    def send(self) -> None:
        self.timer = None
        if self.busy():
            self.run.cancel()  # latest request wins
        self.sent += 1
        self.run = asyncio.create_task(self.ask(len(self.keys) - 1, dict(
            line_a=LINE_A, line_b=self.line_b, **PAGES[self.page]["compare"])))

    async def ask(self, k: int, body: dict) -> None:
        status, answer = await self.http.post("/api/compare", body)
        self.errors += status != 200
        if status == 200 and carried(self.page, answer):
            self.shown = k
            self.answered(k)  # the answer carried its verdict: nothing more to ask
            return
        if self.page == "explorer":
            self.shown = k
            task = asyncio.get_running_loop().create_task(self.judge(k, body))
            self.verdicts.add(task)
            task.add_done_callback(self.verdicts.discard)
        else:
            await self.judge(k, body)

    async def judge(self, k: int, body: dict) -> None:
        status, _ = await self.http.post(PAGES[self.page]["verdict"], verdict_body(self.page, body))
        self.errors += status != 200
        if self.page == "explorer" and self.shown != k:
            return  # the page drops the verdict of an answer no longer on screen
        self.answered(k)

    def answered(self, k: int) -> None:
        """Keystroke k's answers are all in: it and every earlier one still waiting are on screen."""
        now = time.perf_counter()
        for j in [j for j in self.pending if j <= k]:
            self.latencies.append((now - self.keys[j]) * 1000)
            self.pending.remove(j)

    async def type_line(self, start: float) -> None:
        self.line_b = ""
        await asyncio.sleep(start)
        for _ in range(LINE_CHARS):
            self.key()
            await asyncio.sleep(1 / KEYS_PER_SECOND)
        deadline = time.perf_counter() + 30
        while (self.pending or self.verdicts) and time.perf_counter() < deadline:
            await asyncio.sleep(0.01)


async def class_typing(host: str, port: int, page: str, students: int, rounds: int, seed: int = 0) -> dict:
    """Every student types LINE_CHARS characters, starting within the same key interval; `rounds` times, with a
    second of quiet between. p50 and p99 of every keystroke's time to both answers, in ms."""
    rng = random.Random(seed)
    latencies: list[float] = []
    pool = [Student(page, Connections(host, port), random.Random(rng.random()), latencies) for _ in range(students)]
    for _ in range(rounds):
        await asyncio.gather(*(s.type_line(rng.random() / KEYS_PER_SECOND) for s in pool))
        await asyncio.sleep(1)
    for s in pool:
        s.http.close()
    keystrokes = students * rounds * LINE_CHARS
    latencies.sort()
    return {"students": students, "keystrokes": keystrokes, "answered": len(latencies),
            "sent": sum(s.sent for s in pool), "errors": sum(s.errors for s in pool),
            "p50": statistics.median(latencies), "p99": latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))]}


def run_class(host: str, port: int, page: str, students: int, rounds: int) -> dict:
    return asyncio.run(class_typing(host, port, page, students, rounds))
