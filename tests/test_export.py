"""Export of one sequence to CSV tables and TUM trajectories."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kinhec import io as kio
from kinhec.util import jsonutil
from kinhec.util.errors import InputError, UnknownNameError
from kinhec.dataset.export import export_sequence
from kinhec.io.schema import CAMERA_SCHEMA, ROBOT_SCHEMA

from helpers.datasets import write_dataset


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("export_ds")
    return root, write_dataset(root, exact=False)


def read_tum(path):
    """Minimal TUM reader: returns timestamps (N,) and poses (N, 4, 4); quaternion scalar last."""
    rows = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        vals = [float(v) for v in line.split()]
        assert len(vals) == 8
        rows.append(vals)
    data = np.array(rows).reshape(-1, 8)
    t, p, q_xyzw = data[:, 0], data[:, 1:4], data[:, 4:8]
    x, y, z, w = q_xyzw.T
    R = np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )
    T = np.zeros((len(t), 4, 4))
    T[:, :3, :3] = R
    T[:, :3, 3] = p
    T[:, 3, 3] = 1
    return t, T, q_xyzw


@pytest.mark.parametrize("sid", ["pnp-000000", "temporal-000000", "temporal-000001"])
def test_tum_export_round_trips(dataset, tmp_path, sid):
    root, truth = dataset
    files = export_sequence(root, sid, "tum", tmp_path)
    names = sorted(p.name for p in files)
    eih = kio.load_manifest(root).set_index("sequence_id").loc[sid, "configuration"] == "eye_in_hand"
    cam = "target_cam" if eih else "cam_marker"
    assert names == sorted(
        f"{sid}_{n}" for n in ("base_ee_gt.tum", "base_ee_meas.tum", f"{cam}_gt.tum", f"{cam}_meas.tum", "info.json")
    )
    tr = truth[sid]
    t, T, q = read_tum(tmp_path / f"{sid}_base_ee_gt.tum")
    np.testing.assert_array_equal(t, tr["t_robot"])  # robot clock, exact
    np.testing.assert_allclose(T, tr["A_gt"], atol=1e-12)
    assert (q[:, 3] >= 0).all()  # the stored w >= 0 is the last TUM column
    t, T, _ = read_tum(tmp_path / f"{sid}_base_ee_meas.tum")
    np.testing.assert_allclose(T, tr["A_meas"], atol=1e-12)
    # the camera file is a trajectory: the moving body in the fixed frame (T_target_cam eye-in-hand, T_cam_marker
    # eye-to-hand)
    traj = (lambda T: np.linalg.inv(T)) if eih else (lambda T: T)
    t, T, _ = read_tum(tmp_path / f"{sid}_{cam}_gt.tum")
    np.testing.assert_array_equal(t, tr["t_cam"])  # camera clock (stamped), not t_gt
    np.testing.assert_allclose(T, traj(tr["Tct_gt"]), atol=1e-12)
    t, T, _ = read_tum(tmp_path / f"{sid}_{cam}_meas.tum")
    keep = tr["visible"]
    assert len(t) == int(keep.sum())  # frames without a measurement are skipped
    np.testing.assert_array_equal(t, tr["t_cam"][keep])
    np.testing.assert_allclose(T, traj(tr["Tct_meas"][keep]), atol=1e-12)
    assert (tmp_path / f"{sid}_{cam}_gt.tum").read_text().startswith("# timestamp tx ty tz qx qy qz qw\n")
    info = jsonutil.load(tmp_path / f"{sid}_info.json")
    assert info["sequence_id"] == sid and info["time_offset_s"] == tr["offset"]
    np.testing.assert_allclose(kio.load_sequence(root, sid).X[:3, 3], [info["X_px"], info["X_py"], info["X_pz"]])
    assert info["config"]["sequence_id"] == sid and info["extra"] == {"keyframes": [0, 3, 7]}
    assert info["robot_rate_hz"] is None  # NaN written as null


def test_tum_quaternion_is_scalar_last(dataset, tmp_path):
    """The last TUM column is the scalar part: it equals |qw| = sqrt(1 + trace(R)) / 2 of the stored rotation."""
    root, truth = dataset
    export_sequence(root, "noise-000000", "tum", tmp_path)
    _, T, q = read_tum(tmp_path / "noise-000000_base_ee_gt.tum")
    R = truth["noise-000000"]["A_gt"][:, :3, :3]
    w = np.sqrt(np.clip(1 + np.trace(R, axis1=1, axis2=2), 0, None)) / 2  # |qw| from the trace
    np.testing.assert_allclose(q[:, 3], w, atol=1e-9)


def test_csv_export_columns_and_values(dataset, tmp_path):
    root, truth = dataset
    files = export_sequence(root, "noise-000001", "csv", tmp_path / "out")
    assert [p.name for p in files] == ["noise-000001_robot.csv", "noise-000001_camera.csv", "noise-000001_info.json"]
    robot = pd.read_csv(files[0])
    q_cols = [f"q_meas_{j}" for j in range(1, 7)] + [f"q_gt_{j}" for j in range(1, 7)]
    expected = ["sequence_id", "frame", "t"] + q_cols + ROBOT_SCHEMA.names[5:]
    assert list(robot.columns) == expected
    tr = truth["noise-000001"]
    np.testing.assert_array_equal(robot[[f"q_gt_{j}" for j in range(1, 7)]].to_numpy(), tr["q_gt"])
    np.testing.assert_array_equal(robot[[f"q_meas_{j}" for j in range(1, 7)]].to_numpy(), tr["q_meas"])
    np.testing.assert_array_equal(robot["t"].to_numpy(), tr["t_robot"])
    camera = pd.read_csv(files[1])
    assert list(camera.columns) == CAMERA_SCHEMA.names
    assert camera["visible"].dtype == bool and len(camera) == len(tr["t_cam"])


def test_csv_export_free6d_and_nan(dataset, tmp_path):
    root, truth = dataset
    export_sequence(root, "motion-000000", "csv", tmp_path)
    robot = pd.read_csv(tmp_path / "motion-000000_robot.csv")
    assert not [c for c in robot.columns if c.startswith("q_")]
    export_sequence(root, "pnp-000000", "csv", tmp_path)
    camera = pd.read_csv(tmp_path / "pnp-000000_camera.csv")
    np.testing.assert_array_equal(camera["cam_target_meas_qw"].isna().to_numpy(), ~truth["pnp-000000"]["visible"])


def test_export_errors(dataset, tmp_path):
    root, _ = dataset
    with pytest.raises(UnknownNameError, match="unknown export format 'kitti'; expected one of: csv, tum"):
        export_sequence(root, "noise-000000", "kitti", tmp_path)
    with pytest.raises(InputError, match="unknown sequence 'noise-424242'"):
        export_sequence(root, "noise-424242", "csv", tmp_path)
    assert not list(tmp_path.iterdir())
