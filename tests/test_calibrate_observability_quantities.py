"""The observability report (``kinhec.calibrate.observability``): its units, the axis scatter about the mean
rotation, and the drift rule on the pairs it is given."""

from __future__ import annotations

import math

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import observability as ob


def _hand(w, rng, R_base=None):
    R = se3.so3_exp(w)
    if R_base is not None:
        R = R_base @ R
    return se3.transform_from_rotation_translation(R, rng.normal(size=(len(w), 3)) * 0.2)


def _rich(rng, n=12):
    w = rng.normal(size=(n, 3))
    return _hand(0.4 * w / np.linalg.norm(w, axis=1, keepdims=True), rng)


def test_standard_deviations_are_reported_in_degrees_and_millimetres():
    rng = np.random.default_rng(41)
    X_std = np.array([0.01, 0.02, 0.005, 1e-3, 3e-3, 2e-3])  # [rad, m]
    report, warn = ob.observability(_rich(rng), np.diag(X_std**2), X_std)
    assert math.isclose(report["X_std_max_deg"], math.degrees(0.02), rel_tol=1e-12)
    assert math.isclose(report["X_std_max_mm"], 3.0, rel_tol=1e-12)
    assert report["determined"] and warn == []  # 1.15 deg, 3 mm: within the limits
    big = X_std.copy()
    big[0] = math.radians(2.5)
    assert not ob.observability(_rich(rng), np.diag(big**2), big)[0]["determined"]


def test_rotations_about_one_axis_from_a_turned_base_are_degenerate():
    """Axis scatter about the mean rotation: one axis of rotation however the hand's base orientation is turned."""
    rng = np.random.default_rng(42)
    ang = np.linspace(-0.6, 0.6, 15)
    R_base = se3.so3_exp(np.array([1.0, -0.5, 0.8]))
    A = _hand(ang[:, None] * np.array([0.0, 0.0, 1.0]), rng, R_base)
    report, warn = ob.observability(A, np.eye(12) * 1e-8, np.full(6, 1e-4))
    assert report["lambda2"] < ob.MIN_LAMBDA2 and not report["determined"]
    assert any("one axis" in w for w in warn)
    assert ob.observability(_rich(rng), np.eye(12) * 1e-8, np.full(6, 1e-4))[0]["lambda2"] > 0.05


def test_drift_is_judged_on_the_pairs_the_autocorrelation_time_comes_from():
    """30 hand poses, 100 pairs over an autocorrelation time of 20: 5 independent stretches, drift."""
    rng = np.random.default_rng(43)
    A = _rich(rng, 30)
    X_std = np.full(6, 1e-4)
    report, warn = ob.observability(A, np.eye(12) * 1e-8, X_std, autocorrelation_time=20.0, n_pairs=100)
    assert report["drift"] and math.isclose(report["effective_pairs"], 5.0) and not report["determined"]
    kept, _ = ob.observability(A, np.eye(12) * 1e-8, X_std, autocorrelation_time=20.0, n_pairs=100,
                               drift_refused=False)  # fmt: skip
    assert kept["drift"] and kept["determined"]
    few, _ = ob.observability(A, np.eye(12) * 1e-8, X_std, autocorrelation_time=20.0, n_pairs=59)
    assert not few["drift"]  # fewer pairs than a drift needs
