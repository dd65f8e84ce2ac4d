"""Rewrite every figure in ``docs/`` that comes from a run: one command, after any change that moves results.

Usage (from the repository root)::

    python docs/build_figures.py                 # recompute and rewrite the marked blocks of every page
    python docs/build_figures.py --pages calibrate,solvers
    python docs/build_figures.py --check         # compare only: list what a fresh run changes, exit 1 if any
    python docs/build_figures.py --measure       # first re-measure the small tier (docs/leaderboard_small.py:
                                                 # generate + benchmark, a few minutes), then rewrite everything

A figure that comes from a run sits in a marked block of its page::

    <!-- figures: calibrate.tabb (written by python docs/build_figures.py; do not edit by hand) -->
    ...
    <!-- /figures -->

and each block is produced by a function of the page's module (``docs/figures_<page>.py``):

* ``figures_calibrate``: ``kinhec calibrate`` on the real recordings kept with the tests
  (``tests/data/realdata``) and on the regression suite's corner files, recomputed on every run;
* ``figures_solvers``: the pixel solver's medians on the small tier's pnp track (from the stored results of
  ``docs/leaderboard_small``) and the agreement with OpenCV (recomputed; needs ``cv2``, dev extra);
* ``figures_performance``: the small tier's generation and benchmark figures from the stored run of
  ``docs/leaderboard_small`` (so that no two pages can quote different runs).
* ``figures_bags``: ``kinhec calibrate --bag`` on the bag the page's own recipe writes (its console output, launch
  file and an error), and the ETH-ASL recording written into a bag against its CSVs (needs ``rosbags``).
* ``figures_leaderboard_real``: the real-data leaderboard from its stored run (``docs/leaderboard_real.run.json``,
  re-measured by ``python benchmarks/leaderboard_real.py``, a few minutes).
* ``figures_fidelity``: the small tier's composition, kinhec's index rows against the published toolkit's, from
  the rows stored by ``python benchmarks/fidelity_composition.py`` (the other sections of ``docs/fidelity.md``
  are written by ``benchmarks/fidelity*.py``).

Console output and files go on a page inside a fenced block of the generated text, kept as printed; other
paragraphs are wrapped.

``docs/leaderboard_small.md`` is written from its stored results as well.  ``tests/test_doc_figures.py``
recomputes every block and fails when a page no longer matches: the text must be the same and every number
within one unit of its last printed digit, or within 1e-6 of its value when printed to more digits (a figure
rounded differently by another machine's last bits still matches; a figure that moved does not).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

#: page name -> (Markdown file, module of its figures)
PAGES = {
    "calibrate": ("calibrate.md", "figures_calibrate"),
    "solvers": ("solvers.md", "figures_solvers"),
    "performance": ("performance.md", "figures_performance"),
    "bags": ("bags.md", "figures_bags"),
    "leaderboard_real": ("leaderboard_real.md", "figures_leaderboard_real"),
    "fidelity": ("fidelity.md", "figures_fidelity"),
}

BLOCK_RE = re.compile(r"<!-- figures: (?P<name>[\w.-]+) [^>]*-->\n(?P<body>.*?)<!-- /figures -->", re.S)
_NUMBER_RE = re.compile(r"(?<![\w.])[-+−]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")


def load_module(name: str):
    """A module of this folder (``figures_<page>``, ``leaderboard_small``), imported by file path."""
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def page_blocks(text: str) -> dict[str, str]:
    """``{block name: body}`` of the marked blocks of a page."""
    out = {}
    for m in BLOCK_RE.finditer(text):
        if m.group("name") in out:
            raise ValueError(f"block {m.group('name')!r} appears twice")
        out[m.group("name")] = m.group("body")
    return out


def replace_blocks(text: str, bodies: dict[str, str]) -> str:
    """The page with each marked block's body replaced; every block of the page must be given and vice versa."""
    have = set(page_blocks(text))
    if have != set(bodies):
        raise ValueError(f"blocks on the page {sorted(have)} but generated {sorted(bodies)}")

    def sub(m):
        body = bodies[m.group("name")]
        start, end = m.start("body") - m.start(), m.end("body") - m.start()  # the body in place (it may be empty)
        return m.group(0)[:start] + body.rstrip("\n") + "\n" + m.group(0)[end:]

    return BLOCK_RE.sub(sub, text)


#: Width to which the generated paragraphs are wrapped (tables are left alone).
WIDTH = 110


def format_block(body: str) -> str:
    """A generated block as it goes on the page: every paragraph wrapped to :data:`WIDTH`, tables and fenced
    code (console output, files) as they are."""
    import textwrap

    out, para = [], []
    fenced = False

    def flush():
        if para:
            out.extend(textwrap.wrap(" ".join(para), WIDTH, break_long_words=False, break_on_hyphens=False))
            para.clear()

    for line in body.rstrip("\n").split("\n"):
        if line.startswith("```") or fenced:
            flush()
            out.append(line)
            fenced = (not fenced) if line.startswith("```") else fenced
        elif not line.strip() or line.lstrip().startswith("|"):
            flush()
            out.append(line)
        else:
            para.append(line.strip())
    flush()
    return "\n".join(out) + "\n"


def fresh_blocks(page: str, **inputs) -> dict[str, str]:
    """The blocks of ``page`` (a key of :data:`PAGES`) from a fresh run, formatted as they go on the page."""
    mod = load_module(PAGES[page][1])
    return {name: format_block(body) for name, body in mod.blocks(**inputs).items()}


def _number(token: str) -> tuple[float, float]:
    """Value and unit of the last printed digit of a number token (``"1,234.5"`` -> 1234.5, 0.1)."""
    t = token.replace(",", "").replace("−", "-")
    mant = t.lower().split("e")[0]
    exp = int(t.lower().split("e")[1]) if "e" in t.lower() else 0
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return float(t), 10.0 ** (exp - decimals)


#: Relative tolerance of a number printed to many digits (see :func:`mismatches`): a console's 9-digit pose moves in
#: its last digits with the number of BLAS threads, and a standard deviation printed to six digits in its sixth with
#: the CPU's kernels (kuka_1 from its images: 0.536573 mm with AVX-512, 0.536570 mm with AVX2 and OpenBLAS's Haswell).
REL = 1e-5


def mismatches(page: str, fresh: str) -> list[str]:
    """Where ``page`` differs from ``fresh``: other text, or a number more than one unit of its last digit off.

    The text between the numbers must be identical.  Each number of the page must lie within one unit of
    its last printed digit of the fresh one (``0.13`` passes for 0.1349 and 0.1251, not for 0.1449), or within
    :data:`REL` of it for a number printed to more digits than that (a console's 9-digit pose moves in its last
    digits with the number of BLAS threads, a six-digit standard deviation in its sixth with the CPU's kernels).
    """
    tp, tf = _NUMBER_RE.split(page), _NUMBER_RE.split(fresh)
    np_, nf = _NUMBER_RE.findall(page), _NUMBER_RE.findall(fresh)
    if tp != tf or len(np_) != len(nf):
        import difflib

        diff = [d for d in difflib.unified_diff(page.splitlines(), fresh.splitlines(), "page", "fresh run",
                                                lineterm="", n=0) if not d.startswith(("---", "+++", "@@"))]  # fmt: skip
        return ["the text differs:"] + diff[:12]
    out = []
    for a, b in zip(np_, nf):
        (va, unit), (vb, _) = _number(a), _number(b)
        if abs(va - vb) > max(unit * (1 + 1e-9), REL * abs(vb)):
            out.append(f"{a} on the page, {b} in a fresh run (more than one unit of its last digit)")
    return out


def build(pages=None, *, check: bool = False) -> list[str]:
    """Recompute the blocks of ``pages`` (default all); write them, or with ``check`` only report differences."""
    problems = []
    for name in pages or PAGES:
        fname, modname = PAGES[name]
        path = HERE / fname
        text = path.read_text(encoding="utf-8")
        fresh = fresh_blocks(name)
        if check:
            have = page_blocks(text)
            for block in sorted(set(have) | set(fresh)):
                if block not in have or block not in fresh:
                    problems.append(f"{fname}: block {block} is {'not on the page' if block not in have else 'not generated'}")
                    continue
                problems += [f"{fname} [{block}]: {m}" for m in mismatches(have[block], fresh[block])]
        else:
            new = replace_blocks(text, fresh)
            if new != text:
                path.write_text(new, encoding="utf-8", newline="\n")
                print(f"written {path.relative_to(REPO)}")
            else:
                print(f"unchanged {path.relative_to(REPO)}")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", default=None, help=f"comma-separated among {', '.join(PAGES)} (default: all)")
    ap.add_argument("--check", action="store_true", help="only compare the pages with a fresh run")
    ap.add_argument("--measure", action="store_true", help="re-measure the small tier first (a few minutes)")
    a = ap.parse_args(argv)
    pages = a.pages.split(",") if a.pages else None
    unknown = sorted(set(pages or ()) - set(PAGES))
    if unknown:
        ap.error(f"--pages: unknown {', '.join(unknown)}; expected some of {', '.join(PAGES)}")
    board = load_module("leaderboard_small")
    if a.measure:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="kinhec_small_") as tmp:
            board.measure(Path(tmp) / "small")
    problems = []
    if not a.check:
        print(f"written {board.write_page().relative_to(REPO)}")
    elif pages is None:
        import json

        import pandas as pd

        fresh = board.page_text(pd.read_parquet(board.RESULTS), json.loads(board.RUN_INFO.read_text()))
        if fresh != board.PAGE.read_text(encoding="utf-8"):
            problems.append(f"{board.PAGE.name}: differs from the page its stored results give")
    problems += build(pages, check=a.check)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
