"""Monocular scale: hand-eye calibration when the camera translations are known only up to a scale.

Usage::

    python examples/08_monocular_scale.py [DATA]

In the ``monocular`` track the camera stream comes from a visual-odometry
style sensor: its translations are ``scale`` times the metric ones (the
``scale`` column; the ground truth ``X`` stays metric).  A metric solver
(Park-Martin) then gets the translation of ``X`` wrong, while Andreff's
linear solver with ``unknown_scale=True`` estimates the scale together with
``X``.
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
    args = ap.parse_args()

    man = load_manifest(args.data)
    sel = man[man.track == "monocular"]
    if sel.empty:
        raise SystemExit(f"{args.data}: no sequence of the monocular track")
    print(f"{'sequence':<18}{'robot':<8}{'camera model':<14}{'scale':>7}{'estimated':>10}{'rel. err':>9}"
          f"{'andreff [deg / mm]':>20}{'park_martin [mm]':>18}")  # fmt: skip
    rel_errs = []
    for seq in iter_sequences(args.data, man, sel.sequence_id.tolist()):
        A, B = seq.axxb_motions()
        X, scale = solvers.andreff(A, B, unknown_scale=True)
        rot, trans = se3.pose_error(X, seq.X)
        pm = se3.pose_error(solvers.park_martin(A, B), seq.X)[1]
        rel = scale / seq.scale - 1.0
        rel_errs.append(abs(rel))
        print(f"{seq.sequence_id:<18}{seq.info.robot:<8}{seq.info.camera_noise_model:<14}{seq.scale:>7.2f}"
              f"{scale:>10.3f}{100 * rel:>8.1f}%{rot:>11.3f} / {trans:<7.2f}{pm:>17.2f}")  # fmt: skip
    print(f"median relative scale error {100 * np.median(rel_errs):.1f}% over {len(rel_errs)} sequences")


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
