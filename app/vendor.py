"""Plotly.js, vendored so no page needs a CDN: npm's plotly.js-cartesian-dist-min 4.1.1 (the version the
Python plotly package ships), which holds every trace the page draws (heatmap, scatter, bar) in a third
of the full bundle. Its licence lies beside it in static/vendor/. Compressed once at start-up (0.15 s)
and cached by the browser for a year under a URL that carries the version."""

import gzip
from dataclasses import dataclass
from pathlib import Path

VENDOR_DIR = Path(__file__).resolve().parent.parent / "static" / "vendor"
PLOTLY_FILE = "plotly-cartesian-4.1.1.min.js"


@dataclass(frozen=True)
class VendoredScript:
    filename: str
    raw: bytes
    gzipped: bytes


def load_plotly() -> VendoredScript:
    raw = (VENDOR_DIR / PLOTLY_FILE).read_bytes()
    return VendoredScript(PLOTLY_FILE, raw, gzip.compress(raw, compresslevel=9, mtime=0))
