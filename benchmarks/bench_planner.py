"""The pose planner: runtime, and planned poses against random ones under he_ml (the acceptance experiment).

Usage::

    python benchmarks/bench_planner.py timing                 # 15 poses, CPU time per plan
    python benchmarks/bench_planner.py compare --seeds 50     # planned vs random poses, he_ml errors
    python benchmarks/bench_planner.py robustness --seeds 20  # guesses off by 5 cm and 10 deg, with and without
                                                              # --guess-tolerance 50,10

Scenes: for each (robot, set-up, seed) the true ``X`` is drawn by
:func:`kinhec.trajectories.sample_hand_eye` and ``Y`` by the generator's
``lookat`` family (board below and in front of the arm, or a static camera
0.9-1.6 m away), which also yields the generator's own 10 random stations.
Camera ``hd``; target ``checker_9x6_25mm`` (eye-in-hand) or
``marker_3x3_30mm`` (eye-to-hand), the generator's defaults.  Noise: PnP with
0.5 px and robot level r1 (``--noise pnp``), or camera level c2 and robot r2
(``--noise c2``).  Every draw is seeded from (seed, robot, set-up).

Baselines ("random"): 10 feasible candidates of the planner drawn uniformly
(the same reachability and visibility tests, the same candidate pool), and the
generator's 10 ``lookat`` stations.  Errors: translation of ``X`` [mm] estimated
by ``he_ml`` from one noisy draw of the measurements per seed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

from kinhec import se3
from kinhec.cameras import get_camera, get_target, visibility
from kinhec.errors import InputError
from kinhec.planner import PlanLimits, Scene, noise_model, plan_poses
from kinhec.planner.candidates import sample_candidates
from kinhec.planner.model import pose_information, sigma_curve
from kinhec.planner.simulate import simulate_measurements
from kinhec.robots import get_robot
from kinhec.solvers import get_solver
from kinhec.trajectories import lookat, sample_hand_eye

ROBOTS = ("ur5e", "panda", "iiwa14")
SETUPS = ("eye_in_hand", "eye_to_hand")
TARGETS = {"eye_in_hand": "checker_9x6_25mm", "eye_to_hand": "marker_3x3_30mm"}
CAMERA = "hd"


def true_scene(robot_name: str, setup: str, seed: int):
    """True scene and the generator's 10 lookat stations (joints) for one seed."""
    rng = np.random.default_rng([seed, ROBOTS.index(robot_name) if robot_name in ROBOTS else 99, SETUPS.index(setup)])
    robot, cam, tgt = get_robot(robot_name), get_camera(CAMERA), get_target(TARGETS[setup])
    X = sample_hand_eye(rng, setup)
    traj, Y, _ = lookat(robot, X, setup, cam, tgt, rng, n_stations=10)
    return Scene(robot, setup, cam, tgt, X, Y), traj.knots_q_rad[:10]


def he_ml_error_mm(scene: Scene, T_base_ee: np.ndarray, noise, rng) -> float:
    A, B = simulate_measurements(scene, T_base_ee, noise, rng)
    ok = np.isfinite(A).all(axis=(1, 2)) & np.isfinite(B).all(axis=(1, 2))
    try:
        X = get_solver("he_ml").run(A[ok], B[ok]).X
    except Exception as exc:  # a failed solve counts as an infinite error
        print(f"  he_ml failed: {exc}", file=sys.stderr)
        return math.inf
    return float(se3.pose_error(X, scene.X)[1])


def predicted_mm(scene: Scene, T_base_ee: np.ndarray, noise) -> float:
    info = pose_information(scene.observed(T_base_ee), scene.X, scene.configuration, noise, scene.camera, scene.target)
    return float(sigma_curve(info)["trans_rms_mm"][-1])


def cmd_timing(args) -> None:
    noise = noise_model(*args.noise_pair)
    print(f"CPU time of one plan of 15 poses (median of {args.repeats}, time.process_time, one process)")
    for rn in args.robots:
        for setup in SETUPS:
            sc, _ = true_scene(rn, setup, 0)
            ts = []
            for r in range(args.repeats):
                t = time.process_time()
                plan_poses(rn, setup, CAMERA, TARGETS[setup], sc.X, sc.Y, 15, seed=r, noise=noise)
                ts.append(time.process_time() - t)
            print(f"  {rn:8s} {setup:12s} {np.median(ts):6.2f} s  (min {min(ts):.2f}, max {max(ts):.2f})")


def cmd_compare(args) -> dict:
    noise = noise_model(*args.noise_pair)
    out = {}
    for rn in args.robots:
        for setup in SETUPS:
            rows = []
            for seed in range(args.seeds):
                sc, q_lookat = true_scene(rn, setup, seed)
                rng = np.random.default_rng([seed, 7, SETUPS.index(setup)])
                plan = plan_poses(rn, setup, CAMERA, TARGETS[setup], sc.X, sc.Y, args.n, seed=seed, noise=noise)
                pool = sample_candidates(sc, np.random.default_rng([seed, 8]), PlanLimits())
                pick = rng.choice(len(pool), size=args.n, replace=False)
                T_rand = pool.T_base_ee[pick]
                T_look = sc.robot.fk(q_lookat)
                rows.append({
                    "plan_err": he_ml_error_mm(sc, plan.T_base_ee, noise, rng),
                    "plan_pred": float(plan.sigma_mm[-1]),
                    "rand_err": he_ml_error_mm(sc, T_rand, noise, rng),
                    "rand_pred": predicted_mm(sc, T_rand, noise),
                    "look_err": he_ml_error_mm(sc, T_look, noise, rng),
                    "look_pred": predicted_mm(sc, T_look, noise),
                })
            r = {k: np.array([row[k] for row in rows]) for k in rows[0]}
            rms = lambda a: float(np.sqrt(np.mean(np.square(a[np.isfinite(a)]))))  # noqa: E731
            res = {
                "median_plan_mm": float(np.median(r["plan_err"])),
                "median_random_mm": float(np.median(r["rand_err"])),
                "median_lookat_mm": float(np.median(r["look_err"])),
                "ratio_vs_random": float(np.median(r["plan_err"]) / np.median(r["rand_err"])),
                "ratio_vs_lookat": float(np.median(r["plan_err"]) / np.median(r["look_err"])),
                "pred_over_rms_plan": rms(r["plan_pred"]) / rms(r["plan_err"]),
                "pred_over_rms_random": rms(r["rand_pred"]) / rms(r["rand_err"]),
                "pred_over_rms_lookat": rms(r["look_pred"]) / rms(r["look_err"]),
                "n_failed": int(sum(~np.isfinite(r[k]).sum() for k in ("plan_err", "rand_err", "look_err"))),
            }
            out[f"{rn}/{setup}"] = res
            print(f"{rn:8s} {setup:12s} median X trans err [mm]: planned {res['median_plan_mm']:.3f}  "
                  f"random {res['median_random_mm']:.3f}  lookat {res['median_lookat_mm']:.3f}  "
                  f"ratio {res['ratio_vs_random']:.2f} / {res['ratio_vs_lookat']:.2f}  "
                  f"predicted/RMS: plan {res['pred_over_rms_plan']:.2f} random {res['pred_over_rms_random']:.2f} "
                  f"lookat {res['pred_over_rms_lookat']:.2f}", flush=True)  # fmt: skip
    return out


def _perturbed(T: np.ndarray, rng, trans_m: float, rot_deg: float) -> np.ndarray:
    """``T`` moved by ``trans_m`` along a random direction and turned by ``rot_deg`` about a random axis."""
    d = se3.random_unit_vectors(rng, 2)
    out = T.copy()
    out[:3, :3] = se3.so3_exp(d[0] * math.radians(rot_deg)) @ T[:3, :3]
    out[:3, 3] += d[1] * trans_m
    return out


def cmd_robustness(args) -> dict:
    noise = noise_model(*args.noise_pair)
    levels = (("bad", None, "no tolerance  "), ("tol20", PlanLimits(guess_tolerance_mm=20.0, guess_tolerance_deg=5.0),
              "tol. 20 mm,5 d"), ("tol50", PlanLimits(guess_tolerance_mm=50.0, guess_tolerance_deg=10.0), "tol. 50mm,10 d"))
    out = {}
    for rn in args.robots:
        for setup in SETUPS:
            rows = []
            for seed in range(args.seeds):
                sc, _ = true_scene(rn, setup, seed)
                rng = np.random.default_rng([seed, 9, SETUPS.index(setup)])
                kw = dict(seed=seed, noise=noise)
                good = plan_poses(rn, setup, CAMERA, TARGETS[setup], sc.X, sc.Y, args.n, **kw)
                Xg, Yg = _perturbed(sc.X, rng, 0.05, 10.0), _perturbed(sc.Y, rng, 0.05, 10.0)
                row = {"good_true": float(good.sigma_mm[-1]), "good_err": he_ml_error_mm(sc, good.T_base_ee, noise, rng)}
                for name, lim, _ in levels:
                    try:
                        p = plan_poses(rn, setup, CAMERA, TARGETS[setup], Xg, Yg, args.n, limits=lim, **kw)
                    except InputError:
                        row.update({f"{name}_visible": 0.0, f"{name}_true": math.inf, f"{name}_err": math.inf})
                        continue
                    vis = visibility(sc.camera, sc.target, sc.observed(p.T_base_ee)).visible
                    T_ok = p.T_base_ee[vis]
                    row[f"{name}_visible"] = float(vis.sum()) / args.n
                    row[f"{name}_true"] = predicted_mm(sc, T_ok, noise) if vis.sum() >= 3 else math.inf
                    row[f"{name}_err"] = he_ml_error_mm(sc, T_ok, noise, rng) if vis.sum() >= 3 else math.inf
                rows.append(row)
            r = {k: np.array([row[k] for row in rows]) for k in rows[0]}
            res = {"median_err_good_mm": float(np.median(r["good_err"]))}
            for name, _, _ in levels:
                res[name] = {
                    "visible_fraction_median": float(np.median(r[f"{name}_visible"])),
                    "visible_fraction_min": float(np.min(r[f"{name}_visible"])),
                    "true_bound_ratio_median": float(np.median(r[f"{name}_true"] / r["good_true"])),
                    "median_err_mm": float(np.median(r[f"{name}_err"])),
                    "err_ratio": float(np.median(r[f"{name}_err"]) / np.median(r["good_err"])),
                }
            out[f"{rn}/{setup}"] = res
            for name, _, label in levels:
                b = res[name]
                print(f"{rn:8s} {setup:12s} guesses off 5 cm, 10 deg, {label}: poses seeing the target median "
                      f"{b['visible_fraction_median']:.0%} (min {b['visible_fraction_min']:.0%}); true bound / plan "
                      f"from the truth {b['true_bound_ratio_median']:.2f}; he_ml median {b['median_err_mm']:.3f} mm "
                      f"({b['err_ratio']:.2f}x the plan from the truth, {res['median_err_good_mm']:.3f} mm)",
                      flush=True)  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("timing", "compare", "robustness"))
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--robots", default=",".join(ROBOTS))
    ap.add_argument("--noise", choices=("pnp", "c2"), default="pnp")
    ap.add_argument("--json", help="write the figures to this JSON file")
    args = ap.parse_args()
    args.robots = [r for r in args.robots.split(",") if r]
    args.noise_pair = ("pnp", "r1") if args.noise == "pnp" else ("c2", "r2")
    res = {"timing": cmd_timing, "compare": cmd_compare, "robustness": cmd_robustness}[args.what](args)
    if args.json and res is not None:
        with open(args.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(args).items() if k != "noise_pair"}, "results": res}, f, indent=1)


if __name__ == "__main__":
    main()
