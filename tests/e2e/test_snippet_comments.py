"""The Python snippet under each revealed step speaks the page's language in its comments (issue 39: steps 6-9 and 12-15
kept English comments in Chinese, Japanese and French, while steps 1-5 and 16 were worded); the code and the lesson's
names in it (qkv, proj, tok_emb, pos_emb, start) stay as they are."""

import json
import re
import urllib.request

import pytest

pytestmark = pytest.mark.e2e

LANGS = ["zh", "ja", "fr"]
LESSON_NAMES = {"qkv", "proj", "tok_emb", "pos_emb", "start"}
# What a comment names as it is in every language: an exception, formats, a shape's dimensions (n_head, T, T).
NAMES = {"ValueError", "JSON", "Python", "n_head", "T"}
FRENCH_AS_ENGLISH = {"position", "positions", "radians", "nats"}  # words both write alike
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def split(snippet: str) -> tuple[str, list[str]]:
    """The snippet's code and its comments (each line's text after "  # ")."""
    code, comments = [], []
    for line in snippet.splitlines():
        before, mark, after = line.partition("  # ")
        code.append(before)
        if mark:
            comments.append(after)
    return "\n".join(code), comments


def words(comment: str) -> list[str]:
    """A comment's Latin words, without the paths, file names and quoted values it names (/api/relative, probe.json,
    'learned')."""
    return re.findall(r"[A-Za-zÀ-ÖØ-öø-ÿ_]+", re.sub(r"\S*[/.][A-Za-z]\S*|'[^']*'", " ", comment))


SNIPPET = "() => document.querySelector('#snippet').hidden ? '' : document.querySelector('#snippet-code').textContent"


def test_every_snippets_comments_are_in_the_pages_language(open_page, tools, server_url):
    with urllib.request.urlopen(f"{server_url}/api/lesson", timeout=30) as response:
        steps = json.loads(response.read())["steps"]
    page = open_page("/lesson?step=1&lang=en", locale="en-US", explorer=False)
    checked = 0
    # Every step a student commits one choice on (the self-test asks three questions and shows no code).
    for n, step in [(n, s) for n, s in enumerate(steps, 1) if s["choices"]]:
        tools.commit_step(page, f"{server_url}/lesson?step={n}&lang=en", step["choices"][0])
        english = page.evaluate(SNIPPET)
        code, comments = split(english)
        # The English words of its comments that are not code: what no other language may keep.
        said = {w.lower() for c in comments for w in words(c)
                if w not in set(IDENTIFIER.findall(code)) | LESSON_NAMES | NAMES | FRENCH_AS_ENGLISH}
        if not said:
            continue
        checked += 1
        shown = english
        for lang in LANGS:
            # A switch words the snippet again (language.js): each language's comments differ from the last's.
            page.select_option("#lang", lang)
            tools.wait_until(page, f"(b) => document.documentElement.lang === '{lang}' && ({SNIPPET})() !== b",
                             shown, message=f"{lang} step {n}: the snippet was not worded again:\n{shown}")
            shown = page.evaluate(SNIPPET)
            code, comments = split(shown)
            assert comments, f"{lang} step {n}: the snippet lost its comments:\n{shown}"
            names = set(IDENTIFIER.findall(code)) | LESSON_NAMES | NAMES
            found = [w for c in comments for w in words(c) if w.lower() in said]
            if lang in ("zh", "ja"):  # no Latin word at all but the code's own names
                found += [w for c in comments for w in words(c) if w not in names and len(w) > 1]
            assert not found, f"{lang} step {n}: English left in the comments {sorted(set(found))}:\n{shown}"
    assert checked >= 12, f"only {checked} steps' snippets say something to check"
