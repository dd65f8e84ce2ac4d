"""Runtime of the maximum-likelihood solver ``he_ml`` at the protocol's keyframe budget, on one core.

Usage::

    python benchmarks/bench_he_ml.py [--keyframes 200] [--repeats 30] [--seed 0]

Builds one synthetic eye-in-hand rig of ``--keyframes`` flange poses (hand-eye
transform of a few centimetres, board about 0.7 m away) and draws the
measurements with the generator's own noise code (:mod:`kinhec.models.noise`, levels
r2 / c2), then times ``he_ml`` (median and best wall time of ``--repeats``
calls, input checks included) in four settings: noise levels estimated (the
registry's call), noise levels given, 20 % outliers (random poses and planar
flips), and a monocular scale of 2.  The budget is 20 ms per sequence.  A fifth
case runs the pixel stage (``pixels=``) on a generated eye-to-hand ``pnp``
sequence with as many stations (9 x 6 board, hd camera, 0.5 px); it is not part
of the budget, which is for the pose solver.

BLAS threads are pinned to one before numpy is imported, so the figures are
single-core figures.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from kinhec.geometry import se3  # noqa: E402
from kinhec.models import noise
from kinhec.solvers.he_ml import he_ml  # noqa: E402

from _rigs import eye_in_hand_rig  # noqa: E402  (benchmarks/_rigs.py)

BUDGET_MS = 20.0


def _time(fn, repeats: int) -> tuple[float, float, float]:
    """Median and best wall time and median CPU time [ms] of ``fn()``."""
    fn()  # warm-up
    t, c = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        t.append(1000.0 * (time.perf_counter() - t0))
        c.append(1000.0 * (time.process_time() - c0))
    return float(np.median(t)), float(np.min(t)), float(np.median(c))


def _pixel_sequence(n: int, seed: int):
    """Flange poses, PnP camera poses (as ``B``), pixels and X of a generated pnp sequence of ``n`` stations."""
    from kinhec.synth.observations import recipe_pixels
    from kinhec.solvers import pair_model as pm

    r_rot, r_tr = noise.robot_level("r2")
    recipe = dict(sequence_id="bench-pixels", seed=seed, robot="ur5e", configuration="eye_to_hand", family="lookat",
                  sampling_mode="stations", n_stations=n, camera="hd", target="checker_9x6_25mm",
                  camera_noise_model="pnp", pixel_std=0.5, robot_noise_models=("se3_gaussian",),
                  robot_rot_std_rad=r_rot, robot_trans_std_m=r_tr)  # fmt: skip
    px = recipe_pixels(recipe)
    keep = np.flatnonzero(px.has_measurement)
    views = px.pixel_views(keep)
    return px.T_base_ee_meas[keep], pm.camera_poses(px.T_cam_target_meas[keep], px.configuration), views, px.X


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keyframes", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    n = args.keyframes
    A, C, X, _ = eye_in_hand_rig(rng, n)
    r_rot, r_tr = noise.robot_level("r2")
    c_rot, c_xy, _, c_z = noise.camera_level("c2")
    A_m = noise.robot_se3_gaussian(A, r_rot, r_tr, rng)
    C_m = noise.camera_se3_gaussian(C, c_rot, c_xy, c_z, rng)
    B_m = se3.invert_transform(C_m)
    known = {"camera_rot_std_rad": c_rot, "camera_trans_std_m": c_xy, "camera_trans_std_z_m": c_z,
             "robot_rot_std_rad": r_rot, "robot_trans_std_m": r_tr}  # fmt: skip
    C_out, _ = noise.apply_outliers(C_m, C, "random_pose", 0.1, rng)
    C_out, _ = noise.apply_outliers(C_out, C, "planar_flip", 0.1, rng)
    B_out = se3.invert_transform(C_out)
    C_mono = C_m.copy()
    C_mono[:, :3, 3] *= 2.0
    B_mono = se3.invert_transform(C_mono)
    cases = [
        ("noise estimated (registry call)", lambda: he_ml(A_m, B_m)),
        ("noise levels given", lambda: he_ml(A_m, B_m, noise=known, configuration="eye_in_hand")),
        ("20 % outliers (random + flips)", lambda: he_ml(A_m, B_out)),
        ("monocular scale 2", lambda: he_ml(A_m, B_mono)),
    ]
    # the pixel stage: a generated eye-to-hand pnp sequence (9 x 6 board, hd camera, 0.5 px) with as many stations
    A_px, B_px, views, X_px = _pixel_sequence(n, args.seed)
    cases.append(("pixels (9x6 board, 0.5 px)", lambda: he_ml(A_px, B_px, pixels=views)))
    print(f"he_ml on {n} keyframe pairs, one core, {args.repeats} calls each (budget {BUDGET_MS:.0f} ms)")
    print("(wall times suffer on a loaded machine; the CPU time of this process is the steadier figure)")
    print(f"{'case':34s} {'median [ms]':>12s} {'best [ms]':>10s} {'CPU med [ms]':>13s} {'X rot [deg]':>12s} "
          f"{'X trans [mm]':>13s}")  # fmt: skip
    for name, fn in cases:
        med, best, cpu = _time(fn, args.repeats)
        rot, trans = se3.pose_error(fn().X, X_px if name.startswith("pixels") else X)
        flag = "" if best <= BUDGET_MS else "  over budget"
        print(f"{name:34s} {med:12.2f} {best:10.2f} {cpu:13.2f} {rot:12.4f} {trans:13.3f}{flag}")


if __name__ == "__main__":
    main()
