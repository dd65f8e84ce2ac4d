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
:mod:`kinhec.cameras`), target points ``P_j`` (target frame) and observed
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
(rotation first, as in :mod:`kinhec.se3`).  For a camera-frame point
``p = (X, Y, Z)`` with ``x = X/Z``, ``y = Y/Z`` the analytic Jacobian of its
pixel with respect to ``delta`` at 0 is

.. math::

    \\frac{\\partial (u, v)}{\\partial \\delta} = f \\begin{pmatrix}
      -x y & 1 + x^2 & -y & 1/Z & 0 & -x/Z \\\\
      -(1 + y^2) & x y & x & 0 & 1/Z & -y/Z \\end{pmatrix}.

Every frame keeps its own damping ``lambda``; a step solves
``(H + lambda diag(H)) delta = -g`` with ``H = J^T J`` and ``g = J^T r``
(Marquardt's scaling makes the damping independent of the units of rotation
and translation).  A step that lowers ``E`` is accepted and ``lambda`` shrinks
tenfold; otherwise it is rejected and ``lambda`` grows tenfold.  All frames are
processed at once: the 6x6 normal equations of the frames still iterating are
built and solved as one batch.

A frame has converged when a step is at most ``tol`` in every component
(rad and m), when an accepted step lowers ``E`` by at most ``tol`` relative
to ``E``, or when ``lambda`` has grown past ``1e10`` (no descent left within
round-off: the iterate is a minimum to machine precision).

References
----------
K. Levenberg, "A method for the solution of certain non-linear problems in
least squares," *Quarterly of Applied Mathematics* 2(2), 1944.
D. W. Marquardt, "An algorithm for least-squares estimation of nonlinear
parameters," *SIAM J. Applied Mathematics* 11(2), 1963.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec import se3
from kinhec.cameras import (
    VISIBILITY_MARGIN_PX,
    CameraPreset,
    _inside_image,
    _pixels,
    _to_camera,
    as_camera,
    as_target,
    check_points,
    visibility,
)
from kinhec.errors import InputError

__all__ = [
    "MIN_PNP_POINTS",
    "PnPResult",
    "solve_pnp",
    "simulate_pnp",
    "reprojection_rmse_px",
]

#: Fewest points a frame needs to be solved (three non-collinear points fix the six pose parameters).
MIN_PNP_POINTS = 3

_LAMBDA_INIT = 1e-6
_LAMBDA_MIN = 1e-12
_LAMBDA_STALL = 1e10
_CHUNK = 2048  # frames solved together; bounds the memory of the (chunk, 2P, 6) Jacobian


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
        Levenberg-Marquardt iterations (steps tried, accepted or not).
    """

    T_cam_target: np.ndarray
    rmse_px: np.ndarray
    converged: np.ndarray
    n_iter: np.ndarray


# --------------------------------------------------------------------------- #
# core (trusted, already-checked arrays)
# --------------------------------------------------------------------------- #
def _residuals(cam: CameraPreset, T: np.ndarray, pts: np.ndarray, u_obs: np.ndarray, v_obs: np.ndarray, w: np.ndarray):
    """Normalised coordinates and weighted residuals of the points under poses ``T`` (n, 4, 4).

    Returns ``x, y, inv_z, r_u, r_v`` of shape (n, P) (residuals 0 at unused
    points) and the cost (n,), inf where a used point has depth <= 0.
    Works component-wise on (n, P) arrays, which is much faster than a batch
    of small matrix products.
    """
    n, P = w.shape
    ph = np.concatenate([pts, np.ones((P, 1))], axis=1)
    p = (T[:, :3, :].reshape(3 * n, 4) @ ph.T).reshape(n, 3, P)  # one GEMM for every frame
    X, Y, Z = p[:, 0], p[:, 1], p[:, 2]
    front = Z > 0.0
    inv_z = 1.0 / np.where(front, Z, 1.0)
    x = X * inv_z
    y = Y * inv_z
    r_u = (cam.f_px * x + (cam.cx_px - u_obs)) * w
    r_v = (cam.f_px * y + (cam.cy_px - v_obs)) * w
    cost = np.einsum("np,np->n", r_u, r_u) + np.einsum("np,np->n", r_v, r_v)
    behind = ((~front) & (w > 0)).any(axis=1)
    if behind.any():
        cost[behind] = np.inf
    return x, y, inv_z, r_u, r_v, cost


def _normal_equations(f: float, x, y, inv_z, r_u, r_v, w):
    """``H = J^T J`` (n, 6, 6) and ``g = J^T r`` (n, 6) for the left-twist Jacobian ``J``.

    ``J`` is stored transposed as (n, 6, 2P), u rows first, so that every
    entry is filled by a contiguous slice.
    """
    n, P = x.shape
    fw = f * w
    fwz = fw * inv_z
    fwxy = fw * (x * y)
    Jt = np.empty((n, 6, 2 * P))
    Jt[:, 0, :P] = -fwxy
    Jt[:, 0, P:] = -fw * (1.0 + y * y)
    Jt[:, 1, :P] = fw * (1.0 + x * x)
    Jt[:, 1, P:] = fwxy
    Jt[:, 2, :P] = -fw * y
    Jt[:, 2, P:] = fw * x
    Jt[:, 3, :P] = fwz
    Jt[:, 3, P:] = 0.0
    Jt[:, 4, :P] = 0.0
    Jt[:, 4, P:] = fwz
    Jt[:, 5, :P] = -fwz * x
    Jt[:, 5, P:] = -fwz * y
    r = np.concatenate([r_u, r_v], axis=1)
    H = Jt @ Jt.transpose(0, 2, 1)
    g = (Jt @ r[:, :, None])[..., 0]
    return H, g


def _lm(cam: CameraPreset, pts: np.ndarray, uv: np.ndarray, w: np.ndarray, T0: np.ndarray, max_iter: int, tol: float):
    """Levenberg-Marquardt on a chunk of frames; returns (T, cost, converged, n_iter, ok)."""
    n = T0.shape[0]
    T = T0.copy()
    u_obs = np.ascontiguousarray(uv[..., 0])
    v_obs = np.ascontiguousarray(uv[..., 1])
    lam = np.full(n, _LAMBDA_INIT)
    n_iter = np.zeros(n, dtype=np.int64)
    converged = np.zeros(n, dtype=bool)
    cost = np.empty(n)
    # state of the frames still iterating: index, pose, projections, residuals, cost, damping
    state = _residuals(cam, T, pts, u_obs, v_obs, w)
    cost[:] = state[-1]
    ok = np.isfinite(cost)  # a used point behind the camera at the start: not solved
    idx = np.flatnonzero(ok)
    x, y, inv_z, r_u, r_v, cost_i = (a[idx] for a in state)
    Ti, wi, ui, vi, lam_i = T[idx], w[idx], u_obs[idx], v_obs[idx], lam[idx]
    diag = np.arange(6)
    for _ in range(max_iter):
        if idx.size == 0:
            break
        H, g = _normal_equations(cam.f_px, x, y, inv_z, r_u, r_v, wi)
        A = H.copy()
        A[:, diag, diag] *= 1.0 + lam_i[:, None]
        delta = -np.linalg.solve(A, g[..., None])[..., 0]
        # gain predicted by the linear model: cost - |r + J delta|^2 = -(2 g.delta + delta^T H delta)
        Hd = (H @ delta[..., None])[..., 0]
        pred = -np.einsum("ni,ni->n", 2.0 * g + Hd, delta)
        T_new = se3._se3_exp(delta) @ Ti
        new = _residuals(cam, T_new, pts, ui, vi, wi)
        cost_new = new[-1]
        accept = cost_new < cost_i
        n_iter[idx] += 1
        done = (
            (np.abs(delta).max(axis=1) <= tol)
            | (pred <= tol * cost_i)
            | (accept & (cost_i - cost_new <= tol * cost_i))
        )
        lam_i = np.where(accept, np.maximum(lam_i * 0.1, _LAMBDA_MIN), lam_i * 10.0)
        done |= lam_i > _LAMBDA_STALL
        Ti = np.where(accept[:, None, None], T_new, Ti)
        x, y, inv_z, r_u, r_v, cost_i = (
            np.where(accept.reshape((-1,) + (1,) * (a.ndim - 1)), b, a)
            for a, b in zip((x, y, inv_z, r_u, r_v, cost_i), new)
        )
        T[idx] = Ti
        cost[idx] = cost_i
        if done.any():
            converged[idx[done]] = True
            keep = ~done
            idx = idx[keep]
            x, y, inv_z, r_u, r_v, cost_i = (a[keep] for a in (x, y, inv_z, r_u, r_v, cost_i))
            Ti, wi, ui, vi, lam_i = Ti[keep], wi[keep], ui[keep], vi[keep], lam_i[keep]
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


def solve_pnp(camera, points_m, uv_px, T_init, *, mask=None, max_iter: int = 50, tol: float = 1e-12) -> PnPResult:
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
        Convergence threshold (>= 0): on the largest step component [rad, m]
        and on the relative decrease of the squared reprojection error.

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
    if not (np.isfinite(tol) and tol >= 0):
        raise InputError(f"tol: expected a finite value >= 0, got {tol!r}")
    return _solve(cam, pts, uv, m, T0, int(max_iter), float(tol))


def reprojection_rmse_px(camera, points_m, uv_px, T_cam_target, *, mask=None) -> np.ndarray:
    """Reprojection RMSE [px] of poses ``T_cam_target`` (N, 4, 4) against pixels ``uv_px`` (N, P, 2).

    ``sqrt(sum_j |pi(K, T P_j) - m_j|^2 / n_used)`` over the points selected by
    ``mask`` (N, P) (default: all); NaN for a frame whose pose is NaN or that
    uses no point.  NaN poses are accepted (e.g. frames :func:`solve_pnp` did
    not solve).
    """
    cam = as_camera(camera)
    pts = check_points(points_m)
    uv = _check_pixels(uv_px, pts.shape[0])
    N, P = uv.shape[:2]
    T = se3.check_array(T_cam_target, "T_cam_target", (4, 4), allow_nan=True)
    if T.shape != (N, 4, 4):
        raise InputError(f"T_cam_target: expected shape ({N}, 4, 4), got shape {T.shape}")
    m = np.ones((N, P), dtype=bool) if mask is None else _check_mask(mask, (N, P))
    proj, _ = _pixels(cam, _to_camera(T, pts))
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
    (:data:`kinhec.cameras.VISIBILITY_MARGIN_PX`); for a visible checkerboard
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
        :data:`kinhec.pnp.MIN_PNP_POINTS` points in the image) get NaN poses,
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
    if available is None:
        avail = visibility(cam, tgt, T_gt).visible
    else:
        avail = np.asarray(available)
        if avail.dtype != np.bool_ or avail.shape != (N,):
            raise InputError(
                f"available: expected a boolean array of shape ({N},), got shape {avail.shape} and dtype {avail.dtype}"
            )
    pts = tgt.points_m
    uv_true, depth = _pixels(cam, _to_camera(T_gt, pts))
    noise = rng.standard_normal((N, pts.shape[0], 2))
    mask = _inside_image(cam, uv_true, depth, VISIBILITY_MARGIN_PX) & avail[:, None]
    uv = uv_true + std * noise
    return _solve(cam, pts, uv, mask, T_gt, 50, 1e-12)
