"""Ground-truth recovery, statistical behaviour, registry and error paths of kinhec.solvers.

The data are the synthetic chains of ``test_solvers_synth.py`` (both
configurations, three arm workspaces, se3 noise, injected outliers, monocular
scale).
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from helpers.chains import CONFIGURATIONS, WORKSPACES, make_chain

from kinhec import solvers
from kinhec.geometry import se3
from kinhec.util.errors import ConvergenceError, DegenerateMotionError, InputError, UnknownNameError
from kinhec.solvers import DegenerateMotionWarning

AXXB_CLOSED = {
    "tsai_lenz": solvers.tsai_lenz,
    "park_martin": solvers.park_martin,
    "horaud_dornaika": solvers.horaud_dornaika,
    "daniilidis": solvers.daniilidis,
    "andreff": solvers.andreff,
}
AXYB_CLOSED = {"shah": solvers.shah, "li_kronecker": solvers.li_kronecker}
REGISTRY_NAMES = [
    "tsai_lenz",
    "park_martin",
    "horaud_dornaika",
    "daniilidis",
    "andreff",
    "andreff_scale",
    "park_martin+lm",
    "ransac_park_martin",
    "shah",
    "li_kronecker",
    "shah+lm",
]
C2 = dict(robot_noise=(0.0005, 0.0003), camera_noise=(0.002, 0.001, 0.001, 0.003))  # levels r2 / c2


def noise(k):
    return dict(robot_noise=(0.0005 * k, 0.0003 * k), camera_noise=(0.002 * k, 0.001 * k, 0.001 * k, 0.003 * k))


def run(name, chain):
    spec = solvers.get_solver(name)
    if spec.kind == "axxb":
        return spec.run(*chain.motions())
    return spec.run(chain.A_abs, chain.B_abs)


def err(T_est, T_true):
    return np.array(se3.pose_error(T_est, T_true))


# --------------------------------------------------------------------------- #
# noise-free recovery
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@pytest.mark.parametrize("workspace", list(WORKSPACES))
def test_noise_free_recovery_every_registry_solver(configuration, workspace):
    rng = np.random.default_rng(hash((configuration, workspace)) % 2**32)
    ch = make_chain(rng, 15, configuration=configuration, workspace=workspace)
    for name in REGISTRY_NAMES:
        res = run(name, ch)
        rot, trans = err(res.X, ch.X)
        assert rot < 1e-6 and trans < 1e-6, (name, rot, trans)
        if solvers.get_solver(name).kind == "axyb":
            rot, trans = err(res.Y, ch.Y)
            assert rot < 1e-6 and trans < 1e-6, (name, rot, trans)


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_noise_free_recovery_public_functions(configuration):
    rng = np.random.default_rng(7)
    ch = make_chain(rng, 6, configuration=configuration, workspace="large_arm")
    A, B = ch.motions()
    for name, f in AXXB_CLOSED.items():
        X = f(A, B)
        assert X.shape == (4, 4)
        np.testing.assert_allclose(X, ch.X, atol=1e-9, err_msg=name)
    for name, f in AXYB_CLOSED.items():
        X, Y = f(ch.A_abs, ch.B_abs)
        np.testing.assert_allclose(X, ch.X, atol=1e-9, err_msg=name)
        np.testing.assert_allclose(Y, ch.Y, atol=1e-9, err_msg=name)


def test_minimum_inputs_suffice():
    rng = np.random.default_rng(11)
    ch = make_chain(rng, 3)  # two motions, three pose pairs
    A, B = ch.motions()
    for name, f in AXXB_CLOSED.items():
        np.testing.assert_allclose(f(A, B), ch.X, atol=1e-8, err_msg=name)
    for name, f in AXYB_CLOSED.items():
        X, Y = f(ch.A_abs, ch.B_abs)
        np.testing.assert_allclose(X, ch.X, atol=1e-8, err_msg=name)
        np.testing.assert_allclose(Y, ch.Y, atol=1e-8, err_msg=name)


def test_motions_near_180_deg_keep_quaternion_signs_consistent():
    """A motion of almost 180 deg must not flip sign between A and B (noise puts w on either side of 0)."""
    rng = np.random.default_rng(3)
    ch = make_chain(rng, 30, **C2)
    A, B = ch.motions()
    # append a motion of 179.98 deg about a generic axis, seen exactly through X, then perturbed
    axis = np.array([0.3, -0.5, 0.81])
    axis /= np.linalg.norm(axis)
    M = se3.transform_from_rotation_translation(se3.so3_exp(axis * np.radians(179.98)), [0.1, 0.0, 0.05])
    M_B = se3.invert_transform(ch.X) @ M @ ch.X
    M_B = M_B @ se3.se3_exp([0.0, 0.0, 0.002, 0.0, 0.0, 0.0])  # enough to cross 180 deg on the camera side
    A2, B2 = np.concatenate([A, M[None]]), np.concatenate([B, M_B[None]])
    for name in ("tsai_lenz", "park_martin", "horaud_dornaika", "daniilidis"):
        e_without = err(AXXB_CLOSED[name](A, B), ch.X)
        e_with = err(AXXB_CLOSED[name](A2, B2), ch.X)
        # the appended motion is nearly exact: with consistent signs it can only help (a flipped sign pulls the
        # rotation away: park_martin 0.089 -> 0.131 deg, tsai_lenz and daniilidis by degrees)
        assert e_with[0] < e_without[0] + 0.01, (name, e_without, e_with)


# --------------------------------------------------------------------------- #
# refinement
# --------------------------------------------------------------------------- #
def test_lm_does_not_move_an_exact_solution():
    rng = np.random.default_rng(5)
    for conf in CONFIGURATIONS:
        ch = make_chain(rng, 20, configuration=conf)
        A, B = ch.motions()
        np.testing.assert_allclose(solvers.refine_lm(A, B, ch.X), ch.X, atol=1e-12)
        X, Y = solvers.refine_lm_axyb(ch.A_abs, ch.B_abs, ch.X, ch.Y)
        np.testing.assert_allclose(X, ch.X, atol=1e-12)
        np.testing.assert_allclose(Y, ch.Y, atol=1e-12)
        # also with explicit noise scales (the optimiser runs, and stays put)
        X = solvers.refine_lm(A, B, ch.X, rot_std_rad=1e-3, trans_std_m=1e-3)
        np.testing.assert_allclose(X, ch.X, atol=1e-10)


def test_lm_converges_from_a_perturbed_start_on_exact_data():
    rng = np.random.default_rng(6)
    ch = make_chain(rng, 25, configuration="eye_to_hand")
    A, B = ch.motions()
    X0 = ch.X @ se3.se3_exp([0.05, -0.08, 0.1, 0.02, -0.03, 0.01])  # ~8 deg, ~4 cm off
    assert err(solvers.refine_lm(A, B, X0), ch.X).max() < 1e-6
    Y0 = ch.Y @ se3.se3_exp([-0.06, 0.04, 0.05, -0.02, 0.03, 0.02])
    X, Y = solvers.refine_lm_axyb(ch.A_abs, ch.B_abs, X0, Y0)
    assert err(X, ch.X).max() < 1e-6 and err(Y, ch.Y).max() < 1e-6


def _fd_jacobian(fun, p, h=1e-6):
    return np.stack([(fun(p + h * e) - fun(p - h * e)) / (2 * h) for e in np.eye(p.size)], axis=1)


def test_lm_jacobians_match_finite_differences():
    from kinhec.solvers import refine as r

    rng = np.random.default_rng(8)
    ch = make_chain(rng, 6, **C2)
    A, B = ch.motions()
    fun, jac = r._axxb_problem(A, B, ch.X[:3, :3], ch.X[:3, 3], 2e-3, 1e-3)
    p = np.array([0.1, -0.2, 0.15, 0.01, 0.02, -0.03])  # away from 0, where J_r matters
    np.testing.assert_allclose(jac(p), _fd_jacobian(fun, p), atol=1e-5 * np.abs(jac(p)).max())
    fun, jac, _ = r._axyb_problem(ch.A_abs, ch.B_abs, ch.X[:3, :3], ch.X[:3, 3], ch.Y[:3, :3], ch.Y[:3, 3], 2e-3, 1e-3)
    p = np.array([0.1, -0.2, 0.15, 0.01, 0.02, -0.03, -0.3, 0.05, 0.2, -0.02, 0.01, 0.04])
    np.testing.assert_allclose(jac(p), _fd_jacobian(fun, p), atol=1e-5 * np.abs(jac(p)).max())


def test_twist_jacobians_match_finite_differences():
    from kinhec.solvers import refine as r

    rng = np.random.default_rng(9)
    ch = make_chain(rng, 6, **C2)
    A, B = ch.motions()
    for Y0, n in ((None, 6), (ch.Y, 12)):
        AA, BB = (A, B) if Y0 is None else (ch.A_abs, ch.B_abs)
        fun, jac, _ = r._twist_problem(AA, BB, ch.X, Y0, 2e-3, 1e-3)
        p = rng.normal(0.0, 0.2, n)  # away from 0, where both Jacobians of SE(3) matter
        np.testing.assert_allclose(jac(p), _fd_jacobian(fun, p), atol=1e-6 * np.abs(jac(p)).max())
    # the inverse right Jacobian of SE(3), near 0 (series) and up to pi
    for theta in (1e-6, 5e-3, 0.5, 2.0, 3.1):
        w = rng.normal(size=3)
        xi = np.r_[theta * w / np.linalg.norm(w), rng.normal(size=3)]
        E = se3.se3_exp(xi)
        fd = _fd_jacobian(lambda d: se3.se3_log(E @ se3.se3_exp(d)), np.zeros(6))
        np.testing.assert_allclose(r._se3_jr_inv(xi[None])[0], fd, atol=1e-7)


def test_twist_refinement_ends_at_a_stationary_point_of_its_cost():
    """Noisy data: the gradient J^T r of the unweighted twist cost vanishes at the result (scipy's tolerances)."""
    from kinhec.solvers import refine as r

    rng = np.random.default_rng(10)
    ch = make_chain(rng, 30, **noise(3))
    A, B = ch.motions()
    X0 = solvers.park_martin(A, B)
    X = solvers.refine_lm(A, B, X0)
    fun, jac, _ = r._twist_problem(A, B, X, None, 1.0, 1.0)
    g0 = np.abs(jac(np.zeros(6)).T @ fun(np.zeros(6))).max()
    fun0, jac0, _ = r._twist_problem(A, B, X0, None, 1.0, 1.0)
    assert g0 < 1e-4 * np.abs(jac0(np.zeros(6)).T @ fun0(np.zeros(6))).max()  # 1.7e5 times smaller here
    assert np.sum(fun(np.zeros(6)) ** 2) < np.sum(fun0(np.zeros(6)) ** 2)
    with pytest.raises(InputError, match="cost"):
        solvers.refine_lm(A, B, X0, cost="huber")


def test_lm_never_worse_than_its_start_on_average():
    """The chordal cost with noise scales estimated from the residuals: rotation and translation both gain."""
    e_pm, e_lm, e_sh, e_shlm = [], [], [], []
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        conf = CONFIGURATIONS[seed % 2]
        ch = make_chain(rng, 20, configuration=conf, **noise(3))
        A, B = ch.motions()
        X0 = solvers.park_martin(A, B)
        e_pm.append(err(X0, ch.X))
        e_lm.append(err(solvers.refine_lm(A, B, X0, cost="chordal"), ch.X))
        X0, Y0 = solvers.shah(ch.A_abs, ch.B_abs)
        X1, Y1 = solvers.refine_lm_axyb(ch.A_abs, ch.B_abs, X0, Y0, cost="chordal")
        e_sh.append(np.r_[err(X0, ch.X), err(Y0, ch.Y)])
        e_shlm.append(np.r_[err(X1, ch.X), err(Y1, ch.Y)])
    # rotation improves, translation is at least as good (1 % tolerance for the average of 40 draws)
    assert np.mean(e_lm, 0)[0] < np.mean(e_pm, 0)[0]
    assert np.mean(e_lm, 0)[1] <= 1.01 * np.mean(e_pm, 0)[1]
    assert np.mean(e_shlm, 0)[0] < np.mean(e_sh, 0)[0]
    assert (np.mean(e_shlm, 0)[[1, 3]] <= 1.01 * np.mean(e_sh, 0)[[1, 3]]).all()
    assert np.mean(e_shlm, 0)[2] < np.mean(e_sh, 0)[2]


# --------------------------------------------------------------------------- #
# noisy behaviour
# --------------------------------------------------------------------------- #
def _mean_errors(n, k, seeds=range(8)):
    """Mean (rot, trans) error per registry solver over several chains of n poses at noise level k."""
    out = {name: [] for name in REGISTRY_NAMES}
    for s in seeds:
        rng = np.random.default_rng(1000 * n + s)
        ch = make_chain(rng, n, configuration=CONFIGURATIONS[s % 2], **noise(k))
        for name in REGISTRY_NAMES:
            out[name].append(err(run(name, ch).X, ch.X))
    return {name: np.mean(v, 0) for name, v in out.items()}


def test_error_shrinks_with_more_poses_and_grows_with_noise():
    few = _mean_errors(8, 1.0)
    many = _mean_errors(60, 1.0)
    loud = _mean_errors(60, 4.0)
    for name in REGISTRY_NAMES:
        assert (many[name] < few[name]).all(), (name, few[name], many[name])
        assert (loud[name] > 2.0 * many[name]).all(), (name, many[name], loud[name])
        # within a small multiple of the injected noise (0.11 deg, 3 mm per camera frame at k = 1)
        assert many[name][0] < 0.1 and many[name][1] < 2.0, (name, many[name])


def test_li_kronecker_is_not_shah():
    rng = np.random.default_rng(21)
    ch = make_chain(rng, 30, **noise(3))
    Xs, Ys = solvers.shah(ch.A_abs, ch.B_abs)
    Xl, Yl = solvers.li_kronecker(ch.A_abs, ch.B_abs)
    d_rot, d_trans = err(Xl, Xs)
    assert d_rot > 1e-4 and d_trans > 1e-3  # genuinely different estimates
    assert err(Xl, ch.X)[0] < 0.5 and err(Xs, ch.X)[0] < 0.5  # both reasonable


def test_axyb_beats_axxb_on_the_same_poses():
    """The A X = Y B solvers use every absolute pose; with camera noise they end closer than A X = X B."""
    e = _mean_errors(40, 1.0, seeds=range(8))
    assert e["shah"][1] < e["park_martin"][1]


# --------------------------------------------------------------------------- #
# outliers and scale
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_ransac_survives_30_percent_outliers(configuration):
    rng = np.random.default_rng(31)
    ch = make_chain(rng, 60, configuration=configuration, outlier_fraction=0.3, **C2)
    A, B = ch.motions()
    good = ~(ch.outlier[:-1] | ch.outlier[1:])  # a bad frame spoils both motions that share it
    res = solvers.ransac_axxb(A, B, np.random.default_rng(0))
    assert isinstance(res, solvers.RansacResult)
    assert res.n_inliers == int(res.inliers.sum())
    assert res.inliers.shape == (A.shape[0],)
    # inliers found are clean motions, and most clean motions are found
    assert not (res.inliers & ~good).any()
    assert res.n_inliers >= 0.9 * good.sum()
    e_ransac = err(res.X, ch.X)
    e_clean = err(solvers.park_martin(A[good], B[good]), ch.X)
    assert e_ransac[0] < 1.5 * e_clean[0] + 0.02 and e_ransac[1] < 1.5 * e_clean[1] + 0.5
    # the closed forms fail on the same data
    for name in ("park_martin", "tsai_lenz", "andreff", "daniilidis", "horaud_dornaika"):
        e = err(AXXB_CLOSED[name](A, B), ch.X)
        assert e[0] > 10 * e_ransac[0] or e[1] > 10 * e_ransac[1], name


def test_ransac_hypothesis_residuals_are_those_of_each_motion():
    """The (H, N) residual tables of the hypotheses equal the per-hypothesis, per-motion formulas."""
    from kinhec.solvers.ransac import _residuals

    rng = np.random.default_rng(33)
    ch = make_chain(rng, 25, **C2)
    A, B = ch.motions()
    alpha = np.stack([se3.so3_log(R) for R in A[:, :3, :3]])
    beta = np.stack([se3.so3_log(R) for R in B[:, :3, :3]])
    R = se3.random_rotations(rng, 7)
    t = rng.normal(size=(7, 3))
    rot, trans = _residuals(alpha, beta, A[:, :3, :3], A[:, :3, 3], B[:, :3, 3], R, t)
    assert rot.shape == trans.shape == (7, A.shape[0])
    for h in range(7):
        exp_rot = np.linalg.norm(alpha - beta @ R[h].T, axis=-1)
        exp_trans = np.linalg.norm(A[:, :3, :3] @ t[h] + A[:, :3, 3] - B[:, :3, 3] @ R[h].T - t[h], axis=-1)
        np.testing.assert_allclose(rot[h], exp_rot, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(trans[h], exp_trans, rtol=1e-12, atol=1e-15)
    # the true X leaves every motion's residual at the noise only
    rot_x, trans_x = _residuals(alpha, beta, A[:, :3, :3], A[:, :3, 3], B[:, :3, 3], ch.X[None, :3, :3],
                                ch.X[None, :3, 3])  # fmt: skip
    assert rot_x.max() < 0.05 and trans_x.max() < 0.05


def test_ransac_is_deterministic_and_seeded_through_the_registry():
    rng = np.random.default_rng(32)
    ch = make_chain(rng, 40, outlier_fraction=0.3, **C2)
    A, B = ch.motions()
    r1 = solvers.ransac_axxb(A, B, np.random.default_rng(5))
    r2 = solvers.ransac_axxb(A, B, np.random.default_rng(5))
    np.testing.assert_array_equal(r1.X, r2.X)
    np.testing.assert_array_equal(r1.inliers, r2.inliers)
    spec = solvers.get_solver("ransac_park_martin")
    s1, s2 = spec.run(A, B), spec.run(A.copy(), B.copy())
    np.testing.assert_array_equal(s1.X, s2.X)
    assert s1.n_inliers == s2.n_inliers and s1.n_inliers > 0


@pytest.mark.parametrize("scale", [0.1, 0.5, 3.7, 10.0])
def test_andreff_scale_recovers_monocular_scale(scale):
    for conf in CONFIGURATIONS:
        rng = np.random.default_rng(int(scale * 10))
        ch = make_chain(rng, 30, configuration=conf, scale=scale)
        A, B = ch.motions()
        X, s = solvers.andreff(A, B, unknown_scale=True)
        assert abs(s / scale - 1) < 1e-9
        np.testing.assert_allclose(X, ch.X, atol=1e-9)  # metric translation
        rng = np.random.default_rng(int(scale * 10))
        ch = make_chain(rng, 30, configuration=conf, scale=scale, **C2)
        A, B = ch.motions()
        res = solvers.get_solver("andreff_scale").run(A, B)
        assert abs(res.scale / scale - 1) < 0.01
        assert err(res.X, ch.X)[1] < 3.0
        # the known-scale solvers get the metric translation wrong by the scale factor
        if abs(scale - 1) > 0.4:
            assert err(solvers.andreff(A, B), ch.X)[1] > 20.0


def test_andreff_scale_is_unbiased_under_camera_noise():
    # camera translation noise (c3: 3 mm lateral, 10 mm depth) on short motions: an estimator with the noisy
    # camera translations as regressors shrinks 1/s and overestimates s; the mean must stay on the truth
    est = []
    for k in range(200):
        rng = np.random.default_rng(1000 + k)
        ch = make_chain(rng, 20, scale=2.0, camera_noise=(0.005, 0.003, 0.003, 0.01))
        est.append(solvers.andreff(*ch.motions(), unknown_scale=True)[1])
    est = np.asarray(est)
    sem = est.std() / np.sqrt(est.size)
    assert abs(est.mean() - 2.0) < max(4 * sem, 0.005), (est.mean(), sem)


def test_registry_andreff_scale_is_the_published_form_biased_up_by_camera_noise():
    # the benchmark's andreff_scale takes 1/s with the noisy camera translations as regressor (the published form):
    # errors in variables shrink 1/s, so s comes out too large, while andreff(..., unknown_scale=True) stays unbiased
    spec = solvers.get_solver("andreff_scale")
    pub, own = [], []
    for k in range(60):
        rng = np.random.default_rng(3000 + k)
        ch = make_chain(rng, 20, scale=2.0, camera_noise=(0.02, 0.012, 0.012, 0.04))  # level c5
        A, B = ch.motions()
        pub.append(spec.run(A, B).scale)
        own.append(solvers.andreff(A, B, unknown_scale=True)[1])
        np.testing.assert_allclose(solvers.andreff(A, B, unknown_scale=True, scale_regressor="camera")[1], pub[-1])
    pub, own = np.asarray(pub), np.asarray(own)
    sem = pub.std() / np.sqrt(pub.size)
    assert pub.mean() - 2.0 > 4 * sem and np.median(pub) > np.median(own), (pub.mean(), sem, np.median(own))
    # noise-free: both forms are exact
    ch = make_chain(np.random.default_rng(5), 20, scale=3.0)
    res = spec.run(*ch.motions())
    assert abs(res.scale - 3.0) < 1e-9 and err(res.X, ch.X)[1] < 1e-6
    with pytest.raises(InputError, match="scale_regressor: expected one of"):
        solvers.andreff(*ch.motions(), unknown_scale=True, scale_regressor="both")


def test_published_andreff_scale_warns_on_a_negative_scale():
    rng = np.random.default_rng(72)
    ch = make_chain(rng, 10)
    A, B = ch.motions()
    B = B.copy()
    B[:, :3, 3] *= -1.0  # camera translations pointing the wrong way: the fitted 1/s is negative
    with pytest.warns(solvers.DegenerateMotionWarning, match="negative scale"):
        res = solvers.get_solver("andreff_scale").run(A, B)
    assert res.scale < 0


def test_andreff_scale_is_one_on_metric_data():
    rng = np.random.default_rng(41)
    ch = make_chain(rng, 30, **C2)
    _, s = solvers.andreff(*ch.motions(), unknown_scale=True)
    assert abs(s - 1) < 0.01


# --------------------------------------------------------------------------- #
# degeneracy
# --------------------------------------------------------------------------- #
def _single_axis_chain(rng, n, cone_deg=0.0):
    """Flange rotations about one axis (or axes within a cone), positions as in a normal chain."""
    ch = make_chain(rng, n)
    axis = np.array([0.2, 0.3, 0.93]) / np.linalg.norm([0.2, 0.3, 0.93])
    axes = se3.random_axes_in_cone(rng, n, axis, np.radians(cone_deg))
    R = se3.so3_exp(axes * rng.uniform(-1.0, 1.0, (n, 1)))
    A = se3.transform_from_rotation_translation(R, ch.A_abs[:, :3, 3])
    B = se3.invert_transform(ch.Y) @ A @ ch.X
    return A, B, ch


def test_parallel_axes_raise_a_named_error():
    rng = np.random.default_rng(51)
    A_abs, B_abs, _ = _single_axis_chain(rng, 12)
    from kinhec.geometry import motion

    A, B = motion.relative_motions(A_abs), motion.relative_motions(B_abs)
    for name in REGISTRY_NAMES:
        spec = solvers.get_solver(name)
        args = (A, B) if spec.kind == "axxb" else (A_abs, B_abs)
        with pytest.raises(DegenerateMotionError, match="parallel"):
            spec.run(*args)
    X0 = np.eye(4)
    with pytest.raises(DegenerateMotionError, match="parallel"):
        solvers.refine_lm(A, B, X0)
    with pytest.raises(DegenerateMotionError, match="parallel"):
        solvers.refine_lm_axyb(A_abs, B_abs, X0, X0)
    with pytest.raises(DegenerateMotionError, match="parallel"):
        solvers.ransac_axxb(A, B, np.random.default_rng(0))


def test_pure_translations_raise_a_named_error():
    rng = np.random.default_rng(52)
    ch = make_chain(rng, 8)
    A_abs = ch.A_abs.copy()
    A_abs[:, :3, :3] = A_abs[0, :3, :3]
    B_abs = se3.invert_transform(ch.Y) @ A_abs @ ch.X
    from kinhec.geometry import motion

    A, B = motion.relative_motions(A_abs), motion.relative_motions(B_abs)
    for name, f in AXXB_CLOSED.items():
        with pytest.raises(DegenerateMotionError, match="without any rotation"):
            f(A, B)
    with pytest.raises(DegenerateMotionError, match="without any rotation"):
        solvers.shah(A_abs, B_abs)


def test_nearly_parallel_axes_warn_with_the_measured_scatter():
    rng = np.random.default_rng(53)
    A_abs, B_abs, ch = _single_axis_chain(rng, 15, cone_deg=0.5)
    from kinhec.geometry import motion

    A, B = motion.relative_motions(A_abs), motion.relative_motions(B_abs)
    for name, f in AXXB_CLOSED.items():
        with pytest.warns(DegenerateMotionWarning, match=r"lambda2 = [0-9.e-]+"):
            X = f(A, B)
        # exact data still pin X down
        assert err(X, ch.X).max() < 1e-5, name
    with pytest.warns(DegenerateMotionWarning, match="nearly parallel"):
        solvers.shah(A_abs, B_abs)


def test_ransac_in_a_narrow_cone_of_axes_warns_and_still_solves():
    rng = np.random.default_rng(55)
    ch = make_chain(rng, 2)
    axis = np.array([0.2, 0.3, 0.93]) / np.linalg.norm([0.2, 0.3, 0.93])
    axes = se3.random_axes_in_cone(rng, 25, axis, np.radians(3.0))
    A = se3.transform_from_rotation_translation(
        se3.so3_exp(axes * rng.uniform(0.2, 1.0, (25, 1))), rng.normal(0, 0.1, (25, 3))
    )
    B = se3.invert_transform(ch.X) @ A @ ch.X
    with pytest.warns(DegenerateMotionWarning, match="no two rotation axes are 10 deg apart"):
        res = solvers.ransac_axxb(A, B, np.random.default_rng(0))
    assert res.n_inliers == 25 and err(res.X, ch.X).max() < 1e-6


def test_well_spread_axes_do_not_warn():
    rng = np.random.default_rng(54)
    ch = make_chain(rng, 20, **C2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in REGISTRY_NAMES:
            run(name, ch)


# --------------------------------------------------------------------------- #
# registry
# --------------------------------------------------------------------------- #
def test_registry_names_kinds_and_results():
    # the baselines, then the maximum-likelihood solver (tests/test_he_ml.py)
    assert solvers.solver_names() == REGISTRY_NAMES + ["he_ml"]
    assert set(solvers.solver_names("axyb")) == {"shah", "li_kronecker", "shah+lm", "he_ml"}
    assert set(solvers.solver_names("axxb")) == set(REGISTRY_NAMES) - {"shah", "li_kronecker", "shah+lm"}
    rng = np.random.default_rng(61)
    ch = make_chain(rng, 12, **C2)
    for name in REGISTRY_NAMES:
        spec = solvers.get_solver(name)
        assert spec.name == name and spec.citation and spec.description
        res = run(name, ch)
        assert isinstance(res, solvers.SolverResult)
        assert res.X.shape == (4, 4) and np.isfinite(res.X).all()
        assert (res.Y is not None) == (spec.kind == "axyb") == ("Y" in spec.returns)
        assert (res.scale is not None) == (name == "andreff_scale") == ("scale" in spec.returns)
        assert (res.n_inliers is not None) == (name == "ransac_park_martin") == ("n_inliers" in spec.returns)
    # he_ml: X, Y and its inliers always; a scale only where the data have one (none here: metric camera)
    spec = solvers.get_solver("he_ml")
    res = spec.run(ch.A_abs, ch.B_abs)
    assert res.Y is not None and res.scale is None and 3 <= res.n_inliers <= 12
    assert {"X", "Y", "scale", "n_inliers"} <= {f.strip() for f in spec.returns.split(",")}


def test_registry_composites_equal_their_parts():
    rng = np.random.default_rng(62)
    ch = make_chain(rng, 20, **C2)
    A, B = ch.motions()
    np.testing.assert_array_equal(
        solvers.get_solver("park_martin+lm").run(A, B).X, solvers.refine_lm(A, B, solvers.park_martin(A, B))
    )
    X0, Y0 = solvers.shah(ch.A_abs, ch.B_abs)
    res = solvers.get_solver("shah+lm").run(ch.A_abs, ch.B_abs)
    X1, Y1 = solvers.refine_lm_axyb(ch.A_abs, ch.B_abs, X0, Y0)
    np.testing.assert_array_equal(res.X, X1)
    np.testing.assert_array_equal(res.Y, Y1)
    for name, f in AXXB_CLOSED.items():
        np.testing.assert_array_equal(solvers.get_solver(name).run(A, B).X, f(A, B))


def test_stacks_validated_once_give_the_same_results_and_the_same_errors():
    from kinhec.solvers._common import check_motions, check_pairs, validated_stacks

    rng = np.random.default_rng(63)
    ch = make_chain(rng, 12, **C2)
    A, B = ch.motions()
    A_abs, B_abs = ch.A_abs.copy(), ch.B_abs.copy()
    plain = {n: run(n, ch) for n in REGISTRY_NAMES}
    with validated_stacks((A, B), (A_abs, B_abs)):
        assert not A.flags.writeable and not A_abs.flags.writeable  # nothing may change them while trusted
        for n in REGISTRY_NAMES:
            spec = solvers.get_solver(n)
            res = spec.run(A, B) if spec.kind == "axxb" else spec.run(A_abs, B_abs)
            np.testing.assert_array_equal(res.X, plain[n].X, err_msg=n)
        # the count is still checked, and other arrays are checked in full
        with pytest.raises(InputError, match="expected at least 30 motions, got 11"):
            check_motions(A, B, min_motions=30)
        bad = A.copy()
        bad[0, :3, :3] *= 1.01
        with pytest.raises(InputError, match="orthonormal"):
            check_motions(bad, B)
        # the block vouches for this thread only
        import threading

        from kinhec.solvers._common import _validated

        seen = []
        worker = threading.Thread(target=lambda: seen.append(_validated(A, B)))
        worker.start()
        worker.join()
        assert seen == [False] and _validated(A, B)
    assert A.flags.writeable and A_abs.flags.writeable  # given back as they came
    # a pair that fails is not trusted: each solver raises its own error inside the block as well
    bad = A.copy()
    bad[3, 3, 0] = 0.5
    with validated_stacks((bad, B)):
        assert bad.flags.writeable
        with pytest.raises(InputError, match=r"last row \[0, 0, 0, 1\]"):
            solvers.get_solver("park_martin").run(bad, B)
        with pytest.raises(InputError, match=r"last row"):
            check_pairs(bad, B)


def test_unknown_solver_name_lists_the_valid_ones():
    with pytest.raises(UnknownNameError, match="unknown solver 'park'.*park_martin.*tsai_lenz"):
        solvers.get_solver("park")
    with pytest.raises(UnknownNameError, match="shah\\+lm"):
        solvers.get_solver(None)
    with pytest.raises(InputError, match="kind: expected one of axxb, axyb"):
        solvers.solver_names("axzb")


# --------------------------------------------------------------------------- #
# bad input
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def good():
    rng = np.random.default_rng(71)
    ch = make_chain(rng, 8)
    A, B = ch.motions()
    return A, B, ch.A_abs, ch.B_abs


ALL_AXXB = [
    solvers.tsai_lenz,
    solvers.park_martin,
    solvers.horaud_dornaika,
    solvers.daniilidis,
    solvers.andreff,
    lambda A, B: solvers.andreff(A, B, unknown_scale=True),
    lambda A, B: solvers.refine_lm(A, B, np.eye(4)),
    lambda A, B: solvers.ransac_axxb(A, B, np.random.default_rng(0)),
]
ALL_AXYB = [
    solvers.shah,
    solvers.li_kronecker,
    lambda A, B: solvers.refine_lm_axyb(A, B, np.eye(4), np.eye(4)),
]


@pytest.mark.parametrize("f", ALL_AXXB)
def test_axxb_input_errors(f, good):
    A, B, _, _ = good
    with pytest.raises(InputError, match=r"A: expected relative motions of shape \(N, 4, 4\)"):
        f(A[0], B[0])
    with pytest.raises(InputError, match=r"A: expected shape \(\.\.\., 4, 4\)"):
        f(A[:, :3, :], B)
    with pytest.raises(InputError, match=r"B: expected the same shape as A"):
        f(A, B[:-1])
    bad = B.copy()
    bad[2, 0, 3] = np.nan
    with pytest.raises(InputError, match="B: expected finite values, got 1 non-finite"):
        f(A, bad)
    bad = A.copy()
    bad[1, :3, :3] *= 1.01
    with pytest.raises(InputError, match=r"A \(rotation block\): expected orthonormal"):
        f(bad, B)
    bad = B.copy()
    bad[3, :3, 0] *= -1
    with pytest.raises(InputError, match=r"B \(rotation block\): expected det\(R\) = \+1"):
        f(A, bad)
    bad = A.copy()
    bad[0, 3, 0] = 0.5
    with pytest.raises(InputError, match=r"A: expected last row \[0, 0, 0, 1\]"):
        f(bad, B)
    with pytest.raises(InputError, match="expected at least [23] motions, got 1"):
        f(A[:1], B[:1])
    with pytest.raises(InputError, match="A: expected a numeric array"):
        f("poses", B)


@pytest.mark.parametrize("f", ALL_AXYB)
def test_axyb_input_errors(f, good):
    _, _, A_abs, B_abs = good
    with pytest.raises(InputError, match=r"A_abs: expected absolute poses of shape \(N, 4, 4\)"):
        f(A_abs[0], B_abs[0])
    with pytest.raises(InputError, match="B_abs: expected the same shape as A_abs"):
        f(A_abs, B_abs[:-1])
    with pytest.raises(InputError, match="A_abs, B_abs: expected at least 3 pose pairs, got 2"):
        f(A_abs[:2], B_abs[:2])
    bad = A_abs.copy()
    bad[0, 0, 0] = np.inf
    with pytest.raises(InputError, match="A_abs: expected finite values"):
        f(bad, B_abs)


def test_refine_and_ransac_argument_errors(good):
    A, B, A_abs, B_abs = good
    with pytest.raises(InputError, match=r"X0: expected a single pose of shape \(4, 4\)"):
        solvers.refine_lm(A, B, A[:2])
    with pytest.raises(InputError, match=r"X0 \(rotation block\): expected orthonormal"):
        solvers.refine_lm(A, B, np.diag([2.0, 1.0, 1.0, 1.0]))
    with pytest.raises(InputError, match="Y0: expected"):
        solvers.refine_lm_axyb(A_abs, B_abs, np.eye(4), np.eye(3))
    with pytest.raises(InputError, match="rot_std_rad: expected a positive finite number"):
        solvers.refine_lm(A, B, np.eye(4), rot_std_rad=-1.0)
    with pytest.raises(InputError, match="rng: expected a numpy.random.Generator, got int"):
        solvers.ransac_axxb(A, B, 0)
    with pytest.raises(InputError, match="rot_threshold_deg: expected a positive finite number"):
        solvers.ransac_axxb(A, B, np.random.default_rng(0), rot_threshold_deg=0.0)
    with pytest.raises(InputError, match="n_hypotheses: expected an integer >= 1"):
        solvers.ransac_axxb(A, B, np.random.default_rng(0), n_hypotheses=0)
    with pytest.raises(InputError, match="min_axis_angle_deg: expected a value in"):
        solvers.ransac_axxb(A, B, np.random.default_rng(0), min_axis_angle_deg=95.0)


def test_andreff_scale_rejects_data_without_translation():
    rng = np.random.default_rng(72)
    ch = make_chain(rng, 10)
    A, B = ch.motions()
    B = B.copy()
    B[:, :3, 3] = 0.0  # camera translations carry no scale information
    with pytest.raises(DegenerateMotionError, match="positive scale"):
        solvers.andreff(A, B, unknown_scale=True)


def test_solvers_doc_examples_run():
    text = (Path(__file__).resolve().parents[1] / "docs" / "solvers.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 5
    exec(compile("\n".join(blocks), "docs/solvers.md", "exec"), {})


def test_ransac_adapts_its_thresholds_to_heavy_noise():
    # camera level c5 (1.1 deg, 12/40 mm): with fixed 2 deg / 20 mm thresholds most clean motions would be
    # rejected; the adaptive thresholds keep most of them and stay near Park-Martin on the same data
    rng = np.random.default_rng(5)
    ch = make_chain(rng, 40, camera_noise=(0.02, 0.012, 0.012, 0.04))
    A, B = ch.motions()
    try:
        n_fixed = solvers.ransac_axxb(A, B, np.random.default_rng(0), adaptive=False).n_inliers
    except ConvergenceError:  # no consensus of three motions at all
        n_fixed = 0
    res = solvers.ransac_axxb(A, B, np.random.default_rng(0))
    assert res.n_inliers >= 0.85 * len(A) > n_fixed
    e_r = err(res.X, ch.X)
    e_pm = err(solvers.park_martin(A, B), ch.X)
    assert e_r[0] < 2 * e_pm[0] + 0.1 and e_r[1] < 2 * e_pm[1] + 5.0


def test_ransac_without_consensus_raises_or_takes_every_motion():
    """Thresholds far below the noise: no consensus.  "raise" says so; "all" warns and fits every motion, as the
    registry's ransac_park_martin does (the published protocol returns an estimate on every sequence)."""
    from kinhec.solvers.ransac import NoConsensusWarning

    rng = np.random.default_rng(11)
    ch = make_chain(rng, 30, camera_noise=(0.02, 0.012, 0.012, 0.04))
    A, B = ch.motions()
    kw = dict(rot_threshold_deg=1e-3, trans_threshold_mm=1e-3, adaptive=False)
    with pytest.raises(ConvergenceError, match="consensus of at least 3 motions"):
        solvers.ransac_axxb(A, B, np.random.default_rng(0), **kw)
    with pytest.warns(NoConsensusWarning, match="every motion is taken as an inlier"):
        res = solvers.ransac_axxb(A, B, np.random.default_rng(0), on_no_consensus="all", **kw)
    assert not res.consensus and res.inliers.all() and res.n_inliers == len(A)
    # every motion an inlier: Park-Martin on all of them, polished as park_martin+lm is
    np.testing.assert_allclose(res.X, solvers.refine_lm(A, B, solvers.park_martin(A, B)), atol=1e-12)
    assert err(res.X, ch.X)[0] < 1.0
    with pytest.raises(InputError, match="on_no_consensus"):
        solvers.ransac_axxb(A, B, on_no_consensus="skip")
    # the registry's RANSAC on two motions (no consensus of three can form): an estimate, with the warning
    spec = solvers.get_solver("ransac_park_martin")
    with pytest.warns(NoConsensusWarning, match="2 motions"):
        out = spec.run(A[:2], B[:2])
    np.testing.assert_allclose(out.X, solvers.get_solver("park_martin+lm").run(A[:2], B[:2]).X, atol=1e-12)
    assert out.n_inliers == 2


def test_ransac_polish_keeps_the_consensus_and_does_not_lose_accuracy():
    rng = np.random.default_rng(12)
    ch = make_chain(rng, 60, outlier_fraction=0.3, **C2)
    A, B = ch.motions()
    plain = solvers.ransac_axxb(A, B, np.random.default_rng(0), polish=False)
    polished = solvers.ransac_axxb(A, B, np.random.default_rng(0))
    assert polished.n_inliers >= plain.n_inliers
    e_plain, e_pol = err(plain.X, ch.X), err(polished.X, ch.X)
    assert e_pol[0] < 1.5 * e_plain[0] + 0.01 and e_pol[1] < 1.5 * e_plain[1] + 0.2


def test_ransac_axxb_with_motions_that_do_not_rotate():
    """Pure translations (a robot moved without turning, three of them in Tabb's recording) give minimal samples
    whose translation is undetermined; they are passed over, and X is still found."""
    from kinhec.solvers.ransac import ransac_axxb

    rng = np.random.default_rng(20261206)
    X = se3.random_poses(rng, 1, trans_std_m=0.1)[0]
    A = se3.random_poses(rng, 24, trans_std_m=0.3)
    A[:3, :3, :3] = np.eye(3)  # three motions that only translate
    B = se3.invert_transform(X) @ A @ X
    est = ransac_axxb(A, B, np.random.default_rng(0)).X
    rot, tr = se3.pose_error(est, X)
    assert rot < 1e-6 and tr < 1e-6
