"""Timing of the pnp measurement model: pixel noise + batched Levenberg-Marquardt PnP.

Run from the repository root (single process, BLAS threads as configured)::

    python benchmarks/bench_pnp.py                   # 10,000 frames, hd camera, checker_9x6_25mm
    python benchmarks/bench_pnp.py --camera vga --target checker_7x5_20mm --pixel-std 1.0
    python benchmarks/bench_pnp.py --quick           # 1,000 frames, one repetition

Prints the time per frame of ``kinhec.models.pnp.simulate_pnp`` (wall clock, best of
``--repeat`` runs; the process CPU time of the same runs next to it, which
exceeds the wall time when BLAS threads spin), the split between the
visibility/projection part and the LM solve, the iteration statistics, and,
when OpenCV is importable, a Python loop of ``cv2.solvePnP(...,
useExtrinsicGuess=True, flags=cv2.SOLVEPNP_ITERATIVE)`` over the same noisy
pixels from the same (true) starting poses, with the largest pose difference
between the two estimates.  The frames are look-at poses of a board facing the
camera from 0.3 to 1.0 m, tilted up to 45 deg, all visible.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from kinhec.geometry import se3
from kinhec.models import cameras, pnp


def best_time(fn, repeat: int) -> tuple[float, float, object]:
    """Best wall-clock time [s] of ``fn()``, the CPU time of that run and its result."""
    best = (np.inf, np.inf, None)
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if wall < best[0]:
            best = (wall, cpu, out)
    return best


def observing_poses(rng: np.random.Generator, n: int, camera, target) -> np.ndarray:
    """``n`` visible poses ``T_cam_target`` of a board roughly facing the camera."""
    facing = np.diag([1.0, -1.0, -1.0])
    out, have = [], 0
    while have < n:
        m = 2 * n
        axes = se3.random_unit_vectors(rng, m)
        R = se3.so3_exp(axes * np.radians(rng.uniform(0.0, 45.0, m))[:, None]) @ facing
        d = rng.uniform(0.3, 1.0, m)
        t = np.stack([rng.uniform(-0.15, 0.15, m) * d, rng.uniform(-0.1, 0.1, m) * d, d], axis=1)
        T = se3.transform_from_rotation_translation(R, t)
        T = T[cameras.visibility(camera, target, T).visible]
        out.append(T)
        have += len(T)
    return np.concatenate(out)[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=10_000, help="frames per run")
    parser.add_argument("--camera", default="hd", choices=cameras.CAMERA_NAMES)
    parser.add_argument("--target", default="checker_9x6_25mm", choices=cameras.TARGET_NAMES)
    parser.add_argument("--pixel-std", type=float, default=0.5, help="pixel noise std [px]")
    parser.add_argument("--repeat", type=int, default=5, help="timing repetitions (best is kept)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-opencv", action="store_true", help="skip the OpenCV loop")
    parser.add_argument("--quick", action="store_true", help="1,000 frames, one repetition")
    args = parser.parse_args()
    if args.quick:
        args.frames, args.repeat = 1_000, 1

    cam = cameras.get_camera(args.camera)
    tgt = cameras.get_target(args.target)
    n = args.frames
    threads = {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS") if k in os.environ}
    print(
        f"numpy {np.__version__}, Python {platform.python_version()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, threads env: {threads or 'unset'}"
    )
    print(f"{n} frames, camera {cam.name} ({cam.width_px}x{cam.height_px}, f={cam.f_px:g} px), target {tgt.name} "
          f"({tgt.n_points} points), pixel noise {args.pixel_std:g} px, best of {args.repeat}\n")

    T_true = observing_poses(np.random.default_rng(args.seed), n, cam, tgt)

    wall, cpu, res = best_time(
        lambda: pnp.simulate_pnp(cam, tgt, T_true, args.pixel_std, np.random.default_rng(args.seed + 1)), args.repeat
    )
    print(f"{'simulate_pnp':34s} {1e6 * wall / n:8.2f} us/frame wall  {1e6 * cpu / n:8.2f} us/frame CPU")
    vwall, vcpu, _ = best_time(lambda: cameras.visibility(cam, tgt, T_true), args.repeat)
    print(f"{'  of which visibility()':34s} {1e6 * vwall / n:8.2f} us/frame wall  {1e6 * vcpu / n:8.2f} us/frame CPU")

    # the same measurement, replayed: noisy pixels and the solve alone
    noise = np.random.default_rng(args.seed + 1).standard_normal((n, tgt.n_points, 2))
    uv = cameras.project_points(cam, T_true, tgt.points_m)[0] + args.pixel_std * noise
    swall, scpu, sres = best_time(lambda: pnp.solve_pnp(cam, tgt.points_m, uv, T_true), args.repeat)
    print(f"{'solve_pnp (LM only)':34s} {1e6 * swall / n:8.2f} us/frame wall  {1e6 * scpu / n:8.2f} us/frame CPU")
    assert np.array_equal(sres.T_cam_target, res.T_cam_target)

    it = res.n_iter[res.n_iter > 0]
    rot_deg, trans_mm = se3.pose_error(res.T_cam_target, T_true)
    print(
        f"\niterations: mean {it.mean():.2f}, median {np.median(it):.0f}, max {it.max()}; "
        f"converged {100 * res.converged.mean():.2f} %; median RMSE {np.median(res.rmse_px):.3f} px"
    )
    print(f"error vs truth: median {np.median(rot_deg):.4f} deg, {np.median(trans_mm):.4f} mm")

    if args.no_opencv:
        return
    try:
        import cv2
    except ImportError:
        print("\nOpenCV not importable: no comparison")
        return

    K = cam.K
    pts = tgt.points_m
    rvecs = [cv2.Rodrigues(T[:3, :3])[0] for T in T_true]

    def opencv_loop():
        out = np.empty((n, 4, 4))
        for i in range(n):
            _, rvec, tvec = cv2.solvePnP(
                pts, uv[i], K, None, rvecs[i].copy(), T_true[i, :3, 3].reshape(3, 1).copy(),
                useExtrinsicGuess=True, flags=cv2.SOLVEPNP_ITERATIVE,
            )
            out[i] = np.eye(4)
            out[i, :3, :3] = cv2.Rodrigues(rvec)[0]
            out[i, :3, 3] = tvec[:, 0]
        return out

    cwall, ccpu, T_cv = best_time(opencv_loop, max(1, args.repeat // 2))
    print(f"\n{'cv2.solvePnP loop (OpenCV ' + cv2.__version__ + ')':34s} {1e6 * cwall / n:8.2f} us/frame wall  "
          f"{1e6 * ccpu / n:8.2f} us/frame CPU")
    print(f"speed-up of solve_pnp over the OpenCV loop: {cwall / swall:.1f}x")
    d_rot, d_mm = se3.pose_error(sres.T_cam_target, T_cv)
    rmse_cv = pnp.reprojection_rmse_px(cam, pts, uv, T_cv)
    print(
        f"kinhec vs OpenCV pose: median {np.median(d_rot):.1e} deg / {np.median(d_mm):.1e} mm, "
        f"99th percentile {np.percentile(d_rot, 99):.1e} deg / {np.percentile(d_mm, 99):.1e} mm "
        f"(OpenCV stops after <= 20 iterations at a loose threshold); "
        f"kinhec RMSE lower or equal on {100 * np.mean(sres.rmse_px <= rmse_cv + 1e-12):.1f} % of frames"
    )


if __name__ == "__main__":
    main()
