"""Acceptance of ``kinhec calibrate --points``: its error against the Cramér-Rao bound, and its sigma (NEES).

For each setup (eye-in-hand, eye-to-hand) it draws recordings of a depth camera
viewing a chessboard (:func:`kinhec.synth.point_observations.generate_point_recording`,
seeds 0, 1, ... eye-in-hand, 10000, 10001, ... eye-to-hand: independent draws), calibrates
each with :func:`kinhec.calibrate.points.calibrate_points` (the noise levels estimated
from the residuals, as the command line does by default) and prints

* the median rotation and translation error of ``X`` beside the bound: the
  median over the recordings of ``sqrt(trace)`` of the covariance of ``X``'s
  rotation / translation from the true Fisher information (the true ``X``,
  ``Y``, noise levels and points), and their ratio (below 1 at the bound: the median length of a 3D Gaussian
  error is 0.89 ``sqrt(trace)`` of its covariance when isotropic, less when one axis dominates), and beside it
  the median length of one draw per recording from the bound's covariance (seeded): what an efficient
  estimator's median error would be;
* the NEES of ``X`` (6 dof): ``e^T cov^-1 e`` with the covariance the fit
  reports, its mean over the recordings (6 when sigma is right; the 95 %
  band of the mean of ``n`` chi-square(6) draws is ``6 +- 1.96 sqrt(12 / n)``);
* the estimated noise levels over the true ones.

Run: ``python benchmarks/points_acceptance.py [--n 60] [--views 15]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kinhec.calibrate.points import calibrate_points
from kinhec.geometry import se3
from kinhec.solvers.he_ml_stages import points as hp
from kinhec.synth.point_observations import generate_point_recording
from kinhec.vision.targets import parse_target

TARGET = "chessboard:9x6:0.025"
NOISE = (2e-3, 1.5e-3)


def _parent_frame(cov, X, Y):
    T = np.eye(12)
    T[3:6, 3:6] = X[:3, :3]
    T[9:12, 9:12] = Y[:3, :3]
    return T @ cov @ T.T


def run(setup: str, n_rec: int, n_views: int) -> dict:
    P = parse_target(TARGET).points_m
    rot, trans, b_rot, b_trans, nees, ratio_a, ratio_b, d_rot, d_trans = [], [], [], [], [], [], [], [], []
    rng = np.random.default_rng(2026)  # the draws from the bound's covariance
    t0 = time.process_time()
    for seed in range(10000 * (setup == "eye_to_hand"), 10000 * (setup == "eye_to_hand") + n_rec):
        obs, truth = generate_point_recording(setup, P, seed=seed, n_views=n_views, noise=NOISE, target=TARGET)
        res = calibrate_points(obs, where=f"seed {seed}")
        X, Xt = res.X, truth["X"]
        e = np.r_[se3.so3_log(X[:3, :3].T @ Xt[:3, :3]), Xt[:3, 3] - X[:3, 3]]  # the result's parameters
        nees.append(float(e @ np.linalg.solve(res.cov[:6, :6], e)))
        rot.append(float(np.linalg.norm(e[:3])))
        trans.append(float(np.linalg.norm(e[3:])))
        views = hp.pack_points([P] * obs.n_views, obs.points_cam)
        info = hp.points_information(obs.T_base_ee, Xt, truth["Y"], setup, views, NOISE)
        cb = _parent_frame(np.linalg.inv(info), Xt, truth["Y"])
        b_rot.append(float(np.sqrt(np.trace(cb[:3, :3]))))
        b_trans.append(float(np.sqrt(np.trace(cb[3:6, 3:6]))))
        d = rng.multivariate_normal(np.zeros(6), cb[:6, :6], method="cholesky")
        d_rot.append(float(np.linalg.norm(d[:3])))
        d_trans.append(float(np.linalg.norm(d[3:])))
        a, b = res.inputs["point_noise"]
        ratio_a.append(a / NOISE[0])
        ratio_b.append(b / NOISE[1])
    return {"setup": setup, "n": n_rec, "cpu_s": time.process_time() - t0,
            "rot_err_deg": np.degrees(np.median(rot)), "rot_bound_deg": np.degrees(np.median(b_rot)),
            "trans_err_mm": 1e3 * np.median(trans), "trans_bound_mm": 1e3 * np.median(b_trans),
            "rot_ratio": np.median(rot) / np.median(b_rot), "trans_ratio": np.median(trans) / np.median(b_trans),
            "rot_draw_ratio": np.median(rot) / np.median(d_rot), "trans_draw_ratio": np.median(trans) / np.median(d_trans),
            "nees_mean": float(np.mean(nees)), "nees_band": 1.96 * np.sqrt(12.0 / n_rec),
            "a_ratio": float(np.median(ratio_a)), "b_ratio": float(np.median(ratio_b))}  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=60, help="recordings per setup (default 60)")
    ap.add_argument("--views", type=int, default=15, help="views per recording (default 15)")
    args = ap.parse_args(argv)
    n_rec, n_views = args.n, args.views
    print(f"{n_rec} recordings per setup, {n_views} views of {TARGET}, noise a={NOISE[0]:g}/m, b={NOISE[1]:g} "
          "(estimated by the fit)")
    for setup in ("eye_in_hand", "eye_to_hand"):
        r = run(setup, n_rec, n_views)
        print(f"{setup}: X rotation median error {r['rot_err_deg']:.4f} deg, bound {r['rot_bound_deg']:.4f} deg, "
              f"ratio {r['rot_ratio']:.3f}; translation {r['trans_err_mm']:.4f} mm, bound {r['trans_bound_mm']:.4f} "
              f"mm, ratio {r['trans_ratio']:.3f}")
        print(f"  median error over the median length of draws from the bound: rotation {r['rot_draw_ratio']:.3f}, "
              f"translation {r['trans_draw_ratio']:.3f}")
        print(f"  NEES of X (6 dof): mean {r['nees_mean']:.2f} (6 +- {r['nees_band']:.2f} at 95 %); estimated noise "
              f"over true: a {r['a_ratio']:.3f}, b {r['b_ratio']:.3f}; {r['cpu_s']:.1f} CPU-s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
