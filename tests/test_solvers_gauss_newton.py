"""The minimisers of ``he_ml`` (``kinhec.solvers.gauss_newton``) and the pair model's residuals when a trial step
goes far off: a step whose residuals are not finite is refused like one that does not lower the cost."""

from __future__ import annotations

import math

import numpy as np

from kinhec.geometry import se3
from kinhec.solvers.gauss_newton import damped_gauss_newton
from kinhec.solvers.he_ml_stages.model import residuals_from_inverse


def _poses(rng, n):
    return se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.5, (n, 3))), rng.normal(0, 0.3, (n, 3)))


def test_a_log_scale_beyond_what_a_float_holds_gives_infinite_residuals_not_an_exception():
    # (a damped Gauss-Newton trial step of he_ml's scale once reached log s > 709, and math.exp raised
    # OverflowError out of kinhec calibrate)
    rng = np.random.default_rng(1)
    Cm, Ci = _poses(rng, 5), _poses(rng, 5)
    for log_s in (800.0, -800.0):
        r = residuals_from_inverse(Cm, Ci, log_s, 0.0)
        assert r.shape == (5, 6) and np.isinf(r).all()
    r = residuals_from_inverse(Cm, Ci, 0.5, 0.5, q=np.array([0.0, 0.1, 800.0, 0.0, 0.0]))
    assert np.isinf(r).all()
    # within range: finite, and the scale acts on the translation only
    r1, r0 = residuals_from_inverse(Cm, Ci, 0.3, 0.3), residuals_from_inverse(Cm, Ci, 0.0, 0.0)
    assert np.isfinite(r1).all() and np.allclose(r1[:, :3], r0[:, :3], atol=0.5) and not np.allclose(r1, r0)


def test_a_trial_step_into_non_finite_residuals_is_damped_and_the_minimum_still_reached():
    # f(p) = exp(3 p) - exp(1.5), not finite beyond p = 0.8: the full Gauss-Newton step from 0 lands at 1.16
    calls = []

    def fun(p):
        calls.append(float(p[0]))
        return np.array([math.exp(3.0 * p[0]) - math.exp(1.5) if p[0] <= 0.8 else math.inf])

    def jac(p):
        return np.array([[3.0 * math.exp(3.0 * p[0])]])

    p = damped_gauss_newton(fun, jac, 1, 1e-20, 60)
    assert abs(p[0] - 0.5) < 1e-9
    assert calls[1] > 0.8  # the first trial step went out of range and was refused
