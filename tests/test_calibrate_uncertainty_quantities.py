"""Uncertainty beyond ``(J^T J)^-1`` (``kinhec.calibrate.uncertainty``): autocorrelation times of seeded AR(1)
sequences against their closed form, the significance rule, the gate at its hand-computed thresholds."""

from __future__ import annotations

import numpy as np
from scipy import stats

from kinhec.calibrate import uncertainty as unc


def _ar1(rng, n, k, phi):
    e = rng.normal(size=(n, k))
    x = np.empty_like(e)
    x[0] = e[0] / np.sqrt(1.0 - phi**2)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def test_autocorrelation_time_of_ar1_is_one_plus_phi_over_one_minus_phi():
    rng = np.random.default_rng(21)
    tau = unc.autocorrelation_time(_ar1(rng, 20000, 6, 0.5))
    np.testing.assert_allclose(tau, 3.0, rtol=0.12)
    assert abs(tau.mean() - 3.0) < 0.15
    # independent draws: 1 (the estimator's floor, and its value up to sampling noise)
    tau = unc.autocorrelation_time(rng.normal(size=(20000, 3)))
    assert np.all(tau < 1.1)


def test_correlation_is_judged_on_all_6n_residual_components():
    """A lag-one correlation of 0.15 over 200 pairs is 5 standard deviations of ``1 / sqrt(6 n)``: significant."""
    rng = np.random.default_rng(22)
    n, k, P = 200, 6, 3
    z = _ar1(rng, n, k, 0.15)
    G = rng.normal(size=(n, k, P))
    inf = unc.long_run_inflation(G, z)
    assert unc.SIGNIFICANT_RHO / np.sqrt(6 * n) < inf.rho < unc.SIGNIFICANT_RHO / np.sqrt(n)
    assert np.any(inf.tau > 1.0)  # the correlated branch: autocorrelation times estimated
    white = unc.long_run_inflation(G, rng.normal(size=(n, k)))
    np.testing.assert_array_equal(white.tau, np.ones(P))


def test_apply_scales_standard_deviations_by_the_root_of_the_factors():
    inf = unc.Inflation(factors=np.array([4.0, 9.0]), tau=np.ones(2), rho=0.0, residual_tau=np.ones(6), n_pairs=10)
    cov = np.array([[1.0, 0.5], [0.5, 2.0]])
    np.testing.assert_allclose(inf.apply(cov), [[4.0, 3.0], [3.0, 18.0]], rtol=1e-15)


def _gate_case(rng, n=30, p=6, P=4):
    G = rng.normal(size=(n, p, P))
    z = rng.normal(size=(n, p)) * 0.5
    inl = np.ones(n, bool)
    inl[0] = False  # the pair under test: excluded, judged by its predictive distance
    C = np.linalg.inv(np.einsum("nkp,nkq->pq", G[inl], G[inl]))
    h0 = float(np.trace(G[0] @ C @ G[0].T)) / p  # leverage per dimension
    return G, z, inl, h0


def test_gate_predictive_threshold_by_hand():
    """An excluded pair is kept up to ``|z|^2 = (1 + h) p nu / (nu - p + 1) F_level(p, nu - p + 1)``."""
    rng = np.random.default_rng(23)
    G, z, inl, h0 = _gate_case(rng)
    nu, p, level = 24.0, 6, unc.GATE_LEVEL
    q = p * nu / (nu - p + 1.0) * stats.f.ppf(level, p, nu - p + 1.0)
    u = rng.normal(size=p)
    u /= np.linalg.norm(u)
    for frac, kept in ((0.98, True), (1.02, False)):
        z[0] = u * np.sqrt(frac * q * (1.0 + h0))
        assert bool(unc.gate(z, G, inl, nu)[0]) is kept
    assert 0.0 < h0 < 1.0


def test_autocorrelation_time_of_short_sequences_is_corrected_for_truncation():
    """60 pairs: the sum up to the truncation lag L comes out short by about 2 L tau / n; corrected, the median
    over seeded AR(1) sequences is the closed form (uncorrected, or with L counted in pairs of lags, it falls short
    by 8 % and more)."""
    rng = np.random.default_rng(24)
    tau = np.concatenate([unc.autocorrelation_time(_ar1(rng, 60, 6, 0.5)) for _ in range(300)])
    assert abs(np.median(tau) - 3.0) < 0.12


def test_lag_one_correlation_by_hand():
    # one column 1, 2, 3, 4: centred -1.5, -0.5, 0.5, 1.5; lag-one products 0.75 - 0.25 + 0.75 over the sum of squares 5
    assert unc.lag_one_correlation(np.array([[1.0], [2.0], [3.0], [4.0]])) == 0.25
    # independent residuals about a large common offset: no correlation
    rng = np.random.default_rng(25)
    z = 5.0 + rng.normal(size=(300, 6))
    assert abs(unc.lag_one_correlation(z)) < 3.0 / np.sqrt(z.size)


def test_gate_leave_one_out_threshold_by_hand():
    """An inlier is kept up to ``T = (nu - 1) u / (nu - u) = p (nu - 1) / (nu - p) F(p, nu - p)`` at a tail 100
    times smaller, ``u = |z|^2 / (1 - h)``."""
    rng = np.random.default_rng(26)
    G, z, inl, _ = _gate_case(rng)
    inl[0] = True
    C = np.linalg.inv(np.einsum("nkp,nkq->pq", G[inl], G[inl]))
    p, nu, level = 6, 24.0, unc.GATE_LEVEL
    h = float(np.trace(G[1] @ C @ G[1].T)) / p
    q = p * (nu - 1.0) / (nu - p) * stats.f.ppf(1.0 - (1.0 - level) / unc.INLIER_LEVEL_RATIO, p, nu - p)
    u_q = q * nu / (nu - 1.0 + q)  # T(u) = q
    d = rng.normal(size=p)
    d /= np.linalg.norm(d)
    for frac, kept in ((0.997, True), (1.003, False)):  # the distance rises steeply near its bound: u_q within 1 %
        z[1] = d * np.sqrt(frac * u_q * (1.0 - h))
        assert bool(unc.gate(z, G, inl, nu)[1]) is kept
