"""Time the loaders on a sequence of 10,000 robot frames and 300 camera frames.

Builds a throw-away dataset folder (asynchronous sequences: a 500 Hz robot
stream over 20 s, a 15 Hz camera), then prints the median wall time of

* ``load_manifest``,
* ``read_tables`` (the two row groups as Arrow tables) and ``load_sequence``
  (tables -> numpy arrays and 4x4 poses),
* pairing (``axyb_poses``: SLERP interpolation at the camera stamps) and
  ``axxb_motions`` (pairing + keyframes + relative motions),
* ``iter_sequences`` over a shard of 20 such sequences (per sequence),
* ``write_shard`` of those 20 sequences.

Then compares the stream encoding of :mod:`kinhec.io.encoding` with the
previous one (zstd level 3, dictionaries and statistics on every column, no
byte-stream split): bytes per frame and the time to load one sequence, on this
synthetic shard and, with ``--data FOLDER``, on the sequences of a generated
folder (rewritten both ways into a temporary folder).

Run: ``python benchmarks/bench_io.py [--data FOLDER]``.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from kinhec import io as kio
from kinhec.geometry import se3
from kinhec.util import jsonutil
from kinhec.io.schema import INDEX_SCHEMA, SequenceTables, sequence_id

N_ROBOT = 10_000
N_CAMERA = 300
ROBOT_RATE_HZ = 500.0
CAMERA_RATE_HZ = 15.0
OFFSET_S = 0.04
N_SHARD = 20


def make_sequence(rng: np.random.Generator, index: int) -> SequenceTables:
    sid = sequence_id("temporal", index)
    t = np.arange(N_ROBOT) / ROBOT_RATE_HZ
    w = 2 * np.pi * 0.2
    rotvec = np.column_stack([0.5 * np.sin(w * t), 0.4 * np.sin(1.3 * w * t), 0.3 * np.cos(0.7 * w * t)])
    p = np.column_stack([0.5 + 0.2 * np.sin(w * t), 0.2 * np.cos(w * t), 0.4 + 0.1 * np.sin(2 * w * t)])
    A = se3.transform_from_rotation_translation(se3.so3_exp(rotvec), p)
    A_meas = se3.perturb_right(A, rng.normal(0, 1e-4, (N_ROBOT, 6)))
    q = np.column_stack([np.sin(w * t + j) for j in range(6)])
    X, Y = se3.random_poses(rng, 2, 0.2)
    t_gt = 0.01 + np.arange(N_CAMERA) / CAMERA_RATE_HZ
    A_cam = se3.interpolate_poses(t, A, t_gt)
    T_ct = se3.invert_transform(se3.invert_transform(Y) @ A_cam @ X)
    T_ct_meas = se3.perturb_right(T_ct, rng.normal(0, 1e-3, (N_CAMERA, 6)))
    robot = kio.robot_table(sid, t, A, A_meas, q_gt=q, q_meas=q)
    camera = kio.camera_table(sid, t_gt + OFFSET_S, t_gt, A_cam, T_ct, T_ct_meas)
    row = {f.name: None for f in INDEX_SCHEMA if f.name not in kio.LOCATION_COLUMNS}
    pX, qX = se3.pq_from_transform(X)
    pY, qY = se3.pq_from_transform(Y)
    row.update(
        sequence_id=sid, track="temporal", dof=6, configuration="eye_in_hand", sync="async", time_offset_s=OFFSET_S,
        scale=1.0, n_robot_frames=N_ROBOT, n_camera_frames=N_CAMERA, robot_rate_hz=ROBOT_RATE_HZ,
        camera_rate_hz=CAMERA_RATE_HZ, config_json=jsonutil.dumps({"bench": True}), extra_json="{}",
    )
    row.update({f"X_{k}": v for k, v in zip(("px", "py", "pz", "qw", "qx", "qy", "qz"), [*pX, *qX])})
    row.update({f"Y_{k}": v for k, v in zip(("px", "py", "pz", "qw", "qx", "qy", "qz"), [*pY, *qY])})
    return SequenceTables(row, robot, camera)


def median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    rng = np.random.default_rng(0)
    seqs = [make_sequence(rng, i) for i in range(N_SHARD)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t_write = median_time(lambda: kio.write_shard(root, "temporal", 0, seqs), 3)
        rows = kio.write_shard(root, "temporal", 0, seqs)
        kio.write_index(root, rows)
        size_mb = sum(p.stat().st_size for p in root.rglob("*.parquet")) / 1e6
        man = kio.load_manifest(root)
        sid = man.sequence_id.iloc[N_SHARD // 2]
        seq = kio.load_sequence(root, sid, man)
        figures = {
            "load_manifest": median_time(lambda: kio.load_manifest(root), 20),
            "read_tables (Arrow only)": median_time(lambda: kio.read_tables(root, sid, man), 20),
            "load_sequence": median_time(lambda: kio.load_sequence(root, sid, man), 20),
            "load_sequence (no manifest)": median_time(lambda: kio.load_sequence(root, sid), 20),
            "axyb_poses (interpolated)": median_time(lambda: seq.axyb_poses(), 20),
            "axxb_motions": median_time(lambda: seq.axxb_motions(), 20),
            "iter_sequences, per sequence": median_time(lambda: list(kio.iter_sequences(root, man)), 3) / N_SHARD,
            f"write_shard ({N_SHARD} sequences)": t_write,
        }
        A, _ = seq.axxb_motions()
        print(f"sequence: {N_ROBOT} robot frames, {N_CAMERA} camera frames; shard of {N_SHARD}: {size_mb:.1f} MB on disk")
        print(f"axxb_motions gives {len(A)} motions")
        for name, sec in figures.items():
            print(f"{name:32s} {1e3 * sec:9.2f} ms")


def _previous_options(schema) -> dict:
    return {"compression": "zstd"}


def _rewrite(src: Path, dst: Path, options) -> None:
    """Copy a dataset folder's shards with other write options (same tables, same key-value metadata)."""
    import shutil

    import pyarrow.parquet as pq

    shutil.copy(src / "sequences.parquet", dst / "sequences.parquet")
    for p in sorted(src.glob("*/*.parquet")):
        pf = pq.ParquetFile(p)
        meta = {k.decode(): v.decode() for k, v in (pf.metadata.metadata or {}).items() if k != b"ARROW:schema"}
        tables = [pf.read_row_group(k) for k in range(pf.num_row_groups)]
        (dst / p.parent.name).mkdir(exist_ok=True)
        with pq.ParquetWriter(dst / p.parent.name / p.name, pf.schema_arrow, **options(pf.schema_arrow)) as w:
            for t in tables:
                w.write_table(t, row_group_size=max(t.num_rows, 1))
            w.add_key_value_metadata(meta)


def _bytes_per_frame(root: Path) -> float:
    import pyarrow.parquet as pq

    files = list(root.glob("robot/*.parquet")) + list(root.glob("camera/*.parquet"))
    return sum(p.stat().st_size for p in files) / sum(pq.read_metadata(p).num_rows for p in files)


def compare_encodings(data: Path | None) -> None:
    from kinhec.io.encoding import stream_write_options

    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        if data is None:
            src = Path(tmp) / "src"
            seqs = [make_sequence(rng, i) for i in range(N_SHARD)]
            kio.write_index(src, kio.write_shard(src, "temporal", 0, seqs))
        else:
            src = Path(data)
        print(f"\nencoding on {'the synthetic shard' if data is None else src}:")
        man = kio.load_manifest(src)
        ids = list(man.sequence_id.iloc[:: max(1, len(man) // 40)])
        variants = {"previous (zstd 3, dictionaries, all statistics)": _previous_options,
                    "kinhec.io.encoding (byte-stream split, zstd 9)": stream_write_options}  # fmt: skip
        dirs = {}
        for k, (label, options) in enumerate(variants.items()):
            dirs[label] = Path(tmp) / f"variant{k}"
            dirs[label].mkdir()
            _rewrite(src, dirs[label], options)
        times: dict = {label: [] for label in variants}
        for _ in range(7):  # interleaved rounds: a loaded machine slows both alike
            for label, dst in dirs.items():
                t0 = time.perf_counter()
                for sid in ids:
                    kio.load_sequence(dst, sid, man)
                times[label].append((time.perf_counter() - t0) / len(ids))
        for label, dst in dirs.items():
            t = statistics.median(times[label])
            print(f"  {label:50s} {_bytes_per_frame(dst):7.1f} B/frame   load_sequence {1e3 * t:7.2f} ms (median)")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="generated folder whose shards are re-encoded both ways")
    args = ap.parse_args()
    main()
    compare_encodings(None)
    if args.data is not None:
        compare_encodings(args.data)
