"""Write docs/fidelity.md: kinhec's leaderboard medians beside the published card's full-tier table.

Usage::

    python benchmarks/fidelity.py RESULTS [--card CARD] [--template TEMPLATE] [--out docs/fidelity.md]
                                          [--title "medium tier, 9,996 sequences"] [--published-copy DIR]

``RESULTS`` is a ``results.parquet`` written by ``kinhec benchmark`` (e.g. of the
medium tier); ``CARD`` defaults to the published card kept with the tests
(``tests/data/published``); ``TEMPLATE`` (default ``benchmarks/fidelity_template.md``)
holds the prose, and its ``<!-- TABLES -->`` marker receives the generated
summary and tables.  ``DIR`` (default: ``shared/published/smoke`` beside the
checkout or one of its parents) is a copy written by the published toolkit with its ``benchmarks/``: the
script benchmarks a scratch copy of it with kinhec and fills the template's
``<!-- SAME_DATA -->`` marker with both toolkits' errors on the same sequences
(:func:`kinhec.evaluate.fidelity.same_data`).  The script prints the summary lines and
the worst ratio.

The small-tier section (template marker ``<!-- SMALL_TIER -->``) compares
kinhec's small tier, benchmarked by kinhec (``docs/leaderboard_small.results.parquet``,
written by ``docs/leaderboard_small.py``), with the small tier the published
toolkit generated and benchmarked itself, whose medians are stored in
``docs/fidelity_small.published.csv``; both are in the repository, so::

    python benchmarks/fidelity.py --small-only

rewrites that section of ``docs/fidelity.md``, the mixed-track parameter table
(``benchmarks/fidelity_mixed.py``) and the section over several draws of the small tier
(``benchmarks/fidelity_draws.py``, from its stored tables) without running anything, and the
same-data section too (a kinhec benchmark of a scratch copy of the published
smoke copy, about a minute) when that copy is found.  The
CSV comes from the published toolkit (``pip install kinhec`` in a scratch
environment, version 1.1.0: ``kinhec generate --tier small --out DIR`` and
``kinhec benchmark DIR --sync oracle``) through::

    python benchmarks/fidelity.py --store-published-small DIR/benchmarks/results.parquet
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

from kinhec.evaluate import fidelity

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fidelity_draws import section as draws_section  # noqa: E402  (the scripts beside this one)
from fidelity_mixed import mixed_section  # noqa: E402

from support import fidelity_draws  # noqa: E402

HERE = Path(__file__).resolve().parent
CARD = HERE.parent / "tests" / "data" / "published" / "card_full_000_d083e06558e04aff.txt"


def _shared_copy() -> Path | None:
    """``shared/published/smoke`` beside the checkout or one of its parents (the developers' shared data)."""
    return next((p / "shared" / "published" / "smoke" for p in HERE.parents
                 if (p / "shared" / "published" / "smoke").is_dir()), None)  # fmt: skip
DOCS = HERE.parent / "docs"
#: kinhec's small tier benchmarked by kinhec, and the published toolkit's medians on its own small tier.
SMALL_RESULTS = DOCS / "leaderboard_small.results.parquet"
PUBLISHED_SMALL = DOCS / "fidelity_small.published.csv"


def same_data_section(copy: Path) -> str:
    """Both toolkits' errors on the published copy ``copy`` (kinhec benchmarks a scratch copy of it)."""
    same = fidelity.same_data(_benchmark_copy(copy), pd.read_parquet(copy / "benchmarks" / "results.parquet"))
    print(same.xs("all", level="track").round(3).to_string())
    return fidelity.render_same_data(same)


def small_tier_section(results=SMALL_RESULTS, published=PUBLISHED_SMALL) -> str:
    """The small-tier comparison of the page, from the two stored files."""
    table = fidelity.small_tier_table(pd.read_parquet(results), fidelity.read_medians(published))
    return fidelity.render_small_tier(table)


def _benchmark_copy(copy: Path) -> pd.DataFrame:
    """kinhec's results on a scratch copy of a published copy (its data only)."""
    from kinhec.evaluate.benchmark import run_benchmark

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "copy"
        shutil.copytree(copy, root, ignore=shutil.ignore_patterns("benchmarks", ".kinhec"))
        return run_benchmark(root, workers=1).results


_FIGURE_BLOCK = re.compile(r"(<!-- figures: (?P<name>[\w.-]+) [^>]*-->\n)(?P<body>.*?)(<!-- /figures -->)", re.S)


def keep_figure_blocks(text: str, page: str) -> str:
    """``text`` with the body of each ``<!-- figures: NAME -->`` block taken from ``page`` where ``page`` has it."""
    bodies = {m.group("name"): m.group("body") for m in _FIGURE_BLOCK.finditer(page)}
    return _FIGURE_BLOCK.sub(lambda m: m.group(1) + bodies.get(m.group("name"), m.group("body")) + m.group(4), text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", help="results.parquet of the tier compared with the card")
    ap.add_argument("--small-only", action="store_true",
                    help="only rewrite the small-tier section of --out (stored files) and its same-data section")
    ap.add_argument("--store-published-small", metavar="RESULTS", default=None,
                    help="store the medians of the published toolkit's small-tier results.parquet, then exit")
    ap.add_argument("--card", default=None)
    ap.add_argument("--template", default=str(HERE / "fidelity_template.md"))
    ap.add_argument("--out", default=str(HERE.parent / "docs" / "fidelity.md"))
    ap.add_argument("--title", default=None, help="what RESULTS covers (default: its tier and sequence count)")
    ap.add_argument("--published-copy", default=None, help="a published copy with its benchmarks/ (same-data table)")
    a = ap.parse_args(argv)
    if a.store_published_small:
        path = fidelity.write_medians(fidelity.results_medians(pd.read_parquet(a.store_published_small)), PUBLISHED_SMALL)
        print(f"wrote {path}")
        return 0
    if a.small_only:
        out = Path(a.out)
        page = fidelity.replace_section(out.read_text(encoding="utf-8"), small_tier_section())
        page = fidelity.replace_section(page, mixed_section(), fidelity.MIXED_BEGIN, fidelity.MIXED_END)
        page = fidelity.replace_section(page, draws_section(), fidelity_draws.DRAWS_BEGIN, fidelity_draws.DRAWS_END)
        print(small_tier_section().splitlines()[0])
        card_path = Path(a.card) if a.card else CARD
        copy = Path(a.published_copy) if a.published_copy else _shared_copy()
        if copy is not None and (copy / "benchmarks" / "results.parquet").is_file():
            same = same_data_section(copy)
            page = fidelity.replace_section(page, same, fidelity.SAME_BEGIN, fidelity.SAME_END)
            print(f"same-data section from {copy}")
        out.write_text(page, encoding="utf-8")
        print(f"wrote {out}")
        return 0
    if a.results is None:
        ap.error("RESULTS is required unless --small-only or --store-published-small")
    card_path = Path(a.card) if a.card else CARD
    if not card_path.is_file():
        print(f"fidelity: no published card at {card_path}; pass --card", file=sys.stderr)
        return 1
    results = pd.read_parquet(a.results)
    title = a.title or f"{results['sequence_id'].nunique():,} sequences of {a.results}"
    card = fidelity.read_card_leaderboard(card_path)
    table = fidelity.compare(card, fidelity.results_medians(results))
    body = fidelity.render_markdown(
        table, title_ours=title, title_card=f"full tier, 77,628 sequences (card `{card_path.name}`)"
    )
    text = fidelity.fill_template(Path(a.template).read_text(encoding="utf-8"), body)
    if Path(a.out).is_file():  # the blocks docs/build_figures.py writes stay as they are on the page
        text = keep_figure_blocks(text, Path(a.out).read_text(encoding="utf-8"))
    copy = Path(a.published_copy) if a.published_copy else _shared_copy()
    if "<!-- SAME_DATA -->" in text:
        if copy is None or not (copy / "benchmarks" / "results.parquet").is_file():
            where = copy / "benchmarks" / "results.parquet" if copy else "shared/published/smoke (no shared/ found)"
            print(f"fidelity: {where} not found; pass --published-copy", file=sys.stderr)
            return 1
        section = f"{fidelity.SAME_BEGIN}\n{same_data_section(copy).rstrip()}\n{fidelity.SAME_END}"
        text = text.replace("<!-- SAME_DATA -->", section)
    if "<!-- SMALL_TIER -->" in text:
        section = f"{fidelity.SMALL_BEGIN}\n{small_tier_section().rstrip()}\n{fidelity.SMALL_END}"
        text = text.replace("<!-- SMALL_TIER -->", section)
    if "<!-- SMALL_DRAWS -->" in text:
        section = f"{fidelity_draws.DRAWS_BEGIN}\n{draws_section().rstrip()}\n{fidelity_draws.DRAWS_END}"
        text = text.replace("<!-- SMALL_DRAWS -->", section)
    if "<!-- MIXED_PARAMS -->" in text:
        section = f"{fidelity.MIXED_BEGIN}\n{mixed_section().rstrip()}\n{fidelity.MIXED_END}"
        text = text.replace("<!-- MIXED_PARAMS -->", section)
    Path(a.out).write_text(text, encoding="utf-8")
    print("\n".join(body.splitlines()[:4]))
    print(fidelity.track_shifts(table).round(2).to_string())
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
