"""Reading the docs pages in tests: ``docs/build_figures.py`` as a module, a page's fenced block, a console excerpt
compared with what a command printed."""

from __future__ import annotations

import importlib.util
import re
import sys

from helpers.paths import REPO

DOCS = REPO / "docs"


def build_figures():
    """``docs/build_figures.py`` (its tolerance: one unit of the last printed digit, or 1e-6 of a long number)."""
    if "build_figures" not in sys.modules:
        spec = importlib.util.spec_from_file_location("build_figures", DOCS / "build_figures.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["build_figures"] = mod
        spec.loader.exec_module(mod)
    return sys.modules["build_figures"]


def fenced_after(page: str, marker: str) -> str:
    """The body of the first fenced block after the first occurrence of ``marker`` in ``page``."""
    m = re.compile(r"```[\w]*\n(.*?)\n```", re.S).search(page, page.index(marker))
    return m.group(1)


def console_mismatches(shown: str, printed: str, *, skip_prefix: str = "note: ") -> list[str]:
    """Where a console excerpt on a page differs from what a command printed.

    Every line of ``shown`` must be a line of ``printed``, in order, with the same text and every number within one
    unit of its last printed digit.  A line ``...`` stands for any number of printed lines; a line ending in ``...``
    for a printed line cut there; printed lines starting with ``skip_prefix`` may be left out anywhere.
    """
    build = build_figures()
    out_lines = printed.rstrip("\n").split("\n")
    k, gap, problems = 0, False, []
    for line in shown.rstrip("\n").split("\n"):
        if line.strip() == "...":
            gap = True
            continue
        cut = line.endswith(" ...")
        want = line[: -len(" ...")] if cut else line
        while k < len(out_lines):
            got = out_lines[k]
            if cut:
                got = " ".join(got.split(" ")[: len(want.split(" "))])
            k += 1
            if not build.mismatches(want, got):
                break
            if not (gap or got.startswith(skip_prefix)):
                problems.append(f"{line!r} on the page, {out_lines[k - 1]!r} printed: "
                                + "; ".join(build.mismatches(want, got)))  # fmt: skip
                break
        else:
            problems.append(f"{line!r} on the page, not printed")
        gap = False
    return problems
