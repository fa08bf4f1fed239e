"""docs/api.md's route and command tables are the code's own words (scripts/docs_tables.py writes them): a route
or an option added, removed or described again without rewriting them fails here."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_generated_tables_are_what_the_code_says():
    done = subprocess.run([sys.executable, "scripts/docs_tables.py", "--check"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]


def test_every_table_is_generated_and_names_every_route():
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for marker in ("routes api", "routes classes", "commands"):
        assert f"<!-- generated: {marker} -->" in text, marker
    for route in ("`POST /api/compare`", "`POST /api/classes/{code}/join`", "`GET /api/classes/{code}/events`"):
        assert route in text
    assert "heads-positions serve [-h]" in text
