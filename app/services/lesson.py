"""The guided lesson: its steps, their texts, the head split it quotes, and QR codes of step links."""

import io
import json
from functools import lru_cache
from pathlib import Path

import segno

from app.lesson_steps import STEPS
from model.experiments import head_split


def steps() -> list[dict]:
    return STEPS


@lru_cache(maxsize=8)
def lesson_texts(static_dir: Path, lang: str) -> dict:
    return json.loads((static_dir / "i18n" / "lesson" / f"{lang}.json").read_text(encoding="utf-8"))


def heads(n_embd: int, n_head: int, length: int) -> dict:
    """The lesson's experiment 2 for any width: shapes of the head split, and the attention
    layer's parameters for every head count that divides the width."""
    return head_split(n_embd=n_embd, n_head=n_head, T=length)


@lru_cache(maxsize=256)
def qr_svg(url: str, title: str) -> bytes:
    """The URL as a QR code in SVG, drawn here: the board needs no outside service."""
    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="svg", xmldecl=False, scale=6, border=2, title=title,
                                    dark="#1d2330", light="#ffffff")
    return out.getvalue()
