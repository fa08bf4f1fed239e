"""The lesson's GPT, its tokenizer and its experiments. Knows nothing of the web."""

from model.gpt import GPT, GPTConfig, Trace
from model.tokenizer import CharTokenizer

__all__ = ["GPT", "GPTConfig", "Trace", "CharTokenizer"]
