"""Benchmark your own solver beside the baselines.

Usage::

    python examples/13_own_solver.py [DATA]

The toy solver below (``axis_mean``) is deliberately simple: the rotation of
``X`` from an orthogonal Procrustes fit of the rotation axes scaled by the
angles, then the translation by linear least squares.  Registered with
:func:`kinhec.solvers.register`, it is called by the benchmark exactly like a
baseline: on the consecutive keyframe motions ``A = inv(A_i) A_j`` (flange) and
``B = inv(B_i) B_j`` (camera side), shape ``(N, 4, 4)``, and it returns the
4x4 hand-eye transform ``X`` (``T_ee_cam`` eye-in-hand) as a bare array, which
kinhec wraps in a :class:`~kinhec.solvers.SolverResult`.

From the command line, the same module is named with ``--solver-module``::

    kinhec benchmark DATA --solver-module examples/13_own_solver.py --solvers axis_mean,park_martin

(a module name such as ``mypkg.mysolvers`` works too).  An installed package
can instead declare an entry point, and ``kinhec benchmark`` finds it without
any option::

    [project.entry-points."kinhec.solvers"]
    mysolvers = "mypkg.mysolvers"
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from scipy.spatial.transform import Rotation

from kinhec import KinhecError, solvers


def axis_mean(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Toy ``A X = X B`` solver: Procrustes on the rotation vectors, then least squares on the translations."""
    alpha = Rotation.from_matrix(A[:, :3, :3]).as_rotvec()  # flange rotation vectors, (N, 3) [rad]
    beta = Rotation.from_matrix(B[:, :3, :3]).as_rotvec()  # camera rotation vectors
    U, _, Vt = np.linalg.svd(alpha.T @ beta)  # R_X maps beta onto alpha
    D = np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))])
    R = U @ D @ Vt
    # (R_A - I) t_X = R_X t_B - t_A for every motion, stacked
    C = (A[:, :3, :3] - np.eye(3)).reshape(-1, 3)
    d = (np.einsum("ij,nj->ni", R, B[:, :3, 3]) - A[:, :3, 3]).reshape(-1)
    t = np.linalg.lstsq(C, d, rcond=None)[0]
    X = np.eye(4)
    X[:3, :3], X[:3, 3] = R, t
    return X


solvers.register("axis_mean", "axxb", axis_mean, description="toy: Procrustes on rotation vectors (example 13)")


def main() -> None:
    from kinhec.evaluate.benchmark import run_benchmark

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder (default: data)")
    ap.add_argument("--out", default=None, help="results folder (default: DATA/benchmarks_own_solver)")
    args = ap.parse_args()
    out = args.out or f"{args.data}/benchmarks_own_solver"
    s = run_benchmark(args.data, out=out, solvers=["axis_mean", "park_martin"], sync=["oracle"])
    df = s.results
    print(f"{len(df)} result rows in {s.out}")
    for name, g in df.groupby("solver", sort=False):
        ok = g[g.ok]
        print(f"{name:<14} ok {len(ok)}/{len(g)}  median X error {ok.X_rot_err_deg.median():.3f} deg / "
              f"{ok.X_trans_err_mm.median():.2f} mm")  # fmt: skip
    print(f"leaderboard: {s.files['leaderboard']}")


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:
        sys.exit(f"error: {exc}")
