"""Every setting in one place, read from the environment (prefix HP_), e.g. HP_CACHE_SIZE=0."""

import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from model.assets import WEIGHTS_DIR


def _default_data_dir() -> Path:
    """Where class mode keeps its SQLite file when HP_DATA_DIR is unset: the user's data folder (XDG)."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "heads-positions"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HP_", frozen=True)

    weights_dir: Path = Field(WEIGHTS_DIR, description="Folder with vocab.json, {learned,rope,none}.pt, training.json")
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
        0, description="Requests per minute per client address on /api; 0 = off, since a classroom shares one address."
    )
    # Class mode (README "Class mode"): where its state lives, and its limits.
    data_dir: Path = Field(default_factory=_default_data_dir,
                           description="Folder of classes.db (SQLite, WAL), shared by the workers of one machine.")
    redis_url: str | None = Field(None, description="redis://host:port/db: classes in Redis, for several replicas.")
    max_classes: int = Field(200, ge=1, description="Classes open at once; one more gets 503 with a message.")
    max_students: int = Field(400, ge=1, description="Students per class; one more gets 409 with a message.")
    class_idle_hours: float = Field(12, gt=0, description="A class with no step, answer or join for this long is gone.")
    join_misses_per_minute: int = Field(
        60, ge=1, description="Unknown class codes per address and minute (per worker) before its joins get 429."
    )
    class_poll_ms: int = Field(100, ge=10, description="How often each class's watcher reads SQLite's version column.")
