"""Robot-model errors: joint-encoder noise and uncalibrated DH parameters, and what they do to ``X``.

Usage::

    python examples/09_robot_model_errors.py [DATA]

In the ``robot_error`` track the flange poses the robot reports come from
its *nominal* kinematic model applied to the joint readings.  With
``joint_gaussian`` the readings are noisy; with ``dh_error`` the readings are
exact but the real arm's DH parameters differ from the nominal ones (the true
ones are stored in ``extra_json["true_dh"]``), so the error is a smooth,
systematic function of the configuration rather than noise.  The script
reproduces both streams from the joint positions with the two models and
calibrates with Shah's ``A X = Y B`` solver.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from kinhec import KinhecError, iter_sequences, load_manifest, solvers
from kinhec.geometry import se3
from kinhec.models.robots import RobotModel, get_robot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder (default: data)")
    args = ap.parse_args()

    man = load_manifest(args.data)
    sel = man[man.track == "robot_error"]
    if sel.empty:
        raise SystemExit(f"{args.data}: no sequence of the robot_error track")
    for seq in iter_sequences(args.data, man, sel.sequence_id.tolist()):
        r = seq.robot
        nominal = get_robot(seq.info.robot)
        true_dh = seq.extra.get("true_dh")
        # the perturbed DH table (a, d [m], alpha, theta_offset [rad]) over the nominal model
        real = RobotModel.from_dict({**nominal.to_published_dict(), **true_dh}) if true_dh else nominal
        print(f"{seq.sequence_id}: {seq.info.robot}, {seq.info.robot_noise_models}, level {seq.info.level!r}")

        # The reported poses are the nominal model at the joint readings ...
        rot, trans = se3.pose_error(nominal.fk(r.q_meas), r.T_base_ee_meas)
        print(f"  nominal FK(q_meas) vs reported pose : max {rot.max():.1e} deg, {trans.max():.1e} mm")
        # ... and the true poses are the real arm at the true joint positions.
        rot, trans = se3.pose_error(real.fk(r.q_gt), r.T_base_ee_gt)
        print(f"  real FK(q_gt) vs true pose          : max {rot.max():.1e} deg, {trans.max():.1e} mm")
        q_err = np.degrees(np.abs(r.q_meas - r.q_gt)).max()
        rot, trans = se3.pose_error(r.T_base_ee_meas, r.T_base_ee_gt)
        print(f"  joint reading error max {q_err:.4f} deg; reported flange error median {np.median(rot):.4f} deg, "
              f"{np.median(trans):.3f} mm (max {trans.max():.3f} mm)")  # fmt: skip
        # Noise averages out over the frames; a model error leaves a common part (a bias) in the error vectors.
        dp = r.T_base_ee_meas[:, :3, 3] - r.T_base_ee_gt[:, :3, 3]
        bias = np.linalg.norm(dp.mean(axis=0)) / np.sqrt((dp**2).sum(axis=1).mean())
        print(f"  |mean error vector| / rms error = {bias:.2f} (0 for zero-mean noise, 1 for a constant offset)")
        if true_dh:
            da = np.abs(np.subtract(true_dh["a"], nominal.a_m)).max() * 1000
            dd = np.abs(np.subtract(true_dh["d"], nominal.d_m)).max() * 1000
            print(f"  largest DH length error: a {da:.3f} mm, d {dd:.3f} mm")

        A_abs, B_abs = seq.axyb_keyframe_poses()
        X, Y = solvers.shah(A_abs, B_abs)
        xr, xt = se3.pose_error(X, seq.X)
        yr, yt = se3.pose_error(Y, seq.Y)
        print(f"  shah: X error {xr:.4f} deg, {xt:.3f} mm; Y error {yr:.4f} deg, {yt:.3f} mm")


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
