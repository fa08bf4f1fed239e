#!/usr/bin/env bash
# Set up and run every test: a venv in .venv, the project with its test extra, ruff, then pytest
# (model, API, deployment files, and the browser tests in Debian's chromium).
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
# redis-server: class mode's Redis tests start a real one (they fail, never skip, without it).
if [ ! -x "$CHROMIUM" ] || ! command -v redis-server >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing Debian's chromium and CJK fonts for the browser tests, and redis-server"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q chromium fonts-noto-cjk redis-server
  else
    echo "The browser tests need chromium: sudo apt-get install chromium fonts-noto-cjk (or set CHROMIUM_PATH)." >&2
    echo "The class mode tests need redis-server: sudo apt-get install redis-server." >&2
    echo "Without them they fail; they never skip." >&2
  fi
fi

[ -d .venv ] || python3 -m venv .venv
. .venv/bin/activate
pip install -q -e '.[test]'
echo "== ruff"
ruff check .
echo "== pytest"
pytest "$@"
