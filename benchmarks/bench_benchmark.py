"""CPU cost of ``kinhec benchmark`` per sequence, and the leaderboard medians it produces.

Usage::

    python benchmarks/bench_benchmark.py [DATA] [--tier smoke] [--workers 1] [--repeats 3]

Without ``DATA`` the tier (default ``smoke``, 46 sequences) is generated into a
temporary folder first.  The benchmark then runs with all eleven baselines and
both synchronisations, ``--repeats`` times into fresh output folders, and the
script prints

* the CPU time per sequence of the whole run (process CPU time of this
  process and its workers: loading, pairing, keyframes, time-offset
  estimation, solvers, writing the parts and the outputs) and of the units
  alone, next to the published toolkit's figure (85 CPU-s for the 46
  sequences of the smoke tier, 1.85 CPU-s per sequence);
* where the time of a unit goes (reading the sequences, pairing and
  keyframes, clock-offset estimation, the solver calls), measured in a
  separate single-process pass;
* the median rotation / translation errors of X per track and solver
  (``oracle``), i.e. the overview table of ``leaderboard.md``.

BLAS threads are pinned to one before numpy is imported, so CPU time is
single-core work.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

from kinhec import io as kio  # noqa: E402
from kinhec.evaluate import benchmark as bm  # noqa: E402
from kinhec.synth.runner import generate_dataset  # noqa: E402
from kinhec.solvers import registry  # noqa: E402

from _phases import phase_breakdown  # noqa: E402  (benchmarks/_phases.py)

#: The published toolkit: 85 CPU-s for the 11 baselines on the 46 smoke sequences.
PUBLISHED_CPU_S_PER_SEQUENCE = 85.0 / 46.0


def _cpu_s() -> float:
    """CPU time of this process and of its finished children [s]."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", help="dataset folder (default: generate --tier into a temporary folder)")
    ap.add_argument("--tier", default="smoke", help="tier to generate when no folder is given (default smoke)")
    ap.add_argument("--workers", type=int, default=1, help="benchmark workers (1 = in this process)")
    ap.add_argument("--gen-workers", type=int, default=2, help="workers for generating the tier")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        if args.data:
            root = Path(args.data)
        else:
            root = Path(tmp) / args.tier
            t0 = time.perf_counter()
            s = generate_dataset(args.tier, root, workers=args.gen_workers, progress=False)
            print(f"generated the {args.tier} tier ({s.written_sequences} sequences) in {time.perf_counter() - t0:.1f} s")
        man = kio.load_manifest(root)
        n_seq = len(man)
        n_async = int(sum(kio.is_asynchronous(v) for v in man.sync))
        print(f"folder: {root} ({n_seq} sequences, {n_async} asynchronous, {len(man.robot_file.unique())} shards)")

        # warm-up: imports and first-call costs are not part of the per-sequence figure
        bm.run_benchmark(root, out=Path(tmp) / "warm", max_sequences=1)

        total, units, walls = [], [], []
        summary = None
        for k in range(max(args.repeats, 1)):
            out = Path(tmp) / f"run{k}"
            c0, w0 = _cpu_s(), time.perf_counter()
            summary = bm.run_benchmark(root, out=out, workers=args.workers)
            total.append(_cpu_s() - c0)
            walls.append(time.perf_counter() - w0)
            units.append(summary.cpu_s)
            assert summary.ok, summary.failed
        best, med = min(total), statistics.median(total)
        print(f"\nkinhec benchmark: {len(registry.SOLVERS)} baselines, oracle + estimated, {args.workers} worker(s), "
              f"{len(total)} runs; {summary.n_rows} result rows, {summary.n_ok} ok")  # fmt: skip
        print(f"  whole run : median {med:.2f} CPU-s = {1000 * med / n_seq:.1f} CPU-ms per sequence "
              f"(best {1000 * best / n_seq:.1f}); wall median {statistics.median(walls):.2f} s")  # fmt: skip
        print(f"  units only: median {statistics.median(units):.2f} CPU-s = "
              f"{1000 * statistics.median(units) / n_seq:.1f} CPU-ms per sequence")  # fmt: skip
        print(f"  published toolkit: {PUBLISHED_CPU_S_PER_SEQUENCE:.2f} CPU-s per sequence -> "
              f"{PUBLISHED_CPU_S_PER_SEQUENCE * n_seq / med:.0f}x less CPU (goal: 20x)")  # fmt: skip

        with warnings.catch_warnings():  # the benchmark records them in its rows; here they are noise
            warnings.simplefilter("ignore")
            br = phase_breakdown(root)
        tot = sum(br["phases"].values())
        print(f"\nwhere a unit's time goes ({br['n']} sequences, one process, {1000 * tot / br['n']:.1f} CPU-ms per "
              "sequence):")  # fmt: skip
        for name, v in br["phases"].items():
            print(f"  {name:<18} {1000 * v / br['n']:7.2f} ms/seq  {100 * v / tot:5.1f} %")
        print("  solvers:")
        for name, v in sorted(br["per_solver"].items(), key=lambda kv: -kv[1]):
            print(f"    {name:<20} {1000 * v / br['n']:7.2f} ms/seq")

        res = summary.results
        summ = bm.summarize_results(res)
        print("\nmedian X rotation error [deg] / translation error [mm] per track (oracle):")
        solvers = [s for s in registry.SOLVERS if s in set(res.solver)]
        width = 16
        print(f"  {'track':<12}" + "".join(f"{s[:width - 1]:>{width}}" for s in solvers))
        for track, per in summ["results"].items():
            cells = []
            for s in solvers:
                st = per.get(s, {}).get("oracle")
                cells.append("-" if st is None else f"{st['X_rot_err_deg_median']:.3f}/{st['X_trans_err_mm_median']:.2f}")
            print(f"  {track:<12}" + "".join(f"{c:>{width}}" for c in cells))
        for track, c in summ["clock_offset"].items():
            print(f"  clock offset ({track}): {c['n_sequences']} sequences, median |error| {c['abs_err_ms_median']:.2f} ms, "
                  f"median peak corr {c['peak_corr_median']:.3f}, median {c['runtime_ms_median']:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
