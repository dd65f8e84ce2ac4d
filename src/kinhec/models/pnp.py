"""Pose of a planar target from its image points: batched Levenberg-Marquardt PnP.

This module implements the ``pnp`` camera-measurement model of the
benchmark: the target points are projected with the true pose
``T_cam_target``, Gaussian pixel noise is added, and the pose is re-estimated
by minimising the reprojection error.  The resulting pose errors are what a
real detector + PnP pipeline produces: depth dominated (the distance of a
small board is poorly constrained by its apparent size), pose dependent, and
correlated between rotation and translation.

Problem
-------
For each frame ``n`` with known intrinsics ``K`` (an ideal pinhole, see
:mod:`kinhec.models.cameras`), target points ``P_j`` (target frame) and observed
pixels ``m_nj``, find ``T_n = T_cam_target`` minimising

.. math::

    E_n(T) = \\sum_{j \\in \\text{mask}_n} \\lVert \\pi(K, T P_j) - m_{nj} \\rVert^2,
    \\qquad \\pi(K, p) = (f p_x / p_z + c_x, \\; f p_y / p_z + c_y).

Method
------
Levenberg-Marquardt (Levenberg 1944; Marquardt 1963) on SE(3), the method of
OpenCV's ``solvePnP(..., SOLVEPNP_ITERATIVE)`` with an extrinsic guess, with
which the tests compare it.  The pose is updated by a *left* perturbation in
the camera frame, ``T <- exp(delta) T`` with the twist ``delta = (omega, v)``
(rotation first, as in :mod:`kinhec.geometry.se3`).  For a camera-frame point
``p = (X, Y, Z)`` with ``x = X/Z``, ``y = Y/Z`` the analytic Jacobian of its
pixel with respect to ``delta`` at 0 is

.. math::

    \\frac{\\partial (u, v)}{\\partial \\delta} = f \\begin{pmatrix}
      -x y & 1 + x^2 & -y & 1/Z & 0 & -x/Z \\\\
      -(1 + y^2) & x y & x & 0 & 1/Z & -y/Z \\end{pmatrix}.

Every frame keeps its own damping ``lambda``; a step solves
``(H + lambda diag(H)) delta = -g`` with ``H = J^T J`` and ``g = J^T r``
(Marquardt's scaling makes the damping independent of the units of rotation
and translation).  ``H`` is assembled from sums over the points of the
closed-form entries of ``J_u^T J_u + J_v^T J_v``, without forming ``J``.  The
damping follows Nielsen (Madsen, Nielsen and Tingleff 2004, eq. 2.21): a step
that lowers ``E`` is accepted and ``lambda`` shrinks by a factor between 1
and 3 depending on how well the linear model predicted the decrease; a step
that does not is rejected and ``lambda`` grows by 2, 4, 8, ...  All frames
are processed at once: the 6x6 normal equations of the frames still
iterating are built and solved as one batch, and a frame leaves the batch
when it has converged.

A frame has converged when the decrease predicted for the next step is at
most ``tol`` times ``E`` or the step is at most ``tol`` in every component
(rad and m) (that last step is taken without testing it), when an accepted
step lowers ``E`` by at most ``tol`` relative to ``E``, or when ``lambda``
has grown past ``1e10`` (no descent left within round-off).  Near a
fronto-parallel view of a small or distant board the minimum lies in a flat
valley (the two planar-ambiguity minima merge) where Gauss-Newton steps
shrink slowly; such frames may use up ``max_iter`` iterations and are
reported with ``converged = False`` and their last, still improving, estimate.

References
----------
K. Levenberg, "A method for the solution of certain non-linear problems in
least squares," *Quarterly of Applied Mathematics* 2(2), 1944.
D. W. Marquardt, "An algorithm for least-squares estimation of nonlinear
parameters," *SIAM J. Applied Mathematics* 11(2), 1963.
K. Madsen, H. B. Nielsen and O. Tingleff, *Methods for Non-Linear Least
Squares Problems*, 2nd ed., Technical University of Denmark, 2004.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3
from kinhec.models.cameras import (
    VISIBILITY_MARGIN_PX,
    CameraPreset,
    as_camera,
    as_target,
    camera_coordinates,
    check_points,
    inside_image,
    pinhole_pixels,
    to_camera,
    visibility_rule,
)
from kinhec.util.errors import InputError

__all__ = [
    "MIN_PNP_POINTS",
    "PNP_MAX_ITER",
    "PNP_TOL",
    "PnPResult",
    "solve_pnp",
    "simulate_pnp",
    "reprojection_rmse_px",
]

#: Fewest points a frame needs to be solved (three non-collinear points fix the six pose parameters).
MIN_PNP_POINTS = 3
#: Default iteration cap of :func:`solve_pnp` (also used by :func:`simulate_pnp`).
PNP_MAX_ITER = 50
#: Default convergence threshold of :func:`solve_pnp` (also used by :func:`simulate_pnp`).
PNP_TOL = 1e-12

_LAMBDA_INIT = 1e-6
_LAMBDA_MIN = 1e-12
_LAMBDA_STALL = 1e10
_LAPACK_BELOW = 400  # batch size below which numpy.linalg.solve beats the vectorised LDL^T
_CHUNK = 2048  # frames solved together; keeps the (chunk, P) work arrays small enough for the caches


@dataclass(frozen=True)
class PnPResult:
    """Result of a batched PnP estimation.

    Attributes
    ----------
    T_cam_target : ndarray, shape (N, 4, 4)
        Estimated pose of the target in the camera frame; NaN for frames that
        were not solved (not available, fewer than :data:`MIN_PNP_POINTS`
        points, or a used point on or behind the camera plane at the start).
    rmse_px : ndarray, shape (N,)
        Reprojection RMSE [px] of the estimate over the used points,
        ``sqrt(sum_j |r_j|^2 / n_used)`` with ``r_j`` the 2-D residual of
        point ``j``; NaN where the pose is NaN.
    converged : ndarray of bool, shape (N,)
        The frame met a convergence test before ``max_iter`` iterations.  A
        frame that ran out of iterations keeps its last (finite) estimate.
    n_iter : ndarray of int, shape (N,)
        Levenberg-Marquardt iterations (normal equations solved, whether the
        step was accepted or not); 0 for frames that were not solved.
    """

    T_cam_target: np.ndarray
    rmse_px: np.ndarray
    converged: np.ndarray
    n_iter: np.ndarray


# --------------------------------------------------------------------------- #
# core (trusted, already-checked arrays)
# --------------------------------------------------------------------------- #
def _rowdot_einsum(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return np.einsum("np,np->n", p, q)


#: Row-wise dot product of two (n, P) arrays (``numpy.vecdot`` where available: numpy >= 2.0).
_rowdot = getattr(np, "vecdot", _rowdot_einsum)


def _residuals(cam: CameraPreset, T: np.ndarray, pts: np.ndarray, u_obs: np.ndarray, v_obs: np.ndarray, w):
    """Normalised coordinates and residuals of the points under poses ``T`` (n, 4, 4).

    Returns ``x = X/Z, y = Y/Z, inv_z = 1/Z`` and the residuals ``r_u, r_v``
    [px], each of shape (n, P), and the cost (n,), which is inf where a used
    point has depth <= 0.  ``w`` is the (n, P) 0/1 weight of the points, or
    None when every point is used; unused points get ``x = y = inv_z = 0``
    and zero residuals (see :func:`_normal_equations`).  Works on (n, P)
    component arrays, which is much faster than a batch of small products.
    """
    X, Y, Z = camera_coordinates(T, pts)
    front = Z > 0.0
    inv_z = 1.0 / np.where(front, Z, 1.0)
    if w is not None:
        inv_z *= w
    x = X * inv_z
    y = Y * inv_z
    r_u = cam.f_px * x + (cam.cx_px - u_obs)
    r_v = cam.f_px * y + (cam.cy_px - v_obs)
    if w is not None:
        r_u *= w
        r_v *= w
    cost = _rowdot(r_u, r_u) + _rowdot(r_v, r_v)
    behind = ~front if w is None else (~front) & (w > 0)
    behind = behind.any(axis=1)
    if behind.any():
        cost[behind] = np.inf
    return x, y, inv_z, r_u, r_v, cost


def _normal_equations(f: float, x, y, z, r_u, r_v, n_unused):
    """``H = J^T J`` (n, 6, 6) and ``g = J^T r`` (n, 6) for the left-twist Jacobian ``J``.

    With ``z = 1/Z`` the pixel Jacobian rows of a point are
    ``J_u = f (-x y, 1 + x^2, -y, z, 0, -x z)`` and
    ``J_v = f (-(1 + y^2), x y, x, 0, z, -y z)``.  The entries of
    ``J_u^T J_u + J_v^T J_v`` simplify to short polynomials (for instance the
    (0, 2) entry is ``-x`` and the (2, 5) entry vanishes), so ``H`` is
    assembled from 17 sums over the points instead of a batch of small matrix
    products, which is several times faster.

    Unused points enter with ``x = y = z = 0`` and ``r = 0``: they add nothing
    except 1 to the sums of ``(1 + y^2)^2`` and ``(1 + x^2)^2``, which
    ``n_unused`` (n,) takes back.
    """
    n = x.shape[0]
    dot = _rowdot
    xx = x * x
    yy = y * y
    xy = x * y
    s = xx + yy
    a = 1.0 + xx
    b = 1.0 + yy
    xz = x * z
    yz = y * z
    zz = z * z
    one_s = 1.0 + s
    xyxy = dot(xy, xy)
    S = np.empty((17, n))
    S[0] = xyxy + dot(b, b) - n_unused
    S[1] = 2.0 * xy.sum(axis=1) + dot(xy, s)
    S[2] = x.sum(axis=1)
    S[3] = dot(xy, z)
    S[4] = dot(b, z)
    S[5] = dot(yz, one_s)
    S[6] = dot(a, a) + xyxy - n_unused
    S[7] = y.sum(axis=1)
    S[8] = dot(a, z)
    S[9] = dot(xz, one_s)
    S[10] = s.sum(axis=1)
    S[11] = yz.sum(axis=1)
    S[12] = xz.sum(axis=1)
    S[13] = zz.sum(axis=1)
    S[14] = dot(xz, z)
    S[15] = dot(yz, z)
    S[16] = dot(s, zz)
    H = np.empty((n, 6, 6))
    ff = f * f
    for i, j, k, sign in _H_LAYOUT:
        H[:, i, j] = (sign * ff) * S[k]
        if i != j:
            H[:, j, i] = H[:, i, j]
    H[:, 2, 5] = H[:, 5, 2] = 0.0
    H[:, 3, 4] = H[:, 4, 3] = 0.0
    g = np.empty((n, 6))
    g[:, 0] = -(dot(xy, r_u) + dot(b, r_v))
    g[:, 1] = dot(a, r_u) + dot(xy, r_v)
    g[:, 2] = dot(x, r_v) - dot(y, r_u)
    g[:, 3] = dot(z, r_u)
    g[:, 4] = dot(z, r_v)
    g[:, 5] = -(dot(xz, r_u) + dot(yz, r_v))
    g *= f
    return H, g


#: (row, column, index into S, sign) of the upper triangle of H in :func:`_normal_equations`.
_H_LAYOUT = (
    (0, 0, 0, 1), (0, 1, 1, -1), (0, 2, 2, -1), (0, 3, 3, -1), (0, 4, 4, -1), (0, 5, 5, 1),
    (1, 1, 6, 1), (1, 2, 7, -1), (1, 3, 8, 1), (1, 4, 3, 1), (1, 5, 9, -1),
    (2, 2, 10, 1), (2, 3, 11, -1), (2, 4, 12, 1),
    (3, 3, 13, 1), (3, 5, 14, -1),
    (4, 4, 13, 1), (4, 5, 15, -1),
    (5, 5, 16, 1),
)


def _solve_damped(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve the damped normal equations ``A x = b`` (n, 6, 6), (n, 6).

    LAPACK (``numpy.linalg.solve``, a loop over the batch) for small batches,
    the vectorised :func:`_solve_spd` from a few hundred systems on, where its
    fixed cost is amortised; also the fallback should LAPACK find a system
    singular.
    """
    if A.shape[0] < _LAPACK_BELOW:
        try:
            return np.linalg.solve(A, b[..., None])[..., 0]
        except np.linalg.LinAlgError:
            pass
    return _solve_spd(A, b)


def _solve_spd(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve ``A x = b`` for symmetric positive definite ``A`` (n, k, k) and ``b`` (n, k); returns (n, k).

    An unrolled LDL^T factorisation vectorised over the n systems: for the
    small (6x6) damped normal equations it is several times faster than
    ``numpy.linalg.solve``, which loops over the batch.  Pivots are floored
    at a tiny fraction of the diagonal, so a singular ``A`` (a degenerate
    point set) gives a finite, minimum-effort solution instead of an error.
    """
    k = A.shape[-1]
    a = [[A[:, i, j] for j in range(k)] for i in range(k)]
    L = [[None] * k for _ in range(k)]
    d = [None] * k
    for j in range(k):
        dj = a[j][j].copy()
        for m in range(j):
            dj -= L[j][m] * L[j][m] * d[m]
        d[j] = np.maximum(dj, 1e-13 * a[j][j] + 1e-300)
        for i in range(j + 1, k):
            lij = a[i][j].copy()
            for m in range(j):
                lij -= L[i][m] * L[j][m] * d[m]
            L[i][j] = lij / d[j]
    z = [None] * k
    for i in range(k):
        zi = b[:, i].copy()
        for m in range(i):
            zi -= L[i][m] * z[m]
        z[i] = zi
    x = [None] * k
    for i in reversed(range(k)):
        xi = z[i] / d[i]
        for m in range(i + 1, k):
            xi -= L[m][i] * x[m]
        x[i] = xi
    return np.stack(x, axis=-1)


def _exp_left(delta: np.ndarray, T: np.ndarray) -> np.ndarray:
    """``exp(delta) @ T`` for twists ``delta = (omega, v)`` (n, 6) and poses ``T`` (n, 4, 4).

    Uses ``hat(omega)^2 = omega omega^T - |omega|^2 I`` to build the rotation
    and the left Jacobian ``V`` of the exponential without 3x3 products.
    """
    n = delta.shape[0]
    w = delta[:, :3]
    th2 = np.einsum("ni,ni->n", w, w)
    A, B, C = se3.so3_coefficients(np.sqrt(th2))
    K = np.zeros((n, 3, 3))
    K[:, 0, 1] = -w[:, 2]
    K[:, 0, 2] = w[:, 1]
    K[:, 1, 0] = w[:, 2]
    K[:, 1, 2] = -w[:, 0]
    K[:, 2, 0] = -w[:, 1]
    K[:, 2, 1] = w[:, 0]
    ww = w[:, :, None] * w[:, None, :]
    d = np.arange(3)
    R = B[:, None, None] * ww + A[:, None, None] * K
    R[:, d, d] += (1.0 - B * th2)[:, None]
    V = C[:, None, None] * ww + B[:, None, None] * K
    V[:, d, d] += (1.0 - C * th2)[:, None]
    out = np.empty((n, 4, 4))
    out[:, :3, :] = R @ T[:, :3, :]
    out[:, :3, 3] += (V @ delta[:, 3:, None])[..., 0]
    out[:, 3, :] = (0.0, 0.0, 0.0, 1.0)
    return out


def _lm(cam: CameraPreset, pts: np.ndarray, uv: np.ndarray, w: np.ndarray, T0: np.ndarray, max_iter: int, tol: float):
    """Levenberg-Marquardt on a chunk of frames; returns (T, cost, converged, n_iter, ok)."""
    n = T0.shape[0]
    T = T0.copy()
    u_obs = np.ascontiguousarray(uv[..., 0])
    v_obs = np.ascontiguousarray(uv[..., 1])
    n_iter = np.zeros(n, dtype=np.int64)
    converged = np.zeros(n, dtype=bool)
    full = bool(w.all())
    state = _residuals(cam, T, pts, u_obs, v_obs, None if full else w)
    ok = np.isfinite(state[-1])  # a used point behind the camera at the start: not solved
    # Working set: the frames still iterating, with their pose, projections, residuals, cost and damping.
    idx = np.flatnonzero(ok)
    if idx.size < n:
        state = tuple(a[idx] for a in state)
    x, y, inv_z, r_u, r_v, cost_i = state
    Ti, wi, ui, vi = T[idx], (None if full else w[idx]), u_obs[idx], v_obs[idx]
    unused_i = np.zeros(idx.size) if full else w.shape[1] - wi.sum(axis=1)
    lam_i = np.full(idx.size, _LAMBDA_INIT)
    nu_i = np.full(idx.size, 2.0)
    diag = np.arange(6)

    def drop(done):
        """Write back the frames flagged ``done`` and remove them from the working set."""
        nonlocal idx, x, y, inv_z, r_u, r_v, cost_i, Ti, wi, ui, vi, lam_i, nu_i, unused_i
        fin = idx[done]
        T[fin] = Ti[done]
        keep = ~done
        idx = idx[keep]
        x, y, inv_z, r_u, r_v, cost_i = (a[keep] for a in (x, y, inv_z, r_u, r_v, cost_i))
        Ti, ui, vi, lam_i, nu_i, unused_i = Ti[keep], ui[keep], vi[keep], lam_i[keep], nu_i[keep], unused_i[keep]
        wi = None if full else wi[keep]
        return fin

    for _ in range(max_iter):
        if idx.size == 0:
            break
        n_iter[idx] += 1
        H, g = _normal_equations(cam.f_px, x, y, inv_z, r_u, r_v, unused_i)
        A = H.copy()
        A[:, diag, diag] *= 1.0 + lam_i[:, None]
        delta = -_solve_damped(A, g)
        # Decrease of the cost predicted by the linear model, -(2 g.delta + delta^T H delta).  When it
        # (or the step) is negligible the pose is at the minimum: take the step without testing it.
        pred = -np.einsum("ni,ni->n", 2.0 * g + np.einsum("nij,nj->ni", H, delta), delta)
        small = (pred <= tol * cost_i) | (np.abs(delta).max(axis=1) <= tol)
        T_new = _exp_left(delta, Ti)
        if small.any():
            Ti[small] = T_new[small]
            converged[drop(small)] = True
            if idx.size == 0:
                break
            T_new, pred = T_new[~small], pred[~small]
        new = _residuals(cam, T_new, pts, ui, vi, wi)
        cost_new = new[-1]
        accept = cost_new < cost_i
        done = accept & (cost_i - cost_new <= tol * cost_i)
        # damping update of Nielsen: shrink by up to 3 after a step that did as well as predicted
        # (gain ratio rho = 1), less after a poor one; grow by 2, 4, 8, ... after rejected steps
        rho = (cost_i - cost_new) / pred
        shrink = np.maximum(1.0 / 3.0, 1.0 - (2.0 * np.clip(rho, 0.0, 1.0) - 1.0) ** 3)
        lam_i = np.where(accept, np.maximum(lam_i * shrink, _LAMBDA_MIN), lam_i * nu_i)
        nu_i = np.where(accept, 2.0, 2.0 * nu_i)
        done |= lam_i > _LAMBDA_STALL
        reject = ~accept
        if reject.any():  # rejected frames keep their previous state
            for a_new, a_old in zip((T_new,) + new, (Ti, x, y, inv_z, r_u, r_v, cost_i)):
                a_new[reject] = a_old[reject]
        Ti = T_new
        x, y, inv_z, r_u, r_v, cost_i = new
        if done.any():
            converged[drop(done)] = True
    T[idx] = Ti  # frames that ran out of iterations keep their last estimate
    # final cost of every pose (the last steps were taken untested)
    cost = _residuals(cam, T, pts, u_obs, v_obs, None if full else w)[-1]
    return T, cost, converged, n_iter, ok


def _solve(cam, pts, uv, mask, T0, max_iter, tol) -> PnPResult:
    """Solve every frame with at least MIN_PNP_POINTS used points; NaN for the others."""
    N, P = mask.shape
    w = mask.astype(np.float64)
    uv = np.where(mask[..., None], uv, 0.0)  # unused points may carry NaN
    n_used = mask.sum(axis=1)
    T_out = np.full((N, 4, 4), np.nan)
    rmse = np.full(N, np.nan)
    converged = np.zeros(N, dtype=bool)
    n_iter = np.zeros(N, dtype=np.int64)
    todo = np.flatnonzero(n_used >= MIN_PNP_POINTS)
    for start in range(0, todo.size, _CHUNK):
        sel = todo[start : start + _CHUNK]
        T, cost, conv, it, ok = _lm(cam, pts, uv[sel], w[sel], T0[sel], max_iter, tol)
        good = sel[ok]
        T_out[good] = T[ok]
        rmse[good] = np.sqrt(cost[ok] / n_used[good])
        converged[good] = conv[ok]
        n_iter[sel] = it
    return PnPResult(T_cam_target=T_out, rmse_px=rmse, converged=converged, n_iter=n_iter)


# --------------------------------------------------------------------------- #
# public API
# --------------------------------------------------------------------------- #
def _check_mask(mask, shape: tuple[int, int]) -> np.ndarray:
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise InputError(f"mask: expected a boolean array of shape {shape}, got dtype {m.dtype}")
    if m.shape != shape:
        raise InputError(f"mask: expected shape {shape}, got shape {m.shape}")
    return m


def _check_pixels(uv_px, n_points: int) -> np.ndarray:
    uv = se3.check_array(uv_px, "uv_px", (2,), allow_nan=True)
    if uv.ndim != 3 or uv.shape[1] != n_points:
        raise InputError(f"uv_px: expected shape (N, {n_points}, 2) to match points_m, got shape {uv.shape}")
    return uv


def _check_poses(T, name: str, n: int | None = None) -> np.ndarray:
    a = se3.check_transforms(T, name)
    if a.ndim != 3 or (n is not None and a.shape[0] != n):
        want = f"({n}, 4, 4)" if n is not None else "(N, 4, 4)"
        raise InputError(f"{name}: expected shape {want}, got shape {a.shape}")
    return a


def solve_pnp(
    camera, points_m, uv_px, T_init, *, mask=None, max_iter: int = PNP_MAX_ITER, tol: float = PNP_TOL
) -> PnPResult:
    """Refine target poses by minimising the reprojection error (batched Levenberg-Marquardt).

    Parameters
    ----------
    camera : CameraPreset or str
        Ideal pinhole camera (or its preset name) that took the images.
    points_m : array_like, shape (P, 3)
        Target points in the target frame [m] (e.g. ``TargetPreset.points_m``).
    uv_px : array_like, shape (N, P, 2)
        Observed pixels ``(u, v)`` [px] of the points in each of the N frames.
        NaN is allowed at points excluded by ``mask``.
    T_init : array_like, shape (N, 4, 4)
        Initial guess of ``T_cam_target``, the pose of the target in the
        camera (OpenCV optical) frame.
    mask : array_like of bool, shape (N, P), optional
        Points to use in each frame (default: all).  Frames with fewer than
        :data:`MIN_PNP_POINTS` points are not solved (NaN result).
    max_iter : int
        Largest number of iterations per frame (>= 1).
    tol : float
        Convergence threshold (>= 0).  A frame stops when the decrease of the
        sum of squared reprojection errors predicted for the next step, or
        achieved by an accepted step, is at most ``tol`` times that sum, or
        when every component of the step is at most ``tol`` [rad, m].

    Returns
    -------
    PnPResult
        Poses ``T_cam_target`` (N, 4, 4), ``rmse_px`` (N,), ``converged`` (N,)
        and ``n_iter`` (N,).  Frames not solved carry NaN poses and RMSE,
        ``converged = False``.

    Raises
    ------
    InputError
        On wrong shapes, non-finite values (NaN pixels are allowed only
        outside ``mask``), a non-boolean mask or invalid settings.

    Notes
    -----
    The estimate is a local minimum near ``T_init``; PnP on a planar target
    has a second, mirrored minimum (the planar ambiguity), which an initial
    guess far from the truth can fall into.
    """
    cam = as_camera(camera)
    pts = check_points(points_m)
    uv = _check_pixels(uv_px, pts.shape[0])
    N, P = uv.shape[:2]
    T0 = _check_poses(T_init, "T_init", N)
    m = np.ones((N, P), dtype=bool) if mask is None else _check_mask(mask, (N, P))
    nan_used = np.isnan(uv).any(axis=-1) & m
    if nan_used.any():
        raise InputError(
            f"uv_px: expected finite pixels at every point selected by mask, got {int(nan_used.sum())} NaN points"
        )
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InputError(f"max_iter: expected an integer >= 1, got {max_iter!r}")
    try:
        tol_f = float(tol)
    except (TypeError, ValueError):
        raise InputError(f"tol: expected a finite value >= 0, got {tol!r}") from None
    if not (np.isfinite(tol_f) and tol_f >= 0):
        raise InputError(f"tol: expected a finite value >= 0, got {tol!r}")
    return _solve(cam, pts, uv, m, T0, int(max_iter), tol_f)


def reprojection_rmse_px(camera, points_m, uv_px, T_cam_target, *, mask=None) -> np.ndarray:
    """Reprojection RMSE [px] of poses ``T_cam_target`` (N, 4, 4) against pixels ``uv_px`` (N, P, 2).

    ``sqrt(sum_j |pi(K, T P_j) - m_j|^2 / n_used)`` over the points selected by
    ``mask`` (N, P) (default: all), with ``pi`` the pinhole projection of
    :func:`kinhec.models.cameras.project_points`.  NaN for a frame whose pose is NaN
    (NaN poses are accepted, e.g. frames :func:`solve_pnp` did not solve),
    that uses no point or that has a used point on or behind the camera
    plane.
    """
    cam = as_camera(camera)
    pts = check_points(points_m)
    uv = _check_pixels(uv_px, pts.shape[0])
    N, P = uv.shape[:2]
    T = se3.check_array(T_cam_target, "T_cam_target", (4, 4), allow_nan=True)
    if T.shape != (N, 4, 4):
        raise InputError(f"T_cam_target: expected shape ({N}, 4, 4), got shape {T.shape}")
    m = np.ones((N, P), dtype=bool) if mask is None else _check_mask(mask, (N, P))
    proj, _ = pinhole_pixels(cam, to_camera(T, pts))
    d2 = np.where(m, ((proj - uv) ** 2).sum(axis=-1), 0.0)
    n = m.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(d2.sum(axis=1) / n)


def simulate_pnp(camera, target, T_cam_target_gt, pixel_std: float, rng: np.random.Generator, *, available=None) -> PnPResult:
    """The ``pnp`` measurement model: pixel noise on the projected target points, then PnP.

    The target points are projected with the true pose, Gaussian noise of
    standard deviation ``pixel_std`` [px] is added to both image coordinates
    of every point, and the pose is re-estimated by :func:`solve_pnp` starting
    from the true pose.  Only points that a detector could report are used:
    those with positive depth inside the image with the visibility margin
    (:data:`kinhec.models.cameras.VISIBILITY_MARGIN_PX`); for a visible checkerboard
    that is every point.

    Parameters
    ----------
    camera : CameraPreset or str
        The camera (or its preset name).
    target : TargetPreset or str
        The target (or its preset name).
    T_cam_target_gt : array_like, shape (N, 4, 4)
        True pose of the target in the camera frame.
    pixel_std : float
        Standard deviation [px] of the pixel noise (>= 0).
    rng : numpy.random.Generator
        Source of the noise.  Exactly ``N * P * 2`` standard normals are drawn,
        for every frame whether available or not, so the noise of a frame does
        not depend on the visibility of the others.
    available : array_like of bool, shape (N,), optional
        Frames that get a measurement (default: ``visibility(...).visible``).

    Returns
    -------
    PnPResult
        Measured poses; frames that are not available (or have fewer than
        :data:`kinhec.models.pnp.MIN_PNP_POINTS` points in the image) get NaN poses,
        NaN RMSE and ``converged = False``.
    """
    cam = as_camera(camera)
    tgt = as_target(target)
    T_gt = _check_poses(T_cam_target_gt, "T_cam_target_gt")
    N = T_gt.shape[0]
    try:
        std = float(pixel_std)
    except (TypeError, ValueError):
        raise InputError(f"pixel_std: expected a number >= 0, got {pixel_std!r}") from None
    if not (np.isfinite(std) and std >= 0):
        raise InputError(f"pixel_std: expected a finite number >= 0, got {pixel_std!r}")
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"rng: expected a numpy.random.Generator, got {type(rng).__name__}")
    pts = tgt.points_m
    uv_true, depth = pinhole_pixels(cam, to_camera(T_gt, pts))
    inside = inside_image(cam, uv_true, depth, VISIBILITY_MARGIN_PX)
    if available is None:
        avail = visibility_rule(cam, tgt, T_gt, inside).visible
    else:
        avail = np.asarray(available)
        if avail.dtype != np.bool_ or avail.shape != (N,):
            raise InputError(
                f"available: expected a boolean array of shape ({N},), got shape {avail.shape} and dtype {avail.dtype}"
            )
    noise = rng.standard_normal((N, pts.shape[0], 2))
    mask = inside & avail[:, None]
    uv = uv_true + std * noise
    return _solve(cam, pts, uv, mask, T_gt, PNP_MAX_ITER, PNP_TOL)
