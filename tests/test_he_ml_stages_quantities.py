"""Stages of ``he_ml`` (``kinhec.solvers.he_ml_stages``) against independent computations: the Student-t and
Gaussian log-likelihoods against scipy's densities, the whitener against numpy's inverse and determinant, and the
minority-collapse rule at exactly half the pairs."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from kinhec.geometry import se3
from kinhec.solvers.he_ml_stages import collapse, reweighting
from kinhec.solvers.he_ml_stages import variance_components as vc


def _covariances(rng, n):
    M = rng.normal(size=(n, 6, 6)) * np.array([1e-3, 1e-3, 1e-3, 1e-4, 1e-4, 1e-4])[:, None]
    return M @ np.swapaxes(M, 1, 2) + 1e-9 * np.eye(6)


def test_whitener_gives_the_inverse_and_the_log_determinant():
    rng = np.random.default_rng(81)
    S = _covariances(rng, 7)
    Linv, Sinv, logdet = vc.whitener(S)
    np.testing.assert_allclose(Sinv @ S, np.broadcast_to(np.eye(6), S.shape), atol=1e-8)
    np.testing.assert_allclose(logdet, np.linalg.slogdet(S)[1], rtol=1e-12)
    np.testing.assert_allclose(np.swapaxes(Linv, 1, 2) @ Linv, Sinv, rtol=1e-10)


def test_log_likelihoods_are_scipys_densities():
    rng = np.random.default_rng(82)
    S = _covariances(rng, 9)
    r = np.array([rng.multivariate_normal(np.zeros(6), s) for s in S]) * 1.7
    Sinv = np.linalg.inv(S)
    d2 = np.einsum("ni,nij,nj->n", r, Sinv, r)
    logdet = np.linalg.slogdet(S)[1]
    for nu in (3.0, 7.5):
        want = sum(stats.multivariate_t(np.zeros(6), s, df=nu).logpdf(x) for x, s in zip(r, S))
        assert math.isclose(reweighting.t_loglik(d2, logdet, nu), want, rel_tol=1e-9)
    want = sum(stats.multivariate_normal(np.zeros(6), s).logpdf(x) for x, s in zip(r, S))
    assert math.isclose(reweighting.t_loglik(d2, logdet, math.inf), want, rel_tol=1e-9)


def test_half_the_pairs_are_not_a_minority():
    """10 pairs, 5 inliers standing still: no collapse at half; one inlier fewer is a collapse."""
    rng = np.random.default_rng(83)
    w = rng.normal(size=(10, 3))
    w *= 0.5 / np.linalg.norm(w, axis=1, keepdims=True)
    w[:5] = 1e-4 * rng.normal(size=(5, 3))  # the first five hardly rotate
    A = se3.transform_from_rotation_translation(se3.so3_exp(w), rng.normal(size=(10, 3)))
    inl = np.zeros(10, bool)
    inl[:5] = True
    assert collapse.minority_collapse(A, inl) is None
    inl[4] = False
    got = collapse.minority_collapse(A, inl)
    assert got is not None and got["n_inliers"] == 4 and got["rot_range_deg"] < collapse.MIN_ROT_RANGE_DEG


def _fit_state(nu, n=20, seed=84):
    from kinhec.solvers.he_ml_stages.model import predict
    from kinhec.solvers.he_ml_stages.state import FitState

    rng = np.random.default_rng(seed)
    A = se3.random_poses(rng, n)
    X, Y = se3.random_poses(rng, 2)
    Cp = predict(A, X, Y, "eye_in_hand")
    Cm = Cp @ se3.se3_exp(rng.normal(size=(n, 6)) * np.array([1e-3] * 3 + [1e-4] * 3))
    inl = np.ones(n, bool)
    inl[[3, 11]] = False
    theta = np.array([1e-6, 1e-8, 4e-8, 1e-7, 1e-8])
    return FitState(A=A, B=se3.invert_transform(Cm), configuration="eye_in_hand", robust=True, Cm=Cm, Cf=None, X=X,
                    Y=Y, ls=0.0, with_scale=False, inl=inl, repaired=np.zeros(n, bool), theta=theta, nu=nu)  # fmt: skip


def test_final_covariance_counts_the_fitted_parameters_and_the_student_weights():
    from kinhec.solvers.he_ml_stages.covariance import final_covariance

    gauss = _fit_state(math.inf)
    cov_gauss = final_covariance(gauss, None)
    # the components from the residual spreads lose the 12 fitted parameters of 6 x 18 inlying residuals
    np.testing.assert_allclose(gauss.theta, _fit_state(math.inf).theta * 108.0 / 96.0, rtol=1e-15)
    known = _fit_state(math.inf)
    cov_known = final_covariance(known, {"given": True})  # known levels: nothing to correct
    tol = 1e-7 * np.abs(cov_gauss).max()  # (up to the covariances' tiny diagonal floor)
    np.testing.assert_allclose(cov_gauss, cov_known * 108.0 / 96.0, rtol=1e-6, atol=tol)
    # Student-t weights with nu degrees of freedom: expected information (nu + 6) / (nu + 8) of the Gaussian's
    student = _fit_state(5.0)
    np.testing.assert_allclose(final_covariance(student, None), cov_gauss * 13.0 / 11.0, rtol=1e-6, atol=tol)
    assert np.all(np.linalg.eigvalsh(cov_gauss) > 0)


def test_a_minority_below_the_starts_share_is_a_collapse_even_when_it_determines_x():
    """20 well-spread pairs: 7 inliers (35 %, the share the robust start was chosen by) stand; 6 are a collapse."""
    from kinhec.solvers.he_ml_stages.hypotheses import SCORE_QUANTILE

    rng = np.random.default_rng(85)
    A = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.6, (20, 3))), rng.normal(size=(20, 3)))
    inl = np.zeros(20, bool)
    inl[:7] = True
    assert SCORE_QUANTILE * 20 == 7.0 and collapse.minority_collapse(A, inl) is None
    inl[6] = False
    got = collapse.minority_collapse(A, inl)
    assert got is not None and got["reason"] == "below_start" and got["n_inliers"] == 6
    assert got["rot_range_deg"] > collapse.MIN_ROT_RANGE_DEG  # its motion would determine X


def test_levenberg_marquardt_takes_least_squares_steps():
    """The stages' MINPACK call (through ``leastsq``) against ``scipy.optimize.least_squares(method="lm")`` with
    the same tolerances: the same minimiser to the last bit, on a nonlinear fit that needs several steps and on
    one that stops at the evaluation limit; residuals that are not finite at the start are refused alike."""
    import pytest
    from scipy.optimize import least_squares

    from kinhec.solvers import gauss_newton

    rng = np.random.default_rng(83)
    t = np.linspace(0.0, 3.0, 40)
    y = 2.0 * np.exp(-1.3 * t) + 0.5 * np.sin(2.1 * t) + rng.normal(scale=0.01, size=t.size)

    def fun(p):  # a perturbation of (amplitude, rate, sine amplitude, frequency) around a start far off
        a, k, b, w = np.array([0.4, -0.2, 1.5, 1.2]) + p
        return a * np.exp(k * t) + b * np.sin(w * t) - y

    def jac(p):
        a, k, b, w = np.array([0.4, -0.2, 1.5, 1.2]) + p
        e = np.exp(k * t)
        return np.stack([e, a * t * e, np.sin(w * t), b * t * np.cos(w * t)], axis=1)

    ref_full = least_squares(fun, np.zeros(4), jac=jac, method="lm", xtol=1e-12, ftol=1e-12, gtol=1e-12).x
    for tol, nfev in ((1e-8, 30), (1e-10, 50), (1e-12, 3)):
        ref = least_squares(fun, np.zeros(4), jac=jac, method="lm", xtol=tol, ftol=tol, gtol=tol, max_nfev=nfev)
        got = gauss_newton.levenberg_marquardt(fun, jac, 4, tol, nfev)
        assert np.array_equal(got, ref.x), (tol, nfev, got - ref.x)
    assert abs(got[1] - ref_full[1]) > 1e-6  # (the three-evaluation case stopped short of the minimum)
    with pytest.raises(ValueError, match="not finite"):
        gauss_newton.levenberg_marquardt(lambda p: np.full(t.size, np.nan), jac, 4, 1e-8, 30)


def test_nearest_rotations_are_the_svd_projection():
    """``model.nearest_rotations`` (polar iteration) against the SVD's nearest rotation ``U V^T``, computed here
    with scipy: on random matrices of positive determinant (condition numbers up to about 1e3), on rotations
    scaled and slightly perturbed (the hypotheses' case), and on the cases it hands to the SVD (a singular
    matrix, a rank-one matrix, a negative determinant)."""
    from scipy.linalg import svd

    from kinhec.solvers.he_ml_stages import model

    rng = np.random.default_rng(87)
    M = rng.normal(size=(300, 3, 3))
    M *= np.sign(np.linalg.det(M))[:, None, None]
    R_true = se3.so3_exp(rng.uniform(-2.0, 2.0, (50, 3)))
    near = 2.5 * R_true + 1e-3 * rng.normal(size=(50, 3, 3))
    odd = np.stack([np.zeros((3, 3)), np.outer([1.0, 2.0, 3.0], [1.0, 0.0, 1.0]), -np.eye(3)])
    stack = np.concatenate([M, near, odd])
    got = model.nearest_rotations(stack)
    for Mi, Ri in zip(stack, got):
        U, _, Vt = svd(Mi)
        if np.linalg.det(U @ Vt) < 0:
            U[:, 2] *= -1.0
        np.testing.assert_allclose(Ri, U @ Vt, atol=1e-12)
    np.testing.assert_allclose(got[300:350], R_true, atol=1e-3)
    np.testing.assert_allclose(got @ np.swapaxes(got, 1, 2), np.broadcast_to(np.eye(3), got.shape), atol=1e-13)
