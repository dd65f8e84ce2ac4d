"""``kinhec.calibrate`` on real public recordings, against the published or independently computed references.

Tabb DS1, RWHE kuka_1/kuka_2 and the ETH-ASL streams are copied under tests/data/realdata (licence, citation
and sha256 in SOURCES.toml, checked by tests/test_fixtures.py).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.calibrate import calibrate

from helpers.paths import REALDATA as DATA

ETH = DATA / "ethz_asl"


# --------------------------------------------------------------------------- #
# Tabb DS1: X and Z against Tabb's own result and OpenCV's Shah on the same input
# --------------------------------------------------------------------------- #
def _tabb_reference():
    text = (DATA / "tabb_ds1" / "transformations_rwhe_AA_RPI.txt").read_text().split("Z")
    X = np.array(text[0].split()[1:], dtype=float).reshape(4, 4)  # T_world_base [mm]
    Z = np.array(text[1].split()[1:], dtype=float).reshape(4, 4)  # T_cam_ee [mm]
    X[:3, 3] /= 1000
    Z[:3, 3] /= 1000
    return X, Z


@pytest.fixture(scope="module")
def tabb():
    return calibrate(DATA / "tabb_ds1" / "robot_cali.txt", DATA / "tabb_ds1" / "cali.txt", fmt="tabb")


def test_tabb_within_opencv_threshold_of_tabbs_result(tabb):
    X_ref, Z_ref = _tabb_reference()
    # kinhec: X = T_ee_cam = inv(Z), Y = T_base_target = inv(X) (Tabb's world is the target)
    rot, tr = se3.pose_error(tabb.X, se3.invert_transform(Z_ref))
    assert rot < 1.0 and tr < 50.0
    rot_y, tr_y = se3.pose_error(tabb.Y, se3.invert_transform(X_ref))
    assert rot_y < 1.0 and tr_y < 50.0
    assert tabb.determined and tabb.n_pairs == 88
    assert tabb.inputs["hand_pose"] == "ee_T_base" and tabb.inputs["units"] == "mm"  # fixed by the format


def test_tabb_at_least_as_close_as_opencv_shah(tabb):
    cv2 = pytest.importorskip("cv2")
    from kinhec.calibrate.readers import read_stream

    X_ref, Z_ref = _tabb_reference()
    h = read_stream(DATA / "tabb_ds1" / "robot_cali.txt", "tabb")  # T_ee_base = base2gripper [mm]
    e = read_stream(DATA / "tabb_ds1" / "cali.txt", "tabb")  # T_cam_target = world2cam [mm]
    R_b2w, t_b2w, R_g2c, t_g2c = cv2.calibrateRobotWorldHandEye(
        [T[:3, :3] for T in e.T], [T[:3, 3:] for T in e.T], [T[:3, :3] for T in h.T], [T[:3, 3:] for T in h.T],
        method=cv2.CALIB_ROBOT_WORLD_HAND_EYE_SHAH,
    )  # fmt: skip
    Z_cv = se3.transform_from_rotation_translation(R_g2c, t_g2c.ravel() / 1000)
    X_cv = se3.transform_from_rotation_translation(R_b2w, t_b2w.ravel() / 1000)
    cv_z = se3.pose_error(Z_cv, Z_ref)
    cv_x = se3.pose_error(X_cv, X_ref)
    assert abs(cv_z[0] - 0.55) < 0.05 and abs(cv_z[1] - 34.6) < 1.0  # the figures the issue quotes
    ours_z = se3.pose_error(tabb.X, se3.invert_transform(Z_ref))
    ours_x = se3.pose_error(tabb.Y, se3.invert_transform(X_ref))
    assert ours_z[0] <= cv_z[0] and ours_z[1] <= cv_z[1]
    assert ours_x[0] <= cv_x[0] and ours_x[1] <= cv_x[1]


# --------------------------------------------------------------------------- #
# RWHE kuka_1 / kuka_2: per-view camera poses of the derived OpenCV calibration
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", ["kuka_1", "kuka_2"])
def test_rwhe_within_half_degree_and_5mm_of_opencv_park_and_tsai(name, tmp_path):
    ref = json.loads((DATA / "rwhe_calib" / name / "opencv_reference_calibration.json").read_text())
    T_cam_target = np.array([v["T_cam_target"] for v in ref["per_view"]])
    assert ref["views_used_indices_0based"] == list(range(len(T_cam_target)))
    eye = tmp_path / "cam_T_target.txt"  # one row-major 4x4 per line, as RobotPosesVec.txt
    eye.write_text("".join(" ".join(repr(v) for v in M.ravel().tolist()) + "\n" for M in T_cam_target))
    res = calibrate(DATA / "rwhe_calib" / name / "RobotPosesVec.txt", eye, fmt="rwhe")
    assert res.determined and res.n_pairs == len(T_cam_target)
    for method in ("PARK", "TSAI"):
        X_cv = np.array(ref["opencv_calibrateHandEye"][method]["T_tcp_cam (cam2gripper)"])
        rot, tr = se3.pose_error(res.X, X_cv)
        assert rot < 0.5 and tr < 5.0, (method, rot, tr)
    # OpenCV's Andreff lands 34 mm away on kuka_2; kinhec must not
    X_andreff = np.array(ref["opencv_calibrateHandEye"]["ANDREFF"]["T_tcp_cam (cam2gripper)"])
    X_park = np.array(ref["opencv_calibrateHandEye"]["PARK"]["T_tcp_cam (cam2gripper)"])
    if se3.pose_error(X_andreff, X_park)[1] > 20:
        assert se3.pose_error(res.X, X_andreff)[1] > 20


# --------------------------------------------------------------------------- #
# ETH-ASL: clock offset with its confidence; two PrimeSense runs agree within 3 sigma
# --------------------------------------------------------------------------- #
def _eth(folder):
    files = sorted((ETH / folder).glob("*.csv"))
    assert len(files) == 2, f"expected the two CSV streams of {ETH / folder}, got {files}"
    return files


def test_eth_robot_arm_real_clock_offset():
    hand = next(f for f in _eth("robot_arm_real") if "hinge" in f.name)
    eye = next(f for f in _eth("robot_arm_real") if "target_ir" in f.name)
    res = calibrate(hand, eye, fmt="eth", eye_pose="target_T_cam")  # camera in the target frame
    # about 0.02 s in magnitude; in kinhec's convention (eye stamp = hand time + offset) the camera is late
    assert 0.010 < res.time_offset_s < 0.025
    assert 0 < res.time_offset_std_s < 0.002
    curve = res.offset_curve
    assert curve is not None and np.argmin(curve["cost"]) in range(8, 13)  # the minimum sits at the estimate
    assert res.determined
    assert np.allclose(res.X[:3, 3], [0.0, -0.015, 0.005], atol=0.004)
    # the sign: the opposite offset (-0.02 s, the shared README's figure) fits the poses clearly worse
    flipped = calibrate(hand, eye, fmt="eth", eye_pose="target_T_cam", offset=-0.02)
    for key in ("rot_deg", "trans_mm"):
        assert np.median(flipped.residuals[key]) > 1.2 * np.median(res.residuals[key]), key


@pytest.fixture(scope="module")
def prime_sense():
    out = []
    for run in ("prime_sense_1", "prime_sense_2"):
        files = _eth(run)
        hand = next(f for f in files if "vicon" in f.name)
        eye = next(f for f in files if "camera" in f.name)
        out.append(calibrate(hand, eye, fmt="eth", eye_pose="target_T_cam"))
    return out


def test_eth_prime_sense_runs_agree_within_3_sigma(prime_sense):
    a, b = prime_sense
    assert any("repeated time stamp" in n for n in a.notes)  # the Vicon files repeat some stamps
    d_rot = se3.so3_log(a.X[:3, :3].T @ b.X[:3, :3])  # in the frame of a.X, as the std
    d_t = b.X[:3, 3] - a.X[:3, 3]
    s = np.sqrt(a.X_std**2 + b.X_std**2)
    z = np.abs(np.concatenate([d_rot, d_t])) / s
    assert z.max() < 3.0, z
    for r in prime_sense:
        assert r.determined and r.time_offset_std_s is not None
        assert abs(r.time_offset_s) < 0.1
