"""Step 2 of ``he_ml``: the robust start -- closed-form and minimal-set hypotheses, their scores, the first inliers.

Hypotheses of ``(X, Y, s)`` come from the Shah closed form on every pair and
from random minimal sets of three pairs (Kronecker rotation, then translations
and ``1 / s`` by linear least squares, all hypotheses as one batch); each is
scored by a low quantile of the distances of the other pairs (up to about 60 %
outliers), every pair also read with its planar-ambiguity mirror
(:func:`kinhec.models.noise.planar_flip`).  The all-pairs start is kept unless a
minimal set halves its score.  The first inliers are the pairs within a
generous gate of the start.
"""

from __future__ import annotations

import math

import numpy as np

from kinhec.solvers import _common as c
from kinhec.solvers.he_ml_stages import configuration as conf_stage
from kinhec.solvers.he_ml_stages.model import ROBUST_MIN_PAIRS, mv, nearest_rotations
from kinhec.solvers.he_ml_stages.state import FitState

#: Minimal-set hypotheses of the initialisation (plus the all-pairs closed form).
N_HYPOTHESES = 64
#: A minimal set replaces the all-pairs start only when its score is below this fraction of the latter's.
_PREFER_ALL = 0.5
#: Pairs on which the hypotheses are scored (a random subset of larger sets).
_SCORE_PAIRS = 48
#: Quantile of the pair distances that scores a hypothesis (and sets the first inliers' gate).
SCORE_QUANTILE = 0.35
#: |log s| of the closed-form start below which ``scale="auto"`` treats the data as metric.
_SCALE_START = 0.05


def _kronecker_sums(RA: np.ndarray, RB: np.ndarray) -> np.ndarray:
    """``K = sum_i RB_i kron RA_i`` (H, 9, 9) of batches of pair sets (H, m, 3, 3): ``K vec(R_X) = vec(R_Y)`` scaled.

    ``K[(a, b), (c, d)] = sum_i RB_i[a, c] RA_i[b, d]``: one product over the pairs, then the indices regrouped.
    """
    H = RA.shape[0]
    P = np.swapaxes(RB.reshape(H, -1, 9), 1, 2) @ RA.reshape(H, -1, 9)  # P[(a, c), (b, d)]
    return P.reshape(H, 3, 3, 3, 3).transpose(0, 1, 3, 2, 4).reshape(H, 9, 9)


def _rotations_from_kronecker(K: np.ndarray):
    """Kronecker solution of ``R_A R_X = R_Y R_B``: ``R_X``, ``R_Y`` (H, 3, 3) from the top singular vectors of K."""
    # the top right singular vector of K is the top eigenvector of K^T K (half the cost of an SVD); the left
    # one is K v up to a positive factor, which the projection onto SO(3) ignores
    v = np.linalg.eigh(np.swapaxes(K, 1, 2) @ K)[1][:, :, -1]
    H = K.shape[0]
    # R_X's and R_Y's matrices as one stack: one determinant and one projection for both
    M = np.concatenate([v.reshape(-1, 3, 3), mv(K, v).reshape(-1, 3, 3)]).swapaxes(1, 2)
    R = nearest_rotations(M * np.sign(np.linalg.det(M))[:, None, None])
    return R[:H], R[H:]


def _translations_from_sets(RA, tA, tB, RY, with_scale: bool):
    """``R_A t_X + t_A = k R_Y t_B + t_Y`` by least squares for batches (H, m, ...); returns tX, tY, s = 1 / k.

    The camera translations are ``s`` times the metric ones, so the metric ``t_B`` is ``k t_B`` with ``k = 1 / s``.
    """
    H, m = RA.shape[:2]
    p = 7 if with_scale else 6
    M = np.zeros((H, m, 3, p))
    M[..., :3] = RA
    M[..., 3:6] = -np.eye(3)
    rhs = -tA
    RYtB = tB @ np.swapaxes(RY, 1, 2)
    if with_scale:
        M[..., 6] = -RYtB
    else:
        rhs = RYtB - tA
    M = M.reshape(H, 3 * m, p)
    rhs = rhs.reshape(H, 3 * m)
    N = np.swapaxes(M, 1, 2) @ M + 1e-12 * np.eye(p)
    sol = np.linalg.solve(N, np.swapaxes(M, 1, 2) @ rhs[..., None])[..., 0]
    if not with_scale:
        return sol[:, :3], sol[:, 3:6], np.ones(H)
    k = sol[:, 6]
    s = np.where(k > 1e-9, 1.0 / np.where(k > 1e-9, k, 1.0), np.nan)
    return sol[:, :3], sol[:, 3:6], s


def hypotheses(A, B, rng, n_hyp: int, with_scale: bool):
    """Batch of ``(R_X, t_X, R_Y, t_Y, s)`` and the pairs behind each: all pairs first, then minimal sets of three.

    Returns the five stacked arrays and a boolean ``(H, N)`` mask of the pairs each hypothesis was fitted to.
    """
    n = A.shape[0]
    idx_all = np.arange(n)[None]
    if n > 3:
        # three distinct pairs per set: the indices of the three smallest of n uniform draws, in order (the
        # partial sort gives the same sets as a full argsort)
        u = rng.random((n_hyp, n))
        draws = np.argpartition(u, 2, axis=1)[:, :3]
        draws = np.take_along_axis(draws, np.argsort(np.take_along_axis(u, draws, axis=1), axis=1), axis=1)
    else:
        draws = np.zeros((0, 3), dtype=np.int64)
    sets = [idx for idx in (idx_all, draws) if idx.shape[0]]
    # the rotations of all sets in one batch, then the translations per set size
    RX, RY = _rotations_from_kronecker(np.concatenate([_kronecker_sums(A[idx, :3, :3], B[idx, :3, :3])
                                                       for idx in sets]))  # fmt: skip
    out = [[], [], []]
    h = 0
    for idx in sets:
        RYs = RY[h : h + idx.shape[0]]
        h += idx.shape[0]
        t = _translations_from_sets(A[idx, :3, :3], A[idx, :3, 3], B[idx, :3, 3], RYs, with_scale)
        for lst, v in zip(out, t):
            lst.append(v)
    tX, tY, s = (np.concatenate(v) for v in out)
    used = np.zeros((1 + draws.shape[0], n), dtype=bool)
    used[0] = True
    used[np.arange(1, 1 + draws.shape[0])[:, None], draws] = True
    return RX, tX, RY, tY, s, used


def pair_distances(A, C_list, RX, tX, RY, tY, s, configuration):
    """Per hypothesis and pair: rotation angle [rad] + translation distance [m] of ``C`` to its prediction.

    ``C_list``: the measured camera poses and optionally their mirrors; the minimum is taken.
    Shapes: hypotheses H, pairs n -> (H, n).
    """
    # Products are batched over the pairs with all hypotheses as columns (or over the hypotheses with all
    # pairs as rows): a few dozen small matrix products instead of one per hypothesis and pair.
    RA, tA = A[:, :3, :3], A[:, :3, 3]
    eih = configuration == "eye_in_hand"
    vX, vY = RX.reshape(-1, 9), RY.reshape(-1, 9)  # row-major vec: vec(P M Q) = (P kron Q^T) vec(M)
    if eih:
        # prediction inv(A X) Y: R = RX^T RA^T RY, t = RX^T (RA^T (tY - tA) - tX); tr(R^T Rm) = <RY, RA RX Rm>
        RAt = np.swapaxes(RA, 1, 2)
        e = (RAt @ tY.T - RAt @ tA[:, :, None]).transpose(2, 0, 1) - tX[:, None, :]  # (n, 3, H) -> (H, n, 3)
        tp = e @ RX  # rows: (RX^T e)^T
    else:
        # prediction inv(Y) A X: R = RY^T RA RX, t = RY^T (RA tX + tA - tY); tr(R^T Rm) = <RY, RA RX Rm^T>
        e = (RA @ tX.T + tA[:, :, None]).transpose(2, 0, 1) - tY[:, None, :]  # (n, 3, H) -> (H, n, 3)
        tp = e @ RY
    best = None
    for C in C_list:
        Rm = C[:, :3, :3]
        Q = Rm if eih else np.swapaxes(Rm, 1, 2)  # tr(R^T Rm) = <RY, RA RX Q>
        if 4 * RX.shape[0] < A.shape[0]:
            # few hypotheses: the products RA RX Q themselves
            tr = np.einsum("hnij,hij->hn", (RA[None] @ RX[:, None]) @ np.ascontiguousarray(Q)[None], RY)
        else:
            # vec(RA RX Q) = kron(RA, Q^T) vec(RX): one 9 x 9 matrix per pair, applied to all hypotheses at once
            Qt = np.swapaxes(Q, 1, 2)
            K = (RA[:, :, None, :, None] * Qt[:, None, :, None, :]).reshape(-1, 9, 9)
            tr = np.einsum("nrh,hr->hn", K @ vX.T, vY)
        cosang = np.clip((tr - 1.0) / 2.0, -1.0, 1.0)
        d = np.arccos(cosang) + np.linalg.norm(C[None, :, :3, 3] / s[:, None, None] - tp, axis=-1)
        best = d if best is None else np.minimum(best, d)
    return best


def initial_inliers(A, Cm, Cf, X, Y, ls, configuration, robust):
    """Pairs close to the start (and which prefer their mirror): a generous gate on the robust distance."""
    n = A.shape[0]
    if not robust:
        return np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
    args = (X[None, :3, :3], X[None, :3, 3], Y[None, :3, :3], Y[None, :3, 3], np.array([math.exp(ls)]))
    d0 = pair_distances(A, [Cm], *args, configuration)[0]
    repaired = np.zeros(n, dtype=bool)
    if Cf is not None:
        df = pair_distances(A, [Cf], *args, configuration)[0]
    gate = max(4.0 * float(np.quantile(np.minimum(d0, df) if Cf is not None else d0, SCORE_QUANTILE)), 1e-12)
    if Cf is not None:
        # a mirror replaces a reading only when the reading is far off and the mirror is not
        repaired = (d0 > gate) & (df <= gate)
        d0 = np.where(repaired, df, d0)
    inl = d0 <= gate
    if inl.sum() < 3:
        inl = np.ones(n, dtype=bool)
    return inl, repaired


def robust_start(A, B, configuration: str, rng: np.random.Generator, n_hypotheses: int, scale, robust: bool,
                 identify: bool) -> FitState:  # fmt: skip
    """The start of the fit: ``X``, ``Y``, ``log s``, the readings and the first inliers.

    The hypotheses are scored with the reading of ``configuration`` (the frustum test's, or the given one);
    with ``identify`` (the configuration was not given) and from :data:`~.model.ROBUST_MIN_PAIRS` pairs on, the
    other reading replaces it when its noise model explains the start's residuals better
    (:func:`~.configuration.better_reading`).  ``scale="auto"`` drops the scale when the start finds the data
    metric.  ``rng`` draws the minimal sets and the scored pairs.
    """
    n = A.shape[0]
    with_scale = scale is not False
    robust = robust and n >= ROBUST_MIN_PAIRS
    Cm, Cf = conf_stage.readings(B, configuration, robust)
    readings = [Cm] if Cf is None else [Cm, Cf]
    RX, tX, RY, tY, s, used = hypotheses(A, B, rng, n_hypotheses if robust else 0, with_scale)
    s = np.where(np.isfinite(s) & (s > 1e-6), s, 1.0)
    h = 0
    if robust:
        # hypotheses are scored on a random subset of the pairs (enough for a quantile, and cheap); a minimal
        # set fits its own three pairs exactly, so those do not count in its score
        sub = np.sort(rng.choice(n, size=min(n, _SCORE_PAIRS), replace=False))
        d = pair_distances(A[sub], [r[sub] for r in readings], RX, tX, RY, tY, s, configuration)
        own = used[:, sub]
        own[0] = False
        d[own] = np.inf  # sorted last; the quantile is taken among the other pairs
        m = (~own).sum(axis=1)
        k = np.floor(SCORE_QUANTILE * np.maximum(m - 1, 0)).astype(np.int64)
        score = np.sort(d, axis=1)[np.arange(d.shape[0]), k]
        best = int(np.nanargmin(score))
        # the all-pairs closed form stays the start unless a minimal set explains the data clearly better
        h = best if score[best] < _PREFER_ALL * score[0] else 0
    X = c.transform(RX[h], tX[h])
    Y = c.transform(RY[h], tY[h])
    ls = math.log(s[h]) if with_scale else 0.0
    inl, repaired = initial_inliers(A, Cm, Cf, X, Y, ls, configuration, robust)
    if scale == "auto" and abs(ls) < _SCALE_START:
        # the closed form finds the data metric: no scale unless asked for
        with_scale, ls = False, 0.0
    fit = FitState(A=A, B=B, configuration=configuration, robust=robust, Cm=Cm, Cf=Cf, X=X, Y=Y, ls=ls,
                   with_scale=with_scale, inl=inl, repaired=repaired)  # fmt: skip
    if identify and n >= ROBUST_MIN_PAIRS:
        other = conf_stage.better_reading(fit)
        if other is not None:
            fit.configuration = other
            fit.Cm, fit.Cf = conf_stage.readings(B, other, robust)
            fit.inl, fit.repaired = initial_inliers(A, fit.Cm, fit.Cf, X, Y, ls, other, robust)
    return fit
