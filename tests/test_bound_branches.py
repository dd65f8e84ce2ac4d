"""Every branch of the Cramér-Rao bound against an independent Monte-Carlo of the generator's noise.

For one small generated sequence per branch the errors of the keyframe pairs are drawn again and again
with kinhec.models.noise (the generator's own noise code) on the sequence's true streams, paired as the benchmark
pairs them (the robot stream interpolated at the camera stamps), and fed to an efficient estimator that
knows nothing of the bound: generalised least squares with the *empirical* covariance of the pair errors
(from training draws apart from the test draws).  Its errors in ``X`` and in ``Y`` must have the covariances
the bound reports: the summed NEES of the test draws lies within the two-sided 99.9 % interval of chi-square
with ``6 M`` (``12 M`` jointly) degrees of freedom.  Student-t noise, whose efficient estimator is not linear, is checked through
the Fisher information of a Student-t location (Monte-Carlo of the score) and the exact ratio it brings
to the bound.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from kinhec.evaluate import bounds
from kinhec.geometry import se3
from kinhec.models import noise
from kinhec.synth.generator import generate_sequence
from kinhec.io import Sequence
from kinhec.models.robots import get_robot
from kinhec.solvers import pair_model as pm

#: Training draws (the estimator's weights) and test draws (the NEES) of every branch.
N_TRAIN, N_TEST = 4000, 1500


def _sequence(**kw) -> Sequence:
    r = dict(sequence_id="bound-000000", seed=5, robot="ur5e", configuration="eye_in_hand", family="joint_sinusoid",
             duration_s=6.0, camera_rate_hz=10.0, robot_noise_models=("se3_gaussian",))  # fmt: skip
    r.update(kw)
    st = generate_sequence(r)
    return Sequence.from_tables(st.index_row, st.robot, st.camera)


def _interpolate(t, T, tq):
    """Poses of the stream ``T`` (..., N, 4, 4) at ``t`` (N,) at the query times ``tq`` (M, K): SLERP and linear
    translation between the two neighbouring samples (written here, apart from kinhec.geometry.se3)."""
    j = np.clip(np.searchsorted(t, tq), 1, t.size - 1)
    w = ((tq - t[j - 1]) / (t[j] - t[j - 1]))[..., None]
    if T.ndim == 3:
        T0, T1 = T[j - 1], T[j]
    else:
        m = np.arange(T.shape[0])[:, None]
        T0, T1 = T[m, j - 1], T[m, j]
    R0 = T0[..., :3, :3]
    rel = np.swapaxes(R0, -1, -2) @ T1[..., :3, :3]
    out = np.zeros(T0.shape)
    out[..., :3, :3] = R0 @ se3.so3_exp(w * se3.so3_log(rel))
    out[..., :3, 3] = (1.0 - w) * T0[..., :3, 3] + w * T1[..., :3, 3]
    out[..., 3, 3] = 1.0
    return out


def _pair_errors(seq, idx, A_meas, C_meas, scale=1.0):
    """Camera errors ``rho`` (M, K, 6) of the keyframe pairs against the truth: measured flange poses
    ``A_meas`` (M, K, 4, 4) and camera poses ``C_meas`` (M, K, 4, 4), camera translations divided by ``scale``."""
    M, K = A_meas.shape[:2]
    C = C_meas.reshape(-1, 4, 4).copy()
    C[:, :3, 3] /= scale
    Cp = pm.predicted_camera_poses(A_meas.reshape(-1, 4, 4), seq.X, seq.Y, seq.configuration)
    return pm.residuals(C, Cp).reshape(M, K, 6)


def _jacobian(seq, idx, scale_unknown=False):
    C = seq.camera.T_cam_target_gt[idx]
    J, _ = pm.pair_jacobians(C, seq.X, seq.configuration)
    if scale_unknown:
        J = np.concatenate([J, pm.scale_jacobian(C)[:, :, None]], axis=2)
    return J


def _gls_errors(J, r, correlated=False):
    """``(X, Y)`` errors (M_test, 12) of generalised least squares weighted by the empirical covariance of the training
    draws' errors: of every pair apart, or of all 6K errors jointly when the pairs are ``correlated``."""
    K, _, P = J.shape
    flat = r.reshape(r.shape[0], 6 * K)
    # centred on the training mean: interpolating a moving robot between its samples leaves a small systematic
    # error per pair (the chord of the path), outside the noise the bound describes
    mean = flat[:N_TRAIN].mean(axis=0)
    train, test = flat[:N_TRAIN] - mean, flat[N_TRAIN:] - mean
    S = train.T @ train / N_TRAIN
    if not correlated:
        S = S * np.kron(np.eye(K), np.ones((6, 6)))
    W = np.linalg.inv(S)
    Jf = J.reshape(6 * K, P)
    F = Jf.T @ W @ Jf
    theta = np.linalg.solve(F, Jf.T @ W @ test.T).T
    return theta[:, :12]


def _nees_interval(E, cov):
    """Mean NEES of the errors ``E`` (M, d) under ``cov`` and the two-sided 99.9 % chi-square interval of the mean."""
    d2 = np.einsum("mi,ij,mj->m", E, np.linalg.inv(cov), E)
    M, d = E.shape
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], d * M) / M
    return float(d2.mean()), lo, hi


def _assert_bound_is_the_scatter(E, b):
    """The errors of ``X`` and of ``Y`` (M, 12) have the bound's covariance of each, and the joint one."""
    for what, sl in (("X", slice(0, 6)), ("Y", slice(6, 12)), ("X and Y", slice(0, 12))):
        mean, lo, hi = _nees_interval(E[:, sl], b.cov[sl, sl])
        assert lo < mean < hi, f"mean NEES of {what} {mean:.3f} under the bound, expected within [{lo:.3f}, {hi:.3f}]"


def _robot_draws(seq, idx, rng, rot, trans):
    """Flange poses of the keyframes (M_ALL, K, 4, 4) with fresh twist noise."""
    T = np.broadcast_to(seq.robot.T_base_ee_gt[idx], (M_ALL, idx.size, 4, 4)).reshape(-1, 4, 4)
    return noise.robot_se3_gaussian(T, rot, trans, rng).reshape(M_ALL, idx.size, 4, 4)


def _camera_draws(seq, idx, rng, M, rot, xy, z):
    C = np.broadcast_to(seq.camera.T_cam_target_gt[idx], (M, idx.size, 4, 4)).reshape(-1, 4, 4)
    return noise.camera_se3_gaussian(C, rot, xy, z, rng).reshape(M, idx.size, 4, 4)


M_ALL = N_TRAIN + N_TEST


def test_interpolated_robot_poses():
    """Asynchronous streams: the flange pose is interpolated between two noisy robot samples, variance factor
    ``(1 - w)^2 + w^2``."""
    rs, ts = 2e-3, 2e-3
    seq = _sequence(sync="async", robot_rate_cap_hz=50.0, robot_rot_std_rad=rs, robot_trans_std_m=ts,
                    camera_rot_std_rad=2e-4, camera_trans_std_m=2e-4, camera_trans_std_z_m=4e-4)  # fmt: skip
    idx = np.arange(2, len(seq.camera), 4)
    b = bounds.sequence_bound(seq, keyframes=idx)
    rng = np.random.default_rng(1)
    tq = np.broadcast_to(seq.camera.t[idx] - seq.time_offset, (M_ALL, idx.size))
    # the robot samples around the keyframes only (the noise of every sample is independent)
    j = np.clip(np.searchsorted(seq.robot.t, tq[0]), 1, len(seq.robot) - 1)
    rows = np.unique(np.r_[j - 1, j])
    T = np.broadcast_to(seq.robot.T_base_ee_gt[rows], (M_ALL, rows.size, 4, 4)).reshape(-1, 4, 4)
    T = noise.robot_se3_gaussian(T, rs, ts, rng).reshape(M_ALL, rows.size, 4, 4)
    A = _interpolate(seq.robot.t[rows], T, tq)
    r = _pair_errors(seq, idx, A, _camera_draws(seq, idx, rng, M_ALL, 2e-4, 2e-4, 4e-4))
    _assert_bound_is_the_scatter(_gls_errors(_jacobian(seq, idx), r), b)


def test_camera_time_jitter():
    """Camera stamps with jitter: the flange pose is read at the wrong instant, an error along the velocity."""
    jit = 4e-3
    seq = _sequence(sync="async", robot_rate_cap_hz=250.0, time_jitter_std_s=jit, camera_rot_std_rad=1e-4,
                    camera_trans_std_m=1e-4, camera_trans_std_z_m=2e-4, speed_fraction=0.5)  # fmt: skip
    idx = np.arange(2, len(seq.camera) - 1, 4)
    b = bounds.sequence_bound(seq, keyframes=idx)
    rng = np.random.default_rng(2)
    # the stamps of the keyframes jittered afresh around their true instants; the robot stream is exact
    tq = seq.camera.t_gt[idx] + jit * rng.standard_normal((M_ALL, idx.size))
    A = _interpolate(seq.robot.t, seq.robot.T_base_ee_gt, tq)
    r = _pair_errors(seq, idx, A, _camera_draws(seq, idx, rng, M_ALL, 1e-4, 1e-4, 2e-4))
    _assert_bound_is_the_scatter(_gls_errors(_jacobian(seq, idx), r), b)


def test_jitter_covariance_of_a_constant_acceleration_path():
    """The jitter term of the flange covariance against its closed form on a path of constant body acceleration.

    Along ``T(t) = T0 exp(c t + d t^2 / 2)`` the pose read at ``tau`` instead of 0 is off by exactly
    ``xi = c tau + d tau^2 / 2`` (body velocity ``c``, acceleration ``d`` at 0, whether or not ``c`` and ``d``
    commute), so for ``tau ~ N(0, s^2)``: ``cov(xi) = s^2 c c^T + (s^4 / 2) d d^T``.  The robot stream is sampled at
    250 Hz with the paired instant between two samples (the chords of the linear interpolation are not the path);
    the second-order part is checked across the velocity too, where it is all the jitter leaves."""
    from types import SimpleNamespace

    rng = np.random.default_rng(11)
    c = np.array([0.4, -0.3, 0.5, 0.2, 0.1, -0.15])
    d = np.array([-2.0, 1.5, 0.8, 0.6, -0.9, 0.4])
    dt, offset, s = 4e-3, 0.02, 4e-3
    tr = np.arange(-250, 251) * dt + 0.3 * dt
    T = se3.se3_exp(rng.normal(size=6)) @ se3.se3_exp(c * tr[:, None] + 0.5 * d * tr[:, None] ** 2)
    seq = SimpleNamespace(robot=SimpleNamespace(t=tr, T_base_ee_gt=T, dof=0), is_synchronous=False,
                          camera=SimpleNamespace(t=np.array([offset]), t_gt=np.array([0.0])), time_offset=offset)  # fmt: skip
    cov = bounds._robot_twist_cov(seq, np.array([0]), {"robot_noise_models": "", "time_jitter_std_s": s}, None, None)
    expected = s**2 * np.outer(c, c) + 0.5 * s**4 * np.outer(d, d)
    np.testing.assert_allclose(cov[0], expected, rtol=0, atol=1e-4 * np.abs(expected).max())
    P = np.eye(6) - np.outer(c, c) / (c @ c)  # across the velocity: only the acceleration's part
    np.testing.assert_allclose(P @ cov[0] @ P, 0.5 * s**4 * np.outer(P @ d, P @ d), rtol=0,
                               atol=1e-3 * 0.5 * s**4 * np.sum((P @ d) ** 2))  # fmt: skip


def test_flange_error_covariance_with_jitter_and_interpolation():
    """The flange-frame error covariance of every keyframe pair that the bound assumes (robot twist noise
    interpolated between two samples, plus the jitter of the camera stamp along the flange velocity) against
    the scatter of the errors drawn afresh: summed ``xi^T Sigma^-1 xi`` within the chi-square interval.

    Per pair, unlike the bound on ``X`` (where the estimator can look away from each pair's velocity), the
    jitter term shows directly."""
    rs, ts, jit, M = 1e-4, 1e-4, 4e-3, 400
    seq = _sequence(sync="async", robot_rate_cap_hz=250.0, time_jitter_std_s=jit, robot_rot_std_rad=rs,
                    robot_trans_std_m=ts, speed_fraction=0.5)  # fmt: skip
    idx = np.arange(2, len(seq.camera) - 1, 4)
    Sigma = bounds._robot_twist_cov(seq, idx, seq.info, seq.config, None)
    rng = np.random.default_rng(7)
    # the stamps are the data (the pose is interpolated there, between fixed samples); the true capture instant
    # behind each stamp is what the jitter makes uncertain
    ts_ = np.broadcast_to(seq.camera.t[idx] - seq.time_offset, (M, idx.size))
    j = np.clip(np.searchsorted(seq.robot.t, ts_[0]), 1, len(seq.robot) - 1)
    rows = np.unique(np.r_[j - 1, j])
    T = np.broadcast_to(seq.robot.T_base_ee_gt[rows], (M, rows.size, 4, 4)).reshape(-1, 4, 4)
    T = noise.robot_se3_gaussian(T, rs, ts, rng).reshape(M, rows.size, 4, 4)
    A = _interpolate(seq.robot.t[rows], T, ts_)
    truth = _interpolate(seq.robot.t, seq.robot.T_base_ee_gt, ts_ - jit * rng.standard_normal(ts_.shape))
    xi = se3.se3_log(se3.invert_transform(truth) @ A)  # (M, K, 6), flange frame
    d2 = np.einsum("mki,kij,mkj->", xi, np.linalg.inv(Sigma), xi) / (M * idx.size)
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], 6 * M * idx.size) / (M * idx.size)
    assert lo < d2 < hi, f"mean xi^T Sigma^-1 xi per pair {d2:.3f}, expected within [{lo:.3f}, {hi:.3f}]"


def test_joint_encoder_noise():
    """Encoder noise through the nominal kinematics: a flange twist of covariance ``s^2 J_f J_f^T``."""
    js = 1e-3
    seq = _sequence(robot_noise_models=("joint_gaussian",), joint_std_rad=js, camera_rot_std_rad=1e-4,
                    camera_trans_std_m=1e-4, camera_trans_std_z_m=2e-4)  # fmt: skip
    idx = np.arange(2, len(seq.camera), 4)
    b = bounds.sequence_bound(seq, keyframes=idx)
    rng = np.random.default_rng(3)
    q = np.broadcast_to(seq.robot.q_gt[idx], (M_ALL, idx.size, seq.robot.dof)).reshape(-1, seq.robot.dof)
    A = get_robot("ur5e").fk(noise.joint_gaussian(q, js, rng)).reshape(M_ALL, idx.size, 4, 4)
    r = _pair_errors(seq, idx, A, _camera_draws(seq, idx, rng, M_ALL, 1e-4, 1e-4, 2e-4))
    _assert_bound_is_the_scatter(_gls_errors(_jacobian(seq, idx), r), b)


def test_visual_odometry_drift():
    """``vo_drift``: the camera error is a random walk over every frame, correlated between keyframes; its
    increments Student-t (5 degrees of freedom: the bound takes their covariance, 5/3 of the scale's)."""
    vr, vt, nu = 1e-3, 2e-3, 5.0
    seq = _sequence(camera_noise_model="vo_drift", world_frame="vo_origin", vo_drift_rot_std_rad=vr,
                    vo_drift_trans_std_m=vt, student_t_dof=nu, robot_rot_std_rad=2e-4,
                    robot_trans_std_m=2e-4)  # fmt: skip
    idx = np.arange(4, 44, 4)
    b = bounds.sequence_bound(seq, keyframes=idx)
    rng = np.random.default_rng(4)
    T_vo_cam = se3.invert_transform(seq.camera.T_cam_target_gt[: idx[-1] + 1])
    C = np.stack([se3.invert_transform(noise.vo_drift(T_vo_cam, vr, vt, rng, student_t_dof=nu)[idx])
                  for _ in range(M_ALL)])
    A = _robot_draws(seq, idx, rng, 2e-4, 2e-4)
    r = _pair_errors(seq, idx, A, C)
    _assert_bound_is_the_scatter(_gls_errors(_jacobian(seq, idx, scale_unknown=True), r, correlated=True), b)


def test_drifting_monocular_scale():
    """A log-scale random walk over the frames, along every pair's scale direction, ``log s`` a nuisance."""
    drift, s0 = 4e-3, 2.0
    seq = _sequence(world_frame="vo_origin", scale=s0, scale_drift_std=drift, camera_rot_std_rad=2e-4,
                    camera_trans_std_m=2e-4, camera_trans_std_z_m=4e-4, robot_rot_std_rad=2e-4,
                    robot_trans_std_m=2e-4)  # fmt: skip
    idx = np.arange(4, 44, 4)
    b = bounds.sequence_bound(seq, keyframes=idx)
    rng = np.random.default_rng(5)
    n = idx[-1] + 1
    C_gt = seq.camera.T_cam_target_gt[:n]
    C = []
    for _ in range(M_ALL):
        Cm = noise.camera_se3_gaussian(C_gt[idx], 2e-4, 2e-4, 4e-4, rng)
        _, s = noise.apply_scale(C_gt, s0, drift, rng)
        Cm[:, :3, 3] *= s[idx, None]
        C.append(Cm)
    A = _robot_draws(seq, idx, rng, 2e-4, 2e-4)
    r = _pair_errors(seq, idx, A, np.stack(C), scale=s0)
    _assert_bound_is_the_scatter(_gls_errors(_jacobian(seq, idx, scale_unknown=True), r, correlated=True), b)


def test_student_t_information_factor_is_the_score_variance():
    """Monte-Carlo of the score of a 6-d Student-t location: its variance is ``(nu + 6) / (nu + 8)`` times the
    Gaussian information."""
    rng = np.random.default_rng(6)
    for nu in (3.0, 5.0):
        x = noise.draw_twists(rng, 400_000, 1.0, 1.0, student_t_dof=nu)
        score = (nu + 6.0) * x / (nu + np.einsum("ni,ni->n", x, x))[:, None]
        info = float(np.mean(np.einsum("ni,ni->n", score, score))) / 6.0
        assert info == pytest.approx(bounds.student_t_information_factor(nu), rel=0.01)
    assert bounds.student_t_information_factor(None) == 1.0 == bounds.student_t_information_factor(np.inf)


@pytest.mark.parametrize("where", ["robot", "camera"])
def test_student_t_noise_scales_the_bound(where):
    """Student-t noise of the robot (``config_json.robot_noise.student_t_dof``) or of the camera (the index's
    ``student_t_dof``): the bound's covariance is the Gaussian one times ``(nu + 8) / (nu + 6)``."""
    base = dict(robot_rot_std_rad=1e-3, robot_trans_std_m=1e-3) if where == "robot" else dict(
        camera_rot_std_rad=1e-3, camera_trans_std_m=1e-3, camera_trans_std_z_m=2e-3)  # fmt: skip
    key = "robot_student_t_dof" if where == "robot" else "student_t_dof"
    gauss = _sequence(**base)
    heavy = _sequence(**base, **{key: 3.0})
    if where == "robot":
        assert heavy.config["robot_noise"]["student_t_dof"] == 3.0
    idx = np.arange(2, len(gauss.camera), 4)
    bg = bounds.sequence_bound(gauss, keyframes=idx)
    bt = bounds.sequence_bound(heavy, keyframes=idx)
    np.testing.assert_allclose(bt.cov, bg.cov * 11.0 / 9.0, rtol=1e-9, atol=1e-30)


def test_robot_student_t_read_from_either_form_of_config():
    from kinhec.synth.recipe_json import robot_student_t_dof

    assert robot_student_t_dof({"robot_noise": {"student_t_dof": 4.0}}) == 4.0
    assert robot_student_t_dof({"robot_noise": {"student_t_dof": None}}) is None
    assert robot_student_t_dof({"robot_student_t_dof": 5.0}) == 5.0  # an older kinhec row: the flat recipe
    assert robot_student_t_dof({}) is None
