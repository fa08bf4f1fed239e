"""The page, and the Plotly.js bundle it loads."""

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse
from starlette.datastructures import QueryParams

from app.deps import Plotly, Registry, static_dir, templates
from app.services.i18n import LANGS, lang_notices, negotiate, texts
from app.services.link_codec import explorer_link, lang_repeats, one_lang
from app.services.modules import module_graph
from app.services.options import options

router = APIRouter(include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
def index(request: Request, plotly: Plotly, registry: Registry, lang: str | None = None):
    lang = one_lang(request.query_params)
    chosen = negotiate(lang, request.headers.get("accept-language"))
    t = texts(static_dir(request), chosen)
    choices = options(registry)
    # Every value of the link read by one codec: one it cannot use is said, not silently replaced.
    link = explorer_link(request.query_params, choices, registry, t)
    notices = lang_notices(lang, t) + lang_repeats(request.query_params, t, chosen) + link.notices
    return templates(request).TemplateResponse(request, "index.html", {
        "lang": chosen,
        "t": t,
        "notices": notices,
        "link": link.values,  # what the page opens with (state.js reads it: the page never parses the query)
        "link_defaults": explorer_link(QueryParams(), choices, registry, t).values,  # what an empty link opens with
        "langs": [{"code": code, "name": name} for code, name in LANGS.items()],
        "plotly_src": request.url_for("plotly", filename=plotly.filename).path,
        "modules": module_graph(static_dir(request), "js/explorer/main.js"),
        "trained": sorted(registry.trained),  # so the first paint already picks trained weights where they ship
        "options": choices,  # GET /api/options: modes, head counts, depths and defaults for the controls
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
