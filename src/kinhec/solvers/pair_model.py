"""First-order measurement model of the ``A_i X = Y B_i`` pose pairs, as the generator draws them.

Used by the Cramér-Rao bound (:mod:`kinhec.bounds`) and by the
maximum-likelihood solver (:mod:`kinhec.solvers.he_ml`).  Everything is
written for the *camera measurement* ``C_i = T_cam_target`` (eye-in-hand
``C_i = inv(B_i)``, eye-to-hand ``C_i = B_i``), because that is the pose the
generator perturbs (:mod:`kinhec.noise`).

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
:func:`kinhec.noise.robot_se3_gaussian`).  Hence ``d rho / d(dx, dy)`` is
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

from kinhec import se3

__all__ = [
    "CONFIGURATIONS",
    "adjoint",
    "camera_poses",
    "predicted_camera_poses",
    "pair_jacobians",
    "camera_covariance",
    "robot_covariance",
    "residuals",
]

CONFIGURATIONS = ("eye_in_hand", "eye_to_hand")


def adjoint(T: np.ndarray) -> np.ndarray:
    """Adjoint ``(..., 6, 6)`` of poses ``(..., 4, 4)`` acting on twists ``(omega, v)``."""
    R = T[..., :3, :3]
    t = T[..., :3, 3]
    out = np.zeros(T.shape[:-2] + (6, 6))
    out[..., :3, :3] = R
    out[..., 3:, 3:] = R
    out[..., 3:, :3] = se3.hat(t) @ R
    return out


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


def pair_jacobians(C: np.ndarray, X: np.ndarray, configuration: str):
    """Jacobians of the camera error ``rho`` at the poses ``C`` (N, 4, 4).

    Returns
    -------
    J : ndarray, shape (N, 6, 12)
        ``d rho / d(dx, dy)`` for right perturbations of ``X`` and ``Y``.
    G : ndarray, shape (N, 6, 6)
        ``d rho / d xi`` for the flange-frame robot twist ``xi``.
    """
    n = C.shape[0]
    AdCi = adjoint(_inv(C))
    I6 = np.broadcast_to(np.eye(6), (n, 6, 6))
    J = np.empty((n, 6, 12))
    AdXi = adjoint(_inv(X))
    if configuration == "eye_in_hand":
        J[:, :, :6] = -AdCi
        J[:, :, 6:] = I6
        G = -AdCi @ AdXi
    else:
        J[:, :, :6] = I6
        J[:, :, 6:] = -AdCi
        G = np.broadcast_to(AdXi, (n, 6, 6)).copy()
    return J, G


def scale_jacobian(C: np.ndarray) -> np.ndarray:
    """``d rho / d log(s)`` (N, 6) of a monocular scale multiplying the translations of ``C``."""
    out = np.zeros((C.shape[0], 6))
    out[:, 3:] = np.einsum("nji,nj->ni", C[:, :3, :3], C[:, :3, 3])
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
    return se3.se3_log(_inv(C_pred) @ C_meas, check=False)
