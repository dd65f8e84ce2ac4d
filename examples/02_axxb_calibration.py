"""Hand-eye calibration ``A X = X B`` on one sequence with every closed-form solver.

Usage::

    python examples/02_axxb_calibration.py [DATA] [SEQUENCE_ID]

The relative motions between keyframes are built from the measured streams
(``Sequence.axxb_motions``) and from the exact ones (``ground_truth=True``);
every solver recovers ``X`` exactly from the exact motions, and the error on
the measured ones shows how each copes with the noise of the sequence.
"""

from __future__ import annotations

import argparse
import sys

from kinhec import KinhecError, load_manifest, load_sequence, solvers
from kinhec.geometry import se3

SOLVERS = {
    "tsai_lenz": solvers.tsai_lenz,
    "park_martin": solvers.park_martin,
    "horaud_dornaika": solvers.horaud_dornaika,
    "daniilidis": solvers.daniilidis,
    "andreff": solvers.andreff,
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder (default: data)")
    ap.add_argument("sequence_id", nargs="?", help="sequence (default: the first of the noise track)")
    args = ap.parse_args()

    man = load_manifest(args.data)
    sid = args.sequence_id or man[man.track == "noise"].sequence_id.iloc[0]
    seq = load_sequence(args.data, sid, man)
    print(f"{sid}: {seq.info.robot}, {seq.configuration}, level {seq.info.level!r}")

    A, B = seq.axxb_motions()  # measured: A_k = inv(A_i) A_j (flange), B_k = inv(B_i) B_j (camera side)
    A_gt, B_gt = seq.axxb_motions(ground_truth=True)
    print(f"{len(A)} keyframe motions")
    print(f"{'solver':<18}{'rot err [deg]':>14}{'trans err [mm]':>16}{'exact data [deg / mm]':>26}")
    for name, solve in SOLVERS.items():
        rot, trans = se3.pose_error(solve(A, B), seq.X)
        rot0, trans0 = se3.pose_error(solve(A_gt, B_gt), seq.X)
        print(f"{name:<18}{rot:>14.4f}{trans:>16.3f}{rot0:>15.1e} / {trans0:.1e}")

    # Non-linear refinement on SE(3), started from Park-Martin.
    X = solvers.refine_lm(A, B, solvers.park_martin(A, B))
    rot, trans = se3.pose_error(X, seq.X)
    print(f"{'park_martin+lm':<18}{rot:>14.4f}{trans:>16.3f}")


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
