"""The mixed track's drawn parameters, kinhec's small tier beside the published toolkit's.

Usage::

    python benchmarks/fidelity_mixed.py [--out docs/fidelity.md]
    python benchmarks/fidelity_mixed.py --store-published DIR/sequences.parquet

The first form expands kinhec's small tier (recipes only, nothing is generated),
reads the published quantiles stored in ``docs/fidelity_small_mixed.published.csv``
and rewrites the section between ``<!-- mixed-params:begin -->`` and
``<!-- mixed-params:end -->`` of ``docs/fidelity.md`` (and prints it).  The second
stores those quantiles from the index of a small tier written by the published
toolkit (``kinhec generate --tier small --tracks mixed --out DIR`` with the
published ``kinhec`` 1.1.0 in a scratch environment).  The functions are
``kinhec.evaluate.fidelity.mixed_parameter_quantiles`` and ``render_mixed_parameters``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from kinhec.evaluate import fidelity
from kinhec.synth.tiers import expand_track, load_tier

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent / "docs"
PUBLISHED_MIXED = DOCS / "fidelity_small_mixed.published.csv"


def mixed_section(published=PUBLISHED_MIXED, tier: str = "small") -> str:
    """The page's section: kinhec's ``tier`` recipes against the stored published quantiles."""
    ours = fidelity.mixed_parameter_quantiles(pd.DataFrame(expand_track(load_tier(tier), "mixed")))
    return fidelity.render_mixed_parameters(ours, fidelity.read_mixed_quantiles(published))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(DOCS / "fidelity.md"))
    ap.add_argument("--store-published", metavar="SEQUENCES", default=None,
                    help="store the quantiles of a published small tier's sequences.parquet, then exit")
    a = ap.parse_args(argv)
    if a.store_published:
        table = fidelity.mixed_parameter_quantiles(pd.read_parquet(a.store_published))
        print(f"wrote {fidelity.write_mixed_quantiles(table, PUBLISHED_MIXED)}")
        return 0
    section = mixed_section()
    out = Path(a.out)
    out.write_text(fidelity.replace_section(out.read_text(encoding="utf-8"), section, fidelity.MIXED_BEGIN,
                                            fidelity.MIXED_END), encoding="utf-8")  # fmt: skip
    print(section)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
