"""Park-Martin: rotation as the Procrustes fit of the rotation logarithms, then translation.

Reference
---------
F. C. Park and B. J. Martin, "Robot sensor calibration: solving AX = XB on the
Euclidean group," *IEEE Trans. Robotics and Automation* 10(5), 1994.

Equations implemented (motion ``k``; ``log`` is the SO(3) logarithm as a
rotation vector)::

    R_A = R_X R_B R_X^T   =>   alpha_k = R_X beta_k,   alpha_k = log R_A,k,  beta_k = log R_B,k
    M = sum_k beta_k alpha_k^T
    R_X = (M^T M)^(-1/2) M^T                       (Park-Martin, the polar factor of M^T)
    (R_A - I) t_X = R_X t_B - t_A                  (least squares over all motions)

``(M^T M)^(-1/2) M^T`` is evaluated through the SVD ``M^T = U S V^T`` as
``U V^T`` (with the determinant forced to +1), which is the same matrix when
``M`` has full rank and stays defined when it does not.  The logarithms of
a motion are taken with consistent quaternion signs
(:func:`kinhec.solvers._common.motion_quats`), so that a motion of nearly
180 deg does not get opposite axes on its two sides.
"""

from __future__ import annotations

import numpy as np

from kinhec.solvers import _common as c

__all__ = ["park_martin", "park_martin_kernel", "rotation_park_martin"]

CITATION = (
    'F. C. Park and B. J. Martin, "Robot sensor calibration: solving AX = XB on the Euclidean group," '
    "IEEE Trans. Robotics and Automation 10(5), 1994."
)


def rotation_park_martin(alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Rotation(s) ``R`` minimising ``sum |alpha - R beta|^2``; batched over leading axes.

    ``alpha``, ``beta``: (..., K, 3).
    """
    Mt = np.swapaxes(alpha, -1, -2) @ beta  # sum_k alpha_k beta_k^T = M^T
    return c.project_to_so3(Mt)


def park_martin_kernel(A: np.ndarray, B: np.ndarray, *, check_axes: bool = True) -> np.ndarray:
    qA, qB = c.motion_quats(A, B)
    alpha = c.rotvecs_from_quats(qA)
    beta = c.rotvecs_from_quats(qB)
    if check_axes:
        c.check_rotation_axes(alpha, "park_martin")
    R_X = rotation_park_martin(alpha, beta)
    t_X = c.translation_axxb(A, B, R_X)
    return c.transform(R_X, t_X)


def park_martin(A, B) -> np.ndarray:
    """Solve ``A X = X B`` with the method of Park and Martin (1994).

    Parameters
    ----------
    A : array_like, shape (N, 4, 4)
        Relative flange motions ``inv(A_i) A_j`` (``A_i = T_base_ee``), N >= 2.
    B : array_like, shape (N, 4, 4)
        The matching relative camera motions ``inv(B_i) B_j``.

    Returns
    -------
    X : ndarray, shape (4, 4)
        Hand-eye transform (``T_ee_cam`` eye-in-hand, ``T_ee_marker`` eye-to-hand) [m].

    Raises
    ------
    InputError
        Bad shapes, non-finite values, non-orthonormal rotations, N < 2.
    DegenerateMotionError
        All rotation axes of ``A`` parallel (or no rotation at all).
    """
    A, B = c.check_motions(A, B)
    return park_martin_kernel(A, B)
