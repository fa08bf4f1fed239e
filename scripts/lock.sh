#!/usr/bin/env bash
# Write the lock files from pyproject.toml: requirements/serve.lock (what the Docker image installs) and
# requirements/test.lock (what scripts/test.sh, and so CI, installs: the test and train extras too). Run it after
# changing a dependency; tests/deploy/test_lock.py fails while a lock no longer satisfies pyproject.toml.
# torch resolves to the CPU build (2.13.0+cpu: pip's find-links here, PyTorch's CPU index elsewhere), never CUDA's.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=$(mktemp -d)
python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install -q pip-tools
compile() {
  "$tools/venv/bin/pip-compile" -q --strip-extras --unsafe-package heads-positions --no-emit-index-url \
    --no-emit-find-links "$@" pyproject.toml
}
compile -o requirements/serve.lock
compile --extra test --extra train -o requirements/test.lock
rm -rf "$tools"
if grep -qi '^nvidia' requirements/*.lock; then echo "a CUDA package is in a lock file" >&2; exit 1; fi
