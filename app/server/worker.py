"""The app as each worker of `heads-positions serve` builds it: one that ends with its supervisor.

A supervisor killed with SIGKILL cannot stop its workers, and they would go on serving on its port,
in the way of the next `serve` (its bind fails). So each worker watches its parent, and stops as on
SIGTERM (answering what it has in hand) once that parent is gone. When the supervisor is stopped
properly (SIGTERM, Docker's stop, Ctrl+C), it stops the workers itself."""

import os
import signal
import threading
import time
from multiprocessing import parent_process

from app.main import create_app

PARENT_CHECK_SECONDS = 1.0


def create_worker_app():
    # The supervisor's pid as the supervisor itself recorded it when it made this worker: a worker takes
    # seconds to import torch, and a supervisor killed meanwhile has already left it to another parent.
    supervisor = parent_process()
    if supervisor is not None:
        threading.Thread(target=_stop_without, args=(supervisor.pid,), name="supervisor-watch", daemon=True).start()
    return create_app()


def _stop_without(supervisor: int) -> None:
    # A process whose parent dies is handed to another (init, or a subreaper): its parent id changes.
    while os.getppid() == supervisor:
        time.sleep(PARENT_CHECK_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)  # uvicorn's handler: finish the requests in hand, then exit
