"""Where the files that ship with the package live: vocabulary, checkpoints, results."""

from pathlib import Path

WEIGHTS_DIR = Path(__file__).parent / "weights"
VOCAB_PATH = WEIGHTS_DIR / "vocab.json"
TRAINING_RESULTS_PATH = WEIGHTS_DIR / "training.json"


def checkpoint_path(position: str, weights_dir: Path = WEIGHTS_DIR) -> Path:
    return weights_dir / f"{position}.pt"
