"""Li-Wang-Wu: ``A X = Y B`` with rotations and translations in one Kronecker linear system.

Reference
---------
A. Li, L. Wang and D. Wu, "Simultaneous robot-world and hand-eye calibration
using dual-quaternions and Kronecker product," *Int. J. Physical Sciences*
5(10), 2010.

Li et al. propose two solutions that estimate rotations and translations
simultaneously instead of one after the other, one written with dual
quaternions and one with the Kronecker product.  This module implements the
Kronecker-product solution (the one OpenCV's ``CALIB_ROBOT_WORLD_HAND_EYE_LI``
implements as well).

With the row-major vectorisation ``vec`` (``vec(P M Q) = (P (x) Q^T) vec(M)``),
pose pair ``i`` gives 12 linear equations in the 24 unknowns
``z = (vec(R_X), vec(R_Y), t_X, t_Y)``::

    R_A R_X - R_Y R_B = 0            ->  (R_A (x) I_3) vec(R_X) - (I_3 (x) R_B^T) vec(R_Y) = 0
    R_A t_X + t_A = R_Y t_B + t_Y    ->  -(I_3 (x) t_B^T) vec(R_Y) + R_A t_X - t_Y       = -t_A

stacked over all pairs (``12N x 24``) and solved in the least-squares sense,
after which ``R_X`` and ``R_Y`` are projected onto SO(3)
(``proj(sign(det M) M)``) and ``t_X``, ``t_Y`` are taken from the same
solution.

Unlike Shah's two-stage method (:mod:`kinhec.solvers.axyb_shah`), the rotation
estimate here also draws on the translation equations, so the two methods
agree on exact data and differ on noisy data.
"""

from __future__ import annotations

import numpy as np

from kinhec.solvers import _common as c

__all__ = ["li_kronecker"]

CITATION = (
    'A. Li, L. Wang and D. Wu, "Simultaneous robot-world and hand-eye calibration using '
    'dual-quaternions and Kronecker product," Int. J. Physical Sciences 5(10), 2010.'
)


def _li_kronecker(A: np.ndarray, B: np.ndarray):
    RA, RB = A[:, :3, :3], B[:, :3, :3]
    c.check_rotation_axes(c.relative_rotvecs_of_poses(RA), "li_kronecker", "the motions between the poses A_abs")
    n = A.shape[0]
    I3 = np.broadcast_to(np.eye(3), (n, 3, 3))
    M = np.zeros((n, 12, 24))
    M[:, :9, :9] = c.kron_rows(RA, I3)
    M[:, :9, 9:18] = -c.kron_rows(I3, np.swapaxes(RB, -1, -2))
    M[:, 9:, 9:18] = -c.kron_rows(I3, B[:, None, :3, 3])
    M[:, 9:, 18:21] = RA
    M[:, 9:, 21:24] = -np.eye(3)
    rhs = np.zeros((n, 12))
    rhs[:, 9:] = -A[:, :3, 3]
    z = c.lstsq(M.reshape(-1, 24), rhs.reshape(-1))
    R_X = c.normalize_rotation(z[:9].reshape(3, 3), "li_kronecker", "vec(R_X)")
    R_Y = c.normalize_rotation(z[9:18].reshape(3, 3), "li_kronecker", "vec(R_Y)")
    return c.transform(R_X, z[18:21]), c.transform(R_Y, z[21:24])


def li_kronecker(A_abs, B_abs):
    """Solve ``A_i X = Y B_i`` with the simultaneous Kronecker method of Li, Wang and Wu (2010).

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
        ``T_base_world`` (eye-in-hand) or ``T_base_cam`` (eye-to-hand) [m].

    Raises
    ------
    InputError
        Bad shapes, non-finite values, non-orthonormal rotations, N < 3.
    DegenerateMotionError
        The flange rotations all differ by rotations about one axis.
    """
    A, B = c.check_pairs(A_abs, B_abs)
    return _li_kronecker(A, B)
