"""The robot-accuracy consider covariance (``kinhec.calibrate.robot_error``) against hand-computed values."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from kinhec.calibrate import robot_error as re_


def _result(X, Y, X_std, Y_std):
    cov = np.diag(np.concatenate([X_std, Y_std]) ** 2)
    return SimpleNamespace(X=X, Y=Y, X_std=np.array(X_std, float), Y_std=np.array(Y_std, float), cov=cov,
                           observability={}, notes=[])  # fmt: skip


def test_apply_adds_variances_with_the_lever_arm_of_the_rotation():
    deg, mm = 0.1, 0.5
    rot = math.radians(deg) / math.sqrt(3.0)  # per axis [rad]
    trans = 1e-3 * mm / math.sqrt(3.0)  # per axis [m]
    L = 0.8
    X = np.eye(4)
    Y = np.eye(4)
    Y[:3, 3] = [0.0, 0.0, L]
    X_std = [1e-3, 2e-3, 3e-3, 1e-4, 2e-4, 3e-4]
    Y_std = [4e-3, 5e-3, 6e-3, 4e-4, 5e-4, 6e-4]
    res = _result(X, Y, X_std, Y_std)
    re_.apply(res, (deg, mm))
    # X at the origin: each rotation axis gets rot^2, each translation axis trans^2
    want_X = np.sqrt(np.array(X_std) ** 2 + np.array([rot**2] * 3 + [trans**2] * 3))
    np.testing.assert_allclose(res.X_std, want_X, rtol=1e-12)
    # Y at (0, 0, L): w x t = (w_y L, -w_x L, 0) adds rot^2 L^2 to the x and y translations, nothing to z
    add_Y = np.array([rot**2] * 3 + [trans**2 + (rot * L) ** 2] * 2 + [trans**2])
    np.testing.assert_allclose(res.Y_std, np.sqrt(np.array(Y_std) ** 2 + add_Y), rtol=1e-12)
    # the covariance's diagonal agrees with the standard deviations
    np.testing.assert_allclose(np.sqrt(np.diag(res.cov)), np.concatenate([res.X_std, res.Y_std]), rtol=1e-12)
    np.testing.assert_allclose(res.observability["robot_accuracy"]["Y_std_added"], np.sqrt(add_Y), rtol=1e-12)


def test_consider_cov_of_an_rms_level_has_that_rms():
    """The stated level is the RMS angle and distance: the traces of the blocks at the origin are their squares."""
    C = re_.consider_cov(np.eye(4), (0.2, 0.7))
    assert math.isclose(np.trace(C[:3, :3]), math.radians(0.2) ** 2, rel_tol=1e-12)
    assert math.isclose(np.trace(C[3:, 3:]), (0.7e-3) ** 2, rel_tol=1e-12)


def test_no_level_adds_nothing_and_says_so():
    res = _result(np.eye(4), np.eye(4), [1.0] * 6, [2.0] * 6)
    re_.apply(res, None)
    np.testing.assert_array_equal(res.X_std, [1.0] * 6)
    assert res.observability["robot_accuracy"] is None and res.notes == [re_.UNSTATED_NOTE]
