"""Measurement models: injected error statistics against the nominal values, structure of the models, errors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from kinhec.geometry import se3
from kinhec.models import noise
from kinhec.util.errors import InputError, UnknownNameError

N_STAT = 200_000  # frames for the statistical checks
REL = 0.02  # relative tolerance on a standard deviation estimated from N_STAT samples (SE ~ 0.16 %)


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _poses(seed: int, n: int, trans_std_m: float = 0.5) -> np.ndarray:
    return se3.random_poses(_rng(seed), n, trans_std_m)


def _targets_in_front(seed: int, n: int) -> np.ndarray:
    """Target poses 0.3-1.5 m in front of the camera, random orientation."""
    rng = _rng(seed)
    p = np.column_stack([rng.uniform(-0.3, 0.3, (n, 2)), rng.uniform(0.3, 1.5, n)])
    return se3.transform_from_rotation_translation(se3.random_rotations(rng, n), p)


@pytest.fixture(scope="module")
def poses_stat() -> np.ndarray:
    return _poses(1, N_STAT)


# --------------------------------------------------------------------------- #
# levels
# --------------------------------------------------------------------------- #
def test_levels_equal_the_tier_table():
    assert noise.ROBOT_LEVELS == {
        "r0": (0.0, 0.0),
        "r1": (0.0002, 0.0001),
        "r2": (0.0005, 0.0003),
        "r3": (0.002, 0.001),
        "r4": (0.005, 0.003),
    }
    assert noise.CAMERA_LEVELS == {
        "c0": (0.0, 0.0, 0.0, 0.0),
        "c1": (0.0005, 0.0003, 0.0003, 0.001),
        "c2": (0.002, 0.001, 0.001, 0.003),
        "c3": (0.005, 0.003, 0.003, 0.01),
        "c4": (0.01, 0.006, 0.006, 0.02),
        "c5": (0.02, 0.012, 0.012, 0.04),
    }
    assert noise.robot_level("r3") == (0.002, 0.001)
    assert noise.camera_level("c4") == (0.01, 0.006, 0.006, 0.02)
    # the dataset card rounds the same levels to deg / mm
    assert np.degrees(noise.robot_level("r4")[0]) == pytest.approx(0.286, abs=5e-4)
    assert np.degrees(noise.camera_level("c5")[0]) == pytest.approx(1.146, abs=5e-4)


def test_unknown_levels():
    with pytest.raises(UnknownNameError, match=r"unknown robot noise level 'r9'; expected one of: r0, r1"):
        noise.robot_level("r9")
    with pytest.raises(UnknownNameError, match=r"unknown camera noise level 'r1'; expected one of: c0"):
        noise.camera_level("r1")


# --------------------------------------------------------------------------- #
# twists
# --------------------------------------------------------------------------- #
def test_draw_twists_gaussian_std_and_independence():
    xi = noise.draw_twists(_rng(2), N_STAT, 0.003, 0.002)
    assert xi.shape == (N_STAT, 6)
    np.testing.assert_allclose(xi.std(axis=0), [0.003] * 3 + [0.002] * 3, rtol=REL)
    np.testing.assert_allclose(xi.mean(axis=0), 0.0, atol=3e-5)
    corr = np.corrcoef(xi.T)
    np.testing.assert_allclose(corr, np.eye(6), atol=0.015)
    # Gaussian tails: about 6e-5 of the values beyond 4 sigma
    assert np.mean(np.abs(xi[:, 0]) > 4 * 0.003) < 3e-4


@pytest.mark.parametrize("nu", [3.0, 5.0])
def test_draw_twists_student_t_marginals_and_shared_chi2(nu):
    scale = np.array([0.003] * 3 + [0.002] * 3)
    u = noise.draw_twists(_rng(3), N_STAT, 0.003, 0.002, student_t_dof=nu) / scale
    # each component is a Student-t with nu degrees of freedom ...
    for j in (0, 4):
        assert stats.kstest(u[:, j], stats.t(nu).cdf).statistic < 0.006
    # ... scale: median absolute value is the t quantile (robust for any nu)
    np.testing.assert_allclose(np.median(np.abs(u), axis=0), stats.t(nu).ppf(0.75), rtol=0.02)
    # heavy tails: the fraction beyond 4 scale units is that of t_nu, hundreds of times the Gaussian one
    beyond = np.mean(np.abs(u) > 4)
    assert beyond == pytest.approx(2 * stats.t(nu).sf(4), rel=0.05)
    assert beyond > 100 * 2 * stats.norm.sf(4)
    # one chi2 per frame shared by the six components: |u|^2 / 6 ~ F(6, nu)
    assert stats.kstest((u**2).sum(axis=1) / 6, stats.f(6, nu).cdf).statistic < 0.006
    a = np.abs(u)
    assert np.corrcoef(a[:, 0], a[:, 5])[0, 1] > 0.1  # shared scale: magnitudes are correlated


def test_draw_twists_student_t_variance():
    nu = 10.0
    xi = noise.draw_twists(_rng(4), N_STAT, 0.003, 0.002, student_t_dof=nu)
    var_expected = nu / (nu - 2) * np.array([0.003**2] * 3 + [0.002**2] * 3)
    np.testing.assert_allclose(xi.var(axis=0), var_expected, rtol=0.03)


def test_zero_std_consumes_the_same_draws():
    a = _rng(5)
    b = _rng(5)
    assert not noise.draw_twists(a, 10, 0.0, 0.0).any()
    noise.draw_twists(b, 10, 1.0, 1.0)
    assert a.random() == b.random()


# --------------------------------------------------------------------------- #
# robot models
# --------------------------------------------------------------------------- #
def test_robot_se3_gaussian_flange_frame_std(poses_stat):
    rot, trans = noise.robot_level("r4")
    T_meas = noise.robot_se3_gaussian(poses_stat, rot, trans, _rng(6))
    xi = se3.se3_log(se3.invert_transform(poses_stat) @ T_meas)
    np.testing.assert_allclose(xi.std(axis=0), [rot] * 3 + [trans] * 3, rtol=REL)
    # the perturbation is exactly the twist drawn from the same stream
    np.testing.assert_allclose(xi, noise.draw_twists(_rng(6), N_STAT, rot, trans), atol=1e-12)
    # the translation error is in the flange frame: R^T dp = V(omega) v ~ v, while dp itself is rotated
    dp_base = T_meas[:, :3, 3] - poses_stat[:, :3, 3]
    dp_flange = np.einsum("nji,nj->ni", poses_stat[:, :3, :3], dp_base)
    assert np.sqrt(np.mean((dp_flange - xi[:, 3:]) ** 2)) < 0.01 * trans
    assert np.sqrt(np.mean((dp_base - xi[:, 3:]) ** 2)) > trans


def test_robot_se3_gaussian_student_t_heavier_tails(poses_stat):
    rot, trans = noise.robot_level("r2")
    T = poses_stat[:50_000]
    xi = se3.se3_log(se3.invert_transform(T) @ noise.robot_se3_gaussian(T, rot, trans, _rng(7), student_t_dof=3))
    u = xi / np.array([rot] * 3 + [trans] * 3)
    np.testing.assert_allclose(np.median(np.abs(u)), stats.t(3).ppf(0.75), rtol=0.03)
    assert np.mean(np.abs(u) > 4) > 0.02  # t_3: 2.8 %; Gaussian: 0.006 %


def test_zero_std_is_an_exact_copy():
    T = _poses(8, 100)
    np.testing.assert_array_equal(noise.robot_se3_gaussian(T, 0.0, 0.0, _rng(0)), T)
    np.testing.assert_array_equal(noise.robot_se3_gaussian(T, 0.0, 0.0, _rng(0), student_t_dof=3), T)
    np.testing.assert_array_equal(noise.camera_se3_gaussian(T, 0.0, 0.0, 0.0, _rng(0)), T)
    np.testing.assert_array_equal(noise.vo_drift(T, 0.0, 0.0, _rng(0)), T)
    q = _rng(1).uniform(-3, 3, (100, 7))
    np.testing.assert_array_equal(noise.joint_gaussian(q, 0.0, _rng(0)), q)


def test_joint_gaussian_std():
    q = _rng(9).uniform(-3, 3, (N_STAT // 6, 6))
    q_meas = noise.joint_gaussian(q, 0.001, _rng(10))
    assert q_meas.shape == q.shape
    np.testing.assert_allclose((q_meas - q).std(axis=0), 0.001, rtol=REL)
    np.testing.assert_allclose(np.corrcoef((q_meas - q).T), np.eye(6), atol=0.02)


# --------------------------------------------------------------------------- #
# camera model
# --------------------------------------------------------------------------- #
def test_camera_se3_gaussian_anisotropic_std(poses_stat):
    rot, sx, sy, sz = noise.camera_level("c5")
    assert sx == sy
    T_meas = noise.camera_se3_gaussian(poses_stat, rot, sx, sz, _rng(11))
    dp_cam = T_meas[:, :3, 3] - poses_stat[:, :3, 3]  # translation error in the camera frame
    np.testing.assert_allclose(dp_cam.std(axis=0), [sx, sy, sz], rtol=REL)
    omega = se3.so3_log(np.swapaxes(poses_stat[:, :3, :3], 1, 2) @ T_meas[:, :3, :3])  # target frame
    np.testing.assert_allclose(omega.std(axis=0), [rot] * 3, rtol=REL)
    # the rotation error lives in the target frame: seen from the camera frame it is rotated
    omega_cam = se3.so3_log(T_meas[:, :3, :3] @ np.swapaxes(poses_stat[:, :3, :3], 1, 2))
    assert np.abs(omega_cam - omega).max() > 5 * rot
    # rotation and translation errors are independent
    assert abs(np.corrcoef(omega[:, 0], dp_cam[:, 2])[0, 1]) < 0.015
    # exactly the six-vector drawn from the same stream, the rotation part applied on the right (target frame):
    # isotropic statistics cannot tell R exp(omega) from exp(omega) R, this can
    d = noise._standard_draws(_rng(11), poses_stat.shape[0], None) * np.array([rot, rot, rot, sx, sy, sz])
    np.testing.assert_allclose(omega, d[:, :3], atol=1e-12)
    np.testing.assert_allclose(dp_cam, d[:, 3:], atol=1e-15)


def test_camera_se3_gaussian_student_t_shared_scale(poses_stat):
    rot, sx, _, sz = noise.camera_level("c3")
    nu = 3.0
    T_meas = noise.camera_se3_gaussian(poses_stat, rot, sx, sz, _rng(12), student_t_dof=nu)
    dp = T_meas[:, :3, 3] - poses_stat[:, :3, 3]
    omega = se3.so3_log(np.swapaxes(poses_stat[:, :3, :3], 1, 2) @ T_meas[:, :3, :3])
    u = np.column_stack([omega / rot, dp[:, :2] / sx, dp[:, 2] / sz])
    np.testing.assert_allclose(np.median(np.abs(u), axis=0), stats.t(nu).ppf(0.75), rtol=0.03)
    assert np.mean(np.abs(u) > 4) == pytest.approx(2 * stats.t(nu).sf(4), rel=0.05)
    assert stats.kstest((u**2).sum(axis=1) / 6, stats.f(6, nu).cdf).statistic < 0.006


# --------------------------------------------------------------------------- #
# visual-odometry drift
# --------------------------------------------------------------------------- #
def _smooth_trajectory(seed: int, n: int) -> np.ndarray:
    """Camera poses with ~2 deg / 1 cm motions between frames."""
    rng = _rng(seed)
    steps = se3.se3_exp(np.column_stack([rng.normal(0, 0.02, (n, 3)), rng.normal(0, 0.01, (n, 3))]))
    steps[0] = se3.random_poses(rng, 1)[0]
    T = steps[0].copy()
    out = [T]
    for S in steps[1:]:
        T = T @ S
        out.append(T)
    return np.array(out)


def test_vo_drift_matches_a_sequential_reference():
    T = _smooth_trajectory(13, 37)
    M = noise.vo_drift(T, 0.01, 0.005, _rng(14))
    xi = noise.draw_twists(_rng(14), 36, 0.01, 0.005)
    ref = [T[0]]
    for i in range(36):
        ref.append(ref[-1] @ se3.invert_transform(T[i]) @ T[i + 1] @ se3.se3_exp(xi[i]))
    np.testing.assert_array_equal(M[0], T[0])
    np.testing.assert_allclose(M, np.array(ref), atol=1e-12)
    se3.check_transforms(M, tol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 8, 9])
def test_vo_drift_short_streams(n):
    T = _smooth_trajectory(15, max(n, 1))[:n]
    M = noise.vo_drift(T, 0.01, 0.01, _rng(16))
    assert M.shape == (n, 4, 4)
    if n:
        np.testing.assert_array_equal(M[0], T[0])
    if n >= 2:
        rel_err = se3.se3_log(
            se3.invert_transform(se3.invert_transform(T[:-1]) @ T[1:]) @ se3.invert_transform(M[:-1]) @ M[1:]
        )
        np.testing.assert_allclose(rel_err, noise.draw_twists(_rng(16), n - 1, 0.01, 0.01), atol=1e-12)


def test_vo_drift_relative_error_and_random_walk():
    rot, trans = 0.002, 0.001
    n_seq, n = 1000, 64
    T = _smooth_trajectory(17, n)
    rel_true_inv = se3.invert_transform(se3.invert_transform(T[:-1]) @ T[1:])
    rng = _rng(18)
    M = np.stack([noise.vo_drift(T, rot, trans, rng) for _ in range(n_seq)])  # (n_seq, n, 4, 4)
    rel_err = se3.se3_log(rel_true_inv @ se3.invert_transform(M[:, :-1]) @ M[:, 1:]).reshape(-1, 6)
    np.testing.assert_allclose(rel_err.std(axis=0), [rot] * 3 + [trans] * 3, rtol=REL)
    # squared absolute rotation error: a random walk, E|omega_k|^2 = 3 k rot^2
    abs_rot2 = (se3.so3_log(np.swapaxes(T[:, :3, :3], 1, 2) @ M[..., :3, :3]) ** 2).sum(axis=-1)
    msq = abs_rot2.mean(axis=0)
    assert msq[0] == 0.0
    k = np.arange(n)
    np.testing.assert_allclose(msq[8:] / (3 * k[8:] * rot**2), 1.0, rtol=0.12)  # SE ~ 2.6 % per frame
    slope = np.polyfit(k, msq, 1)[0]
    assert slope == pytest.approx(3 * rot**2, rel=0.08)


def test_vo_drift_student_t_increments():
    T = _smooth_trajectory(19, 20_001)
    M = noise.vo_drift(T, 0.002, 0.001, _rng(20), student_t_dof=3)
    rel_err = se3.se3_log(
        se3.invert_transform(se3.invert_transform(T[:-1]) @ T[1:]) @ se3.invert_transform(M[:-1]) @ M[1:]
    )
    u = rel_err / np.array([0.002] * 3 + [0.001] * 3)
    np.testing.assert_allclose(np.median(np.abs(u)), stats.t(3).ppf(0.75), rtol=0.05)
    assert np.mean(np.abs(u) > 4) > 0.02


# --------------------------------------------------------------------------- #
# monocular scale
# --------------------------------------------------------------------------- #
def test_apply_scale_without_drift_is_exact():
    T = _poses(21, 50)
    Ts, s = noise.apply_scale(T, 2.5, 0.0, _rng(22))
    np.testing.assert_array_equal(s, np.full(50, 2.5))
    np.testing.assert_array_equal(Ts[:, :3, :3], T[:, :3, :3])
    np.testing.assert_array_equal(Ts[:, :3, 3], 2.5 * T[:, :3, 3])
    np.testing.assert_array_equal(Ts[:, 3], T[:, 3])


def test_apply_scale_drift_is_a_multiplicative_random_walk():
    T = _poses(23, N_STAT)
    Ts, s = noise.apply_scale(T, 0.5, 0.002, _rng(24))
    assert s[0] == 0.5
    np.testing.assert_array_equal(Ts[:, :3, :3], T[:, :3, :3])
    np.testing.assert_allclose(Ts[:, :3, 3], s[:, None] * T[:, :3, 3], rtol=1e-15)
    inc = np.diff(np.log(s))
    np.testing.assert_allclose(inc.std(), 0.002, rtol=REL)
    assert abs(np.corrcoef(inc[:-1], inc[1:])[0, 1]) < 0.015  # independent increments


def test_apply_scale_commutes_with_inversion():
    T = _poses(25, 30)
    Ts, s = noise.apply_scale(T, 3.0, 0.01, _rng(26))
    Tis, s_inv = noise.apply_scale(se3.invert_transform(T), 3.0, 0.01, _rng(26))
    np.testing.assert_array_equal(s, s_inv)
    np.testing.assert_allclose(se3.invert_transform(Ts), Tis, atol=1e-12)


# --------------------------------------------------------------------------- #
# outliers
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("fraction, n_avail, expected", [(0.0, 30, 0), (0.2, 30, 6), (0.05, 30, 2),
                                                         (0.5, 25, 12), (1.0, 17, 17), (0.3, 0, 0)])
def test_choose_outliers_exact_count_among_available(fraction, n_avail, expected):
    available = np.zeros(60, dtype=bool)
    available[_rng(27).choice(60, n_avail, replace=False)] = True
    chosen = noise.choose_outliers(_rng(28), available, fraction)
    assert chosen.dtype == bool and chosen.shape == (60,)
    assert chosen.sum() == expected == round(fraction * n_avail)
    assert not (chosen & ~available).any()


def test_choose_outliers_is_uniform():
    available = np.ones(10, dtype=bool)
    rng = _rng(29)
    counts = sum(noise.choose_outliers(rng, available, 0.3).astype(int) for _ in range(4000))
    np.testing.assert_allclose(counts / 4000, 0.3, atol=0.03)


def test_random_pose_outliers_at_the_reference_distance_in_any_direction():
    ref = _targets_in_front(31, 50_000)
    T = noise.random_pose_outliers(ref, _rng(31))
    se3.check_transforms(T, tol=1e-12)
    p = T[:, :3, 3]
    # distance: the reference's times a factor uniform in 0.5-1.5
    k = np.linalg.norm(p, axis=1) / np.linalg.norm(ref[:, :3, 3], axis=1)
    lo, hi = noise.RANDOM_POSE_DISTANCE_RATIO
    assert k.min() >= lo and k.max() <= hi
    assert stats.kstest((k - lo) / (hi - lo), "uniform").statistic < 0.01
    # direction uniform on the sphere (half of the poses behind the camera), independent of the factor
    d = p / np.linalg.norm(p, axis=1, keepdims=True)
    np.testing.assert_allclose(d.mean(axis=0), 0.0, atol=0.015)
    assert stats.kstest(0.5 * (d[:, 2] + 1.0), "uniform").statistic < 0.01
    # uniform rotations: the target normal covers the sphere evenly
    np.testing.assert_allclose(T[:, :3, 2].mean(axis=0), 0.0, atol=0.015)
    # the outlier lies a median 1.38x the target's distance from the true pose (the published copy's small
    # tier: 0.545 m from the truth at 0.393 m, 1.39x)
    far = np.linalg.norm(p - ref[:, :3, 3], axis=1) / np.linalg.norm(ref[:, :3, 3], axis=1)
    assert 1.33 < np.median(far) < 1.43


def test_planar_flip_reflects_the_normal_about_the_line_of_sight():
    T = _targets_in_front(32, 2000)
    F = noise.planar_flip(T)
    se3.check_transforms(F, tol=1e-12)  # proper rotation
    np.testing.assert_array_equal(F[:, :3, 3], T[:, :3, 3])  # position kept
    p = T[:, :3, 3]
    v = -p / np.linalg.norm(p, axis=1, keepdims=True)
    n, n_f = T[:, :3, 2], F[:, :3, 2]
    np.testing.assert_allclose(np.sum(n_f * v, axis=1), np.sum(n * v, axis=1), atol=1e-12)  # same view angle
    np.testing.assert_allclose(n_f, 2 * np.sum(n * v, axis=1)[:, None] * v - n, atol=1e-12)  # mirrored
    # a rotation about n x v: the axis is normal to both n and v
    axis = se3.so3_log(F[:, :3, :3] @ np.swapaxes(T[:, :3, :3], 1, 2))
    angle = np.linalg.norm(axis, axis=1)
    view = np.arccos(np.clip(np.sum(n * v, axis=1), -1, 1))
    np.testing.assert_allclose(angle, np.minimum(2 * view, 2 * np.pi - 2 * view), atol=1e-8)
    ok = angle > 1e-3
    a = axis[ok] / angle[ok, None]
    np.testing.assert_allclose(np.sum(a * n[ok], axis=1), 0.0, atol=1e-8)
    np.testing.assert_allclose(np.sum(a * v[ok], axis=1), 0.0, atol=1e-8)
    # oblique views change; flipping twice restores the pose
    assert (np.abs(n_f - n).max(axis=1)[view > 0.05] > 1e-3).all()
    np.testing.assert_allclose(noise.planar_flip(F), T, atol=1e-12)


def test_planar_flip_without_checks_is_the_same_flip():
    T = _targets_in_front(34, 200)
    np.testing.assert_array_equal(noise.planar_flip(T, check=False), noise.planar_flip(T))
    with pytest.raises(InputError, match="T_cam_target"):
        noise.planar_flip(T[:, :3])  # not poses: the checked call says so


def test_pose_noise_without_checks_draws_the_same():
    """The generator's unchecked calls give the checked calls' draws; the checked calls still refuse non-poses."""
    T = _targets_in_front(35, 50)
    a = noise.camera_se3_gaussian(T, 0.01, 0.002, 0.005, _rng(7), student_t_dof=4.0)
    b = noise.camera_se3_gaussian(T, 0.01, 0.002, 0.005, _rng(7), student_t_dof=4.0, check=False)
    np.testing.assert_array_equal(a, b)
    a = noise.robot_se3_gaussian(T, 0.01, 0.002, _rng(8))
    np.testing.assert_array_equal(noise.robot_se3_gaussian(T, 0.01, 0.002, _rng(8), check=False), a)
    bent = T.copy()
    bent[3, :3, :3] *= 1.01
    with pytest.raises(InputError, match=r"T_base_ee \(rotation block\): expected orthonormal"):
        noise.robot_se3_gaussian(bent, 0.01, 0.002, _rng(8))
    with pytest.raises(InputError, match=r"T_cam_target \(rotation block\): expected orthonormal"):
        noise.camera_se3_gaussian(bent, 0.01, 0.002, 0.005, _rng(7))


def test_planar_flip_identity_when_fronto_parallel():
    R = se3.so3_exp(np.array([[0.0, 0.0, 0.7], [np.pi, 0.0, 0.0]]))  # normal along +z or -z of the camera
    T = se3.transform_from_rotation_translation(R, np.array([[0.0, 0.0, 0.8], [0.0, 0.0, 1.2]]))
    np.testing.assert_allclose(noise.planar_flip(T), T, atol=1e-15)
    # the same when the target is off-axis but faces the camera centre
    p = np.array([0.3, -0.2, 0.9])
    z = p / np.linalg.norm(p)
    x = np.cross([0.0, 1.0, 0.0], z)
    x /= np.linalg.norm(x)
    R_face = np.column_stack([x, np.cross(z, x), z])
    T1 = se3.transform_from_rotation_translation(R_face, p)[None]
    np.testing.assert_allclose(noise.planar_flip(T1), T1, atol=1e-15)


def test_gross_outliers_default_std(poses_stat):
    T = poses_stat[:50_000]
    G = noise.gross_outliers(T, _rng(33))
    dp = G[:, :3, 3] - T[:, :3, 3]
    np.testing.assert_allclose(dp.std(axis=0), noise.GROSS_TRANS_STD_M, rtol=0.03)
    omega = se3.so3_log(np.swapaxes(T[:, :3, :3], 1, 2) @ G[:, :3, :3])
    np.testing.assert_allclose(omega.std(axis=0), noise.GROSS_ROT_STD_RAD, rtol=0.03)


@pytest.mark.parametrize("model", ["random_pose", "planar_flip", "gross"])
def test_apply_outliers_labels_and_availability(model):
    n = 40
    T_gt = _targets_in_front(34, n)
    T_meas = noise.camera_se3_gaussian(T_gt, 0.002, 0.001, 0.003, _rng(35))
    T_meas[[3, 7, 8]] = np.nan  # no measurement
    available = np.ones(n, dtype=bool)
    available[[0, 1]] = False
    T_out, outlier = noise.apply_outliers(T_meas, T_gt, model, 0.25, _rng(36), available=available)
    assert outlier.sum() == round(0.25 * 35)
    assert not outlier[[0, 1, 3, 7, 8]].any()
    changed = ~np.all((T_out == T_meas) | (np.isnan(T_out) & np.isnan(T_meas)), axis=(1, 2))
    np.testing.assert_array_equal(changed, outlier)
    assert np.isnan(T_out[[3, 7, 8]]).all()
    se3.check_transforms(T_out[outlier])
    rot_err, _ = se3.pose_error(T_out[outlier], T_gt[outlier])
    assert np.median(rot_err) > 2.0  # deg: far beyond the inlier noise (0.1 deg)
    if model == "planar_flip":
        np.testing.assert_allclose(T_out[outlier], noise.planar_flip(T_gt[outlier]), atol=1e-15)
    if model == "random_pose":
        k = np.linalg.norm(T_out[outlier, :3, 3], axis=1) / np.linalg.norm(T_gt[outlier, :3, 3], axis=1)
        assert (k >= 0.5).all() and (k <= 1.5).all()  # at about the reference pose's distance
    # without an explicit mask, only the NaN frames are excluded
    _, outlier_all = noise.apply_outliers(T_meas, T_gt, model, 1.0, _rng(36))
    np.testing.assert_array_equal(outlier_all, np.isfinite(T_meas).all(axis=(1, 2)))


def test_apply_outliers_none_and_zero_fraction():
    T_gt = _targets_in_front(37, 10)
    T_out, outlier = noise.apply_outliers(T_gt, T_gt, "none", 0.0, _rng(0))
    np.testing.assert_array_equal(T_out, T_gt)
    assert not outlier.any()
    T_out, outlier = noise.apply_outliers(T_gt, T_gt, "gross", 0.0, _rng(0))
    np.testing.assert_array_equal(T_out, T_gt)
    assert not outlier.any()


# --------------------------------------------------------------------------- #
# determinism
# --------------------------------------------------------------------------- #
def test_same_seed_same_arrays():
    T = _smooth_trajectory(38, 64)
    q = _rng(39).uniform(-1, 1, (64, 6))
    calls = [
        lambda r: noise.draw_twists(r, 64, 0.01, 0.02, student_t_dof=4),
        lambda r: noise.robot_se3_gaussian(T, 0.01, 0.02, r),
        lambda r: noise.joint_gaussian(q, 0.01, r),
        lambda r: noise.camera_se3_gaussian(T, 0.01, 0.02, 0.03, r, student_t_dof=3),
        lambda r: noise.vo_drift(T, 0.01, 0.02, r),
        lambda r: noise.apply_scale(T, 2.0, 0.01, r)[1],
        lambda r: noise.random_pose_outliers(T, r),
        lambda r: noise.gross_outliers(T, r),
        lambda r: noise.apply_outliers(T, T, "random_pose", 0.3, r)[0],
    ]
    for f in calls:
        np.testing.assert_array_equal(f(_rng(40)), f(_rng(40)))
        assert not np.array_equal(f(_rng(40)), f(_rng(41)))


# --------------------------------------------------------------------------- #
# error paths
# --------------------------------------------------------------------------- #
def test_bad_standard_deviations_and_parameters():
    T = _poses(42, 5)
    with pytest.raises(InputError, match=r"rot_std_rad: expected a finite number >= 0, got -0.1"):
        noise.robot_se3_gaussian(T, -0.1, 0.0, _rng())
    with pytest.raises(InputError, match=r"trans_std_z_m: expected a finite number >= 0, got nan"):
        noise.camera_se3_gaussian(T, 0.0, 0.0, float("nan"), _rng())
    with pytest.raises(InputError, match=r"trans_std_m: expected a real number, got str"):
        noise.vo_drift(T, 0.0, "0.1", _rng())
    with pytest.raises(InputError, match=r"joint_std_rad: expected a finite number >= 0, got -1"):
        noise.joint_gaussian(np.zeros((5, 6)), -1, _rng())
    with pytest.raises(InputError, match=r"student_t_dof: expected None \(Gaussian\) or a finite number >= 1, got 0"):
        noise.draw_twists(_rng(), 3, 0.1, 0.1, student_t_dof=0)
    with pytest.raises(InputError, match=r"n: expected an integer >= 0, got -2"):
        noise.draw_twists(_rng(), -2, 0.1, 0.1)
    with pytest.raises(InputError, match=r"scale: expected a finite number > 0, got 0.0"):
        noise.apply_scale(T, 0.0, 0.0, _rng())
    with pytest.raises(InputError, match=r"drift_std: expected a finite number >= 0, got -0.01"):
        noise.apply_scale(T, 1.0, -0.01, _rng())
    with pytest.raises(InputError, match=r"fraction: expected a value in \[0, 1\], got 1.5"):
        noise.choose_outliers(_rng(), np.ones(5, dtype=bool), 1.5)
    with pytest.raises(InputError, match=r"rng: expected a numpy.random.Generator, got int"):
        noise.robot_se3_gaussian(T, 0.1, 0.1, 42)
    with pytest.raises(InputError, match=r"rng: expected a numpy.random.Generator, got RandomState"):
        noise.draw_twists(np.random.RandomState(0), 3, 0.1, 0.1)


def test_bad_shapes():
    with pytest.raises(InputError, match=r"T_base_ee: expected shape \(\.\.\., 4, 4\), got array of shape \(5, 3, 3\)"):
        noise.robot_se3_gaussian(np.tile(np.eye(3), (5, 1, 1)), 0.1, 0.1, _rng())
    with pytest.raises(InputError, match=r"T_vo_cam: expected a stream of shape \(N, 4, 4\), got shape \(4, 4\)"):
        noise.vo_drift(np.eye(4), 0.1, 0.1, _rng())
    with pytest.raises(InputError, match=r"T_cam_target \(rotation block\): expected det\(R\) = \+1"):
        noise.planar_flip(np.diag([1.0, 1.0, -1.0, 1.0])[None])
    with pytest.raises(InputError, match=r"q: expected joint positions of shape \(N, n_joints\), got shape \(6,\)"):
        noise.joint_gaussian(np.zeros(6), 0.1, _rng())
    with pytest.raises(InputError, match=r"available: expected a 1-D boolean array, got .* dtype int"):
        noise.choose_outliers(_rng(), np.ones(5, dtype=int), 0.5)
    with pytest.raises(InputError, match=r"T_cam_target: expected targets away from the camera centre"):
        noise.planar_flip(np.eye(4)[None])
    T = _poses(43, 6)
    with pytest.raises(InputError, match=r"T_gt: expected shape \(6, 4, 4\) to match T_meas, got shape \(5, 4, 4\)"):
        noise.apply_outliers(T, T[:5], "gross", 0.5, _rng())
    with pytest.raises(InputError, match=r"available: expected a boolean array of shape \(6,\), got .* shape \(5,\)"):
        noise.apply_outliers(T, T, "gross", 0.5, _rng(), available=np.ones(5, dtype=bool))


def test_unknown_or_inconsistent_outlier_model():
    T = _poses(44, 6)
    with pytest.raises(UnknownNameError, match=r"unknown outlier model 'flip'; expected one of: gross, none"):
        noise.apply_outliers(T, T, "flip", 0.5, _rng())
    with pytest.raises(InputError, match=r"fraction: expected 0 with outlier model 'none', got 0.2"):
        noise.apply_outliers(T, T, "none", 0.2, _rng())
