"""Plotly.js, vendored so no page needs a CDN: plotly.js 4.1.1 (the version the Python plotly package
ships) built by scripts/build_plotly.sh with the traces the pages draw (heatmap, scatter, bar) and nothing
else: npm's cartesian bundle took longer to run before the first heatmap (docs/benchmarks.md). Its licence lies beside
it in static/vendor/. Compressed once at start-up and cached by the browser for a year under a URL that
carries the version."""

import functools
import gzip
from dataclasses import dataclass
from pathlib import Path

VENDOR_DIR = Path(__file__).resolve().parents[2] / "static" / "vendor"
PLOTLY_FILE = "plotly-core-bar-heatmap-4.1.1.min.js"


@dataclass(frozen=True)
class VendoredScript:
    filename: str
    raw: bytes
    gzipped: bytes


# The shipped file does not change while the process runs: compressed once per process (50 ms at level 9), not
# once per app (a test process builds dozens).
@functools.cache
def load_plotly() -> VendoredScript:
    raw = (VENDOR_DIR / PLOTLY_FILE).read_bytes()
    return VendoredScript(PLOTLY_FILE, raw, gzip.compress(raw, compresslevel=9, mtime=0))
