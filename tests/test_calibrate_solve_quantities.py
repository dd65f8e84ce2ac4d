"""The refinement's building blocks (:mod:`kinhec.calibrate.solve`) against hand computations: the residual of
``A X = Y B`` in both domains with a scale, the capped cost, the gate's quantile, ``Y`` from ``X``, the motions
between pairs, the choice of the residual domain on noise generated in one of them, the noise report's units and
the pairs' minimum."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from kinhec.calibrate import solve as sv
from kinhec.calibrate import uncertainty as unc
from kinhec.calibrate.pairing import OrderPairing
from kinhec.geometry import se3
from kinhec.util.errors import InputError

X = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.2, 1.2]), [0.03, -0.05, 0.09])
Y = se3.transform_from_rotation_translation(se3.so3_exp([0.1, 2.0, 0.2]), [0.8, 0.1, -0.2])


def _poses(n, seed=0):
    rng = np.random.default_rng(seed)
    A = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.5, (n, 3))), rng.normal([0.5, 0, 0.4], 0.15, (n, 3)))
    return A, se3.invert_transform(Y) @ A @ X  # A X = Y B


@pytest.mark.parametrize("inverse_domain", [True, False])
@pytest.mark.parametrize("scale", [None, 1.7])
def test_residuals_by_hand(inverse_domain, scale):
    A, B = _poses(6)
    s = 1.0 if scale is None else scale
    Bs = B.copy()
    Bs[:, :3, 3] *= s  # the eye translations in units s times the metric ones
    assert np.allclose(sv.residuals(A, Bs, X, Y, scale, inverse_domain), 0.0, atol=1e-12)
    # the measured pose moved by a known error: in its own domain the residual is minus that error
    rng = np.random.default_rng(1)
    err = np.c_[rng.normal(0, 0.02, (6, 3)), rng.normal(0, 0.01, (6, 3))]
    meas = se3.invert_transform(Bs) if inverse_domain else Bs  # the pose as compared
    moved = meas.copy()
    moved[:, :3, :3] = se3.so3_exp(err[:, :3]) @ meas[:, :3, :3]
    moved[:, :3, 3] += err[:, 3:]
    Bm = se3.invert_transform(moved) if inverse_domain else moved
    pred = se3.invert_transform(A @ X) @ Y if inverse_domain else se3.invert_transform(Y) @ A @ X
    r = sv.residuals(A, Bm, X, Y, scale, inverse_domain)
    rot = se3.so3_log(pred[:, :3, :3] @ np.swapaxes(moved[:, :3, :3], 1, 2))
    assert np.allclose(r[:, :3], rot, rtol=0, atol=1e-12) and np.allclose(r[:, :3], -err[:, :3], atol=1e-12)
    assert np.allclose(r[:, 3:], s * pred[:, :3, 3] - moved[:, :3, 3], rtol=0, atol=1e-12)
    assert np.allclose(r[:, 3:], -err[:, 3:], rtol=0, atol=1e-12)


def test_residual_rotation_of_large_angles():
    # exact up to ~170 deg: a measured pose turned by 160 deg about an oblique axis
    A, B = _poses(2, seed=2)
    axis = np.array([1.0, 2.0, -2.0]) / 3.0
    phi = np.radians(160.0) * axis
    Bm = B.copy()
    Bm[:, :3, :3] = se3.so3_exp(phi) @ B[:, :3, :3]
    r = sv.residuals(A, Bm, X, Y, None, False)
    assert np.allclose(r[:, :3], -phi, rtol=0, atol=1e-10)


def test_capped_cost_and_the_gate():
    assert sv.CHI2_6_9999 == pytest.approx(stats.chi2.ppf(0.9999, 6), abs=5e-4)
    A, B = _poses(4, seed=3)
    Bm = B.copy()
    Bm[0, :3, 3] += [0.001, 0.0, 0.0]  # a residual of 1 mm: chi-square 1 under a 1 mm noise
    Bm[1, :3, 3] += [0.0, 0.0, 0.1]  # 100 mm: capped
    S_inv = np.diag([1e6] * 3 + [1e6] * 3)
    lines = np.arange(4)
    cost = sv.capped_cost(OrderPairing(A, Bm, lines, lines), None, X, Y, None, S_inv, False)
    assert cost == pytest.approx((1.0 + sv.CHI2_6_9999) / 4, rel=1e-9)


def test_y_from_x_is_robust_to_an_outlier():
    A, B = _poses(7, seed=4)
    assert np.allclose(sv.robust_y(A, B, X), Y, atol=1e-12)
    Bo = B.copy()
    Bo[3, :3, 3] += [0.5, -0.5, 0.5]  # one pair half a metre off: the median's translation keeps Y
    Yo = sv.robust_y(A, Bo, X)
    assert np.allclose(Yo[:3, 3], Y[:3, 3], atol=1e-12) and np.allclose(Yo[:3, :3], Y[:3, :3], atol=1e-12)


def test_motions_between_every_two():
    A, B = _poses(5, seed=5)
    idx = np.array([0, 2, 4])
    Am, Bm = sv.motions_between(A, B, idx)
    assert len(Am) == 3
    for k, (i, j) in enumerate([(0, 2), (0, 4), (2, 4)]):
        assert np.allclose(Am[k], np.linalg.inv(A[i]) @ A[j], atol=1e-12)
        assert np.allclose(Bm[k], np.linalg.inv(B[i]) @ B[j], atol=1e-12)
    assert np.allclose(Am @ X, X @ Bm, atol=1e-12)  # A X = X B on the motions


@pytest.mark.parametrize("noisy_inverse", [True, False])
def test_the_domain_of_the_noise_is_chosen(noisy_inverse):
    # a PnP-like pose error (depth 20 times the lateral) on the pose as one domain states it: that domain fits best
    A, B = _poses(60, seed=6)
    rng = np.random.default_rng(7)
    meas = se3.invert_transform(B) if noisy_inverse else B.copy()
    meas[:, :3, 3] += rng.normal(0, 1.0, (60, 3)) * [1e-4, 1e-4, 2e-3]
    meas[:, :3, :3] = se3.so3_exp(rng.normal(0, 2e-4, (60, 3))) @ meas[:, :3, :3]
    Bn = se3.invert_transform(meas) if noisy_inverse else meas
    assert sv.choose_domain(A, Bn, X, Y) is noisy_inverse


def test_noise_report_units_and_note():
    inf = SimpleNamespace(factors=np.arange(1.0, 13.0), tau=np.r_[np.full(6, 2.5), np.ones(6)], rho=0.4)
    sol = SimpleNamespace(noise_cov=np.diag([1e-6] * 3 + [4e-8] * 3), noise_dof=18.0, noise_model="diagonal",
                          inflation=2.25, inflation_detail=inf, noise_shrinkage=0.0)
    rep = sv.noise_report(sol)
    assert rep["noise_model"] == "diagonal" and rep["noise_correlation_shrinkage"] == 0.0
    assert rep["residual_std_rad_m"] == pytest.approx([1e-3] * 3 + [2e-4] * 3, rel=1e-12)
    assert rep["residual_std_std"] == pytest.approx([1e-3 / 6] * 3 + [2e-4 / 6] * 3, rel=1e-12)  # sigma / sqrt(2 dof)
    assert rep["covariance_inflation_X"] == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] and rep["covariance_inflation_Y"][0] == 7.0
    assert sv.inflation_note(sol) == ("residuals correlate from pair to pair (lag-one correlation 0.40, autocorrelation "
                                      "time up to 2.5 pairs): standard deviations of X inflated by up to 1.5")
    inf.tau[:6] = 1.5
    assert sv.inflation_note(sol) == ("some pairs scatter more than the pooled noise model says: standard deviations of "
                                      "X inflated by up to 1.5")


def test_three_pairs_at_least():
    sv.check_enough_pairs(3, "here")
    with pytest.raises(InputError, match=r"^here: expected at least 3 pose pairs, got 2$"):
        sv.check_enough_pairs(2, "here")


def test_the_covariance_carries_the_full_noise_models_small_sample_factor():
    """With a full 6x6 noise covariance ``S`` from ``dof`` degrees of freedom, the covariance of the unknowns is the
    sandwich ``C M C`` (``C`` the inverse of the whitened normal matrix, ``M`` the same normal matrix with the noise's
    correlations shrunk by ``lam`` in its middle), inflated for correlated residuals, times ``(1 - lam) dof / (dof - 7)
    + lam dof / (dof - 2)`` (the bias of the inverse of a full and of a diagonal sample covariance)."""
    A, B = _poses(80, seed=3)
    rng = np.random.default_rng(8)
    B = B @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (80, 3)), rng.normal(0, 1e-3, (80, 3))])
    idx = np.arange(80)
    sol = sv.refine(OrderPairing(A, B, idx, idx), X, Y, reject=False)
    assert sol.noise_model == "full"
    Gn = sol.whitened_jacobian
    G = Gn.reshape(-1, Gn.shape[-1])
    prior = 0.0 if sol.prior_information is None else sol.prior_information
    C = np.linalg.inv(G.T @ G + prior)
    S_shrunk, lam = unc.shrunk_noise(sol.residuals[sol.inliers], sol.noise_cov)
    assert 0.0 < lam < 1.0 and lam == sol.noise_shrinkage
    W = sol.whitening  # whitened, S^-1 S~ S^-1 is W^T (W S~ W^T) W
    M = np.einsum("nip,ij,njq->pq", Gn, W @ S_shrunk @ W.T, Gn) + prior
    dof = sol.noise_dof
    factor = (1.0 - lam) * dof / (dof - 7.0) + lam * dof / (dof - 2.0)
    expected = sol.inflation_detail.apply(C @ M @ C) * factor
    assert np.allclose(sol.cov, expected, rtol=1e-7, atol=0)
    # with no correlation shrunk the sandwich is the inverse normal matrix itself
    M0 = np.einsum("nip,ij,njq->pq", Gn, W @ sol.noise_cov @ W.T, Gn) + prior
    assert np.allclose(C @ M0 @ C, C, rtol=1e-8, atol=1e-12 * np.abs(C).max())
