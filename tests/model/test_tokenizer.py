from model import CharTokenizer
from model.tokenizer import UNKNOWN


def test_round_trip_and_save_load(tmp_path):
    tok = CharTokenizer.from_text("白日依山尽，黄河入海流。白日")
    text = "黄河白日"
    assert tok.decode(tok.encode(text)) == text
    tok.save(tmp_path / "vocab.json")
    again = CharTokenizer.load(tmp_path / "vocab.json")
    assert again.chars == tok.chars and again.encode(text) == tok.encode(text)
    assert tok.chars[:2] == ["日", "白"]  # most frequent first, ties broken by character


def test_unknown_characters_are_kept_and_reported():
    tok = CharTokenizer.from_text("白日依山尽")
    enc = tok.encode("白x日😀")
    assert list(enc) == [tok.encode("白")[0], 0, tok.encode("日")[0], 0]
    assert enc.unknown == [False, True, False, True]
    assert enc.unknown_positions == [1, 3]
    assert tok.decode(enc) == f"白{UNKNOWN}日{UNKNOWN}"
    assert tok.vocab_size == 6


def test_max_size_keeps_the_most_frequent():
    tok = CharTokenizer.from_text("aaabbc", max_size=2)
    assert tok.chars == ["a", "b"] and tok.encode("c").unknown == [True]
