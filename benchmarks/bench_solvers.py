"""Runtime of every registered solver at the protocol's keyframe budget, on one core.

Usage::

    python benchmarks/bench_solvers.py [--keyframes 200] [--repeats 50] [--seed 0]

Builds one synthetic eye-in-hand sequence of ``--keyframes`` flange poses in a
manipulator workspace (hand-eye transform of a few centimetres, board about
0.7 m away, noise of levels r2 / c2), feeds the consecutive keyframe motions to
the ``A X = X B`` entries of the registry and the absolute keyframe poses to
the ``A X = Y B`` entries, exactly as the benchmark protocol does, and prints
the median and the best wall time of ``--repeats`` calls of each entry
(input checks included), next to its budget.  The clock-offset estimator is
timed on a 20 s asynchronous sequence (robot 500 Hz, camera 30 Hz).

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

from kinhec import solvers  # noqa: E402
from kinhec.geometry import motion, se3

from _rigs import eye_in_hand_rig  # noqa: E402  (benchmarks/_rigs.py)

#: Budgets [ms] at 200 keyframes (closed forms, LM refinements, RANSAC).
BUDGET_MS = {
    "park_martin+lm": 20.0,
    "shah+lm": 20.0,
    "ransac_park_martin": 50.0,
}
CLOSED_FORM_BUDGET_MS = 2.0


def synthetic_sequence(rng: np.random.Generator, n: int):
    """Flange poses ``T_base_ee`` (n, 4, 4) and measured ``B_i = inv(T_cam_target)`` of an eye-in-hand rig."""
    A, T_cam_target, X, Y = eye_in_hand_rig(rng, n)
    A_meas = A @ se3.se3_exp(np.c_[rng.normal(0, 5e-4, (n, 3)), rng.normal(0, 3e-4, (n, 3))])
    R = T_cam_target[:, :3, :3] @ se3.so3_exp(rng.normal(0, 2e-3, (n, 3)))
    t = T_cam_target[:, :3, 3] + rng.normal(0, 1, (n, 3)) * np.array([0.001, 0.001, 0.003])
    B_meas = se3.invert_transform(se3.transform_from_rotation_translation(R, t))
    return A_meas, B_meas, X, Y


def async_streams(rng: np.random.Generator, offset_s: float = 0.08):
    t_r = np.arange(0.0, 20.0, 1 / 500)
    f, a, ph = rng.uniform(0.15, 0.6, (3, 3)), rng.uniform(0.2, 0.6, (3, 3)), rng.uniform(0, 2 * np.pi, (3, 3))

    def poses(t):
        phi = (a[None] * np.sin(2 * np.pi * f[None] * t[:, None, None] + ph[None])).sum(-1)
        return se3.transform_from_rotation_translation(se3.so3_exp(phi), np.zeros((t.size, 3)))

    t_gt = np.arange(0.5, 19.5, 1 / 30)
    return t_r, poses(t_r), t_gt + offset_s, poses(t_gt)


def time_call(f, repeats: int):
    f()  # warm-up
    ts = np.empty(repeats)
    for i in range(repeats):
        t0 = time.perf_counter()
        f()
        ts[i] = time.perf_counter() - t0
    return 1000 * float(np.median(ts)), 1000 * float(ts.min())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keyframes", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    A_abs, B_abs, X, Y = synthetic_sequence(rng, args.keyframes)
    A, B = motion.relative_motions(A_abs), motion.relative_motions(B_abs)
    print(f"kinhec solvers, {args.keyframes} keyframes ({A.shape[0]} motions), {args.repeats} repeats, one core")
    print(f"{'solver':20s} {'kind':5s} {'median ms':>10s} {'best ms':>9s} {'budget ms':>10s}  "
          f"{'X err deg / mm':>18s}  status")
    worst = 0
    for name in solvers.solver_names():
        spec = solvers.get_solver(name)
        args_ = (A, B) if spec.kind == "axxb" else (A_abs, B_abs)
        med, best = time_call(lambda: spec.run(*args_), args.repeats)
        budget = BUDGET_MS.get(name, CLOSED_FORM_BUDGET_MS)
        rot, trans = se3.pose_error(spec.run(*args_).X, X)
        ok = med <= budget
        worst |= not ok
        print(f"{name:20s} {spec.kind:5s} {med:10.3f} {best:9.3f} {budget:10.1f}  {rot:8.4f} / {trans:7.3f}  "
              f"{'ok' if ok else 'OVER'}")
    t_r, A_r, t_c, T_c = async_streams(rng)
    med, best = time_call(lambda: solvers.estimate_time_offset(t_r, A_r, t_c, T_c), max(5, args.repeats // 5))
    est = solvers.estimate_time_offset(t_r, A_r, t_c, T_c)
    print(f"{'estimate_time_offset':20s} {'':5s} {med:10.3f} {best:9.3f} {'-':>10s}  "
          f"offset error {1000 * (est.offset_s - 0.08):+.2f} ms, peak_corr {est.peak_corr:.3f}"
          f"  (20 s: robot 500 Hz, camera 30 Hz)")
    return int(worst)


if __name__ == "__main__":
    raise SystemExit(main())
