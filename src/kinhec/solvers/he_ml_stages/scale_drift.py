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

import numpy as np

from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml_stages import variance_components as vc
from kinhec.solvers.he_ml_stages.model import ROBUST_MIN_PAIRS, exp6, mv, predict, project_so3, residuals

#: Lag-1 autocorrelation of the per-pair log-scale offsets above which ``scale_drift="auto"`` fits a scale
#: that drifts as a random walk (see :func:`scale_offsets`).
SCALE_DRIFT_LAG1 = 0.3
_SCALE_DRIFT_ROUNDS = 8


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


def solve_scale_drift(A, Cm, X0, Y0, ls0, q0, Linv, sw, configuration, sigma_d, max_iter: int = 30):
    """Weighted least squares over ``X``, ``Y``, ``log s`` and a log-scale offset ``q_i`` per pair.

    ``q_0 = 0`` (``s`` is the scale of the first pair); the offsets follow a random walk,
    ``q_i - q_(i-1) ~ N(0, sigma_d^2)``, which enters as prior residuals.  Levenberg-Marquardt on the dense
    normal equations (13 + n - 1 unknowns, cheap at a few hundred pairs).  Returns ``X``, ``Y``, ``ls``,
    ``q`` and the inverse of the normal matrix at the solution (covariance of ``(dx, dy, log s, q_1..)``).
    """
    n = A.shape[0]
    P = 13 + n - 1
    X, Y, ls, q = X0.copy(), Y0.copy(), ls0, q0.copy()
    D = (np.eye(n)[1:] - np.eye(n, k=-1)[1:])[:, 1:] / sigma_d  # prior rows on q_1..q_(n-1)

    def residual(X_, Y_, ls_, q_):
        Cp = predict(A, X_, Y_, configuration)
        e = sw[:, None] * mv(Linv, residuals(Cm, Cp, ls_, ls0, q_))
        return e, (np.diff(q_) / sigma_d), Cp

    def cost(e, pr):
        return float(np.sum(e * e) + pr @ pr)

    def normal(X_, ls_, q_, e, pr, Cp):
        J, _ = pm.pair_jacobians(Cp, X_, configuration)
        k = np.exp(ls_ + q_ - ls0)
        Jr = -J
        Jr[:, 3:] *= k[:, None, None]
        Js = -k[:, None] * pm.scale_jacobian(Cp)
        Jg = np.concatenate([Jr, Js[:, :, None]], axis=2)
        Jg = sw[:, None, None] * (Linv @ Jg)  # (n, 6, 13); the scale column is also each pair's q column
        wq = Jg[:, :, 12]
        H = np.zeros((P, P))
        H[:13, :13] = np.einsum("nip,niq->pq", Jg, Jg)
        H[:13, 13:] = np.einsum("nip,ni->pn", Jg[1:], wq[1:])
        H[13:, :13] = H[:13, 13:].T
        H[13:, 13:] = np.diag((wq[1:] * wq[1:]).sum(axis=1)) + D.T @ D
        g = np.zeros(P)
        g[:13] = np.einsum("nip,ni->p", Jg, e)
        g[13:] = (wq[1:] * e[1:]).sum(axis=1) + D.T @ pr
        return H, g

    e, pr, Cp = residual(X, Y, ls, q)
    f = cost(e, pr)
    lam = 1e-3
    H, g = normal(X, ls, q, e, pr, Cp)
    for _ in range(max_iter):
        dH = np.diag(np.diag(H))
        try:
            step = -np.linalg.solve(H + lam * dH, g)
        except np.linalg.LinAlgError:
            lam *= 10.0
            continue
        Xn, Yn = X @ exp6(step[:6]), Y @ exp6(step[6:12])
        lsn = ls + step[12]
        qn = q.copy()
        qn[1:] += step[13:]
        en, prn, Cpn = residual(Xn, Yn, lsn, qn)
        fn = cost(en, prn)
        if fn <= f:
            small = f - fn <= 1e-10 * max(f, 1e-300)
            X, Y, ls, q, e, pr, f = Xn, Yn, lsn, qn, en, prn, fn
            lam = max(lam / 10.0, 1e-12)
            H, g = normal(X, ls, q, e, pr, Cpn)
            if small:
                break
        else:
            lam *= 10.0
            if lam > 1e8:
                break
    X[:3, :3] = project_so3(X[:3, :3])
    Y[:3, :3] = project_so3(Y[:3, :3])
    return X, Y, ls, q, np.linalg.pinv(H, hermitian=True)


def drift_variance(q: np.ndarray, cov: np.ndarray) -> float:
    """EM update of ``sigma_d^2`` from the smoothed offsets: mean of ``(q_i - q_(i-1))^2`` plus its posterior
    variance."""
    Cq = cov[13:, 13:]  # q_1.. (q_0 = 0 is fixed)
    var = np.diag(Cq).copy()
    var[1:] = var[1:] + var[:-1] - 2.0 * np.diag(Cq, k=1)
    dq = np.diff(q)
    return float(np.mean(dq * dq + np.maximum(var, 0.0)))


def fit_drifting_scale(fit, known: dict | None, force: bool) -> None:
    """The drifting-scale stage on ``fit`` (a :class:`~.state.FitState` with a scale, after the rounds).

    Sets ``info["scale_offset_lag1"]``; when the offsets follow one another (or ``force``), fits the offsets
    with ``X``, ``Y`` and ``log s``, alternating with the camera components and the EM step of the walk,
    and sets ``q``, ``drift_cov``, ``info["scale_drift_std"]`` and ``info["scale_offsets"]``.
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
                var_q = np.r_[0.0, np.diag(drift_cov)[13:]]
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
        new_sd = math.sqrt(max(drift_variance(q, drift_cov), 1e-24))
        settled = (abs(new_sd - sigma_d) <= 0.05 * sigma_d and share_prev is not None
                   and float(np.max(np.abs(share - share_prev))) <= vc.SETTLE_SHARE)  # fmt: skip
        sigma_d, share_prev = new_sd, share
        if settled:
            break
    fit.X, fit.Y, fit.ls, fit.theta, fit.q, fit.drift_cov = X, Y, ls, theta, q, drift_cov
    fit.info["scale_drift_std"] = sigma_d
    fit.info["scale_offsets"] = q.copy()
