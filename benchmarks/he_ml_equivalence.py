"""``he_ml`` before and after a change: accuracy, noise levels and covariance honesty over many seeded rigs.

Usage::

    PYTHONPATH=<old>/src python benchmarks/he_ml_equivalence.py run --out old.json [--rigs 200] [--pairs 8 40 200]
    PYTHONPATH=<new>/src python benchmarks/he_ml_equivalence.py run --out new.json
    python benchmarks/he_ml_equivalence.py compare old.json new.json

``run`` draws ``--rigs`` seeded rigs per number of pairs and setup, eye-in-hand (:func:`_rigs.eye_in_hand_rig`)
and eye-to-hand (the same flange poses, a marker on the flange seen by a fixed camera), with the
generator's noise (:mod:`kinhec.models.noise`, robot r2, camera c3), calls ``he_ml(A, B)`` with the noise
levels estimated, and records per rig: the errors of ``X`` against the truth (rotation [deg], translation
[mm]), the estimated noise levels, the NEES of ``X`` and of ``(X, Y)`` (the right-perturbation error
``log(inv(X_true) X)`` in the inverse of the reported covariance; 6 and 12 on average when the covariance is
honest), the number of inliers and the CPU time of the call.  The draws depend only on the seeds, so two
runs with two versions of kinhec see the same data.

``compare`` prints per setup and number of pairs: the ratio new / old of the median ``X`` rotation and
translation errors (and the median of the per-rig ratios), the median estimated noise levels over the true
ones, the mean NEES and the share of rigs beyond the chi-square 99 % quantile, both versions side by side,
the rigs whose inliers differ, and the CPU times.  BLAS threads are pinned to one before numpy is imported.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from kinhec.geometry import se3  # noqa: E402
from kinhec.models import noise  # noqa: E402

from _rigs import eye_in_hand_rig  # noqa: E402  (benchmarks/_rigs.py)

#: chi-square 99 % quantiles with 6 and 12 degrees of freedom
_CHI2_99 = {6: 16.812, 12: 26.217}
_LEVELS = ("camera_rot_std_rad", "camera_trans_std_m", "camera_trans_std_z_m", "robot_rot_std_rad",
           "robot_trans_std_m")  # fmt: skip


def _truth_levels() -> dict:
    r_rot, r_tr = noise.robot_level("r2")
    c_rot, c_xy, _, c_z = noise.camera_level("c3")
    return {"camera_rot_std_rad": c_rot, "camera_trans_std_m": c_xy, "camera_trans_std_z_m": c_z,
            "robot_rot_std_rad": r_rot, "robot_trans_std_m": r_tr}  # fmt: skip


def _look_at(eye: np.ndarray, centre: np.ndarray) -> np.ndarray:
    """``T_base_cam`` of a camera at ``eye`` whose optical axis (z) points at ``centre``."""
    z = centre - eye
    z /= np.linalg.norm(z)
    x = np.cross([0.0, 0.0, 1.0], z)
    x /= np.linalg.norm(x)
    return se3.transform_from_rotation_translation(np.stack([x, np.cross(z, x), z], axis=1), eye)


def draw(setup: str, n: int, seed: int):
    """Measured ``A``, ``B`` and true ``X``, ``Y`` of one seeded rig."""
    rng = np.random.default_rng(seed)
    A, C, X, Y = eye_in_hand_rig(rng, n)
    if setup == "eye_to_hand":
        # a marker 8 cm off the flange, a camera 1.1 m from the workspace centre looking at it
        X = se3.transform_from_rotation_translation(se3.so3_exp([0.2, 0.1, -0.4]), [0.02, 0.03, 0.08])
        Y = _look_at(np.array([1.3, 0.5, 0.9]), np.array([0.5, 0.0, 0.4]))
        C = se3.invert_transform(Y) @ A @ X
    lv = _truth_levels()
    A_m = noise.robot_se3_gaussian(A, lv["robot_rot_std_rad"], lv["robot_trans_std_m"], rng)
    C_m = noise.camera_se3_gaussian(C, lv["camera_rot_std_rad"], lv["camera_trans_std_m"], lv["camera_trans_std_z_m"],
                                    rng)  # fmt: skip
    B_m = se3.invert_transform(C_m) if setup == "eye_in_hand" else C_m
    return A_m, B_m, X, Y


def run(args) -> None:
    from kinhec.solvers.he_ml import he_ml

    out = []
    for setup in args.setups:
        for n in args.pairs:
            for k in range(args.rigs):
                seed = 1_000_000 * args.pairs.index(n) + 10_000 * args.setups.index(setup) + k + args.seed
                A, B, X, Y = draw(setup, n, seed)
                c0 = time.process_time()
                res = he_ml(A, B)
                cpu = 1000.0 * (time.process_time() - c0)
                rot, trans = se3.pose_error(res.X, X)
                dx = se3.se3_log(se3.invert_transform(X) @ res.X)
                dy = se3.se3_log(se3.invert_transform(Y) @ res.Y)
                e = np.concatenate([dx, dy])
                cov = res.cov[:12, :12]
                nees_x = float(dx @ np.linalg.solve(cov[:6, :6], dx))
                nees_xy = float(e @ np.linalg.solve(cov, e))
                out.append({"setup": setup, "n": n, "seed": seed, "rot_deg": float(rot), "trans_mm": float(trans),
                            "nees_x": nees_x, "nees_xy": nees_xy, "noise": {k_: res.noise[k_] for k_ in _LEVELS},
                            "n_inliers": res.n_inliers, "inliers": np.flatnonzero(res.inliers).tolist(),
                            "configuration": res.configuration, "cpu_ms": cpu})  # fmt: skip
            print(f"{setup} {n} pairs: {args.rigs} rigs done", flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f)


def _key(rec) -> tuple:
    return rec["setup"], rec["n"], rec["seed"]


def compare(args) -> None:
    old = {_key(r): r for r in json.load(open(args.old))}
    new = {_key(r): r for r in json.load(open(args.new))}
    keys = sorted(set(old) & set(new))
    truth = _truth_levels()
    groups = sorted({k[:2] for k in keys})
    print("X errors: median new / old (rotation, translation) and the median of the per-rig ratios; NEES mean "
          "(share > chi2 99 %) old -> new; rigs with other inliers; median CPU old -> new [ms]")  # fmt: skip
    for g in groups:
        ks = [k for k in keys if k[:2] == g]
        o = [old[k] for k in ks]
        m = [new[k] for k in ks]

        def med(recs, f):
            return float(np.median([r[f] for r in recs]))

        rr = med(m, "rot_deg") / med(o, "rot_deg")
        rt = med(m, "trans_mm") / med(o, "trans_mm")
        pr = float(np.median([a["rot_deg"] / b["rot_deg"] for a, b in zip(m, o)]))
        pt = float(np.median([a["trans_mm"] / b["trans_mm"] for a, b in zip(m, o)]))

        def nees(recs, f, dof):
            v = np.array([r[f] for r in recs])
            return f"{v.mean():6.2f} ({100 * np.mean(v > _CHI2_99[dof]):4.1f} %)"

        diff_inl = sum(a["inliers"] != b["inliers"] or a["configuration"] != b["configuration"] for a, b in zip(m, o))
        print(f"{g[0]:11s} {g[1]:4d} pairs, {len(ks)} rigs: X rot {rr:.4f} (per rig {pr:.4f}), X trans {rt:.4f} "
              f"(per rig {pt:.4f}); NEES X {nees(o, 'nees_x', 6)} -> {nees(m, 'nees_x', 6)}, XY "
              f"{nees(o, 'nees_xy', 12)} -> {nees(m, 'nees_xy', 12)}; other inliers {diff_inl}; "
              f"CPU {med(o, 'cpu_ms'):.1f} -> {med(m, 'cpu_ms'):.1f}")  # fmt: skip
        lv_o = {k_: float(np.median([r["noise"][k_] for r in o])) / truth[k_] for k_ in _LEVELS}
        lv_m = {k_: float(np.median([r["noise"][k_] for r in m])) / truth[k_] for k_ in _LEVELS}
        sp = {k_: float(np.median([abs(a["noise"][k_] / b["noise"][k_] - 1.0) for a, b in zip(m, o)])) for k_ in _LEVELS}
        print("      noise levels, median estimate / truth old -> new (median |new / old - 1| per rig): "
              + ", ".join(f"{k_.replace('_std', '').replace('_rad', '').replace('_m', '')} {lv_o[k_]:.3f} -> "
                          f"{lv_m[k_]:.3f} ({sp[k_]:.3f})" for k_ in _LEVELS))  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--rigs", type=int, default=200)
    r.add_argument("--pairs", type=int, nargs="+", default=[8, 40, 200])
    r.add_argument("--setups", nargs="+", default=["eye_in_hand", "eye_to_hand"])
    r.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("compare")
    c.add_argument("old")
    c.add_argument("new")
    args = ap.parse_args()
    run(args) if args.cmd == "run" else compare(args)


if __name__ == "__main__":
    main()
