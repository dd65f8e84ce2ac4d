"""CPU cost of the benchmark's pixel solver (``reprojection``) per pnp sequence, beside the pose solvers.

Usage::

    python benchmarks/bench_pixels.py [DATA] [--tier small] [--tracks pnp] [--threads]

Without ``DATA`` the tier's tracks (default: the small tier's pnp track) are
generated into a temporary folder first.  For every sequence whose pixels the
benchmark can rebuild (:func:`kinhec.evaluate.benchmark.pixels_available`) the script
times, as the benchmark does them, in one process:

* ``rebuild``: re-simulating the pixels from the recipe
  (:func:`kinhec.synth.observations.recipe_pixels`) and checking them against the
  stored poses (not part of the solver's ``runtime_ms``);
* ``solve``: the solver call on the protocol's keyframes (what ``runtime_ms`` holds);
* ``pose solvers``: the twelve pose solvers on the same keyframes, together.

It prints one line per sequence (keyframes, corners, CPU ms) and the medians
and totals.  BLAS threads are pinned to one before numpy is imported, so the
CPU time is single-core work; ``--threads`` leaves them as they are (on a
loaded machine the solver's dense normal equations then cost several times
more wall time).
"""

from __future__ import annotations

import os
import sys

if "--threads" not in sys.argv:
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

from kinhec.evaluate import benchmark as bm  # noqa: E402
from kinhec.evaluate.benchmark import sequence as bseq  # noqa: E402
from kinhec import io as kio  # noqa: E402
from kinhec.synth.runner import generate_dataset  # noqa: E402
from kinhec.solvers import registry  # noqa: E402
from kinhec.solvers.reprojection import solve_pixel_views  # noqa: E402


def measure(root: Path) -> list[dict]:
    """One record per sequence with pixels: keyframes, corners, CPU ms of rebuild, solve and the pose solvers."""
    man = kio.load_manifest(root)
    ids = [r["sequence_id"] for r in man.to_dict("records") if bm.pixels_available(r)]
    pose = list(registry.SOLVERS.values())
    out = []
    for sid in ids:
        seq = kio.load_sequence(root, sid, man)
        inputs = bseq._solver_input(seq, None)
        t0 = time.process_time()
        A, views = bseq._pixel_input(seq, inputs)
        t1 = time.process_time()
        res = solve_pixel_views(A, views)  # what spec.run calls
        t2 = time.process_time()
        for p in pose:
            try:
                p.run(*inputs[p.kind])
            except Exception:  # recorded as a failed row by the benchmark; costs time all the same
                pass
        t3 = time.process_time()
        out.append({"sequence_id": sid, "frames": len(seq.camera), "views": int(A.shape[0]),
                    "corners": int(sum(len(p) for p in views.points_2d)), "rebuild_ms": 1000 * (t1 - t0),
                    "solve_ms": 1000 * (t2 - t1), "pose_ms": 1000 * (t3 - t2), "rms_px": res.rms_px})  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", help="dataset folder (default: generate --tier --tracks into a temporary folder)")
    ap.add_argument("--tier", default="small")
    ap.add_argument("--tracks", nargs="+", default=["pnp"])
    ap.add_argument("--threads", action="store_true", help="leave the BLAS threads as they are")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.data) if args.data else Path(tmp) / args.tier
        if not args.data:
            assert generate_dataset(args.tier, root, workers=1, tracks=args.tracks, progress=False).ok
        # warm-up: imports and first-call costs are not part of the figures
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bm.run_benchmark(root, out=Path(tmp) / "warm", max_sequences=1, solvers=["reprojection", "shah"])
            rows = measure(root)
    if not rows:
        print(f"{root}: no sequence with pixels (pnp, synchronous, kinhec recipe)")
        return
    print(f"{root}: {len(rows)} sequences with pixels; BLAS threads {'as set' if args.threads else 'pinned to 1'}")
    print(f"  {'sequence':<14}{'frames':>7}{'views':>6}{'corners':>8}{'rebuild ms':>11}{'solve ms':>10}"
          f"{'pose ms':>9}{'rms px':>9}")  # fmt: skip
    for r in rows:
        print(f"  {r['sequence_id']:<14}{r['frames']:>7}{r['views']:>6}{r['corners']:>8}{r['rebuild_ms']:>11.1f}"
              f"{r['solve_ms']:>10.1f}{r['pose_ms']:>9.1f}{r['rms_px']:>9.3g}")  # fmt: skip
    for key, what in (("rebuild_ms", "rebuild + check"), ("solve_ms", "reprojection (runtime_ms)"),
                      ("pose_ms", "12 pose solvers together")):  # fmt: skip
        v = [r[key] for r in rows]
        print(f"  {what:<26} median {statistics.median(v):8.1f} CPU-ms, max {max(v):8.1f}, total {sum(v) / 1000:.2f} CPU-s")


if __name__ == "__main__":
    main()
