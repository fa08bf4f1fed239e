"""Real processes for class mode's tests: Debian's redis-server, and the app as `heads-positions serve`; and the
class event broadcaster as a worker makes it.

Missing redis-server is a failure, never a skip: CI must not pass the Redis tests without Redis.
"""

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from app.services.class_events import Broadcaster
from app.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 90  # seconds: each worker loads the models


def served_broadcaster(store) -> Broadcaster:
    """The store's broadcaster with the served timers (HP_CLASS_HEARTBEAT_SECONDS, HP_CLASS_STALL_SECONDS)."""
    settings = Settings()
    return Broadcaster(store, settings.class_heartbeat_seconds, settings.class_stall_seconds)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """A throwaway redis-server on a free port; stop() and start() it again on the same port and folder.
    appendonly (as in compose.yaml): what a class wrote survives the restart."""

    def __init__(self, folder: str | None = None, appendonly: bool = False):
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            pytest.fail("redis-server is missing: apt-get install -y redis-server (scripts/test.sh does it as root)")
        self.port = free_port()
        self.folder = folder or tempfile.mkdtemp(prefix="hp-redis-")
        self.appendonly = appendonly
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = None

    def start(self) -> "RedisServer":
        self.proc = subprocess.Popen([self.binary, "--port", str(self.port), "--save", "", "--daemonize", "no",
                                      "--dir", self.folder, "--appendonly", "yes" if self.appendonly else "no"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis-server did not answer on port {self.port}")
            time.sleep(0.05)

    def pause(self) -> None:
        """SIGSTOP: the server keeps its connections open and answers nothing, as a stalled machine would."""
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGCONT)  # a paused server would not act on SIGTERM
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None


@contextlib.contextmanager
def redis_server(appendonly: bool = False):
    """A throwaway Redis without persistence (unless appendonly); yields its RedisServer."""
    server = RedisServer(appendonly=appendonly).start()
    try:
        yield server
    finally:
        server.stop()


class Served:
    """One `heads-positions serve` process: start() and stop() it, read its log."""

    def __init__(self, env: dict[str, str], workers: int = 1, host: str = "127.0.0.1"):
        self.env = {**os.environ, **env}
        self.host = host
        self.workers = workers
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.TemporaryFile()
        self.proc = None

    def start(self) -> "Served":
        cmd = [str(Path(sys.executable).with_name("heads-positions")), "serve", "--port", str(self.port),
               "--workers", str(self.workers), "--host", self.host]
        self.proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"the app exited with code {self.proc.returncode}:\n{self.read_log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the app did not answer within {START_TIMEOUT} s:\n{self.read_log()}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def read_log(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-4000:]


@contextlib.contextmanager
def served(env: dict[str, str], workers: int = 1, host: str = "127.0.0.1"):
    server = Served(env, workers, host).start()
    try:
        yield server
    finally:
        server.stop()


def sse_data(lines) -> dict:
    """The next event's data from an iterator of SSE lines, skipping comments and retry lines."""
    for line in lines:
        if line.startswith("data: "):
            return json.loads(line[len("data: "):])
    raise AssertionError("the event stream ended")


def open_stores_at_once(folder, files: int, barrier, results) -> None:
    """Worker start-ups, as far as class mode goes: open each new classes.db when every other opener does.
    Here, not in the test module: a spawned process imports its target by module name, and pytest's
    importlib mode gives test modules names no other process can import."""
    from app.stores import Lifetimes
    from app.stores.sqlite import SqliteStore

    for file in range(files):
        barrier.wait()
        try:
            SqliteStore(Path(folder) / str(file) / "classes.db", Lifetimes(3600, 3600), poll_seconds=0.1)
            results.put("ok")
        except Exception as error:  # noqa: BLE001 -- the failure is the finding, reported by the test
            results.put(repr(error))
