"""The shard runner: layout and schema of a generated folder, resume, failures, interruption, determinism."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from kinhec import io
from kinhec.geometry import se3
from kinhec.synth import tiers
from kinhec.util.errors import InputError
from kinhec.synth.runner import generate_dataset
from kinhec.io.schema import CAMERA_SCHEMA, INDEX_CSV_COLUMNS, INDEX_SCHEMA, ROBOT_SCHEMA

LIMIT = 3  # sequences per track: 22 sequences in 8 shards, a couple of seconds


def _digest(root: Path) -> dict[str, str]:
    """Content hash of every data file of a folder (not the runner's state folder, not the README card)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(".kinhec/") and rel != "README.md":
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("ref") / "data"
    s = generate_dataset("smoke", root, workers=2, limit=LIMIT, progress=False)
    assert s.ok and s.written_shards == s.planned_shards == 8
    return root


def test_folder_layout_and_exact_schemas(reference):
    root = reference
    for name in ("sequences.parquet", "sequences.csv", "robots.json", "cameras_targets.json",
                 "generation_info.json", "LICENSE", "CITATION.cff", "README.md", "configs/smoke.yaml"):  # fmt: skip
        assert (root / name).is_file(), name
    idx = pq.read_table(root / "sequences.parquet")
    assert idx.schema.remove_metadata().equals(INDEX_SCHEMA)
    assert pq.ParquetFile(root / "sequences.parquet").metadata.row_group(0).column(0).compression == "ZSTD"
    header = (root / "sequences.csv").read_text().splitlines()[0].split(",")
    assert header == INDEX_CSV_COLUMNS
    man = idx.to_pandas()
    assert len(man) == 22
    info = json.loads((root / "generation_info.json").read_text())
    assert {"dataset", "generator_version", "tier", "tier_config", "global_seed", "tracks"} <= set(info)
    assert info["global_seed"] == 20260909
    assert info["tracks"]["noise"]["planned_sequences"] == LIMIT
    for _, row in man.iterrows():
        sid = row.sequence_id
        track, num = sid.rsplit("-", 1)
        assert len(num) == 6 and row.track == track
        assert Path(row.robot_file).name == f"{track}-{int(num) // 8:05d}.parquet"
        for col, schema in (("robot_file", ROBOT_SCHEMA), ("camera_file", CAMERA_SCHEMA)):
            pf = pq.ParquetFile(root / row[col])
            assert pf.schema_arrow.remove_metadata().equals(schema)
            rg = pf.read_row_group(int(row[col.replace("file", "row_group")]), columns=["sequence_id"])
            assert set(rg.column(0).to_pylist()) == {sid}


def test_every_sequence_holds_the_ground_truth_identity(reference):
    man = io.load_manifest(reference)
    for seq in io.iter_sequences(reference, man):
        A, B = seq.axyb_poses(ground_truth=True)
        rot, trans = se3.pose_error(A @ seq.X, seq.Y @ B)
        assert np.max(rot) < 1e-7 and np.max(trans) < 1e-6, seq.sequence_id
        assert len(seq.camera.t) == seq.info["n_camera_frames"]
        assert len(seq.robot.t) == seq.info["n_robot_frames"]


def test_workers_and_executors_give_identical_folders(reference, tmp_path):
    one = tmp_path / "one"
    generate_dataset("smoke", one, workers=1, limit=LIMIT, progress=False)
    assert _digest(one) == _digest(reference)


@pytest.mark.heavy
def test_dask_local_cluster_gives_the_same_folder(reference, tmp_path):
    pytest.importorskip("dask.distributed")
    out = tmp_path / "dask"
    s = generate_dataset("smoke", out, workers=2, limit=LIMIT, executor="dask", progress=False)
    assert s.ok
    assert _digest(out) == _digest(reference)


def test_rerun_skips_complete_shards_and_regenerates_damaged_ones(reference, tmp_path, monkeypatch):
    out = tmp_path / "d"
    generate_dataset("smoke", out, workers=2, limit=LIMIT, progress=False)
    # the shards a run wrote are recorded complete with their files' size and time: the rerun reads no footer
    # but those of a file that changed since (here only touched: still complete after reading its footers)
    calls = []
    real = io.shard_status
    monkeypatch.setattr(io, "shard_status", lambda *a: calls.append(a[1:3]) or real(*a))
    touched = out / "camera" / "noise-00000.parquet"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 1000))
    s = generate_dataset("smoke", out, workers=2, limit=LIMIT, progress=False)
    assert s.skipped_shards == 8 and s.written_shards == 0
    assert calls == [("noise", 0)]
    # truncate one shard, empty another, delete a third's camera file, leave a stale temporary file
    robot0 = out / "robot" / "noise-00000.parquet"
    robot0.write_bytes(robot0.read_bytes()[: robot0.stat().st_size // 2])
    (out / "robot" / "pnp-00000.parquet").write_bytes(b"")
    (out / "camera" / "motion-00000.parquet").unlink()
    (out / "camera" / "mixed-00000.parquet.tmp").write_bytes(b"partial")
    s = generate_dataset("smoke", out, workers=2, limit=LIMIT, progress=False)
    assert s.ok and s.written_shards == 3 and s.skipped_shards == 5
    assert not list(out.rglob("*.tmp"))
    assert _digest(out) == _digest(reference)


def test_rerun_with_nothing_to_write_keeps_a_current_index(reference, tmp_path, monkeypatch):
    out = tmp_path / "d"
    generate_dataset("smoke", out, workers=1, limit=LIMIT, progress=False)
    assert io.index_is_current(out)
    index = out / "sequences.parquet"
    written = index.stat().st_mtime_ns
    rebuilds = []
    real = io.rebuild_index
    monkeypatch.setattr(io, "rebuild_index", lambda *a, **k: rebuilds.append(a) or real(*a, **k))
    # nothing to write: the index is kept as it is, no footer is read to rebuild it
    s = generate_dataset("smoke", out, workers=1, limit=LIMIT, progress=False)
    assert s.ok and s.written_shards == 0 and rebuilds == [] and index.stat().st_mtime_ns == written
    # a shard file changed after the index: rebuilt (the same rows)
    shard = out / "robot" / "noise-00000.parquet"
    os.utime(shard, ns=(shard.stat().st_atime_ns, written + 1))
    assert not io.index_is_current(out)
    generate_dataset("smoke", out, workers=1, limit=LIMIT, progress=False)
    assert len(rebuilds) == 1 and io.index_is_current(out)
    # a shard added or removed changes its folder's time; a missing index file is not current either
    os.utime(out / "camera", ns=(0, index.stat().st_mtime_ns + 1))
    assert not io.index_is_current(out)
    generate_dataset("smoke", out, workers=1, limit=LIMIT, progress=False)
    assert len(rebuilds) == 2 and io.index_is_current(out)
    (out / "sequences.csv").unlink()
    assert not io.index_is_current(out)
    generate_dataset("smoke", out, workers=1, limit=LIMIT, progress=False)
    assert len(rebuilds) == 3
    assert _digest(out) == _digest(reference)


@pytest.mark.parametrize("min_s, expected", [(0.0, 9), (3600.0, 1)])
def test_index_is_refreshed_during_a_run_at_most_so_often(tmp_path, monkeypatch, min_s, expected):
    """Every shard may refresh the index when the interval allows (8 during the run, 1 at the end); with an
    interval longer than the run, only the end writes it: a refresh reads every footer of the folder."""
    import kinhec.synth.runner as runner

    monkeypatch.setattr(runner, "INDEX_REFRESH_EVERY", 1)
    monkeypatch.setattr(runner, "INDEX_REFRESH_MIN_S", min_s)
    rebuilds = []
    real = io.rebuild_index
    monkeypatch.setattr(io, "rebuild_index", lambda *a, **k: rebuilds.append(a) or real(*a, **k))
    s = generate_dataset("smoke", tmp_path / "d", workers=1, limit=LIMIT, progress=False)
    assert s.ok and s.written_shards == 8 and len(rebuilds) == expected
    assert len(io.load_manifest(tmp_path / "d")) == s.written_sequences


def test_tracks_subset_adds_and_keeps_other_tracks(tmp_path):
    out = tmp_path / "d"
    generate_dataset("smoke", out, workers=1, limit=2, tracks=["noise"], progress=False)
    assert set(io.load_manifest(out).track) == {"noise"}
    generate_dataset("smoke", out, workers=1, limit=2, tracks=["pnp"], progress=False)
    man = io.load_manifest(out)
    assert sorted(set(man.track)) == ["noise", "pnp"] and len(man) == 4
    info = json.loads((out / "generation_info.json").read_text())
    assert set(info["tracks"]) == {"noise", "pnp"}


def test_other_tier_or_seed_is_refused(tmp_path):
    out = tmp_path / "d"
    generate_dataset("smoke", out, workers=1, limit=1, tracks=["noise"], progress=False)
    with pytest.raises(InputError, match="same tier, seed and generator version.*tier: 'smoke'.*'small'"):
        generate_dataset("small", out, workers=1, limit=1, tracks=["noise"], progress=False)
    cfg = yaml.safe_load(tiers.load_tier("smoke").yaml_text())
    cfg["global_seed"] = 1
    p = tmp_path / "seed1.yaml"
    p.write_text(yaml.safe_dump(cfg))
    with pytest.raises(InputError, match="global_seed"):
        generate_dataset(p, out, workers=1, limit=1, tracks=["noise"], progress=False)
    # asked explicitly: the old shards go, the new tier's shards come
    s = generate_dataset(p, out, workers=1, limit=1, tracks=["noise"], overwrite=True, progress=False)
    assert s.ok
    assert io.load_manifest(out).seed.iloc[0] == tiers.sequence_seed(1, "noise-000000")


def test_tier_name_and_folder_of_the_same_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = generate_dataset("smoke", "smoke", workers=1, limit=1, tracks=["motion"], progress=False)
    assert s.ok and (tmp_path / "smoke" / "sequences.parquet").exists()
    s = generate_dataset("smoke", "smoke", workers=1, limit=1, tracks=["motion"], progress=False)
    assert s.skipped_shards == 1


def test_bad_arguments_are_errors(tmp_path):
    with pytest.raises(InputError, match="workers: expected an integer >= 1, got 0"):
        generate_dataset("smoke", tmp_path / "a", workers=0)
    with pytest.raises(InputError, match="limit: expected an integer >= 1, got 0"):
        generate_dataset("smoke", tmp_path / "a", limit=0)
    with pytest.raises(InputError, match="unknown track 'nois'"):
        generate_dataset("smoke", tmp_path / "a", tracks=["nois"])
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(InputError, match="expected a folder, got a file"):
        generate_dataset("smoke", f)


def test_second_run_on_a_locked_folder_is_refused(tmp_path):
    out = tmp_path / "d"
    out.mkdir()
    lock = out / ".kinhec" / "lock"
    lock.parent.mkdir()
    # a live process (this one) holds the lock
    lock.write_text(json.dumps({"pid": os.getpid(), "host": os.uname().nodename}))
    with pytest.raises(InputError, match="no other kinhec process is writing"):
        generate_dataset("smoke", out, workers=1, limit=1, tracks=["noise"], progress=False)
    # a lock left by a dead process is taken over
    lock.write_text(json.dumps({"pid": 2**22 + 12345, "host": os.uname().nodename}))
    assert generate_dataset("smoke", out, workers=1, limit=1, tracks=["noise"], progress=False).ok
    assert not lock.exists()


def _failing_tier(tmp_path: Path) -> Path:
    """A tier whose noise track asks for joint_sinusoid at stations: every such sequence fails to generate."""
    cfg = yaml.safe_load(tiers.load_tier("smoke").yaml_text())
    cfg["shard_size"] = 2
    cfg["tracks"] = {"noise": cfg["tracks"]["noise"]}
    cfg["tracks"]["noise"]["configurations"] = ["eye_in_hand"]
    cfg["tracks"]["noise"]["families"] = [
        {"family": "joint_sinusoid", "mode": "stations", "n_stations": 6},  # refused by the recipe
        {"family": "joint_sinusoid", "mode": "continuous", "duration_s": 2, "camera_rate_hz": 30},
        {"family": "lookat", "mode": "stations", "n_stations": 6},
        {"family": "joint_waypoints", "mode": "stations", "n_stations": 6},
    ]
    p = tmp_path / "failing.yaml"
    p.write_text(yaml.safe_dump(cfg))
    return p


def test_a_failing_shard_does_not_stop_the_run(tmp_path):
    # 2 robots x 4 families x 2 camera levels = 16 sequences in 8 shards; shards 0 and 4 hold the refused family
    tier = _failing_tier(tmp_path)
    out = tmp_path / "d"
    s = generate_dataset(tier, out, workers=2, progress=False)
    assert not s.ok
    assert [(o.shard_index, o.failed_sequence) for o in s.failed] == [(0, "noise-000000"), (4, "noise-000008")]  # plan order
    assert all("stations" in o.error for o in s.failed)
    assert s.written_shards == 6
    log = s.log_path.read_text()
    assert "noise-000000" in log and "noise-000008" in log and "Traceback" in log
    man = io.load_manifest(out)
    assert len(man) == 12 and "noise-000000" not in set(man.sequence_id)
    # a re-run retries exactly the failed shards
    s2 = generate_dataset(tier, out, workers=2, progress=False)
    assert s2.skipped_shards == 6 and [o.shard_index for o in s2.failed] == [0, 4]
    # fail-fast stops submitting after the first failure
    s3 = generate_dataset(tier, tmp_path / "ff", workers=1, fail_fast=True, progress=False)
    assert len(s3.failed) == 1 and s3.written_shards + len(s3.failed) < 8


def _run_cli(args, **kw):
    return subprocess.Popen([sys.executable, "-m", "kinhec", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **kw)  # fmt: skip


def _wait_for_shards(root: Path, n: int, proc, timeout=60.0) -> None:
    t0 = time.time()
    while time.time() - t0 < timeout and proc.poll() is None:
        if len(list((root / "robot").glob("*.parquet"))) >= n if (root / "robot").is_dir() else False:
            return
        time.sleep(0.02)


@pytest.mark.heavy
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_process_resumes_to_an_identical_folder(tmp_path, sig, smoke_tier):
    ref = smoke_tier  # the run's smoke tier, generated in one go
    out = tmp_path / "out"
    # SIGINT back to its default in the child: a test run started as a background job inherits SIG_IGN, and a
    # child ignoring SIGINT would never be interrupted
    proc = _run_cli(["generate", "--tier", "smoke", "--out", str(out), "--workers", "1", "-q"], start_new_session=True,
                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    _wait_for_shards(out, 1, proc)
    assert proc.poll() is None, "the run finished before it could be interrupted: the test would prove nothing"
    os.killpg(proc.pid, sig)
    output, _ = proc.communicate(timeout=120)
    if sig == signal.SIGINT:
        assert proc.returncode != 0 and "interrupted" in output, output
        assert not list(out.rglob("*.tmp"))  # running shards finished, nothing half-written
        man = io.load_manifest(out)  # the index of what was finished
        assert 0 < len(man) < 46
    else:
        assert proc.returncode == -signal.SIGKILL  # killed outright, in the middle of the run
        assert not (out / "sequences.parquet").exists() or len(io.load_manifest(out)) < 46
    res = _run_cli(["generate", "--tier", "smoke", "--out", str(out), "--workers", "2", "-q"])
    res.communicate(timeout=300)
    assert res.returncode == 0
    assert not list(out.rglob("*.tmp"))
    assert _digest(out) == _digest(ref)


def test_limit_on_a_complete_folder_cuts_nothing(reference, tmp_path):
    import shutil

    out = tmp_path / "full"
    shutil.copytree(reference, out)
    before = list(io.load_manifest(out).sequence_id)
    s = generate_dataset("smoke", out, workers=1, limit=1, tracks=["noise"], progress=False)
    assert s.ok and s.written_shards == 0 and s.skipped_shards == 1
    assert list(io.load_manifest(out).sequence_id) == before


def test_final_index_skips_a_damaged_shard_of_a_failed_run(tmp_path):
    tier = _failing_tier(tmp_path)
    out = tmp_path / "d"
    generate_dataset(tier, out, workers=1, progress=False)
    # an earlier run left a truncated file where a failing shard belongs
    (out / "robot" / "noise-00000.parquet").write_bytes(b"PAR1 truncated")
    (out / "camera" / "noise-00000.parquet").write_bytes(b"PAR1 truncated")
    s = generate_dataset(tier, out, workers=1, progress=False)
    assert [o.shard_index for o in s.failed] == [0, 4]
    assert len(io.load_manifest(out)) == 12
