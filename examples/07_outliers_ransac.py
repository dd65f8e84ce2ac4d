"""Outlier-robust hand-eye calibration: closed form against RANSAC on the outliers track.

Usage::

    python examples/07_outliers_ransac.py [DATA]

Some camera measurements of the ``outliers`` track are replaced by gross
errors (the per-frame ``outlier`` label says which).  A keyframe motion is
corrupted when either of its two frames is an outlier.  Park-Martin uses every
motion; ``solvers.ransac_axxb`` keeps the motions consistent with the best
two-motion hypothesis, and the true labels show how well it separated them.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from kinhec import KinhecError, iter_sequences, load_manifest, solvers
from kinhec.geometry import se3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder (default: data)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the RANSAC samples (default: 0)")
    args = ap.parse_args()

    man = load_manifest(args.data)
    sel = man[man.track == "outliers"]
    if sel.empty:
        raise SystemExit(f"{args.data}: no sequence of the outliers track")
    rng = np.random.default_rng(args.seed)
    print(f"{'sequence':<17}{'level':<40}{'motions':>8}{'corrupt':>8}{'PM [mm]':>9}{'RANSAC [mm]':>12}"
          f"{'inliers':>8}{'corrupt kept':>13}")  # fmt: skip
    pm_all, rs_all = [], []
    for seq in iter_sequences(args.data, man, sel.sequence_id.tolist()):
        A, B, idx = seq.axxb_motions(return_index=True)  # idx: camera frames of the keyframes
        is_out = seq.camera.outlier[idx]
        corrupt = is_out[:-1] | is_out[1:]  # motion k joins keyframes k and k + 1
        pm = se3.pose_error(solvers.park_martin(A, B), seq.X)[1]
        res = solvers.ransac_axxb(A, B, rng)
        rs = se3.pose_error(res.X, seq.X)[1]
        pm_all.append(pm)
        rs_all.append(rs)
        print(f"{seq.sequence_id:<17}{seq.info.level:<40}{len(A):>8}{int(corrupt.sum()):>8}{pm:>9.2f}{rs:>12.2f}"
              f"{res.n_inliers:>8}{int((res.inliers & corrupt).sum()):>13}")  # fmt: skip
    print(f"median translation error of X: park_martin {np.median(pm_all):.2f} mm, "
          f"ransac_axxb {np.median(rs_all):.2f} mm")  # fmt: skip


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
