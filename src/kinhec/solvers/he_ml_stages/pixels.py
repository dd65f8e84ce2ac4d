"""Stage 7 of ``he_ml``: maximum likelihood of ``X`` and ``Y`` on the target's pixels, robot errors marginalised.

The stage of :func:`kinhec.solvers.he_ml.he_ml` for camera poses that came from
PnP of a known target (``pixels=``): instead of the PnP poses it fits the
pixels themselves, which is where the noise is Gaussian.  A PnP pose of a
small target seen under large pixel noise is a nonlinear function of the
pixels (its depth error is skewed, its covariance depends on the pose), so a
likelihood written on the poses leaves accuracy on the table that a
likelihood on the pixels does not.

Model
-----
View ``i`` sees target points ``P_ij`` at pixels ``uv_ij`` through a camera
of known intrinsics, with independent pixel noise of standard deviation
``s_px`` on both axes.  The flange pose is measured with a twist error: the
true pose is ``A_i exp(xi_i)`` with ``xi_i ~ N(0, diag(v_rot I, v_trans I))``
in the flange frame (the generator's ``robot_se3_gaussian``).  The predicted
camera pose is ``C_i(X, Y, xi_i)`` of :func:`kinhec.solvers.pair_model.predicted_camera_poses`,
and to first order ``C_i exp(J_i (dx, dy) + G_i dxi)``
(:func:`~kinhec.solvers.pair_model.pair_jacobians`).

The residual of a corner is its pixel error ``e_ij``, by the lens model of the
intrinsics (:func:`kinhec.models.intrinsics.model_of`):

* a pinhole with OpenCV's five coefficients (nine intrinsics): the pixels are
  undistorted once to normalised coordinates ``m_ij`` (:func:`normalised_points`)
  and ``e_ij = f (m_ij - pi(C_i P_ij))``, ``pi`` the pinhole's division by depth
  and ``f = (fx, fy)``;
* a fisheye (equidistant, eight intrinsics) or OpenCV's rational model (twelve):
  ``e_ij = uv_ij - project(k, C_i P_ij)`` in the image itself
  (:func:`kinhec.models.intrinsics.project_points`), whose derivative in the
  camera-frame point is :func:`~kinhec.models.intrinsics.project_points_jacobians`'
  ``d_point``.  A fisheye sees points behind its plane (``Z <= 0``, lenses of
  180 deg and more).  The rational model needs every point in front of the
  camera: a start that puts one behind it is refused
  (:class:`BehindCameraError` names the view), and so is a step that would.
  The pinhole's normalised residuals are evaluated at any depth, as they
  always were (a pose-level start that puts a view's target behind the
  camera can still come back to the right solution on them).

The cost is the negative log-posterior

    sum_ij |e_ij(C_i(X, Y, xi_i))|^2 / s_px^2 + sum_i xi_i^T S^-1 xi_i

minimised over ``X``, ``Y`` and every ``xi_i`` by Gauss-Newton with
Levenberg damping.  The ``xi_i`` are local to their view, so the normal
equations are solved by the Schur complement: per view only the 6 x 6
information ``M_i = sum_j J_ij^T J_ij`` of its points and their gradient
enter, and the reduced system has 12 unknowns whatever the number of views.
Its inverse at the solution is the covariance of ``(dx, dy)`` with the robot
errors marginalised.

Noise levels: ``s_px``, ``v_rot`` and ``v_trans`` by expectation-maximisation
(the E-step's posterior covariance of each ``xi_i`` from its block of the
normal matrix), updated after every Gauss-Newton step while ``X`` and ``Y``
move; once they are still, the levels jump to the maximum of the restricted
marginal likelihood of the pixels (:class:`_MarginalLikelihood`), where EM
would only creep, and the iterations go on from there.  The levels are
identified separately: the pixel noise shows within a view (``2 P - 6``
degrees of freedom each), the robot error as a rigid motion of a view's
points that the other views do not share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError
from kinhec.solvers import pair_model as pm

if TYPE_CHECKING:  # kinhec.models.intrinsics brings scipy; the registry (and so this module) must stay light to import
    from kinhec.models.intrinsics import PackedViews

__all__ = ["PixelFit", "pixel_ml", "normalised_points", "check_intrinsics", "BehindCameraError"]

#: Most iterations (each a damped Gauss-Newton step and an EM update of the noise levels).
_MAX_ITER = 40
#: Converged when the step lowers the cost by less than this (chi-square units) ...
_COST_TOL = 1e-3
#: ... and no noise level (as a standard deviation) moved by more than this fraction.
_EM_SETTLE = 0.02
#: ... or X and Y have stopped moving (a step of squared Mahalanobis length below :data:`_STEP_TOL`) for this
#: many iterations in a row.  EM creeps where a level is weakly identified (a robot rotation small against
#: what PnP of a small target resolves: it stayed within a few per cent of its start), so the levels then jump
#: to the maximum of the restricted marginal likelihood (:func:`_levels`) and the iterations go on from there,
#: at most :data:`_ML_ROUNDS` times.
_STILL_ITER = 2
_ML_ROUNDS = 3
_STEP_TOL = 1e-4
#: Smallest robot variance [rad^2, m^2]: a perfect robot keeps an invertible prior.
_VAR_FLOOR = 1e-20


class BehindCameraError(InputError):
    """The start of :func:`pixel_ml` puts a view's target points behind a camera that sees only points in front."""


@dataclass(frozen=True)
class PixelFit:
    """Result of :func:`pixel_ml`.

    Attributes
    ----------
    X, Y : ndarray, shape (4, 4)
    cov : ndarray, shape (12, 12)
        Covariance of the right perturbations ``(dx, dy)``, robot errors marginalised.
    pixel_std : float
        Pixel noise [px].
    robot_rot_std_rad, robot_trans_std_m : float
        Flange twist noise [rad, m].
    robot_twists : ndarray, shape (N, 6)
        Posterior mean of every view's flange twist error ``xi_i``.
    rms_px : float
        RMS pixel residual at the solution.
    n_iter : int
        Iterations (each a damped Gauss-Newton step and an EM update of the noise levels).
    """

    X: np.ndarray
    Y: np.ndarray
    cov: np.ndarray
    pixel_std: float
    robot_rot_std_rad: float
    robot_trans_std_m: float
    robot_twists: np.ndarray
    rms_px: float
    n_iter: int


def normalised_points(views: PackedViews, intrinsics: np.ndarray, n_iter: int = 20) -> np.ndarray:
    """Undistorted normalised image coordinates (N, P, 2) of the observed pixels.

    ``intrinsics`` ``(fx, fy, cx, cy, k1, k2, p1, p2, k3)``; the distortion is
    inverted by fixed-point iteration (exact for a pinhole).
    """
    k = np.asarray(intrinsics, dtype=np.float64)
    xd = (views.points_2d - k[2:4]) / k[0:2]
    d = k[4:9]
    if not np.any(d):
        return xd
    xy = xd.copy()
    for _ in range(n_iter):
        x, y = xy[..., 0], xy[..., 1]
        r2 = x * x + y * y
        radial = 1.0 + r2 * (d[0] + r2 * (d[1] + r2 * d[4]))
        dx = 2.0 * d[2] * x * y + d[3] * (r2 + 2.0 * x * x)
        dy = d[2] * (r2 + 2.0 * y * y) + 2.0 * d[3] * x * y
        xy = np.stack([(xd[..., 0] - dx) / radial, (xd[..., 1] - dy) / radial], axis=-1)
    return xy


def check_intrinsics(intrinsics, what: str) -> np.ndarray:
    """Known intrinsics of a lens model :mod:`kinhec.models.intrinsics` knows (9, 8 or 12 finite numbers with
    ``fx, fy > 0``) as floats; else an InputError naming ``what``."""
    from kinhec.models.intrinsics import MODEL_FORMS, MODELS

    k = np.asarray(intrinsics, dtype=np.float64)
    if k.ndim != 1 or k.size not in MODELS or not np.isfinite(k).all() or k[0] <= 0 or k[1] <= 0:
        raise InputError(f"{what}: expected {MODEL_FORMS}, finite, with fx, fy > 0, got {k.size} values {k!r}")
    return k


def _exp_right(T: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """``T exp(xi)`` for (N, 4, 4) poses and (N, 6) twists, or one pose and one twist."""
    return T @ se3.se3_exp_unchecked(xi)


class _Problem:
    """The pixels of the views and the flange poses; evaluates residuals and per-view normal equations."""

    def __init__(self, A, views: PackedViews, m: np.ndarray, f: np.ndarray, configuration: str):
        self.A = A
        self.P = views.points_3d  # (N, P, 3)
        self.Pt = np.swapaxes(views.points_3d, 1, 2)  # (N, 3, P)
        self.w = views.mask.astype(np.float64)
        self.m = m
        self.f = f  # (fx, fy): pixels per normalised unit
        self.configuration = configuration
        self.n_pts = int(views.mask.sum())

    def poses(self, X, Y, xi):
        return pm.predicted_camera_poses(_exp_right(self.A, xi), X, Y, self.configuration)

    def residuals(self, C):
        """Pixel residuals ``f (m - pi(C P))`` (N, P, 2), zero at padded points, and what :meth:`normals` needs."""
        R = C[:, :3, :3]
        pc = R @ self.Pt + C[:, :3, 3:]  # (N, 3, P)
        z = np.where(self.w > 0, pc[:, 2], 1.0)
        iz = 1.0 / z
        x, y = pc[:, 0] * iz, pc[:, 1] * iz
        e = np.empty(self.m.shape)
        e[..., 0] = (self.m[..., 0] - x) * (self.f[0] * self.w)
        e[..., 1] = (self.m[..., 1] - y) * (self.f[1] * self.w)
        return e, (R, x, y, iz)

    def normals(self, e, geom):
        """Per-view information ``M`` (N, 6, 6) and gradient ``g`` (N, 6) [px^2] of the camera's right twist.

        A right twist ``(w, v)`` of ``C`` moves the camera-frame point of ``P`` by ``R (w x P + v)``; with
        ``a = R^T d(x, y)/d(point)`` the row of the Jacobian is ``(P x a, a)``.
        """
        R, x, y, iz = geom
        n, P = x.shape
        fw = self.w * iz  # 1/z at real points, 0 at padding
        # d u / d point = f_x (1/z, 0, -x/z), d v / d point = f_y (0, 1/z, -y/z), both rows (N, P, 3)
        D = np.zeros((n, 2 * P, 3))
        D[:, :P, 0] = self.f[0] * fw
        D[:, :P, 2] = -self.f[0] * fw * x
        D[:, P:, 1] = self.f[1] * fw
        D[:, P:, 2] = -self.f[1] * fw * y
        return _twist_normals(D, R, self.P, e)

    def behind(self, C) -> np.ndarray:
        """Per view, whether a real point lies where the lens cannot see it: none for the pinhole's normalised
        residuals, which are evaluated at any depth."""
        return np.zeros(C.shape[0], dtype=bool)


class _LensProblem(_Problem):
    """:class:`_Problem` of a fisheye (equidistant) or rational lens: residuals ``uv - project(k, C P)`` in pixels.

    ``sees_behind`` (the fisheye) accepts camera-frame points with ``Z <= 0``; otherwise a state that puts a real
    point there has an infinite residual (a step to it is refused).
    """

    def __init__(self, A, views: PackedViews, intrinsics: np.ndarray, configuration: str, sees_behind: bool):
        super().__init__(A, views, views.points_2d, intrinsics[0:2], configuration)
        self.k = intrinsics
        self.sees_behind = sees_behind
        self._real = self.w[..., None] > 0

    def _camera_points(self, C):
        """Camera-frame points (N, P, 3), padding at ``(0, 0, 1)`` (a point every model projects)."""
        R = C[:, :3, :3]
        pc = np.swapaxes(R @ self.Pt + C[:, :3, 3:], 1, 2)
        return R, np.where(self._real, pc, np.array([0.0, 0.0, 1.0]))

    def residuals(self, C):
        """Pixel residuals ``uv - project(k, C P)`` (N, P, 2), zero at padded points, and what :meth:`normals` needs."""
        from kinhec.models.intrinsics import project_points

        R, pc = self._camera_points(C)
        if not self.sees_behind and np.any(pc[..., 2] <= 0):
            return np.full(self.m.shape, np.inf), (R, pc)
        e = (self.m - project_points(self.k, pc)) * self._real
        return e, (R, pc)

    def normals(self, e, geom):
        """:meth:`_Problem.normals` with ``d uv / d point`` of the lens (:func:`~kinhec.models.intrinsics.project_points_jacobians`)."""
        from kinhec.models.intrinsics import project_points_jacobians

        R, pc = geom
        d_point = project_points_jacobians(self.k, pc)[1] * self._real[..., None]  # (N, P, 2, 3)
        D = np.concatenate([d_point[:, :, 0], d_point[:, :, 1]], axis=1)  # u rows of every point, then v rows
        return _twist_normals(D, R, self.P, e)

    def behind(self, C) -> np.ndarray:
        """Per view, whether a real point lies on or behind the camera's plane (``Z <= 0``) of a lens that sees only
        points in front (none for the fisheye)."""
        if self.sees_behind:
            return np.zeros(C.shape[0], dtype=bool)
        pc_z = np.einsum("nk,npk->np", C[:, 2, :3], self.P) + C[:, 2, 3:]
        return np.any((pc_z <= 0) & (self.w > 0), axis=1)


def _twist_normals(D, R, P, e):
    """Per-view information ``M`` (N, 6, 6) and gradient ``g`` (N, 6) of the camera's right twist from the pixels'
    derivatives ``D`` (N, 2P, 3) in the camera-frame point (the u rows of every point, then the v rows), the rotations
    ``R`` (N, 3, 3), the target points ``P`` (N, P, 3) and the residuals ``e`` (N, P, 2)."""
    n = D.shape[0]
    a = D @ R  # rows a^T = d^T R, (N, 2P, 3)
    Pp = np.concatenate([P, P], axis=1)
    Jr = np.empty((n, D.shape[1], 6))
    Jr[..., :3] = np.cross(Pp, a)
    Jr[..., 3:] = a
    JrT = np.swapaxes(Jr, 1, 2)
    M = JrT @ Jr
    g = (JrT @ np.concatenate([e[..., 0], e[..., 1]], axis=1)[..., None])[..., 0]
    return M, g


def _problem(A, views: PackedViews, k: np.ndarray, configuration: str) -> _Problem:
    """The problem of the lens model of ``k``: the pinhole's on normalised coordinates, the others' on pixels."""
    from kinhec.models.intrinsics import model_of

    model = model_of(k)
    if model == "radtan":
        return _Problem(A, views, normalised_points(views, k), k[0:2], configuration)
    return _LensProblem(A, views, k, configuration, sees_behind=model == "equidistant")


def _robot_precision(v_rot: float, v_trans: float) -> np.ndarray:
    return np.diag([1.0 / v_rot] * 3 + [1.0 / v_trans] * 3)


def _blocks(M, g, J, G, xi, s2, Lam):
    """Normal equations of ``(dx, dy)`` and the per-view twists: ``Htt`` (12, 12), ``Htx`` (N, 12, 6), ``Hxx``
    (N, 6, 6), ``bt`` (12,), ``bx`` (N, 6)."""
    JT, GT = np.swapaxes(J, 1, 2), np.swapaxes(G, 1, 2)
    MJ, MG = M @ J, M @ G
    Htt = (JT @ MJ).sum(axis=0) / s2
    Htx = (JT @ MG) / s2
    Hxx = (GT @ MG) / s2 + Lam
    bt = (JT @ g[..., None]).sum(axis=0)[:, 0] / s2
    bx = (GT @ g[..., None])[..., 0] / s2 - xi @ Lam
    return Htt, Htx, Hxx, bt, bx


def _schur(Htt, Htx, Hxx_inv):
    """``Htt - sum_i Htx_i Hxx_i^-1 Htx_i^T`` and ``Htx_i Hxx_i^-1``."""
    K = Htx @ Hxx_inv
    return Htt - (K @ np.swapaxes(Htx, 1, 2)).sum(axis=0), K


class _MarginalLikelihood:
    """Restricted marginal likelihood of the pixels in the noise levels, at the current linearisation.

    The pixels of view ``i`` are ``y_i = K_i xi_i + eps`` with ``K_i = J_r G_i`` (the pixels' Jacobian in the
    flange twist), ``xi_i ~ N(0, V)`` and ``eps ~ N(0, s_px^2 I)``: ``y_i`` is Gaussian with covariance
    ``s_px^2 I + K_i V K_i^T``, whose log-determinant and quadratic form need only ``H_i = K_i^T K_i =
    G_i^T M_i G_i`` and ``K_i^T y_i`` (determinant lemma, Woodbury).  ``X`` and ``Y`` are estimated from the
    same pixels: the restricted likelihood adds ``log det S`` of their information with the twists eliminated
    (:func:`_schur`), which is what makes ``s_px^2`` come out unbiased.
    """

    def __init__(self, M, g, e, J, G, xi, n_obs: int):
        GT = np.swapaxes(G, 1, 2)
        self.H = GT @ M @ G
        Gg = (GT @ g[..., None])[..., 0]
        self.b = Gg + (self.H @ xi[..., None])[..., 0]  # K^T y, y the pixel residuals at xi = 0 (to first order)
        ee = np.sum(e.reshape(e.shape[0], -1) ** 2, axis=1)
        self.yy = ee + 2.0 * np.einsum("ni,ni->n", xi, Gg) + np.einsum("ni,nij,nj->n", xi, self.H, xi)
        JT = np.swapaxes(J, 1, 2)
        self.JMJ = (JT @ M @ J).sum(axis=0)
        self.GMJ = GT @ M @ J
        self.n_obs = n_obs

    def nll_and_gradient(self, p: np.ndarray):
        """Negative log-likelihood (constants dropped) and its gradient in ``p = log(s_px^2, v_rot, v_trans)``."""
        s2 = math.exp(p[0])
        w = np.exp(-np.repeat(p[1:], 3))  # the prior precisions 1 / v
        n = self.H.shape[0]
        B = self.H + s2 * np.diag(w)  # s2 A, A = H / s2 + diag(w)
        Binv = np.linalg.inv(B)
        _, logdet_b = np.linalg.slogdet(B)
        u = (Binv @ self.b[..., None])[..., 0]  # s2 A^-1 b
        bu = np.einsum("ni,ni->n", self.b, u)
        Z = Binv @ self.GMJ  # (n, 6, 12)
        T = self.JMJ - (np.swapaxes(self.GMJ, 1, 2) @ Z).sum(axis=0)
        T = 0.5 * (T + T.T)
        _, logdet_t = np.linalg.slogdet(T)
        # log det A = log det B - 6 log s2; log det S = log det T - 12 log s2
        f = (self.n_obs * p[0] + float(np.sum(logdet_b)) - 6 * n * p[0] + 3 * n * float(p[1] + p[2])
             + float(np.sum(self.yy - bu)) / s2 + logdet_t - 12 * p[0])  # fmt: skip
        Binv_d = np.diagonal(Binv, axis1=1, axis2=2)  # (n, 6)
        Q = np.einsum("nip,pq,niq->ni", Z, np.linalg.inv(T), Z)  # diag(Z T^-1 Z^T)
        sw = s2 * w  # d B / d p[0] = s2 diag(w); d B / d p[k] = -s2 diag(w) on block k
        g = np.empty(3)
        g[0] = (self.n_obs - 6 * n + float(np.sum(Binv_d * sw)) - float(np.sum(self.yy - bu)) / s2
                + float(np.sum(u * u * sw)) / s2 - 12 + float(np.sum(Q * sw)))  # fmt: skip
        for k, sl in ((1, slice(0, 3)), (2, slice(3, 6))):
            g[k] = (3 * n - float(np.sum(Binv_d[:, sl] * sw[sl])) - float(np.sum(u[:, sl] ** 2 * sw[sl])) / s2
                    - float(np.sum(Q[:, sl] * sw[sl])))  # fmt: skip
        return 0.5 * f, 0.5 * g


def _levels(M, g, e, J, G, xi, n_obs, start):
    """Noise levels ``(s_px^2, v_rot, v_trans)`` maximising the restricted marginal likelihood of the pixels
    (:class:`_MarginalLikelihood`), from ``start``: EM moves a weakly determined level by a small fraction of
    the way per step and would stop long before it got there."""
    from scipy.optimize import minimize  # here: importing the registry stays light

    ml = _MarginalLikelihood(M, g, e, J, G, xi, n_obs)
    lo, hi = math.log(_VAR_FLOOR), math.log(1e2)
    p0 = np.log(np.maximum(np.asarray(start, dtype=np.float64), _VAR_FLOOR))
    res = minimize(ml.nll_and_gradient, p0, jac=True, method="L-BFGS-B",
                   bounds=[(math.log(1e-12), math.log(1e8)), (lo, hi), (lo, hi)],
                   options={"ftol": 1e-12, "gtol": 1e-7, "maxiter": 100})  # fmt: skip
    p = res.x if np.isfinite(res.fun) and res.fun <= ml.nll_and_gradient(p0)[0] else p0
    return tuple(float(v) for v in np.exp(p))


def _moved(new, old) -> float:
    """Largest relative change of the noise levels as standard deviations."""
    return max(abs(math.sqrt(a / b) - 1.0) for a, b in zip(new, old))


def _cost(e, xi, s2, Lam) -> float:
    return float(np.sum(e * e)) / s2 + float(np.sum((xi @ Lam) * xi))


def pixel_ml(A, X0, Y0, configuration: str, points_3d, points_2d, intrinsics, *, robot_std=None,
             pixel_std: float | None = None) -> PixelFit:  # fmt: skip
    """``X``, ``Y`` maximising the likelihood of the pixels with the robot's pose errors marginalised.

    Parameters
    ----------
    A : ndarray, shape (N, 4, 4)
        Measured flange poses ``T_base_ee`` [m].
    X0, Y0 : ndarray, shape (4, 4)
        Start (e.g. the pose-level maximum likelihood).
    configuration : {"eye_in_hand", "eye_to_hand"}
    points_3d, points_2d : sequence of arrays (P_i, 3) [m] and (P_i, 2) [px]
        Target points and their detected pixels, one entry per flange pose.
    intrinsics : array_like, shape (9,), (8,) or (12,)
        Known intrinsics of :mod:`kinhec.models.intrinsics`, the length telling the lens model: a pinhole's
        ``(fx, fy, cx, cy, k1, k2, p1, p2, k3)``, a fisheye's ``(fx, fy, cx, cy, k1, k2, k3, k4)`` or the rational
        model's ``(fx, fy, cx, cy, k1, k2, p1, p2, k3, k4, k5, k6)``.
    robot_std : (float, float), optional
        Start of the flange rotation [rad] and translation [m] noise (default: 1 mrad, 1 mm; EM
        comes down from a generous start, a level started at 0 would stay there).
    pixel_std : float, optional
        Start of the pixel noise [px] (default: from the residuals at the start).

    Each iteration is a damped Gauss-Newton step at the current noise levels followed by an EM
    update of the levels (a generalised EM: every step lowers the negative log-posterior at the
    levels it was taken with); it ends when neither the cost nor the levels move any more.
    """

    A = np.asarray(A, dtype=np.float64)
    from kinhec.models.intrinsics import model_of, pack_views  # scipy.sparse: only when pixels are given

    views = pack_views(points_3d, points_2d)
    if views.n_views != A.shape[0]:
        raise InputError(f"pixels: expected one view per flange pose ({A.shape[0]}), got {views.n_views}")
    k = check_intrinsics(intrinsics, "intrinsics")
    counts = views.mask.sum(axis=1)
    if np.any(counts < 3):
        bad = int(np.flatnonzero(counts < 3)[0])
        raise InputError(f"pixels: view {bad} has {int(counts[bad])} points, expected at least 3 per view")
    if configuration not in pm.CONFIGURATIONS:
        raise InputError(f"configuration: expected one of {', '.join(pm.CONFIGURATIONS)}, got {configuration!r}")
    prob = _problem(A, views, k, configuration)
    n = A.shape[0]
    dof = max(2 * prob.n_pts - 12, 1)
    xi = np.zeros((n, 6))
    rs, ts = (1e-3, 1e-3) if robot_std is None else robot_std
    v_rot, v_trans = max(rs**2, _VAR_FLOOR), max(ts**2, _VAR_FLOOR)
    X, Y = np.asarray(X0, dtype=np.float64), np.asarray(Y0, dtype=np.float64)
    C = prob.poses(X, Y, xi)
    behind = prob.behind(C)
    if np.any(behind):
        bad = int(np.flatnonzero(behind)[0])
        raise BehindCameraError(f"pixels: view {bad} has target points on or behind the camera's plane (Z <= 0) at "
                                f"the start X0, Y0; a {model_of(k)} camera (intrinsics of {k.size} numbers) sees only "
                                "points in front of it (Z > 0)")  # fmt: skip
    e, geom = prob.residuals(C)
    s2 = max(float(np.sum(e * e)) / dof if pixel_std is None else float(pixel_std) ** 2, 1e-12)
    # the per-view normals and the pair Jacobians of the current state (they do not depend on the noise levels)
    M, g = prob.normals(e, geom)
    J, G = pm.pair_jacobians(C, X, configuration)
    mu = 1e-6
    it = 0
    for ml_round in range(_ML_ROUNDS):
        still = 0
        for _ in range(_MAX_ITER):
            it += 1
            Lam = _robot_precision(v_rot, v_trans)
            f0 = _cost(e, xi, s2, Lam)
            Htt, Htx, Hxx, bt, bx = _blocks(M, g, J, G, xi, s2, Lam)
            I6 = np.eye(6)
            for _ in range(12):
                # Levenberg-Marquardt damping of every diagonal; the view twists eliminated (Schur complement)
                Hxx_inv = np.linalg.inv(Hxx + mu * np.diagonal(Hxx, axis1=1, axis2=2)[:, :, None] * I6)
                S, K = _schur(Htt + mu * np.diag(np.diag(Htt)), Htx, Hxx_inv)
                dt = np.linalg.solve(S, bt - (K @ bx[..., None]).sum(axis=0)[:, 0])
                dxi = (Hxx_inv @ (bx - (np.swapaxes(Htx, 1, 2) @ dt))[..., None])[..., 0]
                X1, Y1, xi1 = _exp_right(X, dt[:6]), _exp_right(Y, dt[6:]), xi + dxi
                C1 = prob.poses(X1, Y1, xi1)
                e1, geom1 = prob.residuals(C1)
                f1 = _cost(e1, xi1, s2, Lam)
                if f1 <= f0:
                    break
                mu *= 10.0
            else:
                f1 = f0  # no step lowers the cost: at the minimum for these levels
            if f1 < f0:
                X, Y, xi, C, e, geom = X1, Y1, xi1, C1, e1, geom1
                mu = max(mu / 10.0, 1e-9)
                M, g = prob.normals(e, geom)
                J, G = pm.pair_jacobians(C, X, configuration)
            # X and Y still: their step is far below their uncertainty (the reduced information S)
            still = still + 1 if f1 >= f0 or float(dt @ S @ dt) < _STEP_TOL else 0
            if ml_round:
                # the levels of the marginal likelihood are kept while X and Y settle at them
                if still:
                    break
                continue
            # EM update of the noise levels: the posterior covariance of every xi_i is its block of the normal matrix
            GT = np.swapaxes(G, 1, 2)
            GMG = GT @ M @ G
            Pxi = np.linalg.inv(GMG / s2 + Lam)
            s2_new = max((float(np.sum(e * e)) + float(np.sum(GMG * np.swapaxes(Pxi, 1, 2)))) / dof, 1e-12)
            d = np.diagonal(Pxi, axis1=1, axis2=2)
            v_rot_new = max(float(np.sum(xi[:, :3] ** 2) + np.sum(d[:, :3])) / (3 * n), _VAR_FLOOR)
            v_trans_new = max(float(np.sum(xi[:, 3:] ** 2) + np.sum(d[:, 3:])) / (3 * n), _VAR_FLOOR)
            moved = _moved((s2_new, v_rot_new, v_trans_new), (s2, v_rot, v_trans))
            s2, v_rot, v_trans = s2_new, v_rot_new, v_trans_new
            if still and (moved < _EM_SETTLE or still >= _STILL_ITER):
                break
        # where EM creeps (a weakly determined level), jump to the maximum of the restricted marginal likelihood
        # and go on from there unless it is where EM stopped
        levels = _levels(M, g, e, J, G, xi, 2 * prob.n_pts, (s2, v_rot, v_trans))
        moved = _moved(levels, (s2, v_rot, v_trans))
        s2, v_rot, v_trans = levels
        if moved < _EM_SETTLE:
            break
    # covariance of (dx, dy): the Schur complement of the view twists in the normal matrix at the solution
    Htt, Htx, Hxx, _, _ = _blocks(M, g, J, G, xi, s2, _robot_precision(v_rot, v_trans))
    S, _ = _schur(Htt, Htx, np.linalg.inv(Hxx))
    cov = np.linalg.pinv(0.5 * (S + S.T), hermitian=True)
    rms = math.sqrt(float(np.sum(e * e)) / max(prob.n_pts, 1))
    return PixelFit(X=X, Y=Y, cov=cov, pixel_std=math.sqrt(s2), robot_rot_std_rad=math.sqrt(v_rot),
                    robot_trans_std_m=math.sqrt(v_trans), robot_twists=xi, rms_px=rms, n_iter=it)  # fmt: skip
