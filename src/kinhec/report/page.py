"""The HTML shell shared by the report pages: packed plotly.js, style, embedded data, page script.

A page is one file that works offline: plotly.js is embedded once, gzip-compressed
and base64-encoded, and unpacked by the page script (the browser's
``DecompressionStream``) when the first figure is drawn, so a page opens without
parsing megabytes of script first; the style and the page script are inlined
from the files next to this module, and the data is one JSON block read by the
script.  Nothing is fetched.

plotly.js is the bundle the ``plotly`` Python package ships (every trace type;
4.8 MB, 2 MB packed); nothing else is shipped with kinhec.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
import math
from importlib import resources
from pathlib import Path

from kinhec.errors import InputError

__all__ = ["render_page", "write_page", "to_json", "plotly_source"]


def _clean(obj):
    """Replace NaN / inf floats by None (JSON null) everywhere in ``obj``."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):  # numpy scalars
        return _clean(obj.item())
    return obj


def to_json(data) -> str:
    """Compact JSON safe to embed in a ``<script>`` element (``</`` escaped, NaN as null)."""
    try:
        text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    except (ValueError, TypeError):
        text = json.dumps(_clean(data), separators=(",", ":"), allow_nan=False)
    return text.replace("</", "<\\/")


def _asset(name: str) -> str:
    return resources.files("kinhec.report").joinpath(name).read_text(encoding="utf-8")


def plotly_source() -> str:
    """The JavaScript of plotly.js as the installed ``plotly`` package ships it.

    Raises
    ------
    InputError
        The ``plotly`` package is missing.
    """
    try:
        from plotly.offline import get_plotlyjs
    except ImportError as exc:  # pragma: no cover - plotly is a dependency
        raise InputError(f"the report pages need the plotly package (pip install plotly): {exc}") from None
    return get_plotlyjs()


@functools.lru_cache(maxsize=1)
def _packed_plotly() -> str:
    """gzip (level 9, no time stamp: the same bytes on every run) then base64 of :func:`plotly_source`."""
    raw = plotly_source().encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def render_page(title: str, body: str, data, script: str) -> str:
    """The whole HTML document.

    Parameters
    ----------
    title : str
        Document title (escaped here).
    body : str
        HTML of the page body (trusted markup written by kinhec).
    data : dict
        JSON-ready data, embedded as ``<script type="application/json" id="kinhec-data">``.
    script : str
        File name of the page script next to this module (``benchmark.js``, ``calibration.js``).
    """
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_asset('page.css')}</style>",
        "</head><body>",
        body,
        f'<script type="application/json" id="kinhec-data">{to_json(data)}</script>',
        f'<script type="application/octet-stream" id="kinhec-plotly" '
        f'data-encoding="gzip+base64">{_packed_plotly()}</script>',
        f"<script>{_asset('common.js')}\n{_asset(script)}</script>",
        "</body></html>",
    ])  # fmt: skip


def write_page(text: str, out) -> Path:
    """Write ``text`` to ``out`` through a temporary file renamed into place (a reader never sees half a page)."""
    out = Path(out)
    if out.is_dir():
        raise InputError(f"out: expected an HTML file name, got the folder {out}")
    if not out.parent.is_dir():
        raise InputError(f"out: the folder {out.parent} does not exist")
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(out)
    return out
