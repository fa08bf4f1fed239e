"""What the class-mode browser tests share (tests/e2e/test_class*.py): their own served app, and waits on what
the class panel says. It lives beside class_servers.py, on pytest's pythonpath."""

import tempfile
from contextlib import contextmanager

from class_servers import served


@contextmanager
def class_app():
    """An app of the module's own: class tests start more classes from 127.0.0.1 than HP_CLASSES_PER_HOUR's
    default 10 allows one address, and keep them in a folder of their own. Yields its URL."""
    with tempfile.TemporaryDirectory(prefix="hp-class-e2e-") as folder, \
            served({"HP_DATA_DIR": folder, "HP_CLASSES_PER_HOUR": "1000"}) as server:
        yield server.url


def wait_panel(page, tools, name: str, value: str, timeout: float = 20) -> None:
    tools.wait_until(page, "([name, value]) => document.querySelector('#class-panel').dataset[name] === value",
                     [name, value], timeout=timeout, message=f"the class panel's {name} never became {value!r}")


def wait_connection(page, tools, state: str, timeout: float = 20) -> None:
    tools.wait_until(page, "(s) => { const n = document.querySelector('[data-class-connection]');"
                           " return !n.hidden && n.dataset.classConnection === s; }", state, timeout=timeout,
                     message=f"the page never said {state!r}")
