"""Held-out accuracy of kinhec calibrate on every real recording in ``tests/data/realdata`` beside what sigma
predicts for it (its 95 % interval and 99 % bound) and the work point's 95 % error; then the held-out pixels of
the real corner recordings of ``regression/observations`` (``--corners``: every view left out in turn).

Usage::

    python benchmarks/held_out_real.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from kinhec.calibrate import calibrate
from kinhec.calibrate.held_out import summary_line

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "realdata"
CORNERS = Path(__file__).resolve().parents[1] / "regression" / "observations"


def runs(tmp: Path):
    yield "tabb_ds1", dict(hand=DATA / "tabb_ds1" / "robot_cali.txt", eye=DATA / "tabb_ds1" / "cali.txt", fmt="tabb")
    for name in ("kuka_1", "kuka_2"):
        ref = json.loads((DATA / "rwhe_calib" / name / "opencv_reference_calibration.json").read_text())
        eye = tmp / f"{name}_cam_T_target.txt"
        eye.write_text("".join(" ".join(repr(v) for v in np.ravel(M).tolist()) + "\n"
                               for M in (v["T_cam_target"] for v in ref["per_view"])))
        yield name, dict(hand=DATA / "rwhe_calib" / name / "RobotPosesVec.txt", eye=eye, fmt="rwhe")
    eth = DATA / "ethz_asl"
    for folder, h, e in (("robot_arm_real", "hinge", "target_ir"), ("prime_sense_1", "vicon", "camera"),
                         ("prime_sense_2", "vicon", "camera")):
        files = sorted((eth / folder).glob("*.csv"))
        yield folder, dict(hand=next(f for f in files if h in f.name), eye=next(f for f in files if e in f.name),
                           fmt="eth", eye_pose="target_T_cam")
    for name in ("kuka_1", "kuka_2"):
        yield f"{name} --corners", dict(corners=CORNERS / f"{name}.json")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for name, kw in runs(Path(tmp)):
            t0 = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = calibrate(**kw)
            h = res.held_out
            pe = res.point_error()
            print(f"{name}: {res.n_pairs} pairs, {len(res.outliers)} outliers ({time.process_time() - t0:.1f} CPU-s)")
            print("  " + (summary_line(h) or "no held-out assessment"))
            if h and "upper99_px" in h:
                print(f"  99 % bound {h['upper99_px']:.3g} px: {'consistent' if h['consistent'] else 'ABOVE (warning)'}")
            elif h:
                print(f"  99 % bound {h['upper99_mm']:.3g} mm / {h['upper99_deg']:.3g} deg: "
                      f"{'consistent' if h['consistent'] else 'ABOVE (warning)'}")
            if pe:
                print(f"  work point {np.round(pe['point_cam_m'], 3).tolist()} m: 95 % within {pe['point_error_95_mm']:.3g} mm")
    return 0


if __name__ == "__main__":
    sys.exit(main())
