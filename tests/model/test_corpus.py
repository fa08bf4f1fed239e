"""The corpus: built from a tiny tarball made here, and the shipped files checked against corpus.json."""

import argparse
import io
import json
import tarfile
from pathlib import Path

import pytest

from app.commands import corpus as corpus_command
from model.corpus import (
    VOCAB_PATH,
    build_corpus,
    build_vocab,
    is_validation,
    load_vocab,
    read_package,
    write_corpus,
)
from model.poems import DATA_DIR, load_info, load_text

# Traditional characters with a different simplified form: 壯->壮, 綺->绮, 離->离, 連->连, 飛->飞, 觀->观.
POEMS = {
    0: [{"author": "太宗皇帝", "title": "帝京篇",
         "paragraphs": ["秦川雄帝宅，函谷壯皇居。", "綺殿千尋起，離宮百雉餘。"]},
        {"author": "無名", "title": "空", "paragraphs": []}],
    1000: [{"author": "甲", "title": "一", "paragraphs": ["連甍遙接漢，飛觀迥凌虛。"]}],
    2000: [{"author": "乙", "title": "二", "paragraphs": ["二千"]}],
    10000: [{"author": "丙", "title": "三", "paragraphs": ["一万"]}],
}


def add(tar: tarfile.TarFile, name: str, data) -> None:
    raw = json.dumps(data, ensure_ascii=False).encode("utf-8")
    info = tarfile.TarInfo(name)
    info.size = len(raw)
    tar.addfile(info, io.BytesIO(raw))


@pytest.fixture
def tarball(tmp_path: Path) -> Path:
    """The npm package's layout, with files that must be skipped and the poem files out of numeric order."""
    path = tmp_path / "chinese-poetry-2.0.1.tgz"
    with tarfile.open(path, "w:gz") as tar:
        add(tar, "package/package.json", {"name": "chinese-poetry", "version": "2.0.1"})
        for number in (10000, 2000, 1000, 0):
            add(tar, f"package/dist/quantangshi/poet.tang.{number}.json", POEMS[number])
        add(tar, "package/dist/quantangshi/error/poet.tang.0.json", [{"paragraphs": ["错误"]}])
        add(tar, "package/dist/quantangshi/poet.song.0.json", [{"paragraphs": ["宋诗"]}])
    return path


def test_reads_tang_files_in_numeric_order_and_skips_the_rest(tarball):
    package, poems = read_package(tarball)
    assert package["version"] == "2.0.1"
    assert [p["paragraphs"] for p in poems] == [p["paragraphs"] for n in (0, 1000, 2000, 10000) for p in POEMS[n]]


def test_converts_to_simplified_one_line_per_poem_and_drops_empty(tarball):
    corpus = build_corpus(read_package(tarball)[1])
    lines = corpus.train + corpus.val
    assert "秦川雄帝宅，函谷壮皇居。绮殿千寻起，离宫百雉余。" in lines
    assert "连甍遥接汉，飞观迥凌虚。" in lines
    assert corpus.dropped == 1 and len(lines) == 4
    assert corpus.text("train").count("\n") == len(corpus.train)


def test_split_is_by_poem_deterministic_and_about_five_percent():
    poems = [{"paragraphs": [f"第{i}首，山水{i % 7}。"]} for i in range(2000)]
    corpus = build_corpus(poems)
    assert build_corpus(poems) == corpus
    texts = [p["paragraphs"][0] for p in poems]
    assert sorted(corpus.train + corpus.val) == sorted(texts)  # every poem whole, on one side only
    assert corpus.val == [t for i, t in enumerate(texts) if is_validation(i, t)]
    assert 0.03 < len(corpus.val) / len(texts) < 0.07


def test_vocab_keeps_the_line_break_and_maps_the_rest_to_unknown():
    tokenizer = build_vocab("山山山水水风\n", size=2)
    assert tokenizer.chars == ["山", "\n"]  # "\n" is rarer than 水, and kept anyway
    assert tokenizer.vocab_size == 3
    assert tokenizer.encode("山水\n") == [1, 0, 2]


def test_written_files_load_back_and_are_checked(tarball, tmp_path):
    package, poems = read_package(tarball)
    corpus = build_corpus(poems)
    out = tmp_path / "data"
    info = write_corpus(corpus, package, out, tmp_path / "vocab.json")
    assert (info["source"]["npm_package"], info["source"]["version"]) == ("chinese-poetry", "2.0.1")
    for split in ("train", "val"):
        assert load_text(split, out) == corpus.text(split)
        assert info[split]["poems"] == len(getattr(corpus, split))
    assert "\n" in load_vocab(tmp_path / "vocab.json").chars
    info["train"]["sha256"] = "0" * 64
    (out / "corpus.json").write_text(json.dumps(info), encoding="utf-8")
    with pytest.raises(ValueError, match="does not match"):
        load_text("train", out)


def test_command_builds_from_a_tarball(tarball, tmp_path, capsys):
    parser = argparse.ArgumentParser()
    corpus_command.add_parser(parser.add_subparsers())
    args = parser.parse_args(["corpus", "--tarball", str(tarball), "--out", str(tmp_path), "--vocab",
                              str(tmp_path / "vocab.json")])
    args.run(args)
    printed = capsys.readouterr().out
    assert "chinese-poetry@2.0.1: 5 poems read, 1 empty dropped" in printed
    assert load_info(tmp_path)["train"]["sha256"] in printed


def test_shipped_corpus_matches_its_record():
    info = load_info()
    assert info["source"]["npm_package"] == "chinese-poetry"
    assert info["train"]["poems"] + info["val"]["poems"] + info["dropped_empty_poems"] == 57607
    assert sum((DATA_DIR / info[s]["file"]).stat().st_size for s in ("train", "val")) <= 6_000_000
    val = load_text("val")  # checks the sha256
    assert len(val) == info["val"]["characters"] and val.count("\n") == info["val"]["poems"]
    tokenizer = load_vocab(VOCAB_PATH)
    assert tokenizer.vocab_size == 4001 and "\n" in tokenizer.chars
