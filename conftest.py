"""For every test: class mode keeps classes.db in HP_DATA_DIR, so the tests get a folder of their own,
not the user's data folder (the served app in tests/e2e inherits it too)."""

import atexit
import os
import shutil
import tempfile

if "HP_DATA_DIR" not in os.environ:
    os.environ["HP_DATA_DIR"] = tempfile.mkdtemp(prefix="hp-test-data-")
    atexit.register(shutil.rmtree, os.environ["HP_DATA_DIR"], ignore_errors=True)
