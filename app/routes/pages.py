"""The page, and the Plotly.js bundle it loads."""

import posixpath
import re
from functools import cache
from pathlib import Path

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse

from app.deps import Plotly, Registry
from app.i18n import LANGS, negotiate, texts
from app.services.options import options

router = APIRouter(include_in_schema=False)

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


@router.get("/", response_class=HTMLResponse)
def index(request: Request, plotly: Plotly, registry: Registry, lang: str | None = None):
    chosen = negotiate(lang, request.headers.get("accept-language"))
    return request.app.state.templates.TemplateResponse(request, "index.html", {
        "lang": chosen,
        "t": texts(request.app.state.static_dir, chosen),
        "langs": [{"code": code, "name": name} for code, name in LANGS.items()],
        "plotly_src": request.url_for("plotly", filename=plotly.filename).path,
        "modules": module_graph(request.app.state.static_dir, "js/main.js"),
        "trained": sorted(registry.trained),  # so the first paint already picks trained weights where they ship
        "options": options(registry),  # GET /api/options: modes, head counts, depths and defaults for the controls
        # main.js's first requests, which it makes only once Plotly has run: fetched meanwhile.
        "preload_fetch": [request.url_for("static", path=f"i18n/{chosen}.json").path, "/api/options"],
    }, headers={"Vary": "Accept-Language"})


@router.get("/vendor/{filename}", name="plotly")
def plotly_bundle(filename: str, request: Request, plotly: Plotly):
    if filename != plotly.filename:
        return Response(status_code=404)
    # The URL carries the version, so the file never changes under it: cache for a year.
    headers = {"Cache-Control": "public, max-age=31536000, immutable", "Vary": "Accept-Encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        headers["Content-Encoding"] = "gzip"
        return Response(plotly.gzipped, media_type="text/javascript", headers=headers)
    return Response(plotly.raw, media_type="text/javascript", headers=headers)
