"""Classroom benchmark: serve the app the README's way, load it from another process with wrk,
and print a Markdown table for docs/benchmarks.md. Loopback only; every run is bounded in time.

    python scripts/bench.py [--workers 2] [--duration 10] [--port PORT]
    python scripts/bench.py --only typing [--keystrokes 20]   # the keystroke-to-heatmap figure alone
    python scripts/bench.py --only class [--students 10 30 60]  # a keystroke against a comparison, a class typing
    python scripts/bench.py --only probe  # GET /api/probe for an untrained model: computed, then the cached answer
    python scripts/bench.py --only model [--compares 40]  # a compare on nanoGPT's shakespeare_char shape / shipped

Also: the time to the first heatmap and the weight of each page in chromium (cold cache, median of
5), the time from a keystroke to the changed line's heatmaps redrawn, and how many fresh comparisons
the server batched together under load.
Needs wrk (apt-get install wrk) and chromium (as for the browser tests).
"""

import argparse
import ast
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRESET = {"line_a": "白日依山尽", "line_b": "山依日白尽", "position": "learned"}
# wrk's Lua: a fresh pair of 5-character lines per request, from common characters of the corpus.
FRESH_LUA = r"""
-- wrk's LuaJIT has no utf8 library; every character here is 3 bytes of UTF-8.
local text = "白日依山尽黄河入海流欲穷千里目更上一层楼床前明月光疑是地霜举头望低思故乡"
  .. "春眠不觉晓处闻啼鸟夜来风雨声花落知多少"
local chars = {}
for i = 1, #text, 3 do chars[#chars + 1] = text:sub(i, i + 2) end
local positions = {"learned", "rope", "none"}
local counter = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  counter = counter + 1
  local a, b = {}, {}
  for i = 1, 5 do a[i] = chars[math.random(#chars)]; b[i] = chars[math.random(#chars)] end
  local body = string.format('{"line_a":"%s","line_b":"%s","position":"%s"}',
    table.concat(a), table.concat(b), positions[counter % 3 + 1])
  return wrk.format(nil, nil, nil, body)
end
"""


# A keystroke against a comparison. wrk runs one connection per thread here (-t = -c), so each thread's Lua state
# is one client's. Modes: "alone" sends the comparison only (the lesson's as /api/compare, without lesson_step);
# "page" sends a keystroke as the pages do: the comparison (the explorer's /api/compare, the lesson's
# /api/lesson/order/compare with the verdict's body), then, on the same connection, the verdict by the answer's
# comparison_id when the answer did not carry it (the explorer: answer.verdict null; the lesson: answer.step_verdict
# null); "pair" sends the comparison as "page" does, then the verdict route on the body, as an API caller may.
# Lines: "fresh" are two new lines of 7 characters each time; "typing" keeps line A and types line B, one new
# character a keystroke, 1 to 7 characters long. Each thread counts its answered comparisons (keystrokes), which
# done() prints.
KEYSTROKE_LUA = r"""
local text = "白日依山尽黄河入海流欲穷千里目更上一层楼床前明月光疑是地霜举头望低思故乡"
  .. "春眠不觉晓处闻啼鸟夜来风雨声花落知多少"
local chars = {}
for i = 1, #text, 3 do chars[#chars + 1] = text:sub(i, i + 2) end
local mode, lines, page = "%(mode)s", "%(lines)s", "%(page)s"
local ids, threads = 0, {}
function setup(thread) ids = ids + 1; thread:set("id", ids); threads[#threads + 1] = thread end
function init(args) math.randomseed(id * 7919 + os.time()); compares = 0 end
function done(summary, latency, requests)
  local n = 0
  for _, thread in ipairs(threads) do n = n + thread:get("compares") end
  io.write(string.format("compares: %%d\n", n))
end
local function pick(n)
  local out = {}
  for i = 1, n do out[i] = chars[math.random(#chars)] end
  return table.concat(out)
end
local a, typed = "白日依山尽", ""
local function compare_body()
  if page == "lesson" then
    return string.format(
      '{"line_a":"%%s","line_b":"%%s","position":"none","weights":"random","n_head":4,"n_layer":1}', a, typed)
  end
  return string.format('{"line_a":"%%s","line_b":"%%s","position":"learned","weights":"trained"}', a, typed)
end
local function step_body()
  return string.format('{"line_a":"%%s","line_b":"%%s","position":"none","weights":"random","causal":true,'
    .. '"n_layer":1,"n_head":4}', a, typed)
end
local comparison_id = nil
local function verdict()
  if mode == "page" then  -- by the answer's comparison_id
    if page == "lesson" then return "GET", "/api/lesson/order/verdict/" .. comparison_id, nil end
    return "GET", "/api/compare/" .. comparison_id .. "/verdict", nil
  end
  if page == "lesson" then return "POST", "/api/lesson/order/verdict", step_body() end
  return "POST", "/api/compare/verdict", compare_body()
end
wrk.headers["Content-Type"] = "application/json"
local verdict_next, compared = false, false
request = function()
  if verdict_next then
    verdict_next = false
    local method, path, body = verdict()
    return wrk.format(method, path, nil, body)
  end
  if lines == "fresh" then
    a, typed = pick(7), pick(7)
  else
    typed = (#typed >= 21) and chars[math.random(#chars)] or typed .. chars[math.random(#chars)]
  end
  compared = true
  if page == "lesson" and mode ~= "alone" then
    return wrk.format("POST", "/api/lesson/order/compare", nil, step_body())
  end
  return wrk.format("POST", "/api/compare", nil, compare_body())
end
-- Comparisons are counted as wrk counts requests, when answered: those still out at the end count in neither.
response = function(status, headers, body)
  if compared then
    compares = compares + 1
    comparison_id = body:match('"comparison_id":"(%%x+)"')
    local carried = page == "lesson" and '"step_verdict":null' or '"verdict":null'
    verdict_next = mode == "pair" or (mode == "page" and comparison_id ~= nil and body:find(carried, 1, true) ~= nil)
  end
  compared = false
end
"""


def keystroke_rates(server_pid: int, base: str, connections: int, seconds: int) -> dict:
    """Keystrokes a second against comparisons a second, in one run: {(page, lines): {mode: figures}}, modes alone,
    page and pair (KEYSTROKE_LUA). Each figure is two wrk runs of seconds / 2, in the order alone, page, pair, pair,
    page, alone, so that a machine growing busier or quieter meanwhile weighs on all alike."""
    rates = {}
    for page, lines in (("explorer", "fresh"), ("explorer", "typing"), ("lesson", "typing")):
        runs = {"alone": [], "page": [], "pair": []}
        for mode in ("alone", "page", "pair", "pair", "page", "alone"):
            lua = KEYSTROKE_LUA % {"mode": mode, "lines": lines, "page": page}
            cmd = wrk_command(base + "/api/compare", connections, max(1, seconds // 2), lua)
            cmd[1] = f"-t{connections}"
            before = workers_cpu_s(server_pid)
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30).stdout
            runs[mode].append(parse_wrk(out) | {"compares": int(re.search(r"compares: (\d+)", out).group(1))})
            runs[mode][-1]["cpu_s"] = workers_cpu_s(server_pid) - before
        rates[page, lines] = {mode: _summed(r) for mode, r in runs.items()}
    return rates


def _summed(runs: list[dict]) -> dict:
    """Per keystroke (a comparison and what the page asks after it): the rate, the p99 of its requests, the share of
    keystrokes that sent a second request, and the workers' CPU ms, which holds however busy the machine is."""
    keystrokes = sum(r["compares"] for r in runs)
    requests = sum(r["requests"] for r in runs)
    return {"per_s": sum(r["rps"] * r["compares"] / max(1, r["requests"]) for r in runs) / len(runs),
            "p99": max(r["p99"] for r in runs), "errors": sum(r["errors"] for r in runs),
            "second": (requests - keystrokes) / max(1, keystrokes),
            "cpu_ms": sum(r["cpu_s"] for r in runs) * 1000 / max(1, keystrokes)}


def print_keystrokes(rates: dict, connections: int) -> None:
    print(f"\n| {connections} clients | keystroke sent as | /api/compare alone per s | keystrokes per s | ratio "
          "| verdict requests per keystroke | server CPU ms, compare / keystroke | a keystroke in compares, by CPU "
          "| p99 ms per request, alone / keystroke | errors |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (page, lines), modes in rates.items():
        alone = modes["alone"]
        for mode in ("page", "pair"):
            k = modes[mode]
            route = "/api/lesson/order/verdict" if page == "lesson" else "/api/compare/verdict"
            sent = "the page" if mode == "page" else f"compare + {route}"
            print(f"| {page}, {lines} lines | {sent} | {alone['per_s']:.0f} | {k['per_s']:.0f} "
                  f"| {k['per_s'] / alone['per_s']:.2f} | {k['second']:.2f} "
                  f"| {alone['cpu_ms']:.1f} / {k['cpu_ms']:.1f} "
                  f"| {k['cpu_ms'] / alone['cpu_ms']:.2f} | {alone['p99']:.0f} / {k['p99']:.0f} "
                  f"| {alone['errors'] + k['errors']} |")


def print_class(results: list[dict]) -> None:
    print("\n| page | students | keystrokes | requests sent | p50 ms | p99 ms | errors |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['page']} | {r['students']} | {r['keystrokes']} | {r['sent']} | {r['p50']:.0f} | {r['p99']:.0f} "
              f"| {r['errors']} |")


def class_figures(port: int, students: list[int], rounds: int) -> list[dict]:
    from class_typing import run_class

    return [{"page": page, **run_class("127.0.0.1", port, page, n, rounds)}
            for page in ("explorer", "lesson") for n in students]


def lua_file(lua: str) -> str:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False, encoding="utf-8") as f:
        f.write(lua)
    return f.name


def wrk_command(url: str, connections: int, seconds: int, lua: str | None = None) -> list[str]:
    cmd = ["wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "5s"]
    return [*cmd, "-s", lua_file(lua), url] if lua else [*cmd, url]


def wrk(url: str, connections: int, seconds: int, lua: str | None = None, body: dict | None = None,
        gzip: bool = False) -> dict:
    """gzip: ask for gzip as browsers do (wrk on its own does not), with the body."""
    if body is not None:
        lua = ('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
               + ('wrk.headers["Accept-Encoding"] = "gzip"\n' if gzip else "")
               + f"wrk.body = {json.dumps(json.dumps(body, ensure_ascii=False), ensure_ascii=False)}\n")
    cmd = wrk_command(url, connections, seconds, lua)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30).stdout
    return parse_wrk(out)


def parse_wrk(out: str) -> dict:
    def ms(text: str) -> float:
        value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()
        return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]

    latency = dict(re.findall(r"^\s+(50|99)%\s+(\S+)", out, re.M))
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "requests": int(re.search(r"(\d+) requests in", out).group(1)),
            "p50": ms(latency["50"]), "p99": ms(latency["99"]),
            "errors": errors + (int(non2xx.group(1)) if non2xx else 0)}


def worker_pids(server_pid: int) -> list[int]:
    """uvicorn's worker processes: the server's children that run the app."""
    children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
    return [int(p) for p in children if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()] or [server_pid]


def worker_rss_mb(server_pid: int) -> dict[int, float]:
    """RSS of each live worker, in MB."""
    rss = {}
    for pid in worker_pids(server_pid):
        found = re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
        if found:  # a worker that is exiting has none
            rss[pid] = int(found.group(1)) / 1024
    return rss


def workers_cpu_s(server_pid: int) -> float:
    """CPU seconds the workers have used (user + system): per request, it holds however busy the machine is."""
    total = 0
    for pid in worker_pids(server_pid):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def measured(server_pid: int, url: str, connections: int, seconds: int, **load) -> dict:
    """A wrk run, plus the workers' CPU milliseconds per request it answered."""
    before = workers_cpu_s(server_pid)
    result = wrk(url, connections, seconds, **load)
    result["cpu_ms"] = (workers_cpu_s(server_pid) - before) * 1000 / max(1, result["requests"])
    return result


def post_many(url: str, n: int) -> None:
    """n distinct requests, so the memory figure covers the response cache filling up."""
    for i in range(n):
        position = ("learned", "rope", "none")[i % 3]
        body = json.dumps({**PRESET, "position": position, "line_a": "白日依山尽"[: 1 + i % 5] + str(i)}).encode()
        req = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=10).read()


# Runs in the page before its scripts: notes when the first Plotly heatmap image is in the DOM.
FIRST_HEATMAP = """
new MutationObserver((_, observer) => {
  if (document.querySelector('.heatmaplayer image')) {
    window.__firstHeatmap = performance.now();
    observer.disconnect();
  }
}).observe(document, {childList: true, subtree: true});
"""
LESSON_STORE = "heads-positions.lesson.v1"  # static/js/lesson/store.js: answers kept in localStorage
LESSON_HEATMAP_KINDS = ("order", "pair", "posemb", "heads")  # steps whose reveal draws heatmaps


def launch_chromium(p):
    return p.chromium.launch(executable_path=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"),
                             args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                                   "--disable-background-networking", "--disable-component-update",
                                   "--disable-sync"])


def page_weight(browser, url: str) -> int:
    """Bytes over the wire for the page and everything it loads, cold cache."""
    context = browser.new_context()
    page = context.new_page()
    sizes = []
    page.on("requestfinished", lambda r: sizes.append(r.sizes()))
    page.goto(url, wait_until="networkidle")
    context.close()
    return sum(s["responseBodySize"] + s["responseHeadersSize"] for s in sizes)


def first_heatmap(browser, url: str, storage: dict | None = None, runs: int = 5) -> dict:
    """Median ms from navigation to the first heatmap drawn (and to DOMContentLoaded), each run in a
    new context, so with a cold cache. storage: localStorage to set first (a lesson step already answered)."""
    heatmap, dcl = [], []
    for _ in range(runs):
        context = browser.new_context()
        if storage:
            value = json.dumps(json.dumps(storage))
            context.add_init_script(f"try {{ localStorage.setItem({json.dumps(LESSON_STORE)}, {value}); }} catch {{}}")
        context.add_init_script(FIRST_HEATMAP)
        page = context.new_page()
        page.goto(url)
        deadline = time.monotonic() + 30
        while (t := page.evaluate("window.__firstHeatmap")) is None:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no heatmap on {url} within 30 s")
            page.wait_for_timeout(20)
        heatmap.append(t)
        dcl.append(page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd"))
        context.close()
    return {"heatmap": statistics.median(heatmap), "dcl": statistics.median(dcl), "runs": sorted(heatmap)}


def lesson_heatmap_step(base: str) -> tuple[int, str] | None:
    """The first lesson step whose reveal draws a heatmap, or None while /lesson does not answer."""
    try:
        with urllib.request.urlopen(base + "/api/lesson", timeout=10) as response:
            steps = json.load(response)["steps"]
    except (OSError, KeyError, ValueError):
        return None
    return next(((n, s["id"]) for n, s in enumerate(steps, 1) if s["kind"] in LESSON_HEATMAP_KINDS), None)


def browser_figures(base: str) -> dict:
    """Page weight and first heatmap for the explorer, and for the lesson when it is served."""
    from playwright.sync_api import sync_playwright

    figures = {}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        figures["explorer"] = {"path": "/", "weight": page_weight(browser, base + "/"),
                               **first_heatmap(browser, base + "/")}
        step = lesson_heatmap_step(base)
        if step is not None:
            number, step_id = step
            # The step opens already answered, so it reveals (and draws) at once, as for a returning student.
            url = f"{base}/lesson?step={number}"
            figures["lesson"] = {"path": f"/lesson?step={number}", "weight": page_weight(browser, base + "/lesson"),
                                 **first_heatmap(browser, url, {step_id: {"revealed": True}})}
        browser.close()
    return figures


# Runs in the page before its scripts: notes when a line gets a keystroke (the capture phase on the window,
# before the page's own listener) and when every heatmap of line B carries the character typed.
TYPING_PROBE = """
window.__typing = {start: null, done: null, want: null, selector: null};
const shows = () => {
  const t = window.__typing;
  const plots = [...document.querySelectorAll(t.selector)];
  return plots.length > 0 && plots.every((plot) => [...plot.querySelectorAll('.xtick text')]
    .some((tick) => tick.textContent.includes(t.want)));
};
addEventListener('input', (event) => {
  const t = window.__typing;
  if (t.want && event.target.id === 'line-b' && t.start === null) t.start = performance.now();
}, true);
new MutationObserver(() => {
  const t = window.__typing;
  if (t.start !== null && t.done === null && shows()) t.done = performance.now();
}).observe(document, {childList: true, subtree: true, characterData: true, attributes: true});
"""
# The heatmaps of line B on each page: the explorer's column B (one per head), the lesson's chart of line B.
LINE_B_PLOTS = {"explorer": '#heatmaps .heatmap[data-line="b"]',
                "lesson": '.lesson-chart[data-name^="heatmap-B"] .lesson-plot'}
# A new character for each keystroke, none of them in the base line, so every answer is a fresh comparison.
TYPED = "月光明春风花雨夜江水云天秋星石草木竹松溪"


def wait_for(page, expression: str, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {timeout:.0f} s")
        page.wait_for_timeout(20)


def keystroke_to_heatmap(browser, url: str, page_name: str, storage: dict | None = None,
                         keystrokes: int = 20) -> dict:
    """Median ms from a keystroke adding one character to line B until every heatmap of line B shows it
    (chromium, zh, 1280x800). Between keystrokes line B goes back to its base and the page settles."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="zh-CN")
    if storage:
        value = json.dumps(json.dumps(storage))
        context.add_init_script(f"try {{ localStorage.setItem({json.dumps(LESSON_STORE)}, {value}); }} catch {{}}")
    context.add_init_script(TYPING_PROBE)
    page = context.new_page()
    selector = LINE_B_PLOTS[page_name]
    page.goto(url)
    page.evaluate("(s) => { window.__typing.selector = s; }", selector)
    shows_base = f"""() => {{ const plots = [...document.querySelectorAll({json.dumps(selector)})];
        return plots.length > 0 && plots.every((p) => p.querySelectorAll('.xtick text').length === %d); }}"""
    line = page.locator("#line-b")
    wait_for(page, "() => document.querySelector('#line-b') && document.querySelector('#line-b').value", "line B")
    base = line.input_value()
    times = []
    for ch in (TYPED * (1 + keystrokes // len(TYPED)))[:keystrokes]:
        line.fill(base)
        wait_for(page, shows_base % len(base), f"{page_name}: line B's heatmaps back to {base}")
        # The page settles: nothing out, nothing drawing (both pages mark #results busy), then a moment more
        # for what is not counted there (the explorer's heads-off panel asks once the maps are drawn).
        wait_for(page, "() => document.querySelector('#results').getAttribute('aria-busy') === 'false'",
                 f"{page_name}: busy")
        page.wait_for_timeout(500)
        page.evaluate("(ch) => Object.assign(window.__typing, {start: null, done: null, want: ch})", ch)
        line.press("End")
        page.keyboard.insert_text(ch)
        wait_for(page, "() => window.__typing.done !== null", f"{page_name}: {ch} in every heatmap of line B")
        times.append(page.evaluate("window.__typing.done - window.__typing.start"))
        page.evaluate("() => { window.__typing.want = null; }")
    context.close()
    return {"median": statistics.median(times), "runs": sorted(times)}


def typing_figures(base: str, keystrokes: int = 20) -> dict:
    """Keystroke to redrawn heatmaps on the explorer and on the lesson's step 1 once answered."""
    from playwright.sync_api import sync_playwright

    figures = {}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        figures["explorer"] = {"path": "/?lang=zh", **keystroke_to_heatmap(
            browser, base + "/?lang=zh", "explorer", keystrokes=keystrokes)}
        step = lesson_heatmap_step(base)
        if step is not None:
            number, step_id = step
            path = f"/lesson?step={number}&lang=zh"
            figures["lesson"] = {"path": path, **keystroke_to_heatmap(
                browser, base + path, "lesson", {step_id: {"revealed": True}}, keystrokes)}
        browser.close()
    return figures


def print_typing(figures: dict) -> None:
    for name, f in figures.items():
        print(f"{name} ({f['path']}): keystroke to every heatmap of line B redrawn, median {f['median']:.0f} ms "
              f"of {len(f['runs'])} (runs {', '.join(f'{t:.0f}' for t in f['runs'])})")


BATCH_LOG = re.compile(r"compare batches by number of requests: (\{.*\})")


def batch_sizes(log: str) -> Counter:
    """Batches of fresh comparisons by number of requests, summed over the workers' shutdown lines."""
    sizes = Counter()
    for found in BATCH_LOG.findall(log):
        sizes.update(ast.literal_eval(found))
    return sizes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(port: int, workers: int, log) -> subprocess.Popen:
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", port)) == 0:
            raise SystemExit(f"port {port} is already taken by another server: choose another with --port")
    exe = Path(sys.executable).with_name("heads-positions")
    server = subprocess.Popen([str(exe), "serve", "--port", str(port), "--workers", str(workers)],
                              stdout=subprocess.DEVNULL, stderr=log)
    base = f"http://127.0.0.1:{port}"
    for _ in range(120):
        if server.poll() is not None:
            raise SystemExit(f"the server exited with code {server.returncode} before it was ready")
        try:
            urllib.request.urlopen(base + "/readyz", timeout=1)
            break
        except OSError:
            time.sleep(0.5)
    time.sleep(1)  # every worker up
    return server


def stop(server: subprocess.Popen) -> None:
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=30)


def batches_under_load(port: int, workers: int, connections: int, seconds: int) -> Counter:
    """A server of its own, so its batch count covers this load only (3 s of warm-up included)."""
    with tempfile.TemporaryFile("w+") as log:
        server = serve(port, workers, log)
        try:
            wrk(f"http://127.0.0.1:{port}/api/compare", connections, seconds + 3, lua=FRESH_LUA)
        finally:
            stop(server)
        log.seek(0)
        return batch_sizes(log.read())


def describe(sizes: Counter) -> str:
    requests = sum(n * count for n, count in sizes.items())
    if not requests:
        return "none"
    median = statistics.median([n for n, count in sizes.items() for _ in range(n * count)])
    return (f"{sum(sizes.values()):,} batches for {requests:,} requests; a request's batch held a median of "
            f"{median:g} requests (largest {max(sizes)})")


def forward_ms() -> float:
    import torch

    from model.assets import VOCAB_PATH
    from model.gpt import GPT, GPTConfig
    from model.tokenizer import CharTokenizer

    torch.set_num_threads(1)
    tok = CharTokenizer.load(VOCAB_PATH)
    model = GPT(GPTConfig(vocab_size=tok.vocab_size)).eval()
    idx = torch.tensor([tok.encode("白日依山尽")])
    model.trace(idx)
    start = time.perf_counter()
    for _ in range(200):
        model.trace(idx)
    return (time.perf_counter() - start) / 200 * 1000


def timed_get(url: str) -> float:
    """Milliseconds from sending a GET to the whole answer read."""
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        response.read()
    return (time.perf_counter() - start) * 1000


def probe_figures(base: str, repeats: int = 20) -> list[dict]:
    """GET /api/probe on untrained models of 1 to 4 layers, each mode: the first answer (computed on the server) and
    the median of `repeats` more (the response cache's)."""
    rows = []
    for n_layer in range(1, 5):
        for position in ("learned", "rope", "none"):
            url = f"{base}/api/probe?weights=random&position={position}&n_layer={n_layer}"
            first = timed_get(url)
            cached = statistics.median(timed_get(url) for _ in range(repeats))
            rows.append({"n_layer": n_layer, "position": position, "first": first, "cached": cached})
    return rows


def print_probe(rows: list[dict]) -> None:
    print("| n_layer | position | first answer ms (computed) | cached answer ms (median of 20) |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['n_layer']} | {r['position']} | {r['first']:.0f} | {r['cached']:.1f} |")


def model_compare_ratio(compares: int) -> dict:
    """One /api/compare on an operator's model of nanoGPT's shakespeare_char shape (6 layers x 6 heads x 384, block
    256, untrained weights in nanoGPT's file format) against the shipped 2 x 4 x 128 model, in one process and one
    run, alternating, each with fresh lines (no cache answers), as the page sends them: the verdict with it.
    Returns the median ms of each and their ratio, for lines of 8 and of 128 characters."""
    import pickle

    import torch
    from fastapi.testclient import TestClient

    from app.main import create_app
    from app.settings import Settings
    from model.gpt import GPT, GPTConfig

    chars = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # shakespeare_char's 65
    big = GPT(GPTConfig(vocab_size=len(chars), block_size=256, n_layer=6, n_head=6, n_embd=384, bias=False))
    folder = Path(tempfile.mkdtemp())
    names = (("tok_emb.", "transformer.wte."), ("pos_emb.", "transformer.wpe."), ("ln_f.", "transformer.ln_f."),
             ("blocks.", "transformer.h."), (".attn.qkv.", ".attn.c_attn."), (".attn.proj.", ".attn.c_proj."),
             (".mlp.fc.", ".mlp.c_fc."), (".mlp.proj.", ".mlp.c_proj."))
    state = {}
    for name, tensor in big.state_dict().items():
        for ours, theirs in names:
            name = name.replace(ours, theirs, 1)
        state[name] = tensor
    torch.save({"model": state, "model_args": {"n_layer": 6, "n_head": 6, "n_embd": 384, "block_size": 256,
                                               "bias": False, "vocab_size": len(chars), "dropout": 0.0},
                "config": {"dataset": "shakespeare_char"}}, folder / "ckpt.pt")
    (folder / "meta.pkl").write_bytes(pickle.dumps({"vocab_size": len(chars), "itos": dict(enumerate(chars)),
                                                    "stoi": {c: i for i, c in enumerate(chars)}}))
    torch.set_num_threads(1)
    letters = "abcdefghijklmnopqrstuvwxyz"
    figures = {}
    settings = Settings(models=f"shakespeare={folder / 'ckpt.pt'}", response_cache_size=0)
    with TestClient(create_app(settings)) as client:
        for n in (8, 128):
            times = {"shipped": [], "shakespeare": []}
            for i in range(compares + 2):
                for name in times:
                    line = "".join(letters[(i * 7 + j * (j + 3)) % 26] for j in range(n))
                    body = {"line_a": line, "line_b": line[::-1]}
                    if name == "shakespeare":
                        body["model"] = name
                    start = time.perf_counter()
                    assert client.post("/api/compare", json=body).status_code == 200
                    if i >= 2:  # the first two build the untrained models of each table by depth
                        times[name].append((time.perf_counter() - start) * 1000)
            shipped, nano = (statistics.median(times[k]) for k in ("shipped", "shakespeare"))
            figures[n] = {"shipped_ms": shipped, "model_ms": nano, "ratio": nano / shipped}
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--duration", type=int, default=10, help="seconds per load run")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--connections", type=int, nargs="+", default=[1, 16, 100])
    parser.add_argument("--requests", type=int, default=10_000, help="requests between the two memory readings")
    parser.add_argument("--keystrokes", type=int, default=20, help="keystrokes per page for the typing figure")
    parser.add_argument("--students", type=int, nargs="+", default=[10, 30, 60], help="class sizes typing at once")
    parser.add_argument("--rounds", type=int, default=3, help="lines each student types, one after the other")
    parser.add_argument("--only", choices=["typing", "class", "probe", "model"],
                        help="typing: only the keystroke-to-heatmap figure; class: only the keystroke figures; "
                        "probe: only GET /api/probe on untrained models; model: only a compare on a 6 x 6 x 384 "
                        "operator's model against the shipped one")
    parser.add_argument("--compares", type=int, default=40, help="compares of each model for --only model")
    args = parser.parse_args()
    if args.only == "model":
        load_before = os.getloadavg()[0]
        for n, f in model_compare_ratio(args.compares).items():
            print(f"lines of {n} characters: shipped 2x4x128 {f['shipped_ms']:.1f} ms, 6x6x384 (block 256) "
                  f"{f['model_ms']:.1f} ms per compare (median of {args.compares}): ratio {f['ratio']:.2f}")
        print(f"one process, one torch thread; load average before {load_before:.1f}, after {os.getloadavg()[0]:.1f}")
        return 0
    args.port = args.port or free_port()
    base = f"http://127.0.0.1:{args.port}"
    log = tempfile.TemporaryFile("w+")
    server = serve(args.port, args.workers, log)
    if args.only == "class":
        try:
            wrk(base + "/api/compare", 16, 3, lua=FRESH_LUA)  # warm-up: the lesson's untrained models get built
            load_before = os.getloadavg()
            rates = keystroke_rates(server.pid, base, 16, args.duration)
            typed = class_figures(args.port, args.students, args.rounds)
        finally:
            stop(server)
        before = " / ".join(f"{x:.1f}" for x in load_before)
        print(f"\nworkers: {args.workers}, {args.duration} s per wrk run, {os.cpu_count()} cores, load average before "
              f"{before}, at the end {os.getloadavg()[0]:.1f}")
        print_keystrokes(rates, 16)
        print_class(typed)
        return 0
    if args.only == "probe":
        try:
            rows = probe_figures(base)
        finally:
            stop(server)
        print(f"\nworkers: {args.workers}, {os.cpu_count()} cores, load average at the end {os.getloadavg()[0]:.1f}")
        print_probe(rows)
        return 0
    if args.only == "typing":
        try:
            typed = typing_figures(base, args.keystrokes)
        finally:
            stop(server)
        print(f"\nworkers: {args.workers}, chromium, zh, 1280x800, {os.cpu_count()} cores")
        print_typing(typed)
        print(f"load average at the end (other work on the machine): {os.getloadavg()[0]:.1f}")
        return 0
    try:
        figures = browser_figures(base)  # first, on an idle server, as a student's first visit
        typed = typing_figures(base, args.keystrokes)  # the server still idle: one student typing
        wrk(base + "/api/compare", 16, 3, lua=FRESH_LUA)  # warm-up: the lesson's untrained models get built
        rates = keystroke_rates(server.pid, base, 16, args.duration)
        class_typed = class_figures(args.port, args.students, args.rounds)
        rows = []
        for c in args.connections:
            bare = measured(server.pid, base + "/healthz", c, args.duration)
            preset = measured(server.pid, base + "/api/compare", c, args.duration, body=PRESET)
            zipped = measured(server.pid, base + "/api/compare", c, args.duration, body=PRESET, gzip=True)
            fresh = measured(server.pid, base + "/api/compare", c, args.duration, lua=FRESH_LUA)
            rows.append((c, bare, preset, zipped, fresh))
        # /healthz while compare is saturated by fresh requests from another wrk.
        load = subprocess.Popen(wrk_command(base + "/api/compare", 100, args.duration + 4, FRESH_LUA),
                                stdout=subprocess.DEVNULL)
        time.sleep(2)
        health_under_load = wrk(base + "/healthz", 1, args.duration)
        load.wait(timeout=args.duration + 30)
        rss_before = worker_rss_mb(server.pid)
        post_many(base + "/api/compare", args.requests)
        rss_after = worker_rss_mb(server.pid)
    finally:
        stop(server)
    log.seek(0)
    restarts = log.read().count("Started server process") - args.workers
    batches = {c: batches_under_load(args.port, args.workers, c, args.duration) for c in (16, 100)}

    print(f"\nworkers: {args.workers}, {args.duration} s per run, wrk on loopback, {os.cpu_count()} cores\n")
    print("| clients | endpoint | req/s | p50 ms | p99 ms | errors | req/s vs bare | server CPU ms/req |")
    print("|---|---|---|---|---|---|---|---|")
    for c, bare, preset, zipped, fresh in rows:
        named = (("`/healthz` (bare)", bare), ("compare, repeated preset", preset),
                 ("compare, repeated preset, gzip as browsers ask", zipped), ("compare, fresh lines", fresh))
        for name, r in named:
            print(f"| {c} | {name} | {r['rps']:.0f} | {r['p50']:.1f} | {r['p99']:.1f} | {r['errors']} "
                  f"| {r['rps'] / bare['rps']:.2f} | {r['cpu_ms']:.2f} |")
    print(f"\n/healthz while compare is saturated (100 clients): p50 {health_under_load['p50']:.1f} ms, "
          f"p99 {health_under_load['p99']:.1f} ms")
    print(f"memory per worker before / after {args.requests:,} requests: "
          + ", ".join(f"{rss_before[pid]:.0f} / {rss_after[pid]:.0f} MB" for pid in rss_before if pid in rss_after))
    if restarts:
        print(f"WARNING: {restarts} worker restart(s) during the run (see uvicorn's log)")
    print(f"load average at the end (other work on the machine): {os.getloadavg()[0]:.1f}")
    for name, f in figures.items():
        print(f"{name} ({f['path']}): {f['weight'] / 1024:.0f} KB over the wire; first heatmap "
              f"{f['heatmap']:.0f} ms after navigation (median of {len(f['runs'])}, cold cache; runs "
              f"{', '.join(f'{t:.0f}' for t in f['runs'])}), DOMContentLoaded {f['dcl']:.0f} ms")
    print_typing(typed)
    print_keystrokes(rates, 16)
    print_class(class_typed)
    if "lesson" not in figures:
        print("lesson: /api/lesson did not answer, so no lesson figures (they run once it does)")
    for c, sizes in batches.items():
        print(f"fresh comparisons batched at {c} clients: {describe(sizes)}")
    print(f"one forward pass in-process (2 layers, 5 characters, 1 thread): {forward_ms():.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
