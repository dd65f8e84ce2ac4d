"""The small tier's mixed and outliers medians over several draws, kinhec's beside the published toolkit's.

Usage::

    python benchmarks/fidelity_draws.py [--draws 3] [--workers 2]   # kinhec's draws, then the page section
    python benchmarks/fidelity_draws.py --section-only               # the page section from the stored tables
    python benchmarks/fidelity_draws.py --store-published 0=DIR [0=DIR2] 1=DIR ...

Draw ``k`` is the small tier with its global seed moved by ``k * 1000``
(``support.fidelity_draws.draw_seed``, ``benchmarks/support/``); draw 0 is the shipped tier.  The first
form generates kinhec's draws 1..N of the ``mixed`` and ``outliers`` tracks in a
temporary folder, benchmarks them with the published baselines (``oracle``),
takes draw 0 from ``docs/leaderboard_small.results.parquet``, stores the
medians per draw and pooled in ``docs/fidelity_small_draws.kinhec.csv`` (about a
minute on 2 cores at most) and rewrites the section between ``<!-- small-draws:begin -->``
and ``<!-- small-draws:end -->`` of ``docs/fidelity.md``.  The last form stores
the published side, ``docs/fidelity_small_draws.published.csv``, from folders
written by the published toolkit (version 1.1.0 from the package index, in a
scratch environment, run as a program): for draw ``k``, a copy of its
``small.yaml`` with ``global_seed`` moved by ``k * 1000``, then
``kinhec generate --tier FILE --tracks outliers mixed --out DIR`` and
``kinhec benchmark DIR --sync oracle``; several folders of one draw (one per
track, say) are pooled.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

import pandas as pd

from kinhec.evaluate import fidelity
from support import fidelity_draws as fd

HERE = Path(__file__).resolve().parent
DOCS = HERE.parent / "docs"
PAGE = DOCS / "fidelity.md"
OURS = DOCS / "fidelity_small_draws.kinhec.csv"
PUBLISHED = DOCS / "fidelity_small_draws.published.csv"
DRAW0 = DOCS / "leaderboard_small.results.parquet"
#: The published baselines (its benchmark's solvers).
SOLVERS = ("tsai_lenz", "park_martin", "horaud_dornaika", "daniilidis", "andreff", "andreff_scale", "park_martin+lm",
           "ransac_park_martin", "shah", "li_kronecker", "shah+lm")  # fmt: skip


def section(ours=OURS, published=PUBLISHED) -> str:
    """The page's section from the two stored tables."""
    return fd.render_draws(fd.read_draws(ours), fd.read_draws(published))


def write_section(page: Path = PAGE) -> str:
    body = section()
    page.write_text(fidelity.replace_section(page.read_text(encoding="utf-8"), body, fd.DRAWS_BEGIN, fd.DRAWS_END),
                    encoding="utf-8", newline="\n")  # fmt: skip
    return body


def kinhec_draw(draw: int, root: Path, workers: int) -> pd.DataFrame:
    """Generate kinhec's draw ``draw`` of the small tier's draw tracks under ``root`` and benchmark it."""
    from kinhec.evaluate.benchmark import run_benchmark
    from kinhec.synth.runner import generate_dataset
    from kinhec.synth.tiers import load_tier

    tier = load_tier("small")
    cfg = dict(tier.config, global_seed=fd.draw_seed(tier.global_seed, draw))
    tier = dataclasses.replace(tier, source=f"{tier.source}+draw{draw}", config=cfg)
    data = root / f"draw{draw}"
    gen = generate_dataset(tier, data, workers=workers, tracks=fd.DRAW_TRACKS, progress=False)
    if not gen.ok:
        sys.exit(f"draw {draw}: generation failed: {gen.failed[:1]}")
    bench = run_benchmark(data, workers=workers, solvers=SOLVERS, sync=("oracle",))
    if not bench.ok:
        sys.exit(f"draw {draw}: benchmark failed")
    return pd.read_parquet(bench.files["results"])


def kinhec_draws(n: int, workers: int) -> pd.DataFrame:
    """kinhec's medians per draw (0 from the stored small-tier results, 1..n generated) and pooled."""
    res = {0: pd.read_parquet(DRAW0)}
    with tempfile.TemporaryDirectory(prefix="kinhec_draws_") as tmp:
        for k in range(1, n + 1):
            res[k] = kinhec_draw(k, Path(tmp), workers)
    return fd.draw_medians({k: r[r["solver"].isin(SOLVERS)] for k, r in res.items()})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=3, help="kinhec draws to generate besides draw 0 (default 3)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--section-only", action="store_true", help="only rewrite the page section from the stored tables")
    ap.add_argument("--store-published", nargs="+", metavar="K=DIR", default=None,
                    help="store the published medians from folders written by the published toolkit, then exit")
    a = ap.parse_args(argv)
    if a.store_published:
        by_draw: dict[int, list[pd.DataFrame]] = {}
        for item in a.store_published:
            k, _, d = item.partition("=")
            if not k.isdigit() or not d:
                ap.error(f"--store-published: expected K=DIR (a draw number and a folder), got {item!r}")
            by_draw.setdefault(int(k), []).append(pd.read_parquet(Path(d) / "benchmarks" / "results.parquet"))
        table = fd.draw_medians({k: pd.concat(v, ignore_index=True) for k, v in by_draw.items()})
        print(f"wrote {fd.write_draws(table, PUBLISHED)}")
        return 0
    if not a.section_only:
        print(f"wrote {fd.write_draws(kinhec_draws(a.draws, a.workers), OURS)}")
    print(write_section())
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
