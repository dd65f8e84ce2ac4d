"""Your own arm from a DH-table YAML or a URDF (kinhec.models.robot_files) against ground truth."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from kinhec.models.robot_files import load_robot, robot_from_dh_yaml, robot_from_urdf, rpy_matrix
from kinhec.models.robots import RobotModel, get_robot
from kinhec.util.errors import InputError

from helpers.checks import one_line_error_naming

DOCS = Path(__file__).resolve().parents[1] / "docs" / "planner_files"
KR6_URDF = DOCS / "kr6_r900.urdf"
KR6_DH = DOCS / "kr6_r900_dh.yaml"


def _preset_yaml(model: RobotModel) -> str:
    """A preset arm written out as a DH-table YAML (every number as Python prints it)."""
    lines = [f"name: {model.name}_yaml", f"convention: {model.convention}", "joints:"]
    r = lambda v: repr(float(v))  # noqa: E731
    for i in range(model.dof):
        lines.append(
            f"  - {{a_m: {r(model.a_m[i])}, alpha_deg: {r(math.degrees(model.alpha_rad[i]))}, d_m: {r(model.d_m[i])}, "
            f"theta_offset_deg: {r(math.degrees(model.theta_offset_rad[i]))}, sign: {int(model.joint_sign[i])}, "
            f"limits_deg: [{r(math.degrees(model.q_min_rad[i]))}, {r(math.degrees(model.q_max_rad[i]))}]}}"
        )
    if not np.array_equal(model.tool, np.eye(4)):
        lines.append(f"tool: {{matrix: {model.tool.tolist()}}}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", ["ur5e", "panda", "irb120", "iiwa14"])
def test_preset_written_as_dh_yaml_has_the_presets_kinematics(tmp_path, name):
    preset = get_robot(name)
    path = tmp_path / f"{name}.yaml"
    path.write_text(_preset_yaml(preset))
    model = robot_from_dh_yaml(path)
    q = np.random.default_rng(7).uniform(-2 * np.pi, 2 * np.pi, (500, preset.dof))
    assert np.abs(model.fk(q) - preset.fk(q)).max() <= 1e-12
    assert np.abs(model.jacobian(q) - preset.jacobian(q)).max() <= 1e-12
    assert np.allclose(model.q_min_rad, preset.q_min_rad) and np.allclose(model.q_max_rad, preset.q_max_rad)
    assert model.joint_names == tuple(f"j{i + 1}" for i in range(preset.dof))


def test_dh_yaml_fk_equals_a_hand_computation(tmp_path):
    # two joints, standard DH: T = Rz(q1) Tz(d1) Tx(a1) Rx(90) Rz(q2 + 30) Tx(a2), then a tool 0.1 m along z
    path = tmp_path / "two.yaml"
    path.write_text("convention: standard\njoints:\n"
                    "  - {a_m: 0.3, alpha_deg: 90, d_m: 0.2, limits_deg: [-180, 180], name: hip}\n"
                    "  - {a_m: 0.25, alpha_deg: 0, d_m: 0, theta_offset_deg: 30, limits_deg: [-90, 90]}\n"
                    "tool: {xyz_m: [0, 0, 0.1], rpy_deg: [0, 0, 0]}\nhome_deg: [0, 10]\nreach_m: 0.6\n")
    m = robot_from_dh_yaml(path)
    q1, q2 = 0.4, -0.7
    t2 = q2 + math.radians(30)
    # by hand: the elbow after joint 1 sits at Rz(q1) (a1, 0, d1); link 2 lies in the plane spanned by
    # x1 = (cos q1, sin q1, 0) and y1 = z0 turned by alpha = 90 deg, i.e. (0, 0, 1)
    x1 = np.array([math.cos(q1), math.sin(q1), 0.0])
    y1 = np.array([0.0, 0.0, 1.0])
    z1 = np.cross(x1, y1)
    elbow = 0.3 * x1 + np.array([0, 0, 0.2])
    x2 = math.cos(t2) * x1 + math.sin(t2) * y1
    flange = elbow + 0.25 * x2 + 0.1 * z1
    T = m.fk([q1, q2])
    assert np.abs(T[:3, 3] - flange).max() <= 1e-15
    assert np.abs(T[:3, 0] - x2).max() <= 1e-15 and np.abs(T[:3, 2] - z1).max() <= 1e-15
    assert m.joint_names == ("hip", "j2") and m.reach_m == 0.6
    assert np.allclose(np.degrees(m.home_q_rad), [0, 10])


def test_rpy_is_urdfs():
    r, p, y = 0.3, -0.2, 1.1
    Rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    Ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    Rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    assert np.abs(rpy_matrix(r, p, y) - Rz @ Ry @ Rx).max() <= 1e-15


@pytest.mark.parametrize("text, expected", [
    ("convention: craig\njoints: []\n", "convention: expected standard"),
    ("convention: standard\njoints: []\n", "joints: expected a list"),
    ("convention: standard\njoints:\n  - {a_m: 0, alpha_deg: 0, d_m: 0}\n", "joints[1]: expected the key limits_deg"),
    ("convention: standard\njoints:\n  - {a_m: 0, alpha_deg: 0, d_m: x, limits_deg: [-1, 1]}\n", "d_m: expected a number"),
    ("convention: standard\njoints:\n  - {a_m: 0, alpha_deg: 0, d_m: 0, limits_deg: [1, -1]}\n", "lower < upper"),
    ("convention: standard\njoints: [\n", "invalid YAML"),
    ("convention: standard\nlinks: 3\n", "unknown key(s) links"),
])  # fmt: skip
def test_bad_dh_yaml_is_one_line_naming_the_file(tmp_path, text, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    one_line_error_naming(robot_from_dh_yaml, path, expected)


def test_urdf_chain_equals_the_dh_table_it_was_written_from():
    pytest.importorskip("yourdfpy", reason="URDF reading needs yourdfpy (the robots extra)")
    urdf = robot_from_urdf(KR6_URDF, "base_link", "tool0")
    dh = robot_from_dh_yaml(KR6_DH)
    assert urdf.convention == "chain" and urdf.dof == 6 and urdf.base_frame == "base_link"
    assert urdf.joint_names == tuple(f"joint_a{i}" for i in range(1, 7))
    assert np.allclose(urdf.q_min_rad, dh.q_min_rad) and np.allclose(urdf.qd_max_rad_s, dh.qd_max_rad_s)
    q = np.random.default_rng(3).uniform(dh.q_min_rad, dh.q_max_rad, (1000, 6))
    assert np.abs(urdf.fk(q) - dh.fk(q)).max() <= 1e-12
    assert np.abs(urdf.jacobian(q) - dh.jacobian(q)).max() <= 1e-12


def test_urdf_chain_fk_equals_yourdfpys_fk():
    yourdfpy = pytest.importorskip("yourdfpy", reason="URDF reading needs yourdfpy (the robots extra)")
    model = robot_from_urdf(KR6_URDF, "base_link", "link_3")  # a chain that stops inside the arm
    full = robot_from_urdf(KR6_URDF, "base_link", "tool0")
    u = yourdfpy.URDF.load(str(KR6_URDF), build_scene_graph=True, load_meshes=False)
    rng = np.random.default_rng(4)
    for q in rng.uniform(full.q_min_rad, full.q_max_rad, (50, 6)):
        u.update_cfg(q)
        assert np.abs(u.get_transform("tool0", "base_link") - full.fk(q)).max() <= 1e-12
        assert np.abs(u.get_transform("link_3", "base_link") - model.fk(q[:3])).max() <= 1e-12


def test_urdf_general_axes_and_origins(tmp_path):
    yourdfpy = pytest.importorskip("yourdfpy", reason="URDF reading needs yourdfpy (the robots extra)")
    path = tmp_path / "odd.urdf"
    path.write_text("""<robot name="odd"><link name="w"/><link name="a"/><link name="b"/><link name="c"/><link name="t"/>
 <joint name="f0" type="fixed"><parent link="w"/><child link="a"/><origin xyz="0.1 -0.2 0.3" rpy="0.2 0.1 -0.4"/></joint>
 <joint name="r1" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0.1 0.2" rpy="0.5 -0.3 0.2"/>
  <axis xyz="0.3 -0.5 0.8"/><limit lower="-2" upper="2" effort="1" velocity="1.5"/></joint>
 <joint name="r2" type="continuous"><parent link="b"/><child link="c"/><origin xyz="0.3 0 0" rpy="0 1.2 0"/>
  <axis xyz="0 -1 0"/></joint>
 <joint name="r3" type="revolute"><parent link="c"/><child link="t"/><origin xyz="0.05 0.2 0" rpy="0 0 0"/>
  <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="1" velocity="0"/></joint></robot>""")
    m = robot_from_urdf(path, "w", "t")
    u = yourdfpy.URDF.load(str(path), build_scene_graph=True, load_meshes=False)
    for q in np.random.default_rng(5).uniform(-1, 1, (50, 3)):
        u.update_cfg(q)
        assert np.abs(u.get_transform("t", "w") - m.fk(q)).max() <= 1e-12
    assert np.allclose(np.degrees(m.q_max_rad), [math.degrees(2), 360, math.degrees(1)])


@pytest.mark.parametrize("base, tip, expected", [
    ("link_4", "camera_mount", "no path"),
    ("link_4", "link_2", "no path"),
    ("base_link", "flange", "expected the tip link to be one of"),
    ("world", "tool0", "expected the base link to be one of"),
])  # fmt: skip
def test_bad_urdf_chain_is_one_line(base, tip, expected):
    pytest.importorskip("yourdfpy", reason="URDF reading needs yourdfpy (the robots extra)")
    with pytest.raises(InputError) as exc:
        robot_from_urdf(KR6_URDF, base, tip)
    msg = str(exc.value)
    assert msg.startswith(str(KR6_URDF)) and expected in msg and "\n" not in msg


def test_load_robot_dispatches():
    assert load_robot("ur5e") is get_robot("ur5e")
    assert load_robot(KR6_DH).name == "kr6_r900"
    with pytest.raises(InputError, match="--base-link"):
        load_robot(str(KR6_URDF))


def test_chain_model_round_trips_through_to_dict():
    pytest.importorskip("yourdfpy", reason="URDF reading needs yourdfpy (the robots extra)")
    m = robot_from_urdf(KR6_URDF, "base_link", "tool0")
    back = RobotModel.from_dict(m.to_dict())
    q = np.random.default_rng(6).uniform(-1, 1, (20, 6))
    assert np.array_equal(back.fk(q), m.fk(q)) and back.joint_names == m.joint_names
    with pytest.raises(InputError, match="without a DH table"):
        m.perturbed(np.random.default_rng(0), 1e-3, 1e-3)
