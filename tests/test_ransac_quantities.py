"""RANSAC's thresholds and its minimum consensus (:mod:`kinhec.solvers.ransac`) on motions with a known truth."""

from __future__ import annotations

import warnings

import numpy as np

from kinhec.geometry import se3
from kinhec.solvers.ransac import MIN_CONSENSUS, NoConsensusWarning, ransac_axxb


def _exact(rng, n):
    X = se3.random_poses(rng, 1, trans_std_m=0.1)[0]
    A = se3.random_poses(rng, n, trans_std_m=0.3)
    return X, A, se3.invert_transform(X) @ A @ X


def test_adaptive_translation_threshold_comes_from_the_lower_quartile():
    # 16 exact motions and 8 (a third) whose camera translation is 50 mm off: the best hypothesis' residuals are
    # zero on a quarter of the motions and more, so the adaptive threshold stays at the given 20 mm and exactly
    # the 8 shifted motions are outliers (an upper quartile of 50 mm would widen it past them)
    rng = np.random.default_rng(7)
    X, A, B = _exact(rng, 24)
    bad = np.zeros(24, dtype=bool)
    bad[rng.choice(24, 8, replace=False)] = True
    shift = rng.normal(size=(8, 3))
    B[bad, :3, 3] += 0.05 * shift / np.linalg.norm(shift, axis=1, keepdims=True)
    res = ransac_axxb(A, B, np.random.default_rng(0))
    assert np.array_equal(res.inliers, ~bad) and res.consensus
    rot, tr = se3.pose_error(res.X, X)
    assert rot < 1e-6 and tr < 1e-6


def test_exactly_a_consensus_of_motions_is_solved_as_one():
    # MIN_CONSENSUS exact motions: a consensus can form, so no fallback, no warning, and X exact
    X, A, B = _exact(np.random.default_rng(8), MIN_CONSENSUS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoConsensusWarning)
        res = ransac_axxb(A, B, np.random.default_rng(0))
    assert res.consensus and res.inliers.all() and res.n_hypotheses > 0
    rot, tr = se3.pose_error(res.X, X)
    assert rot < 1e-6 and tr < 1e-6


def test_hypothesis_residuals_are_those_of_the_definition():
    # the batched scoring (all hypotheses' rotations as one matrix) against the residuals written out per
    # hypothesis and motion: |log R_A - R_X log R_B| and |R_A t_X + t_A - R_X t_B - t_X|, for 7 hypotheses and 1
    from kinhec.solvers import _common as c
    from kinhec.solvers.ransac import _residuals

    rng = np.random.default_rng(11)
    X, A, B = _exact(rng, 15)
    B[:5] = se3.random_poses(rng, 5, trans_std_m=0.3)  # some motions far off
    qA, qB = c.motion_quats(A, B)
    alpha, beta = c.rotvecs_from_quats(qA), c.rotvecs_from_quats(qB)
    H = se3.random_poses(rng, 7, trans_std_m=0.1)
    H[0] = X
    for R, t in ((H[:, :3, :3], H[:, :3, 3]), (H[:1, :3, :3], H[:1, :3, 3])):
        rot, tr = _residuals(alpha, beta, A[:, :3, :3], A[:, :3, 3], B[:, :3, 3], R, t)
        assert rot.shape == tr.shape == (len(R), 15)
        for h in range(len(R)):
            for k in range(15):
                want_rot = np.linalg.norm(alpha[k] - R[h] @ beta[k])
                want_tr = np.linalg.norm(A[k, :3, :3] @ t[h] + A[k, :3, 3] - R[h] @ B[k, :3, 3] - t[h])
                assert abs(rot[h, k] - want_rot) < 1e-12 and abs(tr[h, k] - want_tr) < 1e-12
    # the true X leaves the exact motions without residual and the bad ones with one
    rot, tr = _residuals(alpha, beta, A[:, :3, :3], A[:, :3, 3], B[:, :3, 3], H[:1, :3, :3], H[:1, :3, 3])
    assert np.all(rot[0, 5:] < 1e-9) and np.all(tr[0, 5:] < 1e-9) and np.all(np.maximum(rot[0, :5], tr[0, :5]) > 1e-3)
