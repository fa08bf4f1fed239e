"""/docs (Swagger UI) and /redoc, served from this app: no CDN, no inline script.

FastAPI's own pages load both from a public CDN and start them with an inline script; the app's CSP
(script-src 'self') blocks both, and a classroom without internet could not reach the CDN anyway.
The assets are vendored under static/vendor (npm swagger-ui-dist and redoc, licences beside them),
and each page starts from a small file in static/docs.

The ReDoc bundle differs from npm's by one string: its side menu shows the Redocly logo from
https://cdn.redoc.ly/redoc/logo-mini.svg, with no option to turn it off, so that URL is replaced by
"data:,"; the image then fails to decode and ReDoc's own onError hides it. Re-vendoring:
`npm pack redoc@2.5.4`, copy bundles/redoc.standalone.js, then
`sed -i 's#"https://cdn.redoc.ly/redoc/logo-mini.svg"#"data:,"#' static/vendor/redoc.standalone-2.5.4.js`.
"""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.deps import templates

SWAGGER_UI_VERSION = "5.35.0"  # npm swagger-ui-dist
REDOC_VERSION = "2.5.4"  # npm redoc; 2.x is the line FastAPI's own /redoc loads

router = APIRouter(include_in_schema=False)


@router.get("/docs", response_class=HTMLResponse)
def swagger_ui(request: Request):
    return _page(request, "docs/swagger.html")


@router.get("/redoc", response_class=HTMLResponse)
def redoc(request: Request):
    return _page(request, "docs/redoc.html")


def _page(request: Request, template: str):
    return templates(request).TemplateResponse(request, template, {
        "title": request.app.title,
        "openapi_url": request.app.openapi_url,
        "swagger_ui": SWAGGER_UI_VERSION,
        "redoc": REDOC_VERSION,
    })
