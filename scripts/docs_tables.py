"""Write the tables of docs/api.md that the code already knows, so they cannot drift from it (as datasette keeps
its docs with cog): every route with the first sentence of its docstring, from the app's OpenAPI schema, and each
command's usage line, from its argparse parser. Each table stands between a pair of markers:

    <!-- generated: routes api -->  ...  <!-- end generated -->

    python scripts/docs_tables.py          # rewrite docs/api.md
    python scripts/docs_tables.py --check  # exit 1, naming the table, when docs/api.md is not what the code says

scripts/test.sh runs the check through tests/app/test_docs_tables.py (stale_tables).
"""

import argparse
import functools
import re
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
BLOCK = re.compile(r"(<!-- generated: (\w+) ?(\w*) -->\n)(.*?)(<!-- end generated -->)", re.S)


def first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    end = re.search(r"(?<=[.!?])\s", flat)
    return flat[: end.start()] if end else flat


@functools.cache
def openapi_paths() -> dict:
    from app.main import create_app

    return create_app().openapi()["paths"]


def route_rows(group: str) -> list[str]:
    rows = []
    for path, operations in openapi_paths().items():
        is_class = path.startswith("/api/classes")
        if (group == "classes") != is_class:
            continue
        for method, operation in operations.items():
            what = first_sentence(operation.get("description") or operation.get("summary", ""))
            rows.append(f"| `{method.upper()} {path}` | {what.replace('|', '/')} |")
    return ["| route | what |", "|---|---|", *rows]


def command_lines() -> list[str]:
    from app.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices  # the sub-commands, in their order
    usage = [" ".join(parser.format_usage().split())[len("usage: "):] for parser in commands.values()]
    return ["```", *usage, "```"]


def table(kind: str, group: str) -> str:
    lines = route_rows(group) if kind == "routes" else command_lines()
    return "\n".join(lines) + "\n"


def generated(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + table(m.group(2), m.group(3)) + m.group(5), text)


def stale_tables(text: str) -> list[str]:
    """The names of the tables of text that differ from what the code says now."""
    return [f"{m.group(2)} {m.group(3)}".strip() for m, n in zip(BLOCK.finditer(text), BLOCK.finditer(generated(text)))
            if m.group(4) != n.group(4)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when docs/api.md differs")
    args = parser.parse_args()
    text = DOC.read_text(encoding="utf-8")
    if args.check:
        stale = stale_tables(text)
        if stale:
            print(f"docs/api.md: the generated tables {', '.join(stale)} are stale: run python scripts/docs_tables.py")
            return 1
        return 0
    DOC.write_text(generated(text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
