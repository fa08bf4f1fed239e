"""The app as each worker of `heads-positions serve` builds it: one that ends with its supervisor.

A supervisor killed with SIGKILL (or by the out-of-memory killer) cannot stop its workers, and they
would go on serving on its port, out of reach of Ctrl+C and in the way of the next `serve` (its bind
fails). So each worker watches its parent, and stops as on SIGTERM (answering what it has in hand)
once that parent is gone. Ctrl+C and Docker's stop reach the supervisor, which stops the workers itself."""

import os
import signal
import threading
import time

from app.main import create_app

PARENT_CHECK_SECONDS = 1.0


def create_worker_app():
    supervisor = os.getppid()  # the factory runs in the worker, a child of the supervisor
    threading.Thread(target=_stop_without, args=(supervisor,), name="supervisor-watch", daemon=True).start()
    return create_app()


def _stop_without(supervisor: int) -> None:
    # A process whose parent dies is handed to another (init, or a subreaper): its parent id changes.
    while os.getppid() == supervisor:
        time.sleep(PARENT_CHECK_SECONDS)
    os.kill(os.getpid(), signal.SIGTERM)  # uvicorn's handler: finish the requests in hand, then exit
