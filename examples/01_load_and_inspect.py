"""Load a KinHEC-format dataset, look at its index and at one sequence.

Usage::

    python examples/01_load_and_inspect.py [DATA] [SEQUENCE_ID]

Prints the composition of the copy, the two streams and the ground truth of
one sequence, and checks the identity ``A_i X = Y B_i`` on its true poses.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from kinhec import KinhecError, load_manifest, load_sequence
from kinhec.geometry import se3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder (default: data)")
    ap.add_argument("sequence_id", nargs="?", help="sequence to inspect (default: the first of the index)")
    args = ap.parse_args()

    man = load_manifest(args.data)  # pandas DataFrame, one row per sequence
    print(f"{len(man)} sequences, {int(man.n_robot_frames.sum()):,} robot frames, "
          f"{int(man.n_camera_frames.sum()):,} camera frames")  # fmt: skip
    print(man.groupby("track", sort=False).size().to_string())
    print()

    sid = args.sequence_id or man.sequence_id.iloc[0]
    seq = load_sequence(args.data, sid, man)  # reads only this sequence's row groups
    print(seq)
    info = seq.info
    print(f"robot {info.robot}, {seq.configuration}, family {info.family}, level {info.level!r}")
    r, c = seq.robot, seq.camera
    print(f"robot stream : {len(r)} frames over {r.t[-1] - r.t[0]:.2f} s, {r.dof} joints")
    print(f"camera stream: {len(c)} frames, {int(c.has_measurement.sum())} measured, "
          f"{int(c.visible.sum())} with the target visible, {int(c.outlier.sum())} outliers")  # fmt: skip

    p, q = se3.pq_from_transform(seq.X)
    print(f"X position [m] {np.round(p, 4)}, quaternion (w, x, y, z) {np.round(q, 4)}")
    p, q = se3.pq_from_transform(seq.Y)
    print(f"Y position [m] {np.round(p, 4)}, quaternion (w, x, y, z) {np.round(q, 4)}")

    # Error of the stored measurements against the ground truth, per frame.
    rot_r, trans_r = se3.pose_error(r.T_base_ee_meas, r.T_base_ee_gt)
    m = c.has_measurement
    rot_c, trans_c = se3.pose_error(c.T_cam_target_meas[m], c.T_cam_target_gt[m])
    print(f"robot measurement error : median {np.median(rot_r):.4f} deg, {np.median(trans_r):.3f} mm")
    print(f"camera measurement error: median {np.median(rot_c):.4f} deg, {np.median(trans_c):.3f} mm")

    # The ground truth is exact: A_i X = Y B_i holds on every camera frame.
    A_abs, B_abs = seq.axyb_poses(ground_truth=True)
    rot, trans = se3.pose_error(A_abs @ seq.X, seq.Y @ B_abs)
    print(f"A_i X = Y B_i on {len(A_abs)} true pose pairs: max residual {rot.max():.2e} deg, {trans.max():.2e} mm")


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
