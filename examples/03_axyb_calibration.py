"""Robot-world / hand-eye calibration ``A X = Y B``: estimate ``X`` and ``Y`` together.

Usage::

    python examples/03_axyb_calibration.py [DATA] [SEQUENCE_ID]

``A_i = T_base_ee`` and ``B_i = inv(T_cam_target)`` (eye-in-hand) or
``T_cam_target`` (eye-to-hand) are the absolute pose pairs at the keyframes.
Shah's and Li's closed forms, then the Levenberg-Marquardt refinement, are
compared on ``X`` and ``Y``; without an argument one eye-in-hand and one
eye-to-hand sequence of the noise track are used.
"""

from __future__ import annotations

import argparse
import sys

from kinhec import KinhecError, load_manifest, load_sequence, solvers
from kinhec.geometry import se3


def calibrate(seq) -> None:
    print(f"{seq.sequence_id}: {seq.info.robot}, {seq.configuration}, level {seq.info.level!r}")
    A_abs, B_abs = seq.axyb_keyframe_poses()
    print(f"  {len(A_abs)} keyframe pose pairs")
    results = {
        "shah": solvers.shah(A_abs, B_abs),
        "li_kronecker": solvers.li_kronecker(A_abs, B_abs),
    }
    results["shah+lm"] = solvers.refine_lm_axyb(A_abs, B_abs, *results["shah"])
    print(f"  {'solver':<14}{'X [deg]':>9}{'X [mm]':>9}{'Y [deg]':>9}{'Y [mm]':>9}")
    for name, (X, Y) in results.items():
        xr, xt = se3.pose_error(X, seq.X)
        yr, yt = se3.pose_error(Y, seq.Y)
        print(f"  {name:<14}{xr:>9.4f}{xt:>9.3f}{yr:>9.4f}{yt:>9.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder (default: data)")
    ap.add_argument("sequence_id", nargs="?", help="sequence (default: two sequences of the noise track)")
    args = ap.parse_args()

    man = load_manifest(args.data)
    if args.sequence_id:
        ids = [args.sequence_id]
    else:
        noise = man[man.track == "noise"]
        ids = [noise[noise.configuration == c].sequence_id.iloc[0] for c in ("eye_in_hand", "eye_to_hand")
               if (noise.configuration == c).any()]  # fmt: skip
    for sid in ids:
        calibrate(load_sequence(args.data, sid, man))


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
