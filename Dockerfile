# Heads & Positions for a classroom: the whole app, trained weights and all four languages, on port 8000.
#
#   docker build -t heads-positions .
#   docker run -p 8000:8000 heads-positions          # then open http://localhost:8000
#
# Settings come from the environment: PORT (8000), WORKERS (2, one per core), and HP_* (see app/settings.py),
# e.g. `docker run -p 9000:9000 -e PORT=9000 -e WORKERS=4 heads-positions`. Nothing is fetched at run time.
#
# torch is the CPU build (no CUDA, no nvidia-* packages), taken by default from PyTorch's CPU wheel index.
# Behind a mirror or offline, either put wheels in ./wheels/ (a torch wheel there is installed instead of
# the index's) or pass build args: TORCH_INDEX_URL, PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_TRUSTED_HOST.
# scripts/docker-smoke.sh builds with ./wheels/ (from /opt/wheels) and this machine's pip settings as build args.

# ---- build: a virtualenv with the CPU torch, the app's dependencies and the app ---------------------------
FROM python:3.11-slim AS build

ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
# pip reads these from the environment when they are given; they are empty otherwise.
ARG PIP_INDEX_URL
ARG PIP_EXTRA_INDEX_URL
ARG PIP_TRUSTED_HOST
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PATH=/opt/venv/bin:$PATH

RUN python -m venv /opt/venv \
 && pip install --upgrade pip

# 1. torch, CPU only. `wheel[s]` matches ./wheels/ when it exists; pyproject.toml keeps the COPY valid when not.
#    From the index, `+cpu` pins the CPU build even if another index (PIP_EXTRA_INDEX_URL) offers CUDA's.
#    Then drop what only serves to build C++ extensions: headers, CMake files and C++ test programs (~110 MB).
COPY pyproject.toml wheel[s] /tmp/wheels/
RUN set -eu; \
    wheel=$(ls /tmp/wheels/torch-"${TORCH_VERSION}"*.whl 2>/dev/null | head -n 1 || true); \
    if [ -n "$wheel" ]; then \
        echo "torch from $wheel"; \
        pip install --find-links /tmp/wheels "$wheel"; \
    else \
        echo "torch from $TORCH_INDEX_URL"; \
        pip install --index-url "$TORCH_INDEX_URL" "torch==${TORCH_VERSION}+cpu"; \
    fi; \
    if pip list 2>/dev/null | grep -i nvidia; then echo "a CUDA package slipped in" >&2; exit 1; fi; \
    torch_dir=/opt/venv/lib/python3.11/site-packages/torch; \
    rm -rf "$torch_dir/include" "$torch_dir/share/cmake"; \
    find "$torch_dir/bin" -mindepth 1 ! -name torch_shm_manager -exec rm -rf {} +; \
    rm -rf /tmp/wheels/pyproject.toml

# 2. The other dependencies, pinned by the lock file alone (scripts/lock.sh) so that this layer survives code
# changes, and the image runs the versions CI tested (requirements/test.lock holds the same pins).
COPY requirements/serve.lock /tmp/requirements.txt
RUN pip install --find-links /tmp/wheels -r /tmp/requirements.txt \
 && python -c "import torch; assert torch.version.cuda is None, 'torch is a CUDA build'; print('torch', torch.__version__)"

# 3. The app. Editable, because app/main.py finds templates/ and static/ beside app/, here /app.
COPY . /app/
WORKDIR /app
RUN rm -rf /app/wheels \
 && (test -f README.md || echo "# heads-positions" > README.md) \
 && pip install --no-deps --no-build-isolation --editable . \
 && python -m compileall -q app model \
 && heads-positions --help >/dev/null

# ---- run: the virtualenv and the source tree, as a user without a password or a shell --------------------
FROM python:3.11-slim

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PORT=8000 \
    WORKERS=2 \
    HP_DATA_DIR=/data

# tini as PID 1 passes SIGTERM on to uvicorn. Without it, a `docker stop` in the first seconds, while
# Python still imports torch and has no handler yet, is dropped (the kernel ignores default-handled
# signals sent to PID 1) and docker kills the container 10 s later.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && groupadd --system --gid 10001 app \
 && useradd --system --uid 10001 --gid app --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin app \
 && install -d -o 10001 -g 10001 /data

COPY --from=build /opt/venv /opt/venv
COPY --from=build /app /app
WORKDIR /app

# Class mode's SQLite file (classes.db): a volume, so a class outlives `docker restart` and a new image.
VOLUME /data

# Numeric, so that Kubernetes' runAsNonRoot can check it.
USER 10001:10001
EXPOSE 8000

# Alive means /healthz answers; it does once the models are loaded, several seconds after the start.
# Failures in the first 60 s do not count; one success counts at once.
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as u; u.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=2)"]

# Exec form, so that uvicorn gets SIGTERM from tini (it stops within its 5 s graceful timeout).
# PORT and WORKERS come from the environment above, read by `heads-positions serve`.
ENTRYPOINT ["tini", "--"]
CMD ["heads-positions", "serve", "--host", "0.0.0.0"]
