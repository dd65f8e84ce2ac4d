"""Step 4 of ``he_ml``, continued: a monocular scale that drifts as a random walk.

When the log-scale offsets each pair alone asks for follow one another (lag-1
autocorrelation above :data:`SCALE_DRIFT_LAG1`), one offset per pair is fitted
with ``X``, ``Y`` and ``log s`` under a random-walk prior whose step is
estimated by EM; the variance components are re-estimated with the offsets'
posterior variance (the E-step), and the offsets are marginalised out of the
covariance.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from kinhec.geometry import se3
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml_stages import variance_components as vc
from kinhec.solvers.he_ml_stages.model import (ROBUST_MIN_PAIRS, exp6, mv, predict, project_so3, residuals,
                                               residuals_from_inverse)

#: Lag-1 autocorrelation of the per-pair log-scale offsets above which ``scale_drift="auto"`` fits a scale
#: that drifts as a random walk (see :func:`scale_offsets`).
SCALE_DRIFT_LAG1 = 0.3
_SCALE_DRIFT_ROUNDS = 8
#: Largest change of ``log s`` one step of :func:`solve_scale_drift` may take: a longer
#: step leaves the region where the linearisation holds and is rejected (the damping raised).
MAX_LOG_SCALE_STEP = math.log(2.0)
#: The drifting-scale fit stops before a step predicted to lower its cost, or at an accepted step that lowered it
#: (the chi-square of the whitened residuals and the walk's prior terms), by at most this: the estimate then moves
#: by about ``sqrt(2e-4)``, 0.014, of its standard errors, and closer to the minimum the steps are at the level of
#: the linearised Jacobian's own errors (steps raising the cost by 1e-3 alternate with ones lowering it by as much).
DRIFT_COST_TOL = 1e-4
#: How far the drifting fit's mean log scale over the inliers may move from the constant scale's before the
#: drifting fit counts as diverged and is discarded.  Both fits explain the same translations, so their
#: average scales agree closely; a fit that runs off by a factor of 2 has found the degenerate solution in
#: which the scale falls towards 0 (the predicted camera translations vanish), not a drift.
MAX_DRIFT_LOG_SCALE_SHIFT = math.log(2.0)


def scale_offsets(r: np.ndarray, Cp: np.ndarray, Sinv: np.ndarray, inl: np.ndarray) -> np.ndarray:
    """The log-scale offset each inlier pair alone asks for, in time order: ``(u_i^T W_i r_i) / (u_i^T W_i u_i)``.

    ``u_i`` is the pair's scale direction, ``W_i`` its inverse covariance.  Pairs that barely see the scale
    (camera near the reference's origin, as at the start of visual odometry) give offsets of no precision:
    only those within 3x the median standard deviation are kept.
    """
    u = pm.scale_jacobian(Cp)
    Wu = mv(Sinv, u)
    prec = (Wu * u).sum(axis=1)
    keep = inl & (prec > 0) & (prec >= np.median(prec[inl]) / 9.0)
    return (Wu * r).sum(axis=1)[keep] / prec[keep]


def lag1_of(d: np.ndarray) -> float:
    """Lag-1 autocorrelation of a series about its mean: independent noise gives about 0, a random walk about 1."""
    d = d - d.mean()
    ss = float(d @ d)
    return float(d[:-1] @ d[1:]) / ss if ss > 0 and d.size > 2 else 0.0


class OffsetCovariance(NamedTuple):
    """What the drifting-scale fit needs of the inverse normal matrix of ``(dx, dy, log s, q_1..q_(n-1))``.

    Attributes
    ----------
    cov : ndarray, shape (13, 13)
        Covariance of ``(dx, dy, log s)`` [rad, m], the offsets marginalised.
    var_q : ndarray, shape (n - 1,)
        Posterior variances of the offsets ``q_1..q_(n-1)``.
    cov_q_lag1 : ndarray, shape (n - 2,)
        Posterior covariances of neighbouring offsets ``(q_i, q_(i+1))``, ``i = 1..n-2``.
    """

    cov: np.ndarray
    var_q: np.ndarray
    cov_q_lag1: np.ndarray


def _eliminate_offsets(Hgg, Hgq, T_diag, T_off, rhs):
    """Schur complement of the offsets' tridiagonal block ``T`` in ``[[Hgg, Hgq], [Hgq^T, T]]``.

    ``T`` (m x m, symmetric positive definite) is given by its diagonal ``T_diag`` (m,) and first
    off-diagonal ``T_off`` (m - 1,); ``rhs`` (m, k) is solved with ``T`` alongside ``Hgq^T``.  Returns
    ``S = Hgg - Hgq T^-1 Hgq^T`` (13, 13), ``Z = T^-1 Hgq^T`` (m, 13) and ``T^-1 rhs`` (m, k): one banded
    Cholesky factorisation, O(m) instead of the O(m^3) of a dense solve.

    Raises
    ------
    numpy.linalg.LinAlgError
        ``T`` is not positive definite.
    """
    from scipy.linalg import solveh_banded  # here: importing the registry stays light

    m = T_diag.size
    ab = np.zeros((2, m))
    ab[0, 1:] = T_off
    ab[1] = T_diag
    sol = solveh_banded(ab, np.concatenate([Hgq.T, rhs], axis=1), check_finite=False)
    Z = sol[:, :13]
    return Hgg - Hgq @ Z, Z, sol[:, 13:]


def solve_scale_drift(A, Cm, X0, Y0, ls0, q0, Linv, sw, configuration, sigma_d, max_iter: int = 30):
    """Weighted least squares over ``X``, ``Y``, ``log s`` and a log-scale offset ``q_i`` per pair.

    ``q_0 = 0`` (``s`` is the scale of the first pair); the offsets follow a random walk,
    ``q_i - q_(i-1) ~ N(0, sigma_d^2)``, which enters as prior residuals.  Gauss-Newton steps on the normal
    equations (damped as Levenberg-Marquardt only after a step fails), whose structure is used: an offset enters
    its own pair's residual and the prior terms of its two neighbours only, so the offsets' block of the normal
    matrix is tridiagonal (its own pair's scale information plus the prior's ``D^T D``) and is eliminated by a
    banded Cholesky factorisation (the Schur complement on the 13 global unknowns), O(n) per step.  A step that
    moves ``log s`` by more than :data:`MAX_LOG_SCALE_STEP` or gives a non-finite cost is rejected like one that
    raises the cost: the cost falls towards the scale's degenerate end (``s -> 0``, no predicted camera
    translation) when the residuals are poor, and an unbounded step would jump there.  The iterations stop before
    a step that the linear model predicts to lower the cost by at most :data:`DRIFT_COST_TOL`, or at an accepted
    step that lowered it by that little.  Returns ``X``, ``Y``,
    ``ls``, ``q`` and the :class:`OffsetCovariance` at the solution (from the inverse of the normal matrix).
    """
    n = A.shape[0]
    m = n - 1
    X, Y, ls, q = X0.copy(), Y0.copy(), ls0, q0.copy()
    eih = configuration == "eye_in_hand"
    A_inv = None if eih else se3.invert_transform(A, check=False)
    # the prior's normal matrix D^T D on q_1..q_(n-1) (rows q_i - q_(i-1), q_0 = 0): tridiagonal
    w_prior = 1.0 / sigma_d**2
    prior_diag = np.full(m, 2.0 * w_prior)
    prior_diag[-1] = w_prior
    prior_off = np.full(m - 1, -w_prior)

    def residual(X_, Y_, ls_, q_):
        # the inverse of the predicted C (inv(Y) A X eye-in-hand, inv(X) inv(A) Y eye-to-hand) directly
        if eih:
            Ci = se3.invert_transform(Y_, check=False) @ A @ X_
        else:
            Ci = se3.invert_transform(X_, check=False) @ A_inv @ Y_
        e = sw[:, None] * mv(Linv, residuals_from_inverse(Cm, Ci, ls_, ls0, q_))
        return e, (np.diff(q_) / sigma_d), Ci

    def cost(e, pr):
        return float(np.sum(e * e) + pr @ pr)

    def normal(X_, ls_, q_, e, pr, Ci):
        """Blocks of the normal matrix (globals, globals-offsets, the offsets' tridiagonal) and the gradient."""
        J, _ = pm.pair_jacobians(None, X_, configuration, C_inv=Ci, robot=False)
        k = np.exp(ls_ + q_ - ls0)
        Jg = np.empty((n, 6, 13))
        Jg[:, :, :12] = -J
        Jg[:, 3:, :12] *= k[:, None, None]
        Jg[:, :3, 12] = 0.0
        Jg[:, 3:, 12] = k[:, None] * Ci[:, :3, 3]  # -k d rho / d log s, the latter R^T t = -(translation of inv C)
        Jg = sw[:, None, None] * (Linv @ Jg)  # (n, 6, 13); the scale column is also each pair's q column
        wq = Jg[1:, :, 12]
        Hgg = np.einsum("nip,niq->pq", Jg, Jg)
        Hgq = np.einsum("nip,ni->pn", Jg[1:], wq)
        T_diag = (wq * wq).sum(axis=1) + prior_diag
        gg = np.einsum("nip,ni->p", Jg, e)
        Dt_pr = pr / sigma_d  # D^T pr: (pr_i - pr_(i+1)) / sigma_d
        Dt_pr[:-1] -= pr[1:] / sigma_d
        gq = (wq * e[1:]).sum(axis=1) + Dt_pr
        return Hgg, Hgq, T_diag, gg, gq

    e, pr, Ci = residual(X, Y, ls, q)
    f = cost(e, pr)
    lam = 0.0
    Hgg, Hgq, T_diag, gg, gq = normal(X, ls, q, e, pr, Ci)
    for _ in range(max_iter):
        # the Gauss-Newton step (H + lam diag(H)) step = -g, the offsets eliminated; damped only after a failure
        try:
            S, Z, z = _eliminate_offsets(Hgg + lam * np.diag(np.diag(Hgg)), Hgq, T_diag * (1.0 + lam), prior_off,
                                         gq[:, None])  # fmt: skip
            dg = -np.linalg.solve(S, gg - Hgq @ z[:, 0])
        except np.linalg.LinAlgError:
            lam = 1e-3 if lam == 0.0 else lam * 10.0
            continue
        dq = -z[:, 0] - Z @ dg
        if not (np.isfinite(dg).all() and np.isfinite(dq).all()) or abs(dg[12]) > MAX_LOG_SCALE_STEP:
            lam = 1e-3 if lam == 0.0 else lam * 10.0
            if lam > 1e8:
                break
            continue
        # the reduction the linear model predicts, |r|^2 - |r + J step|^2 = -(2 g.step + step.H.step)
        Hq = T_diag * dq
        Hq[:-1] += prior_off * dq[1:]
        Hq[1:] += prior_off * dq[:-1]
        predicted = -(2.0 * float(gg @ dg + gq @ dq) + float(dg @ Hgg @ dg) + 2.0 * float(dg @ (Hgq @ dq))
                      + float(dq @ Hq))  # fmt: skip
        if not predicted > DRIFT_COST_TOL:
            break
        Xn, Yn = X @ exp6(dg[:6]), Y @ exp6(dg[6:12])
        lsn = ls + dg[12]
        qn = q.copy()
        qn[1:] += dq
        en, prn, Cin = residual(Xn, Yn, lsn, qn)
        fn = cost(en, prn)
        if math.isfinite(fn) and fn <= f:
            small = f - fn <= DRIFT_COST_TOL
            X, Y, ls, q, e, pr, f = Xn, Yn, lsn, qn, en, prn, fn
            lam = 0.0 if lam <= 1e-3 else lam / 10.0
            Hgg, Hgq, T_diag, gg, gq = normal(X, ls, q, e, pr, Cin)
            if small:
                break
        else:
            lam = 1e-3 if lam == 0.0 else lam * 10.0
            if lam > 1e8:
                break
    X[:3, :3] = project_so3(X[:3, :3])
    Y[:3, :3] = project_so3(Y[:3, :3])
    # the inverse normal matrix, blockwise: globals S^-1; offsets T^-1 + Z S^-1 Z^T (its two central diagonals)
    S, Z, T_inv = _eliminate_offsets(Hgg, Hgq, T_diag, prior_off, np.eye(m))
    cov = np.linalg.pinv(S, hermitian=True)
    ZC = Z @ cov
    var_q = np.diagonal(T_inv) + np.einsum("ij,ij->i", ZC, Z)
    cov_lag1 = np.diagonal(T_inv, 1) + np.einsum("ij,ij->i", ZC[:-1], Z[1:])
    return X, Y, ls, q, OffsetCovariance(cov, var_q, cov_lag1)


def drift_variance(q: np.ndarray, cov: OffsetCovariance) -> float:
    """EM update of ``sigma_d^2`` from the smoothed offsets: mean of ``(q_i - q_(i-1))^2`` plus its posterior
    variance."""
    var = cov.var_q.copy()  # q_1.. (q_0 = 0 is fixed)
    var[1:] = var[1:] + var[:-1] - 2.0 * cov.cov_q_lag1
    dq = np.diff(q)
    return float(np.mean(dq * dq + np.maximum(var, 0.0)))


def diverged(X: np.ndarray, Y: np.ndarray, ls: float, q: np.ndarray, inl: np.ndarray, ls_constant: float) -> bool:
    """Whether a drifting-scale solution ran off: non-finite, or its mean log scale over the inliers
    ``mean(ls + q_i)`` farther than :data:`MAX_DRIFT_LOG_SCALE_SHIFT` from the constant scale's ``ls_constant``."""
    if not (np.isfinite(X).all() and np.isfinite(Y).all() and math.isfinite(ls) and np.isfinite(q).all()):
        return True
    return abs(float(np.mean(ls + q[inl])) - ls_constant) > MAX_DRIFT_LOG_SCALE_SHIFT


def fit_drifting_scale(fit, known: dict | None, force: bool) -> None:
    """The drifting-scale stage on ``fit`` (a :class:`~.state.FitState` with a scale, after the rounds).

    Sets ``info["scale_offset_lag1"]``; when the offsets follow one another (or ``force``), fits the offsets
    with ``X``, ``Y`` and ``log s``, alternating with the camera components and the EM step of the walk,
    and sets ``q``, ``drift_cov``, ``info["scale_drift_std"]`` and ``info["scale_offsets"]``.  A drifting fit
    whose mean log scale over the inliers leaves the constant scale's by more than
    :data:`MAX_DRIFT_LOG_SCALE_SHIFT` (or turns non-finite) has diverged: it is discarded, ``fit`` keeps the
    constant scale and ``info["scale_drift_diverged"]`` is set.
    """
    A, configuration, n = fit.A, fit.configuration, fit.n
    if n < ROBUST_MIN_PAIRS:
        return
    C_use = fit.camera_poses_used()
    inl = fit.inl
    # the per-pair log-scale offsets the residuals ask for follow a drifting scale from pair to pair
    Cp = predict(A, fit.X, fit.Y, configuration)
    _, G = pm.pair_jacobians(Cp, fit.X, configuration)
    Q = vc.components(Cp, G, fit.U, fit.shapes)
    d = scale_offsets(residuals(C_use, Cp, fit.ls), Cp, vc.whitener(vc.sigma(fit.theta, Q))[1], inl)
    fit.info["scale_offset_lag1"] = lag_s = lag1_of(d)
    if not (force or lag_s > SCALE_DRIFT_LAG1):
        return
    q = np.zeros(n)
    idx = np.flatnonzero(inl)
    sigma_d = max(float(np.std(np.diff(d))) / 2.0, 1e-6)
    share_prev = None
    X, Y, ls, theta = fit.X, fit.Y, fit.ls, fit.theta
    drift_cov = None
    for _ in range(_SCALE_DRIFT_ROUNDS):
        # the camera components again, from the residuals that the fitted offsets leave (the constant
        # scale's residuals carry the drift); then the fit; then the step of the walk (EM)
        Cp = predict(A, X, Y, configuration)
        _, G = pm.pair_jacobians(Cp, X, configuration)
        Q = vc.components(Cp, G, fit.U, fit.shapes)
        r = residuals(C_use, Cp, ls, ls, q)
        if known is None and 6 * int(inl.sum()) - 12 >= 2 * theta.size:
            extra = None
            if drift_cov is not None:
                # the offsets' posterior variance along each pair's scale direction (EM): without it the
                # offsets would take the depth noise with them
                g = np.exp(q)[:, None] * pm.scale_jacobian(Cp)
                var_q = np.r_[0.0, drift_cov.var_q]
                extra = (var_q[:, None, None] * g[:, :, None] * g[:, None, :])[inl]
            try:
                theta = np.maximum(vc.estimate_components(r[inl], vc.pairs(Q, idx, n), fit.w[inl], theta,
                                                          extra=extra), vc.VAR_FLOOR)  # fmt: skip
            except np.linalg.LinAlgError:
                pass
        share = vc.shares(theta, Q, inl)
        Linv = vc.whitener(vc.sigma(theta, Q))[0]
        X, Y, ls, q, drift_cov = solve_scale_drift(A, C_use, X, Y, ls, q, Linv, np.sqrt(fit.w) * inl,
                                                   configuration, sigma_d)  # fmt: skip
        if diverged(X, Y, ls, q, inl, fit.ls):
            fit.info["scale_drift_diverged"] = True
            return
        new_sd = math.sqrt(max(drift_variance(q, drift_cov), 1e-24))
        settled = (abs(new_sd - sigma_d) <= 0.05 * sigma_d and share_prev is not None
                   and float(np.max(np.abs(share - share_prev))) <= vc.SETTLE_SHARE)  # fmt: skip
        sigma_d, share_prev = new_sd, share
        if settled:
            break
    fit.X, fit.Y, fit.ls, fit.theta, fit.q, fit.drift_cov = X, Y, ls, theta, q, drift_cov
    # the components came from the plain likelihood with the offsets' E-step: corrected by the loss of degrees
    # of freedom at the end
    fit.restricted = False
    fit.info["scale_drift_std"] = sigma_d
    fit.info["scale_offsets"] = q.copy()
