"""Test tiers. The fast tier is `pytest -m "not slow and not e2e"`; scripts/test.sh runs it first, then the
rest. Every test in tests/e2e drives a browser and must carry the e2e mark, or the fast tier would start
chromium: a test file there without it stops the run at collection, naming the file."""

import os
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression  # pytest's own reader of -m, so an expression means what -m means

E2E = Path(__file__).parent / "e2e"
# Modules of slow tests only whose collection alone costs seconds: schemathesis builds the cases of test_fuzz.py's
# 39 operations as the module is collected (1.4 s of CPU in each test process of the fast tier, which then
# deselected them all). A run whose -m leaves out a test marked slow does not collect them.
SLOW_TO_COLLECT = {Path(__file__).parent / "app" / "test_fuzz.py"}

# numpy's OpenBLAS starts a thread per core and spins them while waiting: on two cores shared with other test
# processes, browsers and servers, ten windows of the float64 reference GPT took 2.8 s of CPU (10 s of wall time)
# instead of 0.28 s (1.4 s) with one thread. Read when numpy loads, which no plugin does before this file; the
# servers and pytest-xdist processes the tests start inherit it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def pytest_configure(config):
    """One torch thread in every test process, as the app's own default (HP_TORCH_THREADS=1). Under pytest-xdist,
    scripts/test.sh runs four processes on a two-core machine, and torch's default (a thread per core in each) made
    eight threads contend for two cores: the whole-split snapshot check, set to two threads, took 1,364 s of wall
    time in a loaded run; it needs 103 s of CPU in one thread. And the float64 reruns' last bits depend on the
    thread count (a sum split across threads): a test process's own runs must be made as the app makes them."""
    import torch  # here, not at the top: the environment above is set before numpy loads

    torch.set_num_threads(1)


def pytest_ignore_collect(collection_path, config):
    if collection_path not in SLOW_TO_COLLECT or not config.option.markexpr:
        return None
    if "\npytestmark = pytest.mark.slow" not in collection_path.read_text(encoding="utf-8"):
        raise pytest.UsageError(f"{collection_path.name} is left out of runs without the slow tests, so it must "
                                "mark them all: pytestmark = pytest.mark.slow")
    slow_only_selected = Expression.compile(config.option.markexpr).evaluate(lambda name, **_: name == "slow")
    return None if slow_only_selected else True


@pytest.hookimpl(tryfirst=True)  # before -m deselects: `-m e2e` would otherwise drop an unmarked file unseen
def pytest_collection_modifyitems(config, items):
    unmarked = sorted({str(item.path.relative_to(E2E.parent.parent)) for item in items
                       if item.path.is_relative_to(E2E) and item.get_closest_marker("e2e") is None})
    if unmarked:
        raise pytest.UsageError("browser tests without the e2e mark (add pytestmark = pytest.mark.e2e): "
                                + ", ".join(unmarked))
