"""The parts of uvicorn that app/server/http_protocol.py, supervisor.py, worker.py and `serve` build on are
not its public API. pyproject.toml pins uvicorn to the minor version they were written against;
these tests say what changed, and where, when another version no longer fits them."""

import asyncio
import inspect
import multiprocessing.connection
import multiprocessing.process
import signal
import time

import pytest
import uvicorn
from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import HANDLED_SIGNALS, ServerState
from uvicorn.supervisors import Multiprocess
from uvicorn.supervisors import multiprocess as uvicorn_multiprocess

from app.server import http_protocol
from app.server.http_protocol import RequestDeadlineProtocol
from app.server.supervisor import Supervisor

WHAT_TO_DO = (f"(uvicorn {uvicorn.__version__} is installed). Check the module named here against this uvicorn, "
              "then move the pin in pyproject.toml.")


def expect_signature(owner, name: str, params: list[str], user: str) -> None:
    member = getattr(owner, name, None)
    assert member is not None, f"uvicorn's {owner.__name__}.{name} is gone; {user} relies on it {WHAT_TO_DO}"
    found = list(inspect.signature(member).parameters)
    assert found == params, (f"uvicorn's {owner.__name__}.{name} now takes ({', '.join(found)}), not "
                             f"({', '.join(params)}); {user} relies on it {WHAT_TO_DO}")


@pytest.mark.parametrize("name, params", [
    ("__init__", ["self", "config", "server_state", "app_state", "_loop"]),
    ("connection_made", ["self", "transport"]),
    ("on_message_begin", ["self"]),
    ("on_message_complete", ["self"]),
    ("connection_lost", ["self", "exc"]),
])
def test_the_httptools_protocol_methods_that_http_protocol_overrides(name, params):
    expect_signature(HttpToolsProtocol, name, params, "app/server/http_protocol.py")


@pytest.mark.parametrize("owner, name, params", [
    (Multiprocess, "__init__", ["self", "config", "sockets"]),
    (Multiprocess, "keep_subprocess_alive", ["self"]),
    (Multiprocess, "run", ["self"]),
    (uvicorn_multiprocess.Process, "__init__", ["self", "config", "sockets"]),
    (uvicorn_multiprocess.Process, "ping", ["self", "timeout"]),
])
def test_the_supervisor_methods_that_supervisor_overrides_and_calls(owner, name, params):
    expect_signature(owner, name, params, "app/server/supervisor.py")


def test_the_config_options_that_serve_passes():
    found = inspect.signature(Config.__init__).parameters
    for option in ("factory", "http", "workers", "timeout_graceful_shutdown", "timeout_worker_healthcheck"):
        assert option in found, f"uvicorn's Config takes no {option}=; app/commands/serve.py passes it {WHAT_TO_DO}"
    assert hasattr(uvicorn.config, "STARTUP_FAILURE"), f"uvicorn.config.STARTUP_FAILURE is gone; serve returns it " \
                                                       f"{WHAT_TO_DO}"


class FakeTransport:
    """What HttpToolsProtocol asks of a connection, and whether it was closed."""

    def __init__(self):
        self.closed = False
        self.written = b""

    def get_extra_info(self, name, default=None):
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 50000)}.get(name, default)

    def is_closing(self):
        return self.closed

    def close(self):
        self.closed = True

    def write(self, data):
        self.written += data

    def pause_reading(self):
        pass

    def resume_reading(self):
        pass


async def ok(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


async def connection(data: bytes, wait: float) -> tuple[bytes, bool]:
    """A connection that sends data, then nothing for `wait` seconds: what it got, and whether the server
    closed it."""
    protocol = RequestDeadlineProtocol(Config(ok, http="httptools", access_log=False), ServerState(), {},
                                       _loop=asyncio.get_running_loop())
    transport = FakeTransport()
    protocol.connection_made(transport)
    protocol.data_received(data)
    await asyncio.sleep(wait)
    closed = transport.closed
    protocol.connection_lost(None)  # the client goes: no timer is left behind
    return transport.written, closed


@pytest.fixture
def short_deadline(monkeypatch):
    """HP_REQUEST_TIMEOUT_SECONDS=0.05, read afresh (the protocol reads it once per worker), then forgotten."""
    monkeypatch.setenv("HP_REQUEST_TIMEOUT_SECONDS", "0.05")
    http_protocol.request_timeout.cache_clear()
    yield
    http_protocol.request_timeout.cache_clear()


def test_a_request_that_stops_arriving_is_closed_at_the_deadline(short_deadline):
    """RequestDeadlineProtocol's timer runs through uvicorn's loop, transport and parser callbacks."""
    written, closed = asyncio.run(connection(b"GET /healthz HTTP/1.1\r\nHost: x\r\n", wait=0.3))  # no end
    assert closed and written == b""
    written, closed = asyncio.run(connection(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", wait=0.3))
    assert written.startswith(b"HTTP/1.1 200 OK") and written.endswith(b"ok")
    assert not closed  # kept alive: the deadline ended with the request


def test_a_worker_pipe_closed_in_the_supervisor_reads_as_a_dead_worker_at_once(monkeypatch):
    """uvicorn pings each worker through Process.parent_conn; Supervisor closes Process.child_conn in its own
    process so that the ping fails as soon as the worker is gone (with it open, it waits out the timeout)."""
    config = Config("app.server.worker:create_worker_app", factory=True)
    process = uvicorn_multiprocess.Process(config, [])
    # worker.py asks multiprocessing for its parent: uvicorn must make its workers as multiprocessing processes.
    assert isinstance(process.process, multiprocessing.process.BaseProcess), \
        f"uvicorn no longer starts workers with multiprocessing; app/server/worker.py relies on it {WHAT_TO_DO}"
    assert isinstance(getattr(process, "child_conn", None), multiprocessing.connection.Connection), \
        f"uvicorn's worker Process has no child_conn pipe end; app/server/supervisor.py closes it {WHAT_TO_DO}"
    supervisor = object.__new__(Supervisor)  # __init__ would take over the test process's signals
    supervisor.processes = [process]
    base_calls = []  # uvicorn's own round of pings and restarts, after the pipe ends are closed
    monkeypatch.setattr(Multiprocess, "keep_subprocess_alive", lambda self: base_calls.append(self))
    supervisor.keep_subprocess_alive()
    assert base_calls == [supervisor]
    start = time.monotonic()
    assert process.ping(timeout=5) is False
    assert time.monotonic() - start < 1


def test_workers_stop_gracefully_on_the_signal_worker_py_sends():
    assert signal.SIGTERM in HANDLED_SIGNALS, \
        f"uvicorn's server no longer stops gracefully on SIGTERM; app/server/worker.py sends it {WHAT_TO_DO}"
