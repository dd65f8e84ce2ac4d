"""Are calibrate's 'determined' answers right within their error bars on mixed-track recordings?

Usage::

    python benchmarks/calibrate_honesty_mixed.py [--seeds 40] [--first 0] [--jobs 1] [--show]

Generated recordings of one recipe (``MIXED_ONE_CLOCK`` of ``tests/helpers/recordings.py``: a UR5e eye-in-hand
touring six joint waypoints for 22 s, hand and camera at 60 Hz on one clock, PnP camera poses, 11 % random-pose
outliers, robot noise ``se3_gaussian`` and ``joint_gaussian``), one per seed, written as TUM files and calibrated
with ``fmt="tum", setup="eye_in_hand", eye_pose="cam_T_target"``.  For every run that returns: the NEES of ``X``,
``e^T inv(cov_X) e`` with ``e = (log(R_est^T R_true), t_true - t_est)``, against ``chi2_6``'s 99.9 % quantile
(22.46).  Prints how many runs returned, were refused and were undetermined, how many were determined and wrong
beyond their error bars (confident-wrong), the NEES quantiles of the determined ones, and the clock offsets
(truth 0) and scales (truth 1) with their standard deviations.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.recordings import MIXED_ONE_CLOCK as RECIPE  # noqa: E402
from kinhec.calibrate import calibrate  # noqa: E402
from kinhec.geometry import se3  # noqa: E402
from kinhec.synth.generator import simulate  # noqa: E402
from kinhec.util.errors import KinhecError  # noqa: E402

#: 99.9 % quantile of the chi-square distribution with 6 degrees of freedom.
CHI2_6_999 = 22.4577


def write_tum(path: Path, t: np.ndarray, T: np.ndarray) -> Path:
    q = se3.quaternion_from_matrix(T[:, :3, :3])
    np.savetxt(path, np.column_stack([t, T[:, :3, 3], q[:, 1:], q[:, :1]]), fmt="%.10f")
    return path


def nees_x(res, X_true: np.ndarray) -> float:
    """``e^T inv(cov[:6, :6]) e`` of the estimated ``X`` against the truth."""
    e = np.r_[se3.so3_log(res.X[:3, :3].T @ X_true[:3, :3]), X_true[:3, 3] - res.X[:3, 3]]
    return float(e @ np.linalg.solve(res.cov[:6, :6], e))


def run_seed(seed: int) -> dict:
    """One recording calibrated: outcome, NEES of X, offset and scale (with their standard deviations)."""
    g = simulate(dict(RECIPE, seed=seed))
    ok = np.isfinite(g.T_cam_target_meas).all(axis=(1, 2))
    out = {"seed": seed}
    with tempfile.TemporaryDirectory() as tmp:
        hand = write_tum(Path(tmp) / "hand.txt", g.t_robot_s, g.T_base_ee_meas)
        eye = write_tum(Path(tmp) / "eye.txt", g.t_camera_s[ok], g.T_cam_target_meas[ok])
        t0 = time.process_time()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = calibrate(hand, eye, fmt="tum", setup="eye_in_hand", eye_pose="cam_T_target")
        except KinhecError as exc:
            out.update(outcome="refused", why=str(exc).splitlines()[0][:160], cpu=time.process_time() - t0)
            return out
        out["cpu"] = time.process_time() - t0
    rot, trans = se3.pose_error(res.X, g.X)
    out.update(outcome="determined" if res.determined else "undetermined", nees=nees_x(res, g.X),
               rot_deg=float(rot), trans_mm=float(trans), offset_ms=1e3 * (res.time_offset_s or 0.0),
               offset_std_ms=1e3 * (res.time_offset_std_s or 0.0), scale=res.scale, scale_std=res.scale_std,
               why=(res.warnings[0][:160] if res.warnings else ""))  # fmt: skip
    return out


def summary(rows: list[dict]) -> list[str]:
    ret = [r for r in rows if r["outcome"] != "refused"]
    det = [r for r in ret if r["outcome"] == "determined"]
    wrong = [r for r in det if r["nees"] > CHI2_6_999]
    lines = [f"seeds {len(rows)}: returned {len(ret)} (determined {len(det)}, undetermined {len(ret) - len(det)}), "
             f"refused {len(rows) - len(ret)}",
             f"confident-wrong (determined, NEES of X > {CHI2_6_999:.2f}): {len(wrong)}"
             + (" -- seeds " + ", ".join(f"{r['seed']} ({r['nees']:.1f})" for r in wrong) if wrong else "")]  # fmt: skip
    if det:
        q = np.quantile([r["nees"] for r in det], [0.0, 0.5, 0.9, 1.0])
        lines.append("NEES of determined runs: min %.2f, median %.2f, 90 %% %.2f, max %.2f" % tuple(q))
    for what, group in (("determined", det), ("undetermined", [r for r in ret if r["outcome"] == "undetermined"])):
        if not group:
            continue
        off = np.array([r["offset_ms"] for r in group])
        osd = np.array([r["offset_std_ms"] for r in group])
        z = np.abs(off) / np.maximum(osd, 1e-12)
        sc = np.array([r["scale"] for r in group], dtype=float)
        ssd = np.array([r["scale_std"] for r in group], dtype=float)
        lines.append(f"{what}: offset [ms] (truth 0) median |offset| {np.median(np.abs(off)):.3g}, max {np.abs(off).max():.3g}, "
                     f"within a sample period (16.7 ms) {(np.abs(off) < 16.6).sum()} of {len(group)}; its std median "
                     f"{np.median(osd):.3g}, min {osd.min():.3g}; |offset| / std: median {np.median(z):.3g}, max "
                     f"{z.max():.3g}")  # fmt: skip
        lines.append(f"{what}: scale (truth 1) median {np.median(sc):.4f}, range {sc.min():.4f} .. {sc.max():.4f}; "
                     f"|scale - 1| / std max {np.max(np.abs(sc - 1) / np.maximum(ssd, 1e-12)):.3g}")
    cpu = [r["cpu"] for r in rows]
    lines.append(f"CPU per run: median {np.median(cpu):.2f} s, total {np.sum(cpu):.0f} s")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=40, help="number of seeds (default 40)")
    ap.add_argument("--first", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--show", action="store_true", help="one line per seed")
    a = ap.parse_args(argv)
    seeds = list(range(a.first, a.first + a.seeds))
    if a.jobs > 1:
        with ProcessPoolExecutor(a.jobs) as ex:
            rows = list(ex.map(run_seed, seeds))
    else:
        rows = [run_seed(s) for s in seeds]
    if a.show:
        for r in rows:
            if r["outcome"] == "refused":
                print(f"seed {r['seed']:3d} refused: {r['why']}")
            else:
                print(f"seed {r['seed']:3d} {r['outcome']:12s} NEES {r['nees']:9.2f}  X off {r['rot_deg']:.3f} deg "
                      f"{r['trans_mm']:.2f} mm  offset {r['offset_ms']:8.3f} +- {r['offset_std_ms']:.4f} ms  scale "
                      f"{r['scale']:.4f} +- {r['scale_std']:.4f}  {r['why'][:90]}")  # fmt: skip
    print("\n".join(summary(rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
