"""Test tiers. The fast tier is `pytest -m "not slow and not e2e"`; scripts/test.sh runs it first, then the
rest. Every test in tests/e2e drives a browser and must carry the e2e mark, or the fast tier would start
chromium: a test file there without it stops the run at collection, naming the file.

scripts/test.sh runs each tier in parallel processes (pytest-xdist, `--dist loadfile`: a file's tests stay in one
process, so its module fixtures, servers included, start once). A process takes the next file when it is free, so
the files that take minutes go first: started last, one of them would run alone at the end while the others
wait."""

from pathlib import Path

import pytest

E2E = Path(__file__).parent / "e2e"
# Measured with --durations (docs/benchmarks.md, "The test suite"): the files whose tests take longest, longest first.
LONGEST_FIRST = (
    "model/test_snapshots.py", "app/test_gaps.py", "e2e/test_referee.py", "e2e/test_aborts.py",
    "app/test_class_limits_served.py", "app/test_operator_models.py", "app/test_class_processes.py",
    "app/test_faults.py", "e2e/test_panels.py", "e2e/test_layout.py", "e2e/test_lesson.py", "model/test_heads.py",
)


def pytest_collection_modifyitems(config, items):
    unmarked = sorted({str(item.path.relative_to(E2E.parent.parent)) for item in items
                       if item.path.is_relative_to(E2E) and item.get_closest_marker("e2e") is None})
    if unmarked:
        raise pytest.UsageError("browser tests without the e2e mark (add pytestmark = pytest.mark.e2e): "
                                + ", ".join(unmarked))
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.relative_to(E2E.parent).as_posix(), len(rank)))  # stable
