"""Do calibrate's error bars hold on corner files of a SCARA, with the open component stated?

Usage::

    python benchmarks/one_axis_corners_coverage.py [--draws 20] [--views 12]

Generated views of a 7 x 5 board (``one_axis_corners`` of ``tests/helpers/recordings.py``: a SCARA turning about
the vertical, pixels 0.3 px, the reported flange poses off by 0.2 mrad / 0.2 mm), seeded 7000 onwards, eye-in-hand
and eye-to-hand, calibrated from the corners (``calibrate_corners``, the intrinsics given) with ``X.tz`` stated at
its truth.  Prints per set-up: the share of the 11 measured components whose truth lies within 1.96 sigma (pooled),
the mean NEES of the 11 (its expectation 11), the largest error over sigma, the share of recordings the run without
``--known`` names exactly ``X.tz, Y.tz`` in, and the CPU per calibration.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.recordings import CORNERS_CAMERA, one_axis_corners  # noqa: E402
from kinhec.calibrate.corners import calibrate_corners  # noqa: E402
from kinhec.geometry import se3  # noqa: E402

Z95 = 1.959963984540054


def errors(res, X, Y) -> np.ndarray:
    rx = se3.so3_log(X[:3, :3].T @ res.X[:3, :3])
    ry = se3.so3_log(Y[:3, :3].T @ res.Y[:3, :3])
    return np.r_[rx, res.X[:3, 3] - X[:3, 3], ry, res.Y[:3, 3] - Y[:3, 3]]


def cell(setup: str, draws: int, views: int) -> dict:
    keep = np.arange(12) != 5
    z, named, cpu = [], 0, 0.0
    for seed in range(draws):
        obs, X, Y = one_axis_corners(np.random.default_rng(7000 + seed), setup, views)
        t0 = time.process_time()
        res = calibrate_corners(obs, intrinsics=CORNERS_CAMERA[:4], known={"X.tz": X[2, 3]})
        cpu += time.process_time() - t0
        s = np.r_[res.X_std, res.Y_std]
        z.append(errors(res, X, Y)[keep] / s[keep])
        named += calibrate_corners(obs, intrinsics=CORNERS_CAMERA[:4]).undetermined == ["X.tz", "Y.tz"]
    z = np.array(z)
    return {"cover": float(np.mean(np.abs(z) < Z95)), "nees": float(np.mean(np.sum(z**2, axis=1))),
            "zmax": float(np.abs(z).max()), "named": named / draws, "cpu": cpu / draws}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=20)
    ap.add_argument("--views", type=int, default=12)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    for setup in ("eye_in_hand", "eye_to_hand"):
        c = cell(setup, a.draws, a.views)
        print(f"{setup}: {a.draws} recordings of {a.views} views, X.tz stated: 95 % intervals cover "
              f"{100 * c['cover']:.1f} % of the 11 measured components, NEES mean {c['nees']:.1f} (11 expected), "
              f"largest |error| / sigma {c['zmax']:.2f}; X.tz, Y.tz named without --known in "
              f"{100 * c['named']:.0f} %; {c['cpu']:.2f} CPU-s per calibration")


if __name__ == "__main__":
    main()
