"""Do calibrate's error bars hold on machines that turn about one axis, with the open component stated?

Usage::

    python benchmarks/one_axis_coverage.py [--draws 200] [--stations 12]

Generated recordings (``one_axis_recording`` of ``tests/helpers/recordings.py``: camera poses 1 mrad / 0.5 mm,
robot 0.2 mrad / 0.2 mm, the board's scale drawn from calibrate's prior for it), seeded 5000 onwards, in four
cells: SCARA eye-in-hand and eye-to-hand, palletiser eye-to-hand and gantry eye-in-hand with ``X.tz`` stated at its
truth (``--known``), and SCARA eye-in-hand with ``--partial``.  No intrinsics error is counted (the recordings hold
none).  Prints, per cell, the share of the measured components whose truth lies within 1.96 sigma (pooled and per
component, ``X.rx .. Y.tz``; the held or conventional components left out) and the CPU per calibration.
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
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.recordings import one_axis_recording, write_matrices  # noqa: E402
from kinhec.calibrate import calibrate  # noqa: E402
from kinhec.geometry import se3  # noqa: E402

CELLS = (("scara", "eye_in_hand", "known"), ("scara", "eye_to_hand", "known"), ("palletiser", "eye_to_hand", "known"),
         ("gantry", "eye_in_hand", "known"), ("scara", "eye_in_hand", "partial"))  # fmt: skip
Z95 = 1.959963984540054


def cell(machine: str, setup: str, mode: str, draws: int, stations: int, folder: Path) -> dict:
    z, cpu = [], 0.0
    for seed in range(draws):
        A, C, X, Y = one_axis_recording(np.random.default_rng(5000 + seed), machine, setup, stations)
        hand, eye = write_matrices(folder / "hand.txt", A), write_matrices(folder / "eye.txt", C)
        kw = {"known": {"X.tz": X[2, 3]}} if mode == "known" else {"partial": True}
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = calibrate(hand, eye, fmt="rwhe", setup=setup, intrinsics_std="0,0", **kw)
        cpu += time.process_time() - t0
        err = np.r_[se3.so3_log(res.X[:3, :3].T @ X[:3, :3]), X[:3, 3] - res.X[:3, 3],
                    se3.so3_log(res.Y[:3, :3].T @ Y[:3, :3]), Y[:3, 3] - res.Y[:3, 3]]
        s = np.r_[res.X_std, res.Y_std]
        ok = np.isfinite(s) & (s > 0)
        z.append(np.where(ok, err / np.where(ok, s, 1.0), np.nan))
    z = np.array(z)
    m = np.isfinite(z)
    per = [float(np.mean(np.abs(z[m[:, j], j]) < Z95)) if m[:, j].any() else None for j in range(12)]
    return {"pooled": float(np.mean(np.abs(z[m]) < Z95)), "per_component": per, "cpu_s": cpu / draws}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--stations", type=int, default=12)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kinhec_one_axis_") as tmp:
        for machine, setup, mode in CELLS:
            r = cell(machine, setup, mode, args.draws, args.stations, Path(tmp))
            per = " ".join("-" if v is None else f"{100 * v:.1f}" for v in r["per_component"])
            print(f"{machine:10s} {setup:11s} {mode:7s}: 95 % intervals cover {100 * r['pooled']:.1f} % "
                  f"(per component {per}); {r['cpu_s']:.3f} CPU-s per calibration")


if __name__ == "__main__":
    main()
