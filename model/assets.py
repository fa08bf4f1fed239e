"""Where the files that ship with the package live: vocabulary, checkpoints, results."""

from pathlib import Path

WEIGHTS_DIR = Path(__file__).parent / "weights"
VOCAB_PATH = WEIGHTS_DIR / "vocab.json"
TRAINING_RESULTS_PATH = WEIGHTS_DIR / "training.json"


def checkpoint_path(position: str, weights_dir: Path = WEIGHTS_DIR) -> Path:
    return weights_dir / f"{position}.pt"

# The shipped runs' length (scripts/train_all.py), whose last step is the shipped checkpoint itself; and the steps
# after which scripts/train_snapshots.py keeps their weights.
SHIPPED_RUN_STEPS = 10000
SNAPSHOT_STEPS = (100, 250, 500, 1000, 2000, 3000)
SNAPSHOTS_DIR = WEIGHTS_DIR / "snapshots"
SNAPSHOTS_PATH = WEIGHTS_DIR / "snapshots.json"  # their heads measured as heads.json measures the shipped ones


def snapshot_path(position: str, step: int, snapshots_dir: Path = SNAPSHOTS_DIR) -> Path:
    return snapshots_dir / f"{position}-{step:05d}.pt"


def model_name(path: Path) -> str:
    """The name a model file is listed under when none is given: its stem, or for nanoGPT's ckpt.pt (every run's
    file has that name) its folder's, e.g. out-shakespeare-char."""
    return path.stem if path.stem != "ckpt" else (path.resolve().parent.name or "nanogpt")
