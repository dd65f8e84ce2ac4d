"""The calibration result (:mod:`kinhec.calibrate.result`) on a result built by hand: the verdict's sentence and
its units, the standard deviations in degrees, millimetres and milliseconds, the JSON's quaternion (scalar last),
non-finite numbers as null, the work point through the right block, and the ROS line's frames."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from kinhec.calibrate.result import CalibrationResult
from kinhec.geometry import se3

S = np.sqrt(0.5)


def _result(**kw):
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.0, 0.0, np.pi / 2]), [0.01, 0.02, 0.03])
    base = dict(setup="eye_in_hand", inputs={}, X=X, Y=np.eye(4), X_name="T_ee_cam", Y_name="T_base_target",
                X_std=np.array([1e-3, 2e-3, np.radians(0.5), 1e-4, 3e-3, 2e-4]), Y_std=np.array([np.radians(1.0)] * 3 + [0.01] * 3),
                time_offset_s=0.0123, time_offset_std_s=0.0004, time_offset_peak_corr=0.9, scale=1.01,
                scale_std=0.002, n_pairs=40, outliers=[3], observability={"determined": True}, warnings=["w1"],
                notes=[], residuals={"t_s": np.arange(3.0), "outlier": np.array([False, True, False])},
                offset_curve=None, init_solver="he_ml")
    base.update(kw)
    return CalibrationResult(**base)


def test_verdict_sentence():
    r = _result()
    assert r.verdict == "X determined to 0.5 deg / 3 mm (1 sigma) from 40 pairs (1 outlier), clock offset 12.3 ms."
    r = _result(outliers=[1, 2], time_offset_s=None)
    assert r.verdict == "X determined to 0.5 deg / 3 mm (1 sigma) from 40 pairs (2 outliers)."
    r = _result(observability={"determined": False}, warnings=["rotation about one axis only", "other"])
    assert r.verdict == "X is NOT determined by this motion (rotation about one axis only); do not use it."
    assert not r.determined and _result(observability={}).determined is False
    held = {"rms_mm": 1.234, "rms_deg": 0.05, "predicted_rms_mm": 1.1, "predicted_rms_deg": 0.04, "consistent": False}
    assert _result(held_out=held).verdict.endswith(" Held-out eye poses 1.23 mm / 0.05 deg RMS (sigma predicts 1.1 mm "
                                                   "/ 0.04 deg), far above: see the held-out warning.")


def test_sigma_units():
    r = _result(observability={"determined": True, "residual_std_rad_m": [1e-3] * 3 + [2e-4] * 3,
                               "residual_std_std": [1e-4] * 6})
    sg = r.sigma
    assert sg["X"]["rot_deg"] == pytest.approx(np.degrees(r.X_std[:3]).tolist(), rel=1e-12)
    assert sg["X"]["trans_mm"] == pytest.approx([0.1, 3.0, 0.2], rel=1e-12)
    assert sg["Y"]["rot_deg"] == pytest.approx([1.0] * 3, rel=1e-12) and sg["Y"]["trans_mm"] == pytest.approx([10.0] * 3)
    assert sg["time_offset_ms"] == pytest.approx({"value": 12.3, "std": 0.4}, rel=1e-12)
    assert sg["scale"] == {"value": 1.01, "std": 0.002}
    assert sg["noise"]["residual_deg_mm"] == pytest.approx([np.degrees(1e-3)] * 3 + [0.2] * 3, rel=1e-12)
    assert sg["noise"]["std"] == pytest.approx([np.degrees(1e-4)] * 3 + [0.1] * 3, rel=1e-12)
    assert _result(time_offset_std_s=None).sigma["time_offset_ms"] is None
    px = _result(observability={"pixel_std_px": 0.3, "robot_std_rad_m": [2e-4, 5e-4],
                                "robot_std_std_rad_m": [1e-5, None]}).sigma["noise"]
    assert px == {"pixel_px": {"value": 0.3, "std": None}, "robot_rot_mrad": {"value": 0.2, "std": pytest.approx(0.01)},
                  "robot_trans_mm": {"value": 0.5, "std": None}}


def test_json_pose_forms_and_non_finite_numbers():
    d = _result(scale_std=float("nan"), time_offset_peak_corr=float("inf")).to_dict()
    assert d["X_quat_xyzw"] == pytest.approx([0.0, 0.0, S, S], abs=1e-15)  # 90 deg about z, scalar last
    assert d["X_t_m"] == [0.01, 0.02, 0.03] and d["X"][0][1] == pytest.approx(-1.0)
    assert d["scale_std"] is None and d["time_offset_peak_corr"] is None and d["time_offset_s"] == 0.0123
    assert d["residuals"] == {"t_s": [0.0, 1.0, 2.0], "outlier": [False, True, False]}
    assert d["outliers"] == [3] and d["verdict"] == _result().verdict
    assert d["point_error"] is None and d["point_error_95_mm"] is None  # no covariance


def test_work_point_through_the_setups_block():
    # the rig's cameras are eye-in-hand: through X's block; eye-to-hand through Y's
    cov = np.zeros((12, 12))
    cov[3:6, 3:6] = np.eye(3) * 0.001**2
    r95 = 1.0 * np.sqrt(stats.chi2.ppf(0.95, 3))
    for setup, expected in (("eye_in_hand", r95), ("rig", r95), ("eye_to_hand", 0.0)):
        pe = _result(setup=setup, cov=cov, point_cam_m=np.array([0.0, 0.0, 0.4])).point_error()
        assert pe["point_error_95_mm"] == pytest.approx(expected, rel=3e-3, abs=1e-12), setup
    assert _result(cov=np.zeros((6, 6)), point_cam_m=np.zeros(3)).point_error() is None
    assert _result(cov=cov).point_error() is None  # no point


def test_ros_line_names_the_frames_of_x():
    line = _result(X_name="T_ee_marker").ros_static_transform()
    assert "--frame-id ee --child-frame-id marker" in line
    assert "--frame-id a --child-frame-id b" in _result().ros_static_transform("a", "b")
