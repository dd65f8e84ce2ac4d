"""The HTML shell shared by the report pages: packed plotly.js, style, embedded data, page script.

A page is one file that works offline: plotly.js is embedded once, gzip-compressed,
and unpacked by the page script (the browser's ``DecompressionStream``) when the
first figure is drawn, so a page opens without parsing megabytes of script first;
the style and the page script are inlined from the files next to this module, and
the data is one JSON block read by the script.  Nothing is fetched.

plotly.js is the bundle the ``plotly`` Python package ships (every trace type,
4.8 MB); nothing else is shipped with kinhec.  It is gzip-compressed by libdeflate
(:data:`DEFLATE_LEVEL`; 1.42 MB, 3.5 % less than zlib's level 9) and written as
its bytes, not as text (1.44 MB).  The page is a windows-1252 document, whose every byte
is one character, so the compressed bytes sit in a ``<script>`` block as they are,
but for the four an HTML parser would change or that would end the block (NUL,
CR, ``<``) and the escape ``=`` itself, each written as ``=`` and the byte plus 64
(1.6 % more).  base64 would add a third (1.9 MB).  Everything else on the page
is ASCII (other characters as HTML references or JavaScript escapes).  A server
that sends the page with another charset in its header makes the browser decode
the block differently: the page script then reads the file's own bytes again
(``fetch`` of its address, possible over http, never needed from ``file://``).
"""

from __future__ import annotations

import functools
import html
import json
import math
import re
from importlib import resources
from pathlib import Path

from kinhec.util.errors import InputError
from kinhec.util.optional import require

__all__ = ["render_page", "write_page", "to_json", "plotly_source", "pack_bytes", "unpack_bytes"]


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
    MissingDependencyError
        The ``plotly`` package is missing (it comes with the ``report`` extra).
    """
    return require("plotly.offline", "writing an HTML report page").get_plotlyjs()


#: libdeflate's level for plotly.js: 11 packs the plotly 7 bundle smallest (1,416,766 bytes; 12: 1,416,938;
#: 10: 1,417,118; zlib 9: 1,468,879) in about 0.5 s of CPU, once per process.
DEFLATE_LEVEL = 11

#: Bytes written as ``=`` + (byte + 64) in the packed block: NUL (a parser turns it into U+FFFD), CR (turned
#: into LF), ``<`` (``</script`` would end the block) and the escape ``=``.
_ESCAPED = re.compile(rb"[\x00\r<=]")


def pack_bytes(raw: bytes) -> bytes:
    """``raw`` gzip-compressed (libdeflate, :data:`DEFLATE_LEVEL`) and escaped for a windows-1252 ``<script>``.

    Undone in the browser by ``packedBytes`` and ``DecompressionStream`` (``common.js``), here by
    :func:`unpack_bytes`; the same bytes on every run.
    """
    deflate = require("deflate", "writing an HTML report page")
    return _ESCAPED.sub(lambda m: b"=" + bytes([m[0][0] + 64]), deflate.gzip_compress(raw, DEFLATE_LEVEL))


def unpack_bytes(packed: bytes) -> bytes:
    """The inverse of :func:`pack_bytes`: the escapes undone, then gunzipped."""
    import gzip

    return gzip.decompress(re.sub(rb"=(.)", lambda m: bytes([m[1][0] - 64]), packed, flags=re.S))


@functools.lru_cache(maxsize=1)
def _packed_plotly() -> bytes:
    return pack_bytes(plotly_source().encode("utf-8"))


def _ascii_script(text: str) -> str:
    """A script with every non-ASCII character written as a ``\\uXXXX`` escape (outside the BMP as
    its surrogate pair), which JavaScript reads inside strings, templates and regular expressions alike."""
    def esc(m):
        b = m[0].encode("utf-16-be")
        return "".join(f"\\u{int.from_bytes(b[i : i + 2], 'big'):04x}" for i in range(0, len(b), 2))

    return re.sub(r"[^\x00-\x7f]", esc, text)


def _ascii_html(text: str) -> str:
    """HTML with every non-ASCII character as a numeric character reference."""
    return text.encode("ascii", "xmlcharrefreplace").decode("ascii")


def render_page(title: str, body: str, data, script: str) -> bytes:
    """The whole HTML document, as the bytes of the file (windows-1252: ASCII and the packed plotly.js).

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
    css = _asset("page.css")
    if not css.isascii():
        raise InputError("page.css: expected ASCII only (CSS escapes for other characters)")
    before = "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="windows-1252">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_ascii_html(html.escape(title))}</title>",
        f"<style>{css}</style>",
        "</head><body>",
        _ascii_html(body),
        f'<script type="application/json" id="kinhec-data">{to_json(data)}</script>',
        '<script type="application/octet-stream" id="kinhec-plotly" data-encoding="gzip+escaped-bytes">',
    ])  # fmt: skip
    after = f"</script>\n<script>{_ascii_script(_asset('common.js') + chr(10) + _asset(script))}</script>\n</body></html>"
    return before.encode("ascii") + _packed_plotly() + after.encode("ascii")


def write_page(text: bytes, out) -> Path:
    """Write the page ``text`` (:func:`render_page`) to ``out`` through a temporary file renamed into place (a
    reader never sees half a page)."""
    out = Path(out)
    if out.is_dir():
        raise InputError(f"out: expected an HTML file name, got the folder {out}")
    if not out.parent.is_dir():
        raise InputError(f"out: the folder {out.parent} does not exist")
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_bytes(text)
    tmp.replace(out)
    return out
