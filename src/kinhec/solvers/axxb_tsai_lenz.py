"""Tsai-Lenz: rotation from modified Rodrigues vectors, then translation by least squares.

Reference
---------
R. Y. Tsai and R. K. Lenz, "A new technique for fully autonomous and efficient
3D robotics hand/eye calibration," *IEEE Trans. Robotics and Automation* 5(3),
1989.

Equations implemented (motion ``k`` of ``A X = X B``; ``theta``, ``n``: angle
and unit axis of a rotation)::

    P_A = 2 sin(theta_A / 2) n_A,   P_B = 2 sin(theta_B / 2) n_B          (modified Rodrigues)
    skew(P_A + P_B) P'_X = P_B - P_A                                          (Tsai-Lenz eq. 12)
    P'_X = tan(theta_X / 2) n_X         -> q_X = (1, P'_X) / sqrt(1 + |P'_X|^2)   (eq. 14)
    (R_A - I) t_X = R_X t_B - t_A                                             (eq. 15)

Both linear systems are stacked over all motions (``3N x 3``) and solved in the
least-squares sense.  ``P_A`` and ``P_B`` are taken from quaternions with
consistent signs (``w >= 0``, aligned near 180 deg, see
:func:`kinhec.solvers._common.motion_quats`), so both sides of every motion
use the same sign of the rotation vector whatever the angle.  ``P'_X`` grows without bound as the
rotation of X approaches 180 deg, which is where the method loses accuracy.
"""

from __future__ import annotations

import numpy as np

from kinhec.solvers import _common as c

__all__ = ["tsai_lenz", "tsai_lenz_kernel"]

CITATION = (
    'R. Y. Tsai and R. K. Lenz, "A new technique for fully autonomous and efficient 3D robotics '
    'hand/eye calibration," IEEE Trans. Robotics and Automation 5(3), 1989.'
)


def tsai_lenz_kernel(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    qA, qB = c.motion_quats(A, B)
    c.check_rotation_axes(c.rotvecs_from_quats(qA), "tsai_lenz")
    P_A = 2.0 * qA[:, 1:]
    P_B = 2.0 * qB[:, 1:]
    M = c.skew(P_A + P_B).reshape(-1, 3)
    g = c.lstsq(M, (P_B - P_A).reshape(-1))
    q = np.concatenate([[1.0], g]) / np.sqrt(1.0 + g @ g)
    R_X = c.se3.matrix_from_quaternion(q)
    t_X = c.translation_axxb(A, B, R_X)
    return c.transform(R_X, t_X)


def tsai_lenz(A, B) -> np.ndarray:
    """Solve ``A X = X B`` with the method of Tsai and Lenz (1989).

    Parameters
    ----------
    A : array_like, shape (N, 4, 4)
        Relative flange motions ``inv(A_i) A_j`` (``A_i = T_base_ee``), N >= 2.
    B : array_like, shape (N, 4, 4)
        The matching relative camera motions ``inv(B_i) B_j`` (eye-in-hand
        ``B_i = inv(T_cam_target)``, eye-to-hand ``B_i = T_cam_target``).

    Returns
    -------
    X : ndarray, shape (4, 4)
        Hand-eye transform: ``T_ee_cam`` (eye-in-hand) or ``T_ee_marker``
        (eye-to-hand); translation in the units of the inputs [m].

    Raises
    ------
    InputError
        Bad shapes, non-finite values, non-orthonormal rotations, N < 2.
    DegenerateMotionError
        All rotation axes of ``A`` parallel (or no rotation at all).
    """
    A, B = c.check_motions(A, B)
    return tsai_lenz_kernel(A, B)
