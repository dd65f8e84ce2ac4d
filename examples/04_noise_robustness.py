"""Noise-robustness curve: calibration error against the named noise levels of the noise track.

Usage::

    python examples/04_noise_robustness.py [DATA]

Every sequence of the ``noise`` track is calibrated with Park-Martin
(``A X = X B``) and Shah (``A X = Y B``); the median errors of ``X`` are
printed per robot and camera noise level, next to the noise the levels stand
for (read from the per-sequence columns, not from the level names).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from kinhec import KinhecError, iter_sequences, load_manifest, solvers
from kinhec.geometry import se3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder (default: data)")
    args = ap.parse_args()

    man = load_manifest(args.data)
    noise = man[man.track == "noise"]
    if noise.empty:
        raise SystemExit(f"{args.data}: no sequence of the noise track")
    rows = []
    for seq in iter_sequences(args.data, man, noise.sequence_id.tolist()):  # one shard read at a time
        A, B = seq.axxb_motions()
        A_abs, B_abs = seq.axyb_keyframe_poses()
        pm = se3.pose_error(solvers.park_martin(A, B), seq.X)
        sh = se3.pose_error(solvers.shah(A_abs, B_abs)[0], seq.X)
        levels = dict(part.split("=", 1) for part in seq.info.level.split("|"))  # "robot=r2|camera=c1"
        rows.append({
            "robot_level": levels["robot"], "camera_level": levels["camera"],
            "camera_depth_std_mm": 1000 * seq.info.camera_trans_std_z_m,
            "robot_trans_std_mm": 1000 * seq.info.robot_trans_std_m,
            "park_martin_deg": pm[0], "park_martin_mm": pm[1], "shah_deg": sh[0], "shah_mm": sh[1],
        })  # fmt: skip
    df = pd.DataFrame(rows)
    table = df.groupby(["robot_level", "camera_level"]).agg(
        n=("shah_mm", "size"),
        robot_mm=("robot_trans_std_mm", "first"),
        camera_z_mm=("camera_depth_std_mm", "first"),
        park_martin_deg=("park_martin_deg", "median"),
        park_martin_mm=("park_martin_mm", "median"),
        shah_deg=("shah_deg", "median"),
        shah_mm=("shah_mm", "median"),
    )
    print(f"median error of X over {len(df)} sequences of the noise track")
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    by_cam = df.groupby("camera_level")["shah_mm"].median()
    if len(by_cam) > 1:
        lo, hi = by_cam.index[0], by_cam.index[-1]
        print(f"shah: median translation error of X grows from {by_cam[lo]:.3f} mm ({lo}) to {by_cam[hi]:.3f} mm "
              f"({hi}), a factor {by_cam[hi] / by_cam[lo]:.1f}")  # fmt: skip
    print(f"overall median: park_martin {np.median(df.park_martin_mm):.3f} mm, shah {np.median(df.shah_mm):.3f} mm")


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
