"""Timing of kinhec's kinematics: forward kinematics, Jacobians and inverse kinematics.

Run from the repository root (single process, BLAS threads as configured)::

    python benchmarks/bench_kinematics.py            # 1e6 FK configurations, 200 IK targets per arm
    python benchmarks/bench_kinematics.py --quick    # smaller sizes for a smoke run

Prints microseconds per configuration for FK and the Jacobian (best of
``--repeat`` runs, random in-limit configurations), and for IK the success rate
and milliseconds per target on poses made by FK of random in-limit
configurations (so every target is reachable), for a large batch and a small
one (a look-at sequence solves a few dozen poses at a time).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from kinhec.models import robots


def best_time(fn, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def random_q(model, rng, n):
    return rng.uniform(model.q_min_rad, model.q_max_rad, size=(n, model.dof))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-fk", type=int, default=1_000_000, help="configurations for FK timing")
    parser.add_argument("--n-jac", type=int, default=200_000, help="configurations for Jacobian timing")
    parser.add_argument("--n-ik", type=int, default=200, help="IK targets per arm (large batch)")
    parser.add_argument("--n-ik-small", type=int, default=20, help="IK targets per arm (small batch)")
    parser.add_argument("--repeat", type=int, default=3, help="timing repetitions (best is kept)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="1e5 FK configurations, 50 IK targets")
    args = parser.parse_args()
    if args.quick:
        args.n_fk, args.n_jac, args.n_ik, args.n_ik_small, args.repeat = 100_000, 20_000, 50, 10, 1

    rng = np.random.default_rng(args.seed)
    threads = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ}
    print(f"numpy {np.__version__}, Python {platform.python_version()}, {platform.processor() or platform.machine()}, "
          f"threads env: {threads or 'unset'}, FK chunk {robots.FK_CHUNK}")

    print(f"\nforward kinematics and Jacobian (best of {args.repeat})")
    print(f"{'robot':8s} {'dof':>3s} {'FK configs':>11s} {'FK us/config':>13s} {'Jac configs':>12s} {'Jac us/config':>14s} "
          f"{'frames us/config':>17s}")
    for name in ("ur5e", "panda", "iiwa14", "irb120"):
        model = robots.get_robot(name)
        q = random_q(model, rng, args.n_fk)
        t_fk = best_time(lambda: model.fk(q), args.repeat)
        qj = q[: args.n_jac]
        t_jac = best_time(lambda: model.jacobian(qj), args.repeat)
        t_fr = best_time(lambda: model.joint_frames(qj), 1)
        print(f"{name:8s} {model.dof:3d} {args.n_fk:11,d} {t_fk / args.n_fk * 1e6:13.3f} {args.n_jac:12,d} "
              f"{t_jac / args.n_jac * 1e6:14.3f} {t_fr / args.n_jac * 1e6:17.3f}")
        del q

    print("\ninverse kinematics (random reachable targets, default settings: 8 restarts, tol 1e-6 m / 1e-6 rad)")
    print(f"{'robot':8s} {'M':>5s} {'success':>8s} {'ms/target':>10s} {'M':>4s} {'success':>8s} {'ms/target':>10s} "
          f"{'max pos err of successes [m]':>29s}")
    rates = []
    for name in robots.ROBOT_NAMES:
        model = robots.get_robot(name)
        if model.is_free:
            continue
        row = [f"{name:8s}"]
        worst = 0.0
        for n in (args.n_ik, args.n_ik_small):
            T = model.fk(random_q(model, rng, n))
            t0 = time.perf_counter()
            res = model.ik(T, rng)
            dt = time.perf_counter() - t0
            if res.success.any():
                worst = max(worst, float(res.pos_err_m[res.success].max()))
            rates.append(res.success_rate)
            row.append(f"{n:5d} {res.success_rate:8.1%} {dt / n * 1e3:10.2f}")
        print(" ".join(row) + f" {worst:29.1e}")
    print(f"\nmean IK success rate over all arms and batches: {np.mean(rates):.2%}")


if __name__ == "__main__":
    main()
