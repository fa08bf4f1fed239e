"""What the pages load first: one Plotly, the partial bundle scripts/build_plotly.sh builds, vendored with
its licence, and the explorer's first requests preloaded."""

import gzip
import re

from app.services.vendor import PLOTLY_FILE, VENDOR_DIR


def test_the_page_loads_one_plotly_the_vendored_partial_bundle(client):
    html = client.get("/").text
    scripts = re.findall(r'<script[^>]*src="([^"]*plotly[^"]*)"', html, re.I)
    assert scripts == [f"/vendor/{PLOTLY_FILE}"]
    banner = (VENDOR_DIR / PLOTLY_FILE).read_bytes()[:200].decode()
    assert "plotly.js (core, bar, heatmap - minified) v4.1.1" in banner
    licence = (VENDOR_DIR / PLOTLY_FILE.replace(".min.js", ".LICENSE.txt")).read_text()
    assert licence.startswith("MIT License") and "Plotly" in licence


def test_bundle_is_served_pre_gzipped_and_cached_for_a_year(client):
    raw = (VENDOR_DIR / PLOTLY_FILE).read_bytes()
    zipped = client.get(f"/vendor/{PLOTLY_FILE}", headers={"Accept-Encoding": "gzip"})
    assert zipped.status_code == 200
    assert zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert zipped.headers["content-type"].startswith("text/javascript")
    assert zipped.content == raw  # httpx undoes the gzip
    assert int(zipped.headers["content-length"]) == len(gzip.compress(raw, compresslevel=9, mtime=0))
    assert int(zipped.headers["content-length"]) < 450_000

    plain = client.get(f"/vendor/{PLOTLY_FILE}", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.content == raw


def test_any_other_vendor_name_is_404(client):
    assert client.get("/vendor/plotly-4.1.1.min.js").status_code == 404
    assert client.get("/vendor/..%2Fapp%2Fmain.py").status_code == 404


def test_the_explorer_preloads_its_first_requests_in_the_pages_language(client):
    html = client.get("/", headers={"Accept-Language": "ja"}).text
    preloads = re.findall(r'<link rel="preload" href="([^"]+)" as="fetch" crossorigin>', html)
    assert preloads == ["/static/i18n/ja.json", "/api/options"]
    assert client.get(preloads[0]).json() and client.get(preloads[1]).status_code == 200
    assert re.findall(r'rel="preload" href="([^"]+)"', client.get("/?lang=fr").text)[0] == "/static/i18n/fr.json"
