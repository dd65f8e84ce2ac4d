"""The run-derived figures of ``docs/performance.md``: the small tier's generation and benchmark.

The block ``performance.small`` is rendered from the stored run of ``docs/leaderboard_small`` (its
``run.json``: wall and CPU times, size on disk, machine), the same run ``docs/leaderboard_small.md`` quotes, so
the two pages cannot give different figures.  ``python docs/build_figures.py --measure`` re-measures it.
Written by ``python docs/build_figures.py``; checked by ``tests/test_doc_figures.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN_INFO = HERE / "leaderboard_small.run.json"
RESULTS = HERE / "leaderboard_small.results.parquet"
#: The published toolkit's earlier figures: small-tier generation [CPU-s]; baselines per sequence on smoke [CPU-s].
PUBLISHED_GENERATE_CPU_S = 1150.0
PUBLISHED_BASELINES_CPU_S_PER_SEQUENCE = 1.85


#: The page's blocks, in page order; those whose figures depend on the OpenCV version installed.
NAMES = ('performance.small',)
OPENCV_BLOCKS = ()


def render_small(run: dict, n_sequences: int, n_rows: int, workers: int) -> str:
    g, b, size, m = run["generate"], run["benchmark"], run["size"], run.get("machine") or {}
    load = m.get("load_average")
    where = f"{m.get('cpus', '?')} cores" + (f", load average {load[0]:.1f} at the end of the run" if load else "")
    return (
        "| command | wall | CPU in the workers | per sequence | shards on disk |\n"
        "|---|---:|---:|---:|---:|\n"
        f"| `kinhec generate --tier small --workers {workers}` ({n_sequences} sequences) | {g['wall_s']:.1f} s | "
        f"{g['cpu_s']:.1f} CPU-s | {1e3 * g['cpu_s'] / n_sequences:.0f} ms | {size['shard_bytes'] / 1e6:.0f} MB, "
        f"{size['shard_bytes'] / size['frames']:.1f} B/frame |\n"
        f"| `kinhec benchmark small --workers {workers}` ({n_rows:,} result rows) | {b['wall_s']:.0f} s | "
        f"{b['cpu_s']:.0f} CPU-s | {1e3 * b['cpu_s'] / n_sequences:.0f} ms | |\n"
        "\n"
        f"Measured by `python docs/build_figures.py --measure` ({where}; the run behind "
        "`docs/leaderboard_small.md`). The benchmark runs every pose solver on both synchronisations and the pixel "
        "solver on the pnp track, with BLAS on one thread per worker. The published toolkit's figures (small-tier "
        f"generation about {PUBLISHED_GENERATE_CPU_S:,.0f} CPU-s; the eleven baselines "
        f"{PUBLISHED_BASELINES_CPU_S_PER_SEQUENCE} CPU-s per sequence on smoke) are about "
        f"{PUBLISHED_GENERATE_CPU_S / g['cpu_s']:.0f}x and "
        f"{PUBLISHED_BASELINES_CPU_S_PER_SEQUENCE * n_sequences / b['cpu_s']:.0f}x these.\n"
    )


def blocks(run_path: Path = RUN_INFO, results_path: Path = RESULTS) -> dict[str, str]:
    import pandas as pd

    res = pd.read_parquet(results_path, columns=["sequence_id"])
    run = json.loads(Path(run_path).read_text())
    return {"performance.small": render_small(run, int(res.sequence_id.nunique()), len(res), _workers())}


def _workers() -> int:
    import importlib.util

    spec = importlib.util.spec_from_file_location("leaderboard_small_page", HERE / "leaderboard_small.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.WORKERS
