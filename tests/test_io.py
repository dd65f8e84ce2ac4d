"""Dataset folders: writing shards and the index, loading sequences, pairing the streams.

The fixtures below write the small dataset built by hand in ``helpers.datasets`` (tables assembled
column by column, ground truth chosen so that ``A_i X = Y B_i`` holds exactly) with
:func:`kinhec.io.write_shard` and :func:`kinhec.io.write_index`, and the tests read it back.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kinhec import io as kio
from kinhec.geometry import se3
from kinhec.util import jsonutil
from kinhec.util.errors import DatasetFormatError, InputError, UnknownNameError
from kinhec.io.schema import CAMERA_SCHEMA, INDEX_CSV_COLUMNS, INDEX_SCHEMA, ROBOT_SCHEMA, SequenceTables

from helpers.datasets import (ASYNC_OFFSET_S, MOTION_A_M, MOTION_ROT_RAD, MOTION_W, ROBOT_RATE_HZ, build_sequences,
                              inverse_pose, write_dataset)

ORDER = ["noise-000000", "noise-000001", "motion-000000", "temporal-000000", "temporal-000001", "pnp-000000"]


@pytest.fixture(scope="module")
def noisy_ds(tmp_path_factory):
    root = tmp_path_factory.mktemp("noisy")
    return root, write_dataset(root, exact=False)


@pytest.fixture(scope="module")
def exact_ds(tmp_path_factory):
    root = tmp_path_factory.mktemp("exact")
    return root, write_dataset(root, exact=True)


@pytest.fixture
def scratch(noisy_ds, tmp_path):
    """A private copy of the noisy dataset, for tests that damage it."""
    root = tmp_path / "copy"
    shutil.copytree(noisy_ds[0], root)
    return root


def _axyb_residual(A, B, X, Y):
    """Largest entry of |A X - Y B| over the pairs (rotation and metres together)."""
    return float(np.abs(A @ X - Y @ B).max()) if len(A) else 0.0


# --------------------------------------------------------------------------- #
# written files
# --------------------------------------------------------------------------- #
def test_written_files_have_exact_schemas(noisy_ds):
    root, _ = noisy_ds
    for sub, schema in (("robot", ROBOT_SCHEMA), ("camera", CAMERA_SCHEMA)):
        files = sorted((root / sub).glob("*.parquet"))
        assert [f.name for f in files] == [
            "motion-00003.parquet", "noise-00000.parquet", "pnp-00000.parquet", "temporal-00000.parquet"
        ]
        for f in files:
            pf = pq.ParquetFile(f)
            assert pf.schema_arrow.equals(schema, check_metadata=False)
            assert pf.schema_arrow.names == schema.names
            assert [fl.type for fl in pf.schema_arrow] == [fl.type for fl in schema]
            md = pf.metadata
            assert md.row_group(0).column(0).compression == "ZSTD"
            assert kio.INDEX_METADATA_KEY.encode() in md.metadata
        assert pq.ParquetFile(root / sub / "noise-00000.parquet").num_row_groups == 2
    assert not list(root.rglob("*.tmp"))
    idx = pq.read_table(root / "sequences.parquet")
    assert idx.schema.equals(INDEX_SCHEMA, check_metadata=False)
    assert pq.ParquetFile(root / "sequences.parquet").metadata.row_group(0).column(0).compression == "ZSTD"
    csv = pd.read_csv(root / "sequences.csv")
    assert list(csv.columns) == INDEX_CSV_COLUMNS
    assert csv["sequence_id"].tolist() == ORDER
    assert csv["dof"].tolist() == [6, 6, 0, 7, 7, 6]  # integers, not 6.0


def test_index_rows_sorted_and_located(noisy_ds):
    root, truth = noisy_ds
    man = kio.load_manifest(root)
    assert man["sequence_id"].tolist() == ORDER
    row = man.set_index("sequence_id").loc["temporal-000001"]
    assert row["robot_file"] == "robot/temporal-00000.parquet"
    assert row["camera_file"] == "camera/temporal-00000.parquet"
    assert (row["robot_row_group"], row["camera_row_group"]) == (1, 1)
    assert man.set_index("sequence_id").loc["motion-000000", "robot_file"] == "robot/motion-00003.parquet"
    assert np.isinf(man["translation_cond"]).all()
    assert man["time_offset_s"].tolist()[3:5] == [ASYNC_OFFSET_S, ASYNC_OFFSET_S]


def test_index_has_a_row_group_per_track(noisy_ds):
    root, _ = noisy_ds
    pf = pq.ParquetFile(root / "sequences.parquet")
    groups = [pf.read_row_group(i, columns=["track"]).column("track").to_pylist() for i in range(pf.num_row_groups)]
    # one group per track, in the index's track order, each holding that track's rows only
    assert [g[0] for g in groups] == ["noise", "motion", "temporal", "pnp"]
    assert [len(set(g)) for g in groups] == [1, 1, 1, 1]
    assert sum(len(g) for g in groups) == len(ORDER)


def test_manifest_without_columns(noisy_ds):
    root, _ = noisy_ds
    whole = kio.load_manifest(root)
    slim = kio.load_manifest(root, without=("config_json", "extra_json"))
    assert "config_json" not in slim.columns and "extra_json" not in slim.columns
    assert list(slim.columns) == [c for c in whole.columns if c not in ("config_json", "extra_json")]
    pd.testing.assert_frame_equal(slim, whole.drop(columns=["config_json", "extra_json"]))
    with pytest.raises(InputError, match="expected index columns, got \\['no_such'\\]"):
        kio.load_manifest(root, without=["no_such"])
    with pytest.raises(InputError, match="sequence_id.*cannot be left out"):
        kio.load_manifest(root, without=["sequence_id"])


def test_read_index_column_reads_the_asked_rows(noisy_ds):
    from kinhec.io.index import read_index_column

    root, _ = noisy_ds
    whole = kio.load_manifest(root).set_index("sequence_id")
    got = read_index_column(root, "config_json", ["temporal-000001", "pnp-000000"], ["temporal", "pnp"])
    assert got == {s: whole.loc[s, "config_json"] for s in ("temporal-000001", "pnp-000000")}
    # a sequence outside the given tracks is not read
    assert read_index_column(root, "config_json", ["noise-000000"], ["pnp"]) == {}
    assert read_index_column(root, "config_json", [], ["pnp"]) == {}


def test_write_shard_returns_completed_rows(tmp_path):
    seqs, _ = build_sequences(exact=True)
    rows = kio.write_shard(tmp_path, "noise", 12, seqs[:2])
    assert [r["robot_row_group"] for r in rows] == [0, 1]
    assert {r["robot_file"] for r in rows} == {"robot/noise-00012.parquet"}
    assert {r["camera_file"] for r in rows} == {"camera/noise-00012.parquet"}
    assert [set(r) for r in rows] == [set(INDEX_SCHEMA.names)] * 2
    stored = kio.read_shard_index(tmp_path / "camera" / "noise-00012.parquet")
    pd.testing.assert_frame_equal(pd.DataFrame(stored), pd.DataFrame(rows))  # NaN-aware comparison


def test_table_builders_match_hand_built_tables():
    seqs, truth = build_sequences(exact=False)
    for st in seqs:
        sid = st.index_row["sequence_id"]
        tr = truth[sid]
        robot = kio.robot_table(sid, tr["t_robot"], tr["A_gt"], tr["A_meas"], q_gt=tr["q_gt"], q_meas=tr["q_meas"])
        camera = kio.camera_table(
            sid, tr["t_cam"], tr["t_gt"], tr["A_cam"], tr["Tct_gt"], tr["Tct_meas"], visible=tr["visible"],
            outlier=np.zeros(len(tr["t_cam"]), bool), n_points=tr["n_points"], depth_m=tr["depth"],
            view_angle_deg=tr["angle"], reproj_rmse_px=tr["rmse"],
        )
        assert robot.schema.equals(ROBOT_SCHEMA) and camera.schema.equals(CAMERA_SCHEMA)
        for built, ref in ((robot, st.robot), (camera, st.camera)):
            for name in ref.column_names:
                a, b = built.column(name), ref.column(name)
                if pa.types.is_floating(a.type):
                    np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), atol=1e-12, equal_nan=True)
                elif pa.types.is_list(a.type):
                    np.testing.assert_allclose(a.combine_chunks().flatten(), b.combine_chunks().flatten(), atol=0)
                    assert a.combine_chunks().offsets.equals(b.combine_chunks().offsets)
                else:
                    assert a.equals(b), name


# --------------------------------------------------------------------------- #
# loading
# --------------------------------------------------------------------------- #
def test_load_sequence_reproduces_what_was_written(noisy_ds):
    root, truth = noisy_ds
    man = kio.load_manifest(root)
    for sid, tr in truth.items():
        for seq in (kio.load_sequence(root, sid, man), kio.load_sequence(root, sid)):
            assert seq.sequence_id == sid
            n, m = len(tr["t_robot"]), len(tr["t_cam"])
            np.testing.assert_array_equal(seq.robot.t, tr["t_robot"])
            np.testing.assert_array_equal(seq.robot.q_gt, tr["q_gt"])
            np.testing.assert_array_equal(seq.robot.q_meas, tr["q_meas"])
            assert seq.robot.q_gt.shape == (n, tr["q_gt"].shape[1])
            np.testing.assert_allclose(seq.robot.T_base_ee_gt, tr["A_gt"], atol=1e-12)
            np.testing.assert_allclose(seq.robot.T_base_ee_meas, tr["A_meas"], atol=1e-12)
            np.testing.assert_array_equal(seq.robot.frame, np.arange(n))
            np.testing.assert_array_equal(seq.camera.t, tr["t_cam"])
            np.testing.assert_array_equal(seq.camera.t_gt, tr["t_gt"])
            np.testing.assert_allclose(seq.camera.T_base_ee_gt, tr["A_cam"], atol=1e-12)
            np.testing.assert_allclose(seq.camera.T_cam_target_gt, tr["Tct_gt"], atol=1e-12)
            np.testing.assert_allclose(seq.camera.T_cam_target_meas, tr["Tct_meas"], atol=1e-12, equal_nan=True)
            assert seq.camera.T_cam_target_meas.shape == (m, 4, 4)
            np.testing.assert_array_equal(seq.camera.visible, tr["visible"])
            np.testing.assert_array_equal(seq.camera.has_measurement, tr["visible"])
            np.testing.assert_array_equal(seq.camera.outlier, np.zeros(m, bool))
            np.testing.assert_array_equal(seq.camera.n_points, tr["n_points"])
            np.testing.assert_array_equal(seq.camera.depth_m, tr["depth"])
            np.testing.assert_array_equal(seq.camera.view_angle_deg, tr["angle"])
            np.testing.assert_array_equal(seq.camera.reproj_rmse_px, tr["rmse"])
            np.testing.assert_allclose(seq.X, tr["X"], atol=1e-12)
            np.testing.assert_allclose(seq.Y, tr["Y"], atol=1e-12)
            assert seq.time_offset == tr["offset"]
            assert seq.scale == 1.0
            assert seq.configuration == tr["configuration"] == seq.info["configuration"]
            assert seq.info["track"] == sid.split("-")[0] == seq.track
            assert seq.is_synchronous == (seq.track != "temporal")
            assert seq.config == {"sequence_id": sid, "nested": {"list": [1, 2, 3]}}
            assert seq.extra == {"keyframes": [0, 3, 7]}
            assert sid in repr(seq)


def test_free6d_has_empty_joint_arrays(noisy_ds):
    seq = kio.load_sequence(noisy_ds[0], "motion-000000")
    assert seq.robot.q_gt.shape == (25, 0) and seq.robot.q_meas.shape == (25, 0)
    assert seq.robot.dof == 0
    assert seq.info["robot"] == "free6d"


def test_load_reads_only_the_sequence_row_groups(noisy_ds, monkeypatch):
    calls = []
    original = pq.ParquetFile.read_row_group

    def spy(self, i, *args, **kwargs):
        calls.append(i)
        return original(self, i, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", spy)
    monkeypatch.setattr(pq.ParquetFile, "read", lambda *a, **k: pytest.fail("whole-file read"))
    seq = kio.load_sequence(noisy_ds[0], "temporal-000001")
    assert calls == [1, 1]
    assert len(seq.robot) == 2001


def test_iter_sequences_opens_each_shard_once(noisy_ds, monkeypatch):
    root, truth = noisy_ds
    opened = []
    original = pq.ParquetFile.__init__

    def spy(self, source, *args, **kwargs):
        opened.append(str(source))
        original(self, source, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "__init__", spy)
    seqs = list(kio.iter_sequences(root))
    assert [s.sequence_id for s in seqs] == ORDER
    assert len(opened) == 8 and len(set(opened)) == 8  # 4 shards x 2 files, each once
    for s in seqs:
        np.testing.assert_allclose(s.camera.T_cam_target_gt, truth[s.sequence_id]["Tct_gt"], atol=1e-12)
    picked = list(kio.iter_sequences(root, sequence_ids=["pnp-000000", "noise-000001"]))
    assert [s.sequence_id for s in picked] == ["pnp-000000", "noise-000001"]
    man = kio.load_manifest(root)
    sub = man[man.track == "temporal"]
    assert [s.sequence_id for s in kio.iter_sequences(root, sub)] == ["temporal-000000", "temporal-000001"]



def test_poses_from_table_are_those_of_transform_from_pq():
    """The stream tables' poses (a direct path for tables without gaps) are ``transform_from_pq``'s to the last bit."""
    from kinhec.io.schema import pose_columns
    from kinhec.io.tables import poses_from_table

    rng = np.random.default_rng(11)
    n = 500
    P = rng.normal(size=(n, 3))
    Q = rng.normal(size=(n, 4)) * rng.uniform(0.5, 2.0, size=(n, 1))  # not unit: normalised on reading
    cols = pose_columns("base_ee_gt")
    table = pa.table({c: v for c, v in zip(cols, np.column_stack([P, Q]).T)})
    T = poses_from_table(table, "base_ee_gt", "here")
    expected = se3.transform_from_pq(P, Q, normalize=True)
    assert T.tobytes() == expected.tobytes()
    assert np.allclose(T[:, :3, :3] @ T[:, :3, :3].swapaxes(1, 2), np.eye(3), atol=1e-12)
    # a row with a gap is NaN and the others are as before
    Pn = P.copy()
    Pn[7, 1] = np.nan
    T2 = poses_from_table(pa.table({c: v for c, v in zip(cols, np.column_stack([Pn, Q]).T)}), "base_ee_gt", "here")
    assert np.isnan(T2[7]).all()
    keep = np.arange(n) != 7
    assert T2[keep].tobytes() == expected[keep].tobytes()
    # a quaternion of norm 0 is named with its columns
    Qz = Q.copy()
    Qz[3] = 0.0
    with pytest.raises(DatasetFormatError, match=r"here: columns base_ee_gt_q\*: .*non-zero quaternions, got 1 of norm 0"):
        poses_from_table(pa.table({c: v for c, v in zip(cols, np.column_stack([P, Qz]).T)}), "base_ee_gt", "here")

def test_sequence_from_tables_without_disk():
    seqs, truth = build_sequences(exact=True)
    st = seqs[0]
    seq = kio.Sequence.from_tables(st.index_row, st.robot, st.camera)
    A, B = seq.axyb_poses()
    assert _axyb_residual(A, B, truth[seq.sequence_id]["X"], truth[seq.sequence_id]["Y"]) < 1e-9


# --------------------------------------------------------------------------- #
# pairing
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("sid", ["noise-000000", "noise-000001", "temporal-000001", "motion-000000", "pnp-000000"])
def test_axyb_pairs_satisfy_ax_eq_yb_on_exact_streams(exact_ds, sid):
    root, truth = exact_ds
    seq = kio.load_sequence(root, sid)
    A, B, idx = seq.axyb_poses(return_index=True)
    assert len(A) == len(B) == len(idx) == int(truth[sid]["visible"].sum())
    assert _axyb_residual(A, B, seq.X, seq.Y) < 1e-9
    # B follows the configuration: inverse of T_cam_target for eye-in-hand only
    Tct = truth[sid]["Tct_gt"][idx]
    expect_B = inverse_pose(Tct) if truth[sid]["configuration"] == "eye_in_hand" else Tct
    np.testing.assert_allclose(B, expect_B, atol=1e-12)


@pytest.mark.parametrize("sid", ["noise-000000", "noise-000001", "temporal-000001", "motion-000000", "pnp-000000"])
def test_axxb_motions_satisfy_ax_eq_xb_on_exact_streams(exact_ds, sid):
    root, _ = exact_ds
    seq = kio.load_sequence(root, sid)
    A, B = seq.axxb_motions()
    assert len(A) >= 2 and A.shape == B.shape
    assert float(np.abs(A @ seq.X - seq.X @ B).max()) < 1e-9


def test_ground_truth_pairing_is_exact_on_noisy_streams(noisy_ds):
    root, _ = noisy_ds
    for seq in kio.iter_sequences(root):
        A, B = seq.axyb_poses(ground_truth=True)
        assert len(A) == len(seq.camera)
        assert _axyb_residual(A, B, seq.X, seq.Y) < 1e-9
        A_noisy, B_noisy = seq.axyb_poses()
        assert _axyb_residual(A_noisy, B_noisy, seq.X, seq.Y) > 1e-5  # the measurements are noisy


def test_interpolation_at_true_offset_recovers_flange_pose(exact_ds):
    root, truth = exact_ds
    seq = kio.load_sequence(root, "temporal-000000")
    assert not seq.is_synchronous
    A, B, idx = seq.axyb_poses(return_index=True)
    # the camera stream ends before the robot stream: every frame is paired
    assert len(idx) == len(seq.camera)
    rot_deg, trans_mm = se3.pose_error(A, seq.camera.T_base_ee_gt[idx])
    # linear interpolation error <= dt^2 / 8 * max|second derivative|
    dt = 1 / ROBOT_RATE_HZ
    trans_bound_mm = 1e3 * dt**2 / 8 * np.linalg.norm(MOTION_A_M) * MOTION_W**2
    rot_bound_deg = np.degrees(dt**2 / 8 * (np.linalg.norm(MOTION_ROT_RAD) * MOTION_W**2 + (np.linalg.norm(MOTION_ROT_RAD) * MOTION_W) ** 2))
    assert trans_mm.max() <= trans_bound_mm and rot_deg.max() <= rot_bound_deg
    assert trans_mm.max() < 2e-3  # micrometres at 500 Hz
    # the pairs then satisfy A X = Y B up to that interpolation error
    assert _axyb_residual(A, B, seq.X, seq.Y) < 1e-5
    # a 20 ms error on the offset breaks it by orders of magnitude
    A_bad, _, idx_bad = seq.axyb_poses(time_offset=ASYNC_OFFSET_S + 0.02, return_index=True)
    _, bad_mm = se3.pose_error(A_bad, seq.camera.T_base_ee_gt[idx_bad])
    assert np.median(bad_mm) > 1000 * trans_bound_mm
    assert np.median(bad_mm) > 1.0


def test_offset_outside_robot_range_drops_frames(exact_ds):
    seq = kio.load_sequence(exact_ds[0], "temporal-000000")
    t = seq.camera.t
    _, _, idx = seq.axyb_poses(time_offset=-0.5, return_index=True)
    inside = (t + 0.5 >= seq.robot.t[0]) & (t + 0.5 <= seq.robot.t[-1])
    np.testing.assert_array_equal(idx, np.flatnonzero(inside))
    assert 0 < len(idx) < len(t)
    A, B = seq.axyb_poses(time_offset=100.0)
    assert A.shape == (0, 4, 4) and B.shape == (0, 4, 4)
    A, B = seq.axxb_motions(time_offset=100.0)
    assert A.shape == (0, 4, 4)


def test_sync_with_explicit_offset_interpolates(exact_ds):
    seq = kio.load_sequence(exact_ds[0], "noise-000000")
    A_rows, _ = seq.axyb_poses()
    A_zero, _ = seq.axyb_poses(time_offset=0.0)
    np.testing.assert_allclose(A_zero, A_rows, atol=1e-9)
    A_shift, _, idx = seq.axyb_poses(time_offset=0.05, return_index=True)
    assert idx[0] == 1  # the first camera frame falls before the robot stream
    assert np.abs(A_shift - A_rows[idx]).max() > 1e-3


def test_nan_frames_are_dropped(noisy_ds):
    root, truth = noisy_ds
    seq = kio.load_sequence(root, "pnp-000000")
    A, B, idx = seq.axyb_poses(return_index=True)
    np.testing.assert_array_equal(idx, np.flatnonzero(truth["pnp-000000"]["visible"]))
    assert np.isfinite(A).all() and np.isfinite(B).all()
    _, _, kidx = seq.axxb_motions(return_index=True)
    assert set(kidx) <= set(idx)


def test_keyframe_options_are_honoured(exact_ds):
    seq = kio.load_sequence(exact_ds[0], "temporal-000000")  # 117 smooth frames
    A_all, _, idx_all = seq.axyb_poses(return_index=True)
    Ak, Bk, k = seq.axyb_keyframe_poses(min_rot_deg=5.0, min_trans_m=0.02, return_index=True)
    assert np.all(np.diff(k) > 0) and set(k) <= set(idx_all)
    assert 3 <= len(k) < len(idx_all)
    rot_deg, trans_mm = se3.pose_error(Ak[1:], Ak[:-1])
    assert np.all((rot_deg >= 5.0 - 1e-9) | (trans_mm >= 20.0 - 1e-9))
    A, B, k2 = seq.axxb_motions(min_rot_deg=5.0, min_trans_m=0.02, return_index=True)
    np.testing.assert_array_equal(k2, k)
    assert len(A) == len(k) - 1
    np.testing.assert_allclose(A, inverse_pose(Ak[:-1]) @ Ak[1:], atol=1e-12)
    np.testing.assert_allclose(B, inverse_pose(Bk[:-1]) @ Bk[1:], atol=1e-12)
    # stricter thresholds give fewer keyframes; max_keyframes caps them
    _, _, k_strict = seq.axyb_keyframe_poses(min_rot_deg=20.0, min_trans_m=0.1, return_index=True)
    assert 3 <= len(k_strict) < len(k)
    A4, _ = seq.axxb_motions(max_keyframes=4)
    assert len(A4) == 3
    # when fewer than three keyframes survive, every paired frame is used
    A_fb, _, k_fb = seq.axxb_motions(min_rot_deg=179.0, min_trans_m=10.0, return_index=True)
    np.testing.assert_array_equal(k_fb, idx_all)
    assert len(A_fb) == len(idx_all) - 1
    assert float(np.abs(A_fb @ seq.X - seq.X @ seq.axxb_motions(min_rot_deg=179.0, min_trans_m=10.0)[1]).max()) < 1e-5


def test_sync_spellings():
    assert kio.is_asynchronous("async") and kio.is_asynchronous("ASYNC") and kio.is_asynchronous(" Asynchronous")
    for v in ("sync", "synchronous", "Sync", "", None, float("nan"), "a-sync"):
        assert not kio.is_asynchronous(v)


# --------------------------------------------------------------------------- #
# index round trips
# --------------------------------------------------------------------------- #
def test_rebuild_index_equals_written_index(noisy_ds):
    root, _ = noisy_ds
    rebuilt = kio.rebuild_index(root)
    pd.testing.assert_frame_equal(rebuilt, kio.load_manifest(root))
    assert np.isinf(rebuilt["translation_cond"]).all()


def test_rebuild_then_write_index_is_identical(scratch):
    before = pq.read_table(scratch / "sequences.parquet")
    csv_before = (scratch / "sequences.csv").read_text()
    (scratch / "sequences.parquet").unlink()
    kio.write_index(scratch, kio.rebuild_index(scratch))

    def same(a, b):  # Arrow's equals treats NaN != NaN: compare schemas, then NaN-aware values
        assert a.schema.equals(b.schema, check_metadata=False)
        pd.testing.assert_frame_equal(a.to_pandas(), b.to_pandas())

    same(pq.read_table(scratch / "sequences.parquet"), before)
    assert (scratch / "sequences.csv").read_text() == csv_before
    # writing back the manifest is identical too
    kio.write_index(scratch, kio.load_manifest(scratch))
    same(pq.read_table(scratch / "sequences.parquet"), before)


def test_rebuild_index_skips_incomplete_and_reports_corrupt(scratch):
    (scratch / "camera" / "pnp-00000.parquet").unlink()
    ids = kio.rebuild_index(scratch)["sequence_id"].tolist()
    assert ids == [s for s in ORDER if s != "pnp-000000"]
    path = scratch / "robot" / "noise-00000.parquet"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(DatasetFormatError, match="noise-00000.parquet.*truncated or corrupt"):
        kio.rebuild_index(scratch)
    assert "noise-000000" not in kio.rebuild_index(scratch, skip_corrupt=True)["sequence_id"].tolist()


def test_published_style_copy_loads(tmp_path, exact_ds):
    """A copy written by plain pyarrow with other widths, column order and sync spelling still loads."""
    root, truth = exact_ds
    man = pq.read_table(root / "sequences.parquet")
    cols = list(reversed(man.column_names))
    wide = man.select(cols)
    for name in ("n_robot_frames", "robot_row_group", "camera_row_group", "dof"):
        i = wide.schema.get_field_index(name)
        wide = wide.set_column(i, name, wide.column(name).cast(pa.int64()))
    i = wide.schema.get_field_index("sync")
    wide = wide.set_column(i, "sync", pa.array([("ASYNC" if s == "async" else "synchronous") for s in man["sync"].to_pylist()], pa.large_string()))
    wide = wide.append_column("note", pa.array(["x"] * wide.num_rows))
    copy = tmp_path / "copy"
    shutil.copytree(root / "robot", copy / "robot")
    shutil.copytree(root / "camera", copy / "camera")
    pq.write_table(wide, copy / "sequences.parquet")
    m2 = kio.load_manifest(copy)
    assert list(m2.columns[: len(INDEX_SCHEMA)]) == INDEX_SCHEMA.names and m2.columns[-1] == "note"
    assert m2["dof"].dtype == np.int8
    seq = kio.load_sequence(copy, "temporal-000001", m2)
    assert not seq.is_synchronous
    A, B = seq.axyb_poses()
    assert len(A) == len(seq.camera) and _axyb_residual(A, B, seq.X, seq.Y) < 1e-9
    assert kio.load_sequence(copy, "noise-000001").is_synchronous


# --------------------------------------------------------------------------- #
# shard status
# --------------------------------------------------------------------------- #
def test_shard_status(scratch, tmp_path):
    ids = ["noise-000000", "noise-000001"]
    assert kio.shard_status(scratch, "noise", 0, ids) == "complete"
    assert kio.shard_status(scratch, "noise", 1, ids) == "missing"
    assert kio.shard_status(scratch, "noise", 0, ids[::-1]) == "corrupt"
    assert kio.shard_status(scratch, "noise", 0, ids[:1]) == "corrupt"
    assert kio.shard_status(scratch, "noise", 0, ids + ["noise-000002"]) == "corrupt"
    # files of two different writes of the same shard (e.g. a crash between the two renames)
    seqs, _ = build_sequences(exact=True, seed=99)
    other = tmp_path / "other"
    kio.write_shard(other, "noise", 0, seqs[:2])
    shutil.copy(other / "camera" / "noise-00000.parquet", scratch / "camera" / "noise-00000.parquet")
    assert kio.shard_status(scratch, "noise", 0, ids) == "corrupt"
    (scratch / "camera" / "motion-00003.parquet").unlink()
    assert kio.shard_status(scratch, "motion", 3, ["motion-000000"]) == "missing"
    path = scratch / "robot" / "noise-00000.parquet"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert kio.shard_status(scratch, "noise", 0, ids) == "corrupt"
    (scratch / "camera" / "pnp-00000.parquet").write_bytes(b"")
    assert kio.shard_status(scratch, "pnp", 0, ["pnp-000000"]) == "corrupt"
    with pytest.raises(InputError, match="expected_ids: expected a list of sequence ids, got the string"):
        kio.shard_status(scratch, "pnp", 0, "pnp-000000")
    with pytest.raises(UnknownNameError, match="unknown track 'pnpp'"):
        kio.shard_status(scratch, "pnpp", 0, ["pnp-000000"])


def test_shard_written_over_a_stale_tmp_and_overwritten(tmp_path):
    seqs, _ = build_sequences(exact=True)
    robot_path, camera_path = kio.shard_paths(tmp_path, "noise", 0)
    robot_path.parent.mkdir(parents=True)
    (robot_path.parent / (robot_path.name + ".tmp")).write_bytes(b"half a file")
    kio.write_shard(tmp_path, "noise", 0, seqs[:1])
    assert kio.shard_status(tmp_path, "noise", 0, ["noise-000000"]) == "complete"
    kio.write_shard(tmp_path, "noise", 0, seqs[:2])
    assert kio.shard_status(tmp_path, "noise", 0, ["noise-000000", "noise-000001"]) == "complete"
    assert not list(tmp_path.rglob("*.tmp"))


def test_failed_write_keeps_the_previous_shard(tmp_path, monkeypatch):
    seqs, _ = build_sequences(exact=True)
    kio.write_shard(tmp_path, "noise", 0, seqs[:1])
    before = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*.parquet")}
    assert len(before) == 2
    original = pq.ParquetWriter.write_table
    calls = []

    def failing(self, table, *args, **kwargs):
        calls.append(table.num_rows)
        if len(calls) == 3:  # robot file done (2 sequences), fail inside the camera file
            raise OSError("disk full")
        return original(self, table, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", failing)
    with pytest.raises(OSError, match="disk full"):
        kio.write_shard(tmp_path, "noise", 0, seqs[:2])
    monkeypatch.undo()
    assert {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*.parquet")} == before
    assert not list(tmp_path.rglob("*.tmp"))
    assert kio.shard_status(tmp_path, "noise", 0, ["noise-000000"]) == "complete"


# --------------------------------------------------------------------------- #
# error paths
# --------------------------------------------------------------------------- #
def test_unknown_sequence_id(noisy_ds):
    root, _ = noisy_ds
    with pytest.raises(InputError, match="unknown sequence 'noise-999999'"):
        kio.load_sequence(root, "noise-999999")
    with pytest.raises(InputError, match="unknown sequence 'noise-999999'"):
        kio.load_sequence(root, "noise-999999", kio.load_manifest(root))
    with pytest.raises(InputError, match=r"unknown sequences \['nope'\]"):
        list(kio.iter_sequences(root, sequence_ids=["noise-000000", "nope"]))
    with pytest.raises(InputError, match="sequence_id: expected a string"):
        kio.load_sequence(root, 3)


def test_not_a_dataset(tmp_path):
    with pytest.raises(DatasetFormatError, match="no such directory"):
        kio.load_manifest(tmp_path / "absent")
    with pytest.raises(DatasetFormatError, match="not a kinhec dataset.*sequences.parquet"):
        kio.load_manifest(tmp_path)
    with pytest.raises(DatasetFormatError, match="not a kinhec dataset"):
        kio.load_sequence(tmp_path, "noise-000000")


def test_missing_shard_file(scratch):
    (scratch / "camera" / "noise-00000.parquet").unlink()
    with pytest.raises(DatasetFormatError, match=r"noise-00000.parquet: missing camera shard file \(needed by 'noise-000001'\)"):
        kio.load_sequence(scratch, "noise-000001")


def test_truncated_shard_file(scratch):
    path = scratch / "robot" / "temporal-00000.parquet"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(DatasetFormatError, match="temporal-00000.parquet: cannot open the robot shard.*truncated or corrupt"):
        kio.load_sequence(scratch, "temporal-000000")


def test_row_group_holding_another_sequence(scratch):
    man = kio.load_manifest(scratch)
    man.loc[man.sequence_id == "noise-000000", "camera_row_group"] = 1
    with pytest.raises(DatasetFormatError, match="row group 1 holds sequence 'noise-000001', expected 'noise-000000'"):
        kio.load_sequence(scratch, "noise-000000", man)
    man.loc[man.sequence_id == "noise-000000", "camera_row_group"] = 7
    with pytest.raises(DatasetFormatError, match="row group 7 of 'noise-000000' does not exist; the file has 2"):
        kio.load_sequence(scratch, "noise-000000", man)


def test_index_with_missing_or_mistyped_columns(scratch):
    table = pq.read_table(scratch / "sequences.parquet")
    pq.write_table(table.drop_columns(["X_qw", "scale"]), scratch / "sequences.parquet")
    with pytest.raises(DatasetFormatError, match=r"missing columns \['scale', 'X_qw'\]"):
        kio.load_manifest(scratch)
    bad = table.set_column(table.schema.get_field_index("dof"), "dof", pa.array(["six"] * table.num_rows))
    pq.write_table(bad, scratch / "sequences.parquet")
    with pytest.raises(DatasetFormatError, match="mistyped columns: 'dof': expected int8, got string"):
        kio.load_sequence(scratch, "noise-000000")
    (scratch / "sequences.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DatasetFormatError, match="sequences.parquet: cannot read the index"):
        kio.load_manifest(scratch)


def test_manifest_argument_checked(noisy_ds):
    root, _ = noisy_ds
    with pytest.raises(InputError, match="manifest: expected the DataFrame of load_manifest, got dict"):
        kio.load_sequence(root, "noise-000000", {})
    man = kio.load_manifest(root).drop(columns=["robot_file"])
    with pytest.raises(InputError, match=r"missing \['robot_file'\]"):
        kio.load_sequence(root, "noise-000000", man)


def test_pairing_errors(noisy_ds):
    seq = kio.load_sequence(noisy_ds[0], "temporal-000000")
    with pytest.raises(InputError, match="time_offset: expected a finite number of seconds, got nan"):
        seq.axyb_poses(time_offset=float("nan"))
    with pytest.raises(InputError, match="time_offset: expected a number of seconds or None, got '0.1'"):
        seq.axxb_motions(time_offset="0.1")
    seqs, _ = build_sequences(exact=True)
    st = seqs[0]
    short = kio.Sequence.from_tables(st.index_row, st.robot.slice(0, 10), st.camera)
    with pytest.raises(DatasetFormatError, match="frame-aligned rows, got 10 robot and 30 camera frames"):
        short.axyb_poses()
    odd = dict(st.index_row, configuration="eye_on_base")
    with pytest.raises(DatasetFormatError, match="unknown configuration 'eye_on_base'"):
        kio.Sequence.from_tables(odd, st.robot, st.camera).axyb_poses()


def test_write_shard_errors(tmp_path):
    seqs, _ = build_sequences(exact=True)
    st = seqs[0]
    with pytest.raises(UnknownNameError, match="unknown track 'nosie'"):
        kio.write_shard(tmp_path, "nosie", 0, [st])
    with pytest.raises(InputError, match="shard_index: expected an integer in"):
        kio.write_shard(tmp_path, "noise", 100000, [st])
    with pytest.raises(InputError, match="expected track 'motion' for shard motion-00000.parquet, got 'noise'"):
        kio.write_shard(tmp_path, "motion", 0, [st])
    with pytest.raises(InputError, match="expected at least one"):
        kio.write_shard(tmp_path, "noise", 0, [])
    bad_robot = SequenceTables(st.index_row, st.robot.drop_columns(["q_gt"]), st.camera)
    with pytest.raises(InputError, match=r"sequences\[0\].robot.*missing \['q_gt'\]"):
        kio.write_shard(tmp_path, "noise", 0, [bad_robot])
    wrong_id = SequenceTables(st.index_row, seqs[1].robot, st.camera)
    with pytest.raises(InputError, match=r"sequences\[0\].robot: expected sequence_id 'noise-000000' on every row"):
        kio.write_shard(tmp_path, "noise", 0, [wrong_id])
    row = dict(st.index_row)
    del row["scale"]
    with pytest.raises(InputError, match=r"missing \['scale'\]"):
        kio.write_shard(tmp_path, "noise", 0, [SequenceTables(row, st.robot, st.camera)])
    row = dict(st.index_row, dof="six")
    with pytest.raises(InputError, match="column 'dof': expected an integer, got 'six'"):
        kio.write_shard(tmp_path, "noise", 0, [SequenceTables(row, st.robot, st.camera)])
    with pytest.raises(InputError, match=r"expected unique sequence ids, got duplicates \['noise-000000'\]"):
        kio.write_shard(tmp_path, "noise", 0, [st, st])
    # nothing was left behind by the failed calls
    assert not list(tmp_path.rglob("*.parquet*"))


def test_write_index_errors(noisy_ds, tmp_path):
    man = kio.load_manifest(noisy_ds[0])
    with pytest.raises(InputError, match=r"missing \['config_json'\]"):
        kio.write_index(tmp_path, man.drop(columns=["config_json"]))
    with pytest.raises(InputError, match=r"unexpected \['extra'\]"):
        kio.write_index(tmp_path, man.assign(extra=1))
    with pytest.raises(InputError, match="duplicates"):
        kio.write_index(tmp_path, pd.concat([man, man.iloc[:1]]))
    assert not (tmp_path / "sequences.parquet").exists()


def test_corrupt_shard_metadata_reported(tmp_path):
    path = tmp_path / "x.parquet"
    pq.write_table(pa.table({"a": [1]}), path)
    with pytest.raises(DatasetFormatError, match="expected index rows in the metadata key 'kinhec_manifest'"):
        kio.read_shard_index(path)
    with pytest.raises(DatasetFormatError, match="missing shard file"):
        kio.read_shard_index(tmp_path / "y.parquet")


# --------------------------------------------------------------------------- #
# jsonutil
# --------------------------------------------------------------------------- #
def test_jsonutil_never_writes_nan():
    obj = {
        "nan": float("nan"),
        "inf": float("inf"),
        "ninf": -np.inf,
        "np32": np.float32(np.nan),
        "arr": np.array([[1.0, np.nan], [np.inf, 2.5]]),
        "ints": np.arange(3, dtype=np.int16),
        "scalar": np.int64(7),
        "flag": np.bool_(True),
        "tuple": (1, 2.5, None),
        "plain": [1, 2.5, "a", True],
        "plain_nan": [1.0, float("nan")],
        3: "int key",
    }
    text = jsonutil.dumps(obj)
    assert "NaN" not in text and "Infinity" not in text
    back = json.loads(text)  # a strict reader accepts it
    assert back == {
        "nan": None,
        "inf": None,
        "ninf": None,
        "np32": None,
        "arr": [[1.0, None], [None, 2.5]],
        "ints": [0, 1, 2],
        "scalar": 7,
        "flag": True,
        "tuple": [1, 2.5, None],
        "plain": [1, 2.5, "a", True],
        "plain_nan": [1.0, None],
        "3": "int key",
    }
    assert jsonutil.loads(text) == back
    assert jsonutil.loads(b'{"a": NaN}')["a"] != jsonutil.loads(b'{"a": NaN}')["a"]  # tolerant reader
    assert "\n" in jsonutil.dumps({"a": [1]}, indent=2)


def test_jsonutil_errors(tmp_path):
    with pytest.raises(InputError, match=r"obj\['a'\]\[1\]: expected a JSON-representable value, got object"):
        jsonutil.dumps({"a": [1, object()]})
    with pytest.raises(InputError, match="expected valid JSON, got an error at line 1"):
        jsonutil.loads("{bad")
    with pytest.raises(InputError, match="missing file"):
        jsonutil.load(tmp_path / "none.json")
    path = jsonutil.dump({"x": np.array([1.5, np.nan])}, tmp_path / "a.json")
    assert jsonutil.load(path) == {"x": [1.5, None]}
    assert not list(tmp_path.glob("*.tmp"))


def test_written_config_json_round_trips_nan(tmp_path):
    seqs, _ = build_sequences(exact=True)
    st = seqs[0]
    row = dict(st.index_row, config_json=jsonutil.dumps({"rate": float("nan"), "v": np.float64(0.1)}))
    kio.write_index(tmp_path, kio.write_shard(tmp_path, "noise", 0, [SequenceTables(row, st.robot, st.camera)]))
    seq = kio.load_sequence(tmp_path, "noise-000000")
    assert seq.config == {"rate": None, "v": 0.1}
    assert math.isnan(seq.info["robot_rate_hz"])


def test_shard_status_reads_the_ids_of_the_row_groups(scratch):
    """A shard whose footers (stored index rows, row-group count) are intact but whose row groups hold their
    sequences in another order is corrupt: every row group must hold the id the index says it holds."""
    ids = ["noise-000000", "noise-000001"]
    path = scratch / "robot" / "noise-00000.parquet"
    pf = pq.ParquetFile(path)
    groups = [pf.read_row_group(i) for i in range(pf.num_row_groups)]
    with pq.ParquetWriter(path.with_suffix(".swapped"), pf.schema_arrow) as w:
        for t in groups[::-1]:
            w.write_table(t)
    path.with_suffix(".swapped").replace(path)
    # the footer's own key-value metadata unchanged (the serialised Arrow schema aside)
    kept = {k: v for k, v in pq.read_metadata(path).metadata.items() if k != b"ARROW:schema"}
    assert kept == {k: v for k, v in pf.metadata.metadata.items() if k != b"ARROW:schema"}
    assert kio.shard_status(scratch, "noise", 0, ids) == "corrupt"
