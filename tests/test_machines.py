"""The reduced-DOF machines (prismatic joints, a coupled chain) against hand computations, and their recordings."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.models.robot_files import robot_from_dh_yaml, robot_from_urdf
from kinhec.models.robots import MACHINE_NAMES, ROBOT_NAMES, RobotModel, get_robot
from kinhec.util.errors import InputError

from helpers.checks import one_line_error_naming

SCARA_A1, SCARA_A2 = 0.325, 0.275  # Epson LS6-B602S arm #1 and arm #2 [m]


def _draw(model, n, seed):
    return np.random.default_rng(seed).uniform(model.q_min_rad, model.q_max_rad, (n, model.dof))


def _rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


FLANGE_DOWN = np.diag([1.0, -1.0, -1.0])


def test_scara_fk_is_the_planar_two_link_arm_with_the_z_stroke():
    m = get_robot("scara_ls6")
    q = _draw(m, 200, 1)
    T = m.fk(q)
    q1, q2, q3, q4 = q.T
    x = SCARA_A1 * np.cos(q1) + SCARA_A2 * np.cos(q1 + q2)
    y = SCARA_A1 * np.sin(q1) + SCARA_A2 * np.sin(q1 + q2)
    np.testing.assert_allclose(T[:, :3, 3], np.column_stack([x, y, q3]), rtol=0, atol=1e-15)
    # yaw q1 + q2 + q4 (joint 4 counts counter-clockwise seen from above), z down
    R = np.stack([_rz(a + b + c) @ FLANGE_DOWN for a, b, c in zip(q1, q2, q4)])
    np.testing.assert_allclose(T[:, :3, :3], R, rtol=0, atol=1e-15)
    assert m.q_max_rad[2] - m.q_min_rad[2] == pytest.approx(0.2, abs=1e-15)  # the 200 mm stroke


def test_gantry_fk_is_the_slides_and_the_turn():
    m = get_robot("gantry_xyzr")
    q = _draw(m, 200, 2)
    T = m.fk(q)
    np.testing.assert_array_equal(T[:, :3, 3], q[:, :3])
    R = np.stack([_rz(a) @ FLANGE_DOWN for a in q[:, 3]])
    np.testing.assert_allclose(T[:, :3, :3], R, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(m.q_max_rad[:3] - m.q_min_rad[:3], [1.0, 0.8, 0.4])


def test_palletiser_fk_is_the_parallelogram_arm_with_a_level_flange():
    m = get_robot("palletiser_irb460")
    q = _draw(m, 200, 3)
    T = m.fk(q)
    q1, q2, q3, q4 = q.T
    # in the arm's plane: shoulder (0.26, 0.7425), upper arm 0.945 tilted q2 from the vertical, forearm 1.025 at q3
    # below the horizontal, then the level wrist offset (0.22 forward, 0.2 down)
    r = 0.26 + 0.945 * np.sin(q2) + 1.025 * np.cos(q3) + 0.22
    z = 0.7425 + 0.945 * np.cos(q2) - 1.025 * np.sin(q3) - 0.2
    np.testing.assert_allclose(T[:, :3, 3], np.column_stack([r * np.cos(q1), r * np.sin(q1), z]), rtol=0, atol=1e-14)
    R = np.stack([_rz(a + b) @ FLANGE_DOWN for a, b in zip(q1, q4)])
    np.testing.assert_allclose(T[:, :3, :3], R, rtol=0, atol=1e-14)


@pytest.mark.parametrize("name", MACHINE_NAMES)
def test_jacobian_equals_finite_differences(name):
    m = get_robot(name)
    q = _draw(m, 50, 4)
    J = m.jacobian(q)
    h = 1e-6
    Jn = np.empty_like(J)
    for k in range(m.dof):
        dq = np.zeros(m.dof)
        dq[k] = h
        Tp, Tm = m.fk(q + dq), m.fk(q - dq)
        Jn[:, 3:, k] = (Tp[:, :3, 3] - Tm[:, :3, 3]) / (2 * h)
        Jn[:, :3, k] = se3.so3_log(Tp[:, :3, :3] @ np.swapaxes(Tm[:, :3, :3], 1, 2)) / (2 * h)
    np.testing.assert_allclose(J, Jn, rtol=0, atol=1e-8)
    if m.joint_types:  # a prismatic joint turns nothing and moves the flange by one metre per metre
        pris = m.prismatic
        np.testing.assert_array_equal(J[:, :3, pris], 0.0)
        np.testing.assert_allclose(np.linalg.norm(J[:, 3:, pris], axis=1), 1.0, rtol=0, atol=1e-15)


@pytest.mark.parametrize("name", MACHINE_NAMES)
def test_ik_round_trip(name):
    m = get_robot(name)
    q = _draw(m, 40, 5)
    res = m.ik(m.fk(q), np.random.default_rng(6))
    assert res.success.all()
    np.testing.assert_allclose(m.fk(res.q), m.fk(q), rtol=0, atol=2e-6)
    assert m.within_limits(res.q).all()


@pytest.mark.parametrize("name", MACHINE_NAMES)
def test_to_dict_round_trip_and_not_published(name):
    m = get_robot(name)
    back = RobotModel.from_dict(m.to_dict())
    q = _draw(m, 20, 7)
    np.testing.assert_array_equal(back.fk(q), m.fk(q))
    np.testing.assert_array_equal(back.q_max_rad, m.q_max_rad)
    assert name not in ROBOT_NAMES


def test_machines_stay_out_of_the_published_tiers():
    from kinhec.models.robots import robots_json
    from kinhec.synth.tiers import TIER_NAMES, expand_tier, load_tier

    assert set(robots_json()) == set(ROBOT_NAMES) and len(ROBOT_NAMES) == 14
    tier = load_tier("smoke")
    assert TIER_NAMES[0] == "smoke"
    robots = {r["robot"] for recipes in expand_tier(tier).values() for r in recipes}
    assert robots and not robots & set(MACHINE_NAMES)


SCARA_DH = """name: scara_yaml
convention: standard
joints:
  - {a_m: 0.325, alpha_deg: 0, d_m: 0, limits_deg: [-132, 132]}
  - {a_m: 0.275, alpha_deg: 180, d_m: 0, limits_deg: [-150, 150]}
  - {type: prismatic, a_m: 0, alpha_deg: 0, d_m: 0, sign: -1, limits_m: [-0.2, 0.0], max_speed_m_s: 2.35}
  - {a_m: 0, alpha_deg: 0, d_m: 0, sign: -1, limits_deg: [-360, 360]}
home_deg: [-30, 90, -0.1, 0]
"""

SCARA_URDF = """<?xml version="1.0"?>
<robot name="scara_urdf">
  <link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/><link name="flange"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-2.3" upper="2.3" effort="1" velocity="11"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.325 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-2.6" upper="2.6" effort="1" velocity="24"/></joint>
  <joint name="j3" type="prismatic"><parent link="l2"/><child link="l3"/><origin xyz="0.275 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-0.2" upper="0" effort="1" velocity="2.35"/></joint>
  <joint name="j4" type="revolute"><parent link="l3"/><child link="flange"/>
    <origin xyz="0 0 0" rpy="3.141592653589793 0 0"/>
    <axis xyz="0 0 -1"/><limit lower="-6.2" upper="6.2" effort="1" velocity="40"/></joint>
</robot>
"""


def test_dh_yaml_with_a_prismatic_joint_is_the_registered_scara(tmp_path):
    path = tmp_path / "scara.yaml"
    path.write_text(SCARA_DH)
    m = robot_from_dh_yaml(path)
    ref = get_robot("scara_ls6")
    assert m.joint_types == ref.joint_types
    q = _draw(ref, 100, 8)
    np.testing.assert_allclose(m.fk(q), ref.fk(q), rtol=0, atol=1e-15)
    np.testing.assert_allclose(m.q_min_rad[2], -0.2, rtol=0, atol=0)
    assert m.qd_max_rad_s[2] == 2.35 and m.home_q_rad[2] == -0.1


def test_urdf_with_a_prismatic_joint_equals_the_dh_yaml(tmp_path):
    pytest.importorskip("yourdfpy", reason="URDF reading needs yourdfpy (the robots extra)")
    (tmp_path / "scara.yaml").write_text(SCARA_DH)
    (tmp_path / "scara.urdf").write_text(SCARA_URDF)
    dh = robot_from_dh_yaml(tmp_path / "scara.yaml")
    ur = robot_from_urdf(tmp_path / "scara.urdf", "base", "flange")
    assert ur.joint_types == ("revolute", "revolute", "prismatic", "revolute")
    q = _draw(ur, 200, 9)
    np.testing.assert_allclose(ur.fk(q), dh.fk(q), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ur.jacobian(q), dh.jacobian(q), rtol=0, atol=1e-12)
    assert (ur.q_min_rad[2], ur.q_max_rad[2], ur.qd_max_rad_s[2]) == (-0.2, 0.0, 2.35)


def test_prismatic_joint_without_limits_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(SCARA_DH.replace("limits_m: [-0.2, 0.0], ", ""))
    one_line_error_naming(robot_from_dh_yaml, path, "joints[3]: expected the key limits_m")
    path.write_text(SCARA_DH.replace("limits_m: [-0.2, 0.0]", "limits_deg: [-10, 0]"))
    one_line_error_naming(robot_from_dh_yaml, path, "a prismatic joint takes limits_m and max_speed_m_s")


def test_urdf_prismatic_joint_without_limits_is_one_line_naming_the_file(tmp_path):
    pytest.importorskip("yourdfpy", reason="URDF reading needs yourdfpy (the robots extra)")
    path = tmp_path / "bad.urdf"
    path.write_text(SCARA_URDF.replace('<limit lower="-0.2" upper="0" effort="1" velocity="2.35"/>', ""))
    one_line_error_naming(lambda p: robot_from_urdf(p, "base", "flange"), path, "'j3' is prismatic without <limit")


def test_bad_coupling_and_joint_types_are_refused():
    m = get_robot("palletiser_irb460")
    with pytest.raises(InputError, match="coupling: expected an \\(m, 4\\) matrix"):
        RobotModel.from_dict({**m.to_dict(), "coupling": np.eye(5, 3).tolist()})
    with pytest.raises(InputError, match="joint_types: expected 6 entries"):
        dataclasses.replace(get_robot("ur5e"), joint_types=("prismatic",) * 4)


# --------------------------------------------------------------------------- #
# recordings
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def machine_folder(tmp_path_factory):
    from kinhec.synth.machines import generate_machine_dataset

    root = tmp_path_factory.mktemp("machines")
    generate_machine_dataset(root, MACHINE_NAMES, 50, seed=3)
    return root


def test_recordings_have_the_machines_physics(machine_folder):
    from kinhec import io

    man = io.load_manifest(machine_folder)
    assert len(man) == 300
    counts = man.groupby(["robot", "configuration"]).size()
    assert set(counts.index) == {(m, c) for m in MACHINE_NAMES for c in ("eye_in_hand", "eye_to_hand")}
    assert (counts == 50).all()
    for sid, row in man.set_index("sequence_id").iterrows():
        seq = io.load_sequence(machine_folder, sid, man)
        model = get_robot(row["robot"])
        rb = seq.robot
        # forward kinematics of the recorded joints is the recorded true flange pose
        np.testing.assert_allclose(model.fk(rb.q_gt), rb.T_base_ee_gt, rtol=0, atol=1e-12)
        assert model.within_limits(rb.q_gt).all()
        # every hand rotation (between any two recorded poses) is about the vertical
        R = rb.T_base_ee_gt[:, :3, :3]
        rel = R @ np.swapaxes(R[:1], 1, 2)
        assert np.abs(rel[:, 2, :2]).max() <= 1e-12 and np.abs(rel[:, :2, 2]).max() <= 1e-12
        np.testing.assert_allclose(rel[:, 2, 2], 1.0, rtol=0, atol=1e-12)
        # the camera ground truth closes A X = Y B
        cam = seq.camera
        B = cam.T_cam_target_gt
        lhs = cam.T_base_ee_gt @ seq.X
        rhs = seq.Y @ (se3.invert_transform(B) if row["configuration"] == "eye_in_hand" else B)
        np.testing.assert_allclose(lhs, rhs, rtol=0, atol=1e-9)
    noisy = man[man["robot_rot_std_rad"] > 0]
    assert len(noisy) == 300 and set(man["camera_noise_model"]) == {"se3_gaussian", "pnp"}


def test_machine_folder_validates_and_its_robots_json_holds_the_machines(machine_folder):
    from kinhec.dataset.validate import validate_dataset
    from kinhec.util import jsonutil

    report = validate_dataset(machine_folder, max_sequences=12)
    assert report.ok and report.n_errors == 0, [str(f) for f in report.errors]
    models = jsonutil.load(machine_folder / "robots.json")
    assert list(models) == list(MACHINE_NAMES)
    q = _draw(get_robot("scara_ls6"), 10, 11)
    np.testing.assert_array_equal(RobotModel.from_dict(models["scara_ls6"]).fk(q), get_robot("scara_ls6").fk(q))


def test_machine_recipes_refuse_what_a_machine_cannot_do():
    from kinhec.synth.recipe import Recipe

    with pytest.raises(InputError, match="a look-at viewpoint needs six joints"):
        Recipe(robot="scara_ls6", family="lookat", sampling_mode="stations")
    with pytest.raises(InputError, match="no 'dh_error'"):
        Recipe(robot="gantry_xyzr", robot_noise_models=("dh_error",))


# --------------------------------------------------------------------------- #
# planning
# --------------------------------------------------------------------------- #
SCARA_PLAN = dict(robot="scara_ls6", setup="eye_to_hand", camera="hd", target="marker_3x3_30mm",
                  X_guess=[0, 0, 0.05, 0, 0, 0, 1], Y_guess=[0.45, 0.1, -0.9, 0, 0, 0, 1], n=6)  # fmt: skip


def test_plan_poses_for_a_scara_names_the_undetermined_vertical_offset():
    from kinhec.planner import plan_poses
    from kinhec.solvers import pair_model as pm

    plan = plan_poses(**SCARA_PLAN)
    assert len(plan) == 6 and not np.isfinite(plan.sigma_mm).any()
    # the truth: every planned flange pose has its z axis straight down, so moving the marker up the flange's -z
    # axis and the camera up the base's z axis by the same amount leaves every predicted observation unchanged
    assert np.abs(plan.T_base_ee[:, :3, 2] - [0.0, 0.0, -1.0]).max() < 1e-12
    X, Y = plan.scene.X, plan.scene.Y
    d = 0.05
    Xs, Ys = X.copy(), Y.copy()
    Xs[:3, 3] += np.array([0.0, 0.0, -d])  # X's translation is in the flange frame: along its -z axis (up)
    Ys[:3, 3] += np.array([0.0, 0.0, d])
    C0 = pm.predicted_camera_poses(plan.T_base_ee, X, Y, "eye_to_hand")
    C1 = pm.predicted_camera_poses(plan.T_base_ee, Xs, Ys, "eye_to_hand")
    np.testing.assert_allclose(C1, C0, rtol=0, atol=1e-12)
    (what,) = plan.details["undetermined"]
    assert what.startswith("X's translation along the flange's -z axis together with Y's translation along the base's "
                           "z axis (scara_ls6 has 4 joints")
    sigma = plan.details["sigma_given_undetermined_mm"]
    assert sigma is not None and 0 < sigma < 1.0


def test_plan_for_a_six_joint_arm_reports_nothing_undetermined():
    from kinhec.planner import plan_poses

    plan = plan_poses("ur5e", "eye_in_hand", "hd", "checker_9x6_25mm", [0, 0.05, 0.05, 0, 0, 0, 1],
                      [0.5, 0.1, 0.0, 0, 0, 0, 1], 8, seed=1)  # fmt: skip
    assert np.isfinite(plan.sigma_mm[-1])
    assert plan.details["undetermined"] == [] and plan.details["sigma_given_undetermined_mm"] is None


def test_planner_page_shows_the_sentence_plan_poses_prints():
    from pathlib import Path

    from kinhec.planner import plan_poses

    page = (Path(__file__).resolve().parents[1] / "docs" / "planner.md").read_text(encoding="utf-8")
    (what,) = plan_poses(**SCARA_PLAN).details["undetermined"]
    assert f"undetermined: {what}\n" in page


def test_published_form_of_the_scara_keeps_its_prismatic_joint():
    m = get_robot("scara_ls6")
    d = m.to_published_dict()
    assert d["joint_types"] == ["revolute", "revolute", "prismatic", "revolute"] and d["q_min"][2] == -0.2
    q = _draw(m, 20, 12)
    np.testing.assert_array_equal(RobotModel.from_dict(d).fk(q), m.fk(q))
    assert "joint_types" not in get_robot("ur5e").to_published_dict()


def test_info_lists_the_machines_apart_from_the_published_robots():
    from click.testing import CliRunner

    from kinhec.cli import main
    from kinhec.dataset.inventory import inventory

    data = inventory()
    assert [r["name"] for r in data["robots"]] == list(ROBOT_NAMES)
    assert [(r["name"], r["joints"]) for r in data["machines"]] == [
        ("scara_ls6", "RRPR"), ("palletiser_irb460", "RRRR"), ("gantry_xyzr", "PPPR")]
    out = CliRunner().invoke(main, ["info"], terminal_width=200).output
    assert "Reduced-DOF machines (kinhec only: not in the published tiers; flange level)" in out
    assert all(name in out for name in MACHINE_NAMES)


def test_plan_poses_says_why_a_machine_finds_no_pose_under_rough_guesses():
    from kinhec.planner import plan_poses

    # the camera looks straight down: 10 deg off guesses lose the board in some of the perturbed scenes from every
    # pose, so a plan asked to keep it in view in all of them finds none (the default keeps it in 75 % of them)
    with pytest.raises(InputError) as exc:
        plan_poses("scara_ls6", "eye_in_hand", "hd", "checker_9x6_25mm", [0, 0, 0.05, 0, 0, 0, 1],
                   [0.45, 0, -0.6, 0, 0, 0, 1], 10, min_visible_fraction=1.0)  # fmt: skip
    msg = str(exc.value)
    assert "(joint draws 30000," in msg and "target visible 0, feasible 0" in msg and "ik solved" not in msg
    assert "scara_ls6 has 4 joints and cannot turn the camera or marker towards the target" in msg
