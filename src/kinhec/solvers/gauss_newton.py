"""Least-squares minimisers on small dense problems: Gauss-Newton steps damped only where one fails, and MINPACK.

Both minimise ``|fun(p)|^2`` over ``p`` (n,) from ``p = 0``, ``fun`` a residual
vector (m,) and ``jac`` its Jacobian (m, n): the caller parametrises its
unknowns as a perturbation of a start (a closed-form estimate, the previous
round's fit).  :func:`damped_gauss_newton` is the first choice from a start
near the minimum (most solves take two or three evaluations);
:func:`levenberg_marquardt` is MINPACK's trust region, which it hands over to
when its own steps do not settle.  ``he_ml``'s weighted solves and the
published baselines' twist refinement (:func:`kinhec.solvers.refine.refine_twist`)
use them.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["damped_gauss_newton", "levenberg_marquardt"]

_LEASTSQ = []


def _leastsq():
    """``scipy.optimize.leastsq`` and whether ``least_squares``' default scaling is MINPACK's own.

    ``scipy.optimize`` is imported once (here: importing the registry stays light); the function is looked up
    in it at every call.
    """
    if not _LEASTSQ:
        import scipy
        import scipy.optimize

        # least_squares' default scaling: by the Jacobian's column norms (MINPACK's own, diag=None) from SciPy
        # 1.16 on, unit scales before
        major, minor = (int(v) for v in scipy.__version__.split(".")[:2])
        _LEASTSQ.extend([scipy.optimize, (major, minor) >= (1, 16)])
    return _LEASTSQ[0].leastsq, _LEASTSQ[1]


def levenberg_marquardt(fun, jac, n: int, tol: float, max_nfev: int, cost_tol: float = 0.0) -> np.ndarray:
    """The minimiser (n,) of ``|fun(p)|^2`` from ``p = 0`` by MINPACK's Levenberg-Marquardt (``lmder``).

    ``jac(p)`` is the Jacobian (m, n) of ``fun(p)`` (m,); ``tol`` is the relative tolerance on the sum of squares,
    on the step and on the gradient's angle (``ftol``, ``xtol``, ``gtol``), with at most ``max_nfev``
    evaluations of ``fun``.  The same iterations as ``scipy.optimize.least_squares(method="lm")`` with these
    settings and its default scaling, through :func:`scipy.optimize.leastsq`, which costs less per call (no
    wrapping of the functions, no Jacobian at the solution); the last point of each function is remembered, so
    that ``leastsq``'s shape checks at ``p = 0`` are not evaluated twice.  ``cost_tol`` > 0 (for whitened residuals,
    whose sum of squares is a chi-square) loosens ``ftol`` to ``cost_tol`` over the sum of squares at ``p = 0``:
    the iterations stop once a step lowers it, and the linear model predicts it to lower it, by about
    ``cost_tol`` or less, where the minimiser moves by about ``sqrt(2 cost_tol)`` of its standard errors.

    Raises
    ------
    ValueError
        The residuals are not finite at ``p = 0`` (as ``least_squares`` does).
    """
    leastsq, diag_default = _leastsq()
    def remembered(f):
        last = [None, None]

        def g(p):
            key = p.tobytes()
            if last[0] != key:
                last[0], last[1] = key, f(p)
            return last[1]

        return g

    fun_r = remembered(fun)
    p0 = np.zeros(n)
    f0 = fun_r(p0)
    if not np.all(np.isfinite(f0)):
        raise ValueError("Residuals are not finite in the initial point.")
    ftol = max(tol, cost_tol / max(float(f0 @ f0), 1e-300)) if cost_tol > 0 else tol
    diag = None if diag_default else np.ones(n)
    out = leastsq(fun_r, p0, Dfun=remembered(jac), full_output=True, col_deriv=False, ftol=ftol, xtol=tol, gtol=tol,
                  maxfev=max_nfev, factor=100.0, diag=diag)  # fmt: skip
    return out[0]


def damped_gauss_newton(fun, jac, n: int, cost_tol: float, max_nfev: int) -> np.ndarray:
    """The minimiser (n,) of ``|fun(p)|^2`` from ``p = 0`` by Gauss-Newton steps, damped only where one fails.

    For whitened residuals (their sum of squares a chi-square) from a start near the minimum, as every
    reweighting round of ``he_ml`` has: a full Gauss-Newton step is tried first; a step that does not lower the
    sum of squares is taken again with Marquardt's damping (``H + mu diag(H)``, ``mu`` from 1e-3 up by tens), and
    the damping is taken off again after a step that succeeds.  The iterations stop when the linear model
    predicts that the next step would lower the sum of squares by ``cost_tol`` or less (the minimiser is then
    within about ``sqrt(2 cost_tol)`` of its standard errors) or when an accepted step lowered it by that little.
    ``jac(p)`` is the Jacobian (m, n) of ``fun(p)`` (m,).

    A start far from the minimum (a closed-form monocular scale a hundred times off, on a motion that hardly
    translates) can exhaust ``max_nfev`` evaluations of ``fun`` before either test stops the iterations: full
    steps that fail alternate with damped ones that gain little.  MINPACK's trust region walks such a valley
    faster, so it continues from where the steps stopped, with ``max_nfev`` evaluations of its own
    (:func:`levenberg_marquardt`, stopped at ``cost_tol``).  Without it a small-tier recording whose bound is
    0.5 mm kept a scale of 10.6 and an error of 119 mm.  From a start near the minimum MINPACK reaches the same
    minimiser but spends about twice the evaluations establishing convergence through its relative tests, which
    is why it is not the first choice.

    Raises
    ------
    ValueError
        The residuals are not finite at ``p = 0``.
    """
    p = np.zeros(n)
    f = fun(p)
    if not np.all(np.isfinite(f)):
        raise ValueError("Residuals are not finite in the initial point.")
    cost = float(f @ f)
    J = jac(p)
    H, g = J.T @ J, J.T @ f
    mu = 0.0
    nfev = 1
    converged = False
    while nfev < max_nfev:
        d = np.diagonal(H)
        floor = 1e-12 * max(float(d.max()), 1e-300)
        try:
            step = np.linalg.solve(H + np.diag(mu * d + floor), -g)
        except np.linalg.LinAlgError:
            break
        predicted = -float(2.0 * (g @ step) + step @ H @ step)
        if not predicted > cost_tol:
            converged = True
            break  # the model promises no more than cost_tol (or nothing: a stationary point)
        p1 = p + step
        f1 = fun(p1)
        nfev += 1
        cost1 = float(f1 @ f1) if np.all(np.isfinite(f1)) else math.inf
        if cost1 <= cost:
            gained = cost - cost1
            p, f, cost = p1, f1, cost1
            if gained <= cost_tol:
                converged = True
                break
            J = jac(p)
            H, g = J.T @ J, J.T @ f
            mu = 0.0 if mu <= 1e-3 else mu / 10.0
        else:
            mu = 1e-3 if mu == 0.0 else mu * 10.0
            if mu > 1e12:
                break
    if not converged:
        p = p + levenberg_marquardt(lambda q: fun(p + q), lambda q: jac(p + q), n, 1e-8, max_nfev, cost_tol=cost_tol)
    return p
