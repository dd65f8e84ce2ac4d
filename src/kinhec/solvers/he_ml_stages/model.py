"""The pose model's glue for ``he_ml``: predicted camera poses, residuals with a monocular scale, SE(3) steps.

The measurement model itself (camera poses of a configuration, the pair
Jacobians, the scale direction) is :mod:`kinhec.solvers.pair_model`; this
module holds what every stage of ``he_ml`` shares on top of it.  ``C_i =
T_cam_target`` is the camera pose of pair ``i`` (eye-in-hand ``inv(B_i)``,
eye-to-hand ``B_i``); residuals are right twists ``(omega, v)`` [rad, m] of
``C_i`` against its prediction.
"""

from __future__ import annotations

import math

import numpy as np

from kinhec.geometry import se3
from kinhec.solvers import pair_model as pm

#: Fewest pairs for the robust stages (minimal sets, gate, flips, Student-t, drift); fewer pairs: plain ML.
ROBUST_MIN_PAIRS = 8
#: A weighted solve on whitened residuals stops once a step lowers their chi-square, or is predicted to lower it,
#: by about this or less (:func:`kinhec.solvers.gauss_newton.damped_gauss_newton`): the fitted parameters are then within about
#: ``sqrt(2e-4)``, 0.014, of their standard errors of the minimum.
WLS_COST_TOL = 1e-4


def mv(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Batched matrix-vector product ``M_n v_n``: (n, a, b) and (n, b) -> (n, a)."""
    return (M @ v[:, :, None])[:, :, 0]


def quad(r: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Batched quadratic forms ``r_n^T S_n r_n``: (n, k) and (n, k, k) -> (n,)."""
    return (mv(S, r) * r).sum(axis=1)


def project_so3(M: np.ndarray) -> np.ndarray:
    """Nearest rotations (..., 3, 3) to matrices ``M`` (..., 3, 3) in the Frobenius norm (SVD, determinant +1)."""
    U, _, Vt = np.linalg.svd(M)
    d = np.sign(np.linalg.det(U @ Vt))
    U = U.copy()
    U[..., :, 2] *= d[..., None]
    return U @ Vt


def nearest_rotations(M: np.ndarray) -> np.ndarray:
    """:func:`project_so3` of a stack ``(H, 3, 3)`` of matrices with positive determinants, without an SVD.

    The nearest rotation of such a matrix is its orthogonal polar factor, reached by scaled Newton steps
    ``X <- (g X + inv(X)^T / g) / 2`` with ``g = (|inv(X)|_F / |X|_F)^(1/2)`` (Higham's iteration, quadratic
    near the factor), here on the nine entries as rows of ``(9, H)`` arrays with the inverse from the
    cofactors: on stacks of a hundred matrices a third of the cost of numpy's batched SVD, the same
    rotations to a few units of round-off.  Matrices whose determinant is not positive or whose steps do not
    settle (singular ones) go to :func:`project_so3`.
    """
    H = M.shape[0]
    X = np.ascontiguousarray(M, dtype=np.float64).reshape(H, 9).T.copy()
    ok = np.zeros(H, dtype=bool)
    det0 = None
    for _ in range(_POLAR_STEPS):
        a, b, c, d, e, f, g, h, i = X
        # the cofactors (rows: cross products of the rows), det(X) inv(X)^T
        C = np.stack([e * i - f * h, f * g - d * i, d * h - e * g, c * h - b * i, a * i - c * g, b * g - a * h,
                      b * f - c * e, c * d - a * f, a * e - b * d])  # fmt: skip
        det = a * C[0] + b * C[1] + c * C[2]
        if det0 is None:
            det0 = det
        with np.errstate(divide="ignore", invalid="ignore"):
            Y = C / det
            s = np.sqrt(np.sqrt(np.add.reduce(Y * Y) / np.add.reduce(X * X)))
        Xn = 0.5 * (s * X + Y / s)
        ok = np.abs(Xn - X).max(axis=0) <= 4e-15
        X = Xn
        if ok.all():
            break
    R = X.T.reshape(H, 3, 3)
    bad = ~(ok & np.isfinite(R).all(axis=(1, 2)) & (det0 > 0))
    if bad.any():
        R[bad] = project_so3(M[bad])
    return R


#: Most polar steps of :func:`nearest_rotations` (from a condition number of 1e3 about a dozen suffice).
_POLAR_STEPS = 30


def exp6(xi: np.ndarray) -> np.ndarray:
    """SE(3) exponential (4, 4) of one twist ``(omega, v)`` (6,) [rad, m].

    The :func:`kinhec.geometry.se3.se3_exp` formula, in scalars: a 4 x 4 product costs more than the arithmetic.
    """
    wx, wy, wz, vx, vy, vz = xi.tolist() if isinstance(xi, np.ndarray) else (float(v) for v in xi)
    th2 = wx * wx + wy * wy + wz * wz
    th = math.sqrt(th2)
    if th < 1e-6:
        a, b, cc = 1.0 - th2 / 6.0, 0.5 - th2 / 24.0, 1.0 / 6.0 - th2 / 120.0
    else:
        a, b, cc = math.sin(th) / th, (1.0 - math.cos(th)) / th2, (th - math.sin(th)) / (th2 * th)
    # R = I + a K + b K^2 and t = v + b K v + cc K^2 v, with K = hat(w) and K^2 = w w^T - th2 I
    xy, xz, yz = wx * wy, wx * wz, wy * wz
    kx, ky, kz = wy * vz - wz * vy, wz * vx - wx * vz, wx * vy - wy * vx
    wv = wx * vx + wy * vy + wz * vz
    return np.array([
        1.0 + b * (wx * wx - th2), -a * wz + b * xy, a * wy + b * xz, vx + b * kx + cc * (wx * wv - th2 * vx),
        a * wz + b * xy, 1.0 + b * (wy * wy - th2), -a * wx + b * yz, vy + b * ky + cc * (wy * wv - th2 * vy),
        -a * wy + b * xz, a * wx + b * yz, 1.0 + b * (wz * wz - th2), vz + b * kz + cc * (wz * wv - th2 * vz),
        0.0, 0.0, 0.0, 1.0,
    ]).reshape(4, 4)  # fmt: skip


def apply_step(X0: np.ndarray, Y0: np.ndarray, ls0: float, p: np.ndarray, with_scale: bool):
    """``X0 exp(p[:6])``, ``Y0 exp(p[6:12])`` and ``log s0 + p[12]`` (when ``with_scale``): right perturbations."""
    X = X0 @ exp6(p[:6])
    Y = Y0 @ exp6(p[6:12])
    ls = ls0 + (p[12] if with_scale else 0.0)
    return X, Y, ls


def predict(A: np.ndarray, X: np.ndarray, Y: np.ndarray, configuration: str) -> np.ndarray:
    """Predicted camera poses ``C_i`` (n, 4, 4) of flange poses ``A`` (n, 4, 4).

    :func:`kinhec.solvers.pair_model.predicted_camera_poses`: ``inv(A_i X) Y`` eye-in-hand, ``inv(Y) A_i X``
    eye-to-hand.
    """
    return pm.predicted_camera_poses(A, X, Y, configuration)


def residuals(Cm: np.ndarray, Cp: np.ndarray, log_s: float, log_s0: float | None = None,
              q: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Camera errors (n, 6) of ``Cm`` against the prediction ``Cp`` with scaled translation ``s t``, translations
    divided by ``s0``.

    The measured translation is ``s (t + e)``: comparing it with ``s t`` and dividing by the (fixed)
    current scale ``s0`` keeps the noise metric without the bias towards large ``s`` that dividing the
    measurement by the unknown ``s`` would bring.  ``q`` (n,): a log-scale offset per pair (a drifting
    scale, ``log s + q_i``).
    """
    return residuals_from_inverse(Cm, se3.invert_transform(Cp, check=False), log_s, log_s0, q)


#: Largest magnitude of a log scale whose exponential (and its inverse) a float holds with room to spare.
_LOG_S_MAX = 700.0


def residuals_from_inverse(Cm: np.ndarray, Cp_inv: np.ndarray, log_s: float, log_s0: float | None = None,
                           q: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """:func:`residuals` from the inverses of the predicted poses (scaling the prediction's translation by ``s``
    scales that of its inverse alike).  A scale beyond ``exp(+-700)`` (a trial step that far off) gives infinite
    residuals, which the minimisers reject as they do any step that does not lower the cost."""
    if q is None:
        if not -_LOG_S_MAX < log_s < _LOG_S_MAX:
            return np.full((Cm.shape[0], 6), np.inf)
        k = math.exp(log_s)
    else:
        lq = log_s + q
        if not np.all(np.abs(lq) < _LOG_S_MAX):
            return np.full((Cm.shape[0], 6), np.inf)
        k = np.exp(lq)[:, None]
    if q is None and k == 1.0:
        E = Cp_inv  # (metric: a product by 1 changes nothing)
    else:
        E = Cp_inv.copy()
        E[:, :3, 3] *= k
    r = pm.fast_se3_log(E @ Cm)
    k0 = math.exp(-(log_s if log_s0 is None else log_s0))
    if k0 != 1.0:
        r[:, 3:] *= k0
    return r


def fitted_jacobian(Cp: np.ndarray, J: np.ndarray, with_scale: bool) -> np.ndarray:
    """The residuals' Jacobian (n, 6, 12 or 13) in the fitted ``(dx, dy[, log s])`` at the predicted poses ``Cp``.

    ``J`` (n, 6, 12) from :func:`kinhec.solvers.pair_model.pair_jacobians`; the column of ``log s`` joins it
    when the scale is estimated.  The restricted variance components and the covariance both use it.
    """
    if not with_scale:
        return J
    return np.concatenate([J, pm.scale_jacobian(Cp)[:, :, None]], axis=2)
