"""CPU time of ``he_ml`` (noise levels estimated, the restricted variance components) against the number of pairs.

Usage::

    python benchmarks/bench_he_ml_pairs.py [--pairs 8 40 100] [--repeats 15] [--seed 0] [--profile N]

Draws eye-in-hand rigs (:func:`_rigs.eye_in_hand_rig`) with the generator's noise (robot r2, camera c3),
times ``he_ml(A, B)`` (median CPU time of ``--repeats`` calls per rig, ``time.process_time``, medians over
five rigs) and prints the figures.  ``--profile N`` prints a cProfile of 20 calls on ``N`` pairs instead.
BLAS threads are pinned to one before numpy is imported.
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


def _pairs(n: int, seed: int):
    rng = np.random.default_rng(seed)
    A, C, X, _ = eye_in_hand_rig(rng, n)
    r_rot, r_tr = noise.robot_level("r2")
    c_rot, c_xy, _, c_z = noise.camera_level("c3")
    A_m = noise.robot_se3_gaussian(A, r_rot, r_tr, rng)
    C_m = noise.camera_se3_gaussian(C, c_rot, c_xy, c_z, rng)
    return A_m, se3.invert_transform(C_m)


def _cpu(fn, repeats: int) -> float:
    fn()  # warm-up
    c = []
    for _ in range(repeats):
        c0 = time.process_time()
        fn()
        c.append(1000.0 * (time.process_time() - c0))
    return float(np.median(c))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, nargs="+", default=[8, 40, 100])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profile", type=int, default=0)
    args = ap.parse_args()
    if args.profile:
        import cProfile
        import pstats

        A, B = _pairs(args.profile, args.seed)
        he_ml(A, B)  # the imports and first-call costs stay out of the profile
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(20):
            he_ml(A, B)
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(25)
        return
    print(f"he_ml(A, B), noise estimated, one core: median CPU per call [ms] ({args.repeats} calls, 5 rigs)")
    for n in args.pairs:
        per_rig = []
        for k in range(5):
            A, B = _pairs(n, args.seed + 1000 * k)
            per_rig.append(_cpu(lambda A=A, B=B: he_ml(A, B), args.repeats))
        print(f"{n:5d} pairs: {np.median(per_rig):8.2f} ms  (rigs: {' '.join(f'{v:.1f}' for v in per_rig)})")


if __name__ == "__main__":
    main()
