"""PnP image formation: what pixel noise on a calibration target does to the measured pose.

Usage::

    python examples/10_pnp_image_formation.py [DATA]

In the ``pnp`` track the camera measurement is not a pose with Gaussian noise
but the result of image formation: the target points are projected with the
true pose, Gaussian noise of ``pixel_std`` px is added, and the pose is
re-estimated by minimising the reprojection error.  The script

* recomputes the visibility flags from the camera and target presets,
* compares the stored reprojection RMSE with its expected value
  ``pixel_std * sqrt((2P - 6) / P)`` for P points,
* projects the target with the true and the measured pose (the displacement
  stays below the pixel noise: the pose averages the noise of all points),
* splits the pose error into the camera axes: the error along the optical
  axis (depth) dominates the lateral ones,
* and calibrates ``X`` with Shah's solver.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from kinhec import KinhecError, iter_sequences, load_manifest, solvers
from kinhec.geometry import se3
from kinhec.models import cameras


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder (default: data)")
    args = ap.parse_args()

    man = load_manifest(args.data)
    sel = man[man.track == "pnp"]
    if sel.empty:
        raise SystemExit(f"{args.data}: no sequence of the pnp track")
    d_all = []
    for seq in iter_sequences(args.data, man, sel.sequence_id.tolist()):
        c = seq.camera
        cam = cameras.get_camera(seq.info.camera)
        tgt = cameras.get_target(seq.info.target)
        vis = cameras.visibility(cam, tgt, c.T_cam_target_gt)
        m = c.has_measurement
        uv_true, _ = cameras.project_points(cam, c.T_cam_target_gt[m], tgt.points_m)
        uv_meas, _ = cameras.project_points(cam, c.T_cam_target_meas[m], tgt.points_m)
        shift_px = np.linalg.norm(uv_meas - uv_true, axis=-1)  # (frames, points)
        # translation error expressed in the camera frame: x, y lateral, z along the optical axis
        d = 1000 * (c.T_cam_target_meas[m, :3, 3] - c.T_cam_target_gt[m, :3, 3])
        d_all.append(d)
        rot, _ = se3.pose_error(c.T_cam_target_meas[m], c.T_cam_target_gt[m])
        A_abs, B_abs = seq.axyb_keyframe_poses()
        xr, xt = se3.pose_error(solvers.shah(A_abs, B_abs)[0], seq.X)
        print(f"{seq.sequence_id}: {seq.configuration}, camera {cam.name} ({cam.width_px}x{cam.height_px}, "
              f"f={cam.f_px:g} px), target {tgt.name} ({tgt.n_points} points), pixel_std {seq.info.pixel_std:g} px")
        print(f"  {int(m.sum())} of {len(c)} frames measured; visibility flags reproduced: "
              f"{bool((vis.visible == c.visible).all())}; depth {np.nanmedian(c.depth_m[m]):.2f} m")
        # At the optimum, 6 of the 2P residual dimensions are absorbed by the pose:
        # E[RMSE^2] = sigma^2 (2P - 6) / P for an RMSE taken over the P points.
        P = int(np.median(c.n_points[m]))
        expected = seq.info.pixel_std * np.sqrt((2 * P - 6) / P)
        print(f"  reprojection RMSE (stored) median {np.nanmedian(c.reproj_rmse_px[m]):.3f} px, expected "
              f"{expected:.3f} px for {P} points; true-vs-measured projection shift median {np.median(shift_px):.3f} px")
        print(f"  pose error: rotation median {np.median(rot):.4f} deg; translation std x {d[:, 0].std():.3f}, "
              f"y {d[:, 1].std():.3f}, z {d[:, 2].std():.3f} mm")
        print(f"  shah: X error {xr:.4f} deg, {xt:.3f} mm")
    d = np.concatenate(d_all)
    lateral = np.sqrt(0.5 * (d[:, 0].var() + d[:, 1].var()))
    print(f"all pnp frames: depth error std {d[:, 2].std():.3f} mm vs lateral {lateral:.3f} mm "
          f"(ratio {d[:, 2].std() / lateral:.1f})")


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
