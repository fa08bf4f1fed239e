"""Every setting in one place, read from the environment (prefix HP_), e.g. HP_CACHE_SIZE=0."""

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.domain.model_names import MODEL_NAME
from model.assets import WEIGHTS_DIR, model_name


@dataclass(frozen=True)
class ModelSpec:
    """A model the operator serves beside the shipped ones: `heads-positions serve --model`, or HP_MODELS."""

    name: str
    path: Path
    meta: Path | None = None  # nanoGPT's meta.pkl, when it is not where model.loading looks for it


def model_specs(text: str) -> list[ModelSpec]:
    """Comma-separated PATH, NAME=PATH, or NAME=ckpt.pt,meta=PATH. Raises ValueError, one line naming the entry."""
    specs: list[ModelSpec] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if item.startswith("meta="):
            if not specs or specs[-1].meta is not None:
                raise ValueError(f"{item!r}: meta= follows the checkpoint it belongs to, as NAME=ckpt.pt,meta=PATH")
            specs[-1] = replace(specs[-1], meta=Path(item.removeprefix("meta=")).expanduser())
            continue
        name, given, path = item.partition("=")
        path = Path(path if given else name).expanduser()
        name = name if given else model_name(path)
        if not re.fullmatch(MODEL_NAME, name):
            raise ValueError(f"{item!r}: a model's name is 1 to 40 letters, digits, '_', '.' or '-', starting with a "
                             f"letter or digit (got {name!r}); give one as NAME=PATH")
        if any(spec.name == name for spec in specs):
            raise ValueError(f"{item!r}: the name {name!r} is given twice; name each model as NAME=PATH")
        specs.append(ModelSpec(name, path))
    return specs


def _default_data_dir() -> Path:
    """Where class mode keeps its SQLite file when HP_DATA_DIR is unset: the user's data folder (XDG)."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "heads-positions"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HP_", frozen=True)

    weights_dir: Path = Field(WEIGHTS_DIR, description="Folder with vocab.json, {learned,rope,none}.pt, training.json")
    models: str = Field("", description="Models served beside the shipped ones, comma-separated: PATH, NAME=PATH, or "
                        "NAME=ckpt.pt,meta=PATH (a nanoGPT checkpoint and its meta.pkl). `serve --model` adds to it.")
    max_body_bytes: int = Field(64 * 1024, description="Larger request bodies get 413.")
    response_cache_size: int = Field(512, description="Responses kept per worker for repeated requests; 0 = off.")
    model_cache_size: int = Field(
        16, description="Untrained models kept per worker (3 to 6 MB each): 3 modes x depths 1-4 for one seed fit."
    )
    torch_threads: int = Field(1, description="Intra-op threads per worker: tiny matrices gain nothing from more.")
    model_threads: int = Field(
        1, description="Model runs at once per worker; run one worker per core rather than raising this."
    )
    batch_size: int = Field(
        32, description="Fresh /api/compare requests run together at most, per worker; 1 = each alone."
    )
    batch_wait_ms: float = Field(
        2.0, description="How long a fresh /api/compare request that finds the model idle waits for others."
    )
    rate_limit_per_minute: int = Field(
        0, description="Requests per minute per client address on /api (all workers); 0 = off, since a classroom "
                       "shares one address."
    )
    # Class mode (docs/class-mode.md): where its state lives, and its limits.
    data_dir: Path = Field(default_factory=_default_data_dir,
                           description="Folder of classes.db (SQLite, WAL), shared by the workers of one machine.")
    redis_url: str | None = Field(None, description="redis://host:port/db: classes in Redis, for several replicas.")
    max_classes: int = Field(200, ge=1, description="Classes open at once; one more gets 503 with a message.")
    max_students: int = Field(400, ge=1, description="Students per class; one more gets 409 with a message.")
    class_idle_hours: float = Field(12, gt=0, description="A class with no step, answer or join for this long is gone.")
    class_unjoined_minutes: float = Field(
        30, gt=0, description="A class that no student has joined is gone after this long without a change."
    )
    classes_per_hour: int = Field(
        10, ge=1, description="Classes one address may start in an hour (all workers); one more gets 429. Loopback "
                      "and HP_TEACHER_KEY holders are not counted."
    )
    teacher_key: SecretStr | None = Field(
        None, description="If set, starting a class from another machine needs it (header X-Teacher-Key): for any "
                      "shared server, a container's too."
    )
    join_misses_per_minute: int = Field(
        60, ge=1, description="Unknown class codes per address and minute (all workers) before requests holding no "
                     "token of the class get 429."
    )
    joins_per_minute: int = Field(
        100, ge=1, description="New students per address and minute (all workers, checked and counted at once); "
                      "one more gets 429."
    )
    results_days: float = Field(
        7, gt=0, description="Days an ended class's results are kept for its teacher (a Friday's class is read on "
                             "Monday); DELETE /api/classes/{code} deletes them at once."
    )
    class_poll_ms: int = Field(100, ge=10, description="How often each class's watcher reads SQLite's version column.")
    class_keepalive_seconds: float = Field(
        15, gt=0, le=50, description="Longest silence on a class's event stream; nginx drops one idle for 60 s."
    )
    class_heartbeat_seconds: float = Field(
        1.0, gt=0, description="Between two pings of the class store while a class is watched, per worker."
    )
    class_stall_seconds: float = Field(
        2.5, gt=0, description="A ping of the class store unanswered this long puts every class stream in outage "
                               "(a paused Redis, a SQLite file held locked): with the heartbeat, within about 3.5 s."
    )
    request_timeout_seconds: float = Field(
        10.0, gt=0, description="Each request's head and body must arrive within this long of its first byte, or "
                                "the connection is closed: a client trickling bytes holds a connection no longer."
    )


def startup_problems() -> list[str]:
    """What in the environment would stop every worker's start-up, one line each, named by its variable.

    `serve` asks before it starts a worker: a worker that fails while building the app is restarted again
    and again by the supervisor, each time with a traceback, and one whose start-up fails prints one.
    Imports no PyTorch, as the supervisor must not."""
    try:
        settings = Settings()
    except ValidationError as error:
        return [f"HP_{'_'.join(map(str, e['loc'])).upper()}={e['input']!r}: {e['msg']}" for e in error.errors()]
    problems = []
    try:
        model_specs(settings.models)
    except ValueError as error:
        problems.append(f"HP_MODELS (or --model) {error}")
    if not (settings.weights_dir / "vocab.json").is_file():
        problems.append(f"HP_WEIGHTS_DIR={str(settings.weights_dir)!r}: no vocab.json there "
                        "(the folder must hold vocab.json and the .pt weights)")
    if settings.redis_url is None:  # class mode keeps classes.db in data_dir
        try:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            reason = None if os.access(settings.data_dir, os.W_OK) else "cannot write in this folder"
        except OSError as error:
            reason = f"cannot make this folder ({error.strerror})"
        if reason:
            problems.append(f"HP_DATA_DIR={str(settings.data_dir)!r}: {reason}; class mode keeps classes.db there")
    return problems
