"""The free scale's test against the fit under the scale's prior (kinhec.calibrate.free_scale.gain)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from kinhec.calibrate import free_scale as fs
from kinhec.calibrate import scale as sc


def _fit(residuals, inliers, scale):
    return SimpleNamespace(residuals=np.asarray(residuals, float), inliers=np.asarray(inliers, bool), scale=scale)


def test_gain_is_the_likelihood_ratio_plus_the_held_fits_prior_penalty():
    # twelve pairs whose residuals are +-a along each of the six axes: their profiled covariance is a^2/6 I, and
    # the log-likelihood -n/2 log det = -36 log(a^2/6).  The held fit sits 3 prior sigmas from scale 1, which
    # costs it 0.5 * 3^2 = 4.5 in log posterior; the free fit's residuals are 0.9 times the held fit's.
    a = 1e-3
    base = np.r_[np.eye(6), -np.eye(6)]
    held = _fit(a * base, np.r_[np.ones(11, bool), False], np.exp(3.0 * sc.PRIOR_STD))
    free = _fit(0.9 * a * base, np.ones(12, bool), 1.2)
    ll_held = -36.0 * np.log(a**2 / 6.0)
    ll_free = -36.0 * np.log((0.9 * a) ** 2 / 6.0)
    assert fs.log_likelihood(held, np.ones(12, bool)) == pytest.approx(ll_held, rel=1e-12)
    g, needed = fs.gain(free, held)
    assert g == pytest.approx(ll_free - ll_held + 4.5, rel=1e-9)  # 36 log(1/0.81) + 4.5 = 12.086
    assert needed == pytest.approx(np.log(100.0) + 0.5 * np.log(12.0), rel=1e-12)  # all twelve pairs kept
    # same residuals: the gain is the prior's penalty alone, whichever side of 1 the held scale is
    same = _fit(a * base, np.ones(12, bool), 1.0)
    for s in (np.exp(3.0 * sc.PRIOR_STD), np.exp(-3.0 * sc.PRIOR_STD)):
        assert fs.gain(same, _fit(a * base, np.ones(12, bool), s))[0] == pytest.approx(4.5, rel=1e-9)
