"""docs/api.md's route and command tables are the code's own words (scripts/docs_tables.py writes them): a route
or an option added, removed or described again without rewriting them fails here."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tables():
    """scripts/docs_tables.py as a module: checked in this process, where the app is imported already (a second
    Python importing it again took 3 s of CPU)."""
    spec = importlib.util.spec_from_file_location("docs_tables", ROOT / "scripts" / "docs_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_tables_are_what_the_code_says(tables):
    stale = tables.stale_tables(tables.DOC.read_text(encoding="utf-8"))
    assert stale == [], f"docs/api.md: the tables {stale} are stale: run python scripts/docs_tables.py"


def test_a_table_that_drifted_is_named(tables):
    text = tables.DOC.read_text(encoding="utf-8").replace("`POST /api/compare`", "`POST /api/compared`")
    assert tables.stale_tables(text) == ["routes api"]


def test_every_table_is_generated_and_names_every_route():
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for marker in ("routes api", "routes classes", "commands"):
        assert f"<!-- generated: {marker} -->" in text, marker
    for route in ("`POST /api/compare`", "`POST /api/classes/{code}/join`", "`GET /api/classes/{code}/events`"):
        assert route in text
    assert "heads-positions serve [-h]" in text
