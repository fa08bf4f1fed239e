"""heads-positions serve: the web app under uvicorn, with a supervisor that restarts dead workers."""

import argparse
import os
import sys


def add_parser(sub) -> None:
    p = sub.add_parser("serve", help="serve the web app", description="Serve the web app with uvicorn.")
    p.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"),
                   help="address to listen on; 0.0.0.0 lets a classroom reach this machine (default 127.0.0.1)")
    # Defaults from the environment are strings, which argparse passes through `type` as well: PORT=abc
    # gets the same clear error as --port abc.
    p.add_argument("--port", type=whole_number(0, 65535, "$PORT"), default=os.environ.get("PORT", "8000"),
                   help="0 to 65535, 0 for any free port (default 8000, or $PORT)")
    p.add_argument("--workers", type=whole_number(1, None, "$WORKERS"), default=os.environ.get("WORKERS", "1"),
                   help="worker processes; one per core is a good start (default 1, or $WORKERS)")
    p.add_argument("--model", action="append", default=[], metavar="[NAME=]PATH[,meta=PATH]",
                   help="serve a model beside the shipped ones (repeatable): a checkpoint of `heads-positions train "
                        "--out`, or nanoGPT's ckpt.pt with its meta.pkl (found beside it or at data/<dataset>/, or "
                        "given as meta=PATH). Adds to $HP_MODELS, comma-separated")
    p.set_defaults(run=run)


def whole_number(low: int, high: int | None, variable: str):
    """An argparse type: a whole number from low to high (no upper bound when high is None)."""
    rule = f"a whole number from {low} to {high}" if high is not None else f"a whole number from {low} up"

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be {rule}, given as the option or as {variable} (got {text!r})")
        return value

    return parse


def models_opened_apart(specs) -> list[str]:
    """Each model file opened as a worker would open it, in a process of its own: this one must not load PyTorch
    (see COMMANDS in app/cli.py), and a file that cannot be served must stop `serve` before it listens, not fail
    every worker's start again and again."""
    if not specs:
        return []
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        return pool.submit(_opened, specs).result()


def _opened(specs) -> list[str]:
    """Runs in the spawned process, which imports PyTorch."""
    from app.services.registry import model_file_problems

    return model_file_problems(specs)


def run(args) -> int:
    from uvicorn import Config
    from uvicorn.config import STARTUP_FAILURE

    from app.server.supervisor import Supervisor
    from app.settings import Settings, model_specs, startup_problems

    # The workers read the models from the environment they inherit: --model joins HP_MODELS there.
    os.environ["HP_MODELS"] = ",".join([*args.model, os.environ.get("HP_MODELS", "")]).strip(",")
    problems = startup_problems()
    if problems:
        print("heads-positions serve: cannot start, because of these settings:", *problems, sep="\n  ", file=sys.stderr)
        return 2
    problems = models_opened_apart(model_specs(Settings().models))
    if problems:
        print(*(f"heads-positions serve: cannot serve {line}" for line in problems), sep="\n", file=sys.stderr)
        return 2
    # Workers import torch before they answer the supervisor's ping; two at once on two cores can take
    # longer than uvicorn's 5 s default, and a worker killed for it restarts from scratch.
    # http: uvicorn's httptools protocol plus a deadline for each request to arrive (app/server/http_protocol.py);
    # a string, so each worker imports it itself. The app: create_app in a worker that ends with its
    # supervisor (app/server/worker.py).
    config = Config("app.server.worker:create_worker_app", factory=True, host=args.host, port=args.port,
                    workers=args.workers,
                    http="app.server.http_protocol:RequestDeadlineProtocol",
                    timeout_graceful_shutdown=5, timeout_worker_healthcheck=30)
    # uvicorn.run supervises only from two workers up; with one it serves in this very process, and a
    # crash of that process ends the app. So the supervisor always runs: it holds the socket (connections
    # wait in its backlog meanwhile) and starts a new worker when one dies. It imports no torch
    # (docs/benchmarks.md: its size).
    supervisor = Supervisor(config, sockets=[config.bind_socket()])
    supervisor.run()
    # A worker that could not start (port, weights, app) would fail the same way on every restart.
    return STARTUP_FAILURE if any(p.exitcode == STARTUP_FAILURE for p in supervisor.processes) else 0
