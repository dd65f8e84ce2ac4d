"""Export: one sequence to CSV and TUM files, and the dataset to other readers.

Usage::

    python examples/12_export.py [DATA] [SEQUENCE_ID] [--out DIR] [--hf]

Writes the sequence with ``kinhec.dataset.export.export_sequence`` as CSV tables and
as TUM trajectories (``timestamp tx ty tz qx qy qz qw``, quaternion scalar
last, as read by evo and most SLAM tools) into DIR (a temporary folder unless
``--out`` is given), reads the TUM file back and checks it against the
loader, reads the same sequence with plain PyArrow, and with ``--hf`` loads a
stream through the Hugging Face ``datasets`` library.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from kinhec import KinhecError, load_manifest, load_sequence
from kinhec.geometry import se3
from kinhec.dataset.export import export_sequence


def run(data: str, sid: str | None, out: Path, hf: bool) -> None:
    man = load_manifest(data)
    sid = sid or man.sequence_id.iloc[0]
    seq = load_sequence(data, sid, man)
    files = list(dict.fromkeys(export_sequence(data, sid, "csv", out) + export_sequence(data, sid, "tum", out)))
    for f in files:
        print(f"  {f.name:<36}{f.stat().st_size:>10,} bytes")

    # TUM back to poses: convert the quaternion from (x, y, z, w) to kinhec's (w, x, y, z).
    tum = np.loadtxt(out / f"{sid}_base_ee_meas.tum", comments="#")
    T = se3.transform_from_pq(tum[:, 1:4], tum[:, [7, 4, 5, 6]], normalize=True)
    rot, trans = se3.pose_error(T, seq.robot.T_base_ee_meas)
    dt = np.abs(tum[:, 0] - seq.robot.t).max()
    print(f"TUM round trip of {len(tum)} robot poses: max {rot.max():.1e} deg, {trans.max():.1e} mm, {dt:.1e} s")

    csv = pd.read_csv(out / f"{sid}_camera.csv")
    print(f"camera CSV: {len(csv)} rows x {csv.shape[1]} columns; measured frames {int(csv.cam_target_meas_px.notna().sum())}")

    # Plain PyArrow: the index row says which row group of which shard holds the sequence.
    row = man.set_index("sequence_id").loc[sid]
    robot = pq.ParquetFile(Path(data) / row.robot_file).read_row_group(int(row.robot_row_group)).to_pandas()
    same = np.array_equal(robot["t"].to_numpy(), seq.robot.t)
    print(f"pyarrow read of {row.robot_file} row group {int(row.robot_row_group)}: {len(robot)} rows, "
          f"time stamps identical to the loader: {same}")

    if hf:
        try:
            from datasets import load_dataset
        except ImportError:
            print("--hf: the datasets library is not installed (pip install datasets); skipped")
            return
        track = seq.track
        ds = load_dataset("parquet", data_files={"train": str(Path(data) / "camera" / f"{track}-*.parquet")},
                          split="train")  # fmt: skip
        print(f"datasets: camera stream of track {track}: {ds.num_rows} rows, columns {ds.column_names[:5]} ...")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default="data", help="dataset folder (default: data)")
    ap.add_argument("sequence_id", nargs="?", help="sequence to export (default: the first of the index)")
    ap.add_argument("--out", help="output folder (default: a temporary folder)")
    ap.add_argument("--hf", action="store_true", help="also load a stream with the Hugging Face datasets library")
    args = ap.parse_args()
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        print(f"exporting to {out}")
        run(args.data, args.sequence_id, out, args.hf)
    else:
        with tempfile.TemporaryDirectory(prefix="kinhec_export_") as tmp:
            print(f"exporting to {tmp} (temporary)")
            run(args.data, args.sequence_id, Path(tmp), args.hf)


if __name__ == "__main__":
    try:
        main()
    except KinhecError as exc:  # bad folder, unknown sequence id, ...: one line, exit status 1
        sys.exit(f"error: {exc}")
