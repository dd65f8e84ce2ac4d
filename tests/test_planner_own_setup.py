"""Planning for the user's own robot, camera and target: intrinsics files, target specs, trajectories, bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from kinhec.cli import main
from kinhec.models.intrinsics_files import read_intrinsics
from kinhec.models.robot_files import load_robot
from kinhec.evaluate.bounds import inverse_information
from kinhec.models.cameras import get_camera, get_target
from kinhec.models.robots import get_robot
from kinhec.planner import PlanLimits, PlannerNoise, plan_poses
from kinhec.synth.trajectories import lookat, sample_hand_eye
from kinhec.planner.model import pose_information
from kinhec.planner.inputs import adjoint, planner_camera, planner_target
from kinhec.util.errors import InputError
from kinhec.vision.targets import parse_target

from helpers.checks import one_line_error_naming

DOCS = Path(__file__).resolve().parents[1] / "docs" / "planner_files"
K = [[918.34, 0.0, 642.13], [0.0, 917.97, 356.71], [0.0, 0.0, 1.0]]
DIST = [0.106, -0.241, 3.1e-4, -2.2e-4, 0.112]

OPENCV = """%YAML:1.0
---
image_width: 1280
image_height: 720
camera_matrix: !!opencv-matrix
   rows: 3
   cols: 3
   dt: d
   data: [ 9.1834000000000003e+02, 0., 6.4213e+02, 0., 9.1797e+02,
       3.5671e+02, 0., 0., 1. ]
distortion_coefficients: !!opencv-matrix
   rows: 1
   cols: 5
   dt: d
   data: [ 1.06e-01, -2.4099999999999999e-01, 3.1e-04, -2.2e-04, 1.12e-01 ]
"""

KALIBR = """cam0:
  cam_overlaps: []
  camera_model: pinhole
  distortion_coeffs: [-0.28340811, 0.07395907, 0.00019359, 1.76187114e-05]
  distortion_model: radtan
  intrinsics: [458.654, 457.296, 367.215, 248.375]
  resolution: [752, 480]
  rostopic: /cam0/image_raw
cam1:
  camera_model: pinhole
  distortion_coeffs: [-0.28368365, 0.07451284, -0.00010473, -3.55590700e-05]
  distortion_model: equidistant
  intrinsics: [457.587, 456.134, 379.999, 255.238]
  resolution: [752, 480]
"""

Y_TABLE = "0.5,0,0,1,0,0,0"  # a board face up on the table: OpenCV's z (into the board) points down


def _check_opencv(intr):
    assert (intr.fx, intr.fy, intr.cx, intr.cy) == (918.34, 917.97, 642.13, 356.71)
    assert (intr.width_px, intr.height_px) == (1280, 720) and intr.format == "opencv_yaml"
    assert np.allclose(intr.distortion, DIST, rtol=0, atol=1e-17)


def test_opencv_yaml_reader(tmp_path):
    path = tmp_path / "cam.yaml"
    path.write_text(OPENCV)
    _check_opencv(read_intrinsics(path))


def test_opencv_yaml_written_by_cv2_reads_the_same_as_cv2(tmp_path):
    cv2 = pytest.importorskip("cv2", reason="OpenCV (the vision extra) writes the reference file")
    path = tmp_path / "cv.yaml"
    fs = cv2.FileStorage(str(path), cv2.FILE_STORAGE_WRITE)
    fs.write("image_width", 1280)
    fs.write("image_height", 720)
    fs.write("camera_matrix", np.array(K))
    fs.write("distortion_coefficients", np.array([DIST]))
    fs.release()
    _check_opencv(read_intrinsics(path))
    # and our hand-written file reads the same in cv2
    mine = tmp_path / "mine.yaml"
    mine.write_text(OPENCV)
    fs = cv2.FileStorage(str(mine), cv2.FILE_STORAGE_READ)
    intr = read_intrinsics(mine)
    assert np.array_equal(fs.getNode("camera_matrix").mat(), [[intr.fx, 0, intr.cx], [0, intr.fy, intr.cy], [0, 0, 1]])
    assert np.array_equal(fs.getNode("distortion_coefficients").mat().ravel(), intr.distortion)
    assert fs.getNode("image_width").real() == intr.width_px
    fs.release()


def test_ros_camera_info_yaml_reader(tmp_path):
    path = tmp_path / "ros.yaml"
    path.write_text("image_width: 640\nimage_height: 480\ncamera_name: narrow\n"
                    "camera_matrix: {rows: 3, cols: 3, data: [525.0, 0, 319.5, 0, 525.0, 239.5, 0, 0, 1]}\n"
                    "distortion_model: plumb_bob\n"
                    "distortion_coefficients: {rows: 1, cols: 5, data: [0.1, -0.2, 0, 0, 0]}\n")
    intr = read_intrinsics(path)
    assert (intr.fx, intr.cx, intr.width_px, intr.distortion_model) == (525.0, 319.5, 640, "radtan")


def test_kalibr_camchain_reader(tmp_path):
    path = tmp_path / "camchain.yaml"
    path.write_text(KALIBR)
    intr = read_intrinsics(path)
    assert (intr.fx, intr.fy, intr.cx, intr.cy) == (458.654, 457.296, 367.215, 248.375)
    assert (intr.width_px, intr.height_px, intr.distortion_model, intr.format) == (752, 480, "radtan", "kalibr")
    assert intr.distortion == (-0.28340811, 0.07395907, 0.00019359, 1.76187114e-05)
    assert read_intrinsics(path, camera="cam1").distortion_model == "equidistant"


def test_calibrate_json_reader_needs_the_image_size(tmp_path):
    path = tmp_path / "calib.json"
    path.write_text(json.dumps({"inputs": {"intrinsics": [900, 901, 640, 360, 0, 0, 0, 0, 0],
                                           "intrinsics_refined": [910.5, 911.5, 641, 359, 0.1, 0, 0, 0, 0]}}))
    with pytest.raises(InputError, match="--image-size"):
        read_intrinsics(path)
    intr = read_intrinsics(path, image_size="1280x720")
    assert (intr.fx, intr.fy, intr.cx, intr.cy, intr.width_px) == (910.5, 911.5, 641.0, 359.0, 1280)
    with pytest.raises(InputError, match="another image size"):
        read_intrinsics(path, image_size="640x480")


@pytest.mark.parametrize("text, expected", [
    ("camera_matrix: [1, 2\n", "invalid YAML"),
    ("foo: 1\n", "expected an OpenCV YAML"),
    ("camera_matrix: {rows: 3, cols: 3, data: [500, 0, 320, 0, 500, 240, 0, 0, 1]}\n", "--image-size"),
    ("image_width: 1920\nimage_height: 1080\ncamera_matrix: {rows: 3, cols: 3, data: [500, 0, 320, 0, 500, 240, 0, 0, 1]}\n",
     "another image size"),
    ("cam0: {intrinsics: [1, 1, 1], resolution: [2, 2]}\n", "expected [fu, fv, pu, pv]"),
    ("cam0: {camera_model: omni, intrinsics: [1, 1, 1, 1, 1], resolution: [2, 2]}\n", "expected pinhole"),
])  # fmt: skip
def test_bad_intrinsics_file_is_one_line_naming_it(tmp_path, text, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    one_line_error_naming(read_intrinsics, path, expected)


def test_file_camera_is_a_pinhole_of_the_geometric_mean_focal_length():
    cam, info = planner_camera(DOCS / "camera_opencv.yaml")
    assert (cam.width_px, cam.height_px, cam.cx_px, cam.cy_px) == (1280, 720, 642.13, 356.71)
    assert cam.f_px == pytest.approx(math.sqrt(918.34 * 917.97), rel=1e-15)
    assert info["intrinsics"]["distortion"] == pytest.approx([0.106, -0.241, 3.1e-4, -2.2e-4, 0.112])


@pytest.mark.parametrize("spec", ["chessboard:9x6:0.025", "charuco:6x5:0.04:0.03:DICT_4X4_50", "aprilgrid:3x2:0.05:0.3"])
def test_spec_target_points_are_the_printed_targets_in_the_centred_frame(spec):
    t = parse_target(spec)
    pt = planner_target(spec)
    T = pt.T_centred_target
    assert np.allclose(pt.preset.points_m, t.points_m @ T[:3, :3].T + T[:3, 3], atol=1e-15)
    p = pt.preset.points_m
    assert np.allclose(0.5 * (p.min(axis=0) + p.max(axis=0)), 0, atol=1e-15) and pt.preset.n_points == t.n_points


def test_spec_targets_frame_and_the_presets_give_the_same_plan_eye_in_hand():
    # the same board as the preset checker_9x6_25mm, its pose given in OpenCV's frame: same poses, same sigma
    T_ct = planner_target("chessboard:9x6:0.025").T_centred_target
    Y_c = np.eye(4)
    Y_c[:3, 3] = [0.45, 0.1, 0.0]
    kw = dict(seed=1, n_views=300)
    a = plan_poses("ur5e", "eye_in_hand", "hd", "checker_9x6_25mm", "0,0.05,0.08,0,0,0,1", Y_c, 6, **kw)
    b = plan_poses("ur5e", "eye_in_hand", "hd", "chessboard:9x6:0.025", "0,0.05,0.08,0,0,0,1", Y_c @ T_ct, 6, **kw)
    assert np.allclose(a.q, b.q, atol=1e-9)
    assert np.allclose(a.sigma_mm, b.sigma_mm, rtol=1e-6)
    # the predicted target pose is in OpenCV's frame: the board's z points away from the camera, and the
    # plan's prediction of corner 0 is the chessboard's first corner
    assert np.all(b.T_cam_target[:, 2, 2] > 0)
    assert np.allclose(b.T_cam_target, a.T_cam_target @ T_ct, atol=1e-12)


def test_eye_to_hand_sigma_is_about_the_spec_targets_origin():
    # eye-to-hand X is the marker: its translation error depends on the origin; the plan's is the spec's corner 0
    spec = "chessboard:3x3:0.03"  # the points of the preset marker_3x3_30mm
    T_ct = planner_target(spec).T_centred_target
    rng = np.random.default_rng([0, 30])
    rob, cam, tgt = get_robot("panda"), get_camera("hd"), get_target("marker_3x3_30mm")
    X_c = sample_hand_eye(rng, "eye_to_hand")
    _, Y, _ = lookat(rob, X_c, "eye_to_hand", cam, tgt, rng, n_stations=3)
    kw = dict(seed=2, n_views=400, limits=PlanLimits(guess_tolerance_mm=0.0, guess_tolerance_deg=0.0))
    a = plan_poses("panda", "eye_to_hand", "hd", spec, X_c @ T_ct, Y, 5, **kw)
    b = plan_poses("panda", "eye_to_hand", "hd", "marker_3x3_30mm", X_c, Y, 5, **kw)
    assert np.isfinite(a.sigma_mm[-1]) and np.allclose(a.scene.X, X_c, atol=1e-15)  # the planner's X is centred
    # the centred covariance of the spec plan's poses moved by hand to corner 0: cov_user = A^-1 cov A^-T (X block);
    # the criterion differs, so the two plans choose different poses
    for plan, A in ((a, np.linalg.inv(adjoint(T_ct))), (b, np.eye(6))):
        sc = plan.scene
        C = sc.observed(plan.T_base_ee)
        cov, _ = inverse_information(pose_information(C, sc.X, "eye_to_hand", PlannerNoise(), cam, tgt).sum(axis=0))
        cov_u = A @ cov[:6, :6] @ A.T
        assert 1000 * math.sqrt(np.trace(cov_u[3:, 3:])) == pytest.approx(plan.sigma_mm[-1], rel=1e-6)


def test_dh_yaml_robot_plans_and_every_pose_is_its_fk():
    pytest.importorskip("yourdfpy", reason="the URDF chain needs yourdfpy (the robots extra)")
    urdf = DOCS / "kr6_r900.urdf"
    plan = plan_poses(urdf, "eye_in_hand", DOCS / "camera_opencv.yaml", "chessboard:9x6:0.025", "0,0,0.05,0,0,0,1",
                      Y_TABLE, 8, seed=0, n_views=400, base_link="base_link", tip_link="tool0")  # fmt: skip
    import yourdfpy

    u = yourdfpy.URDF.load(str(urdf), build_scene_graph=True, load_meshes=False)
    for q, T in zip(plan.q, plan.T_base_ee):
        u.update_cfg(q)
        assert np.abs(u.get_transform("tool0", "base_link")[:3, 3] - T[:3, 3]).max() <= 1e-9
        assert np.abs(u.get_transform("tool0", "base_link")[:3, :3] - T[:3, :3]).max() <= 1e-9
    assert plan.details["joint_names"] == [f"joint_a{i}" for i in range(1, 7)]


def test_trajectory_yaml_parses_and_holds_the_plans_joints(tmp_path):
    robot = load_robot(DOCS / "kr6_r900_dh.yaml")
    plan = plan_poses(robot, "eye_in_hand", "hd", "chessboard:9x6:0.025", "0,0,0.05,0,0,0,1", Y_TABLE, 6, seed=0,
                      n_views=300)  # fmt: skip
    path = plan.write_trajectory(tmp_path / "traj.yaml", speed=0.5, dwell_s=2.0)
    msg = yaml.safe_load(path.read_text())
    assert set(msg) == {"header", "joint_names", "points"}
    assert msg["header"]["frame_id"] == "base_link" and msg["joint_names"] == [f"joint_a{i}" for i in range(1, 7)]
    q = np.array([p["positions"] for p in msg["points"]])
    assert np.array_equal(q, plan.q)
    t = np.array([p["time_from_start"]["sec"] + 1e-9 * p["time_from_start"]["nanosec"] for p in msg["points"]])
    pts = np.vstack([robot.home_q_rad[None], plan.q])
    moves = (np.abs(np.diff(pts, axis=0)) / robot.qd_max_rad_s).max(axis=1) / 0.5
    assert np.allclose(t, np.cumsum(moves) + 2.0 * np.arange(len(plan)), atol=1e-9)
    assert all(p["velocities"] == [0.0] * 6 for p in msg["points"])
    sig = [line.split("sigma of X translation ")[1] for line in path.read_text().splitlines() if "# pose" in line]
    assert len(sig) == len(plan)
    for s, want in zip(sig, plan.sigma_mm):
        assert s == "undetermined" if not np.isfinite(want) else float(s.split()[0]) == pytest.approx(want, rel=1e-3)


def test_preset_trajectory_names_j1_to_jn(tmp_path):
    plan = plan_poses("ur5e", "eye_in_hand", "hd", "checker_9x6_25mm", "0,0.05,0.08,0,0,0,1", "0.45,0.1,0,0,0,0,1", 3,
                      seed=0, n_views=200)  # fmt: skip
    msg = yaml.safe_load(plan.trajectory_yaml())
    assert msg["joint_names"] == [f"j{i}" for i in range(1, 7)] and msg["header"]["frame_id"] == "base"


BASE = ["plan-poses", "--setup", "eye_in_hand", "--X-guess", "0,0,0.05,0,0,0,1", "--Y-guess", Y_TABLE, "--n", "4"]


@pytest.mark.parametrize("args, expected", [
    (["--urdf", str(DOCS / "kr6_r900.urdf"), "--base-link", "link_4", "--tip-link", "camera_mount",
      "--camera", "hd", "--target", "chessboard:9x6:0.025"], "no path"),
    (["--urdf", str(DOCS / "kr6_r900.urdf"), "--base-link", "base_link", "--tip-link", "flange",
      "--camera", "hd", "--target", "chessboard:9x6:0.025"], "expected the tip link to be one of"),
    (["--urdf", str(DOCS / "kr6_r900.urdf"), "--camera", "hd", "--target", "chessboard:9x6:0.025"], "--base-link"),
    (["--robot", "ur5e", "--camera", "hd", "--target", "chessboard:9x:0.025"], "expected the inner corners"),
    (["--robot", "ur5e", "--camera", "hd", "--target", "checkers"], "expected a preset"),
    (["--robot", "ur5e", "--camera", str(DOCS / "camera_opencv.yaml"), "--image-size", "640x480",
      "--target", "chessboard:9x6:0.025"], "expected intrinsics of 640x480 images"),
    (["--robot", "ur5e", "--camera", str(DOCS / "kr6_r900_dh.yaml"), "--target", "chessboard:9x6:0.025"],
     "expected an OpenCV YAML"),
    (["--robot", str(DOCS / "camera_opencv.yaml"), "--camera", "hd", "--target", "chessboard:9x6:0.025"],
     "expected a DH-table YAML"),
    (["--robot", "ur5e", "--urdf", str(DOCS / "kr6_r900.urdf"), "--camera", "hd", "--target", "checker_9x6_25mm"],
     "expected one of them"),
])  # fmt: skip
def test_bad_input_exits_2_with_one_line(tmp_path, args, expected):
    if "--urdf" in args and "--robot" not in args:
        pytest.importorskip("yourdfpy", reason="URDF reading needs yourdfpy (the robots extra)")
    res = CliRunner().invoke(main, BASE + args + ["--out", str(tmp_path / "p.csv")])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and expected in lines[0], res.output


def test_cli_plans_with_a_dh_yaml_a_spec_and_an_opencv_yaml(tmp_path):
    res = CliRunner().invoke(main, BASE + ["--robot", str(DOCS / "kr6_r900_dh.yaml"), "--camera",
                                           str(DOCS / "camera_opencv.yaml"), "--target", "chessboard:9x6:0.025",
                                           "--out", str(tmp_path / "p.csv"), "--trajectory", str(tmp_path / "t.yaml")])
    assert res.exit_code == 0, res.output
    d = json.loads((tmp_path / "p.json").read_text())
    assert d["camera_intrinsics"]["fx"] == 918.34 and d["target"] == "chessboard:9x6:0.025"
    assert d["target_frame"].startswith("OpenCV's")
    msg = yaml.safe_load((tmp_path / "t.yaml").read_text())
    q_csv = np.loadtxt(tmp_path / "p.csv", delimiter=",", skiprows=1)[:, :6]
    assert np.array_equal(np.array([p["positions"] for p in msg["points"]]), q_csv)
