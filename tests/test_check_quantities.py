"""The stored-calibration check's test (:func:`kinhec.calibrate.check.consistency`) against brute force and scipy:
the joint chi-square of the stacked residuals (Woodbury) and its exact split into the Wald and misfit parts, their
degrees of freedom and p-values, the variance factor of correlated residuals, the attribution to ``X`` and ``Y`` in
degrees and millimetres, and the noise estimated from the new pairs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from kinhec.calibrate import check as ck
from kinhec.util.errors import InputError

NOISE = np.array([1e-3, 1.5e-3, 2e-3, 5e-4, 8e-4, 1e-3])
COV0 = np.diag(np.r_[np.full(3, 2e-3), np.full(3, 1e-3), np.full(3, 3e-3), np.full(3, 2e-3)] ** 2)


def _case(n, seed=0, shift=None):
    rng = np.random.default_rng(seed)
    J = rng.normal(0, 1.0, (n, 6, 12))
    r = rng.normal(0, 1, (n, 6)) * NOISE
    if shift is not None:
        r = r - J @ shift
    return r, J


def _joint(r, J, tau=1.0):
    """r^T C^-1 r with C = I (x) S tau-free + J Sigma0 J^T, stacked (6n x 6n)."""
    n = r.shape[0]
    Jf = J.reshape(6 * n, 12)
    C = np.kron(np.eye(n), np.diag(NOISE**2)) + Jf @ COV0 @ Jf.T
    return float(r.reshape(-1) @ np.linalg.solve(C, r.reshape(-1)))


@pytest.mark.parametrize("n", [1, 2])
def test_few_pairs_take_the_joint_chi_square(n):
    r, J = _case(n)
    res = ck.consistency(r, J, COV0, NOISE, noise_dof=50.0)
    assert res.test == "joint" and res.theta is None and res.changed["X"] == {"changed": None}
    j = res.stat["joint"]
    assert j["dof"] == 6 * n and j["chi2"] == pytest.approx(_joint(r, J), rel=1e-9)
    assert res.p_value == pytest.approx(stats.chi2.sf(_joint(r, J), 6 * n), rel=1e-8)
    assert res.notes[-1] == f"{n} new pair{'s' if n > 1 else ''}: the joint test only; which of X and Y moved is not estimated"


def test_wald_and_misfit_split_the_joint_chi_square():
    r, J = _case(10, seed=1)
    res = ck.consistency(r, J, COV0, NOISE, noise_dof=40.0, alpha=0.05)
    w, q = res.stat["wald"], res.stat["misfit"]
    assert w["chi2"] + q["chi2"] == pytest.approx(_joint(r, J), rel=1e-9)
    assert w["dof"] == 12 and q["dof"] == 48 and q["noise_dof"] == 40.0
    p_w = stats.chi2.sf(w["chi2"], 12)
    p_q = stats.f.sf(q["chi2"] / 48, 48, 40)
    assert w["p_value"] == pytest.approx(p_w, rel=1e-10) and q["p_value"] == pytest.approx(p_q, rel=1e-10)
    assert res.p_value == pytest.approx(min(1.0, 2 * min(p_w, p_q)), rel=1e-10) and res.test == "wald+misfit"
    # no degrees of freedom stored: the misfit against the chi-square
    inf = ck.consistency(r, J, COV0, NOISE, noise_dof=None)
    assert inf.stat["misfit"]["noise_dof"] is None
    assert inf.stat["misfit"]["p_value"] == pytest.approx(stats.chi2.sf(q["chi2"], 48), rel=1e-10)


def test_the_estimate_and_its_attribution():
    # a change of X by 1 deg about z and 5 mm along x: theta recovers it, tested against V = H^-1 + Sigma0
    shift = np.zeros(12)
    shift[2], shift[3] = np.radians(1.0), 0.005
    r, J = _case(12, seed=2, shift=shift)
    res = ck.consistency(r, J, COV0, NOISE, noise_dof=100.0)
    Jw = J / NOISE[None, :, None] ** 2
    H = np.einsum("nik,nil->kl", Jw, J)
    V = np.linalg.inv(H) + COV0
    assert np.allclose(res.theta_cov, V, rtol=1e-9, atol=0)
    assert np.all(np.abs(res.theta - shift) < 4 * np.sqrt(np.diag(V)))
    x = res.changed["X"]
    assert x["rot_deg"][2] == pytest.approx(np.degrees(res.theta[2]), rel=1e-12)
    assert x["trans_mm"][0] == pytest.approx(1000 * res.theta[3], rel=1e-12)
    assert x["rot_std_deg"][0] == pytest.approx(np.degrees(np.sqrt(V[0, 0])), rel=1e-12)
    assert x["trans_std_mm"][2] == pytest.approx(1000 * np.sqrt(V[5, 5]), rel=1e-12)
    t, C = res.theta[:6], V[:6, :6]
    assert x["chi2"] == pytest.approx(t @ np.linalg.solve(C, t), rel=1e-10)
    assert x["p_value"] == pytest.approx(stats.chi2.sf(x["chi2"], 6), rel=1e-10) and x["changed"]
    assert not res.changed["Y"]["changed"] and res.named == "X" and not res.consistent
    assert res.separable and res.canonical_corr < 0.5


def test_correlated_residuals_count_a_tau_th_of_the_information():
    r, J = _case(10, seed=3)
    res = ck.consistency(r, J, COV0, NOISE, noise_dof=40.0, tau=2.0)
    Jw = J / NOISE[None, :, None] ** 2
    H = np.einsum("nik,nil->kl", Jw, J)
    V = 2.0 * np.linalg.inv(H) + COV0
    assert np.allclose(res.theta_cov, V, rtol=1e-9, atol=0)
    assert res.stat["misfit"]["dof"] == 24.0
    q = res.stat["misfit"]["chi2"]
    assert res.stat["misfit"]["p_value"] == pytest.approx(stats.f.sf(q / 2.0 / 24.0, 24.0, 40.0), rel=1e-10)


def test_noise_from_the_new_pairs():
    r, J = _case(8, seed=4)
    res = ck.consistency(r, J, COV0, None)
    assert res.noise_source == "new pairs" and res.test == "wald" and "misfit" not in res.stat
    Sinv = 1.0 / r.std(axis=0, ddof=1) ** 2
    Jw = J * Sinv[None, :, None]
    H = np.einsum("nik,nil->kl", Jw, J)
    theta = -np.linalg.solve(H, np.einsum("nik,ni->k", Jw, r))
    assert np.allclose(res.theta, theta, rtol=1e-9, atol=1e-15)
    assert np.allclose(res.theta_cov, np.linalg.inv(H) + COV0, rtol=1e-9, atol=0)  # the n - 1 sample variance
    with pytest.raises(InputError) as e:
        ck.consistency(r[:6], J[:6], COV0, None)
    assert str(e.value) == ("the calibration stores no noise level, and 6 new pairs are too few to estimate it "
                            "(expected at least 7)")


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1])
def test_alpha_must_be_a_level(alpha):
    r, J = _case(5)
    with pytest.raises(InputError, match=rf"^alpha: expected a level in \(0, 1\), got {alpha}$"):
        ck.consistency(r, J, COV0, NOISE, alpha=alpha)


def test_consistent_only_at_or_above_alpha():
    shift = np.zeros(12)
    shift[0] = np.radians(0.6)
    r, J = _case(10, seed=5, shift=shift)
    p = ck.consistency(r, J, COV0, NOISE, noise_dof=40.0).p_value
    assert 1e-4 < p < 0.5
    assert ck.consistency(r, J, COV0, NOISE, noise_dof=40.0, alpha=p * 0.999).consistent
    assert not ck.consistency(r, J, COV0, NOISE, noise_dof=40.0, alpha=p * 1.001).consistent
    # a block is named changed below alpha / 2 (Bonferroni over X and Y)
    p_x = ck.consistency(r, J, COV0, NOISE, noise_dof=40.0).changed["X"]["p_value"]
    assert not ck.consistency(r, J, COV0, NOISE, noise_dof=40.0, alpha=1.9 * p_x).changed["X"]["changed"]
    assert ck.consistency(r, J, COV0, NOISE, noise_dof=40.0, alpha=2.1 * p_x).changed["X"]["changed"]
