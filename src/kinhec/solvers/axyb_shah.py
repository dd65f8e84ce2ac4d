"""Shah: robot-world/hand-eye calibration ``A X = Y B``, rotations from one 9x9 SVD, then translations.

Reference
---------
M. Shah, "Solving the robot-world/hand-eye calibration problem using the
Kronecker product," *ASME J. Mechanisms and Robotics* 5(3), 2013.

Equations implemented.  With the column-major vectorisation ``vec`` (so that
``vec(P M Q) = (Q^T (x) P) vec(M)``), pose pair ``i`` gives::

    R_A,i R_X = R_Y R_B,i   ->   R_Y = R_A,i R_X R_B,i^T
                            ->   (R_B,i (x) R_A,i) vec(R_X) = vec(R_Y)
    K = sum_i R_B,i (x) R_A,i   ->   K vec(R_X) = N vec(R_Y)

Noise-free ``K`` has rank one; ``vec(R_X)`` and ``vec(R_Y)`` are its first
right and left singular vectors (``K = U S V^T``: ``v_1``, ``u_1``), each known
up to a common scale and sign, which the normalisation
``proj_SO(3)(sign(det M) M)`` removes.  The translations follow from the
rotations by linear least squares over all pairs::

    R_A,i t_X + t_A,i = R_Y t_B,i + t_Y   ->   [R_A,i  -I] (t_X, t_Y) = R_Y t_B,i - t_A,i

Rotations are thus estimated without the translations (two stages), unlike
:mod:`kinhec.solvers.axyb_li_kronecker`.
"""

from __future__ import annotations

import numpy as np

from kinhec.solvers import _common as c

__all__ = ["shah", "shah_kernel"]

CITATION = (
    'M. Shah, "Solving the robot-world/hand-eye calibration problem using the Kronecker product," '
    "ASME J. Mechanisms and Robotics 5(3), 2013."
)


def shah_kernel(A: np.ndarray, B: np.ndarray):
    RA, RB = A[:, :3, :3], B[:, :3, :3]
    c.check_rotation_axes(c.relative_rotvecs_of_poses(RA), "shah", "the motions between the poses A_abs")
    K = np.einsum("nij,nkl->ikjl", RB, RA).reshape(9, 9)
    U, _, Vt = np.linalg.svd(K)
    R_X = c.normalize_rotation(Vt[0].reshape(3, 3).T, "shah", "vec(R_X)")
    R_Y = c.normalize_rotation(U[:, 0].reshape(3, 3).T, "shah", "vec(R_Y)")
    n = A.shape[0]
    C = np.zeros((n, 3, 6))
    C[:, :, :3] = RA
    C[:, :, 3:] = -np.eye(3)
    d = B[:, :3, 3] @ R_Y.T - A[:, :3, 3]
    t = c.lstsq(C.reshape(-1, 6), d.reshape(-1))
    return c.transform(R_X, t[:3]), c.transform(R_Y, t[3:])


def shah(A_abs, B_abs):
    """Solve ``A_i X = Y B_i`` with the Kronecker-product method of Shah (2013).

    Parameters
    ----------
    A_abs : array_like, shape (N, 4, 4)
        Absolute flange poses ``T_base_ee`` [m], N >= 3.
    B_abs : array_like, shape (N, 4, 4)
        The paired camera measurements: ``inv(T_cam_target)`` (eye-in-hand) or
        ``T_cam_target`` (eye-to-hand).

    Returns
    -------
    X : ndarray, shape (4, 4)
        ``T_ee_cam`` (eye-in-hand) or ``T_ee_marker`` (eye-to-hand) [m].
    Y : ndarray, shape (4, 4)
        ``T_base_world`` (eye-in-hand: the board or VO origin) or
        ``T_base_cam`` (eye-to-hand) [m].

    Raises
    ------
    InputError
        Bad shapes, non-finite values, non-orthonormal rotations, N < 3.
    DegenerateMotionError
        The flange rotations all differ by rotations about one axis.
    """
    A, B = c.check_pairs(A_abs, B_abs)
    return shah_kernel(A, B)
