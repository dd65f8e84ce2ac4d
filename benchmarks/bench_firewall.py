"""Cost of the convention firewall (``kinhec.calibrate.firewall.check``), which runs on every calibrate call.

Usage::

    python benchmarks/bench_firewall.py [--repeats 5]

For each input, times with the process CPU clock (median of ``--repeats``
calls, one core) the firewall alone and the whole ``calibrate`` call.  The
firewall's figure includes the coarse clock offset of stamped streams, which
it hands on to the calibration (so the calibration does not estimate it
again): its *net* cost is the firewall minus that estimate, printed apart.

Inputs: the 3,000-frame streams of ``bench_calibrate.py``; two generated
unstamped files of 30 stations; the real sets in the repository (Tabb DS1,
RWHE kuka_1); the ETH-ASL ``robot_arm_real`` streams when ``../shared`` is
there.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from kinhec.geometry import se3  # noqa: E402
from kinhec.calibrate import calibrate  # noqa: E402
from kinhec.calibrate import firewall as fw  # noqa: E402
from kinhec.calibrate import pairing as pr  # noqa: E402
from kinhec.calibrate.readers import read_stream  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from bench_calibrate import make  # noqa: E402


def stations(folder: Path, n: int = 30, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.2, -0.3, 1.4]), [0.03, -0.06, 0.09])
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.1, 2.8, 0.0]), [0.9, 0.1, -0.1])
    A = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.4, (n, 3))),
                                                rng.normal([0.5, 0, 0.4], 0.15, (n, 3)))
    C = se3.invert_transform(A @ X) @ Y @ se3.se3_exp(rng.normal(0, 1e-3, (n, 6)))
    for name, T in (("robot.txt", A), ("camera.txt", C)):
        (folder / name).write_text("".join(" ".join(repr(v) for v in M.ravel().tolist()) + "\n" for M in T))
    return folder / "robot.txt", folder / "camera.txt"


def tabb_kuka(folder: Path):
    data = REPO / "tests" / "data" / "realdata"
    ref = json.loads((data / "rwhe_calib" / "kuka_1" / "opencv_reference_calibration.json").read_text())
    cam = folder / "kuka_1_cam.txt"
    cam.write_text("".join(" ".join(repr(float(x)) for x in np.ravel(v["T_cam_target"])) + "\n" for v in ref["per_view"]))
    return {"Tabb DS1 (88 stations)": (data / "tabb_ds1" / "robot_cali.txt", data / "tabb_ds1" / "cali.txt", {}),
            "RWHE kuka_1 (30 stations)": (data / "rwhe_calib" / "kuka_1" / "RobotPosesVec.txt", cam, {})}


def cpu(fn, repeats):
    out = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return float(np.median(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cases = {}
        (tmp / "s").mkdir()
        make(tmp / "s", 3000, 0)
        # generated files say nothing about their setup and directions: stated (a default is not a statement)
        stated = {"setup": "eye_in_hand", "hand_pose": "base_T_ee"}
        cases["3,000-frame streams, 100 Hz (TUM)"] = (tmp / "s" / "hand.tum", tmp / "s" / "eye.tum", stated)
        (tmp / "u").mkdir()
        cases["30 stations (4x4 text)"] = (*stations(tmp / "u"), stated)
        cases.update(tabb_kuka(tmp))
        eth = next((p / "shared" / "realdata" / "ethz_asl" / "robot_arm_real" for p in REPO.parents
                    if (p / "shared" / "realdata" / "ethz_asl" / "robot_arm_real").is_dir()), None)
        if eth is not None:
            files = sorted(eth.glob("*.csv"))
            cases["ETH robot_arm_real (2817 + 1703 rows)"] = (next(f for f in files if "hinge" in f.name),
                                                              next(f for f in files if "target_ir" in f.name), {})
        print(f"{'input':40s} {'firewall':>9s} {'of which offset':>16s} {'net':>7s} {'calibrate':>10s} {'share':>6s}"
              "   [CPU s, median]")
        for name, (h, e, kw) in cases.items():
            H, E = read_stream(h), read_stream(e)
            dec = fw.check(H, E, **kw)
            t_fw = cpu(lambda: fw.check(H, E, **kw), args.repeats)
            t_off = 0.0
            if H.t is not None and E.t is not None:
                t_off = cpu(lambda: pr.coarse_offset(H, H.T, E, E.T, "auto", 0.5), args.repeats)
            t_cal = cpu(lambda: calibrate(h, e, **kw), max(1, args.repeats // 2))
            net = t_fw - t_off
            print(f"{name:40s} {t_fw:9.3f} {t_off:16.3f} {net:7.3f} {t_cal:10.3f} {net / t_cal:6.0%}"
                  f"   ({dec.report.get('n_readings', 0)} readings)")


if __name__ == "__main__":
    main()
