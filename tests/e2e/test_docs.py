"""/docs and /redoc in a real browser: every route drawn, from this app alone, under its CSP."""

import json
import urllib.request

import pytest

pytestmark = pytest.mark.e2e

SWAGGER_OPERATIONS = """() => Array.from(document.querySelectorAll('#swagger-ui .opblock'), (el) => [
    el.querySelector('.opblock-summary-method').textContent.trim(),
    el.querySelector('.opblock-summary-path').dataset.path])"""
# ReDoc gives each operation a section whose id ends with the operationId, e.g. "tag/api/operation/<id>".
REDOC_OPERATIONS = """() => Array.from(document.querySelectorAll('#redoc [data-section-id*="operation/"]'),
    (el) => el.dataset.sectionId.split('operation/').pop())"""


def operations(server_url: str) -> list[tuple[str, str, str]]:
    with urllib.request.urlopen(server_url + "/openapi.json") as response:
        schema = json.load(response)
    return sorted((method.upper(), path, op["operationId"])
                  for path, ops in schema["paths"].items() for method, op in ops.items())


def csp_of(server_url: str, path: str) -> dict[str, str]:
    with urllib.request.urlopen(server_url + path) as response:
        policy = response.headers["content-security-policy"]
    return {d.split()[0]: d.strip() for d in policy.split(";") if d.strip()}


def test_swagger_ui_draws_every_route_offline(open_page, tools, server_url):
    expected = operations(server_url)
    assert len(expected) >= 10
    page = open_page("/docs", explorer=False)  # the fixture fails the test on any console error or other host
    tools.wait_until(page, f"() => document.querySelectorAll('#swagger-ui .opblock').length >= {len(expected)}",
                     message="Swagger UI did not draw the operations")
    assert sorted(map(tuple, page.evaluate(SWAGGER_OPERATIONS))) == [(m, p) for m, p, _ in expected]
    # One operation opened down to its schema: the fields the README sends users here for.
    page.locator('#operations-api-post_compare_api_compare_post .opblock-summary').first.click()
    # Swagger UI adds the operation's body element first and fills it on a later frame: wait for its text.
    tools.wait_until(page, "() => document.querySelector('#operations-api-post_compare_api_compare_post "
                           ".opblock-body')?.innerText.includes('line_a')",
                     message="the compare operation did not open")
    body = page.locator("#operations-api-post_compare_api_compare_post .opblock-body").inner_text()
    assert "line_a" in body and "position" in body
    tools.screenshot(page, "docs-swagger")


def test_redoc_draws_every_route_offline(open_page, tools, server_url):
    expected = operations(server_url)
    page = open_page("/redoc", explorer=False)
    tools.wait_until(page, f"() => new Set(({REDOC_OPERATIONS})()).size >= {len(expected)}",
                     message="ReDoc did not draw the operations")
    assert set(page.evaluate(REDOC_OPERATIONS)) == {op for _, _, op in expected}
    assert "line_a" in page.locator("#redoc").inner_text()
    tools.screenshot(page, "docs-redoc")


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_docs_pages_allow_nothing_from_another_host(server_url, path):
    policy = csp_of(server_url, path)
    assert policy["script-src"] == "script-src 'self'", "no inline script, no CDN"
    assert policy["default-src"] == "default-src 'self'"
    for directive in policy.values():
        assert "http" not in directive and "*" not in directive, f"{directive!r} names another host"
