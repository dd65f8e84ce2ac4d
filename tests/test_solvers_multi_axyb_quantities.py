"""Pieces of the joint solver (``kinhec.solvers.multi_axyb``) against hand-computed values: the Student-t weights
of a 6-d residual, the standard deviations of a translation in its parent frame, the certificate's threshold."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from kinhec.geometry import se3
from kinhec.synth import scenes
from kinhec.solvers import multi_axyb as ma


def test_student_weights_of_a_six_dimensional_residual():
    nu = np.array([4.0, 10.0, np.inf])
    chi2 = np.array([6.0, 26.0, 100.0])
    np.testing.assert_allclose(ma._student_weights(nu, chi2), [1.0, 16.0 / 36.0, 1.0], rtol=1e-15)
    # the EM weight's mean under the model: E[(nu + 6) / (nu + chi2)] = 1 for chi2 ~ 6 F(6, nu) (Student-t)
    rng = np.random.default_rng(71)
    d2 = 6.0 * stats.f.rvs(6, 5.0, size=200_000, random_state=rng)
    assert abs(ma._student_weights(np.full(d2.size, 5.0), d2).mean() - 1.0) < 0.01


def test_parent_frame_standard_deviations_turn_with_the_rotation():
    """``T exp(omega, v)`` moves the translation by ``R v``: a quarter turn about z swaps the x and y spreads."""
    T = se3.transform_from_rotation_translation(se3.so3_exp(np.array([0.0, 0.0, math.pi / 2])), np.zeros(3))
    cov = np.diag([1.0, 2.0, 3.0, 0.01, 0.04, 0.09])
    np.testing.assert_allclose(ma.parent_std(T, cov), [1.0, math.sqrt(2.0), math.sqrt(3.0), 0.2, 0.1, 0.3],
                               atol=1e-15)  # fmt: skip
    # the translation's own spread: for a generic rotation, the spread of R v over seeded draws of v
    rng = np.random.default_rng(72)
    T[:3, :3] = se3.random_rotations(rng, 1)[0]
    v = rng.multivariate_normal(np.zeros(3), cov[3:, 3:], size=100_000)
    np.testing.assert_allclose(ma.parent_std(T, cov)[3:], (v @ T[:3, :3].T).std(axis=0), rtol=0.02)


def test_certificate_threshold_has_three_degrees_of_freedom_per_rotation():
    sc = scenes.draw_scene(9, 0, n_cameras=2, n_targets=2)
    fit = ma.multi_axyb(sc.pairs, certify="local")
    K = len(fit.x_ids) + len(fit.y_ids)
    assert fit.certificate["threshold"] == stats.chi2.ppf(ma.ESTIMATE_GAP_QUANTILE, 3 * K)
    assert fit.certificate["duality_gap"] <= fit.certificate["threshold"] and fit.certificate["certified"]


def test_reference_cost_is_in_chi_square_units():
    """Weights ``1 / (2 sigma^2)`` and ``|I - exp(w)|_F^2 ~ 2 |w|^2``: each pair costs a chi-square of 3 degrees of
    freedom, so over seeded scenes the reference cost averages 3 per pair (the gap is judged against chi2(3 K))."""
    ratio = []
    for seed in range(9, 15):
        sc = scenes.draw_scene(seed, 0, n_cameras=2, n_targets=2)
        fit = ma.multi_axyb(sc.pairs, certify="local")
        n = sum(len(A) for A, _ in sc.pairs.values())
        ratio.append(fit.certificate["cost"] / (3.0 * n))
    assert 0.85 < float(np.mean(ratio)) < 1.2
