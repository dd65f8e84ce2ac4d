"""Small Markdown and number formatting helpers of the card."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

__all__ = ["n", "human_bytes", "folder_bytes", "table", "commented", "counts", "demote_headings"]


def n(v) -> str:
    """Integer with thousands separators."""
    return f"{int(v):,}"


def human_bytes(n: int) -> str:
    """``1234567`` -> ``"1.2 MB"`` (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000.0
    return f"{n:.1f} TB"  # pragma: no cover


def folder_bytes(root: Path, skip: str = "README.md") -> int:
    """Bytes of the files of the folder, without ``skip`` (the card itself), hidden folders and symlinks."""
    total = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in filenames:
            if f == skip and Path(dirpath) == root:
                continue
            p = os.path.join(dirpath, f)
            try:
                if not os.path.islink(p):
                    total += os.path.getsize(p)
            except OSError:
                pass
    return total


def table(header: list[str], rows: list[list], align: list[str] | None = None) -> list[str]:
    """A Markdown table as lines; ``align`` holds ``"l"`` or ``"r"`` per column; ``|`` in a cell is escaped."""
    align = align or ["l"] * len(header)
    sep = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return out


def commented(pairs: list[tuple[str, str]]) -> list[str]:
    """Code lines with their ``#`` comments aligned in one column."""
    width = max(len(code) for code, _ in pairs)
    return [f"{code.ljust(width)}  # {c}" if c else code for code, c in pairs]


def counts(series: pd.Series, order=None) -> list[tuple[str, int]]:
    """(value, count) pairs: the values of ``order`` first, then the others alphabetically."""
    vc = series.fillna("(missing)").astype(str).value_counts()
    keys = [k for k in (order or ()) if k in vc.index] + sorted(k for k in vc.index if k not in (order or ()))
    return [(k, int(vc[k])) for k in keys]


def demote_headings(lines: list[str], top: int) -> list[str]:
    """Shift the Markdown headings of ``lines`` so that the highest becomes level ``top`` (code blocks left alone)."""
    levels = [len(m.group(1)) for ln in lines if (m := re.match(r"^(#+)\s", ln))]
    if not levels:
        return lines
    shift = top - min(levels)
    out = []
    in_code = False
    for ln in lines:
        if ln.startswith("```"):
            in_code = not in_code
        m = None if in_code else re.match(r"^(#+)(\s.*)$", ln)
        out.append("#" * min(6, max(1, len(m.group(1)) + shift)) + m.group(2) if m else ln)
    return out
