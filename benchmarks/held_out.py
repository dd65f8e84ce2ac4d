"""Do kinhec calibrate's held-out accuracy and work-point error hold?  Coverage over generated recordings.

Usage::

    python benchmarks/held_out.py [--per-cell 30] [--seed 0] [--intrinsics-std 0,0] [--out FILE.json]

Recordings come from the generator's public API (:func:`kinhec.synth.generator.simulate` on the ``stations`` recipe of
``tests/helpers/recordings.py``, a 25-station ``lookat`` tour with anisotropic camera noise), seeded by their index, in four
cells: eye-in-hand and eye-to-hand, each

* ``stations``: one frame per station (12, 25 or 40 stations by turns), written as row-ordered 4x4 files without
  stamps (one pair per station);
* ``stamped``: a continuous 10 Hz recording of a 12-waypoint tour with 1 s dwells, written as TUM files with
  stamps (consecutive pairs grouped into stations while the hand stands still or moves less than a keyframe).

Each is calibrated as a user would (:func:`kinhec.calibrate.calibrate`).  The camera poses of the generator have
no intrinsics error, so the pose path's assumed intrinsics uncertainty is set with ``--intrinsics-std`` (default
``0,0``: none counted, as generated; ``0.003,0.001`` is calibrate's default, which then over-covers the work point).

Per cell: the recordings (determined / all), the held-out ``coverage95`` (the share of held-out eye poses inside
their predicted 95 % regions, pooled over the cell's held-out pairs, and the mean of each recording's share), the
mean ratio of held-out RMS to its prediction (translation, rotation), the share of recordings whose held-out
warning fires (its false alarms: every recording here matches its model), and the share whose true work-point
error (the default point, the target's mean position in the camera, through the true and the estimated ``X``
eye-in-hand or ``Y`` eye-to-hand) lies inside ``point_error_95_mm``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import calibrate
from kinhec.util.errors import KinhecError
from kinhec.synth.generator import simulate

STATIONS = dict(sequence_id="noise-000000", track="noise", seed=11, robot="ur5e", configuration="eye_in_hand",
                family="lookat", sampling_mode="stations", n_stations=25, camera="hd",
                robot_noise_models=("se3_gaussian",), robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4,
                camera_noise_model="se3_gaussian", camera_rot_std_rad=1e-3, camera_trans_std_m=3e-4,
                camera_trans_std_z_m=1e-3)  # fmt: skip  (tests/helpers/recordings.py STATIONS)
STAMPED = dict(STATIONS, sampling_mode="continuous", n_stations=12, camera_rate_hz=10.0, dwell_range_s=(1.0, 1.0))
N_STATIONS = (12, 25, 40)


def _tum(path: Path, t, T) -> None:
    q = np.array([se3.quaternion_from_matrix(R, check=False) for R in T[:, :3, :3]])  # w, x, y, z
    np.savetxt(path, np.column_stack([t, T[:, :3, 3], q[:, 1:], q[:, :1]]), fmt="%.12g")


def one(setup: str, kind: str, seed: int, folder: Path, intrinsics_std: str) -> dict:
    """Generate and calibrate one recording; its held-out figures and work-point coverage."""
    if kind == "stations":
        rec = dict(STATIONS, configuration=setup, seed=seed, n_stations=N_STATIONS[seed % len(N_STATIONS)])
    else:
        rec = dict(STAMPED, configuration=setup, seed=seed)
    g = simulate(rec)
    ok = np.isfinite(g.T_cam_target_meas[:, 0, 0])
    if kind == "stations":
        hand, eye = folder / "hand.txt", folder / "eye.txt"
        np.savetxt(hand, g.T_base_ee_meas[ok].reshape(-1, 16), fmt="%.12g")
        np.savetxt(eye, g.T_cam_target_meas[ok].reshape(-1, 16), fmt="%.12g")
        kw = dict(fmt="rwhe")
    else:
        hand, eye = folder / "hand.tum", folder / "eye.tum"
        _tum(hand, g.t_robot_s, g.T_base_ee_meas)
        _tum(eye, g.t_camera_s[ok], g.T_cam_target_meas[ok])
        kw = dict(offset="none")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = calibrate(hand, eye, setup=setup, eye_pose="cam_T_target", intrinsics_std=intrinsics_std, **kw)
        except KinhecError as exc:
            return {"setup": setup, "kind": kind, "seed": seed, "determined": False, "error": str(exc)}
    out = {"setup": setup, "kind": kind, "seed": seed, "determined": res.determined, "n_pairs": res.n_pairs}
    h = res.held_out
    pe = res.point_error()
    if h is None or pe is None or not res.determined:
        return out
    p = np.asarray(pe["point_cam_m"])
    T_est, T_true = (res.Y, g.Y) if setup == "eye_to_hand" else (res.X, g.X)
    err_mm = 1000 * float(np.linalg.norm((T_est[:3, :3] @ p + T_est[:3, 3]) - (T_true[:3, :3] @ p + T_true[:3, 3])))
    covered = int(round(h["coverage95"] * h["n_pairs"]))
    out.update(held_out=h, n_held=h["n_pairs"], n_covered=covered, point_error_95_mm=pe["point_error_95_mm"],
               point_error_true_mm=err_mm, point_covered=err_mm <= pe["point_error_95_mm"])
    return out


def table(rows: list[dict]) -> str:
    lines = ["| cell | recordings (determined / all) | coverage95 pooled | coverage95 mean | held-out RMS / predicted "
             "(mm, deg) | warnings | work point covered |",
             "|---|---|---|---|---|---|---|"]
    cells = sorted({(r["setup"], r["kind"]) for r in rows})
    for cell in cells + [("all", "all")]:
        rs = [r for r in rows if cell == ("all", "all") or (r["setup"], r["kind"]) == cell]
        dd = [r for r in rs if "held_out" in r]
        if not dd:
            continue
        held = sum(r["n_held"] for r in dd)
        cov = sum(r["n_covered"] for r in dd)
        ratio_mm = np.mean([r["held_out"]["rms_mm"] / r["held_out"]["predicted_rms_mm"] for r in dd])
        ratio_deg = np.mean([r["held_out"]["rms_deg"] / r["held_out"]["predicted_rms_deg"] for r in dd])
        warn = sum(not r["held_out"]["consistent"] for r in dd)
        pc = sum(bool(r["point_covered"]) for r in dd)
        lines.append(f"| {cell[0]} {cell[1]} | {len(dd)} / {len(rs)} | {cov} / {held} = {100 * cov / held:.1f} % | "
                     f"{100 * np.mean([r['held_out']['coverage95'] for r in dd]):.1f} % | {ratio_mm:.3f}, {ratio_deg:.3f} | "
                     f"{warn} / {len(dd)} | {pc} / {len(dd)} = {100 * pc / len(dd):.1f} % |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-cell", type=int, default=30, help="recordings per (setup, kind) cell")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--intrinsics-std", default="0,0")
    ap.add_argument("--kinds", default="stations,stamped")
    ap.add_argument("--out", default=None, help="write every recording's figures as JSON")
    a = ap.parse_args(argv)
    rows = []
    t0 = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        for kind in a.kinds.split(","):
            for setup in ("eye_in_hand", "eye_to_hand"):
                for k in range(a.per_cell):
                    rows.append(one(setup, kind, a.seed + 1000 * (kind == "stamped") + k, Path(tmp), a.intrinsics_std))
    print(table(rows))
    print(f"\n{len(rows)} recordings, {time.process_time() - t0:.0f} CPU-s, intrinsics_std {a.intrinsics_std}")
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1, default=float), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
