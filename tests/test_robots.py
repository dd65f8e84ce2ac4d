"""Tests of the manipulator models (kinhec.models.robots).

Forward kinematics is checked against references that do not go through
``RobotModel.fk``:

* a product-of-exponentials chain per arm, whose screw axes and home flange pose
  were derived by hand from the zero configuration (derivations in the comments);
* a textbook 4x4 Denavit-Hartenberg product, for perturbed (non-90-degree)
  geometries where the sparse fast path of the library has to handle every entry;
* published poses (IRB 120 calibration pose, UR5 and Panda zero poses, PUMA pedestal).
"""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from kinhec.geometry import se3
from kinhec.models import robots
from kinhec.util.errors import InputError, UnknownNameError
from kinhec.models.robots import ROBOT_NAMES, get_robot, robots_json

ARMS = ROBOT_NAMES[:-1]
EX, EY, EZ = np.eye(3)


def random_q(model, rng, n):
    return rng.uniform(model.q_min_rad, model.q_max_rad, size=(n, model.dof))


def Rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def Ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def homog(R=np.eye(3), p=(0.0, 0.0, 0.0)):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


# --------------------------------------------------------------------------- #
# independent reference 1: product of exponentials from hand-derived screw axes
# --------------------------------------------------------------------------- #
def poe_fk(axes, points, M, q):
    """T(q) = exp([w1, r1] q1) ... exp([wn, rn] qn) M for revolute screws through points r_i."""
    q = np.atleast_2d(q)
    T = np.broadcast_to(np.eye(4), (q.shape[0], 4, 4)).copy()
    for w, r, qi in zip(axes, points, q.T):
        R = Rotation.from_rotvec(np.outer(qi, w)).as_matrix()  # (N, 3, 3)
        E = np.zeros((q.shape[0], 4, 4))
        E[:, :3, :3] = R
        E[:, :3, 3] = (np.eye(3) - R) @ np.asarray(r, dtype=float)  # rotation about the line through r
        E[:, 3, 3] = 1.0
        T = T @ E
    return T @ M


UR_DIMS = {  # d1, a2, a3, d4, d5, d6 of the UR tables
    "ur3": (0.1519, -0.24365, -0.21325, 0.11235, 0.08535, 0.0819),
    "ur5": (0.089159, -0.425, -0.39225, 0.10915, 0.09465, 0.0823),
    "ur10": (0.1273, -0.612, -0.5723, 0.163941, 0.1157, 0.0922),
    "ur3e": (0.15185, -0.24355, -0.2132, 0.13105, 0.08535, 0.0921),
    "ur5e": (0.1625, -0.425, -0.3922, 0.1333, 0.0997, 0.0996),
    "ur10e": (0.1807, -0.6127, -0.57155, 0.17415, 0.11985, 0.11655),
    "ur16e": (0.1807, -0.4784, -0.36, 0.17415, 0.11985, 0.11655),
    "ur20": (0.2363, -0.862, -0.7287, 0.201, 0.1593, 0.1543),
}


def ur_screws(d1, a2, a3, d4, d5, d6):
    # Zero configuration of a UR arm (standard DH, alpha = 90, 0, 0, 90, -90, 0):
    # frame 1 sits at height d1 with z1 = -y; a2 and a3 (negative numbers) run along x,
    # so joints 2, 3, 4 are parallel to -y at x = 0, a2, a2 + a3; d4 moves along -y to
    # the wrist, joint 5 points down (-z), d5 moves down, joint 6 points along -y and
    # d6 moves along -y.  Flange: (a2 + a3, -(d4 + d6), d1 - d5), orientation Rx(90).
    x = a2 + a3
    axes = [EZ, -EY, -EY, -EY, -EZ, -EY]
    points = [(0, 0, 0), (0, 0, d1), (a2, 0, d1), (x, 0, d1), (x, -d4, d1), (x, -d4, d1 - d5)]
    return axes, points, homog(Rx(np.pi / 2), (x, -(d4 + d6), d1 - d5))


def panda_screws():
    # Craig DH at zero: joint 1 up through the base; joint 2 along +y at z = 0.333;
    # joint 3 up at z = 0.333 + 0.316; joint 4 along -y through (0.0825, 0, 0.649);
    # joint 5 up at x = 0 (a = -0.0825 undoes the offset) with the 0.384 link: z = 1.033;
    # joint 6 along -y at (0, 0, 1.033); joint 7 points down (-z) at x = 0.088.
    # Flange 0.107 below frame 7: (0.088, 0, 0.926), orientation Rx(180) = diag(1, -1, -1).
    axes = [EZ, EY, EZ, -EY, EZ, -EY, -EZ]
    points = [(0, 0, 0), (0, 0, 0.333), (0, 0, 0.649), (0.0825, 0, 0.649), (0, 0, 1.033), (0, 0, 1.033),
              (0.088, 0, 1.033)]
    return axes, points, homog(Rx(np.pi), (0.088, 0.0, 0.926))


def iiwa_screws(d1, d3, d5=0.4, d7=0.126):
    # Standard DH with a = 0 and alpha = -90, 90, 90, -90, -90, 90, 0: at zero the arm is a
    # vertical column; the roll joints 1, 3, 5, 7 point up, the pitch joints 2, 4, 6 lie at
    # heights d1, d1 + d3, d1 + d3 + d5 along +y, -y, +y.  Flange straight up, identity rotation.
    h2, h4, h6 = d1, d1 + d3, d1 + d3 + d5
    axes = [EZ, EY, EZ, -EY, EZ, EY, EZ]
    points = [(0, 0, 0), (0, 0, h2), (0, 0, h2), (0, 0, h4), (0, 0, h4), (0, 0, h6), (0, 0, h6)]
    return axes, points, homog(np.eye(3), (0, 0, h6 + d7))


def irb120_screws():
    # ABB calibration pose: joint 1 up; joint 2 along +y at z = 0.29; the upper arm (0.27)
    # stands vertical; joint 3 sits at z = 0.56 with DH axis +y but joint sign -1, so its
    # screw is -y; the 0.07 offset brings the forearm axis (joint 4, along +x) to z = 0.63;
    # the wrist (joints 5 along +y and 6 along +x) is 0.302 further out and the flange
    # 0.072 beyond it: tool0 at (0.374, 0, 0.630) with rotation Ry(90) (x down, z forward).
    axes = [EZ, EY, -EY, EX, EY, EX]
    points = [(0, 0, 0), (0, 0, 0.29), (0, 0, 0.56), (0, 0, 0.63), (0.302, 0, 0.63), (0.302, 0, 0.63)]
    return axes, points, homog(Ry(np.pi / 2), (0.374, 0.0, 0.63))


def puma_screws():
    # Corke's standard-DH PUMA at zero: joint 1 up; shoulder joint 2 along -y on top of the
    # 0.67183 m pedestal; the 0.4318 upper arm runs along +x to joint 3 (-y); there the
    # 0.15005 offset goes along -y and the 0.0203 along +x; the 0.4318 forearm goes up to the
    # spherical wrist: joints 4 (up), 5 (-y), 6 (up) meet at (0.4521, -0.15005, 1.10363),
    # which is also the flange (identity rotation).
    h = 0.67183
    w = (0.4318 + 0.0203, -0.15005, h + 0.4318)
    axes = [EZ, -EY, -EY, EZ, -EY, EZ]
    points = [(0, 0, 0), (0, 0, h), (0.4318, 0, h), (w[0], w[1], h), w, w]
    return axes, points, homog(np.eye(3), w)


def reference_screws(name):
    if name in UR_DIMS:
        return ur_screws(*UR_DIMS[name])
    return {
        "panda": panda_screws,
        "iiwa7": lambda: iiwa_screws(0.34, 0.40),
        "iiwa14": lambda: iiwa_screws(0.36, 0.42),
        "irb120": irb120_screws,
        "puma560": puma_screws,
    }[name]()


# --------------------------------------------------------------------------- #
# independent reference 2: textbook DH, one 4x4 product per joint and configuration
# --------------------------------------------------------------------------- #
def textbook_dh_fk(model, q):
    out = []
    for qk in np.atleast_2d(q):
        T = np.eye(4)
        for i in range(model.dof):
            th = model.joint_sign[i] * qk[i] + model.theta_offset_rad[i]
            ct, st = np.cos(th), np.sin(th)
            ca, sa = np.cos(model.alpha_rad[i]), np.sin(model.alpha_rad[i])
            a, d = model.a_m[i], model.d_m[i]
            if model.convention == "standard":  # Rz(th) Tz(d) Tx(a) Rx(alpha)
                A = np.array([[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st],
                              [0, sa, ca, d], [0, 0, 0, 1]])
            else:  # Rx(alpha) Tx(a) Rz(th) Tz(d)
                A = np.array([[ct, -st, 0, a], [st * ca, ct * ca, -sa, -sa * d],
                              [st * sa, ct * sa, ca, ca * d], [0, 0, 0, 1]])
            T = T @ A
        out.append(T @ model.tool)
    return np.array(out)


# --------------------------------------------------------------------------- #
# registry
# --------------------------------------------------------------------------- #
def test_registry_matches_published_table():
    assert ROBOT_NAMES == ("ur3", "ur5", "ur10", "ur3e", "ur5e", "ur10e", "ur16e", "ur20",
                           "panda", "iiwa7", "iiwa14", "irb120", "puma560", "free6d")
    table = {  # dof, convention, control rate [Hz], reach [m]
        "ur3": (6, "standard", 125, 0.5), "ur5": (6, "standard", 125, 0.85), "ur10": (6, "standard", 125, 1.3),
        "ur3e": (6, "standard", 500, 0.5), "ur5e": (6, "standard", 500, 0.85), "ur10e": (6, "standard", 500, 1.3),
        "ur16e": (6, "standard", 500, 0.9), "ur20": (6, "standard", 500, 1.75),
        "panda": (7, "modified", 1000, 0.855), "iiwa7": (7, "standard", 500, 0.8),
        "iiwa14": (7, "standard", 500, 0.82), "irb120": (6, "standard", 250, 0.58),
        "puma560": (6, "standard", 100, 0.88), "free6d": (0, "free", 100, 1.0),
    }
    for name, (dof, conv, rate, reach) in table.items():
        m = get_robot(name)
        assert (m.name, m.dof, m.convention, m.control_rate_hz, m.reach_m) == (name, dof, conv, rate, reach)
        assert m.is_free == (name == "free6d")
        assert m.source and m.description
        for f in ("a_m", "d_m", "alpha_rad", "theta_offset_rad", "joint_sign", "q_min_rad", "q_max_rad",
                  "qd_max_rad_s", "home_q_rad"):
            assert getattr(m, f).shape == (dof,)
        if dof:
            assert m.within_limits(m.home_q_rad)


def test_robots_json_is_the_published_form_in_si_units():
    d = json.loads(json.dumps(robots_json()))
    keys = ["name", "dof", "convention", "a", "d", "alpha", "theta_offset", "q_min", "q_max", "qd_max",
            "control_rate_hz", "tool", "q_sign", "reach_m", "description", "source", "home_q", "units"]
    for name, m in d.items():
        assert list(m) == keys, name
        back = robots.RobotModel.from_dict(m)
        ref = get_robot(name)
        for f in ("a_m", "d_m", "alpha_rad", "theta_offset_rad", "joint_sign", "q_min_rad", "q_max_rad", "home_q_rad"):
            assert np.allclose(getattr(back, f), getattr(ref, f), atol=1e-12), (name, f)
    assert d["ur5e"]["alpha"][0] == pytest.approx(np.pi / 2) and d["ur5e"]["a"][1] == -0.425
    assert d["irb120"]["q_sign"] == [1.0, 1.0, -1.0, 1.0, 1.0, 1.0] and d["ur5e"]["q_sign"] is None
    assert d["free6d"]["dof"] == 0 and d["free6d"]["convention"] == "standard" and d["free6d"]["home_q"] is None
    assert robots.RobotModel.from_dict(d["free6d"]).convention == "free"
    assert d["panda"]["units"] == {"a": "m", "d": "m", "alpha": "rad", "theta_offset": "rad", "q_min": "rad",
                                   "q_max": "rad", "qd_max": "rad/s"}


def test_spec_values_in_degrees():
    d = {name: get_robot(name).to_dict() for name in robots_json()}
    assert d["irb120"]["theta_offset_deg"] == [0.0, -90.0, 0.0, 0.0, 0.0, 180.0]
    assert d["irb120"]["joint_sign"] == [1.0, 1.0, -1.0, 1.0, 1.0, 1.0]
    assert d["irb120"]["q_min_deg"] == [-165.0, -110.0, -110.0, -160.0, -120.0, -400.0]
    assert d["panda"]["q_max_deg"] == [166.0, 101.0, 166.0, -4.0, 166.0, 215.0, 166.0]
    assert d["panda"]["qd_max_deg_s"] == [124.6, 124.6, 124.6, 124.6, 149.5, 149.5, 149.5]
    assert d["panda"]["home_q_deg"] == [0.0, -45.0, 0.0, -135.0, 0.0, 90.0, 45.0]
    assert d["panda"]["alpha_deg"] == [0.0, -90.0, 90.0, 90.0, -90.0, 90.0, 90.0]
    assert d["panda"]["tool"] == [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.107],
                                  [0.0, 0.0, 0.0, 1.0]]
    assert d["ur10"]["qd_max_deg_s"] == [120.0, 120.0, 180.0, 180.0, 180.0, 180.0]
    assert d["ur5e"]["home_q_deg"] == [0.0, -90.0, 90.0, -90.0, -90.0, 0.0]
    assert d["puma560"]["d_m"] == [0.67183, 0.0, 0.15005, 0.4318, 0.0, 0.0]
    assert d["puma560"]["q_max_deg"] == [160.03, 110.01, 134.99, 265.97, 99.98, 265.97]
    assert d["iiwa14"]["d_m"] == [0.36, 0.0, 0.42, 0.0, 0.4, 0.0, 0.126]
    assert d["ur3"]["tool"] is None
    assert d["free6d"]["dof"] == 0 and d["free6d"]["a_m"] == [] and d["free6d"]["control_rate_hz"] == 100.0


# --------------------------------------------------------------------------- #
# forward kinematics
# --------------------------------------------------------------------------- #
def test_irb120_calibration_pose():
    T = get_robot("irb120").fk(np.zeros(6))
    np.testing.assert_allclose(T[:3, 3], [0.374, 0.0, 0.630], atol=1e-12)
    q_wxyz = se3.quaternion_from_matrix(T[:3, :3])
    np.testing.assert_allclose(q_wxyz, [np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0], atol=1e-12)
    assert np.round(q_wxyz, 4).tolist() == [0.7071, 0.0, 0.7071, 0.0]


def test_known_zero_poses():
    # UR5 at zero: flange at (a2 + a3, -(d4 + d6), d1 - d5) = (-0.81725, -0.19145, -0.005491), x along
    # base x, z along -y (Rx(90)); the published UR5 zero pose.
    T = get_robot("ur5").fk(np.zeros(6))
    np.testing.assert_allclose(T[:3, 3], [-0.81725, -0.19145, -0.005491], atol=1e-12)
    np.testing.assert_allclose(T[:3, :3], [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-15)
    # Panda at zero: flange at (0.088, 0, 0.926) pointing down.
    T = get_robot("panda").fk(np.zeros(7))
    np.testing.assert_allclose(T, homog(np.diag([1.0, -1.0, -1.0]), (0.088, 0.0, 0.926)), atol=1e-15)
    # PUMA 560 at zero: wrist centre = flange at (0.4521, -0.15005, 0.67183 + 0.4318).
    T = get_robot("puma560").fk(np.zeros(6))
    np.testing.assert_allclose(T, homog(np.eye(3), (0.4521, -0.15005, 1.10363)), atol=1e-15)
    # iiwa 14 at zero: straight up, 0.36 + 0.42 + 0.40 + 0.126.
    np.testing.assert_allclose(get_robot("iiwa14").fk(np.zeros(7)), homog(np.eye(3), (0, 0, 1.306)), atol=1e-15)


def test_pedestal_and_panda_flange_offset():
    rng = np.random.default_rng(3)
    puma = get_robot("puma560")
    F = puma.joint_frames(random_q(puma, rng, 20))
    # frame 1 (after joint 1) sits on top of the pedestal whatever q1; the shoulder axis z1 is horizontal
    np.testing.assert_allclose(F[:, 1, :3, 3], np.tile([0.0, 0.0, 0.67183], (20, 1)), atol=1e-12)
    np.testing.assert_allclose(F[:, 1, 2, 2], 0.0, atol=1e-12)
    panda = get_robot("panda")
    q = random_q(panda, rng, 20)
    T_flange = panda.fk(q)
    T_frame7 = dataclasses.replace(panda, tool=np.eye(4)).fk(q)
    # the flange is 0.107 m along the z axis of DH frame 7, with the same orientation
    np.testing.assert_allclose(T_flange[:, :3, 3] - T_frame7[:, :3, 3], 0.107 * T_frame7[:, :3, 2], atol=1e-12)
    np.testing.assert_allclose(T_flange[:, :3, :3], T_frame7[:, :3, :3], atol=1e-15)


@pytest.mark.parametrize("name", ARMS)
def test_fk_matches_product_of_exponentials(name):
    model = get_robot(name)
    axes, points, M = reference_screws(name)
    rng = np.random.default_rng(100 + ARMS.index(name))
    q = np.vstack([np.zeros(model.dof), random_q(model, rng, 50)])
    T = model.fk(q)
    T_ref = poe_fk(axes, points, M, q)
    np.testing.assert_allclose(T, T_ref, atol=1e-9, rtol=0)
    rot_deg, trans_mm = se3.pose_error(T, T_ref)
    assert rot_deg.max() < np.degrees(1e-9) and trans_mm.max() < 1e-6


@pytest.mark.parametrize("name", ["ur5e", "panda", "iiwa7", "irb120", "puma560"])
def test_fk_of_perturbed_geometry_matches_textbook_dh(name):
    rng = np.random.default_rng(11)
    true = get_robot(name).perturbed(rng, 0.01, 0.05, 0.1)  # large errors: no entry is 0 or 1
    q = random_q(true, rng, 30)
    np.testing.assert_allclose(true.fk(q), textbook_dh_fk(true, q), atol=1e-12, rtol=0)


def test_fk_shapes_and_chunking(monkeypatch):
    model = get_robot("ur10e")
    rng = np.random.default_rng(5)
    q = random_q(model, rng, 25)
    T = model.fk(q)
    assert T.shape == (25, 4, 4) and model.fk(q[0]).shape == (4, 4)
    np.testing.assert_array_equal(T[:, 3], np.tile([0.0, 0.0, 0.0, 1.0], (25, 1)))
    se3.check_transforms(T, "T", tol=1e-12)
    assert model.fk(q.reshape(5, 5, 6)).shape == (5, 5, 4, 4)
    assert model.fk(np.zeros((0, 6))).shape == (0, 4, 4)
    monkeypatch.setattr(robots, "FK_CHUNK", 7)  # chunk boundaries fall inside the batch
    np.testing.assert_array_equal(model.fk(q), T)
    T2, J2 = model.fk_jacobian(q)
    np.testing.assert_array_equal(T2, T)
    monkeypatch.undo()
    np.testing.assert_allclose(J2, model.jacobian(q), atol=1e-15)


def test_joint_frames():
    rng = np.random.default_rng(8)
    for name in ("ur5", "panda", "irb120"):
        model = get_robot(name)
        q = random_q(model, rng, 6)
        F = model.joint_frames(q)
        assert F.shape == (6, model.dof + 1, 4, 4)
        np.testing.assert_array_equal(F[:, 0], np.broadcast_to(np.eye(4), (6, 4, 4)))
        np.testing.assert_allclose(F[:, -1], model.fk(q), atol=1e-14)
        assert model.joint_frames(q[0]).shape == (model.dof + 1, 4, 4)
    # UR5 at zero: the DH frame origins derived in ur_screws
    d1, a2, a3, d4, d5, d6 = UR_DIMS["ur5"]
    F = get_robot("ur5").joint_frames(np.zeros(6))
    x = a2 + a3
    expected = [(0, 0, 0), (0, 0, d1), (a2, 0, d1), (x, 0, d1), (x, -d4, d1), (x, -d4, d1 - d5), (x, -d4 - d6, d1 - d5)]
    np.testing.assert_allclose(F[:, :3, 3], expected, atol=1e-15)


def test_within_limits():
    panda = get_robot("panda")
    q = np.array([panda.q_min_rad, panda.q_max_rad, panda.home_q_rad, panda.home_q_rad])
    q[3, 3] = np.radians(10.0)  # joint 4 must stay below -4 deg
    np.testing.assert_array_equal(panda.within_limits(q), [True, True, True, False])
    assert panda.within_limits(panda.home_q_rad).shape == ()


# --------------------------------------------------------------------------- #
# Jacobian
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("name", ARMS)
def test_jacobian_matches_finite_differences(name):
    model = get_robot(name)
    rng = np.random.default_rng(21)
    q = random_q(model, rng, 4)
    J = model.jacobian(q)
    assert J.shape == (4, 6, model.dof)
    h = 1e-6
    for i in range(model.dof):
        dq = np.zeros(model.dof)
        dq[i] = h
        Tp, Tm = model.fk(q + dq), model.fk(q - dq)
        # angular velocity in the base frame: R(q + h) = exp(omega * 2h) R(q - h)
        omega = Rotation.from_matrix(Tp[:, :3, :3] @ np.swapaxes(Tm[:, :3, :3], 1, 2)).as_rotvec() / (2 * h)
        v = (Tp[:, :3, 3] - Tm[:, :3, 3]) / (2 * h)
        np.testing.assert_allclose(J[:, :3, i], omega, atol=1e-8)
        np.testing.assert_allclose(J[:, 3:, i], v, atol=1e-8)
    assert model.jacobian(q[0]).shape == (6, model.dof)


# --------------------------------------------------------------------------- #
# inverse kinematics
# --------------------------------------------------------------------------- #
def test_ik_round_trips_every_arm():
    rng = np.random.default_rng(2024)
    n = 40
    rates = {}
    for name in ARMS:
        model = get_robot(name)
        q_true = random_q(model, rng, n)
        T_target = model.fk(q_true)
        res = model.ik(T_target, rng)
        assert res.q.shape == (n, model.dof) and res.success.shape == (n,)
        rates[name] = res.success_rate
        ok = res.success
        # a success really reproduces the pose (checked independently of the reported errors) ...
        rot_deg, trans_mm = se3.pose_error(model.fk(res.q[ok]), T_target[ok])
        assert np.all(np.radians(rot_deg) <= 1.5e-6) and np.all(trans_mm <= 1.5e-3)
        assert np.all(model.within_limits(res.q[ok]))
        assert np.all(res.pos_err_m[ok] <= 1e-6) and np.all(res.rot_err_rad[ok] <= 1e-6)
        # ... and every reported error is the true residual of the returned q
        rot_deg_all, trans_mm_all = se3.pose_error(model.fk(res.q), T_target)
        np.testing.assert_allclose(res.pos_err_m, trans_mm_all / 1000, atol=1e-12)
        np.testing.assert_allclose(res.rot_err_rad, np.radians(rot_deg_all), atol=1e-7)
        assert np.all(model.within_limits(res.q))
    print("IK success rates:", {k: f"{v:.0%}" for k, v in rates.items()})
    assert min(rates.values()) >= 0.95
    assert np.mean(list(rates.values())) >= 0.98


def test_ik_unreachable_targets_fail():
    rng = np.random.default_rng(1)
    for name in ("ur5e", "panda"):
        model = get_robot(name)
        T = model.fk(random_q(model, rng, 4))
        T[:, :3, 3] += [5.0, 0.0, 0.0]  # 5 m further out
        res = model.ik(T, rng, n_restarts=2)
        assert not res.success.any()
        assert np.all(res.pos_err_m > 3.0)


def test_ik_warm_start_single_target_and_determinism():
    model = get_robot("ur5e")
    rng = np.random.default_rng(9)
    q_true = random_q(model, rng, 1)[0]
    q_true = np.clip(q_true, -np.pi, np.pi)
    T = model.fk(q_true)
    res = model.ik(T, np.random.default_rng(0), q_init=q_true + 0.02)
    assert res.q.shape == (6,) and bool(res.success)
    np.testing.assert_allclose(res.q, q_true, atol=1e-5)  # converges to the nearby branch, same turn
    # same inputs and generator state -> same answer
    Ts = model.fk(random_q(model, rng, 10))
    r1 = model.ik(Ts, np.random.default_rng(4))
    r2 = model.ik(Ts, np.random.default_rng(4))
    np.testing.assert_array_equal(r1.q, r2.q)
    assert model.ik(np.zeros((0, 4, 4)), rng).q.shape == (0, 6)


# --------------------------------------------------------------------------- #
# perturbed models
# --------------------------------------------------------------------------- #
def test_perturbed_statistics_and_nominal_untouched():
    nominal = get_robot("ur5")
    before = {k: v.copy() for k, v in nominal.to_dict().items() if isinstance(v, list)}
    rng = np.random.default_rng(77)
    len_std, ang_std, th_std = 1e-3, 2e-3, 5e-3
    draws = [nominal.perturbed(rng, len_std, ang_std, th_std) for _ in range(500)]
    for field, std in (("a_m", len_std), ("d_m", len_std), ("alpha_rad", ang_std), ("theta_offset_rad", th_std)):
        err = np.array([getattr(m, field) - getattr(nominal, field) for m in draws])
        assert abs(err.std() / std - 1) < 0.05, field
        assert abs(err.mean()) < 4 * std / np.sqrt(err.size), field
        assert np.all(err.std(axis=0) > 0.8 * std)  # every joint is perturbed
    for field in ("joint_sign", "q_min_rad", "q_max_rad", "qd_max_rad_s", "home_q_rad", "tool"):
        np.testing.assert_array_equal(getattr(draws[0], field), getattr(nominal, field))
    assert draws[0].name == "ur5"
    # theta std defaults to the angular std
    err = np.array([nominal.perturbed(rng, 0.0, ang_std).theta_offset_rad for _ in range(300)])
    assert abs(err.std() / ang_std - 1) < 0.1
    # the registry model is unchanged and immutable
    after = {k: v for k, v in nominal.to_dict().items() if isinstance(v, list)}
    assert after == before
    assert get_robot("ur5") is nominal
    with pytest.raises(ValueError, match="read-only"):
        nominal.a_m[0] = 1.0
    # zero noise gives the nominal geometry; the same seed gives the same model
    same = nominal.perturbed(np.random.default_rng(0), 0.0, 0.0)
    np.testing.assert_array_equal(same.fk(nominal.home_q_rad), nominal.fk(nominal.home_q_rad))
    m1 = nominal.perturbed(np.random.default_rng(5), 1e-3, 1e-3)
    m2 = nominal.perturbed(np.random.default_rng(5), 1e-3, 1e-3)
    np.testing.assert_array_equal(m1.alpha_rad, m2.alpha_rad)


# --------------------------------------------------------------------------- #
# serialisation
# --------------------------------------------------------------------------- #
def test_to_dict_json_round_trip():
    data = json.loads(json.dumps(robots_json()))
    assert list(data) == list(ROBOT_NAMES)
    rng = np.random.default_rng(3)
    models = [get_robot(n) for n in ROBOT_NAMES] + [get_robot("panda").perturbed(rng, 1e-3, 1e-3)]
    for model in models:
        d = json.loads(json.dumps(model.to_dict()))
        back = robots.RobotModel.from_dict(d)
        for f in ("a_m", "d_m", "alpha_rad", "theta_offset_rad", "joint_sign", "q_min_rad", "q_max_rad",
                  "qd_max_rad_s", "home_q_rad", "tool"):
            np.testing.assert_array_equal(getattr(back, f), getattr(model, f), err_msg=f"{model.name}.{f}")
        assert (back.name, back.dof, back.convention, back.control_rate_hz, back.reach_m) == (
            model.name, model.dof, model.convention, model.control_rate_hz, model.reach_m)
        if model.dof:
            q = random_q(model, rng, 3)
            np.testing.assert_array_equal(back.fk(q), model.fk(q))


def test_pickle_keeps_model_immutable():
    model = get_robot("irb120").perturbed(np.random.default_rng(2), 1e-3, 1e-3)
    back = pickle.loads(pickle.dumps(model))
    q = random_q(model, np.random.default_rng(3), 4)
    np.testing.assert_array_equal(back.fk(q), model.fk(q))
    assert not back.a_m.flags.writeable and back.description == model.description


def test_free6d():
    free = get_robot("free6d")
    assert free.is_free and free.dof == 0 and free.convention == "free"
    assert free.control_rate_hz == 100.0 and free.reach_m == 1.0
    np.testing.assert_array_equal(free.tool, np.eye(4))
    np.testing.assert_array_equal(free.within_limits(np.zeros((3, 0))), [True, True, True])


# --------------------------------------------------------------------------- #
# error paths
# --------------------------------------------------------------------------- #
def test_bad_input_is_rejected():
    ur = get_robot("ur5e")
    with pytest.raises(InputError, match=r"q: expected shape \(\.\.\., 6\), got array of shape \(5,\)"):
        ur.fk(np.zeros(5))
    with pytest.raises(InputError, match=r"q: expected shape \(\.\.\., 6\), got array of shape \(3, 7\)"):
        ur.jacobian(np.zeros((3, 7)))
    q = np.zeros((2, 6))
    q[1, 2] = np.nan
    with pytest.raises(InputError, match="q: expected finite values, got 1 non-finite"):
        ur.fk(q)
    with pytest.raises(InputError, match="q: expected a numeric array"):
        ur.fk("zero")
    with pytest.raises(UnknownNameError, match=r"unknown robot 'ur6'; expected one of: .*iiwa14.*ur5e"):
        get_robot("ur6")
    with pytest.raises(UnknownNameError, match="unknown robot None"):
        get_robot(None)
    free = get_robot("free6d")
    for call in (lambda: free.fk(np.zeros((3, 0))), lambda: free.jacobian(np.zeros(0)),
                 lambda: free.ik(np.eye(4), np.random.default_rng(0)), lambda: free.joint_frames(np.zeros(0))):
        with pytest.raises(InputError, match="free6d.*no kinematic chain"):
            call()
    rng = np.random.default_rng(0)
    with pytest.raises(InputError, match="rng: expected a numpy.random.Generator, got int"):
        ur.ik(np.eye(4), 0)
    with pytest.raises(InputError, match=r"T_base_ee: expected shape \(\.\.\., 4, 4\)"):
        ur.ik(np.eye(3), rng)
    with pytest.raises(InputError, match=r"T_base_ee \(rotation block\): expected orthonormal"):
        ur.ik(np.diag([2.0, 1.0, 1.0, 1.0]), rng)
    with pytest.raises(InputError, match=r"q_init: expected shape \(6,\) or \(2, 6\), got array of shape \(3, 6\)"):
        ur.ik(np.stack([np.eye(4)] * 2), rng, q_init=np.zeros((3, 6)))
    with pytest.raises(InputError, match="n_restarts: expected an integer >= 0, got -1"):
        ur.ik(np.eye(4), rng, n_restarts=-1)
    with pytest.raises(InputError, match="len_std_m: expected a finite non-negative number, got -0.1"):
        ur.perturbed(rng, -0.1, 0.0)
    with pytest.raises(InputError, match="joint_sign: expected entries"):
        robots.RobotModel.from_dict({**ur.to_dict(), "joint_sign": [1, 1, 0, 1, 1, 1]})
    with pytest.raises(InputError, match=r"a_m: expected shape \(6,\), got array of shape \(5,\)"):
        robots.RobotModel.from_dict({**ur.to_dict(), "a_m": [0.0] * 5})
