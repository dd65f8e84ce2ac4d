"""Time ``kinhec validate`` on a generated folder.

Generates the smoke tier (46 sequences) into a temporary folder, or uses the
folder given on the command line, then prints the wall time of
:func:`kinhec.dataset.validate.validate_dataset` (best and median of a few runs), the
throughput in sequences and frames per second, the time of a sampled run
(``max_sequences``) and the share of each phase (folder-level checks, reading
the row groups, the per-sequence checks).

Run: ``python benchmarks/bench_validate.py [DATA] [--repeats N] [--workers N]``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import tempfile
import time
from pathlib import Path

from kinhec import io as kio
from kinhec.synth.runner import generate_dataset
from kinhec.dataset.validate import validate_dataset


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", help="dataset folder (default: generate the smoke tier)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2, help="workers for generating the smoke tier")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        if args.data:
            root = Path(args.data)
        else:
            root = Path(tmp) / "smoke"
            t0 = time.perf_counter()
            summary = generate_dataset("smoke", root, workers=args.workers, progress=False)
            print(f"generated the smoke tier ({summary.written_sequences} sequences) in {time.perf_counter() - t0:.1f} s")
        man = kio.load_manifest(root)
        n_seq = len(man)
        n_frames = int(man.n_robot_frames.sum() + man.n_camera_frames.sum())

        times = []
        report = None
        for _ in range(max(args.repeats, 1)):
            t0 = time.perf_counter()
            report = validate_dataset(root)
            times.append(time.perf_counter() - t0)
        best, med = min(times), statistics.median(times)
        print(f"folder: {root} ({n_seq} sequences, {n_frames:,} frames)")
        print(f"validate (all sequences): best {best:.3f} s, median {med:.3f} s over {len(times)} runs; "
              f"{n_seq / best:.0f} sequences/s, {n_frames / best / 1e6:.2f} M frames/s; "
              f"{report.n_errors} errors, {report.n_warnings} warnings")  # fmt: skip
        k = max(n_seq // 4, 1)
        t0 = time.perf_counter()
        validate_dataset(root, max_sequences=k)
        print(f"validate --max-sequences {k}: {time.perf_counter() - t0:.3f} s")

        prof = cProfile.Profile()
        prof.enable()
        validate_dataset(root)
        prof.disable()
        stats = pstats.Stats(prof)
        total = stats.total_tt
        by_name = {}
        for (filename, _line, func), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():
            if filename.endswith("validate.py"):
                by_name[func] = by_name.get(func, 0.0) + ct
        phases = {
            "folder checks (files, index, csv, shard footers, row groups)": sum(
                by_name.get(f, 0.0) for f in ("_check_files", "_check_index_schema", "_check_index_csv", "_check_row_groups")
            ),
            "reading row groups": by_name.get("read", 0.0),
            "decoding + per-sequence checks": by_name.get("_check_sequence", 0.0) - by_name.get("read", 0.0),
        }
        print(f"profile ({total:.3f} s under cProfile):")
        for name, sec in phases.items():
            print(f"  {name:<62} {sec:7.3f} s  {100 * sec / total:5.1f} %")


if __name__ == "__main__":
    main()
