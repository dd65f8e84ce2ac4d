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
(:func:`kinhec.fidelity.same_data`).  The script prints the summary lines and
the worst ratio.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

from kinhec import fidelity

HERE = Path(__file__).resolve().parent
CARD = HERE.parent / "tests" / "data" / "published" / "card_full_000_d083e06558e04aff.txt"


def _shared_copy() -> Path | None:
    """``shared/published/smoke`` beside the checkout or one of its parents (the developers' shared data)."""
    return next((p / "shared" / "published" / "smoke" for p in HERE.parents
                 if (p / "shared" / "published" / "smoke").is_dir()), None)  # fmt: skip


def _benchmark_copy(copy: Path) -> pd.DataFrame:
    """kinhec's results on a scratch copy of a published copy (its data only)."""
    from kinhec.benchmark import run_benchmark

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "copy"
        shutil.copytree(copy, root, ignore=shutil.ignore_patterns("benchmarks", ".kinhec"))
        return run_benchmark(root, workers=1).results


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--card", default=None)
    ap.add_argument("--template", default=str(HERE / "fidelity_template.md"))
    ap.add_argument("--out", default=str(HERE.parent / "docs" / "fidelity.md"))
    ap.add_argument("--title", default=None, help="what RESULTS covers (default: its tier and sequence count)")
    ap.add_argument("--published-copy", default=None, help="a published copy with its benchmarks/ (same-data table)")
    a = ap.parse_args(argv)
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
    copy = Path(a.published_copy) if a.published_copy else _shared_copy()
    if "<!-- SAME_DATA -->" in text:
        if copy is None or not (copy / "benchmarks" / "results.parquet").is_file():
            where = copy / "benchmarks" / "results.parquet" if copy else "shared/published/smoke (no shared/ found)"
            print(f"fidelity: {where} not found; pass --published-copy", file=sys.stderr)
            return 1
        same = fidelity.same_data(_benchmark_copy(copy), pd.read_parquet(copy / "benchmarks" / "results.parquet"))
        text = text.replace("<!-- SAME_DATA -->", fidelity.render_same_data(same).rstrip("\n"))
        print(same.xs("all", level="track").round(3).to_string())
    Path(a.out).write_text(text, encoding="utf-8")
    print("\n".join(body.splitlines()[:4]))
    print(fidelity.track_shifts(table).round(2).to_string())
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
