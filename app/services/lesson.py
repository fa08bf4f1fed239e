"""The guided lesson's texts, and QR codes of step links."""

import io
import json
from functools import lru_cache
from pathlib import Path

import segno


@lru_cache(maxsize=8)
def lesson_texts(static_dir: Path, lang: str) -> dict:
    return json.loads((static_dir / "i18n" / "lesson" / f"{lang}.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=256)
def qr_svg(url: str, title: str) -> bytes:
    """The URL as a QR code in SVG, drawn here: the board needs no outside service."""
    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="svg", xmldecl=False, scale=6, border=2, title=title,
                                    dark="#1d2330", light="#ffffff")
    return out.getvalue()
