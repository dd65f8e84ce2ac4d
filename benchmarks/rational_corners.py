"""A wide-angle lens of OpenCV's rational model through ``calibrate --corners``: X's error by the model fitted.

    python benchmarks/rational_corners.py [--n 10] [--seed 0] [--tilt 20]

For each setup, ``--n`` generated ``pnp`` station recordings (those of ``benchmarks/fisheye_corners.py``: 12-20
stations of a UR5e, eye-in-hand a 10 x 8 grid of 60 mm, eye-to-hand a 9 x 6 chessboard of 25 mm, robot flange error
0.1-0.3 mrad / 0.05-0.15 mm) are seen through the 120 deg lens ``rational_120`` of
:data:`kinhec.synth.observations.RATIONAL_LENSES` (1280 x 1024, the field's edge at the image's corners, ``k1 ..
k6`` of a few units, decentring of about 1 px at the edge), mounted turned by ``--tilt`` deg (20) so that the
target lies off the axis, with Gaussian pixel noise at the detector's level (:data:`~kinhec.synth.observations.DETECTOR_STD_PX`).
Each recording is calibrated three times with the intrinsics estimated, the observation file stating each model in
turn: ``rational`` (the lens's own), ``equidistant`` (the fisheye's four terms in the angle) and ``radtan`` (the
pinhole with OpenCV's five coefficients).

A recording that some model cannot calibrate (its views determine no camera) is left out for all three, and named.
Printed per setup and model: the RMS error of ``X`` (rotation [deg], translation [mm]), the Cramér-Rao bound's RMS
of the rational model at the truth (:func:`fisheye_corners.crb_x`) and the ratio, the NEES of ``X`` with the
reported covariance (6 on average when the error bars are right), the recordings whose error exceeds 5 times their
own bound, the pixel noise the fit estimated, and the CPU time.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from fisheye_corners import _x_error, crb_x, recipe
from kinhec.calibrate.corners import calibrate_corners
from kinhec.synth.observations import DETECTOR_STD_PX, fisheye_observations_from_recipe, transform_from_pose_json
from kinhec.util.errors import KinhecError

SETUPS = (("eye_in_hand", "grid_10x8_60mm"), ("eye_to_hand", "checker_9x6_25mm"))
MODELS = ("rational", "equidistant", "radtan")
LENS = "rational_120"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10, help="recordings per setup")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tilt", type=float, default=20.0, help="the lens turned by this angle off the target [deg]")
    a = ap.parse_args()
    print(f"{LENS} corners: {a.n} recordings per setup, target {a.tilt:.0f} deg off the axis, pixel noise "
          f"{DETECTOR_STD_PX} px, intrinsics estimated by each model; X error RMS (rotation deg / translation mm)")
    for setup, target in SETUPS:
        rows = {m: [] for m in MODELS}
        crb, failed = [], []
        for i in range(a.n):
            r = recipe(a.seed, setup, target, i)
            obs, truth = fisheye_observations_from_recipe(r, LENS, tilt_deg=a.tilt)
            X, Y = (transform_from_pose_json(truth["poses"][n]) for n in "XY")
            k = np.array(list(truth["parameters"].values()))
            got = {}
            for m in MODELS:
                t = time.process_time()
                try:
                    res = calibrate_corners(replace(obs, distortion_model=m))
                except (KinhecError, np.linalg.LinAlgError) as exc:  # e.g. views whose corners determine no camera
                    failed.append(f"recording {i} ({obs.n_views} views), {m}: {type(exc).__name__}: {exc}")
                    continue
                cpu = time.process_time() - t
                e = _x_error(res.X, X)
                rms = float(res.observability.get("pixel_std_px", np.nan))
                got[m] = (e, float(e @ np.linalg.solve(res.cov[:6, :6], e)), cpu, rms)
            if len(got) < len(MODELS):  # the models compared on the same recordings
                continue
            for m in MODELS:
                rows[m].append(got[m])
            C = crb_x(obs, k, X, Y, DETECTOR_STD_PX, (r["robot_rot_std_rad"], r["robot_trans_std_m"]))
            crb.append((np.trace(C[:3, :3]), np.trace(C[3:, 3:])))
        crot, ctr = np.degrees(np.sqrt(np.mean([c[0] for c in crb]))), 1e3 * np.sqrt(np.mean([c[1] for c in crb]))
        print(f"\n{setup}, {target}: {len(crb)} recordings calibrated by every model; the bound {crot:.4f} deg / "
              f"{ctr:.3f} mm")
        for f in failed:
            print(f"  left out: {f}")
        for m in MODELS:
            e = np.array([row[0] for row in rows[m]])
            rot = np.degrees(np.sqrt(np.mean(np.sum(e[:, :3] ** 2, axis=1))))
            tr = 1e3 * np.sqrt(np.mean(np.sum(e[:, 3:] ** 2, axis=1)))
            nees = np.mean([row[1] for row in rows[m]])
            cb = np.sqrt(np.array(crb))  # each recording's own bound (rotation, translation)
            far = int(np.sum((np.linalg.norm(e[:, :3], axis=1) > 5 * cb[:, 0]) | (np.linalg.norm(e[:, 3:], axis=1) > 5 * cb[:, 1])))
            print(f"  {m:12s} X error {rot:.4f} deg / {tr:.3f} mm, over the bound {rot / crot:.2f} / {tr / ctr:.2f}; "
                  f"NEES mean {nees:.2f}; {far} of {len(e)} beyond 5 times their bound; pixel noise estimated {np.mean([row[3] for row in rows[m]]):.3f} px; "
                  f"CPU {np.mean([row[2] for row in rows[m]]):.2f} s per recording")  # fmt: skip


if __name__ == "__main__":
    main()
