"""Spatio-temporal calibration: estimate the clock offset between robot and camera, then calibrate.

Usage::

    python examples/06_clock_offset.py [DATA]

For every asynchronous sequence (the ``temporal`` track and the asynchronous
part of ``mixed``) the offset is estimated by cross-correlating the angular
speeds of the two streams (``solvers.estimate_time_offset``) and compared with
the ground truth ``time_offset_s``.  ``X`` is then estimated (Shah, ``A X = Y
B``) three times: pairing the streams as if the clocks agreed, with the
estimated offset, and with the true offset (oracle).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from kinhec import KinhecError, iter_sequences, load_manifest, solvers
from kinhec.geometry import se3
from kinhec.io import is_asynchronous


def x_error_mm(seq, offset_s: float) -> float:
    A_abs, B_abs = seq.axyb_keyframe_poses(time_offset=offset_s)  # robot interpolated at t_camera - offset
    return se3.pose_error(solvers.shah(A_abs, B_abs)[0], seq.X)[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder (default: data)")
    args = ap.parse_args()

    man = load_manifest(args.data)
    sel = man[man.sync.map(is_asynchronous)]
    if sel.empty:
        raise SystemExit(f"{args.data}: no asynchronous sequence")
    print(f"{'sequence':<17}{'true [ms]':>10}{'est. [ms]':>10}{'err [ms]':>9}{'peak':>6}"
          f"{'X err [mm]: offset 0':>22}{'estimated':>11}{'oracle':>9}")  # fmt: skip
    errors_ms = []
    for seq in iter_sequences(args.data, man, sel.sequence_id.tolist()):
        m = seq.camera.has_measurement
        est = solvers.estimate_time_offset(
            seq.robot.t, seq.robot.T_base_ee_meas, seq.camera.t[m], seq.camera.T_cam_target_meas[m]
        )
        err_ms = 1000 * (est.offset_s - seq.time_offset)
        if est.peak_corr >= 0.5:  # a weak peak means the motion carries no pattern to align
            errors_ms.append(abs(err_ms))
        print(f"{seq.sequence_id:<17}{1000 * seq.time_offset:>10.2f}{1000 * est.offset_s:>10.2f}{err_ms:>9.2f}"
              f"{est.peak_corr:>6.2f}{x_error_mm(seq, 0.0):>22.2f}{x_error_mm(seq, est.offset_s):>11.2f}"
              f"{x_error_mm(seq, seq.time_offset):>9.2f}")  # fmt: skip
    if errors_ms:
        print(f"median |offset error| {np.median(errors_ms):.2f} ms over {len(errors_ms)} sequences with peak >= 0.5")


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
