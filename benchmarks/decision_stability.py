"""Do kinhec's discrete decisions survive a change in the last bits of their input?

Two CPUs (or two OpenBLAS kernels, or numpy with and without AVX-512) give results that differ in the last
bits; a decision whose margin is that thin flips from one machine to another.  This script moves every pose
of an input by about 1e-13 of itself (a rotation of 1e-13 rad and a relative change of 1e-13 of each
translation, far below any measurement, about a thousand times the rounding of one product), re-runs, and
compares the decisions:

* ``he_ml`` on every sequence of a dataset folder (its keyframe pose pairs): the configuration, the pairs
  gated out, the repaired pairs, the Student-t degrees of freedom, whether a scale, a drifting scale or the
  motion fit was kept, whether a collapsed robust fit was refused;
* ``calibrate`` on the real recordings in ``tests/data/realdata``: the setup and reading of the files, the
  pairs and outliers, whether X is determined, the initial solver, the notes and warnings (their numbers
  left out), and the clock offset against its standard deviation.

A decision that changes is printed with the input and the draw.  The figures go in docs/performance.md's
notes on determinism; the suite holds a smaller version (tests/test_decision_stability.py).

    python benchmarks/decision_stability.py [--data DIR] [--draws 4]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from kinhec import load_manifest, load_sequence
from kinhec.geometry import se3
from kinhec.calibrate import inputs as calibration_inputs
from kinhec.calibrate import calibrate
from kinhec.util.errors import KinhecError
from kinhec.synth.runner import generate_dataset
from kinhec.solvers.he_ml import he_ml

REAL = Path(__file__).resolve().parents[1] / "tests" / "data" / "realdata"
RELATIVE = 1e-13


def nudge(T: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Poses ``T`` (n, 4, 4) rotated by about 1e-13 rad and their translations changed by about 1e-13 of
    themselves."""
    out = np.array(T, dtype=float, copy=True)
    n = out.shape[0]
    out[:, :3, :3] = out[:, :3, :3] @ se3.so3_exp(RELATIVE * rng.standard_normal((n, 3)))
    out[:, :3, 3] *= 1.0 + RELATIVE * rng.standard_normal((n, 3))
    return out


def he_ml_decisions(r) -> dict:
    return dict(configuration=r.configuration, gated=tuple(np.flatnonzero(~r.inliers).tolist()),
                repaired=tuple(np.flatnonzero(r.repaired).tolist()), dof=r.dof, scale=r.scale is not None,
                scale_drift="scale_drift_std" in r.info, motion_fit="drift" in r.info,
                collapse_refused="robust_collapse" in r.info)  # fmt: skip


_NUMBER = re.compile(r"[-+]?\d[\d.,]*(e[-+]?\d+)?")


def calibrate_decisions(r) -> dict:
    def words(lines):
        return tuple(_NUMBER.sub("#", s) for s in lines)

    conv = r.inputs.get("conventions") or {}
    stated = {k: v for k, v in r.inputs.items() if k != "conventions"}
    return dict(setup=r.setup, reading=repr(conv.get("reading")), inputs=repr(sorted(stated.items())), n_pairs=r.n_pairs,
                outliers=repr(r.outliers), determined=r.determined, init_solver=r.init_solver,
                notes=words(r.notes), warnings=words(r.warnings))  # fmt: skip


def changed(a: dict, b: dict) -> dict:
    return {k: (a[k], b[k]) for k in a if a[k] != b[k]}


def sweep_he_ml(root: Path, draws: int) -> tuple[int, int]:
    man = load_manifest(root)
    runs = flips = skipped = 0
    for sid in man.sequence_id:
        A, B = load_sequence(root, sid, man).axyb_keyframe_poses()
        try:
            ref = he_ml_decisions(he_ml(A, B))
        except KinhecError:  # too few keyframes, a degenerate motion: nothing decided
            skipped += 1
            continue
        for k in range(draws):
            rng = np.random.default_rng([7, k])
            diff = changed(ref, he_ml_decisions(he_ml(nudge(A, rng), nudge(B, rng))))
            runs += 1
            if diff:
                flips += 1
                print(f"  he_ml {sid} draw {k}: {diff}")
    if skipped:
        print(f"  he_ml: {skipped} sequences refused as they are (too few keyframes or a degenerate motion)")
    return runs, flips


def real_cases(tmp: Path) -> list[tuple[str, tuple, dict]]:
    import json

    cases = [("tabb_ds1", (REAL / "tabb_ds1" / "robot_cali.txt", REAL / "tabb_ds1" / "cali.txt"), dict(fmt="tabb"))]
    for name in ("kuka_1", "kuka_2"):
        ref = json.loads((REAL / "rwhe_calib" / name / "opencv_reference_calibration.json").read_text())
        eye = tmp / f"{name}_cam_T_target.txt"
        eye.write_text("".join(" ".join(repr(v) for v in np.ravel(v["T_cam_target"]).tolist()) + "\n"
                               for v in ref["per_view"]))  # fmt: skip
        cases.append((name, (REAL / "rwhe_calib" / name / "RobotPosesVec.txt", eye), dict(fmt="rwhe")))
    eth = REAL / "ethz_asl"
    for run, hand_key, eye_key in (("robot_arm_real", "hinge", "target_ir"), ("prime_sense_1", "vicon", "camera"),
                                   ("prime_sense_2", "vicon", "camera")):  # fmt: skip
        files = sorted((eth / run).glob("*.csv"))
        hand = next(f for f in files if hand_key in f.name)
        eye = next(f for f in files if eye_key in f.name)
        cases.append((run, (hand, eye), dict(fmt="eth", eye_pose="target_T_cam")))
    return cases


def sweep_calibrate(draws: int) -> tuple[int, int]:
    read_stream, read_streams = calibration_inputs.read_stream, calibration_inputs.read_streams
    runs = flips = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, files, kw in real_cases(Path(tmp)):
            ref = calibrate(*files, **kw)
            ref_d = calibrate_decisions(ref)
            for k in range(draws):
                rng = np.random.default_rng([11, k])

                def nudged(stream):
                    stream.T = nudge(stream.T, rng)
                    return stream

                calibration_inputs.read_stream = lambda *a, **kw_: nudged(read_stream(*a, **kw_))
                calibration_inputs.read_streams = lambda *a, **kw_: [nudged(s) for s in read_streams(*a, **kw_)]
                try:
                    res = calibrate(*files, **kw)
                finally:
                    calibration_inputs.read_stream, calibration_inputs.read_streams = read_stream, read_streams
                diff = changed(ref_d, calibrate_decisions(res))
                if ref.time_offset_s is not None and ref.time_offset_std_s:
                    moved = abs(res.time_offset_s - ref.time_offset_s) / ref.time_offset_std_s
                    if moved > 1e-3:
                        diff["time_offset_sigma"] = moved
                runs += 1
                if diff:
                    flips += 1
                    print(f"  calibrate {name} draw {k}: {diff}")
    return runs, flips


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="a dataset folder (default: the smoke tier, generated in a temporary folder)")
    ap.add_argument("--draws", type=int, default=4, help="nudged copies of every input")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    t0 = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data
        if root is None:
            root = Path(tmp) / "smoke"
            generate_dataset("smoke", root, progress=False)
        runs, flips = sweep_he_ml(root, args.draws)
    print(f"he_ml: {flips} of {runs} nudged runs changed a decision ({time.process_time() - t0:.1f} CPU-s)")
    t0 = time.process_time()
    runs, flips_c = sweep_calibrate(args.draws)
    print(f"calibrate: {flips_c} of {runs} nudged runs changed a decision ({time.process_time() - t0:.1f} CPU-s)")
    return 1 if flips or flips_c else 0


if __name__ == "__main__":
    sys.exit(main())
