"""The free-scale restart's statistics (``kinhec.calibrate.free_scale``) against hand-computed values."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from kinhec.calibrate import free_scale as fs
from kinhec.calibrate import scale as sc


def _sol(r, inliers, scale=1.0, cov=None):
    r = np.asarray(r, float)
    cov = r.T @ r / len(r) if cov is None else cov  # the noise covariance profiled out
    return SimpleNamespace(residuals=r, inliers=np.asarray(inliers, bool), scale=scale, noise_cov=cov)


def test_log_likelihood_is_the_robust_gaussian_one():
    """Under the fit's own noise covariance ``S``: ``-1/2 (n log det S + sum_i min(r_i^T S^-1 r_i, 27.856))`` on the
    kept pairs (up to a constant)."""
    rng = np.random.default_rng(3)
    r = rng.normal(size=(40, 6)) * np.array([1e-3, 2e-3, 1e-3, 5e-4, 4e-4, 3e-4])
    r[5] *= 30.0  # far off: counts at the cap
    keep = np.ones(40, bool)
    keep[[3, 17, 30]] = False
    S = np.diag([1e-3, 2e-3, 1e-3, 5e-4, 4e-4, 3e-4]) ** 2
    rk = r[keep]
    d2 = np.sum(rk**2 / np.diag(S), axis=1)
    assert d2.max() > 27.856
    want = -0.5 * (37 * math.log(np.linalg.det(S)) + np.minimum(d2, 27.856).sum())
    assert math.isclose(fs.log_likelihood(_sol(r, keep, cov=S), keep), want, rel_tol=1e-9)
    # residuals and noise halved (every chi-square the same): the likelihood gains n * 6 * log 2
    gain = fs.log_likelihood(_sol(r / 2, keep, cov=S / 4), keep) - fs.log_likelihood(_sol(r, keep, cov=S), keep)
    assert math.isclose(gain, 37 * 6 * math.log(2.0), rel_tol=1e-9)


def test_gain_and_the_margin_it_must_beat():
    rng = np.random.default_rng(4)
    n = 30
    r = rng.normal(size=(n, 6)) * 1e-3
    held_in = np.ones(n, bool)
    held_in[:4] = False
    free_in = np.ones(n, bool)
    free_in[-2:] = False
    held = _sol(r * 1.5, held_in, scale=1.01)
    free = _sol(r, free_in, scale=0.8)
    g, needed = fs.gain(free, held)
    keep = held_in | free_in  # every pair
    want = n * 6 * math.log(1.5) + 0.5 * (math.log(1.01) / sc.PRIOR_STD) ** 2
    assert keep.all() and math.isclose(g, want, rel_tol=1e-9)
    # the freed parameter costs half the log of the number of pairs, on top of ln 100
    assert math.isclose(needed, math.log(100.0) + 0.5 * math.log(n), rel_tol=1e-12)


def test_far_is_symmetric_in_the_log_of_the_ratio():
    for ratio in (0.8, 1.25):
        assert fs._far(ratio, 1e-3)
    assert not fs._far(1.01, 1e-3)  # within three prior standard deviations (1.5 %)
    assert not fs._far(0.8, 0.05)  # five of its own standard deviations: 25 %
