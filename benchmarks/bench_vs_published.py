"""CPU of ``kinhec benchmark`` against the published toolkit's on the same copy of the published smoke tier.

Usage::

    python benchmarks/bench_vs_published.py --published /path/to/venv-published/bin/kinhec \
        [--copy ../shared/published/smoke] [--repeats 3]

The published toolkit (``pip install kinhec`` from PyPI) is a measuring
instrument only: install it in a scratch virtual environment outside the
repository and pass its ``kinhec`` command; it is run as a separate program,
never imported.  Each repeat copies the folder twice (without its
``benchmarks/``) and runs, one after the other, in the same environment,

* ``kinhec benchmark COPY --workers 1`` of this checkout (every solver: the
  eleven published baselines, ``he_ml``, the pixel solver where the pixels can
  be rebuilt, and the Cramér-Rao bound columns), and
* ``<published kinhec> benchmark COPY --workers 1 --no-card``,

and measures the CPU time (user + system of the command and its children: the
whole command, start-up and imports included) and the wall time of each.  The
order alternates between repeats.  The script then prints the medians, their
ratio (the goal: the published toolkit's CPU at least 20 times kinhec's), and a
per-solver table: kinhec's CPU per call from a single-process pass over the
copy (``time.process_time``, with the pairing, the clock offset, the bound
columns and the reading as further rows) beside the median wall time per call
that each toolkit wrote into its ``results.parquet`` (``runtime_ms``).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pandas as pd

from _phases import phase_breakdown  # benchmarks/_phases.py

_REPO = Path(__file__).resolve().parents[1]


def _default_copy() -> Path:
    for p in _REPO.parents:
        if (p / "shared" / "published" / "smoke").is_dir():
            return p / "shared" / "published" / "smoke"
    return _REPO.parent / "shared" / "published" / "smoke"


def _children_cpu() -> float:
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ch.ru_utime + ch.ru_stime


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("benchmarks"))
    for p in [dst, *dst.rglob("*")]:
        p.chmod(p.stat().st_mode | 0o200)
    return dst


def _run(cmd: list[str]) -> tuple[float, float]:
    """CPU [s] and wall [s] of a command (and its children)."""
    c0, w0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return _children_cpu() - c0, time.perf_counter() - w0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--published", required=True, help="the published toolkit's kinhec command (in a scratch venv)")
    ap.add_argument("--copy", type=Path, default=_default_copy(), help="a folder written by the published toolkit")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    ours_cmd = [str(Path(sys.executable).parent / "kinhec")]
    if not Path(ours_cmd[0]).is_file():
        ours_cmd = [sys.executable, "-m", "kinhec"]
    n_seq = len(pd.read_parquet(args.copy / "sequences.parquet", columns=["sequence_id"]))
    print(f"copy: {args.copy} ({n_seq} sequences); OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    runs = {"kinhec": [], "published": []}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.repeats):
            order = ("kinhec", "published") if k % 2 == 0 else ("published", "kinhec")
            for who in order:
                root = _copy(args.copy, Path(tmp) / f"{who}{k}")
                if who == "kinhec":
                    cmd = [*ours_cmd, "benchmark", str(root), "--workers", "1", "-q"]
                else:
                    cmd = [args.published, "benchmark", str(root), "--workers", "1", "--no-card"]
                cpu, wall = _run(cmd)
                runs[who].append((cpu, wall, root))
                print(f"  run {k + 1} {who:<9}: {cpu:6.2f} CPU-s, {wall:6.2f} s wall", flush=True)
        med = {w: statistics.median(c for c, _, _ in r) for w, r in runs.items()}
        print(f"\nmedian of {args.repeats}: kinhec {med['kinhec']:.2f} CPU-s ({1000 * med['kinhec'] / n_seq:.0f} ms per "
              f"sequence), published {med['published']:.2f} CPU-s: the published toolkit takes "
              f"{med['published'] / med['kinhec']:.1f}x kinhec's CPU (goal: at least 20x)")  # fmt: skip
        ours = pd.read_parquet(runs["kinhec"][-1][2] / "benchmarks" / "results.parquet")
        theirs = pd.read_parquet(runs["published"][-1][2] / "benchmarks" / "results.parquet")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            per = phase_breakdown(runs["kinhec"][-1][2])
    rt_ours = ours.groupby("solver").runtime_ms.median()
    rt_theirs = theirs.groupby("solver").runtime_ms.median()
    print("\n| solver | calls | kinhec CPU per call [ms] | kinhec CPU total [s] | runtime_ms median, kinhec | "
          "runtime_ms median, published |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, c in sorted(per["per_solver"].items(), key=lambda kv: -kv[1]):
        k = per["calls"][name]
        if not k:
            continue
        pub = f"{rt_theirs[name]:.2f}" if name in rt_theirs else "-"
        print(f"| `{name}` | {k} | {1000 * c / k:.2f} | {c:.2f} | {rt_ours.get(name, float('nan')):.2f} | {pub} |")
    for name, c in per["phases"].items():
        if name != "solvers":
            print(f"| {name} | | | {c:.2f} | | |")
    total = sum(per["phases"].values())
    print(f"| **total in the units** | | | {total:.2f} | | |")


if __name__ == "__main__":
    main()
