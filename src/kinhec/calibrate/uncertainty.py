"""Uncertainty beyond the textbook ``(J^T J)^-1``: residuals correlated in pair order, a small-sample gate.

Correlated residuals
--------------------
``(J^T S^-1 J)^-1`` assumes that the residuals of different pairs are
independent.  When they are not -- a pose drifts slowly (visual odometry, a
mocap body that slides), the robot's errors vary smoothly along its path, or
pairs come from consecutive video frames -- the same information is counted
several times and the covariance is too small.

To first order the estimate moves by ``-sum_i v_i`` with ``v_i = H^-1 G_i^T
z_i`` the influence of pair ``i`` (``z_i`` its whitened residual, ``G_i`` its
whitened Jacobian, ``H = sum_i G_i^T G_i`` plus the priors' information).
The model variance of parameter ``a`` is ``(H^-1)_aa``; the data say
``tau_a sum_i v_ia^2``, where ``sum_i v_ia^2`` is the sandwich (White 1980:
it also catches pairs noisier than the pooled noise model says) and
``tau_a = 1 + 2 sum_k rho_a(k)`` the integrated autocorrelation time of the
sequence ``v_ia`` *in the order of the pairs* (time order for stamped
streams, row order otherwise: the same rule for both).  ``tau`` comes from
Geyer's (1992) initial monotone sequence estimator: the sums of
autocorrelations at lags ``2k, 2k + 1`` are added while they stay positive
and decreasing, which follows a slowly decaying correlation -- even the
random walk of a drifting odometry -- as far as the data show it, where a
fixed-bandwidth kernel would stop short.  Each parameter's variance is
multiplied by

    f_a = max(1, tau_a sum_i v_ia^2 / (H^-1)_aa  x  (n - P/6) / (n - P tau_z / 6))

(the covariance becomes ``D C D`` with ``D = diag(sqrt(f))``, correlations
kept).  ``tau`` and the last factor are used when the pooled lag-one
correlation of the whitened residuals is significant (above
:data:`SIGNIFICANT_RHO` over ``sqrt(6 n)``); otherwise they are 1 and only
the sandwich remains (the autocorrelation estimators are noisy, and a floor
at 1 would turn their noise into a bias).  The last factor counts the noise the fit absorbs: with residuals
correlated over ``tau_z`` pairs (the longest of their six components) each
unknown takes up ``tau_z`` pairs' worth of noise, not one, and the noise
covariance estimated from the residuals comes out that much too small.
``covariance_inflation`` reports the largest factor of ``X``.  On generated
AR(1) camera noise (200 pairs) the factors match the variance of the
estimate over repeated draws for a lag-one correlation up to about 0.5 and
reach about 0.8 of it at 0.9 (ten independent stretches): beyond, the
recording is close to the drift that :mod:`kinhec.calibrate.observability`
refuses.

Outlier gate with an estimated noise covariance
-----------------------------------------------
A pair's Mahalanobis distance under a 6x6 covariance *estimated* from ``nu``
degrees of freedom is not chi-square distributed but Hotelling's: the 99.99 %
chi-square gate (27.9) rejects good pairs by the dozen when ``nu`` is a few
tens (as at 20 stations), the covariance then shrinks on the survivors, and
the fit collapses onto a minority with error bars far too small.  The gate
here compares each pair with the distribution it has: an inlier by its
leave-one-out (externally studentised) distance, an excluded pair by its
predictive distance, both with the pair's leverage ``h_i = trace(G_i C
G_i^T) / 6`` (``C = H^-1`` over the inliers):

* inlier: ``u = |z_i|^2 / (1 - h_i)``, ``T = (nu - 1) u / (nu - u)``,
  distributed as ``p (nu - 1) / (nu - p) F(p, nu - p)`` (judged at a
  hundred times smaller tail, :data:`INLIER_LEVEL_RATIO`);
* excluded: ``T = |z_i|^2 / (1 + h_i)``, distributed as
  ``p nu / (nu - p + 1) F(p, nu - p + 1)``;

with ``p = 6`` and the same 99.99 % quantile.  For large ``nu`` both tend to
the chi-square gate.

Below the degrees of freedom a 6x6 covariance needs (20, where the fit's
noise model is diagonal too), Hotelling's distribution is too wide to judge
anything -- at ``nu <= 7`` it cannot judge at all, and a gate that then keeps
every pair re-admits the gross outliers the first round removed (8 clean
stations and 2 gross outliers alternated between the two labellings and
ended with ``X`` 24 mm off).  :func:`gate_diagonal` judges each residual
component on its own instead, with the same leave-one-out and predictive
forms for one dimension (``F(1, nu_k - 1)`` and ``F(1, nu_k)``), where each
component's variance has its own degrees of freedom ``nu_k = sum_i (1 -
h_ik)`` over the inliers (with few pairs the unknowns absorb some components
far more than others), the level split over the six components; a component
with ``nu_k <= 2`` judges nothing, and with none left the labels stay.

A noise covariance estimated from few pairs
-------------------------------------------
The full 6x6 noise covariance ``S`` has 21 free entries; from a few tens of
degrees of freedom its small-sample factor makes ``(J^T S^-1 J)^-1`` right
on average, but a draw of ``S`` that is too small in a direction that
matters gives a covariance too small there: at 25 stations the NEES of the
unknown that is not the camera's mount was past chi-square's 99.9 % quantile
in 3.5 % of recordings (``benchmarks/covariance_tails.py``).  The fit keeps
its weights ``S^-1`` (the correlations of real residuals are real: dropping
them moved real results by up to 12 mm), and its covariance is the one of the
estimate those weights give, the sandwich ``C M C`` with ``C = (J^T S^-1
J)^-1`` and ``M = J^T S^-1 S~ S^-1 J``, where ``S~`` is the noise covariance
with its correlations shrunk toward zero by their own sampling error
(:func:`shrunk_noise`; Schafer and Strimmer 2005): the directions where
``S`` claims more than its degrees of freedom support get the variance the
shrunk estimate gives them.  The small-sample factor mixes the full model's
``dof / (dof - 7)`` and the diagonal one's ``dof / (dof - 2)`` by the same
weight.  With many pairs the weight tends to 0 and the covariance to
``C``.

References
----------
J. Schafer and K. Strimmer, "A shrinkage approach to large-scale covariance matrix estimation and implications for
functional genomics," *Statistical Applications in Genetics and Molecular Biology* 4(1), 2005 (target D).
C. J. Geyer, "Practical Markov chain Monte Carlo," *Statistical Science*
7(4), 1992 (initial monotone sequence estimator).  H. White, "A
heteroskedasticity-consistent covariance matrix estimator and a direct test
for heteroskedasticity," *Econometrica* 48(4), 1980.  H. Hotelling, "The generalization of Student's ratio," *Ann.
Math. Statist.* 2(3), 1931.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.util.distributions import f_ppf

__all__ = ["Inflation", "widen", "long_run_inflation", "autocorrelation_time", "gate", "gate_diagonal", "GATE_LEVEL",
           "SIGNIFICANT_RHO", "shrunk_noise"]

#: Probability of the gate: a pair whose distance exceeds this quantile of its distribution is an outlier.
GATE_LEVEL = 0.9999
#: An inlier is judged at a tail this many times smaller: its leave-one-out distance rises steeply near its bound
#: (``u -> nu``) where the approximations (one leverage per pair, effective degrees of freedom) are least exact,
#: and the outliers that matter were left out by the first, robust round and are judged by the predictive test.
INLIER_LEVEL_RATIO = 100.0
#: The residuals count as correlated from pair to pair when their pooled lag-one correlation exceeds this many
#: standard deviations of its value for independent residuals (``1 / sqrt(6 n)``).
SIGNIFICANT_RHO = 3.0


@dataclass(frozen=True)
class Inflation:
    """Result of :func:`long_run_inflation`.

    Attributes
    ----------
    factors : ndarray, shape (P,)
        Variance factor ``f_a >= 1`` of every parameter (its standard deviation times ``sqrt(f_a)``).
    tau : ndarray, shape (P,)
        Integrated autocorrelation time of every parameter's influence sequence (1: independent pairs).
    rho : float
        Lag-one autocorrelation of the whitened residuals, pooled over their six components.
    residual_tau : ndarray, shape (k,)
        Integrated autocorrelation time of each whitened residual component [pairs].
    n_pairs : int
        Pairs in the sequence.
    """

    factors: np.ndarray
    tau: np.ndarray
    rho: float
    residual_tau: np.ndarray
    n_pairs: int

    @property
    def effective_pairs(self) -> float:
        """Pairs over the longest residual autocorrelation time: the number of independent stretches of data."""
        return float(self.n_pairs / max(float(self.residual_tau.max(initial=1.0)), 1.0))

    def apply(self, cov: np.ndarray) -> np.ndarray:
        """``D cov D`` with ``D = diag(sqrt(factors))``."""
        d = np.sqrt(self.factors)
        return cov * np.outer(d, d)


def lag_one_correlation(z: np.ndarray) -> float:
    """Pooled lag-one autocorrelation of the rows of ``z`` (n, k) in their order (0 for fewer than 3 rows)."""
    if z.shape[0] < 3:
        return 0.0
    zc = z - z.mean(axis=0)
    den = float((zc * zc).sum())
    return float((zc[1:] * zc[:-1]).sum() / den) if den > 0 else 0.0


def autocorrelation_time(v: np.ndarray) -> np.ndarray:
    """Integrated autocorrelation time of each column of ``v`` (n, P) in row order, at least 1.

    Geyer's initial monotone sequence estimator on the sample autocorrelations, corrected for their bias: the
    sample mean (or, for influences, the fit) removes about ``tau / n`` from every autocorrelation, so the sum up
    to the truncation lag ``L`` comes out short by about ``2 L tau / n``; ``tau = tau_raw / (1 - 2 L / n)``
    (held below ``n / 2``).
    """
    n, P = v.shape
    if n < 4:
        return np.ones(P)
    x = v - v.mean(axis=0)
    f = np.fft.rfft(x, 2 * n, axis=0)
    acov = np.fft.irfft(f * np.conj(f), axis=0)[:n] / n
    c0 = acov[0]
    ok = c0 > 0
    rho = np.where(ok, acov / np.where(ok, c0, 1.0), 0.0)
    m = (n - 1) // 2
    pairs = rho[0 : 2 * m : 2] + rho[1 : 2 * m + 1 : 2]  # Gamma_k = rho(2k) + rho(2k + 1), (m, P)
    positive = np.cumprod(pairs > 0, axis=0).astype(bool)  # up to the first non-positive pair
    mono = np.minimum.accumulate(np.where(positive, pairs, 0.0), axis=0)
    tau = -1.0 + 2.0 * mono.sum(axis=0)
    lag = 2.0 * positive.sum(axis=0)  # truncation lag L
    tau = tau / np.maximum(1.0 - 2.0 * lag / n, 0.25)
    return np.where(ok, np.clip(tau, 1.0, n / 2.0), 1.0)


def long_run_inflation(G: np.ndarray, z: np.ndarray, prior_information: np.ndarray | None = None) -> Inflation:
    """Variance factors of an estimate from pairs whose residuals may correlate in pair order.

    Parameters
    ----------
    G : ndarray, shape (n, k, P)
        Whitened Jacobian of every pair's residual, pairs in their order (time or row).
    z : ndarray, shape (n, k)
        Whitened residuals at the estimate, same order.
    prior_information : ndarray, shape (P, P), optional
        Information added by priors (it enters ``H`` but has no residual sequence).

    Returns
    -------
    Inflation
    """
    n, k, P = G.shape
    rho = lag_one_correlation(z)
    if n < 4:
        return Inflation(np.ones(P), np.ones(P), rho, np.ones(k), n)
    H = np.einsum("nkp,nkq->pq", G, G)
    if prior_information is not None:
        H = H + prior_information
    try:
        Hinv = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        return Inflation(np.ones(P), np.ones(P), rho, autocorrelation_time(z), n)
    tau_z = autocorrelation_time(z)
    v = np.einsum("nkp,nk->np", G, z) @ Hinv  # influences (H symmetric)
    model = np.diag(Hinv)
    sandwich = np.where(model > 0, (v * v).sum(axis=0) / np.where(model > 0, model, 1.0), 1.0)
    if rho < SIGNIFICANT_RHO / np.sqrt(z.size):
        # no sign of correlation from pair to pair: the sandwich alone (the autocorrelation estimators are noisy,
        # and a floor at 1 would turn their noise into a bias)
        return Inflation(np.maximum(sandwich, 1.0), np.ones(P), rho, tau_z, n)
    tau = autocorrelation_time(v)
    f = tau * sandwich
    # the fit absorbs a share of correlated noise that grows with its autocorrelation time: the noise covariance
    # (estimated with the divisor n - P/6) is short by (n - P/6) / (n - P tau / 6)
    t = float(tau_z.max())
    absorbed = (n - P / 6.0) / max(n - P * t / 6.0, 0.5 * (n - P / 6.0))
    return Inflation(np.maximum(f * absorbed, 1.0), tau, rho, tau_z, n)


def gate(z: np.ndarray, G: np.ndarray, inliers: np.ndarray, nu: float, level: float = GATE_LEVEL) -> np.ndarray:
    """Inlier labels of every pair from its studentised distance (see the module documentation).

    Parameters
    ----------
    z : ndarray, shape (n, p)
        Residuals of every pair whitened by the covariance estimated from the current inliers.
    G : ndarray, shape (n, p, P)
        Their whitened Jacobians.
    inliers : ndarray of bool, shape (n,)
        Current labels (the pairs the covariance and the fit came from).
    nu : float
        Degrees of freedom of the covariance estimate.
    level : float
        Probability of the gate.

    Returns
    -------
    ndarray of bool, shape (n,)
        New labels.  With ``nu <= p + 1`` the covariance cannot judge a pair and every pair is kept.
    """

    n, p = z.shape
    if nu <= p + 1 or inliers.sum() < 2:
        return np.ones(n, dtype=bool)
    Gi = G[inliers]
    try:
        C = np.linalg.inv(np.einsum("nkp,nkq->pq", Gi, Gi))
    except np.linalg.LinAlgError:
        C = np.linalg.pinv(np.einsum("nkp,nkq->pq", Gi, Gi))
    h = np.einsum("nkp,pq,nkq->n", G, C, G) / p
    d2 = (z * z).sum(axis=1)
    out = np.zeros(n, dtype=bool)
    # inliers: leave-one-out distance
    u = d2[inliers] / np.maximum(1.0 - h[inliers], 1e-6)
    t_in = np.where(u < nu, (nu - 1.0) * u / np.maximum(nu - u, 1e-12), np.inf)
    q_in = p * (nu - 1.0) / (nu - p) * f_ppf(1.0 - (1.0 - level) / INLIER_LEVEL_RATIO, p, nu - p)
    out[inliers] = t_in <= q_in
    # excluded pairs: predictive distance
    ex = ~inliers
    t_ex = d2[ex] / (1.0 + h[ex])
    q_ex = p * nu / (nu - p + 1.0) * f_ppf(level, p, nu - p + 1.0)
    out[ex] = t_ex <= q_ex
    return out


def gate_diagonal(r: np.ndarray, G: np.ndarray, inliers: np.ndarray, nu: float, level: float = GATE_LEVEL) -> np.ndarray:
    """Inlier labels from each residual component studentised on its own (see the module documentation).

    Parameters
    ----------
    r : ndarray, shape (n, p)
        Residuals of every pair (not whitened).
    G : ndarray, shape (n, p, P)
        Their Jacobians (not whitened).
    inliers : ndarray of bool, shape (n,)
        Current labels.
    nu : float
        Degrees of freedom of the variances estimated from the inliers.
    level : float
        Probability of the gate, split over the ``p`` components.

    Returns
    -------
    ndarray of bool, shape (n,)
        New labels; the current ones where ``nu <= 2`` (nothing can be judged).
    """
    from scipy import special

    n, p = r.shape
    if nu <= 2.0 or inliers.sum() < 2:
        return inliers.copy()
    # each component's variance from its own degrees of freedom, the inliers' sum of (1 - leverage): with few
    # pairs the unknowns absorb some components far more than others (twice: the leverages depend on the scaling)
    nu_k = np.full(p, float(nu))
    for _ in range(2):
        var = np.maximum((r[inliers] ** 2).sum(axis=0) / nu_k, np.finfo(float).tiny)
        w = 1.0 / np.sqrt(var)
        Gw = G * w[None, :, None]
        Gi = Gw[inliers]
        try:
            C = np.linalg.inv(np.einsum("nkp,nkq->pq", Gi, Gi))
        except np.linalg.LinAlgError:
            C = np.linalg.pinv(np.einsum("nkp,nkq->pq", Gi, Gi))
        h = np.clip(np.einsum("nkp,pq,nkq->nk", Gw, C, Gw), 0.0, None)  # leverage of each component
        nu_k = np.maximum((1.0 - np.minimum(h[inliers], 1.0)).sum(axis=0), 1e-3)
    judged = nu_k > 2.0  # a component from two degrees of freedom or fewer judges nothing
    if not judged.any():
        return inliers.copy()
    nu_k = np.where(judged, nu_k, 3.0)
    z = r * w
    tail = (1.0 - level) / p
    out = np.zeros(n, dtype=bool)
    zi, hi = z[inliers], h[inliers]
    u = zi**2 / np.maximum(1.0 - hi, 1e-6)
    t_in = np.where(u < nu_k, (nu_k - 1.0) * u / np.maximum(nu_k - u, 1e-12), np.inf)
    q_in = special.fdtri(1.0, nu_k - 1.0, 1.0 - tail / INLIER_LEVEL_RATIO)
    out[inliers] = ((t_in <= q_in) | ~judged).all(axis=1)
    ex = ~inliers
    t_ex = z[ex] ** 2 / (1.0 + h[ex])
    # an excluded pair is a prediction from the inliers' fit: its residual has variance sigma^2 (1 + h), independent
    # of the variance estimated from the inliers on nu_k degrees of freedom, so t_ex ~ F(1, nu_k)
    q_ex = special.fdtri(1.0, nu_k, 1.0 - tail)
    out[ex] = ((t_ex <= q_ex) | ~judged).all(axis=1)
    return out


def shrunk_noise(R: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, float]:
    """The noise covariance ``S`` (6, 6) of residuals ``R`` (m, 6) with its correlations shrunk toward 0, and the weight.

    Schafer and Strimmer's shrinkage toward the diagonal (their target D): the variances stay, every correlation
    ``rho_ij`` becomes ``(1 - lam) rho_ij`` with ``lam = sum Var(rho_ij) / sum rho_ij^2`` over ``i != j`` (clipped to
    ``[0, 1]``), ``Var(rho_ij)`` estimated from the spread of the products ``x_ki x_kj`` of the residuals in units of
    their standard deviations, ``m / (m - 1)^3 sum_k (x_ki x_kj - mean)^2``.  Correlations that their sampling error
    explains (independent components, few pairs) are shrunk nearly away; strong ones from many pairs are kept.
    """
    sd = np.sqrt(np.maximum(np.diag(S), 1e-300))
    x = R / sd
    m = x.shape[0]
    w = x[:, :, None] * x[:, None, :]
    var = m / max(m - 1.0, 1.0) ** 3 * ((w - w.mean(axis=0)) ** 2).sum(axis=0)
    rho = S / np.outer(sd, sd)
    off = ~np.eye(S.shape[0], dtype=bool)
    lam = float(np.clip(var[off].sum() / max(float((rho[off] ** 2).sum()), 1e-300), 0.0, 1.0))
    return S * np.where(off, 1.0 - lam, 1.0), lam


def widen(cov: np.ndarray, k: int, extra_var: float) -> np.ndarray:
    """``cov`` with parameter ``k``'s variance grown by ``extra_var``, the others following it.

    The others keep their distribution given parameter ``k`` (their regression on it, ``cov[:, k] / cov[k, k]``,
    and what is left about it): ``cov + extra_var g g^T`` with ``g = cov[:, k] / cov[k, k]``, the consider
    covariance of an error of variance ``extra_var`` in ``k`` that the fit did not see.
    """
    ckk = float(cov[k, k])
    if not extra_var > 0.0 or not ckk > 0.0:
        return cov
    g = cov[:, k] / ckk
    return cov + extra_var * np.outer(g, g)
