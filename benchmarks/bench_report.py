"""Time ``kinhec report`` and measure the page it writes.

Uses the dataset folder given on the command line (it should hold
``benchmarks/results.parquet``), or generates and benchmarks the small tier
(562 sequences) into a temporary folder.  Prints the wall time of
:func:`kinhec.report.build_benchmark_report` (best and median of a few
runs), the time of each step, the page size and how it splits between
plotly.js (packed), the per-sequence drill-down data and the rest.  The time
the page takes to open in a browser: ``benchmarks/bench_pages.py``.

Run: ``python benchmarks/bench_report.py [DATA] [--repeats N] [--tier small] [--workers N]``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from pathlib import Path

from kinhec.evaluate.benchmark import run_benchmark
from kinhec.report import build_benchmark_report
from kinhec.synth.runner import generate_dataset


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", help="benchmarked dataset folder (default: generate and benchmark --tier)")
    ap.add_argument("--tier", default="small")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2, help="workers for generating and benchmarking the tier")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        if args.data:
            root = Path(args.data)
        else:
            root = Path(tmp) / args.tier
            t0 = time.perf_counter()
            generate_dataset(args.tier, root, workers=args.workers, progress=False)
            run_benchmark(root, workers=args.workers)
            print(f"generated and benchmarked the {args.tier} tier in {time.perf_counter() - t0:.1f} s")
        out = Path(tmp) / "report.html"
        times, steps = [], []
        for _ in range(max(args.repeats, 1)):
            lines: list[str] = []
            t0 = time.perf_counter()
            build_benchmark_report(root, out, on_progress=lines.append)
            times.append(time.perf_counter() - t0)
            steps = lines
        text = out.read_text(encoding="utf-8")
        m = re.search(r'<script type="application/json" id="kinhec-data">(.*?)</script>', text, re.S)
        data = json.loads(m.group(1).replace("<\\/", "</"))
        scenes = len(json.dumps(data["scenes"], separators=(",", ":")))
        sequences = len(json.dumps(data["sequences"], separators=(",", ":")))
        plotly = len(re.search(r'<script type="application/octet-stream" id="kinhec-plotly"[^>]*>(.*?)</script>', text,
                               re.S).group(1))  # packed (gzip + base64)
        size = out.stat().st_size
        n = len(data["sequences"])
        print(f"kinhec report {root}: {n} sequences, {len(data['solvers'])} solvers")
        print(f"  wall time: best {min(times):.2f} s, median {statistics.median(times):.2f} s over {len(times)} runs")
        for line in steps:
            print(f"    {line}")
        print(f"  page: {size / 1e6:.2f} MB = plotly.js packed {plotly / 1e6:.2f} MB + drill-down data {scenes / 1e6:.2f} MB "
              f"({scenes / max(n, 1) / 1e3:.1f} kB per sequence) + sequence table {sequences / 1e6:.2f} MB "
              f"+ rest {(size - plotly - scenes - sequences) / 1e6:.2f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
