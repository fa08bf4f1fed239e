"""The page's four languages. Texts live in static/i18n/{lang}.json, which the page also
fetches when the student switches language; the server uses them for the first paint."""

import json
from functools import lru_cache
from pathlib import Path

LANGS = {"zh": "中文", "ja": "日本語", "fr": "Français", "en": "English"}
DEFAULT_LANG = "zh"  # the lesson's first language


def negotiate(query_lang: str | None, accept_language: str | None) -> str:
    """?lang= wins; else the first Accept-Language entry we speak, by q-value; else zh."""
    if query_lang in LANGS:
        return query_lang
    ranked = []
    for i, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        ranked.append((-q, i, tag.strip().lower().split("-")[0]))
    for _, _, code in sorted(ranked):
        if code in LANGS:
            return code
    return DEFAULT_LANG


@lru_cache(maxsize=len(LANGS))
def texts(static_dir: Path, lang: str) -> dict:
    return json.loads((static_dir / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))


ASKED_MAX = 24  # what a student typed is shown back to them, cut to this many characters


def shown_back(value: str) -> str:
    """A hand-typed query value, as the notice quotes it: cut short, so a pasted page cannot flood it."""
    return value if len(value) <= ASKED_MAX else value[:ASKED_MAX] + "…"


def lang_notices(query_lang: str | None, page_texts: dict) -> list[str]:
    """The page's word on a ?lang= it does not speak: which language it asked for and which one it shows.
    Empty when there is no ?lang= or it is one of ours. The text is in the language shown."""
    if not query_lang or query_lang in LANGS:
        return []
    return [page_texts["notice_no_lang"].format(asked=shown_back(query_lang))]
