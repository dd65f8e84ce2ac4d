"""Runtime of ``kinhec.calibrate.calibrate`` on a 3,000-frame pair of streams, clock offset included, on one core.

Usage::

    python benchmarks/bench_calibrate.py [--frames 3000] [--repeats 5] [--seed 0]

Writes two TUM files of ``--frames`` poses each: a flange stream at 100 Hz on
the robot clock and a camera stream (``T_cam_target``, eye-in-hand) at 100 Hz
stamped ``t + 0.037 s`` with 1 ms jitter and 5 % dropped frames, both with
pose noise and 1 % gross outliers in the camera stream.  Times the whole call
(reading both files, coarse offset, pairing, every registry solver as a
candidate, outlier rejection, joint refinement of X, Y and the offset,
covariance, observability, offset curve) with the process CPU clock, and
prints the median and best of ``--repeats`` calls against the 1 s budget,
with the errors against the truth.

BLAS threads are pinned to one before numpy is imported, so the figures are
single-core figures.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from kinhec.geometry import se3  # noqa: E402
from kinhec.calibrate import calibrate  # noqa: E402

BUDGET_S = 1.0
OFFSET_S = 0.037


def flange(t, rng):
    f = rng.uniform(0.05, 0.3, (3, 3))
    a = rng.uniform(0.2, 0.5, (3, 3))
    ph = rng.uniform(0, 2 * np.pi, (3, 3))
    phi = (a[None] * np.sin(2 * np.pi * f[None] * t[:, None, None] + ph[None])).sum(-1)
    p = 0.15 * np.sin(2 * np.pi * 0.11 * t[:, None] + np.array([0.0, 1.0, 2.0])) + np.array([0.5, 0.0, 0.4])
    return se3.transform_from_rotation_translation(se3.so3_exp(phi), p)


def write_tum(path: Path, t, T):
    q = se3.quaternion_from_matrix(T[:, :3, :3])
    rows = np.column_stack([t, T[:, :3, 3], q[:, 1:], q[:, :1]])
    np.savetxt(path, rows, fmt="%.9f", header="timestamp tx ty tz qx qy qz qw")


def make(folder: Path, frames: int, seed: int):
    rng = np.random.default_rng(seed)
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.2, -0.3, 1.4]), [0.03, -0.06, 0.09])
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.1, 2.8, 0.0]), [0.9, 0.1, -0.1])
    t_r = np.arange(frames) / 100.0
    A = flange(t_r, rng) @ se3.se3_exp(np.c_[rng.normal(0, 2e-4, (frames, 3)), rng.normal(0, 2e-4, (frames, 3))])
    t_gt = 0.3 + np.arange(int(frames / 0.95) + 10) / 100.0
    t_gt = t_gt[rng.random(t_gt.size) > 0.05][:frames]
    A_c = flange(t_gt, np.random.default_rng(seed))  # the same motion at the capture instants
    T_cam_target = se3.invert_transform(A_c @ X) @ Y
    T_cam_target = T_cam_target @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (frames, 3)), rng.normal(0, 1e-3, (frames, 3))])
    bad = rng.random(frames) < 0.01
    T_cam_target[bad] = T_cam_target[bad] @ se3.se3_exp(np.c_[rng.normal(0, 0.2, (bad.sum(), 3)), rng.normal(0, 0.1, (bad.sum(), 3))])
    t_c = np.sort(t_gt + OFFSET_S + rng.normal(0, 1e-3, t_gt.size))
    write_tum(folder / "hand.tum", t_r, A)
    write_tum(folder / "eye.tum", t_c, T_cam_target)
    return X, Y


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        X, Y = make(folder, args.frames, args.seed)
        # the generated files say nothing about their setup and directions: stated (a default is not a statement)
        stated = {"setup": "eye_in_hand", "hand_pose": "base_T_ee"}
        res = calibrate(folder / "hand.tum", folder / "eye.tum", **stated)  # warm-up (imports, caches)
        times = []
        for _ in range(args.repeats):
            t0 = time.process_time()
            res = calibrate(folder / "hand.tum", folder / "eye.tum", **stated)
            times.append(time.process_time() - t0)
    med, best = float(np.median(times)), float(np.min(times))
    rx, tx = se3.pose_error(res.X, X)
    print(f"kinhec calibrate, {args.frames:,} + {args.frames:,} frames (100 Hz each), offset {OFFSET_S} s, 1 % outliers")
    print(f"  CPU time per call: median {med:.3f} s, best {best:.3f} s (budget {BUDGET_S:.1f} s) "
          f"{'OK' if med < BUDGET_S else 'OVER BUDGET'}")
    print(f"  pairs {res.n_pairs}, outliers {len(res.outliers)}, initial solver {res.init_solver}")
    print(f"  X error {rx:.4f} deg / {tx:.3f} mm (1 sigma {np.degrees(res.X_std[:3]).max():.4f} deg / "
          f"{1000 * res.X_std[3:].max():.3f} mm)")
    print(f"  offset {res.time_offset_s:.5f} s (true {OFFSET_S}), std {res.time_offset_std_s:.2e} s")


if __name__ == "__main__":
    main()
