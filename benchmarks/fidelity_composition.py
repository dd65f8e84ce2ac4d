"""How the small tier's sequences are composed, kinhec's index against the published toolkit's, column by column.

Usage::

    python benchmarks/fidelity_composition.py [--draws 4]         # kinhec's rows, then the table
    python benchmarks/fidelity_composition.py --table-only        # the table from the stored rows
    python benchmarks/fidelity_composition.py --store-published 0=DIR [1=DIR ...]

The first form expands and simulates kinhec's small tier for draws ``0 .. N-1`` (draw ``k``: the global
seed moved by ``k * 1000``, as ``fidelity_draws.py`` does; nothing is written but the rows), about 30 CPU-s
for four draws, stores them in ``docs/fidelity_composition.kinhec.csv`` and prints the table of the
differing track/column pairs.  The last form stores the published side,
``docs/fidelity_composition.published.csv``, from folders written by the published toolkit (version 1.1.0
from the package index, in a scratch environment, run as a program): for draw ``k``, a copy of its
``small.yaml`` with ``global_seed`` moved by ``k * 1000``, then ``kinhec generate --tier FILE --out DIR``
(410-460 CPU-s per draw); ``DIR`` may also name a ``sequences.parquet`` directly.  The page's section
(``docs/fidelity.md``, block ``fidelity.composition``) is rewritten from the two stored files by
``python docs/build_figures.py --pages fidelity``; ``tests/test_fidelity_composition.py`` checks that the
stored kinhec rows are what the generator gives now.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

from support import fidelity_composition as fc

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent / "docs"
OURS = DOCS / "fidelity_composition.kinhec.csv"
PUBLISHED = DOCS / "fidelity_composition.published.csv"


def table(ours=OURS, published=PUBLISHED) -> pd.DataFrame:
    """The comparison of the two stored files (:func:`support.fidelity_composition.compare`)."""
    return fc.compare(fc.read_rows(ours), fc.read_rows(published))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=4, help="kinhec draws 0..N-1 to simulate (default 4)")
    ap.add_argument("--table-only", action="store_true", help="only print the table from the stored rows")
    ap.add_argument("--store-published", nargs="+", metavar="K=DIR", default=None,
                    help="store the published rows from folders written by the published toolkit, then exit")
    a = ap.parse_args(argv)
    if a.store_published:
        parts = []
        for item in a.store_published:
            k, _, d = item.partition("=")
            if not k.isdigit() or not d:
                ap.error(f"--store-published: expected K=DIR (a draw number and a folder), got {item!r}")
            path = Path(d) if d.endswith(".parquet") else Path(d) / "sequences.parquet"
            parts.append(fc.published_rows(pd.read_parquet(path), int(k)))
        print(f"wrote {fc.write_rows(pd.concat(parts, ignore_index=True), PUBLISHED)}")
        return 0
    if not a.table_only:
        t0 = time.process_time()
        rows = fc.kinhec_rows("small", range(a.draws))
        print(f"{len(rows)} kinhec rows in {time.process_time() - t0:.1f} CPU-s")
        print(f"wrote {fc.write_rows(rows, OURS)}")
    t = table()
    flag = fc.flagged(t)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(flag[["ks", "p", "median_ours", "median_pub", "q05_ours", "q95_ours", "q05_pub", "q95_pub"]].to_string())
    print(f"{len(flag)} of {len(t)} track/column pairs with KS > {fc.KS_FLAG} at p < {fc.P_FLAG}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
