"""Each page lists every module its entry imports as a modulepreload link, so the browser fetches the
whole module graph in one round instead of one import level at a time."""

import re
from urllib.parse import urljoin

import pytest

# Static imports only: the front end has no dynamic import().
IMPORT = re.compile(r'^\s*import\s(?:[^;]*?\sfrom\s)?\s*"(\.{1,2}/[^"]+)"', re.M)


def imported(client, url: str) -> set[str]:
    """The module graph below `url`, walked through the server as the browser walks it."""
    found, todo = set(), [url]
    while todo:
        current = todo.pop()
        for spec in IMPORT.findall(client.get(current).text):
            child = urljoin(current, spec)  # resolved as the browser resolves it
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


@pytest.mark.parametrize(("page", "entry"), [("/", "/static/js/explorer/main.js"),
                                             ("/lesson?step=2", "/static/js/lesson/main.js")])
def test_every_imported_module_is_preloaded(client, page, entry):
    html = client.get(page).text
    scripts = re.findall(r'<script type="module" src="([^"]+)"', html)
    assert len(scripts) == 1 and scripts[0].endswith(entry)
    preloads = re.findall(r'<link rel="modulepreload" href="([^"]+)">', html)
    graph = imported(client, scripts[0])
    assert len(graph) > 5 and set(preloads) == graph and len(preloads) == len(graph)
    assert all(client.get(url).status_code == 200 for url in preloads)
