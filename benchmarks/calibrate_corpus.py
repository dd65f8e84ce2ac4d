"""A corpus of ``kinhec calibrate`` outputs, for checking that a change of layout or code keeps them bit for bit.

Record the corpus before a change and again after it, then compare the two::

    python benchmarks/calibrate_corpus.py record /tmp/before      # on the commit before the change
    python benchmarks/calibrate_corpus.py record /tmp/after       # on the change
    python benchmarks/calibrate_corpus.py compare /tmp/before /tmp/after

The corpus runs ``kinhec calibrate --json`` on the real recordings that travel with the repository
(``tests/data/realdata``: RWHE kuka_1 and kuka_2 as pose files, Tabb DS1, the three ETH runs) and on the
corner files of ``regression/observations``, with a spread of options (``--point``, ``--robot-accuracy``,
``--scale free|fixed``, a given offset, ``--setup eye_to_hand --force`` on inverted poses).  With
``--dataset DIR`` it also calibrates the first sequence of every track of a generated dataset, and with
``--images DIR`` the RWHE kuka_1 images (e.g. ``../shared/realdata/rwhe_calib/kuka_1/images``).  Each run
leaves its JSON and its printed output (with the exit status).  ``compare`` prints the differences after
taking out what is expected to change between two runs of the same code: timings, temporary paths and the
output folder.  It exits 1 when anything else differs.  About 45 s of CPU without images.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "data" / "realdata"
CORNERS = ROOT / "regression" / "observations"


def _eye_file(tmp: Path, name: str, invert: bool) -> Path:
    """RWHE's per-view camera poses (its derived OpenCV reference) as a row-major 4x4 per line."""
    ref = json.loads((REAL / "rwhe_calib" / name / "opencv_reference_calibration.json").read_text())
    T = np.array([v["T_cam_target"] for v in ref["per_view"]])
    if invert:
        T = np.linalg.inv(T)
    path = tmp / f"{name}_{'target_T_cam' if invert else 'cam_T_target'}.txt"
    path.write_text("".join(" ".join(repr(v) for v in M.ravel().tolist()) + "\n" for M in T))
    return path


def _eth(folder: str, key: str) -> Path:
    return next(f for f in sorted((REAL / "ethz_asl" / folder).glob("*.csv")) if key in f.name)


def cases(tmp: Path, images: Path | None) -> dict[str, list]:
    kuka = {n: REAL / "rwhe_calib" / n / "RobotPosesVec.txt" for n in ("kuka_1", "kuka_2")}
    out = {
        "kuka1": ["--hand", kuka["kuka_1"], "--eye", _eye_file(tmp, "kuka_1", False), "--format", "rwhe"],
        "kuka2_point": ["--hand", kuka["kuka_2"], "--eye", _eye_file(tmp, "kuka_2", False), "--format", "rwhe",
                        "--point", "0,0,0.5", "--robot-accuracy", "0.05,0.3"],
        "kuka1_e2h_inverted": ["--hand", kuka["kuka_1"], "--eye", _eye_file(tmp, "kuka_1", True), "--format", "rwhe",
                               "--setup", "eye_to_hand", "--force"],
        "tabb": ["--hand", REAL / "tabb_ds1" / "robot_cali.txt", "--eye", REAL / "tabb_ds1" / "cali.txt",
                 "--format", "tabb"],
        "eth_arm": ["--hand", _eth("robot_arm_real", "hinge"), "--eye", _eth("robot_arm_real", "target_ir"),
                    "--format", "eth", "--eye-pose", "target_T_cam"],
        "eth_ps1": ["--hand", _eth("prime_sense_1", "vicon"), "--eye", _eth("prime_sense_1", "camera"),
                    "--format", "eth", "--eye-pose", "target_T_cam"],
        "eth_ps2_scale_free": ["--hand", _eth("prime_sense_2", "vicon"), "--eye", _eth("prime_sense_2", "camera"),
                               "--format", "eth", "--eye-pose", "target_T_cam", "--scale", "free"],
        "eth_ps1_fixed_offset": ["--hand", _eth("prime_sense_1", "vicon"), "--eye", _eth("prime_sense_1", "camera"),
                                 "--format", "eth", "--eye-pose", "target_T_cam", "--scale", "fixed",
                                 "--offset", "0.016"],
    }  # fmt: skip
    for f in sorted(CORNERS.glob("*.json")):
        if "synth" in f.stem or f.stem.startswith("kuka"):
            out[f"corners_{f.stem}"] = ["--corners", f]
    out["corners_synth_eye_to_hand_no_intrinsics_error"] = ["--corners", CORNERS / "synth_eye_to_hand.json",
                                                            "--intrinsics-std", "0,0"]
    if images is not None:
        out["images_kuka1"] = ["--images", images, "--hand", kuka["kuka_1"], "--target", "chessboard:28x17:0.02",
                               "--format", "rwhe", "--workers", "1"]
    return out


def _run(out: Path, name: str, args: list, tmp: Path) -> None:
    json_out = out / f"{name}.json"
    cmd = [sys.executable, "-m", "kinhec", "calibrate", *map(str, args), "--json", str(json_out)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    (out / f"{name}.stdout").write_text(f"exit {p.returncode}\n" + (p.stdout + p.stderr).replace(str(tmp), "TMP"))


def record(out: Path, dataset: Path | None, images: Path | None) -> int:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for name, args in cases(tmp, images).items():
            _run(out, name, args, tmp)
            print(f"{name}: done", flush=True)
        if dataset is not None:
            import pandas as pd

            index = pd.read_parquet(dataset / "sequences.parquet")
            for track in sorted(index.track.unique()):
                sid = index[index.track == track].sequence_id.iloc[0]
                _run(out, f"dataset_{track}", ["--dataset", dataset, "--sequence", sid], tmp)
                print(f"dataset_{track}: done", flush=True)
    return 0


def normalised(text: str, folder: Path) -> str:
    """The text without what differs between two runs of the same code: timings, temporary and output paths."""
    text = text.replace(str(folder), "OUT")
    text = re.sub(r"/tmp/tmp[^/\s\"]+/", "TMP/", text)
    text = re.sub(r"written: \S+", "written: X", text)
    text = re.sub(r'"([a-z_]*(cpu|wall|cost)[a-z_]*_s)": [0-9.eE+-]+', r'"\1": 0', text)
    return re.sub(r"[0-9.]+ s (of CPU|wall|CPU)", r"T s \1", text)


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    differ = 0
    for name in names:
        fa, fb = a / name, b / name
        if not (fa.exists() and fb.exists()):
            print(f"only in {a if fa.exists() else b}: {name}")
            differ += 1
            continue
        ta, tb = normalised(fa.read_text(), a), normalised(fb.read_text(), b)
        if ta != tb:
            differ += 1
            diff = difflib.unified_diff(ta.splitlines(), tb.splitlines(), lineterm="", n=0)
            print(f"DIFFERS {name}", *list(diff)[2:14], sep="\n  ")
    print(f"{len(names)} files, {differ} differ")
    return 1 if differ else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="run the corpus into a folder")
    rec.add_argument("out", type=Path)
    rec.add_argument("--dataset", type=Path, default=None, help="a generated dataset: one sequence per track")
    rec.add_argument("--images", type=Path, default=None, help="the RWHE kuka_1 images folder")
    cmp_ = sub.add_parser("compare", help="compare two recorded folders")
    cmp_.add_argument("before", type=Path)
    cmp_.add_argument("after", type=Path)
    args = ap.parse_args(argv)
    if args.command == "record":
        return record(args.out, args.dataset, args.images)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
