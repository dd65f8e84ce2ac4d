"""Dataset validation: a generated folder passes, and each kind of damage is caught by the right check.

A small smoke-tier folder (two sequences per track, every noise model and
both clocks) is generated once per session with the real generator; every
damaging test works on a private copy and edits it with plain PyArrow, the
way a broken writer or a broken disk would.
"""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kinhec import io as kio
from kinhec.util import jsonutil
from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.models.robots import get_robot
from kinhec.synth.runner import generate_dataset
from kinhec.io.schema import INDEX_SCHEMA, pose_columns
from kinhec.dataset.validate import CHECKS, ERROR, WARNING, Finding, ValidationReport, validate_dataset


# --------------------------------------------------------------------------- #
# fixtures and editing helpers
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("validate") / "data"
    summary = generate_dataset("smoke", root, workers=1, limit=2, progress=False)
    assert summary.ok
    return root


@pytest.fixture(scope="session")
def clean_report(generated):
    return validate_dataset(generated)


@pytest.fixture
def data(generated, tmp_path):
    """A private copy of the generated folder, for tests that damage it."""
    root = tmp_path / "copy"
    shutil.copytree(generated, root)
    return root


def manifest(root):
    return kio.load_manifest(root)


def row_of(root, sid) -> dict:
    man = manifest(root)
    return man.loc[man.sequence_id == sid].iloc[0].to_dict()


def edit_index(root, sid, **values):
    """Change index columns of one sequence and rewrite sequences.parquet / .csv with kinhec.io."""
    man = manifest(root)
    k = (man.sequence_id == sid).to_numpy()
    assert k.sum() == 1
    for col, v in values.items():
        man.loc[k, col] = v
    kio.write_index(root, man)


def edit_stream(root, sid, stream, fn):
    """Rewrite the shard holding ``sid`` with ``fn(table) -> table`` applied to its row group.

    The other row groups and the file's ``kinhec.index`` metadata are kept.
    """
    info = row_of(root, sid)
    path = root / info[f"{stream}_file"]
    rg = int(info[f"{stream}_row_group"])
    pf = pq.ParquetFile(path)
    tables = [pf.read_row_group(i) for i in range(pf.num_row_groups)]
    kv = {k: v for k, v in (pf.metadata.metadata or {}).items() if k != b"ARROW:schema"}
    schema = pf.schema_arrow
    pf.close()
    tables[rg] = fn(tables[rg])
    write_row_groups(path, schema, tables, kv)


def write_row_groups(path, schema, tables, kv):
    with pq.ParquetWriter(path, schema, compression="zstd") as w:
        for t in tables:
            w.write_table(t.cast(schema), row_group_size=max(t.num_rows, 1))
        if kv:
            w.add_key_value_metadata(kv)


def set_column(table: pa.Table, name: str, values) -> pa.Table:
    i = table.schema.get_field_index(name)
    f = table.schema.field(i)
    return table.set_column(i, f, pa.array(values, type=f.type))


def column(table: pa.Table, name: str) -> np.ndarray:
    return np.array(table.column(name).to_numpy(zero_copy_only=False))


def errors(report, check=None):
    return [f for f in report.findings if f.level == ERROR and (check is None or f.check == check)]


def failing_checks(report) -> set[str]:
    return {f.check for f in errors(report)}


# --------------------------------------------------------------------------- #
# a clean folder
# --------------------------------------------------------------------------- #
def test_generated_folder_passes_every_check(clean_report, generated):
    r = clean_report
    assert r.ok, "\n".join(r.summary_lines())
    assert r.findings == []
    n = len(manifest(generated))
    assert r.n_sequences == n == r.n_checked == 16
    assert set(r.checks) == set(CHECKS)
    for name in CHECKS:  # every check actually ran
        assert r.checks[name]["checked"] > 0, name
    # each index row references one robot and one camera row group
    assert r.checks["row_groups"]["checked"] == 2 * n
    assert r.checks["axyb"]["checked"] == n


def test_report_json_and_summary(clean_report, tmp_path):
    d = json.loads(clean_report.to_json())
    assert d["ok"] is True and d["n_errors"] == 0 and d["findings"] == []
    assert d["sequences"] == {"planned": 16, "missing": 0, "indexed": 16, "checked": 16, "failed": 0, "sample": "all"}
    assert set(d["checks"]) == set(CHECKS)
    assert d["tolerances"]["axyb_deg"] == 1e-7 and d["tolerances"]["axyb_mm"] == 1e-6
    path = clean_report.write_json(tmp_path / "report.json")
    assert jsonutil.load(path) == jsonutil.loads(clean_report.to_json())
    lines = clean_report.summary_lines()
    assert lines[-1].startswith("OK")
    assert any(line.split()[:1] == ["axyb"] for line in lines)


def test_sample_is_evenly_spaced_and_deterministic(generated):
    seen = []
    r = validate_dataset(generated, max_sequences=4, progress=lambda done, total: seen.append((done, total)))
    assert r.ok and r.n_checked == 4 and r.n_sequences == 16
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert "4 of 16" in r.sample
    # folder-level checks still cover every index row
    assert r.checks["row_groups"]["checked"] == 32
    assert r.checks["read"]["checked"] == 4
    assert validate_dataset(generated, max_sequences=100).n_checked == 16


def test_sample_positions():
    from kinhec.dataset.validate import _evenly_spaced

    assert _evenly_spaced(16, 4).tolist() == [0, 5, 10, 15]
    assert _evenly_spaced(5, 1).tolist() == [0]
    for n, k in ((10, 10), (7, 3), (1000, 999), (3, 2)):
        p = _evenly_spaced(n, k)
        assert p.size == k and p[0] == 0 and p[-1] == n - 1 and (np.diff(p) > 0).all()


def test_bad_arguments(generated):
    with pytest.raises(InputError, match="max_sequences: expected an integer >= 1"):
        validate_dataset(generated, max_sequences=0)
    with pytest.raises(InputError, match="progress: expected a callable"):
        validate_dataset(generated, progress=3)


# --------------------------------------------------------------------------- #
# not a dataset: the only raise
# --------------------------------------------------------------------------- #
def test_empty_folder_raises_one_line(tmp_path):
    with pytest.raises(DatasetFormatError, match=r"not a kinhec dataset: no sequences\.parquet and no robot/ or camera/") as e:
        validate_dataset(tmp_path)
    assert "\n" not in str(e.value)
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(DatasetFormatError, match="not a kinhec dataset"):
        validate_dataset(tmp_path)
    with pytest.raises(DatasetFormatError, match="no such folder"):
        validate_dataset(tmp_path / "nope")


# --------------------------------------------------------------------------- #
# damage: each is caught by the right check
# --------------------------------------------------------------------------- #
def test_flipped_quaternion_sign(data):
    def flip(t):  # the same rotation with qw < 0: only the storage convention is broken
        for c in pose_columns("cam_target_gt")[3:]:
            v = column(t, c)
            v[3] = -v[3]
            t = set_column(t, c, v)
        return t

    edit_stream(data, "noise-000000", "camera", flip)
    r = validate_dataset(data)
    assert not r.ok
    assert failing_checks(r) == {"quaternions"}
    (f,) = errors(r)
    assert f.sequence_id == "noise-000000" and f.path == "camera/noise-00000.parquet"
    assert "qw >= 0" in f.message and "row 3" in f.message


def test_non_unit_quaternion(data):
    edit_stream(data, "pnp-000000", "robot",
                lambda t: set_column(t, "base_ee_meas_qw", column(t, "base_ee_meas_qw") * (1 + 1e-6)))  # fmt: skip
    r = validate_dataset(data)
    assert failing_checks(r) == {"quaternions"}
    assert "unit quaternions" in errors(r)[0].message


def test_perturbed_target_pose_breaks_axyb(data):
    def move(t):
        v = column(t, "cam_target_gt_px")
        v[7] += 1e-6  # one micrometre
        return set_column(t, "cam_target_gt_px", v)

    edit_stream(data, "noise-000001", "camera", move)
    r = validate_dataset(data)
    assert failing_checks(r) == {"axyb"}
    (f,) = errors(r)
    assert f.sequence_id == "noise-000001" and "camera frame 7" in f.message and "1 frames" in f.message


def test_axyb_pose_tolerance_at_its_boundary(data):
    # AXYB_TOL_MM = 1e-6 mm: a target moved by a fifth of it passes, by three times it fails (a residual taken in
    # other units, cm or m, would miss the second)
    from kinhec.dataset.validate import AXYB_TOL_MM

    def move_by(delta_m):
        def move(t):
            v = column(t, "cam_target_gt_px")
            v[7] += delta_m
            return set_column(t, "cam_target_gt_px", v)

        return move

    edit_stream(data, "noise-000001", "camera", move_by(0.2 * AXYB_TOL_MM / 1000.0))
    assert validate_dataset(data).ok
    edit_stream(data, "noise-000001", "camera", move_by(2.8 * AXYB_TOL_MM / 1000.0))  # 3x the tolerance in total
    r = validate_dataset(data)
    assert failing_checks(r) == {"axyb"}
    (f,) = errors(r)
    assert f.sequence_id == "noise-000001" and "camera frame 7" in f.message


def test_perturbed_flange_pose_breaks_fk_and_stream_agreement(data):
    def move(t):
        v = column(t, "base_ee_gt_pz")
        v[2] += 1e-5
        return set_column(t, "base_ee_gt_pz", v)

    edit_stream(data, "robot_error-000000", "robot", move)
    r = validate_dataset(data)
    assert failing_checks(r) == {"fk", "flange_gt"}
    assert {f.sequence_id for f in errors(r)} == {"robot_error-000000"}
    assert "frame 2" in errors(r, "fk")[0].message


def test_free6d_flange_pose_is_checked_against_the_camera_stream(data):
    sid = "motion-000000"
    assert row_of(data, sid)["robot"] == "free6d"

    def move(t):
        v = column(t, "base_ee_gt_px")
        v[4] += 1e-4
        return set_column(t, "base_ee_gt_px", v)

    edit_stream(data, sid, "robot", move)
    r = validate_dataset(data)
    assert failing_checks(r) == {"flange_gt"}


def test_dh_error_uses_the_true_model(data):
    sid = "robot_error-000001"
    info = row_of(data, sid)
    assert info["robot_noise_models"].split("+") == ["joint_gaussian", "dh_error"]  # encoder noise too, as published
    extra = jsonutil.loads(info["extra_json"])
    true_dh = extra["true_dh"]
    nominal = get_robot(info["robot"]).dh_published()
    assert set(true_dh) == {"a", "d", "alpha", "theta_offset"} and true_dh["a"] != nominal["a"]
    # the nominal model does not reproduce the poses: the check must fail when it is used instead
    extra["true_dh"] = nominal
    edit_index(data, sid, extra_json=jsonutil.dumps(extra))
    r = validate_dataset(data)
    assert failing_checks(r) == {"fk"}
    assert "true DH" in errors(r)[0].message
    # and without the true model there is nothing to check against
    extra["true_dh"] = None
    edit_index(data, sid, extra_json=jsonutil.dumps(extra))
    r = validate_dataset(data)
    assert failing_checks(r) == {"fk"}
    assert "without the true DH model" in errors(r)[0].message


def test_duplicated_row_group_reference(data):
    ref = row_of(data, "noise-000000")
    edit_index(data, "noise-000001", robot_row_group=int(ref["robot_row_group"]))
    r = validate_dataset(data)
    msgs = [f.message for f in errors(r, "row_groups")]
    assert any("referenced by 2 index rows" in m for m in msgs)
    assert any("orphaned row group" in m for m in msgs)
    assert any("holds sequence 'noise-000000', not 'noise-000001'" in m for m in msgs)
    # the sequence pointing at the wrong row group cannot be read
    assert [f.sequence_id for f in errors(r, "read")] == ["noise-000001"]


def test_duplicated_row_group_in_a_shard(data):
    path = data / "robot" / "noise-00000.parquet"
    pf = pq.ParquetFile(path)
    tables = [pf.read_row_group(i) for i in range(pf.num_row_groups)]
    kv = {k: v for k, v in pf.metadata.metadata.items() if k != b"ARROW:schema"}
    schema = pf.schema_arrow
    pf.close()
    write_row_groups(path, schema, tables + [tables[0]], kv)
    r = validate_dataset(data)
    assert failing_checks(r) == {"row_groups"}
    (f,) = errors(r)
    assert f.path == "robot/noise-00000.parquet" and "orphaned row group(s) [2]" in f.message
    assert "noise-000000" in f.message


def test_sequence_missing_from_the_index_leaves_orphans(data):
    man = manifest(data)
    kio.write_index(data, man[man.sequence_id != "pnp-000001"])
    r = validate_dataset(data)
    assert failing_checks(r) == {"row_groups", "complete"}  # and the index holds fewer than planned
    assert {f.path for f in errors(r, "row_groups")} == {"robot/pnp-00000.parquet", "camera/pnp-00000.parquet"}
    assert all("orphaned row group(s) [1]" in f.message for f in errors(r, "row_groups"))


def test_an_interrupted_generation_is_not_ok_unless_partial_is_asked(data):
    """What an interrupted ``generate`` leaves: sound shards and an index of them, fewer than generation_info plans."""
    from click.testing import CliRunner

    from kinhec.cli import main

    for sub in ("robot", "camera"):
        (data / sub / "temporal-00000.parquet").unlink()
    kio.write_index(data, kio.rebuild_index(data))  # the index the runner writes on its way out
    r = validate_dataset(data)
    assert failing_checks(r) == {"complete"} and (r.n_planned, r.n_missing, r.n_checked) == (16, 2, 14)
    assert "2 of the 16 sequences generation_info.json plans are missing (temporal 0 of 2)" in errors(r)[0].message
    assert "planned, 2 of them missing" in r.summary_lines()[0]
    res = CliRunner().invoke(main, ["validate", str(data), "-q"])
    assert res.exit_code == 1 and "FAILED" in res.output and "--partial" in res.output
    res = CliRunner().invoke(main, ["validate", str(data), "-q", "--partial"])
    assert res.exit_code == 0 and "OK: no errors, 1 warning" in res.output
    assert generate_dataset("smoke", data, workers=1, limit=2, progress=False).ok  # the same run completes it
    r = validate_dataset(data)
    assert r.ok and r.n_missing == 0 and r.findings == []


def test_swapped_row_groups(data):
    a, b = row_of(data, "outliers-000000"), row_of(data, "outliers-000001")
    edit_index(data, "outliers-000000", camera_row_group=int(b["camera_row_group"]))
    edit_index(data, "outliers-000001", camera_row_group=int(a["camera_row_group"]))
    r = validate_dataset(data)
    assert failing_checks(r) == {"row_groups", "read"}
    assert not any("orphaned" in f.message or "referenced by 2" in f.message for f in errors(r))
    assert {f.sequence_id for f in errors(r, "read")} == {"outliers-000000", "outliers-000001"}


@pytest.mark.parametrize("name", ["robots.json", "cameras_targets.json", "generation_info.json", "sequences.csv"])
def test_missing_required_file(data, name):
    (data / name).unlink()
    r = validate_dataset(data)
    assert failing_checks(r) == {"files"}
    assert errors(r)[0].path == name and "missing" in errors(r)[0].message


def test_missing_shard_file(data):
    (data / "camera" / "temporal-00000.parquet").unlink()
    r = validate_dataset(data)
    assert failing_checks(r) == {"files", "read"}
    assert errors(r, "files")[0].path == "camera/temporal-00000.parquet"
    assert {f.sequence_id for f in errors(r, "read")} == {"temporal-000000", "temporal-000001"}
    assert r.n_checked == 16  # every other sequence still checked


def test_missing_card_files_are_warnings(data):
    for name in ("README.md", "LICENSE", "CITATION.cff"):
        (data / name).unlink()
    r = validate_dataset(data)
    assert r.ok
    assert sorted(f.path for f in r.findings if f.level == WARNING) == ["CITATION.cff", "LICENSE", "README.md"]


@pytest.mark.parametrize("keep", [0.5, 0.0])
def test_truncated_or_empty_shard(data, keep):
    path = data / "robot" / "temporal-00000.parquet"
    raw = path.read_bytes()
    path.write_bytes(raw[: int(len(raw) * keep)])
    r = validate_dataset(data)  # never raises
    assert failing_checks(r) == {"shards", "read"}
    assert errors(r, "shards")[0].path == "robot/temporal-00000.parquet"
    assert {f.sequence_id for f in errors(r, "read")} == {"temporal-000000", "temporal-000001"}
    assert "truncated" in errors(r, "shards")[0].message


def test_shard_with_a_foreign_schema(data):
    path = data / "camera" / "pnp-00000.parquet"
    pq.write_table(pa.table({"sequence_id": ["pnp-000000", "pnp-000001"], "x": [1.0, 2.0]}), path)
    r = validate_dataset(data)
    assert "shards" in failing_checks(r)
    assert "missing columns" in errors(r, "shards")[0].message
    assert {f.sequence_id for f in errors(r, "read")} == {"pnp-000000", "pnp-000001"}


def test_truncated_index(data):
    path = data / "sequences.parquet"
    path.write_bytes(path.read_bytes()[:100])
    r = validate_dataset(data)
    assert failing_checks(r) == {"index_schema"}
    assert r.n_checked == 0


def test_missing_index_checks_the_shards_from_their_metadata(data):
    (data / "sequences.parquet").unlink()
    r = validate_dataset(data)
    assert failing_checks(r) == {"files"}
    assert r.n_checked == 16
    assert any("rebuilt from their metadata" in f.message for f in r.findings if f.level == WARNING)


def test_csv_out_of_step(data):
    csv = data / "sequences.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join(lines[:-1]) + "\n")
    r = validate_dataset(data)
    assert failing_checks(r) == {"index_csv"}


@pytest.mark.parametrize("stream, column_name", [("robot", "t"), ("camera", "t"), ("camera", "t_gt")])
def test_non_increasing_stamps(data, stream, column_name):
    sid = "temporal-000001"

    def stall(t):
        v = column(t, column_name)
        v[5] = v[4]
        return set_column(t, column_name, v)

    edit_stream(data, sid, stream, stall)
    r = validate_dataset(data)
    if (stream, column_name) == ("camera", "t"):
        # a jittered asynchronous camera stamp may step back (t = t_gt + offset + jitter); a stall of a whole
        # frame period is far beyond the jitter: the clocks check names the frame
        assert "timestamps" not in failing_checks(r) and "clocks" in failing_checks(r)
        found = errors(r, "clocks")
        assert {f.sequence_id for f in found} == {sid} and any("at frame 5" in f.message for f in found)
        return
    assert "timestamps" in failing_checks(r)
    (f,) = errors(r, "timestamps")
    assert f.sequence_id == sid and f"{column_name}[5]" in f.message


def test_wrong_frame_counts(data):
    info = row_of(data, "noise-000000")
    edit_index(data, "noise-000000", n_camera_frames=int(info["n_camera_frames"]) + 1)
    r = validate_dataset(data)
    assert failing_checks(r) == {"frame_counts"}
    assert "n_camera_frames" in errors(r)[0].message


def test_dropped_robot_row_is_a_frame_count_error(data):
    edit_stream(data, "monocular-000000", "robot", lambda t: t.slice(0, t.num_rows - 1))
    r = validate_dataset(data)
    assert "frame_counts" in failing_checks(r)
    # the synchronous streams are no longer frame aligned either
    assert any("frame-aligned" in f.message for f in errors(r, "frame_counts"))


def test_synchronous_clocks_must_agree(data):
    def shift(t):
        v = column(t, "t")
        return set_column(t, "t", v + 1e-3)  # still increasing, but no longer the robot clock

    edit_stream(data, "noise-000000", "camera", shift)
    r = validate_dataset(data)
    assert failing_checks(r) == {"clocks"}
    assert {f.sequence_id for f in errors(r)} == {"noise-000000"}


def test_stamps_inconsistent_with_the_offset(data):
    info = row_of(data, "temporal-000000")
    assert info["sync"] == "asynchronous" and info["time_jitter_std_s"] == 0.0
    edit_index(data, "temporal-000000", time_offset_s=info["time_offset_s"] + 1e-3)
    r = validate_dataset(data)
    assert failing_checks(r) == {"clocks"}
    assert "without jitter" in errors(r)[0].message


def test_stamps_inconsistent_with_the_jitter(data):
    info = row_of(data, "temporal-000001")
    assert info["time_jitter_std_s"] > 0
    edit_index(data, "temporal-000001", time_jitter_std_s=info["time_jitter_std_s"] / 10)
    r = validate_dataset(data)
    assert failing_checks(r) == {"clocks"}
    edit_index(data, "temporal-000001", time_jitter_std_s=info["time_jitter_std_s"] * 3)
    r = validate_dataset(data)
    assert failing_checks(r) == {"clocks"}
    assert "standard deviation" in errors(r)[0].message


def test_shifted_robot_clock_of_an_asynchronous_sequence(data):
    # poses and joints stay consistent (FK passes), but the robot stream no longer matches the camera's
    # flange poses at the true capture instants
    edit_stream(data, "temporal-000000", "robot", lambda t: set_column(t, "t", column(t, "t") + 0.02))
    r = validate_dataset(data)
    assert "flange_gt" in failing_checks(r)
    assert failing_checks(r) <= {"flange_gt"}


def test_infinite_and_partial_poses(data):
    def damage(t):
        v = column(t, "cam_target_meas_pz")
        v[0] = np.nan  # a partial measurement
        t = set_column(t, "cam_target_meas_pz", v)
        w = column(t, "base_ee_gt_px")
        w[1] = np.nan  # ground truth must be complete
        return set_column(t, "base_ee_gt_px", w)

    edit_stream(data, "noise-000001", "camera", damage)
    r = validate_dataset(data)
    assert "poses" in failing_checks(r)
    msgs = " | ".join(f.message for f in errors(r, "poses"))
    assert "partly NaN" in msgs and "ground truth must be finite" in msgs


def test_measurement_availability_pnp(data):
    sid = "pnp-000000"
    info = row_of(data, sid)
    assert info["camera_noise_model"] == "pnp"

    def drop(t):  # a visible frame loses its measurement
        vis = column(t, "visible")
        k = int(np.flatnonzero(vis)[0])
        for c in pose_columns("cam_target_meas"):
            v = column(t, c)
            v[k] = np.nan
            t = set_column(t, c, v)
        return t

    edit_stream(data, sid, "camera", drop)
    r = validate_dataset(data)
    assert failing_checks(r) == {"availability"}
    assert "exactly on the visible frames" in errors(r)[0].message


def test_measurement_availability_pnp_invisible_frame_measured(data):
    sid = "pnp-000001"

    def hide(t):  # label a measured frame invisible (and keep the index count in step)
        v = column(t, "visible")
        v[0] = False
        return set_column(t, "visible", v)

    edit_stream(data, sid, "camera", hide)
    edit_index(data, sid, n_visible_frames=int(row_of(data, sid)["n_visible_frames"]) - 1)
    r = validate_dataset(data)
    assert failing_checks(r) == {"availability"}


def test_measurement_availability_gaussian(data):
    def drop(t):
        for c in pose_columns("cam_target_meas"):
            v = column(t, c)
            v[2] = np.nan
            t = set_column(t, c, v)
        return t

    edit_stream(data, "monocular-000001", "camera", drop)  # vo_drift: a measurement on every frame
    r = validate_dataset(data)
    assert failing_checks(r) == {"availability"}
    assert "vo_drift" in errors(r)[0].message


def test_visibility_and_outlier_counts(data):
    info = row_of(data, "noise-000000")
    edit_index(data, "noise-000000", n_visible_frames=int(info["n_visible_frames"]) + 1)

    def mark(t):
        v = column(t, "outlier")
        v[0] = True
        return set_column(t, "outlier", v)

    edit_stream(data, "outliers-000000", "camera", mark)  # outlier_fraction is 0 there
    r = validate_dataset(data)
    assert failing_checks(r) == {"visibility"}
    by_sid = {f.sequence_id: f.message for f in errors(r)}
    assert "n_visible_frames" in by_sid["noise-000000"]
    assert set(by_sid) == {"noise-000000", "outliers-000000"}
    assert any("outlier_fraction = 0.0" in f.message for f in errors(r) if f.sequence_id == "outliers-000000")


def test_damaged_extra_json_is_a_read_failure(data):
    edit_index(data, "mixed-000000", extra_json="{not json")
    r = validate_dataset(data)
    assert failing_checks(r) == {"read"}
    assert errors(r)[0].sequence_id == "mixed-000000"


def test_index_with_duplicate_ids_and_unknown_names(data):
    table = pq.read_table(data / "sequences.parquet")
    dup = table.slice(0, 1)
    table = pa.concat_tables([table, dup])
    conf = table.column("configuration").to_pylist()
    conf[1] = "eye_on_shoulder"
    table = table.set_column(table.schema.get_field_index("configuration"), "configuration", pa.array(conf, pa.string()))
    pq.write_table(table, data / "sequences.parquet")
    r = validate_dataset(data)
    msgs = [f.message for f in errors(r, "index_schema")]
    assert any("listed more than once" in m for m in msgs)
    assert any("eye_on_shoulder" in m for m in msgs)
    assert "axyb" in failing_checks(r)  # the sequence with the unknown configuration cannot be checked


def test_index_with_a_missing_column(data):
    table = pq.read_table(data / "sequences.parquet")
    pq.write_table(table.drop_columns(["n_outlier_frames"]), data / "sequences.parquet")
    r = validate_dataset(data)
    assert failing_checks(r) == {"index_schema"}
    assert "n_outlier_frames" in errors(r)[0].message


def test_findings_are_plain_data():
    f = Finding(ERROR, "axyb", "noise-000000", "camera/noise-00000.parquet", "fails")
    assert f.to_dict() == {"level": "error", "check": "axyb", "sequence_id": "noise-000000",
                           "path": "camera/noise-00000.parquet", "message": "fails"}  # fmt: skip
    assert str(f) == "error   [axyb] noise-000000 camera/noise-00000.parquet: fails"
    r = ValidationReport(root="x")
    r._add(ERROR, "axyb", "fails", sequence_id="noise-000000")
    r._add(WARNING, "files", "README.md is missing", path="README.md")
    assert not r.ok and r.n_errors == 1 and r.n_warnings == 1 and r.failed_sequences == ["noise-000000"]
    assert r.checks["axyb"]["errors"] == 1 and r.checks["files"]["warnings"] == 1
    assert r.summary_lines()[-1].startswith("FAILED: 1 error (1 sequence affected), 1 warning")
    assert math.isfinite(json.loads(r.to_json())["seconds"])


def test_leftover_tmp_file_is_a_warning(data):
    (data / "robot" / "noise-00000.parquet.tmp").write_bytes(b"half a shard")
    r = validate_dataset(data)
    assert r.ok
    (f,) = r.findings
    assert f.level == WARNING and f.check == "files" and f.path == "robot/noise-00000.parquet.tmp"


def test_rotation_residual_is_accurate_near_zero():
    from kinhec.geometry import se3
    from kinhec.dataset.validate import _rel_rotation_deg

    rng = np.random.default_rng(3)
    R = se3.random_rotations(rng, 200)
    for angle_rad in (1e-12, 1e-9, 1e-6, 0.1, 3.0):
        D = se3.so3_exp(se3.random_unit_vectors(rng, 200) * angle_rad)
        got = np.radians(_rel_rotation_deg(R, R @ D))
        np.testing.assert_allclose(got, angle_rad, rtol=1e-6, atol=1e-15)
