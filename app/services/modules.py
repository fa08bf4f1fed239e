"""The JavaScript modules a page's entry imports, found by reading the files."""

import posixpath
import re
from functools import cache
from pathlib import Path

# A static import: `import ... from "./x.js"` or `import "./x.js"`, over one line or several.
IMPORT = re.compile(r'^\s*import\s(?:[^;]*?\sfrom\s)?\s*"(\.{1,2}/[^"]+)"', re.M)


@cache
def module_graph(static_dir: Path, entry: str) -> list[str]:
    """Every module `entry` imports, directly or not, as paths under static/: the page lists them as
    modulepreload links, so the browser asks for all of them at once instead of one import level per
    round trip. Cached: static files do not change under a running server (a stale list would only
    preload too much or too little)."""
    found, todo = [], [entry]
    while todo:
        path = todo.pop()
        for spec in IMPORT.findall((static_dir / path).read_text(encoding="utf-8")):
            child = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
            if child != entry and child not in found:
                found.append(child)
                todo.append(child)
    return sorted(found)
