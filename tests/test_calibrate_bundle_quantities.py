"""The joint pixel refinement (``kinhec.calibrate.bundle``) on a small seeded rig: its twist exponential against
:func:`kinhec.geometry.se3.se3_exp`, its RMS against the residuals recomputed from its answer, its noise levels and board
scale against the ones the pixels were drawn with."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.calibrate import bundle as bd
from kinhec.models.intrinsics import pack_views, project
from kinhec.solvers.reprojection import chain_poses


def test_exp6_is_the_se3_exponential():
    rng = np.random.default_rng(51)
    v = rng.normal(size=(20, 6)) * np.array([0.7, 0.7, 0.7, 0.3, 0.3, 0.3])
    v[0, :3] = 1e-7  # the small-angle branch
    for vi in v:
        np.testing.assert_allclose(bd._exp6(vi), se3.se3_exp(vi), atol=1e-12)


K = np.array([800.0, 790.0, 320.0, 240.0, 0, 0, 0, 0, 0])
B_TRUE = 1.01  # the printed board is 1 % larger than stated
PIX_STD, ROT_STD, TRANS_STD = 0.2, 1e-3, 1e-3


@pytest.fixture(scope="module")
def rig():
    rng = np.random.default_rng(52)
    n = 14
    gx, gy = np.meshgrid(np.arange(6) * 0.03, np.arange(5) * 0.03)
    P = np.column_stack([gx.ravel() - 0.075, gy.ravel() - 0.06, np.zeros(30)])  # stated board [m]
    X = se3.transform_from_rotation_translation(se3.so3_exp(np.array([0.1, -0.2, 0.3])), np.array([0.05, -0.02, 0.1]))
    Y = se3.transform_from_rotation_translation(se3.so3_exp(np.array([0.3, 0.1, -0.4])), np.array([0.6, 0.2, 0.1]))
    w = rng.normal(size=(n, 3))
    w *= 0.35 / np.linalg.norm(w, axis=1, keepdims=True)
    t = np.column_stack([rng.uniform(-0.05, 0.05, (n, 2)), rng.uniform(0.4, 0.6, n)])
    C = se3.transform_from_rotation_translation(se3.so3_exp(w), t)  # true T_cam_target (true board)
    A_true = Y @ se3.invert_transform(C) @ se3.invert_transform(X)  # eye in hand: C = inv(A X) Y
    xi = rng.normal(size=(n, 6)) * np.array([ROT_STD] * 3 + [TRANS_STD] * 3)
    A_meas = A_true @ se3.invert_transform(se3.se3_exp(xi))  # the true flange pose is A_meas exp(xi)
    # pixels of the true (larger) board: pi(R b P + t) = pi(R P + t / b)
    Cs = C.copy()
    Cs[:, :3, 3] /= B_TRUE
    uv = project(K, Cs, P) + rng.normal(size=(n, 30, 2)) * PIX_STD
    views = pack_views([P] * n, list(uv))
    fit = bd.refine_bundle(views, A_meas, X, Y, K, "eye_in_hand", pixel_std=0.5, robot_std=(2e-3, 2e-3),
                           board_prior_std=0.005)  # fmt: skip
    return fit, views, A_meas, P


def test_rms_is_per_corner_of_the_residuals_at_the_answer(rig):
    fit, views, A, P = rig
    C = chain_poses(A @ se3.se3_exp(fit.twists), fit.X, fit.Y, "eye_in_hand")
    C[:, :3, 3] /= fit.board_scale
    e = project(fit.intrinsics, C, P) - views.points_2d
    rms = math.sqrt(float(np.mean(np.sum(e**2, axis=-1))))  # over the corners: sqrt(mean |e|^2)
    assert math.isclose(fit.rms_px, rms, rel_tol=1e-6)
    # two coordinates per corner, each with the noise the pixels were drawn with (less what the fit absorbs)
    assert 0.85 < fit.rms_px / (math.sqrt(2.0) * PIX_STD) < 1.05


def test_noise_levels_and_board_scale_are_recovered(rig):
    fit, *_ = rig
    assert abs(fit.pixel_std / PIX_STD - 1.0) < 0.1
    assert abs(fit.robot_rot_std_rad / ROT_STD - 1.0) < 0.35
    assert abs(fit.robot_trans_std_m / TRANS_STD - 1.0) < 0.35
    assert abs(fit.board_scale / B_TRUE - 1.0) < 2e-3
