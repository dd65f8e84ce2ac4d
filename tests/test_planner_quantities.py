"""The pose planner's model and pose files (:mod:`kinhec.planner.model`, :mod:`kinhec.planner.plan`) against hand
computations: the design criterion of a known information matrix, the bound curve of repeated poses, the flange
noise, the information's scaling with the pixel noise, the noise model's checks, and the pose rows (scalar-last
quaternion, its tolerance, the joints' agreement with the pose columns on both sides)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.models.cameras import get_camera, get_target
from kinhec.models.robots import get_robot
from kinhec.planner.model import (PlannerNoise, noise_model, pose_information, robot_flange_covariance, sigma_curve,
                                  x_translation_variance)
from kinhec.planner.plan import TAKEN_AGREEMENT_M, csv_header, pose_from_xyz_qxyzw, read_poses_csv
from kinhec.util.errors import InputError

S = math.sqrt(0.5)


def _info(var):
    """Information of independent unknowns with the variances ``var`` (12,)."""
    return np.diag(1.0 / np.asarray(var, dtype=float))


def test_design_criterion_of_a_known_information():
    var = np.full(12, 1e-4)
    var[3:6] = [1e-6, 4e-6, 9e-6]  # X's translation
    F = _info(var)
    assert x_translation_variance(F) == pytest.approx(14e-6, rel=1e-12)
    assert x_translation_variance(F, "max_eig") == pytest.approx(9e-6, rel=1e-12)
    # a correlated block: its trace and top eigenvalue
    C = np.diag(var)
    C[3, 4] = C[4, 3] = 1.5e-6
    got = x_translation_variance(np.linalg.inv(C)[None], "max_eig")
    assert got[0] == pytest.approx(np.linalg.eigvalsh(C[3:6, 3:6])[-1], rel=1e-9)
    assert x_translation_variance(np.zeros((12, 12))) == np.inf


def test_bound_curve_of_repeated_poses():
    # k copies of one pose: the covariance is 1/k of one pose's; RMS = sqrt(trace / k)
    var = np.r_[np.full(3, 1e-6), np.full(3, 4e-6), np.full(6, 1e-5)]
    curve = sigma_curve(np.repeat(_info(var)[None], 4, axis=0))
    k = np.arange(1, 5)
    assert np.allclose(curve["trans_rms_mm"], 1000 * np.sqrt(12e-6 / k), rtol=1e-9)
    assert np.allclose(curve["rot_rms_deg"], np.degrees(np.sqrt(3e-6 / k)), rtol=1e-9)
    # information taken before counts: one more pose's worth
    before = sigma_curve(_info(var)[None], F_before=_info(var))
    assert before["trans_rms_mm"][0] == pytest.approx(1000 * np.sqrt(12e-6 / 2), rel=1e-9)


def test_flange_noise_and_information_scaling():
    noise = noise_model("pnp", "r1", pixel_std=0.5)
    Sr = robot_flange_covariance(2, noise)
    assert Sr.shape == (2, 6, 6) and np.allclose(np.diag(Sr[1]), [0.0002**2] * 3 + [0.0001**2] * 3, rtol=1e-12)
    # no robot noise: the information is 1 / pixel variance times the pixels' geometry (halving the noise: 4 times)
    cam, tgt = get_camera("hd"), get_target("checker_9x6_25mm")
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.1, -0.2, 0.3]), [0.02, 0.03, 0.05])
    C = se3.transform_from_rotation_translation(se3.so3_exp([[np.pi, 0.1, 0.0], [np.pi, -0.2, 0.1]]),
                                                [[-0.1, -0.07, 0.6], [0.0, -0.05, 0.5]])
    F1 = pose_information(C, X, "eye_in_hand", noise_model("pnp", "r0", pixel_std=1.0), cam, tgt)
    F2 = pose_information(C, X, "eye_in_hand", noise_model("pnp", "r0", pixel_std=0.5), cam, tgt)
    assert np.all(np.isfinite(F1)) and np.linalg.norm(F1) > 0
    assert np.allclose(F2, 4.0 * F1, rtol=1e-6, atol=1e-6 * np.abs(F1).max())
    assert np.allclose(F1, np.swapaxes(F1, 1, 2), rtol=0, atol=1e-9 * np.abs(F1).max())


def test_noise_model_checks():
    n = noise_model("c2", "r1")
    assert (n.camera_model, n.camera_rot_std_rad, n.camera_trans_std_xy_m, n.camera_trans_std_z_m) == (
        "se3_gaussian", 0.002, 0.001, 0.003)
    assert n.to_dict() == {"camera_model": "se3_gaussian", "camera_rot_std_rad": 0.002, "camera_trans_std_xy_m": 0.001,
                           "camera_trans_std_z_m": 0.003, "robot_rot_std_rad": 0.0002, "robot_trans_std_m": 0.0001}
    with pytest.raises(InputError, match=r"^pixel_std_px: expected a finite number >= 0, got -0\.1$"):
        PlannerNoise("pnp", -0.1)
    with pytest.raises(InputError, match=r"^camera noise: expected a positive noise level for 'pnp', got zero"):
        PlannerNoise("pnp", 0.0)
    assert PlannerNoise("se3_gaussian", 0.0, 0.0, 0.0, 1e-4).camera_trans_std_z_m == 1e-4
    with pytest.raises(InputError, match=r"^camera noise model: expected one of pnp, se3_gaussian, got 'gauss'$"):
        PlannerNoise("gauss")


def test_pose_rows_scalar_last():
    T = pose_from_xyz_qxyzw(f"0.1,0.2,0.3,0,0,{S},{S}", "pose")
    assert np.allclose(T[:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-12) and np.allclose(T[:3, 3], [0.1, 0.2, 0.3])
    assert np.allclose(pose_from_xyz_qxyzw([0, 0, 0, 0, 0, 0, 1.0009], "p"), np.eye(4), atol=1e-12)  # normalised
    with pytest.raises(InputError, match=r"^p: expected a unit quaternion qx,qy,qz,qw \(norm 1\), got norm 1\.0011$"):
        pose_from_xyz_qxyzw([0, 0, 0, 0, 0, 0, 1.0011], "p")
    with pytest.raises(InputError, match=r"got shape \(6,\)$"):
        pose_from_xyz_qxyzw([0, 0, 0, 0, 0, 1], "p")
    assert csv_header(2) == ["q1", "q2", "x", "y", "z", "qx", "qy", "qz", "qw"]


@pytest.mark.parametrize("off_mm, ok", [(0.09, True), (0.11, False)])
def test_taken_joints_agree_with_their_pose_columns(tmp_path, off_mm, ok):
    robot = get_robot("ur5e")
    q = np.array([[0.1, -1.2, 1.3, -1.5, -1.4, 0.2], [0.3, -1.0, 1.1, -1.7, -1.5, 0.1]])
    T = robot.fk(q)
    p, quat = se3.pq_from_transform(T)
    p = p + [[0.0, 0.0, 0.0], [off_mm / 1000, 0.0, 0.0]]
    rows = [",".join(f"{v:.17g}" for v in [*q[i], *p[i], *quat[i, 1:], quat[i, 0]]) for i in range(2)]
    f = tmp_path / "taken.csv"
    f.write_text(",".join(csv_header(6)) + "\n" + "\n".join(rows) + "\n")
    assert TAKEN_AGREEMENT_M == 1e-4
    if ok:
        T2, q2 = read_poses_csv(f, robot)
        assert np.array_equal(q2, q) and np.allclose(T2, T, atol=1e-12)  # the joints' forward kinematics
    else:
        with pytest.raises(InputError, match=rf"line 3: the joints' forward kinematics \(ur5e\) is 0\.110 mm and "):
            read_poses_csv(f, robot)


# --------------------------------------------------------------------------- #
# candidates: limits, the guess distance, feasibility's thresholds
# --------------------------------------------------------------------------- #
def _scene():
    from kinhec.planner.candidates import Scene
    from kinhec.synth.trajectories import lookat, sample_hand_eye

    rng = np.random.default_rng([0, 30])
    rob, cam, tgt = get_robot("ur5e"), get_camera("hd"), get_target("checker_9x6_25mm")
    X = sample_hand_eye(rng, "eye_in_hand")
    _, Y, _ = lookat(rob, X, "eye_in_hand", cam, tgt, rng, n_stations=3)
    return Scene(rob, "eye_in_hand", cam, tgt, X, Y)


def test_plan_limits_ranges():
    from kinhec.planner.candidates import PlanLimits

    assert PlanLimits(max_view_angle_deg=75.0).max_view_angle_deg == 75.0
    with pytest.raises(InputError, match=r"^max_view_angle_deg: expected a number in \[1\.0, 75\.0\], got 75\.1$"):
        PlanLimits(max_view_angle_deg=75.1)
    with pytest.raises(InputError, match=r"^guess_tolerance_mm: expected a number in \[0\.0, 1000\.0\], got -1\.0$"):
        PlanLimits(guess_tolerance_mm=-1.0)


def test_guess_distance_fits_the_widened_target_in_the_image():
    # at that depth the target's half shorter side, widened by twice the tolerance, projects to the image's half
    # shorter side less the margin and the tolerance angle's shift
    from kinhec.planner.candidates import PlanLimits, eih_distance_range, guess_distance_m
    from kinhec.synth.trajectories import viewing_distance_range

    sc = _scene()
    cam, tgt = sc.camera, sc.target
    lim = PlanLimits(margin_px=20.0, guess_tolerance_mm=30.0, guess_tolerance_deg=2.0)
    d = guess_distance_m(sc, lim)
    half_px = cam.f_px * (0.5 * min(tgt.size_m) + 0.06) / d
    shift = cam.f_px * math.tan(math.radians(2.0))
    assert half_px + shift + 20.0 == pytest.approx(0.5 * min(cam.width_px, cam.height_px), rel=1e-12)
    d_lo, _ = viewing_distance_range(cam, tgt)
    trusted = PlanLimits(guess_tolerance_mm=0.0, guess_tolerance_deg=0.0)
    assert eih_distance_range(sc, trusted) == pytest.approx((0.5 * d_lo, 2.0 * d_lo), rel=1e-12)
    # the default (poses that may lose the target in a quarter of the scenes): the far end moves out
    assert eih_distance_range(sc, lim) == pytest.approx((0.5 * d_lo, max(2.0 * d_lo, 1.5 * d)), rel=1e-12)
    # poses that must see it in every scene: the near end too
    lo, hi = eih_distance_range(sc, dataclasses.replace(lim, min_visible_fraction=1.0))
    assert (lo, hi) == pytest.approx((max(0.5 * d_lo, 0.75 * d), max(2.0 * d_lo, 1.5 * d)), rel=1e-12)


def test_feasibility_thresholds_on_both_sides():
    from kinhec.planner.candidates import PlanLimits, feasibility

    sc = _scene()
    rob = sc.robot
    q0 = np.asarray(rob.home_q_rad, dtype=float)
    m = math.radians(5.0)
    q = np.repeat(q0[None], 3, axis=0)
    q[0, 0] = rob.q_max_rad[0] - m - 1e-6  # inside the margin of the limit
    q[1, 0] = rob.q_max_rad[0] - m + 1e-6  # within it
    q[2, 1] = rob.q_min_rad[1] + m - 1e-6
    lim = PlanLimits(limit_margin_deg=5.0, guess_tolerance_mm=0.0, guess_tolerance_deg=0.0)
    f = feasibility(sc, q, lim)
    assert f["limits"].tolist() == [True, False, False]
    # the floor: every joint frame from the second on at or above it
    z = rob.joint_frames(q0[None])[0, 2:, 2, 3].min()
    assert feasibility(sc, q0[None], PlanLimits(floor_z_m=z - 1e-9, guess_tolerance_mm=0.0,
                                                guess_tolerance_deg=0.0))["floor"][0]
    assert not feasibility(sc, q0[None], PlanLimits(floor_z_m=z + 1e-9, guess_tolerance_mm=0.0,
                                                    guess_tolerance_deg=0.0))["floor"][0]
    # the condition of the reach-scaled Jacobian against its bound
    c = f["condition"][0]
    assert feasibility(sc, q[:1], PlanLimits(max_condition=max(c, 1.0) * 1.0001, guess_tolerance_mm=0.0,
                                             guess_tolerance_deg=0.0))["conditioned"][0]
    assert c > 1.0 and not feasibility(sc, q[:1], PlanLimits(max_condition=c * 0.9999, guess_tolerance_mm=0.0,
                                                            guess_tolerance_deg=0.0))["conditioned"][0]
    # the Jacobian's rows are (omega [rad/rad], v [m/rad]): v over the reach makes it unit-free
    T, J = rob.fk_jacobian(q[:1])
    Js = J.copy()
    Js[:, 3:] /= rob.reach_m
    s = np.linalg.svd(Js[0], compute_uv=False)
    assert c == pytest.approx(s[0] / s[-1], rel=1e-12)
