"""The joint bundle of ``--corners`` (kinhec.calibrate.bundle.refine_bundle): its covariance and the board scale's
information from the pixels alone, on a small generated eye-in-hand recording (8 views of a 6 x 5 board)."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.calibrate import scale as sc
from kinhec.calibrate.bundle import refine_bundle
from kinhec.models.intrinsics import pack_views, project

K = np.array([600.0, 600.0, 320.0, 240.0, 0.0, 0.0, 0.0, 0.0, 0.0])
PX, ROT, TRANS = 0.3, 1e-3, 1e-3  # pixel noise [px], flange twist noise [rad, m]


def _recording(seed: int, n: int = 8):
    """Views ``(PackedViews)``, measured flange poses, the true ``X`` (``T_ee_cam``) and ``Y`` (``T_base_target``)."""
    rng = np.random.default_rng(seed)
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.2, 1.1]), [0.05, -0.03, 0.08])
    Y = se3.transform_from_rotation_translation(np.eye(3), [0.6, 0.0, 0.0])
    grid = np.stack(np.meshgrid(np.arange(6), np.arange(5)), -1).reshape(-1, 2) * 0.03
    P = np.c_[grid - grid.mean(0), np.zeros(len(grid))]
    T_target_cam = []
    for _ in range(n):  # cameras about 0.5 m above the board, tilted by up to 20 deg, rolled at random
        tilt = rng.uniform(-0.35, 0.35, 2)
        R = se3.so3_exp([np.pi + tilt[0], tilt[1], rng.uniform(-1.0, 1.0)])
        T_target_cam.append(se3.transform_from_rotation_translation(R, R @ [0.0, 0.0, -0.5] + rng.normal(0, 0.03, 3)))
    A = Y @ np.array(T_target_cam) @ se3.invert_transform(X)
    uv = project(K, se3.invert_transform(A @ X) @ Y, np.broadcast_to(P, (n,) + P.shape))
    uv = uv + rng.normal(0.0, PX, uv.shape)
    A = A @ se3.se3_exp(np.c_[rng.normal(0, ROT, (n, 3)), rng.normal(0, TRANS, (n, 3))])
    return pack_views([P] * n, list(uv)), A, X, Y


def _fit(views, A, X0, Y0, board_prior_std):
    return refine_bundle(views, A, X0, Y0, K, "eye_in_hand", pixel_std=PX, robot_std=(ROT, TRANS),
                         board_prior_std=board_prior_std)


@pytest.fixture(scope="module")
def base():
    views, A, X, Y = _recording(1)
    X0 = X @ se3.se3_exp(np.full(6, 1e-3))
    return views, A, X0, Y, _fit(views, A, X0, Y, sc.PRIOR_STD)


def test_board_scale_data_std_is_what_a_fit_without_the_prior_reports(base):
    views, A, X0, Y0, held = base
    # the pixels alone determine log b to about 1.3 %, well beyond the 0.5 % prior: the prior's information
    # 1 / sigma_b^2 comes off the posterior's exactly, and a refit under a prior a thousand times wider reports
    # about the same standard deviation (at its own solution and noise levels)
    post = held.cov[-1, -1]
    assert 1.0 / held.board_scale_data_std**2 == pytest.approx(1.0 / post - 1.0 / sc.PRIOR_STD**2, rel=1e-6)
    wide = _fit(views, A, X0, Y0, 1000 * sc.PRIOR_STD)
    assert held.board_scale_data_std == pytest.approx(np.sqrt(wide.cov[-1, -1]), rel=0.05)
    assert held.board_scale_data_std > 2 * sc.PRIOR_STD  # so that the prior's term matters above


def test_covariance_turns_with_the_flange_and_base_frames(base):
    # The same recording in a flange frame turned by G (A G, G^T X) and a base frame turned by H (H A, H Y): the
    # rotation parts (right perturbations) keep their covariance, the translations (in the parent frames) turn.
    views, A, X0, Y0, f = base
    G = se3.transform_from_rotation_translation(se3.so3_exp([0.4, 1.3, -0.7]), np.zeros(3))
    H = se3.transform_from_rotation_translation(se3.so3_exp([-0.9, 0.2, 0.5]), np.zeros(3))
    g = _fit(views, H @ A @ G, G.T @ X0, H @ Y0, sc.PRIOR_STD)
    np.testing.assert_allclose(g.X, G.T @ f.X, atol=1e-5)
    np.testing.assert_allclose(g.Y, H @ f.Y, atol=1e-5)
    Rg, Rh = G[:3, :3], H[:3, :3]
    M = np.eye(f.cov.shape[0])  # the expected change of frame of (phi_X, t_X, phi_Y, t_Y, log b)
    M[3:6, 3:6] = Rg.T
    M[9:12, 9:12] = Rh
    expected = M @ f.cov @ M.T
    scale = np.sqrt(np.outer(np.diag(f.cov), np.diag(f.cov)))  # compare as correlations
    assert np.abs((g.cov - expected) / scale).max() < 1e-2
    assert np.abs((f.cov - expected) / scale)[3:6, 3:6].max() > 0.1  # the turn is not a small one
