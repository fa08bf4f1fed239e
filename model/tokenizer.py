"""One id per character, with an explicit unknown id so no character is ever dropped."""

import json
from collections import Counter
from pathlib import Path

UNKNOWN = "\ufffd"  # U+FFFD REPLACEMENT CHARACTER stands for every character outside the vocabulary


class Encoding(list):
    """The ids, as a plain list (so torch.tensor([tok.encode(s)]) works as in the lesson),
    plus .unknown: one flag per character, True where it mapped to the unknown id."""

    def __init__(self, ids, unknown):
        super().__init__(ids)
        self.unknown = unknown

    @property
    def unknown_positions(self) -> list[int]:
        return [i for i, flag in enumerate(self.unknown) if flag]


class CharTokenizer:
    """id 0 is the unknown id; ids 1.. are the vocabulary's characters in order."""

    unknown_id = 0

    def __init__(self, chars):
        chars = list(chars)
        if len(set(chars)) != len(chars):
            raise ValueError("chars must not repeat a character")
        if any(len(c) != 1 for c in chars) or UNKNOWN in chars:
            raise ValueError(f"chars must be single characters other than {UNKNOWN!r}")
        self.chars = chars
        self._ids = {c: i + 1 for i, c in enumerate(chars)}

    @classmethod
    def from_text(cls, text: str, max_size: int | None = None) -> "CharTokenizer":
        """The most frequent characters of text, most frequent first; ties break by character
        so the same text always gives the same vocabulary."""
        counts = Counter(text)
        ranked = sorted(counts, key=lambda c: (-counts[c], c))
        return cls(ranked[:max_size] if max_size else ranked)

    @classmethod
    def load(cls, path: str | Path) -> "CharTokenizer":
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    @classmethod
    def from_dict(cls, data: dict) -> "CharTokenizer":
        return cls(data["chars"])

    def to_dict(self) -> dict:
        return {"unknown": UNKNOWN, "unknown_id": self.unknown_id, "chars": self.chars}

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), ensure_ascii=False), encoding="utf-8")

    @property
    def vocab_size(self) -> int:
        return len(self.chars) + 1

    def encode(self, text: str) -> Encoding:
        ids = [self._ids.get(c, self.unknown_id) for c in text]
        return Encoding(ids, [i == self.unknown_id for i in ids])

    def decode(self, ids) -> str:
        return "".join(UNKNOWN if i == self.unknown_id else self.chars[i - 1] for i in ids)

    def token(self, i: int) -> str:
        return self.decode([i])


class TableTokenizer(CharTokenizer):
    """A vocabulary given as a table of ids, as nanoGPT's meta.pkl (`itos`): id i is chars[i], from 0, and no id
    is set aside for characters outside it, since nanoGPT's models were trained without one.

    Such a character must still be read as something: it is read as `stand_in`, the id of a space when the
    vocabulary has one (the most neutral character of a text), else id 0. Encoding.unknown flags it, as it flags
    our unknown id, so the page marks it as it marks any unknown character; its token shows as U+FFFD."""

    def __init__(self, chars, vocab_size: int | None = None):
        super().__init__(chars)
        self._ids = {c: i for i, c in enumerate(self.chars)}
        self.unknown_id = self._ids.get(" ", 0)  # the stand-in: an id the model has an embedding for
        # The model's vocabulary may be padded past the table (nanoGPT rounds GPT-2's up to 50304); those ids
        # are never read, and decode shows them as U+FFFD.
        self._vocab_size = max(vocab_size or 0, len(self.chars))

    @property
    def vocab_size(self) -> int:
        return self._vocab_size

    def encode(self, text: str) -> Encoding:
        ids = [self._ids.get(c, self.unknown_id) for c in text]
        return Encoding(ids, [c not in self._ids for c in text])

    def decode(self, ids) -> str:
        return "".join(self.chars[i] if i < len(self.chars) else UNKNOWN for i in ids)

    def to_dict(self) -> dict:
        return {"itos": self.chars, "vocab_size": self.vocab_size}
