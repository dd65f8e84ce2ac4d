"""Maximum likelihood of ``X`` and ``Y`` on 3D points a depth camera measured in its own frame.

The stage beside :mod:`~kinhec.solvers.he_ml_stages.pixels` for cameras that
measure the target's points directly in 3D (structured light, stereo, time of
flight): instead of pixels, view ``i`` gives the camera-frame points ``m_ij``
of the target's model points ``P_j``.

Model
-----
The camera pose of view ``i`` is ``C_i(X, Y) = T_cam_target`` of
:func:`kinhec.solvers.pair_model.predicted_camera_poses` (the flange poses taken
as measured), and the point ``q_ij = C_i P_j`` is measured with the
depth-dependent anisotropic noise of :mod:`kinhec.models.depth_noise`:
``m_ij = q_ij + eps_ij``, ``eps_ij ~ N(0, Sigma(q_ij; a, b))``.  The cost is

    sum_ij |L_ij (q_ij(X, Y) - m_ij)|^2,      L_ij^T L_ij = Sigma(q_ij)^-1,

minimised over ``X`` and ``Y`` (nothing else) by Gauss-Newton.  The weights
are taken at the predicted points ``q_ij`` of the current estimate and held
during a step (iteratively reweighted): at the truth they do not depend on the
noise, so the estimating equation is unbiased, which weights taken at the
measured points would not be.

A right perturbation of ``X`` and ``Y`` moves ``C_i`` to ``C_i exp(J_i (dx, dy))``
(:func:`~kinhec.solvers.pair_model.pair_jacobians`), and a right twist
``(w, v)`` of ``C_i`` moves ``q_ij`` by ``R_i (w x P_j + v)``: the rows of a point
are ``L_ij [-R_i [P_j]_x, R_i] J_i``.  Per view only the 6 x 6 information of
its points enters (:func:`point_normals`); the normal matrix of ``(dx, dy)``
is 12 x 12 whatever the number of views, and its inverse at the solution the
covariance (the inverse Fisher information).

Noise levels
------------
``a`` and ``b`` are given, or estimated from the residuals: the whitened
residual of a point splits into its part along the ray (one degree of
freedom, scaled by ``1 / a``) and across it (two, scaled by ``1 / b``), and each
level is the one that makes its part's sum of squares equal its degrees of
freedom (restricted maximum likelihood: the points minus the leverage of ``X``
and ``Y`` on that part, which sum to 12).  Both are identified as soon as the
points outnumber the unknowns: along and across the ray are different
directions of every point.  With ``estimate="scale"`` only their common scale
is estimated (their ratio as given).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3
from kinhec.models.depth_noise import check_noise, point_whitening, ray_parts
from kinhec.solvers import pair_model as pm
from kinhec.util.errors import InputError

__all__ = ["PointFit", "PointViews", "pack_points", "rigid_alignment", "point_normals", "points_information",
           "points_ml", "ESTIMATES", "NOISE_START"]

#: What of the noise levels ``(a, b)`` is estimated: both, their common scale, none.
ESTIMATES = ("both", "scale", "none")
#: Start of the noise levels when none are given: 1 mm along the ray at 1 m depth (``a`` [1/m]), 1 mrad across.
NOISE_START = (1e-3, 1e-3)
#: Most Gauss-Newton iterations (each followed by an update of the estimated noise levels).
_MAX_ITER = 60
#: Converged when the step's squared Mahalanobis length is below this and no level moves by more than
#: :data:`_LEVEL_TOL` (relative, as a standard deviation).
_STEP_TOL = 1e-10
_LEVEL_TOL = 1e-6


@dataclass(frozen=True)
class PointViews:
    """The views' model points and measured points, padded to one array.

    Attributes
    ----------
    model : ndarray, shape (N, P, 3)
        Target points in the target frame [m] (zero at padding).
    measured : ndarray, shape (N, P, 3)
        Their measurements in the camera frame [m] (``(0, 0, 1)`` at padding, a harmless depth).
    mask : ndarray of bool, shape (N, P)
    """

    model: np.ndarray
    measured: np.ndarray
    mask: np.ndarray

    @property
    def n_views(self) -> int:
        return self.model.shape[0]

    @property
    def n_points(self) -> int:
        return int(self.mask.sum())


def pack_points(model_points, camera_points) -> PointViews:
    """:class:`PointViews` of per-view lists of model points (P_i, 3) and camera-frame points (P_i, 3) [m].

    Raises :class:`~kinhec.util.errors.InputError` naming the view for a wrong shape, unequal counts, fewer than
    3 points, or a point not in front of the camera (depth ``z <= 0``).
    """
    if len(model_points) != len(camera_points):
        raise InputError(f"points: expected as many views of model points as of measured points, got "
                         f"{len(model_points)} and {len(camera_points)}")
    n = len(model_points)
    P = max((len(p) for p in model_points), default=0)
    model, meas, mask = np.zeros((n, P, 3)), np.zeros((n, P, 3)), np.zeros((n, P), dtype=bool)
    meas[..., 2] = 1.0
    for i, (p, m) in enumerate(zip(model_points, camera_points)):
        p, m = np.asarray(p, dtype=np.float64), np.asarray(m, dtype=np.float64)
        if p.ndim != 2 or p.shape[1:] != (3,) or m.ndim != 2 or m.shape[1:] != (3,):
            raise InputError(f"points: view {i}: expected (P, 3) model and measured points, got shapes {p.shape} and "
                             f"{m.shape}")
        if p.shape[0] != m.shape[0]:
            raise InputError(f"points: view {i}: expected as many measured points as model points, got {m.shape[0]} "
                             f"and {p.shape[0]}")
        if p.shape[0] < 3:
            raise InputError(f"points: view {i}: expected at least 3 points, got {p.shape[0]}")
        if not (np.isfinite(p).all() and np.isfinite(m).all()):
            raise InputError(f"points: view {i}: expected finite coordinates, got NaN or inf")
        if np.any(m[:, 2] <= 0):
            k = int(np.flatnonzero(m[:, 2] <= 0)[0])
            raise InputError(f"points: view {i}: point {k}: expected a positive depth z (in front of the camera), "
                             f"got z = {m[k, 2]:g} m")
        k = p.shape[0]
        model[i, :k], meas[i, :k], mask[i, :k] = p, m, True
    return PointViews(model, meas, mask)


def rigid_alignment(views: PointViews, weights=None) -> np.ndarray:
    """Every view's target pose ``C_i = T_cam_target`` (N, 4, 4) aligning its model points to its measured ones.

    The weighted least-squares rigid fit (Kabsch / Umeyama without scale): minimises
    ``sum_j w_ij |C_i P_ij - m_ij|^2``; ``weights`` (N, P) default to 1 (0 at padding).  A view whose points are
    collinear has no unique pose: :class:`~kinhec.util.errors.InputError` names it.
    """
    w = views.mask.astype(np.float64) if weights is None else np.where(views.mask, weights, 0.0)
    sw = w.sum(axis=1)[:, None]
    cp = (w[..., None] * views.model).sum(axis=1) / sw
    cm = (w[..., None] * views.measured).sum(axis=1) / sw
    dp, dm = views.model - cp[:, None], views.measured - cm[:, None]
    H = np.einsum("np,npi,npj->nij", w, dm, dp)  # sum w (m - cm)(P - cp)^T
    U, s, Vt = np.linalg.svd(H)
    flat = s[:, 1] <= 1e-9 * np.maximum(s[:, 0], 1e-300)
    if flat.any():
        raise InputError(f"points: view {int(np.flatnonzero(flat)[0])}: the model points are collinear (or "
                         "coincide): they do not determine the target's pose")
    d = np.sign(np.linalg.det(U @ Vt))
    D = np.broadcast_to(np.eye(3), H.shape).copy()
    D[:, 2, 2] = d
    R = U @ D @ Vt
    C = np.broadcast_to(np.eye(4), (H.shape[0], 4, 4)).copy()
    C[:, :3, :3] = R
    C[:, :3, 3] = cm - np.einsum("nij,nj->ni", R, cp)
    return C


def _predicted(C, views: PointViews) -> np.ndarray:
    """Camera-frame points ``C_i P_ij`` (N, P, 3); ``(0, 0, 1)`` at padding."""
    q = np.einsum("nij,npj->npi", C[:, :3, :3], views.model) + C[:, None, :3, 3]
    return np.where(views.mask[..., None], q, np.array([0.0, 0.0, 1.0]))


def _whitening(q, views: PointViews, noise) -> np.ndarray:
    """``L`` (N, P, 3, 3) at the points ``q``, zero at padding (and wherever a point fell behind the camera)."""
    ok = views.mask & (q[..., 2] > 0)
    L = point_whitening(np.where(ok[..., None], q, np.array([0.0, 0.0, 1.0])), noise)
    return np.where(ok[..., None, None], L, 0.0)


def point_normals(C, views: PointViews, L):
    """Per-view information ``M`` (N, 6, 6), gradient ``g`` (N, 6) and whitened residuals ``e`` (N, P, 3) of the
    camera's right twist, the weights ``L`` (N, P, 3, 3) given.

    ``e_ij = L_ij (C_i P_ij - m_ij)``; a right twist ``(w, v)`` of ``C_i`` moves ``C_i P_ij`` by
    ``R_i (w x P_ij + v)``, so the whitened rows are ``K_ij = L_ij [-R_i [P_ij]_x, R_i]``, ``M_i = sum_j K_ij^T K_ij``
    and ``g_i = sum_j K_ij^T e_ij``.  Also returns ``K`` (N, P, 3, 6).
    """
    R = C[:, :3, :3]
    q = np.einsum("nij,npj->npi", R, views.model) + C[:, None, :3, 3]
    e = np.einsum("npij,npj->npi", L, q - views.measured)
    Ph = se3.hat(views.model.reshape(-1, 3)).reshape(views.model.shape + (3,))  # (N, P, 3, 3)
    D = np.empty(views.model.shape + (6,))
    D[..., :3] = -np.einsum("nij,npjk->npik", R, Ph)
    D[..., 3:] = R[:, None]
    K = L @ D
    M = np.einsum("npki,npkj->nij", K, K)
    g = np.einsum("npki,npk->ni", K, e)
    return M, g, e, K


def _reduce(M, g, J):
    """The 12 x 12 normal matrix and gradient of ``(dx, dy)``: ``sum_i J_i^T M_i J_i`` and ``sum_i J_i^T g_i``."""
    JT = np.swapaxes(J, 1, 2)
    return (JT @ M @ J).sum(axis=0), (JT @ g[..., None]).sum(axis=0)[:, 0]


def points_information(A, X, Y, configuration: str, views: PointViews, noise) -> np.ndarray:
    """Fisher information (12, 12) of ``(dx, dy)`` (right perturbations of ``X`` and ``Y``) of the views' points
    under the noise ``(a, b)``, at the points ``X`` and ``Y`` predict (the truth's, given the true ``X`` and ``Y``)."""
    A = np.asarray(A, dtype=np.float64)
    C = pm.predicted_camera_poses(A, X, Y, configuration)
    L = _whitening(_predicted(C, views), views, noise)
    M, g, _, _ = point_normals(C, views, L)
    J, _ = pm.pair_jacobians(C, X, configuration, robot=False)
    return _reduce(M, g, J)[0]


@dataclass(frozen=True)
class PointFit:
    """Result of :func:`points_ml`.

    Attributes
    ----------
    X, Y : ndarray, shape (4, 4)
    cov : ndarray, shape (12, 12)
        Covariance of the right perturbations ``(dx, dy)`` (the inverse Fisher information at the estimated
        noise levels).
    noise : (float, float)
        ``(a, b)``: the point noise along the ray ``a z^2`` [m] and across it ``b z`` [m].
    noise_std : (float, float)
        Their standard deviations (NaN for a level not estimated).
    estimate : str
        What of the levels was estimated (:data:`ESTIMATES`).
    dof : (float, float)
        Degrees of freedom of the residuals along and across the rays (points minus leverage).
    chi2 : float
        Sum of squared whitened residuals at the solution.
    rms_mm : float
        RMS distance between the measured and predicted points [mm].
    view_rms_mm : ndarray, shape (N,)
        The same per view.
    n_points : int
    n_iter : int
    """

    X: np.ndarray
    Y: np.ndarray
    cov: np.ndarray
    noise: tuple
    noise_std: tuple
    estimate: str
    dof: tuple
    chi2: float
    rms_mm: float
    view_rms_mm: np.ndarray
    n_points: int
    n_iter: int


def _leverage(K, J, cov, u, mask):
    """Leverage of ``(dx, dy)`` on the whitened residuals along the rays and in total (sums over the points)."""
    Jw = np.einsum("npij,njk->npik", K, J)  # (N, P, 3, 12) whitened rows of (dx, dy)
    JC = Jw @ cov
    total = float(np.einsum("npik,npik->", JC, Jw))
    ju = np.einsum("npi,npik->npk", u, Jw)
    along = float(np.einsum("npk,kl,npl,np->", ju, cov, ju, mask))
    return along, total


def points_ml(A, X0, Y0, configuration: str, views: PointViews, *, noise=None, estimate: str | None = None) -> PointFit:
    """``X``, ``Y`` maximising the likelihood of depth-camera points (see the module doc).

    Parameters
    ----------
    A : ndarray, shape (N, 4, 4)
        Flange poses ``T_base_ee`` [m].
    X0, Y0 : ndarray, shape (4, 4)
        Start (e.g. :func:`kinhec.solvers.he_ml.he_ml` on the views' :func:`rigid_alignment` poses).
    configuration : {"eye_in_hand", "eye_to_hand"}
    views : PointViews
    noise : (float, float), optional
        ``(a, b)``: given levels (held with ``estimate="none"``, the default when given), or the start (and the
        ratio with ``"scale"``).  Default :data:`NOISE_START`, both estimated.
    estimate : {"both", "scale", "none"}, optional
        Default ``"none"`` with ``noise``, ``"both"`` without.
    """
    A = np.asarray(A, dtype=np.float64)
    if configuration not in pm.CONFIGURATIONS:
        raise InputError(f"configuration: expected one of {', '.join(pm.CONFIGURATIONS)}, got {configuration!r}")
    if A.shape != (views.n_views, 4, 4):
        raise InputError(f"points: expected one flange pose per view ({views.n_views}), got poses of shape {A.shape}")
    estimate = ("none" if noise is not None else "both") if estimate is None else estimate
    if estimate not in ESTIMATES:
        raise InputError(f"estimate: expected one of {', '.join(ESTIMATES)}, got {estimate!r}")
    a, b = check_noise(NOISE_START if noise is None else noise)
    n = views.n_points
    mask = views.mask.astype(np.float64)
    X, Y = np.asarray(X0, dtype=np.float64), np.asarray(Y0, dtype=np.float64)
    it, dof_a, dof_p = 0, float(n), float(2 * n)
    for it in range(1, _MAX_ITER + 1):
        C = pm.predicted_camera_poses(A, X, Y, configuration)
        q = _predicted(C, views)
        L = _whitening(q, views, (a, b))
        M, g, e, K = point_normals(C, views, L)
        J, _ = pm.pair_jacobians(C, X, configuration, robot=False)
        H, gr = _reduce(M, g, J)
        cost = float(np.sum(e * e))
        dt = -np.linalg.solve(H, gr)
        step = 1.0
        for _ in range(20):  # halve the step until it lowers the cost at these weights
            X1, Y1 = X @ se3.se3_exp_unchecked(step * dt[:6]), Y @ se3.se3_exp_unchecked(step * dt[6:])
            C1 = pm.predicted_camera_poses(A, X1, Y1, configuration)
            e1 = point_normals(C1, views, L)[2]
            if float(np.sum(e1 * e1)) <= cost:
                X, Y = X1, Y1
                break
            step *= 0.5
        else:
            step = 0.0
        moved = 0.0
        if estimate != "none":  # update the levels from the residuals at the new X, Y (the weights of this step)
            C = pm.predicted_camera_poses(A, X, Y, configuration)
            M, g, e, K = point_normals(C, views, L)
            J, _ = pm.pair_jacobians(C, X, configuration, robot=False)
            cov = np.linalg.inv(_reduce(M, g, J)[0])
            u = ray_parts(q)[0]
            ea = np.einsum("npi,npi->np", u, e) * mask
            sa, st = float(np.sum(ea * ea)), float(np.sum(e * e))
            lev_a, lev = _leverage(K, J, cov, u, mask)
            dof_a, dof_p = n - lev_a, 2 * n - (lev - lev_a)
            if estimate == "both":
                fa, fb = math.sqrt(sa / max(dof_a, 1e-9)), math.sqrt((st - sa) / max(dof_p, 1e-9))
            else:
                fa = fb = math.sqrt(st / max(3 * n - lev, 1e-9))
            a, b = a * fa, b * fb
            moved = max(abs(fa - 1.0), abs(fb - 1.0))
        if step * step * float(dt @ H @ dt) < _STEP_TOL and moved < _LEVEL_TOL:
            break
    C = pm.predicted_camera_poses(A, X, Y, configuration)
    q = _predicted(C, views)
    L = _whitening(q, views, (a, b))
    M, g, e, K = point_normals(C, views, L)
    J, _ = pm.pair_jacobians(C, X, configuration, robot=False)
    H = _reduce(M, g, J)[0]
    cov = np.linalg.inv(0.5 * (H + H.T))
    u = ray_parts(q)[0]
    lev_a, lev = _leverage(K, J, cov, u, mask)
    dof_a, dof_p = n - lev_a, 2 * n - (lev - lev_a)
    d2 = np.sum((q - views.measured) ** 2, axis=-1) * mask
    if estimate == "both":
        noise_std = (a / math.sqrt(2 * max(dof_a, 1.0)), b / math.sqrt(2 * max(dof_p, 1.0)))
    elif estimate == "scale":
        rel = 1.0 / math.sqrt(2 * max(dof_a + dof_p, 1.0))
        noise_std = (a * rel, b * rel)
    else:
        noise_std = (float("nan"), float("nan"))
    return PointFit(X=X, Y=Y, cov=cov, noise=(a, b), noise_std=noise_std, estimate=estimate,
                    dof=(float(dof_a), float(dof_p)), chi2=float(np.sum(e * e)),
                    rms_mm=1e3 * math.sqrt(float(d2.sum()) / max(n, 1)),
                    view_rms_mm=1e3 * np.sqrt(d2.sum(axis=1) / np.maximum(views.mask.sum(axis=1), 1)),
                    n_points=n, n_iter=it)  # fmt: skip
