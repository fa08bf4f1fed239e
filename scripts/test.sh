#!/usr/bin/env bash
# Set up and run every test: a venv in .venv, the project with its test extra, ruff, node --test (the page's pure
# modules), then pytest in three tiers: the fast tier first (pytest -m "not slow and not e2e"), then the slow one
# (servers in subprocesses, Redis, long runs), then the browser tests in Debian's chromium. Arguments go to both runs, e.g.
# `bash scripts/test.sh -q` or `bash scripts/test.sh tests/app`. A failing tier stops the script with
# pytest's exit code.
# Each tier runs in parallel processes (pytest-xdist), a file to a process at a time (--dist loadfile): the fast
# tier in one per core, the others in HP_TEST_PROCESSES (4), since much of their time is spent waiting on servers
# and browsers rather than computing. The browser tests are a tier of their own: Playwright's sync API keeps an event
# loop running in its process, where a later asyncio.run() of a server test would fail.
# `bash scripts/test.sh -n 0` runs everything in one process.
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
# redis-server: class mode's Redis tests start a real one (they fail, never skip, without it).
# node: the page's pure modules are tested without a browser (node --test tests/js).
if [ ! -x "$CHROMIUM" ] || ! command -v redis-server >/dev/null || ! command -v node >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing Debian's chromium and CJK fonts for the browser tests, and redis-server"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q chromium fonts-noto-cjk redis-server
    command -v node >/dev/null || apt-get install -y -q nodejs
  else
    echo "The browser tests need chromium: sudo apt-get install chromium fonts-noto-cjk (or set CHROMIUM_PATH)." >&2
    echo "The class mode tests need redis-server: sudo apt-get install redis-server." >&2
    echo "The page's module tests need node: sudo apt-get install nodejs." >&2
    echo "Without them they fail; they never skip." >&2
  fi
fi

# Bytecode caches on for this run, even where the shell turns them off (PYTHONDONTWRITEBYTECODE=1 on this
# machine): otherwise each of the ten pytest processes rewrote the asserts of every test module again and every
# server a test starts compiled the app again (collecting the fast tier: 15 s of CPU per process without the
# caches, 6 s with them).
unset PYTHONDONTWRITEBYTECODE

[ -d .venv ] || python3 -m venv .venv
. .venv/bin/activate
# The pinned versions (scripts/lock.sh), then the project itself: what CI tests is what the image runs.
# --no-compile: pip would compile every installed module (20 of a fresh venv's 50 s, most of it torch's); the
# tests import a small part of them, and Python compiles and caches those on first import.
pip install -q --no-compile -r requirements/test.lock
# The lock holds setuptools, the project's build backend: no isolated build environment to set up (2.5 s).
pip install -q --no-deps --no-build-isolation -e .
# While ruff and node run, one process imports what the test processes import, compiling it once (see
# --no-compile above): otherwise the fast tier's processes each compiled the same modules of torch at once. Torch
# imports some only when first used: the optimizer loads torch._dynamo, and torch.testing.assert_close loads
# torch.distributed.tensor and sympy (about 800 modules; a fresh clone's fast tier took 37.6 s, 27.4 s once compiled).
# Then it collects the fast tier, which writes its test modules as pytest rewrites them (assert messages), once.
warm_up() {
  python -W ignore -c "import app.main, model.train, fastapi.testclient, httpx, jsonschema, numpy, pytest, redis, \
schemathesis, segno, yaml, playwright.sync_api, torch._dynamo, torch.distributed.tensor, sympy"
  # A collection error here is the fast tier's to report, with its test's name: not this step's.
  pytest -q --collect-only -m "not slow and not e2e" --ignore=tests/e2e -p no:schemathesis -p no:hypothesispytest \
    >/dev/null 2>&1 || true
}
warm_up &
compiling=$!
echo "== ruff"
ruff check .
echo "== node --test: the page's pure modules"
node --test tests/js/
wait "$compiling"
# pytest exits 5 when it selects no test. One tier may have none among the paths asked for (tests/model
# has no browser test), so that alone is no failure; every tier empty means nothing ran, which is one.
ran=0
tier() {
  local name=$1 marks=$2 code=0
  shift 2
  echo "== pytest, $name: -m \"$marks\""
  pytest -m "$marks" "$@" || code=$?
  case $code in
    0) ran=1 ;;
    5) echo "(no $name tests among these paths)" ;;
    *) exit "$code" ;;
  esac
}
# Every browser test lives in tests/e2e (tests/conftest.py stops a run on one without the mark), so the other
# tiers leave that folder out, and the browser tier collects only it unless paths are given: each process no
# longer imports the other tiers' modules to deselect them.
paths=()
for arg in "$@"; do
  if [[ "$arg" != -* && ( -e "${arg%%::*}" ) ]]; then paths+=("$arg"); fi
done
browser_paths=()
[ "${#paths[@]}" = 0 ] && browser_paths=(tests/e2e)
# Only the slow tier's schema fuzzing (tests/app/test_fuzz.py) uses schemathesis and hypothesis: the other tiers
# leave their pytest plugins unloaded (0.3 s of CPU in each test process).
without_fuzzer=(-p no:schemathesis -p no:hypothesispytest)
tier "fast tier" "not slow and not e2e" -n auto --dist loadfile --ignore=tests/e2e "${without_fuzzer[@]}" "$@"
# The slow and browser tiers name their 15 longest tests: where the next minute of the suite is to be found.
tier "slow tier" "slow and not e2e" -n "${HP_TEST_PROCESSES:-4}" --dist loadfile --durations 15 --ignore=tests/e2e "$@"
tier "browser tier" "e2e" -n "${HP_TEST_PROCESSES:-4}" --dist loadfile --durations 15 "${without_fuzzer[@]}" \
  "${browser_paths[@]}" "$@"
if [ "$ran" = 0 ]; then
  echo "no test ran" >&2
  exit 5
fi
