"""Row alignment (:mod:`kinhec.calibrate.row_alignment`) against hand computations: the residual of a pair moved by
a known amount in the hand's base, the fit's scale between units, and the limits of the lengths it considers."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.calibrate import row_alignment as ra
from kinhec.geometry import se3

X = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.2, 1.2]), [0.03, -0.05, 0.09])
Y = se3.transform_from_rotation_translation(se3.so3_exp([0.1, 2.0, 0.2]), [0.8, 0.1, -0.2])


def _pairs(n, seed=0, s=1.0):
    rng = np.random.default_rng(seed)
    H = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.6, (n, 3))), rng.normal(0.4, 0.2, (n, 3)))
    E = se3.invert_transform(Y) @ H @ X  # H X = Y E
    E[:, :3, 3] /= s  # the eye file in other units: s E_t metric
    return H, E


def test_pair_residuals_of_a_known_move():
    H, E = _pairs(5, s=2.0)
    assert np.allclose(ra.pair_residuals(H, E, X, Y, 2.0), 0.0, atol=1e-12)
    # the hand moved by d in its base: the pair's translation residual is d in the frame of Y s E (R_Q^T d)
    d = np.array([0.01, -0.02, 0.005])
    Hm = H.copy()
    Hm[:, :3, 3] += d
    r = ra.pair_residuals(Hm, E, X, Y, 2.0)
    RQ = (Y @ E)[:, :3, :3]
    assert np.allclose(r[:, :3], 0.0, atol=1e-12)
    assert np.allclose(r[:, 3:], np.einsum("nji,j->ni", RQ, d), rtol=0, atol=1e-12)
    # a turn of the flange by phi (H R(phi)): the rotation residual is R_X^T phi
    phi = np.array([0.0, 0.01, -0.02])
    Hr = H @ se3.transform_from_rotation_translation(se3.so3_exp(phi), np.zeros(3))
    r = ra.pair_residuals(Hr, E, X, Y, 2.0)
    assert np.allclose(r[:, :3], X[:3, :3].T @ phi, rtol=0, atol=1e-9)


def test_fit_absolute_of_scaled_eye_translations():
    H, E = _pairs(12, seed=1, s=0.001)  # the eye file in millimetres: s = 0.001
    Xf, Yf, s = ra.fit_absolute(H, E)
    assert s == pytest.approx(0.001, rel=1e-10)
    assert np.allclose(Xf, X, atol=1e-10) and np.allclose(Yf, Y, atol=1e-10)


@pytest.mark.parametrize("nh, ne, considered", [(8, 8, True), (7, 8, False), (12, 15, True), (12, 16, False),
                                                (15, 12, True), (16, 12, False)])
def test_the_lengths_it_considers(nh, ne, considered):
    # at most MAX_UNPAIRED = 3 rows more in one file, at least 8 rows in each
    H, E = _pairs(max(nh, ne), seed=2)
    row = ra.align_rows(H[:nh], E[:ne])
    assert (row is not None) == considered
    if considered and nh == ne:
        assert row.alignment.is_identity and row.decided
