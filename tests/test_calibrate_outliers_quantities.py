"""The outlier-label judge (``kinhec.calibrate.outliers``): the runs test by hand and over seeded permutations, and
each of the three rules at its threshold."""

from __future__ import annotations

import math

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import outliers as ol


def test_runs_z_by_hand():
    # n1 = n2 = 3 in two runs: mean 2 n1 n2 / n + 1 = 4, variance 2 n1 n2 (2 n1 n2 - n) / (n^2 (n - 1)) = 1.2
    x = np.array([1, 1, 1, 0, 0, 0], bool)
    assert math.isclose(ol.runs_z(x), (2 - 4) / math.sqrt(1.2), rel_tol=1e-12)
    # n1 = 2, n2 = 5, alternating as much as possible: 5 runs; mean 27/7, variance 20 * 13 / (49 * 6)
    y = np.array([0, 1, 0, 0, 1, 0, 0], bool)
    assert math.isclose(ol.runs_z(y), (5 - 27 / 7) / math.sqrt(260 / 294), rel_tol=1e-12)
    assert ol.runs_z(np.ones(5, bool)) == 0.0


def test_runs_z_is_standard_under_random_order():
    """Over seeded random orders of 12 outliers among 40 pairs the statistic has mean 0 and variance 1."""
    rng = np.random.default_rng(11)
    base = np.zeros(40, bool)
    base[:12] = True
    z = np.array([ol.runs_z(rng.permutation(base)) for _ in range(4000)])
    assert abs(z.mean()) < 0.05
    assert 0.9 < z.var() < 1.1


def _rich_motion(n, rng, deg=30.0):
    """Hand poses rotating by up to ``deg`` about random axes."""
    w = rng.normal(size=(n, 3))
    w *= np.radians(deg) * rng.uniform(0.3, 1.0, size=(n, 1)) / np.linalg.norm(w, axis=1, keepdims=True)
    return se3.transform_from_rotation_translation(se3.so3_exp(w), rng.normal(size=(n, 3)) * 0.1)


def test_half_inliers_are_not_a_minority():
    rng = np.random.default_rng(5)
    A = _rich_motion(10, rng)
    inl = np.array([1, 0] * 5, bool)  # 5 of 10, alternating: no runs
    assert ol.judge(inl, A) is None
    assert "minority" in ol.judge(np.array([1, 0, 0] * 3 + [1], bool), A)  # 4 of 10


def test_a_short_run_of_few_outliers_is_supported():
    """5 % outliers in one run: clustered (z far below -3) but not more than the run share, so supported."""
    rng = np.random.default_rng(6)
    A = _rich_motion(100, rng)
    inl = np.ones(100, bool)
    inl[40:45] = False
    assert ol.runs_z(~inl) < ol.RUNS_Z
    assert ol.judge(inl, A) is None
    inl[40:60] = False  # 20 % in one run: a systematic error
    assert "runs" in ol.judge(inl, A)


def test_inliers_that_hardly_rotate_do_not_determine_x():
    """18 inliers within 1 deg of each other, 2 scattered outliers rotating by 30 deg about x and y."""
    rng = np.random.default_rng(7)
    w = rng.normal(size=(20, 3))
    w *= np.radians(0.4) / np.linalg.norm(w, axis=1, keepdims=True)
    w[5] = [np.radians(30.0), 0.0, 0.0]
    w[15] = [0.0, np.radians(30.0), 0.0]
    A = se3.transform_from_rotation_translation(se3.so3_exp(w), rng.normal(size=(20, 3)) * 0.1)
    inl = np.ones(20, bool)
    inl[[5, 15]] = False
    assert "would not determine X" in ol.judge(inl, A)
