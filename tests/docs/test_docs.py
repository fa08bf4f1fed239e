"""The README stays short and its links lead somewhere; docs/api.md names every route the app serves."""

import re
from pathlib import Path

import pytest

from app.main import create_app

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(line.lstrip("#")) for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")}


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; the rest belongs in docs/"


def test_readme_shows_the_two_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install -e . && heads-positions serve" in text
    assert "bash scripts/test.sh" in text


@pytest.mark.parametrize("page", [ROOT / "README.md", *DOCS], ids=lambda p: p.name)
def test_every_link_resolves(page: Path):
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # http(s) and mailto: nothing to reach offline
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(ROOT)}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{page.name} links nowhere: {broken}"


def test_api_doc_names_every_route():
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    routes = [f"{method.upper()} {path}" for path, ops in create_app().openapi()["paths"].items() for method in ops]
    assert routes, "the OpenAPI schema lists no route"
    missing = [r for r in routes if r not in text]
    assert not missing, f"docs/api.md does not name {missing}"
