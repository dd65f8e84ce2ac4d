"""Degeneracy analysis: how the diversity of the rotation axes decides whether ``X`` is observable.

Usage::

    python examples/05_degeneracy.py [DATA]

For every sequence of the ``motion`` track, the index column
``axis_scatter_lambda2`` (second eigenvalue of the angle-weighted scatter
matrix of the flange rotation axes; 0 when all axes are parallel) is printed
next to the error of ``X``.  On noisy data the solvers warn and return a
poorly constrained estimate; on exact data with parallel axes they refuse
with ``DegenerateMotionError``, because the rotation of ``X`` about the common
axis (and the translation along it) cannot be recovered from any solver.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

from kinhec import DegenerateMotionError, KinhecError, iter_sequences, load_manifest, solvers
from kinhec.geometry import se3
from kinhec.solvers import NEAR_DEGENERATE_LAMBDA2, DegenerateMotionWarning


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder (default: data)")
    args = ap.parse_args()

    man = load_manifest(args.data)
    motion = man[man.track == "motion"].sort_values("axis_scatter_lambda2")
    if motion.empty:
        raise SystemExit(f"{args.data}: no sequence of the motion track")
    print(f"{'sequence':<15}{'robot':<8}{'level':<24}{'lambda2':>10}{'rot [deg]':>10}"
          f"{'X err [deg]':>12}{'X err [mm]':>12}  exact data")  # fmt: skip
    errs = {"degenerate": [], "general": []}
    by_id = {s.sequence_id: s for s in iter_sequences(args.data, man, motion.sequence_id.tolist())}
    for sid in motion.sequence_id:
        seq = by_id[sid]
        A, B = seq.axxb_motions()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DegenerateMotionWarning)
            rot, trans = se3.pose_error(solvers.park_martin(A, B), seq.X)
        warned = any(issubclass(w.category, DegenerateMotionWarning) for w in caught)
        try:
            A_gt, B_gt = seq.axxb_motions(ground_truth=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateMotionWarning)
                r0, t0 = se3.pose_error(solvers.park_martin(A_gt, B_gt), seq.X)
            exact = f"recovered ({r0:.0e} deg, {t0:.0e} mm)"
        except DegenerateMotionError:
            exact = "refused: DegenerateMotionError"
        lam2 = float(seq.info.axis_scatter_lambda2)
        errs["degenerate" if lam2 < NEAR_DEGENERATE_LAMBDA2 else "general"].append(trans)
        print(f"{sid:<15}{seq.info.robot:<8}{seq.info.level:<24}{lam2:>10.2e}{seq.info.mean_rot_angle_deg:>10.1f}"
              f"{rot:>12.3f}{trans:>12.2f}  {exact}{'  [warned]' if warned else ''}")  # fmt: skip
    for k, v in errs.items():
        if v:
            print(f"{k} motions (lambda2 {'<' if k == 'degenerate' else '>='} {NEAR_DEGENERATE_LAMBDA2:g}): "
                  f"{len(v)} sequences, median translation error of X {np.median(v):.2f} mm")  # fmt: skip


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
