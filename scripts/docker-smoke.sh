#!/usr/bin/env bash
# Build the image heads-positions:latest and check it on this machine, as a classroom would use it:
#
#   bash scripts/docker-smoke.sh
#
# 1. Find a Docker engine: $DOCKER_HOST or /var/run/docker.sock if one answers; otherwise install docker.io
#    (as root, with apt-get) and start a daemon of our own, with its data, exec root and socket under the
#    cache folder, so that images and build layers survive for the next run.
# 2. Base image: python:3.11-slim, pulled if Docker Hub answers; otherwise made offline by
#    scripts/docker-base-image.sh (debootstrap from the apt mirror) and tagged with that name.
# 3. Build, with the CPU torch wheel from $HP_WHEELS_DIR (/opt/wheels) when it is there and the pip index
#    settings of this machine (read here, passed as build args, never written into a file).
# 4. Run it: wait until healthy; check /healthz, /readyz, POST /api/compare, the page /, its static files
#    and languages, /api/options (trained weights); measure memory; `docker stop` and time it, once
#    while serving and once while still starting; serve a mounted model (HP_MODELS), and stop on one that is not.
#
# Prints each timing, the image size and the DOCKER_HOST used; exits non-zero on any failure. It removes
# only its own container and stops only a daemon it started (by its pidfile).
#
# Environment: HP_IMAGE (heads-positions:latest), HP_CACHE_DIR (/var/cache/heads-positions),
# HP_WHEELS_DIR (/opt/wheels), HP_MAX_IMAGE_MB (1300), HP_HEALTHY_WITHIN (30 s), HP_STOP_WITHIN (10 s),
# HP_KEEP_DOCKERD=1 leaves a daemon this script started running (the next run then reuses it).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IMAGE=${HP_IMAGE:-heads-positions:latest}
WHEELS_DIR=${HP_WHEELS_DIR:-/opt/wheels}
MAX_IMAGE_MB=${HP_MAX_IMAGE_MB:-1300}
HEALTHY_WITHIN=${HP_HEALTHY_WITHIN:-30}
STOP_WITHIN=${HP_STOP_WITHIN:-10}
BASE_IMAGE=python:3.11-slim
export DEBIAN_FRONTEND=noninteractive

if [[ -n ${HP_CACHE_DIR:-} ]]; then
    CACHE=$HP_CACHE_DIR
elif mkdir -p /var/cache/heads-positions 2>/dev/null && [[ -w /var/cache/heads-positions ]]; then
    CACHE=/var/cache/heads-positions
else
    CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/heads-positions
fi
mkdir -p "$CACHE"

T_START=$(date +%s.%N)
STARTED_DOCKERD=""
CONTAINER=""
CONTEXT=""
REPORT=()

log() { printf '[docker-smoke %3ss] %s\n' "$SECONDS" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }
note() { REPORT+=("$(printf '%-28s %s' "$1" "$2")"); log "$1: $2"; }
is_root() { [[ $(id -u) -eq 0 ]]; }

apt_install() {
    is_root || fail "need $* but not root: install them (apt-get install -y $*) or run as root"
    log "apt-get install $*"
    if [[ -z ${APT_UPDATED:-} ]]; then
        apt-get update -q >"$CACHE/apt-update.log" 2>&1 || { tail -n 20 "$CACHE/apt-update.log" >&2; fail "apt-get update"; }
        APT_UPDATED=1
    fi
    apt-get install -y -q --no-install-recommends "$@" >"$CACHE/apt-install.log" 2>&1 \
        || { tail -n 20 "$CACHE/apt-install.log" >&2; fail "apt-get install $*"; }
}

cleanup() {
    local rc=$?
    set +e
    if [[ -n $CONTAINER ]]; then
        if [[ $rc -ne 0 ]]; then
            log "last lines of the container's log:"
            "$DOCKER" logs --tail 30 "$CONTAINER" 2>&1 | sed 's/^/    /' >&2
        fi
        "$DOCKER" rm -f "$CONTAINER" >/dev/null 2>&1
    fi
    [[ -n $CONTEXT ]] && rm -rf "$CONTEXT"
    if [[ -n $STARTED_DOCKERD ]]; then
        if [[ ${HP_KEEP_DOCKERD:-0} == 1 ]]; then
            log "leaving the Docker daemon we started running (pid $(cat "$STARTED_DOCKERD"), HP_KEEP_DOCKERD=1)"
        else
            stop_dockerd "$STARTED_DOCKERD"
        fi
    fi
    log "DOCKER_HOST used: ${DOCKER_HOST:-unix:///var/run/docker.sock}"
    if [[ $rc -eq 0 ]]; then
        note "script wall time" "$(since "$T_START") s"
        printf '\n== docker smoke test: PASS ==\n'
        printf '%s\n' "${REPORT[@]}"
        printf 'DOCKER_HOST=%s\n' "${DOCKER_HOST:-unix:///var/run/docker.sock}"
    else
        printf '\n== docker smoke test: FAIL (exit %s) after %s s ==\n' "$rc" "$(since "$T_START")"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Only one run at a time per cache folder (they would share the daemon and its folders).
exec 9>"$CACHE/smoke.lock"
command -v flock >/dev/null && { flock -w 600 9 || fail "another docker-smoke run holds $CACHE/smoke.lock"; }

# ---- 1. a Docker engine ----------------------------------------------------------------------------------
# The Debian client (/usr/bin/docker, from docker.io) builds with BuildKit; another client on PATH may lack buildx.
pick_client() {
    if [[ -n ${DOCKER:-} ]]; then return; fi
    if [[ -x /usr/bin/docker ]]; then DOCKER=/usr/bin/docker; else DOCKER=$(command -v docker || true); fi
}
pick_client
answers() { [[ -n ${DOCKER:-} ]] && timeout 10 "$DOCKER" version >/dev/null 2>&1; }

stop_dockerd() {
    local pidfile=$1 pid
    pid=$(cat "$pidfile" 2>/dev/null) || return 0
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    log "stopping the Docker daemon we started (pid $pid)"
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
    log "dockerd $pid still running after 30 s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null
}

DOCKERD_DIR=$CACHE/docker
OWN_SOCKET=unix://$DOCKERD_DIR/docker.sock
T0=$(now)
if [[ -n ${DOCKER_HOST:-} ]] && answers; then
    log "using the Docker engine at DOCKER_HOST=$DOCKER_HOST"
elif [[ -z ${DOCKER_HOST:-} ]] && [[ -S /var/run/docker.sock ]] && answers; then
    log "using the Docker engine at /var/run/docker.sock"
elif DOCKER_HOST=$OWN_SOCKET answers; then
    export DOCKER_HOST=$OWN_SOCKET
    log "using a Docker daemon already running on $DOCKER_HOST (not started by this run, so left running)"
else
    if [[ -z ${DOCKER:-} || $DOCKER != /usr/bin/docker ]] || ! command -v dockerd >/dev/null; then
        apt_install docker.io
        DOCKER=""; pick_client
    fi
    is_root || fail "no Docker engine answers, and starting one needs root"
    mkdir -p "$DOCKERD_DIR"
    if [[ -s $DOCKERD_DIR/dockerd.pid ]] && kill -0 "$(cat "$DOCKERD_DIR/dockerd.pid")" 2>/dev/null; then
        fail "dockerd $(cat "$DOCKERD_DIR/dockerd.pid") owns $DOCKERD_DIR but does not answer; stop it first"
    fi
    rm -f "$DOCKERD_DIR/docker.sock" "$DOCKERD_DIR/dockerd.pid"
    log "starting dockerd (data in $DOCKERD_DIR/data)"
    # setsid: the daemon must not get the signals meant for this script's process group.
    setsid dockerd --data-root "$DOCKERD_DIR/data" --exec-root "$DOCKERD_DIR/exec" -H "$OWN_SOCKET" \
        --pidfile "$DOCKERD_DIR/dockerd.pid" </dev/null >"$DOCKERD_DIR/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    export DOCKER_HOST=$OWN_SOCKET
    for _ in $(seq 1 60); do
        answers && break
        kill -0 "$DOCKERD_PID" 2>/dev/null || { tail -n 20 "$DOCKERD_DIR/dockerd.log" >&2; fail "dockerd exited"; }
        sleep 0.5
    done
    answers || { tail -n 20 "$DOCKERD_DIR/dockerd.log" >&2; fail "dockerd did not answer within 30 s"; }
    STARTED_DOCKERD=$DOCKERD_DIR/dockerd.pid
fi
note "engine ready" "$(since "$T0") s"

# ---- 2. the base image -----------------------------------------------------------------------------------
T0=$(now)
if "$DOCKER" image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    log "$BASE_IMAGE is present"
elif timeout 60 "$DOCKER" pull "$BASE_IMAGE" >/dev/null 2>&1; then
    log "pulled $BASE_IMAGE"
else
    log "cannot pull $BASE_IMAGE; making a stand-in offline"
    [[ -s $CACHE/python-3.11-slim-standin.tar ]] || command -v debootstrap >/dev/null || apt_install debootstrap
    DOCKER=$DOCKER HP_CACHE_DIR=$CACHE bash "$ROOT/scripts/docker-base-image.sh" "$BASE_IMAGE"
fi
note "base image" "$(since "$T0") s"

# ---- 3. build --------------------------------------------------------------------------------------------
# The build context: the files of this checkout (tracked, or new and not ignored) plus wheels/ with the
# CPU torch wheel, in a folder of its own, so that no wheel is ever left in the working tree.
TORCH_VERSION=$(sed -n 's/^[[:space:]]*"torch==\([^"]*\)".*/\1/p' "$ROOT/pyproject.toml" | head -n 1)
[[ -n $TORCH_VERSION ]] || fail "no torch==VERSION in pyproject.toml"
CONTEXT=$(mktemp -d "$CACHE/context.XXXXXX")
if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
        [[ -e $f ]] && printf '%s\0' "$f"; done | tar --null -T - -cf - | tar -C "$CONTEXT" -xf -)
else
    tar -C "$ROOT" --exclude=.git --exclude=.corpus-cache --exclude=venv --exclude=.venv -cf - . | tar -C "$CONTEXT" -xf -
fi
# The weights the image must serve: all that are in the build context.
shopt -s nullglob
checkpoints=("$CONTEXT"/model/weights/*.pt)
shopt -u nullglob
EXPECT_TRAINED=$(for c in "${checkpoints[@]}"; do basename "$c" .pt; done | sort | paste -sd, -)
[[ -n $EXPECT_TRAINED ]] || log "WARNING: no model/weights/*.pt in the build context; the image serves untrained models only"
[[ -z $EXPECT_TRAINED ]] || log "trained weights in the build context: $EXPECT_TRAINED"

shopt -s nullglob
torch_wheels=("$WHEELS_DIR"/torch-"$TORCH_VERSION"+cpu-*.whl "$WHEELS_DIR"/torch-"$TORCH_VERSION"-*.whl)
shopt -u nullglob
if [[ ${#torch_wheels[@]} -gt 0 ]]; then
    mkdir -p "$CONTEXT/wheels"
    ln "${torch_wheels[0]}" "$CONTEXT/wheels/" 2>/dev/null || cp "${torch_wheels[0]}" "$CONTEXT/wheels/"
    log "torch from ${torch_wheels[0]}"
else
    log "no torch $TORCH_VERSION wheel in $WHEELS_DIR: the build downloads it from PyTorch's CPU index"
fi

# This machine's pip index settings (environment first, then pip's config files), passed on as build args.
# Local file:// indexes cannot be seen from inside the build and are left out.
mapfile -t PIP_ARGS < <(python3 - <<'EOF'
import configparser, os
from pathlib import Path

files = [Path("/etc/pip.conf"), Path("/etc/xdg/pip/pip.conf"),
         Path.home() / ".pip/pip.conf", Path.home() / ".config/pip/pip.conf"]
if os.environ.get("PIP_CONFIG_FILE"):
    files.append(Path(os.environ["PIP_CONFIG_FILE"]))
config = configparser.ConfigParser(interpolation=None)
config.read([f for f in files if f.is_file()])
for key in ("index-url", "extra-index-url", "trusted-host"):
    env = "PIP_" + key.upper().replace("-", "_")
    value = os.environ.get(env)
    if value is None:
        for section in ("install", "global"):
            if config.has_option(section, key):
                value = config.get(section, key)
                break
    urls = [v for v in (value or "").split() if key == "trusted-host" or v.startswith(("http://", "https://"))]
    if urls:
        print(f"--build-arg={env}={' '.join(urls)}")
EOF
)
[[ ${#PIP_ARGS[@]} -gt 0 ]] && log "pip settings passed to the build: ${PIP_ARGS[*]%%=*}"

# BuildKit, unless the client needs a buildx plugin for it (Docker 23 and later) and has none.
BUILDKIT=1 PROGRESS=(--progress=plain)
if ! "$DOCKER" buildx version >/dev/null 2>&1 \
        && [[ $("$DOCKER" version -f '{{.Client.Version}}' 2>/dev/null | cut -d. -f1) -ge 23 ]]; then
    BUILDKIT=0 PROGRESS=()
fi
T0=$(now)
log "docker build -t $IMAGE (DOCKER_BUILDKIT=$BUILDKIT, log in $CACHE/build.log)"
if ! DOCKER_BUILDKIT=$BUILDKIT "$DOCKER" build "${PROGRESS[@]}" -t "$IMAGE" "${PIP_ARGS[@]}" \
        --build-arg "TORCH_VERSION=$TORCH_VERSION" "$CONTEXT" >"$CACHE/build.log" 2>&1; then
    tail -n 40 "$CACHE/build.log" >&2
    fail "docker build"
fi
note "build" "$(since "$T0") s"
rm -rf "$CONTEXT"; CONTEXT=""
# Old copies of the image pile up in a daemon of our own; a shared daemon is left as it is.
if [[ -n $STARTED_DOCKERD || ${DOCKER_HOST:-} == "$OWN_SOCKET" ]]; then
    log "removing old copies of the image and build cache beyond 3 GB from our own daemon"
    "$DOCKER" image prune -f >/dev/null 2>&1 || true
    "$DOCKER" builder prune -f --keep-storage 3gb >/dev/null 2>&1 || true
fi

SIZE=$("$DOCKER" image inspect -f '{{.Size}}' "$IMAGE")
SIZE_MB=$((SIZE / 1000000))
note "image size" "$SIZE_MB MB ($IMAGE)"
[[ $SIZE_MB -le $MAX_IMAGE_MB ]] || fail "image is $SIZE_MB MB, more than $MAX_IMAGE_MB MB"

# ---- 4. run and check ------------------------------------------------------------------------------------
CONTAINER=hp-smoke-$$
T_RUN=$(now)
# As the README says (docker run -p 8000:8000 heads-positions), but on a free loopback port.
"$DOCKER" run -d --name "$CONTAINER" -p 127.0.0.1::8000 "$IMAGE" >/dev/null || fail "docker run"
HOST_PORT=$("$DOCKER" port "$CONTAINER" 8000/tcp | head -n 1 | sed 's/.*://')
BASE_URL=http://127.0.0.1:$HOST_PORT
log "container $CONTAINER on $BASE_URL"

T_HEALTHZ=""
for _ in $(seq 1 $((HEALTHY_WITHIN * 4 + 40))); do
    [[ $("$DOCKER" inspect -f '{{.State.Running}}' "$CONTAINER") == true ]] || fail "the container exited"
    if [[ -z $T_HEALTHZ ]] && python3 -c "import urllib.request as u, sys; u.urlopen(sys.argv[1], timeout=1)" \
            "$BASE_URL/healthz" 2>/dev/null; then
        T_HEALTHZ=$(since "$T_RUN")
        note "first /healthz answer" "$T_HEALTHZ s after docker run"
    fi
    STATUS=$("$DOCKER" inspect -f '{{.State.Health.Status}}' "$CONTAINER")
    [[ $STATUS == healthy ]] && break
    [[ $STATUS == unhealthy ]] && fail "the container is unhealthy"
    sleep 0.25
done
[[ $STATUS == healthy ]] || fail "not healthy after $HEALTHY_WITHIN s (status: $STATUS)"
T_HEALTHY=$(since "$T_RUN")
note "healthy (docker status)" "$T_HEALTHY s after docker run"
python3 -c "import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))" "$T_HEALTHY" "$HEALTHY_WITHIN" \
    || fail "healthy after $T_HEALTHY s, more than $HEALTHY_WITHIN s"

log "checking the routes"
python3 - "$BASE_URL" "$EXPECT_TRAINED" <<'EOF' || fail "route checks"
import json, re, sys, urllib.error, urllib.request

base, expect_trained = sys.argv[1], [p for p in sys.argv[2].split(",") if p]


def get(path, data=None, headers=None):
    body = None if data is None else json.dumps(data).encode()
    req = urllib.request.Request(base + path, data=body, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.read(), r.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        sys.exit(f"  FAIL {'POST' if data else 'GET'} {path} {data or ''}: HTTP {e.code} {e.read()[:300]!r}")


def check(cond, msg):
    if not cond:
        sys.exit(f"  FAIL {msg}")
    print(f"  ok   {msg}")


body, _ = get("/healthz")
check(json.loads(body).get("status") == "ok", "/healthz says ok")
ready = json.loads(get("/readyz")[0])
check(ready.get("status") == "ready", f"/readyz says ready, trained={ready.get('trained')}")

for position in ("learned", "rope", "none"):
    r = json.loads(get("/api/compare", {"line_a": "白日依山尽", "line_b": "山依日白尽", "position": position})[0])
    keys = {"model", "lines", "difference", "by_depth"}
    check(keys <= r.keys(), f"POST /api/compare ({position}) has {sorted(keys)}")
    check([row["n_layer"] for row in r["by_depth"]] == [1, 2, 3], "  by_depth has 3 rows, 1 to 3 layers")
    check(r["model"]["position"] == position and len(r["lines"]) == 2, "  model and both lines")
    with_pos, without_pos = (r["difference"][k]["max_abs"] for k in ("with_position", "without_position"))
    check(0 < with_pos < 1e3 and 0 <= without_pos < 1e3, f"  reordering changes the output (max_abs {with_pos:.3g})")
    if position == "none":
        check(abs(with_pos - without_pos) < 1e-5, "  no positions: nothing changes when they are removed")

options = json.loads(get("/api/options")[0])
trained = options.get("trained", {})
if expect_trained:
    check(sorted(trained) == sorted(expect_trained), f"/api/options lists the trained weights {sorted(trained)}")
    for position in expect_trained:
        r = json.loads(get("/api/compare", {"line_a": "白日依山尽", "line_b": "山依日白尽", "position": position,
                                           "weights": "trained"})[0])
        check(r["model"]["weights"] == "trained", f"POST /api/compare with trained {position} weights")
else:
    check(trained == {}, "/api/options: no trained weights (none in the build context; WARNING)")

html, ctype = get("/")
page = html.decode()
check(ctype.startswith("text/html") and 'id="line-a"' in page, '/ is HTML with id="line-a"')
# url_for gives absolute URLs (http://host:port/static/...); the paths are what matter here.
links = re.findall(r'(?:src|href)="(?:https?://[^/"]+)?(/[^"#?]*)"', page)
assets = sorted({link for link in links if link.startswith(("/static/", "/vendor/"))})
check(any(a.startswith("/static/") for a in assets), f"the page links its static files: {assets}")
for asset in assets:
    data, _ = get(asset)
    check(len(data) > 0, f"  {asset} ({len(data)} bytes)")
for lang in ("zh", "ja", "fr", "en"):
    texts = json.loads(get(f"/static/i18n/{lang}.json")[0])
    page = get(f"/?lang={lang}")[0].decode()
    check(texts and 'id="line-a"' in page, f"language {lang}: /static/i18n/{lang}.json and /?lang={lang}")
EOF

# Memory once the workers' caches of untrained models are full (the largest shape, one seed per request):
# the container as a whole and each process in it.
python3 - "$BASE_URL" <<'EOF' || fail "the load before measuring memory"
import json, sys, time, urllib.error, urllib.request
from concurrent.futures import ThreadPoolExecutor


def compare(seed):
    body = {"line_a": "白日依山尽黄河入海流", "line_b": "黄河入海流白日依山尽", "position": ("learned", "rope", "none")[seed % 3],
            "weights": "random", "n_layer": 4, "n_head": 8, "seed": seed}
    req = urllib.request.Request(sys.argv[1] + "/api/compare", json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            r.read()
    except urllib.error.HTTPError as e:
        sys.exit(f"  FAIL POST /api/compare {body}: HTTP {e.code} {e.read()[:300]!r}")


start = time.time()
with ThreadPoolExecutor(4) as pool:
    list(pool.map(compare, range(60)))
print(f"  ok   60 requests for distinct large untrained models in {time.time() - start:.1f} s")
EOF
MEM=$("$DOCKER" stats --no-stream --format '{{.MemUsage}}' "$CONTAINER")
note "memory (docker stats)" "$MEM"
PROCS=$("$DOCKER" exec "$CONTAINER" python -c '
import os
for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode().strip()
        rss = [l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:")]
    except OSError:
        continue
    if rss and "/proc/" not in cmd:
        print(f"pid {pid}: {int(rss[0]) / 1024:.0f} MiB RSS  {cmd[:90]}")
')
while IFS= read -r line; do note "  process" "$line"; done <<<"$PROCS"
[[ $("$DOCKER" exec "$CONTAINER" id -u) != 0 ]] || fail "the container runs as root"
note "user in the container" "$("$DOCKER" exec "$CONTAINER" id -un) (uid $("$DOCKER" exec "$CONTAINER" id -u))"

# uvicorn's supervisor kills a worker that does not answer its ping within 5 s while starting (slow
# imports hold the GIL); the start then takes longer. Reported here, not failed.
RESTARTS=$("$DOCKER" logs "$CONTAINER" 2>&1 | grep -c "Child process .* died" || true)
note "worker restarts at start" "$RESTARTS"
[[ $RESTARTS -eq 0 ]] || log "WARNING: uvicorn restarted $RESTARTS worker(s) during start-up (timeout_worker_healthcheck)"

# SIGTERM (docker stop), timed, with docker's own deadline above ours so that a slow stop shows as slow.
stop_timed() {  # $1: the name of this stop in the report
    local t0 t_stop exit_code
    t0=$(now)
    "$DOCKER" stop -t $((STOP_WITHIN + 5)) "$CONTAINER" >/dev/null
    t_stop=$(since "$t0")
    exit_code=$("$DOCKER" inspect -f '{{.State.ExitCode}}' "$CONTAINER")
    note "$1" "$t_stop s, exit code $exit_code"
    python3 -c "import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))" "$t_stop" "$STOP_WITHIN" \
        || fail "$1 took $t_stop s, more than $STOP_WITHIN s"
    [[ $exit_code != 137 ]] || fail "$1: the container was killed (exit 137), not stopped by SIGTERM"
}
stop_timed "docker stop (SIGTERM)"
"$DOCKER" logs "$CONTAINER" 2>&1 | grep -q "Finished server process\|Stopping parent process" \
    || log "WARNING: uvicorn's shutdown message is not in the log"

# The container's health once its HEALTHCHECK is past "starting" (healthy, unhealthy), or "starting" still after
# HEALTHY_WITHIN s and some: for the runs below, which check the app from inside the container.
health_once_started() {
    local status
    for _ in $(seq 1 $((HEALTHY_WITHIN * 4 + 40))); do
        status=$("$DOCKER" inspect -f '{{.State.Health.Status}}' "$CONTAINER")
        [[ $status == starting ]] || break
        sleep 0.25
    done
    echo "$status"
}

# Without any network: the image must need nothing from outside at run time.
"$DOCKER" rm "$CONTAINER" >/dev/null
T0=$(now)
"$DOCKER" run -d --name "$CONTAINER" --network none "$IMAGE" >/dev/null || fail "docker run --network none"
STATUS=$(health_once_started)
[[ $STATUS == healthy ]] || fail "without a network the container is $STATUS"
"$DOCKER" exec "$CONTAINER" python -c '
import json, urllib.request as u
req = u.Request("http://127.0.0.1:8000/api/compare", b"{\"position\": \"rope\"}", {"Content-Type": "application/json"})
assert len(json.load(u.urlopen(req, timeout=30))["by_depth"]) == 3
assert b"line-a" in u.urlopen("http://127.0.0.1:8000/?lang=fr", timeout=30).read()
' || fail "without a network the app does not answer"
note "no network: healthy" "$(since "$T0") s after docker run, and answers"
"$DOCKER" rm -f "$CONTAINER" >/dev/null

# A mounted model, as docs/hosting.md serves one (-v DIR:/models:ro -e HP_MODELS=NAME=/models/FILE): written by
# the image's own PyTorch, so this machine needs none; then a file that is no model stops the container, exit 2.
MODELS_DIR=$(mktemp -d "$CACHE/models.XXXXXX")
chmod 755 "$MODELS_DIR"
"$DOCKER" run --rm --user "$(id -u):$(id -g)" -v "$MODELS_DIR":/out "$IMAGE" python -c '
from model.checkpoint import save_checkpoint
from model.gpt import GPT, GPTConfig
from model.tokenizer import CharTokenizer
tok = CharTokenizer("abcdefghijklmnopqrstuvwxyz ")
model = GPT(GPTConfig(vocab_size=tok.vocab_size, n_layer=3, n_head=2, n_embd=32))
save_checkpoint("/out/mine.pt", model, tok, meta={"val_loss": 2.5})
' || fail "writing a model to mount"
chmod 644 "$MODELS_DIR/mine.pt"
T0=$(now)
"$DOCKER" run -d --name "$CONTAINER" -v "$MODELS_DIR":/models:ro -e HP_MODELS=mine=/models/mine.pt "$IMAGE" \
    >/dev/null || fail "docker run -v $MODELS_DIR:/models:ro -e HP_MODELS=mine=/models/mine.pt"
STATUS=$(health_once_started)
[[ $STATUS == healthy ]] || fail "with a mounted model the container is $STATUS"
"$DOCKER" exec "$CONTAINER" python -c '
import json, urllib.request as u
models = json.load(u.urlopen("http://127.0.0.1:8000/api/options", timeout=30))["models"]
assert [(m["name"], m["n_layer"], m["n_head"], m["val_loss"]) for m in models] == [("mine", 3, 2, 2.5)], models
body = json.dumps({"model": "mine", "line_a": "the dog bit", "line_b": "bit the dog"}).encode()
req = u.Request("http://127.0.0.1:8000/api/compare", body, {"Content-Type": "application/json"})
answer = json.load(u.urlopen(req, timeout=30))
assert answer["model"]["name"] == "mine" and len(answer["lines"][0]["attention"]) == 3, answer["model"]
' || fail "the mounted model is not served"
note "mounted model (HP_MODELS)" "healthy $(since "$T0") s after docker run; /api/options and /api/compare serve it"
"$DOCKER" rm -f "$CONTAINER" >/dev/null
echo "not a model" >"$MODELS_DIR/bad.pt"
chmod 644 "$MODELS_DIR/bad.pt"
"$DOCKER" run --name "$CONTAINER" -v "$MODELS_DIR":/models:ro -e HP_MODELS=/models/bad.pt "$IMAGE" \
    >/dev/null 2>"$MODELS_DIR/refused.log" && fail "a mounted file that is no model did not stop the container"
REFUSED=$("$DOCKER" inspect -f '{{.State.ExitCode}}' "$CONTAINER")
[[ $REFUSED == 2 ]] || fail "a mounted file that is no model: exit code $REFUSED, not 2"
grep -q "/models/bad.pt: not a PyTorch checkpoint" "$MODELS_DIR/refused.log" \
    || fail "a mounted file that is no model: the log does not name it ($(cat "$MODELS_DIR/refused.log"))"
note "mounted file that is no model" "exit 2: $(grep -m1 bad.pt "$MODELS_DIR/refused.log")"
"$DOCKER" rm -f "$CONTAINER" >/dev/null
rm -rf "$MODELS_DIR"

# docker stop while it is still starting (Python importing torch has no SIGTERM handler of its own yet).
"$DOCKER" run -d --name "$CONTAINER" "$IMAGE" >/dev/null || fail "docker run"
sleep 1
stop_timed "docker stop while starting"
