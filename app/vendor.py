"""Plotly.js, served by the app from the installed plotly package so no page needs a CDN.
Compressed once at start-up and cached by the browser under a URL that carries the version."""

import gzip
import hashlib
import re
from dataclasses import dataclass
from importlib.resources import files


@dataclass(frozen=True)
class VendoredScript:
    version: str
    raw: bytes
    gzipped: bytes

    @property
    def filename(self) -> str:
        return f"plotly-{self.version}.min.js"


def load_plotly() -> VendoredScript:
    source = (files("plotly") / "package_data" / "plotly.min.js").read_bytes()
    # The bundle's banner names its version ("plotly.js v4.1.1"); a content hash stands in if it ever doesn't.
    match = re.search(rb"plotly\.js v(\d+\.\d+\.\d+)", source[:2000])
    version = match.group(1).decode() if match else hashlib.sha256(source).hexdigest()[:12]
    return VendoredScript(version, source, gzip.compress(source, compresslevel=9, mtime=0))
