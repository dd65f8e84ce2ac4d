"""Steps 3 and 4 of ``he_ml``: iteratively reweighted maximum likelihood, and the constant monocular scale.

Every round: the variance components on the current inliers
(:mod:`.variance_components`), whitened residuals, a weighted nonlinear least
squares over right perturbations of ``X`` and ``Y`` (and ``log s``) with the
analytic Jacobian (:func:`solve_wls`); then the Mahalanobis chi-square of every
pair decides inliers (gate at the 99.9 % quantile of chi2(6)), and a pair
whose mirrored pose passes the gate is repaired.  Heavy tails: the Student-t
degrees of freedom (3, 5, 10 or Gaussian) with the highest likelihood set the
weights ``(nu + 6) / (nu + d_i^2)``.  The rounds stop when inliers, mirrors,
degrees of freedom and the components' shares of the variance settle.

With ``scale="auto"`` a monocular scale is kept only while it differs from 1
by more than three standard deviations (and 5 %).
"""

from __future__ import annotations

import math

import numpy as np

from kinhec.geometry import se3
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml_stages import variance_components as vc
from kinhec.solvers.gauss_newton import damped_gauss_newton
from kinhec.solvers.he_ml_stages.model import (WLS_COST_TOL, apply_step, fitted_jacobian, mv, predict, project_so3, quad,
                                               residuals_from_inverse)

#: 99.9 % quantile of chi2 with 6 degrees of freedom: the inlier gate of a pair.
CHI2_GATE = 22.4577
_NU_CANDIDATES = (3.0, 5.0, 10.0, math.inf)
#: |log s| below which a monocular scale is never kept (a scale within about 5 % of 1 is taken as metric).
_SCALE_MIN = 0.05
_MINUS_I6 = -np.eye(6)


def solve_wls(A, Cm, X0, Y0, ls0, Linv, sw, configuration, with_scale, jacobian: bool = False):
    """One weighted nonlinear least-squares solve of the pair model.

    ``Linv`` (n, 6, 6) whitens the residuals, ``sw`` (n,) are the square roots of the weights (0 for
    outliers).  Returns ``X``, ``Y``, ``log s`` and, with ``jacobian``, the whitened Jacobian (6 n, 12 or 13) at
    the solution (else None).  Damped Gauss-Newton from ``(X0, Y0, ls0)`` (:func:`kinhec.solvers.gauss_newton.damped_gauss_newton`),
    stopped at :data:`.model.WLS_COST_TOL`.
    """
    P = 13 if with_scale else 12
    eih = configuration == "eye_in_hand"
    A_inv = None if eih else se3.invert_transform(A, check=False)
    last = {}  # the state at the last point: the Jacobian is asked for where the residual was

    def state(p):
        key = p.tobytes()
        if last.get("key") != key:
            X, Y, ls = apply_step(X0, Y0, ls0, p, with_scale)
            # the inverse of the predicted C (inv(Y) A X eye-in-hand, inv(X) inv(A) Y eye-to-hand) directly
            if eih:
                Ci = se3.invert_transform(Y, check=False) @ A @ X
            else:
                Ci = se3.invert_transform(X, check=False) @ A_inv @ Y
            last.update(key=key, state=(X, ls, Ci))
        return last["state"]

    def fun(p):
        _, ls, Ci = state(p)
        return (sw[:, None] * mv(Linv, residuals_from_inverse(Cm, Ci, ls, ls0))).ravel()

    n = A.shape[0]
    ad, eye = (slice(0, 6), slice(6, 12)) if eih else (slice(6, 12), slice(0, 6))

    def jac(p):
        _, ls, Ci = state(p)
        # minus the pair Jacobians (:func:`kinhec.solvers.pair_model.pair_jacobians`): Ad(inv C) for the
        # perturbation of the side whose inverse leads the product, -I for the other, and the scale's column
        Jr = np.zeros((n, 6, P))
        Jr[:, :, ad] = pm.adjoint(Ci)
        Jr[:, :, eye] = _MINUS_I6
        k = math.exp(ls - ls0)
        Jr[:, 3:] *= k
        if with_scale:
            Jr[:, 3:, 12] = k * Ci[:, :3, 3]  # -k d rho / d log s, the latter R^T t = -(translation of inv C)
        Jw = sw[:, None, None] * (Linv @ Jr)
        return Jw.reshape(-1, P)

    p = damped_gauss_newton(fun, jac, P, WLS_COST_TOL, 30)
    X, Y, ls = apply_step(X0, Y0, ls0, p, with_scale)
    X[:3, :3] = project_so3(X[:3, :3])
    Y[:3, :3] = project_so3(Y[:3, :3])
    return X, Y, ls, (jac(p) if jacobian else None)


def t_loglik(d2: np.ndarray, logdet: np.ndarray, nu: float) -> float:
    """Log-likelihood of 6-d Student-t (or Gaussian) residuals with squared distances ``d2``.

    Both with their whole normalising constants (``(pi nu)^(-k/2)`` and ``(2 pi)^(-k/2)``): the degrees of
    freedom are chosen by comparing these values, so a constant left out of one of them would favour the other
    by ``(k/2) log 2`` per pair (Gaussian weights even on Student-t data).
    """
    k = 6.0
    if not np.isfinite(nu):
        return float(np.sum(-0.5 * d2 - 0.5 * logdet)) - d2.size * 0.5 * k * math.log(2.0 * math.pi)
    from math import lgamma

    const = lgamma((nu + k) / 2) - lgamma(nu / 2) - 0.5 * k * math.log(math.pi * nu)
    return float(np.sum(const - 0.5 * logdet - 0.5 * (nu + k) * np.log1p(d2 / nu)))


def run_rounds(fit, known: dict | None, scale, max_rounds: int) -> None:
    """The reweighting rounds on ``fit`` (a :class:`~.state.FitState` after :func:`.variance_components.prepare`).

    Updates ``X``, ``Y``, ``ls``, ``with_scale``, the inliers and mirrors, the components, the weights
    (``nu``, ``w``), ``chi2`` and, when the weights settle before ``max_rounds``, ``settled_at`` (that
    round's quantities, which the final covariance reuses while the fit has not moved).
    """
    A, configuration, n = fit.A, fit.configuration, fit.n
    Cm, Cf = fit.Cm, fit.Cf
    fit.nu = math.inf
    fit.w = np.ones(n)
    fit.chi2 = np.zeros(n)
    prev = None
    fit.settled_at = None
    for _ in range(max_rounds):
        X, Y, ls = fit.X, fit.Y, fit.ls
        Cp = predict(A, X, Y, configuration)
        Cpi = se3.invert_transform(Cp, check=False)  # (the Jacobians and the residuals take the inverse)
        J, G = pm.pair_jacobians(None, X, configuration, C_inv=Cpi)
        if fit.sizes is not None and fit.shapes is None:
            # the shapes are taken at the first prediction: they change little with the fit, and are the costly part
            fit.shapes = vc.target_shapes(Cp, fit.sizes)
        Q = vc.components(Cp, G, fit.U, fit.shapes)
        if Cf is not None:
            # each reading and its mirror (the gate needs both)
            r0, rf = residuals_from_inverse(Cm, Cpi, ls), residuals_from_inverse(Cf, Cpi, ls)
            r = np.where(fit.repaired[:, None], rf, r0)
        else:
            r = residuals_from_inverse(Cm, Cpi, ls)
        if known is None:
            Q = vc.update(fit, r, Q, fitted_jacobian(Cp, J, fit.with_scale))
        Linv, Sinv, logdet = vc.whitener(vc.sigma(fit.theta, Q))
        if not (fit.robust and Cf is not None):  # (else from the reading and the mirror below)
            fit.chi2 = quad(r, Sinv)
        if fit.robust:
            if Cf is not None:
                # chi-square of the reading and of its mirror; the mirror only for readings outside the gate
                c0 = quad(r0, Sinv)
                cf = quad(rf, Sinv)
                fit.repaired = (c0 > CHI2_GATE) & (cf <= CHI2_GATE)
                fit.chi2 = np.where(fit.repaired, cf, c0)
                r = np.where(fit.repaired[:, None], rf, r0)
            new_inl = fit.chi2 <= CHI2_GATE
            if new_inl.sum() >= 3:
                fit.inl = new_inl
            # Student-t degrees of freedom by likelihood on the inliers
            inl = fit.inl
            lls = [t_loglik(fit.chi2[inl], logdet[inl], v) for v in _NU_CANDIDATES]
            fit.nu = _NU_CANDIDATES[int(np.argmax(lls))]
            fit.w = np.ones(n) if not np.isfinite(fit.nu) else (fit.nu + 6.0) / (fit.nu + fit.chi2)
        # shares of the total variance per component: the weights have settled when none moves by 2 %
        share = vc.shares(fit.theta, Q, fit.inl)
        state = (fit.inl.copy(), fit.repaired.copy(), fit.nu, share)
        settled = prev is not None and (np.array_equal(prev[0], state[0]) and np.array_equal(prev[1], state[1])
                                        and prev[2] == state[2] and prev[3].shape == share.shape
                                        and np.all(np.abs(prev[3] - share) <= vc.SETTLE_SHARE))  # fmt: skip
        prev = state
        if settled:
            fit.settled_at = (X, Y, ls, Cp, J, G, Q, r, Sinv)
            break
        sw = np.sqrt(fit.w) * fit.inl
        C_use = fit.camera_poses_used()
        X1, Y1, ls1, Jw = solve_wls(A, C_use, X, Y, ls, Linv, sw, configuration, fit.with_scale,
                                    jacobian=fit.with_scale and scale == "auto")
        if fit.with_scale and scale == "auto":
            var_ls = np.linalg.pinv(Jw.T @ Jw)[12, 12]
            if abs(ls1) < max(3.0 * math.sqrt(max(var_ls, 0.0)), _SCALE_MIN):
                # no significant scale: solve again with s = 1 (not counted as a round)
                fit.with_scale = False
                ls1 = 0.0
                X1, Y1, _, _ = solve_wls(A, C_use, X, Y, 0.0, Linv, sw, configuration, False)
        fit.X, fit.Y, fit.ls = X1, Y1, ls1
