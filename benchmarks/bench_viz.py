"""Wall time of ``make_figures`` with one worker and with several.

Draws every figure of a dataset folder (default: generates the smoke tier
and benchmarks it with two solvers into a temporary folder) once with
``workers=1`` and once with ``--workers N``, prints both wall times, and checks
that the PNGs are the same bytes.

Run: ``python benchmarks/bench_viz.py [--data FOLDER] [--workers 2]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
import time
from pathlib import Path

from kinhec.report.viz import make_figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data
        if root is None:
            from kinhec.evaluate.benchmark import run_benchmark
            from kinhec.synth.runner import generate_dataset

            root = Path(tmp) / "smoke"
            generate_dataset("smoke", root, workers=args.workers)
            run_benchmark(root, workers=args.workers)  # a full run: the results figures need benchmarks/
        digests = {}
        for n in (1, args.workers):
            out = Path(tmp) / f"fig{n}"
            t0, c0 = time.perf_counter(), time.process_time()
            paths = make_figures(root, out=out, workers=n)
            wall = time.perf_counter() - t0
            digests[n] = [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
            print(f"workers={n}: {len(paths)} figures in {wall:.1f} s wall ({time.process_time() - c0:.1f} s CPU in this process)")
        print("PNG bytes identical:", digests[1] == digests[args.workers])


if __name__ == "__main__":
    main()
