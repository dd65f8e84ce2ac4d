"""Robust initialisation, outlier rejection, joint refinement and uncertainty of ``A_i X = Y B_i``.

Model.  Pair ``i`` holds the hand pose ``A_i = T_base_ee`` (interpolated at the
eye stamp minus the clock offset ``delta`` when the streams are stamped) and
the eye pose ``B_i`` (``T_target_cam`` eye-in-hand, ``T_cam_marker``
eye-to-hand), whose translation is divided by the monocular scale ``s`` when
it is estimated.  The residual of a pair is the 6-vector of the disagreement
``E_i = inv(A_i X) Y B_i`` (identity when consistent)::

    r_i = (log R_E [rad], t_E [m])        expressed in the camera (marker) frame

The unknowns are perturbed as ``R_X exp(phi_X)``, ``t_X + d_X`` (and the same
for ``Y``), ``delta`` and ``log s``; the standard deviations reported are those
of ``(phi, d)`` -- rotation [rad] in the frame of the estimated transform,
then translation [m] in its parent frame.

Procedure.

1. Initial ``X`` (and ``Y``, ``s``) from every registry solver on a subsample of
   pairs (``A X = X B`` solvers on the motions between every two of them, RANSAC
   included; ``A X = Y B`` solvers on the poses); ``Y`` from ``X`` by a robust
   average of ``A_i X inv(B_i)``.  The candidate with the smallest median
   residuals on all pairs wins.
2. Noise model: the 6x6 covariance ``S`` of the residuals, first from their
   median absolute deviations, then from the inliers' sample covariance.
3. Gauss-Newton with Levenberg-Marquardt damping on the whitened residuals
   ``S^{-1/2} r_i`` of the inliers (finite-difference Jacobian, re-interpolating
   the hand stream for ``delta``).  Outliers: pairs whose Mahalanobis distance
   exceeds the 99.99 % quantile of chi-square with 6 degrees of freedom; the
   rejection and the refinement alternate until the labels stop changing.
4. Covariance ``(J^T J)^{-1}`` at the solution, times ``dof / (dof - 7)``
   (the noise covariance is estimated from the same ``dof`` residuals, which
   biases its inverse by that factor), and inflated by ``(1 + rho) / (1 - rho)``
   when the residuals of consecutive pairs are correlated (lag-one
   autocorrelation ``rho``, continuous streams).

The residual domain (the pose as the eye file states it, or its inverse) is
the one whose noise model fits best (:func:`choose_domain`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from kinhec import se3
from kinhec.errors import DegenerateMotionError, InputError, KinhecError
from kinhec.solvers import _common as c
from kinhec.solvers import registry
from kinhec.solvers.axxb_andreff import andreff

__all__ = ["Solution", "initial_candidates", "refine", "scan_offset", "choose_domain", "CHI2_6_9999", "motions_between", "robust_y"]

#: 99.99 % quantile of the chi-square distribution with 6 degrees of freedom (outlier gate).
CHI2_6_9999 = 27.856
#: Most motions handed to the RANSAC candidate.
RANSAC_MOTIONS = 120
#: Relative change of the residual standard deviations below which the noise model has settled.
NOISE_TOL = 0.01
#: Pairs used by the initial solvers (motions between every two of them).
INIT_PAIRS = 30


@dataclass
class Solution:
    """Refined unknowns with their covariance (see the module documentation for the parametrisation)."""

    X: np.ndarray
    Y: np.ndarray
    offset: float | None
    scale: float | None
    cov: np.ndarray  # (P, P) over phi_X, d_X, phi_Y, d_Y[, delta][, log s]
    residuals: np.ndarray  # (N, 6) at the solution, all pairs
    inliers: np.ndarray  # (N,) bool
    noise_cov: np.ndarray  # (6, 6) residual covariance of the inliers
    inflation: float  # covariance factor for correlated residuals
    init_solver: str
    iterations: int


# --------------------------------------------------------------------------- #
# residuals
# --------------------------------------------------------------------------- #
def residuals(A, B, X, Y, scale=None, inverse_domain: bool = True) -> np.ndarray:
    """Residuals ``(N, 6)`` of ``A_i X = Y B_i`` in the domain the eye file states its poses.

    ``inverse_domain``: predicted ``inv(A_i X) Y`` against the measured
    ``inv(B_i)`` (eye-in-hand with ``T_cam_target`` files, eye-to-hand with
    ``T_target_cam`` files); otherwise predicted ``inv(Y) A_i X`` against
    ``B_i``.  ``r = (log(R_pred R_meas^T) [rad], t_pred - t_meas [m])``: the
    rotation and translation errors of the pose as it was measured (a PnP pose's
    depth and lateral errors, or a mocap position's, stay apart and are not
    mixed through a lever arm).  The measured translation is divided by
    ``scale`` when given.
    """
    RA, tA = A[:, :3, :3], A[:, :3, 3]
    RB, tB = B[:, :3, :3], B[:, :3, 3]
    if scale is not None:
        tB = tB / scale
    RX, tX, RY, tY = X[:3, :3], X[:3, 3], Y[:3, :3], Y[:3, 3]
    RAX = RA @ RX
    tAX = RA @ tX + tA
    if inverse_domain:
        RAXt = np.swapaxes(RAX, 1, 2)
        R_pred = RAXt @ RY
        t_pred = np.einsum("nij,nj->ni", RAXt, tY - tAX)
        R_meas_t = RB  # (R_B^T)^T
        t_meas = -np.einsum("nji,nj->ni", RB, tB)
    else:
        R_pred = RY.T @ RAX
        t_pred = (tAX - tY) @ RY
        R_meas_t = np.swapaxes(RB, 1, 2)
        t_meas = tB
    rot = _log_small(R_pred @ R_meas_t)
    return np.concatenate([rot, t_pred - t_meas], axis=1)


def _log_small(R: np.ndarray) -> np.ndarray:
    """Rotation vectors of ``R`` (N, 3, 3) from the antisymmetric part and the trace (exact below ~170 deg)."""
    w = 0.5 * np.stack([R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]], axis=1)
    s = np.sqrt((w * w).sum(axis=1))
    c = 0.5 * (R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2] - 1.0)
    theta = np.arctan2(s, c)
    f = np.where(s > 1e-12, theta / np.where(s > 1e-12, s, 1.0), 1.0)
    return w * f[:, None]


def _retract(T: np.ndarray, d: np.ndarray) -> np.ndarray:
    out = T.copy()
    out[:3, :3] = c.project_to_so3(T[:3, :3] @ se3.so3_exp(d[:3]))
    out[:3, 3] = T[:3, 3] + d[3:6]
    return out


# --------------------------------------------------------------------------- #
# initialisation
# --------------------------------------------------------------------------- #
def motions_between(A, B, idx):
    """Relative motions ``inv(A_i) A_j``, ``inv(B_i) B_j`` for every ``i < j`` of ``idx``."""
    i, j = np.triu_indices(len(idx), k=1)
    i, j = idx[i], idx[j]
    Ai = se3.invert_transform(A[i], check=False)
    Bi = se3.invert_transform(B[i], check=False)
    return Ai @ A[j], Bi @ B[j]


def robust_y(A, B, X) -> np.ndarray:
    """``Y`` from ``X``: chordal mean of the rotations and median of the translations of ``A_i X inv(B_i)``."""
    Yi = A @ X @ se3.invert_transform(B, check=False)
    M = Yi[:, :3, :3].sum(axis=0)
    U, _, Vt = np.linalg.svd(M)
    R = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    return c.transform(R, np.median(Yi[:, :3, 3], axis=0))


def _score(A, B, X, Y, scale, inverse_domain=True):
    r = residuals(A, B, X, Y, scale, inverse_domain)
    return float(np.median(np.linalg.norm(r[:, :3], axis=1))), float(np.median(np.linalg.norm(r[:, 3:], axis=1)))


def initial_candidates(A, B, *, solver: str | None = None, estimate_scale: bool = False, inverse_domain: bool = True):
    """Initial ``(name, X, Y, scale)`` from the registry's solvers, best first.

    Parameters
    ----------
    A, B : ndarray, shape (N, 4, 4)
        Paired hand and eye poses (solver form), N >= 3.
    solver : str, optional
        Use only this registry solver (its name is checked).
    estimate_scale : bool
        The eye translations carry an unknown scale; it is initialised with
        ``andreff_scale``.

    Returns
    -------
    list of tuple
        ``(name, X, Y, scale)`` ordered by the median residuals on all pairs.

    Raises
    ------
    DegenerateMotionError
        No solver could determine ``X`` (e.g. every rotation axis parallel).
    """
    n = A.shape[0]
    idx = np.unique(np.linspace(0, n - 1, min(n, INIT_PAIRS)).round().astype(int))
    Am, Bm = motions_between(A, B, idx)
    # kinhec's own solvers (he_ml, the maximum-likelihood one, among them), never a user's plug-in unless named
    names = [solver] if solver is not None else [k for k in registry.BASELINES if estimate_scale or k != "andreff_scale"]
    if solver is not None:
        registry.get_solver(solver)
    s0 = None
    if estimate_scale:
        try:
            s0 = andreff(Am, Bm, unknown_scale=True)[1]  # the form unbiased by camera noise (not the registry's)
        except KinhecError:
            s0 = None
        if s0 is None or not np.isfinite(s0) or s0 <= 0:
            s0 = 1.0
    Bs = B.copy()
    if s0 is not None:
        Bs[:, :3, 3] /= s0
        Bm = Bm.copy()
        Bm[:, :3, 3] /= s0
    out, errors = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            spec = registry.SOLVERS[name]
            try:
                if spec.kind == "axxb":
                    # RANSAC's cost grows with hypotheses x motions: an evenly spread part of the motions suffices
                    step = -(-len(Am) // RANSAC_MOTIONS) if name == "ransac_park_martin" else 1
                    res = spec.run(Am[::step], Bm[::step])
                    X = res.X
                    Y = robust_y(A, Bs, X)
                else:
                    res = spec.run(A[idx], Bs[idx])
                    X, Y = res.X, res.Y
            except (KinhecError, np.linalg.LinAlgError) as exc:
                errors.append(exc)
                continue
            if not (np.isfinite(X).all() and np.isfinite(Y).all()):
                continue
            out.append((name, X, Y, s0))
    if not out:
        errors = [e if isinstance(e, KinhecError) else DegenerateMotionError(f"singular system ({e})") for e in errors]
        if any(isinstance(e, DegenerateMotionError) for e in errors):
            raise next(e for e in errors if isinstance(e, DegenerateMotionError))
        raise DegenerateMotionError(f"no solver could determine X ({errors[0] if errors else 'no candidates'})")
    scores = np.array([_score(A, B, X, Y, s, inverse_domain) for _, X, Y, s in out])
    mins = np.maximum(scores.min(axis=0), 1e-15)
    total = (scores / mins).sum(axis=1)
    order = np.argsort(total, kind="stable")
    return [out[k] for k in order]


def choose_domain(A, B, X, Y, scale=None) -> bool:
    """Pick the residual domain whose noise model fits best: True for ``inverse_domain``.

    The two domains (``B`` and ``inv(B)``) differ per pair by a volume-preserving
    map, so their pooled residual covariances compare by their determinants
    (Gaussian likelihood at the same estimate); each is taken from the 80 %
    of pairs with the smallest residuals, so that outliers do not decide.
    """
    out = []
    for inv in (True, False):
        r = residuals(A, B, X, Y, scale, inv)
        S0 = _robust_cov(r)
        d2 = np.einsum("ni,ij,nj->n", r, np.linalg.inv(_floor(S0)), r)
        keep = d2 <= np.quantile(d2, 0.8)
        rk = r[keep]
        sign, logdet = np.linalg.slogdet(_floor(rk.T @ rk / max(len(rk), 1)))
        out.append(logdet if sign > 0 else np.inf)
    return bool(out[0] <= out[1])


def scan_offset(hand_t, A, eye_t, B, offsets, *, inverse_domain=True, n_pairs: int = 30):
    """Pose-fit cost of candidate clock offsets: Park-Martin ``X`` and robust ``Y`` on a subsample at each.

    Used when the angular speeds do not correlate (noisy or featureless rotation).

    Parameters
    ----------
    hand_t, A : ndarray, shapes (Nh,), (Nh, 4, 4)
        Hand stream ``T_base_ee`` [m].
    eye_t, B : ndarray, shapes (Ne,), (Ne, 4, 4)
        Eye stream in solver form.
    offsets : ndarray, shape (K,)
        Candidate offsets [s] (eye stamp = hand time + offset).

    Returns
    -------
    ndarray, shape (K,)
        Relative cost (lower is better; inf where it cannot be evaluated).
    """
    from kinhec.calibrate.pairing import _Interpolator
    from kinhec.solvers.axxb_park_martin import _park_martin

    lo, hi = hand_t[0] + np.max(offsets), hand_t[-1] + np.min(offsets)
    cand = np.flatnonzero((eye_t >= lo) & (eye_t <= hi))
    if cand.size < 3:
        return np.full(len(offsets), np.inf)
    pick = cand[np.unique(np.linspace(0, cand.size - 1, min(cand.size, n_pairs)).round().astype(int))]
    interp = _Interpolator(hand_t, A)
    Bs = B[pick]
    sub = np.arange(pick.size)
    out = np.full((len(offsets), 2), np.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, o in enumerate(offsets):
            As = interp(eye_t[pick] - o)
            Am, Bm = motions_between(As, Bs, sub)
            try:
                X = _park_martin(Am, Bm, check_axes=False)
            except (KinhecError, np.linalg.LinAlgError):
                continue
            out[k] = _score(As, Bs, X, robust_y(As, Bs, X), None, inverse_domain)
    ok = np.isfinite(out).all(axis=1)
    if not ok.any():
        return np.full(len(offsets), np.inf)
    m = np.maximum(out[ok].min(axis=0), 1e-15)
    return np.where(ok, (out / m).sum(axis=1), np.inf)


# --------------------------------------------------------------------------- #
# refinement
# --------------------------------------------------------------------------- #
def _robust_cov(r: np.ndarray) -> np.ndarray:
    mad = 1.4826 * np.median(np.abs(r - np.median(r, axis=0)), axis=0)
    return np.diag(np.maximum(mad, 1e-12) ** 2)


def _floor(S: np.ndarray) -> np.ndarray:
    d = np.diag(S).copy()
    floor_r = max(1e-8 * d[:3].max(), 1e-24)
    floor_t = max(1e-8 * d[3:].max(), 1e-24)
    return S + np.diag([floor_r] * 3 + [floor_t] * 3)


class _Problem:
    def __init__(self, pairing, estimate_offset: bool, estimate_scale: bool, inverse_domain: bool):
        self.pairing = pairing
        self.eih = inverse_domain
        self.eo = estimate_offset
        self.es = estimate_scale
        self.P = 12 + int(estimate_offset) + int(estimate_scale)
        self._cache = (None, None)

    def poses(self, offset):
        key = None if offset is None else float(offset)
        if self._cache[0] != key or self._cache[1] is None:
            self._cache = (key, self.pairing.at(offset))
        return self._cache[1]

    def apply(self, st, p):
        X, Y, off, s = st
        X = _retract(X, p[0:6])
        Y = _retract(Y, p[6:12])
        k = 12
        if self.eo:
            off = off + p[k]
            k += 1
        if self.es:
            s = s * float(np.exp(p[k]))
        return X, Y, off, s

    def res(self, st, mask):
        X, Y, off, s = st
        A, B = self.poses(off)
        return residuals(A[mask], B[mask], X, Y, s, self.eih)

    def jac(self, st, mask):
        """Jacobian ``(n, 6, P)`` of the residuals: analytic in X, Y and the scale, numeric in the offset.

        Uses ``log(exp(a) E) ~ log E + a`` (residuals small at the inliers).
        """
        X, Y, off, s = st
        A, B = self.poses(off)
        A, B = A[mask], B[mask]
        n = A.shape[0]
        RA, tA, RB, tB = A[:, :3, :3], A[:, :3, 3], B[:, :3, :3], B[:, :3, 3]
        if s is not None:
            tB = tB / s
        RX, tX, RY, tY = X[:3, :3], X[:3, 3], Y[:3, :3], Y[:3, 3]
        J = np.zeros((n, 6, self.P))
        I3 = np.eye(3)
        if self.eih:
            RAX = RA @ RX
            RAXt = np.swapaxes(RAX, 1, 2)
            t_pred = np.einsum("nij,nj->ni", RAXt, tY - (RA @ tX + tA))
            t_meas = -np.einsum("nji,nj->ni", RB, tB)
            J[:, :3, 0:3] = -I3
            J[:, :3, 6:9] = np.swapaxes(RB, 1, 2)  # R_meas = R_B^T
            J[:, 3:, 0:3] = se3.hat(t_pred)
            J[:, 3:, 3:6] = -RX.T
            J[:, 3:, 9:12] = RAXt
        else:
            t_pred = (RA @ tX + tA - tY) @ RY
            t_meas = tB
            J[:, :3, 0:3] = RB  # R_meas = R_B
            J[:, :3, 6:9] = -I3
            J[:, 3:, 3:6] = RY.T @ RA
            J[:, 3:, 6:9] = se3.hat(t_pred)
            J[:, 3:, 9:12] = -RY.T
        k = 12
        if self.eo:
            h = 1e-4
            rp = self.res((X, Y, off + h, s), mask)
            rm = self.res((X, Y, off - h, s), mask)
            J[:, :, k] = (rp - rm) / (2 * h)
            self.poses(off)
            k += 1
        if self.es:
            J[:, 3:, k] = t_meas
        return J


def _lm(prob: _Problem, st, mask, W, max_iter=30):
    """Levenberg-Marquardt on whitened residuals ``r @ W.T`` of the pairs in ``mask``."""
    def cost_of(s):
        z = prob.res(s, mask) @ W.T
        return float((z * z).sum()), z

    cost, z = cost_of(st)
    lam = 1e-3
    it = 0
    for it in range(1, max_iter + 1):
        J = prob.jac(st, mask)
        Jw = np.einsum("ij,njp->nip", W, J).reshape(-1, prob.P)
        g = Jw.T @ z.reshape(-1)
        H = Jw.T @ Jw
        improved = False
        for _ in range(10):
            Hd = H + lam * np.diag(np.maximum(np.diag(H), 1e-12))
            try:
                step = -np.linalg.solve(Hd, g)
            except np.linalg.LinAlgError:
                lam *= 10
                continue
            st_new = prob.apply(st, step)
            cost_new, z_new = cost_of(st_new)
            if cost_new <= cost:
                dec = cost - cost_new
                st, z = st_new, z_new
                lam = max(lam / 10, 1e-9)
                improved = True
                converged = dec <= 1e-10 * max(cost, 1e-300) or np.abs(step).max() < 1e-12
                cost = cost_new
                break
            lam *= 10
        if not improved or converged:
            break
    return st, it


def _autocorr_inflation(z: np.ndarray) -> float:
    """``(1 + rho) / (1 - rho)`` for a significant positive lag-one autocorrelation of the whitened residuals."""
    n = z.shape[0]
    if n < 10:
        return 1.0
    zc = z - z.mean(axis=0)
    num = (zc[1:] * zc[:-1]).sum()
    den = (zc * zc).sum()
    rho = float(num / den) if den > 0 else 0.0
    if rho < 3.0 / np.sqrt(6 * n):
        return 1.0
    rho = min(rho, 0.98)
    return (1 + rho) / (1 - rho)


def refine(pairing, X0, Y0, *, offset0=None, scale0=None, estimate_offset=False, estimate_scale=False,
           max_rounds: int = 12, reject: bool = True, init_solver: str = "", inverse_domain: bool = True) -> Solution:
    """Alternate outlier rejection and Levenberg-Marquardt refinement; return the estimate and its covariance.

    Parameters
    ----------
    pairing : TimePairing or OrderPairing
        Gives the paired poses ``(A, B)`` for an offset (``pairing.at(offset)``).
    X0, Y0 : ndarray, shape (4, 4)
        Initial ``X`` and ``Y`` [m].
    offset0 : float, optional
        Initial (or fixed) clock offset [s]; eye stamp = hand time + offset.
    scale0 : float, optional
        Initial monocular scale of the eye translations (eye = scale x metric).
    estimate_offset, estimate_scale : bool
        Refine the offset / the scale jointly.
    max_rounds : int
        Rejection-refinement rounds.
    reject : bool
        Label outliers (chi-square gate) and leave them out of the fit.

    Returns
    -------
    Solution
    """
    prob = _Problem(pairing, estimate_offset, estimate_scale, inverse_domain)
    off = offset0 if offset0 is not None else (0.0 if pairing.has_time else None)
    s = scale0 if estimate_scale else None
    if estimate_scale and s is None:
        s = 1.0
    st = (X0, Y0, off, s)
    n = len(pairing)
    all_mask = np.ones(n, dtype=bool)
    r = prob.res(st, all_mask)
    S = _floor(_robust_cov(r))
    inl = all_mask.copy()
    its = 0
    for _ in range(max_rounds):
        if reject:
            d2 = np.einsum("ni,ij,nj->n", r, np.linalg.inv(S), r)
            new = d2 < CHI2_6_9999
            if new.sum() < max(3, prob.P // 6 + 2):
                new = d2 <= np.quantile(d2, 0.5)
            inl = new
        W = np.linalg.cholesky(np.linalg.inv(S)).T  # W^T W = S^-1
        st, k = _lm(prob, st, inl, W)
        its += k
        r = prob.res(st, all_mask)
        m = int(inl.sum())
        dof = max(m - prob.P / 6.0, 1.0)
        S_new = _floor((r[inl].T @ r[inl]) / dof)
        if reject:
            d2 = np.einsum("ni,ij,nj->n", r, np.linalg.inv(S_new), r)
            stable = np.array_equal(d2 < CHI2_6_9999, inl)
        else:
            stable = True
        # the noise model and the fit are solved alternately until both settle
        change = np.abs(np.sqrt(np.diag(S_new)) / np.sqrt(np.diag(S)) - 1.0).max()
        stable = stable and change < NOISE_TOL
        S = S_new
        if stable:
            break
    W = np.linalg.cholesky(np.linalg.inv(S)).T
    J = prob.jac(st, inl)
    Jw = np.einsum("ij,njp->nip", W, J).reshape(-1, prob.P)
    H = Jw.T @ Jw
    try:
        cov = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        cov = np.linalg.pinv(H)
    z = r[inl] @ W.T
    infl = _autocorr_inflation(z) if pairing.has_time else 1.0
    # the 6x6 noise covariance is estimated from the same residuals: E[inv(S_hat)] = inv(S) dof / (dof - 7)
    dof = int(inl.sum()) - prob.P / 6.0
    small_sample = dof / (dof - 7.0) if dof > 14 else 2.0
    cov = cov * infl * small_sample
    X, Y, off, s = st
    return Solution(X, Y, off, s, cov, r, inl, S, infl, init_solver, its)


def check_enough_pairs(n: int, where: str) -> None:
    """Raise :class:`InputError` below the 3 pose pairs ``A X = Y B`` needs."""
    if n < c.MIN_PAIRS:
        raise InputError(f"{where}: expected at least {c.MIN_PAIRS} pose pairs, got {n}")
