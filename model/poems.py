"""The shipped poems as the models read them: the split files in model/data/, checked against corpus.json.
Standard library only: the served app reads the validation poems (to probe an untrained model) and must not load
the corpus builder (model/corpus.py)."""

import hashlib
import json
import lzma
from pathlib import Path

from model.errors import DataError

DATA_DIR = Path(__file__).resolve().parent / "data"


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_info(data_dir: str | Path = DATA_DIR) -> dict:
    return json.loads((Path(data_dir) / "corpus.json").read_text(encoding="utf-8"))


def load_text(split: str, data_dir: str | Path = DATA_DIR) -> str:
    """One shipped split, checked against corpus.json so a changed file cannot pass silently."""
    info = load_info(data_dir)[split]
    text = lzma.decompress((Path(data_dir) / info["file"]).read_bytes()).decode("utf-8")
    if sha256(text) != info["sha256"]:
        raise DataError(f"{info['file']} does not match the sha256 in corpus.json; rebuild it with "
                         "`heads-positions corpus`")
    return text
