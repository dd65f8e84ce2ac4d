"""The free scale's test against the fit under the scale's prior (kinhec.calibrate.free_scale.gain)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from kinhec.calibrate import free_scale as fs
from kinhec.calibrate import scale as sc


def _fit(residuals, inliers, scale, var):
    return SimpleNamespace(residuals=np.asarray(residuals, float), inliers=np.asarray(inliers, bool), scale=scale,
                           noise_cov=var * np.eye(6))


def test_gain_is_the_likelihood_ratio_plus_the_held_fits_prior_penalty():
    # twelve pairs whose residuals are +-a along each of the six axes, under the noise covariance a^2/6 I: each
    # pair's chi-square is 6 and the log-likelihood -1/2 (12 log det + 12 * 6) = -36 log(a^2/6) - 36.  The held
    # fit sits 3 prior sigmas from scale 1, which costs it 0.5 * 3^2 = 4.5 in log posterior; the free fit's
    # residuals and noise are 0.9 times the held fit's.
    a = 1e-3
    base = np.r_[np.eye(6), -np.eye(6)]
    held = _fit(a * base, np.r_[np.ones(11, bool), False], np.exp(3.0 * sc.PRIOR_STD), a**2 / 6.0)
    free = _fit(0.9 * a * base, np.ones(12, bool), 1.2, (0.9 * a) ** 2 / 6.0)
    ll_held = -36.0 * np.log(a**2 / 6.0) - 36.0
    ll_free = -36.0 * np.log((0.9 * a) ** 2 / 6.0) - 36.0
    assert fs.log_likelihood(held, np.ones(12, bool)) == pytest.approx(ll_held, rel=1e-12)
    g, needed = fs.gain(free, held)
    assert g == pytest.approx(ll_free - ll_held + 4.5, rel=1e-9)  # 36 log(1/0.81) + 4.5 = 12.086
    assert needed == pytest.approx(np.log(100.0) + 0.5 * np.log(12.0), rel=1e-12)  # every pair counts
    # same residuals: the gain is the prior's penalty alone, whichever side of 1 the held scale is
    same = _fit(a * base, np.ones(12, bool), 1.0, a**2 / 6.0)
    for s in (np.exp(3.0 * sc.PRIOR_STD), np.exp(-3.0 * sc.PRIOR_STD)):
        assert fs.gain(same, _fit(a * base, np.ones(12, bool), s, a**2 / 6.0))[0] == pytest.approx(4.5, rel=1e-9)


def test_a_pair_far_off_counts_at_the_gate_threshold():
    # the last pair 100 a off along one axis: chi-square 6e4 under a^2/6 I, counted as the gate's 27.856
    a = 1e-3
    r = np.r_[np.eye(6), -np.eye(6)] * a
    r[-1] = 0.0
    r[-1, 0] = 100.0 * a
    fit = _fit(r, np.r_[np.ones(11, bool), False], 1.0, a**2 / 6.0)
    expected = -0.5 * (12 * 6 * np.log(a**2 / 6.0) + 11 * 6.0 + 27.856)
    assert fs.log_likelihood(fit, np.ones(12, bool)) == pytest.approx(expected, rel=1e-12)
