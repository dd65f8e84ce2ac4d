"""Step 6 of ``he_ml``: the covariance of the estimate.

The inverse of the whitened normal matrix at the solution, with the expected
information of the Student-t weights and the variance components corrected
for the ``P`` fitted parameters.  A drifting scale's offsets are marginalised
out; when ``X`` came from the motions, the ``X`` and ``log s`` block is that
fit's and the ``Y`` block the pair model's, with no cross terms.
"""

from __future__ import annotations

import numpy as np

from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml_stages import variance_components as vc
from kinhec.solvers.he_ml_stages.model import fitted_jacobian, predict, quad, residuals


def final_covariance(fit, known: dict | None) -> np.ndarray:
    """Covariance (12, 12) or (13, 13) of ``(dx, dy[, log s])`` of ``fit`` (a :class:`~.state.FitState` at its
    solution) [rad, m].

    Also sets ``fit.chi2`` (every pair's Mahalanobis chi-square at the solution) and, when the noise levels were
    taken from the residual spreads (not the restricted estimate, ``fit.restricted``), scales ``fit.theta`` by
    the loss of degrees of freedom to the fit.
    """
    X, Y, ls, q, inl = fit.X, fit.Y, fit.ls, fit.q, fit.inl
    P = 13 if fit.with_scale else 12
    dof_scale = 1.0
    if known is None and not fit.restricted:
        # components from the residual spreads: the fitted parameters took P of the degrees of freedom
        n_obs = 6.0 * inl.sum()
        dof_scale = n_obs / max(n_obs - P, 1.0)
        fit.theta = fit.theta * dof_scale
    s = fit.settled_at
    if s is not None and s[0] is X and s[1] is Y and s[2] == ls and q is None:
        # the fit has not moved since the weights settled: that round's quantities are the final ones (the
        # inverse covariances scaled by the correction of the components)
        Cp, J, G, Q, r, Sinv = s[3:]
        Sinv = Sinv / dof_scale
    else:
        Cp = predict(fit.A, X, Y, fit.configuration)
        J, G = pm.pair_jacobians(Cp, X, fit.configuration)
        Q = vc.components(Cp, G, fit.U, fit.shapes)
        r = residuals(fit.camera_poses_used(), Cp, ls, ls, q)
        Sinv = vc.whitener(vc.sigma(fit.theta, Q))[1]
    fit.chi2 = quad(r, Sinv)
    J = fitted_jacobian(Cp, J, fit.with_scale)
    # expected information of the weighted (Student-t) likelihood: (nu + 6) / (nu + 8) per pair
    nu = fit.nu
    f_nu = 1.0 if not np.isfinite(nu) else (nu + 6.0) / (nu + 8.0)
    Ji = J[inl]
    Hn = f_nu * (np.swapaxes(Ji, 1, 2) @ Sinv[inl] @ Ji).sum(axis=0)
    cov = np.linalg.pinv(Hn, hermitian=True)
    if fit.drift_cov is not None:
        # the per-pair offsets of a drifting scale are nuisance parameters: their block is marginalised out
        cov = fit.drift_cov.cov
    if fit.motion_cov is not None:
        # X (and log s) from the motions; Y from the pair model given X, no cross terms
        motion = fit.motion_cov
        cov_y = np.linalg.pinv(Hn[6:12, 6:12], hermitian=True)
        cov = np.zeros_like(cov)
        cov[:6, :6] = motion[:6, :6]
        cov[6:12, 6:12] = cov_y
        if fit.with_scale:
            cov[12, 12] = motion[6, 6]
            cov[:6, 12] = cov[12, :6] = motion[:6, 6]
    return cov
