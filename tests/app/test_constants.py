"""Each constant lives once, in Python: the pages read the modes, the languages, the limits and the defaults from
/api/options, which the page embeds as it is (static/js/shared/constants.js), and no script spells them out again."""

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.domain.class_codes import CODE_ALPHABET, CODE_LENGTH
from app.domain.lesson_steps import LESSON_LINES
from app.schemas.ablation import MAX_ABLATE_CHARS
from app.schemas.classes import NAME_CHARS, RECENT_SECONDS, JoinRequest
from app.services.i18n import LANGS
from model.gpt import POSITION_MODES

STATIC_JS = Path(__file__).resolve().parents[2] / "static" / "js"
EMBEDDED = re.compile(r'<script type="application/json" id="page-options">(.*?)</script>', re.S)


def test_options_carry_the_constants_the_pages_use(client):
    options = client.get("/api/options").json()
    assert options["positions"] == list(POSITION_MODES)
    assert options["langs"] == list(LANGS)
    assert options["max_ablate_chars"] == MAX_ABLATE_CHARS
    too_long = client.post("/api/ablate", json={"line": "白" * (MAX_ABLATE_CHARS + 1)})
    assert too_long.status_code == 422 and too_long.json()["detail"][0]["ctx"]["max_length"] == MAX_ABLATE_CHARS
    lines = options["defaults"]["line_a"], options["defaults"]["line_b"]
    assert lines == (LESSON_LINES["line_a"], LESSON_LINES["line_b"])


def test_options_carry_class_modes_rules(client):
    rules = client.get("/api/options").json()["classes"]
    assert rules == {"code_alphabet": CODE_ALPHABET, "code_length": CODE_LENGTH, "name_chars": NAME_CHARS,
                     "recent_seconds": RECENT_SECONDS}
    # The name limit the page counts against is the one the server refuses past.
    JoinRequest(name="名" * rules["name_chars"])
    with pytest.raises(ValidationError) as refused:
        JoinRequest(name="名" * (rules["name_chars"] + 1))
    assert refused.value.errors()[0]["ctx"]["max_length"] == rules["name_chars"]


def test_both_pages_embed_the_options_as_the_api_answers_them(client):
    options = client.get("/api/options").json()
    for path in ("/?lang=en", "/lesson?lang=en"):
        page = client.get(path).text
        assert json.loads(EMBEDDED.search(page).group(1)) == options, path


def test_no_script_spells_out_the_modes_or_the_languages():
    for path in STATIC_JS.rglob("*.js"):
        source = path.read_text(encoding="utf-8")
        assert not re.search(r'\[\s*"learned",\s*"rope",\s*"none"\s*\]', source), path
        assert not re.search(r'\[\s*"zh",\s*"ja",\s*"fr",\s*"en"\s*\]', source), path
        assert f'"{LESSON_LINES["line_a"]}"' not in source and f'"{LESSON_LINES["line_b"]}"' not in source, path
        assert not re.search(r"MAX_\w*CHARS\s*=\s*\d", source), path
        # Class mode's code shape, name limit and recent-join window come from /api/options too.
        assert CODE_ALPHABET not in source, path
        assert not re.search(r"\b(NAME_CHARS|RECENT_SECONDS)\s*=\s*\d", source), path
