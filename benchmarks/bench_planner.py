"""The pose planner: runtime, planned poses against random ones under he_ml, and robustness to bad guesses.

Usage::

    python benchmarks/bench_planner.py timing                   # 15 poses, CPU time per plan
    python benchmarks/bench_planner.py compare --seeds 50       # planned vs random poses, he_ml errors
    python benchmarks/bench_planner.py compare --noise c2       # the same with camera level c2, robot level r2
    python benchmarks/bench_planner.py robustness --seeds 20    # guesses off by 5 cm and 10 deg
    python benchmarks/bench_planner.py robustness --seeds 20 --solver pixels   # he_ml on the PnP poses' corners
    python benchmarks/bench_planner.py robustness --seeds 20 --draws 16        # 16 noise draws per scene, pooled

Scenes: for each (robot, set-up, seed) the true ``X`` is drawn by
:func:`kinhec.synth.trajectories.sample_hand_eye` and ``Y`` by the generator's
``lookat`` family (board below and in front of the arm, or a static camera
0.9-1.6 m away), which also yields the generator's own 10 random stations.
Camera ``hd``; target ``checker_9x6_25mm`` (eye-in-hand) or
``marker_3x3_30mm`` (eye-to-hand), the generator's defaults.  Noise: PnP with
0.5 px and robot level r1 (``--noise pnp``), or camera level c2 and robot r2
(``--noise c2``).  Every draw is seeded from (seed, robot, set-up).

``compare``: plans from the true ``X`` and ``Y`` (guess tolerance zero).
Baselines ("random"): 10 feasible candidates of the planner drawn uniformly
(the same reachability and visibility tests, the same candidate pool), and the
generator's 10 ``lookat`` stations.  Errors: translation of ``X`` [mm] estimated
by ``he_ml`` (told the set-up, metric camera poses) from one noisy draw of the
measurements per seed.

``robustness``: the guesses of ``X`` and ``Y`` are each moved by 5 cm in a
random direction and turned by 10 deg about a random axis.  Plans from them:
trusted (tolerance zero), with the default tolerance (50 mm, 10 deg), and the
two-stage workflow (5 poses with the default tolerance, recorded, calibrated by
``kinhec calibrate`` from the files a user would write, then 5 more planned with
``--taken`` and ``--guesses-from`` the calibration's JSON).  A pose counts when
the target is visible under the true geometry (:func:`kinhec.models.cameras.visibility`);
the poses that do not see it are not recorded.  References: the plan from the
true ``X`` and ``Y`` and 10 random feasible poses of the true geometry (picking
them needs the truth), and two baselines a user can pick: 10 random candidates
feasible under the guesses, with the default tolerance (the target in view in
every perturbed scene) and with none, of which those that see the target under
the true geometry are recorded.  ``--min-visible-fraction`` sets that limit of
the default plans (the planner's default when not given).  Each level's measurement noise is drawn from a stream of
its own (seed, set-up, level), so that a change to one plan leaves the others' draws as they were.  A median of 20
single draws moves by 10-25 % from one set of draws to another: ``--draws K`` adds K - 1 further draws per scene
and pose set (each from a stream of its own, the first draw unchanged) and prints the medians of all K x seeds
errors and their ratios as well.  ``--first-stage N`` sets the two-stage workflow's first stage (5).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.models.cameras import get_camera, get_target, visibility
from kinhec.util.errors import InputError
from kinhec.calibrate import calibrate
from kinhec.planner import DEFAULT_GUESS_TOLERANCE, PlanLimits, Scene, noise_model, plan_poses
from kinhec.planner.candidates import sample_candidates
from kinhec.planner.model import pose_information, sigma_curve
from kinhec.models.robot_files import load_robot
from kinhec.models.robots import get_robot
from kinhec.solvers.he_ml import he_ml
from kinhec.solvers.reprojection import PixelViews
from kinhec.synth.trajectories import lookat, sample_hand_eye

from support.planner_simulate import simulate_measurements

ROBOTS = ("ur5e", "panda", "iiwa14")
SETUPS = ("eye_in_hand", "eye_to_hand")
TARGETS = {"eye_in_hand": "checker_9x6_25mm", "eye_to_hand": "marker_3x3_30mm"}
CAMERA = "hd"
#: ``he_ml`` on the camera poses, or on the pixels behind them too (``--solver pixels``: its pixel stage).
SOLVER = {"pixels": False}
#: The true X and Y as guesses: nothing to be tolerant of.
TRUSTED = PlanLimits(guess_tolerance_mm=0.0, guess_tolerance_deg=0.0)
#: Poses of the first stage of the two-stage workflow.
FIRST_STAGE = 5
#: Candidates that see the target in every perturbed scene of the default tolerance (what the planner kept
#: before it weighed the scenes; ``PlanLimits`` without ``min_visible_fraction`` is such a version).
ALL_SCENES = (PlanLimits(min_visible_fraction=1.0) if "min_visible_fraction" in PlanLimits.__dataclass_fields__
              else PlanLimits())  # fmt: skip


def _robot(name: str):
    """A preset arm, or a URDF (chain ``base_link`` to ``tool0``, as docs/planner_files/kr6_r900.urdf) or DH YAML."""
    if name.endswith(".urdf"):
        return load_robot(name, base_link="base_link", tip_link="tool0")
    return load_robot(name) if name.endswith((".yaml", ".yml")) else get_robot(name)


def true_scene(robot_name: str, setup: str, seed: int):
    """True scene and the generator's 10 lookat stations (joints) for one seed."""
    rng = np.random.default_rng([seed, ROBOTS.index(robot_name) if robot_name in ROBOTS else 99, SETUPS.index(setup)])
    robot, cam, tgt = _robot(robot_name), get_camera(CAMERA), get_target(TARGETS[setup])
    X = sample_hand_eye(rng, setup)
    traj, Y, _ = lookat(robot, X, setup, cam, tgt, rng, n_stations=10)
    return Scene(robot, setup, cam, tgt, X, Y), traj.knots_q_rad[:10]


def he_ml_error_mm(scene: Scene, T_base_ee: np.ndarray, noise, rng) -> float:
    """Translation error [mm] of ``X`` by ``he_ml`` from one noisy draw of the measurements at ``T_base_ee``.

    ``he_ml`` is told the set-up and that the camera poses are metric, as a user's calibration is (``kinhec
    calibrate --setup``): left to identify them, it reads some planned sets under the ``c2`` noise as the other
    set-up with a scale (e.g. panda eye-in-hand seed 10: 20 mm instead of 0.45 mm).
    """
    if SOLVER["pixels"] and noise.camera_model == "pnp":
        A, B, (P3, P2) = simulate_measurements(scene, T_base_ee, noise, rng, pixels=True)
    else:
        A, B = simulate_measurements(scene, T_base_ee, noise, rng)
    ok = np.isfinite(A).all(axis=(1, 2)) & np.isfinite(B).all(axis=(1, 2))
    kw = {}
    if SOLVER["pixels"] and noise.camera_model == "pnp":
        cam = scene.camera
        k = np.array([cam.f_px, cam.f_px, cam.cx_px, cam.cy_px, 0.0, 0.0, 0.0, 0.0, 0.0])
        idx = np.flatnonzero(ok)
        kw["pixels"] = PixelViews([P3[i] for i in idx], [P2[i] for i in idx], (cam.width_px, cam.height_px),
                                  scene.configuration, k)  # fmt: skip
    try:
        X = he_ml(A[ok], B[ok], configuration=scene.configuration, scale=False, **kw).X
    except Exception as exc:  # a failed solve counts as an infinite error
        print(f"  he_ml failed: {exc}", file=sys.stderr)
        return math.inf
    return float(se3.pose_error(X, scene.X)[1])


def more_draws_mm(scene: Scene, T_base_ee: np.ndarray, noise, stream: list, draws: int) -> list:
    """``he_ml``'s errors [mm] from ``draws - 1`` further noisy draws at the same poses (``--draws``).

    Each from a stream of its own (``stream`` + the draw's number), so that the first draw, the one every
    level takes with its own generator, stays what it is with one draw.
    """
    return [he_ml_error_mm(scene, T_base_ee, noise, np.random.default_rng([*stream, d])) for d in range(1, draws)]


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
                plan_poses(rn, setup, CAMERA, TARGETS[setup], sc.X, sc.Y, 15, seed=r, noise=noise,
                           limits=None if args.default_limits else TRUSTED)
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
                plan = plan_poses(rn, setup, CAMERA, TARGETS[setup], sc.X, sc.Y, args.n, seed=seed, noise=noise,
                                  limits=TRUSTED)
                pool = sample_candidates(sc, np.random.default_rng([seed, 8]), TRUSTED)
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
                "bound_ratio_vs_random": float(np.median(r["plan_pred"]) / np.median(r["rand_pred"])),
                "n_failed": int(sum((~np.isfinite(r[k])).sum() for k in ("plan_err", "rand_err", "look_err"))),
                "per_seed": {k: v.tolist() for k, v in r.items()},
            }
            out[f"{rn}/{setup}"] = res
            print(f"{rn:8s} {setup:12s} median X trans err [mm]: planned {res['median_plan_mm']:.3f}  "
                  f"random {res['median_random_mm']:.3f}  lookat {res['median_lookat_mm']:.3f}  "
                  f"ratio {res['ratio_vs_random']:.2f} / {res['ratio_vs_lookat']:.2f} (bound {res['bound_ratio_vs_random']:.2f})  "
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


def _write_csv(path: Path, T: np.ndarray) -> None:
    """Poses ``(N, 4, 4)`` as a ``kinhec calibrate --format csv`` file (``x,y,z,qx,qy,qz,qw``, metres)."""
    p, q = se3.pq_from_transform(T)
    rows = [",".join(f"{v:.12g}" for v in (*pp, *qq[1:], qq[0])) for pp, qq in zip(p, q)]
    path.write_text("x,y,z,qx,qy,qz,qw\n" + "\n".join(rows) + "\n", encoding="utf-8")


def _seen(sc: Scene, T_base_ee: np.ndarray) -> np.ndarray:
    """Which flange poses see the target under the true geometry."""
    return visibility(sc.camera, sc.target, sc.observed(T_base_ee)).visible


def two_stage(sc: Scene, Xg, Yg, n: int, noise, rng, seed: int, limits=None) -> dict:
    """The two-stage workflow of docs/planner.md, as a user runs it, on the true scene ``sc``.

    First :data:`FIRST_STAGE` poses from the guesses with the default tolerance, each seeing the target in every
    perturbed scene (``--min-visible-fraction 1``: a calibration needs all five); the poses that see the target
    are recorded (simulated measurements), written to files and calibrated by ``kinhec calibrate``; the rest
    are planned with ``--taken`` those poses and ``--guesses-from`` the calibration's JSON.  The calibration is
    told the setup and the direction of the flange poses (``--hand-pose base_T_ee``), as the workflow states them.  When the
    calibration does not determine ``X``, the rest is planned from the guesses with ``limits`` (None: the default).
    """
    rn, setup = sc.robot.name, sc.configuration
    try:
        first = plan_poses(sc.robot, setup, CAMERA, TARGETS[setup], Xg, Yg, FIRST_STAGE, seed=seed, noise=noise,
                           limits=ALL_SCENES)  # fmt: skip
    except InputError:  # too few candidates keep the target in view of every perturbed scene: no plan
        return {"T": np.zeros((0, 4, 4)), "visible": 0.0, "calibrated": False, "calib_rot_err_deg": math.nan,
                "calib_trans_err_mm": math.nan}  # fmt: skip
    T1 = first.T_base_ee[_seen(sc, first.T_base_ee)]
    A, B = simulate_measurements(sc, T1, noise, rng)
    ok = np.isfinite(A).all(axis=(1, 2)) & np.isfinite(B).all(axis=(1, 2))
    C = se3.invert_transform(B[ok], check=False) if setup == "eye_in_hand" else B[ok]  # T_cam_target
    kw = dict(seed=seed + 1, noise=noise, taken=T1)
    out = {"calibrated": False, "calib_rot_err_deg": math.nan, "calib_trans_err_mm": math.nan}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        _write_csv(d / "hand.csv", A[ok])
        _write_csv(d / "eye.csv", C)
        try:
            # as docs/planner.md and the plan's note state it: the flange poses in the base (read inverted, X and Y
            # exchange and fit exactly as well, which only a board more than 0.5 m from the base rules out)
            res = calibrate(d / "hand.csv", d / "eye.csv", setup=setup, hand_pose="base_T_ee", eye_pose="cam_T_target",
                            offset="none")
            res.write_json(d / "first.json")
            rest = plan_poses(sc.robot, setup, CAMERA, TARGETS[setup], None, None, n - FIRST_STAGE,
                              calibration=d / "first.json", **kw)  # fmt: skip
            e = se3.pose_error(res.X, sc.X)
            out.update(calibrated=True, calib_rot_err_deg=float(e[0]), calib_trans_err_mm=float(e[1]),
                       tolerance=[round(rest.details["limits"]["guess_tolerance_mm"], 2),
                                  round(rest.details["limits"]["guess_tolerance_deg"], 3)])  # fmt: skip
        except InputError as exc:
            print(f"  {rn} {setup} seed {seed}: first-stage calibration not used ({str(exc)[:120]})", file=sys.stderr)
            rest = plan_poses(sc.robot, setup, CAMERA, TARGETS[setup], Xg, Yg, n - FIRST_STAGE, limits=limits, **kw)
    T2 = rest.T_base_ee[_seen(sc, rest.T_base_ee)]
    out["T"] = np.concatenate([T1, T2])
    out["visible"] = (len(T1) + len(T2)) / n
    return out


def _random_recorded(sc: Scene, pool, n: int, rng) -> tuple[np.ndarray, float]:
    """``n`` random candidates of ``pool``; those that see the target under the truth, and their fraction."""
    if len(pool) == 0:
        return np.zeros((0, 4, 4)), 0.0
    T = pool.T_base_ee[rng.choice(len(pool), size=min(n, len(pool)), replace=False)]
    vis = _seen(sc, T)
    return T[vis], float(vis.sum()) / n


def cmd_robustness(args) -> dict:
    noise = noise_model(*args.noise_pair)
    dflt = "tol. %g mm, %g deg" % DEFAULT_GUESS_TOLERANCE
    lim_default = None
    if args.min_visible_fraction is not None:
        lim_default = PlanLimits(min_visible_fraction=args.min_visible_fraction)
    # plans from the guesses, then random baselines from the guesses (recorded where they see the target)
    levels = (("trusted", TRUSTED, "no tolerance"), ("default", lim_default, dflt + " (default)"),
              ("two_stage", lim_default, f"two stages ({FIRST_STAGE} + {args.n - FIRST_STAGE})"),
              ("rand_guess_tol", ALL_SCENES, "random, feasible under guesses+tol."),
              ("rand_guess", TRUSTED, "random, feasible under guesses"))  # fmt: skip
    out = {}
    cpu_plan = []
    for rn in args.robots:
        for setup in SETUPS:
            rows = []
            draws = {}  # seed -> set -> errors of every draw (the first is the row's)
            for seed in range(args.seeds):
                sc, _ = true_scene(rn, setup, seed)
                rng = np.random.default_rng([seed, 9, SETUPS.index(setup)])
                kw = dict(seed=seed, noise=noise)
                good = plan_poses(sc.robot, setup, CAMERA, TARGETS[setup], sc.X, sc.Y, args.n, limits=TRUSTED, **kw)
                pool = sample_candidates(sc, np.random.default_rng([seed, 8]), TRUSTED)
                T_rand = pool.T_base_ee[rng.choice(len(pool), size=args.n, replace=False)]
                Xg, Yg = _perturbed(sc.X, rng, 0.05, 10.0), _perturbed(sc.Y, rng, 0.05, 10.0)
                row = {"good_true": float(good.sigma_mm[-1]), "good_err": he_ml_error_mm(sc, good.T_base_ee, noise, rng),
                       "rand_true": predicted_mm(sc, T_rand, noise), "rand_err": he_ml_error_mm(sc, T_rand, noise, rng)}
                st = SETUPS.index(setup)
                draws[seed] = {"good": [row["good_err"], *more_draws_mm(sc, good.T_base_ee, noise, [seed, 14, st, 0], args.draws)],
                               "rand": [row["rand_err"], *more_draws_mm(sc, T_rand, noise, [seed, 14, st, 1], args.draws)]}
                if args.draws > 1:
                    # the best case of a plan that hedges for the tolerance: the default plan made from the true X and
                    # Y (every pose then sees the target); what the hedge alone costs, the guesses' error aside
                    hedged = plan_poses(sc.robot, setup, CAMERA, TARGETS[setup], sc.X, sc.Y, args.n, limits=lim_default,
                                        **kw)  # fmt: skip
                    row["hedged_true"] = predicted_mm(sc, hedged.T_base_ee, noise)
                    # (no first draw from a level's generator here: all K draws from its own stream, numbers 1..K)
                    draws[seed]["hedged"] = more_draws_mm(sc, hedged.T_base_ee, noise, [seed, 16, st], args.draws + 1)
                sc_guess = Scene(sc.robot, setup, sc.camera, sc.target, Xg, Yg)
                for li, (name, lim, _) in enumerate(levels):
                    # each level's measurement noise from its own stream: a change of one level's poses leaves the
                    # noise drawn for the others as it was (before/after comparisons on the same draws)
                    rng = np.random.default_rng([seed, 12, SETUPS.index(setup), li])
                    if name == "two_stage":
                        ts = two_stage(sc, Xg, Yg, args.n, noise, rng, seed, limits=lim)
                        T_ok, row[f"{name}_visible"] = ts.pop("T"), ts.pop("visible")
                        row.update({f"{name}_{k}": v for k, v in ts.items()})
                    elif name.startswith("rand_"):
                        g_pool = sample_candidates(sc_guess, np.random.default_rng([seed, 10]), lim)
                        pick_rng = np.random.default_rng([seed, 11, SETUPS.index(setup)])  # the same picks in every version
                        T_ok, row[f"{name}_visible"] = _random_recorded(sc, g_pool, args.n, pick_rng)
                    else:
                        try:
                            t0 = time.process_time()
                            p = plan_poses(sc.robot, setup, CAMERA, TARGETS[setup], Xg, Yg, args.n, limits=lim, **kw)
                            if name == "default":
                                cpu_plan.append(time.process_time() - t0)
                        except InputError:
                            row.update({f"{name}_visible": 0.0, f"{name}_true": math.inf, f"{name}_err": math.inf})
                            draws[seed][name] = [math.inf] * args.draws
                            continue
                        vis = _seen(sc, p.T_base_ee)
                        T_ok = p.T_base_ee[vis]
                        row[f"{name}_visible"] = float(vis.sum()) / args.n
                    enough = len(T_ok) >= 3
                    row[f"{name}_true"] = predicted_mm(sc, T_ok, noise) if enough else math.inf
                    row[f"{name}_err"] = he_ml_error_mm(sc, T_ok, noise, rng) if enough else math.inf
                    draws[seed][name] = [row[f"{name}_err"]] + (
                        more_draws_mm(sc, T_ok, noise, [seed, 15, st, li], args.draws) if enough
                        else [math.inf] * (args.draws - 1))  # fmt: skip
                rows.append(row)
            r = {k: np.array([row.get(k, math.nan) for row in rows], dtype=float) for k in rows[0] if k != "two_stage_tolerance"}
            res = {"n_seeds": args.seeds, "median_err_good_mm": float(np.median(r["good_err"])),
                   "median_err_random_mm": float(np.median(r["rand_err"])),
                   "random_true_bound_ratio_median": float(np.median(r["rand_true"] / r["good_true"]))}
            for name, _, _ in levels:
                res[name] = {
                    "visible_fraction_median": float(np.median(r[f"{name}_visible"])),
                    "visible_fraction_mean": float(np.mean(r[f"{name}_visible"])),
                    "visible_fraction_min": float(np.min(r[f"{name}_visible"])),
                    "true_bound_ratio_median": float(np.median(r[f"{name}_true"] / r["good_true"])),
                    "median_err_mm": float(np.median(r[f"{name}_err"])),
                    "err_ratio": float(np.median(r[f"{name}_err"]) / np.median(r["good_err"])),
                    "err_over_random": float(np.median(r[f"{name}_err"]) / np.median(r["rand_err"])),
                }
            for name in ("trusted", "default", "two_stage"):
                for base in ("rand_guess_tol", "rand_guess"):
                    res[name][f"err_over_{base}"] = float(np.median(r[f"{name}_err"]) / np.median(r[f"{base}_err"]))
            if args.draws > 1:
                # every draw of every scene pooled: the medians of all seeds x draws errors, and their ratios
                pooled = {k: np.array([draws[sd][k] for sd in draws], dtype=float).ravel() for k in draws[0]}
                med = {k: float(np.median(v)) for k, v in pooled.items()}
                res["draws"] = args.draws
                res["pooled_median_mm"] = med
                for name in ("trusted", "default", "two_stage", "hedged"):
                    res.setdefault(name, {})["pooled_over"] = {base: med[name] / med[base]
                                                               for base in ("good", "rand", "rand_guess", "rand_guess_tol")}
                res["hedged"]["true_bound_ratio_median"] = float(np.median(r["hedged_true"] / r["good_true"]))
                res["draws_per_seed"] = {str(sd): v for sd, v in draws.items()}
            ts = res["two_stage"]
            ts["calibrated"] = int(np.nansum(r["two_stage_calibrated"]))
            ts["calib_rot_err_deg_max"] = float(np.nanmax(r["two_stage_calib_rot_err_deg"], initial=0.0))
            ts["calib_trans_err_mm_max"] = float(np.nanmax(r["two_stage_calib_trans_err_mm"], initial=0.0))
            tol = np.array([row["two_stage_tolerance"] for row in rows if "two_stage_tolerance" in row]).reshape(-1, 2)
            ts["tolerance_median_mm_deg"] = np.median(tol, axis=0).tolist() if len(tol) else None
            ts["tolerance_max_mm_deg"] = tol.max(axis=0).tolist() if len(tol) else None
            res["per_seed"] = {k: v.tolist() for k, v in r.items()}
            out[f"{rn}/{setup}"] = res
            print(f"{rn:8s} {setup:12s} ({args.seeds} seeds) plan from the truth: he_ml median {res['median_err_good_mm']:.3f} mm;"
                  f" random feasible poses: {res['median_err_random_mm']:.3f} mm, bound "
                  f"{res['random_true_bound_ratio_median']:.2f}x", flush=True)  # fmt: skip
            for name, _, label in levels:
                b = res[name]
                more = ""
                if "err_over_rand_guess" in b:
                    more = (f", {b['err_over_rand_guess_tol']:.2f}x random under guesses+tol., "
                            f"{b['err_over_rand_guess']:.2f}x random under guesses")  # fmt: skip
                print(f"    {label:36s} poses seeing the target median {b['visible_fraction_median']:.0%} (mean "
                      f"{b['visible_fraction_mean']:.0%}, min {b['visible_fraction_min']:.0%}); true bound / plan from "
                      f"the truth {b['true_bound_ratio_median']:.2f}; he_ml median {b['median_err_mm']:.3f} mm "
                      f"({b['err_ratio']:.2f}x the truth's plan, {b['err_over_random']:.2f}x random{more})", flush=True)  # fmt: skip
            if args.draws > 1:
                m = res["pooled_median_mm"]
                print(f"    {args.draws} draws per scene pooled: he_ml median [mm] plan from the truth {m['good']:.3f}, "
                      f"random of the true geometry {m['rand']:.3f}, random under guesses {m['rand_guess']:.3f}", flush=True)  # fmt: skip
                hb = res["hedged"]
                print(f"      {'default plan from the true X and Y':34s} {m['hedged']:.3f} mm: "
                      f"{hb['pooled_over']['rand']:.2f}x random of the true geometry (its bound "
                      f"{hb['true_bound_ratio_median']:.2f}x the truth's plan, random's {res['random_true_bound_ratio_median']:.2f}x)",
                      flush=True)  # fmt: skip
                for name, _, label in levels[:3]:
                    po = res[name]["pooled_over"]
                    print(f"      {label:34s} {m[name]:.3f} mm: {po['rand']:.2f}x random of the true geometry, "
                          f"{po['rand_guess']:.2f}x random under guesses, {po['rand_guess_tol']:.2f}x under guesses+tol., "
                          f"{po['good']:.2f}x the truth's plan", flush=True)  # fmt: skip
            print(f"    first stage calibrated in {ts['calibrated']} of {args.seeds} seeds (largest error "
                  f"{ts['calib_rot_err_deg_max']:.3f} deg, {ts['calib_trans_err_mm_max']:.2f} mm); second-stage "
                  f"tolerance median {ts['tolerance_median_mm_deg']}, largest {ts['tolerance_max_mm_deg']} [mm, deg]",
                  flush=True)  # fmt: skip
    if cpu_plan:
        print(f"CPU per one-stage plan from the guesses (10 poses, default tolerance): median {np.median(cpu_plan):.2f} s, "
              f"max {max(cpu_plan):.2f} s over {len(cpu_plan)} plans")  # fmt: skip
    return out


def main() -> None:
    global FIRST_STAGE
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("timing", "compare", "robustness"))
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--robots", default=",".join(ROBOTS), help="preset names, or a URDF (base_link to tool0) / DH YAML")
    ap.add_argument("--noise", choices=("pnp", "c2"), default="pnp")
    ap.add_argument("--default-limits", action="store_true", help="timing: the default guess tolerance")
    ap.add_argument("--min-visible-fraction", type=float, help="robustness: that limit of the plans from the guesses")
    ap.add_argument("--solver", choices=("poses", "pixels"), default="poses",
                    help="he_ml on the PnP poses, or with the pixels behind them (its pixel stage; pnp noise only)")
    ap.add_argument("--first-stage", type=int, default=FIRST_STAGE,
                    help="robustness: poses of the two-stage workflow's first stage (the rest planned after it)")
    ap.add_argument("--draws", type=int, default=1,
                    help="robustness: noisy draws per scene and pose set (the medians then pool every draw)")
    ap.add_argument("--json", help="write the figures to this JSON file")
    args = ap.parse_args()
    args.robots = [r for r in args.robots.split(",") if r]
    args.noise_pair = ("pnp", "r1") if args.noise == "pnp" else ("c2", "r2")
    SOLVER["pixels"] = args.solver == "pixels"
    FIRST_STAGE = args.first_stage
    res = {"timing": cmd_timing, "compare": cmd_compare, "robustness": cmd_robustness}[args.what](args)
    if args.json and res is not None:
        with open(args.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(args).items() if k != "noise_pair"}, "results": res}, f, indent=1)


if __name__ == "__main__":
    main()
