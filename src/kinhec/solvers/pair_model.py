"""First-order measurement model of the ``A_i X = Y B_i`` pose pairs, as the generator draws them.

Used by the Cramér-Rao bound (:mod:`kinhec.evaluate.bounds`) and by the
maximum-likelihood solver (:mod:`kinhec.solvers.he_ml`).  Everything is
written for the *camera measurement* ``C_i = T_cam_target`` (eye-in-hand
``C_i = inv(B_i)``, eye-to-hand ``C_i = B_i``), because that is the pose the
generator perturbs (:mod:`kinhec.models.noise`).

Coordinates
-----------
The error of a camera pose is the right twist ``rho`` (rotation first) with
``C_meas = C exp(rho)``, i.e. expressed in the target frame.  The generator's
``camera_se3_gaussian`` rotates on the right in the target frame (``R exp(w)``)
and adds ``e`` to the position in the camera frame, so to first order
``rho = (w, R^T e)`` and its covariance is
``blockdiag(s_r^2 I, R^T diag(s_xy^2, s_xy^2, s_z^2) R)``.

Parameters and Jacobians (right perturbations ``X exp(dx)``, ``Y exp(dy)``)
---------------------------------------------------------------------------
eye-in-hand, ``C = inv(X) inv(A) Y``::

    C(dx, dy, xi) = exp(-dx) exp(-Ad(inv X) xi) C exp(dy)
                  = C exp(dy - Ad(inv C) dx - Ad(inv C inv X) xi)

eye-to-hand, ``C = inv(Y) A X``::

    C(dx, dy, xi) = C exp(dx + Ad(inv X) xi - Ad(inv C) dy)

with ``xi`` the robot's flange-frame twist noise (``A_meas = A exp(xi)``,
:func:`kinhec.models.noise.robot_se3_gaussian`).  Hence ``d rho / d(dx, dy)`` is
``[-Ad(inv C), I]`` (eye-in-hand) or ``[I, -Ad(inv C)]`` (eye-to-hand), and
the robot noise enters through ``G = -Ad(inv(C) inv(X))`` or ``Ad(inv X)``.
A monocular scale ``s`` multiplies the camera translation: with the metric
translation ``t / s`` the derivative with respect to ``log s`` is
``(0, R^T t)`` (the translation grows along itself).

``Ad(T)`` of ``T = (R, t)`` acting on twists ``(w, v)`` is
``[[R, 0], [hat(t) R, R]]``.
"""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3

__all__ = [
    "CONFIGURATIONS",
    "adjoint",
    "camera_poses",
    "predicted_camera_poses",
    "pair_jacobians",
    "camera_covariance",
    "robot_covariance",
    "residuals",
    "pnp_unit_covariance",
    "inverse_cholesky",
    "XYCovariance",
]

CONFIGURATIONS = ("eye_in_hand", "eye_to_hand")


class XYCovariance:
    """The ``cov_X`` / ``cov_Y`` blocks of a joint covariance ``cov`` over the right perturbations ``(X, Y, ...)``."""

    cov: np.ndarray

    @property
    def cov_X(self) -> np.ndarray:
        """Covariance (6, 6) of the right perturbation of ``X``."""
        return self.cov[:6, :6]

    @property
    def cov_Y(self) -> np.ndarray:
        """Covariance (6, 6) of the right perturbation of ``Y``."""
        return self.cov[6:12, 6:12]


def adjoint(T: np.ndarray) -> np.ndarray:
    """Adjoint ``(..., 6, 6)`` of poses ``(..., 4, 4)`` acting on twists ``(omega, v)``."""
    R = T[..., :3, :3]
    t = T[..., :3, 3]
    out = np.zeros(T.shape[:-2] + (6, 6))
    out[..., :3, :3] = R
    out[..., 3:, 3:] = R
    # hat(t) @ R, row by row: row i of hat(t) R is t x (column-wise) ...; written with cross products of rows
    tx, ty, tz = t[..., 0, None], t[..., 1, None], t[..., 2, None]
    r0, r1, r2 = R[..., 0, :], R[..., 1, :], R[..., 2, :]
    out[..., 3, :3] = ty * r2 - tz * r1
    out[..., 4, :3] = tz * r0 - tx * r2
    out[..., 5, :3] = tx * r1 - ty * r0
    return out


_EYE6 = np.eye(6)


def _inv(T: np.ndarray) -> np.ndarray:
    return se3.invert_transform(T, check=False)


def camera_poses(B: np.ndarray, configuration: str) -> np.ndarray:
    """``C = T_cam_target`` of the pairs: ``inv(B)`` eye-in-hand, ``B`` eye-to-hand, shape ``(N, 4, 4)``."""
    return _inv(B) if configuration == "eye_in_hand" else np.array(B, dtype=np.float64)


def predicted_camera_poses(A: np.ndarray, X: np.ndarray, Y: np.ndarray, configuration: str) -> np.ndarray:
    """``C`` predicted by ``X`` and ``Y`` from the flange poses ``A`` (N, 4, 4)."""
    if configuration == "eye_in_hand":
        return _inv(A @ X) @ Y
    return _inv(Y) @ A @ X


def pair_jacobians(C: np.ndarray, X: np.ndarray, configuration: str, C_inv: np.ndarray | None = None,
                   robot: bool = True):  # fmt: skip
    """Jacobians of the camera error ``rho`` at the poses ``C`` (N, 4, 4).

    Only the inverses of the poses enter: pass them as ``C_inv`` (and ``C=None``) when they are at hand.
    ``robot=False`` leaves ``G`` out (None).

    Returns
    -------
    J : ndarray, shape (N, 6, 12)
        ``d rho / d(dx, dy)`` for right perturbations of ``X`` and ``Y``.
    G : ndarray, shape (N, 6, 6)
        ``d rho / d xi`` for the flange-frame robot twist ``xi``.
    """
    AdCi = adjoint(_inv(C) if C_inv is None else C_inv)
    n = AdCi.shape[0]
    I6 = _EYE6
    J = np.empty((n, 6, 12))
    if configuration == "eye_in_hand":
        J[:, :, :6] = -AdCi
        J[:, :, 6:] = I6
    else:
        J[:, :, :6] = I6
        J[:, :, 6:] = -AdCi
    if not robot:
        return J, None
    AdXi = adjoint(_inv(X))
    G = -AdCi @ AdXi if configuration == "eye_in_hand" else np.broadcast_to(AdXi, (n, 6, 6)).copy()
    return J, G


def inverse_cholesky(S: np.ndarray) -> np.ndarray:
    """``inv(L)`` of the Cholesky factors ``S = L L^T`` of symmetric positive definite matrices ``(..., m, m)``.

    ``inv(L)`` whitens (``inv(L) r`` has unit covariance) and ``inv(S) = inv(L)^T inv(L)``.  The triangular
    inverse is a forward substitution over all matrices at once, row by row, about twice as fast for small
    ``m`` as a general inverse, which solves each matrix separately.

    Raises
    ------
    numpy.linalg.LinAlgError
        A matrix is not positive definite.
    """
    shape = S.shape
    m = shape[-1]
    L = np.linalg.cholesky(S).reshape(-1, m, m)
    Lt = L.transpose(1, 2, 0).copy()  # (m, m, n): rows of all matrices as contiguous arrays
    out = np.zeros(Lt.shape)
    d = 1.0 / L.diagonal(axis1=1, axis2=2).T  # (m, n)
    nd = -d
    out[0, 0] = d[0]
    for i in range(1, m):
        # row i of inv(L): -(1 / L_ii) sum_k L_ik inv(L)_k,:i over the rows above
        out[i, :i] = nd[i] * np.einsum("kn,kjn->jn", Lt[i, :i], out[:i, :i])
        out[i, i] = d[i]
    return out.transpose(2, 0, 1).reshape(shape)


def pnp_unit_covariance(C: np.ndarray, x: np.ndarray, y: np.ndarray, iz: np.ndarray, weights=None) -> np.ndarray:
    """Covariance of ``rho`` for PnP with unit focal length and unit pixel noise, shape ``x.shape[:-1] + (6, 6)``.

    ``x, y`` (normalised image coordinates) and ``iz`` (inverse depth) of the target points seen from the
    poses ``C`` (N, 4, 4), shape ``(N, ..., P)``; ``weights`` (same shape) 1 for the points a detector
    reports, 0 for the others.  The pinhole Jacobian of ``(u, v) / f`` with respect to the camera-frame left
    twist of the pose (:mod:`kinhec.models.pnp`) is ``J_u = (-x y, 1 + x^2, -y, 1/z, 0, -x/z)`` and
    ``J_v = (-(1 + y^2), x y, x, 0, 1/z, -y/z)``; the information ``sum J^T J`` is inverted and carried into
    the target frame by ``Ad(inv C)``.  Times ``(pixel std / f)^2`` it is the first-order PnP covariance.
    """
    # the transposed Jacobians of all points, u rows then v rows: (..., 6, 2P), so that H = JT JT^T
    P = x.shape[-1]
    JT = np.zeros(x.shape[:-1] + (6, 2 * P))
    xy, xiz, yiz = x * y, x * iz, y * iz
    u, v = JT[..., :P], JT[..., P:]
    u[..., 0, :], u[..., 1, :], u[..., 2, :], u[..., 3, :], u[..., 5, :] = -xy, 1.0 + x * x, -y, iz, -xiz
    v[..., 0, :], v[..., 1, :], v[..., 2, :], v[..., 4, :], v[..., 5, :] = -(1.0 + y * y), xy, x, iz, -yiz
    if weights is not None:
        w = np.sqrt(np.asarray(weights, dtype=np.float64))[..., None, :]
        u *= w
        v *= w
    H = JT @ np.swapaxes(JT, -1, -2)
    H += 1e-12 * np.einsum("...ii->...", H)[..., None, None] * np.eye(6)
    # Ad inv(H) Ad^T = M^T M with M = inv(L) Ad^T: every pose's blocks of inv(L) stacked as rows of one
    # product with its Ad^T
    n = C.shape[0]
    AdT = np.swapaxes(adjoint(_inv(C)), -1, -2)
    M = (inverse_cholesky(H).reshape(n, -1, 6) @ AdT).reshape(H.shape)
    return np.swapaxes(M, -1, -2) @ M


def scale_jacobian(C: np.ndarray) -> np.ndarray:
    """``d rho / d log(s)`` (N, 6) of a monocular scale multiplying the translations of ``C``."""
    out = np.zeros((C.shape[0], 6))
    out[:, 3:] = (np.swapaxes(C[:, :3, :3], 1, 2) @ C[:, :3, 3, None])[:, :, 0]
    return out


def camera_covariance(C: np.ndarray, rot_std: float, xy_std: float, z_std: float) -> np.ndarray:
    """Covariance (N, 6, 6) of ``rho`` under ``camera_se3_gaussian`` at the poses ``C``."""
    R = C[:, :3, :3]
    out = np.zeros((C.shape[0], 6, 6))
    out[:, :3, :3] = np.eye(3) * rot_std**2
    D = np.array([xy_std**2, xy_std**2, z_std**2])
    out[:, 3:, 3:] = np.einsum("nji,j,njk->nik", R, D, R)
    return out


def robot_covariance(G: np.ndarray, rot_std: float, trans_std: float) -> np.ndarray:
    """Covariance (N, 6, 6) of ``rho`` from the flange twist noise ``N(0, diag(rot^2 I, trans^2 I))``."""
    d = np.array([rot_std**2] * 3 + [trans_std**2] * 3)
    return np.einsum("nij,j,nkj->nik", G, d, G)


def residuals(C_meas: np.ndarray, C_pred: np.ndarray) -> np.ndarray:
    """Camera errors ``rho_i = log(inv(C_pred,i) C_meas,i)`` (N, 6)."""
    return fast_se3_log(_inv(C_pred) @ C_meas)


#: Flat indices (in a 4 x 4 pose's 16 entries) of ``R21, R02, R10`` and ``R12, R20, R01``: the skew part of ``R``.
_SKEW = (np.array([9, 2, 4]), np.array([6, 8, 1]))
#: Flat indices of the translation.
_TRANS = np.array([3, 7, 11])
#: Index cycles of the cross product: ``(a x b)_i = a_(i+1) b_(i+2) - a_(i+2) b_(i+1)`` (rows of ``(n, 3)`` arrays).
_NEXT, _PREV = np.array([1, 2, 0]), np.array([2, 0, 1])


def fast_se3_log(T: np.ndarray) -> np.ndarray:
    """:func:`kinhec.geometry.se3.se3_log` of ``(N, 4, 4)`` poses from the skew part of ``R`` (rotations near pi by the general routine).

    ``sin(theta) u`` is the skew part of ``R`` and ``cos(theta) = (tr R - 1) / 2``; ``theta = atan2``
    of the two, exact to round-off below about 170 deg.
    """
    n = T.shape[0]
    F = T.reshape(n, 16)
    s = (F[:, _SKEW[0]] - F[:, _SKEW[1]]) * 0.5
    cth = 0.5 * (F[:, 0] + F[:, 5] + F[:, 10] - 1.0)
    sn = np.sqrt(np.add.reduce(s * s, axis=-1))  # (the norm of the rows)
    th = np.arctan2(sn, cth)
    small = sn < 1e-12
    if small.any():
        w = s * np.where(small, 1.0, th / np.where(small, 1.0, sn))[:, None]
    else:  # (the same values without the selections)
        w = s * (th / sn)[:, None]
    far = cth < -0.98
    if far.any():
        w[far] = se3.so3_log(T[far, :3, :3], check=False)
        th = np.sqrt(np.add.reduce(w * w, axis=-1))
    t = F[:, _TRANS]
    lo = th < 1e-4
    if lo.any():
        tt = np.where(lo, 1.0, th)
        half = tt / 2
        D = np.where(lo, 1.0 / 12 + th**2 / 720, 1.0 / (tt * tt) - np.cos(half) / (2 * tt * np.sin(half)))
    else:
        half = th / 2
        D = 1.0 / (th * th) - np.cos(half) / (2 * th * np.sin(half))
    wn, wp = w[:, _NEXT], w[:, _PREV]
    wt = wn * t[:, _PREV] - wp * t[:, _NEXT]  # w x t
    out = np.empty((n, 6))
    out[:, :3] = w
    out[:, 3:] = t - 0.5 * wt + D[:, None] * (wn * wt[:, _PREV] - wp * wt[:, _NEXT])
    return out
