"""Horaud-Dornaika: rotation as the smallest eigenvector of a quaternion quadratic form.

Reference
---------
R. Horaud and F. Dornaika, "Hand-eye calibration," *Int. J. Robotics Research*
14(3), 1995.

Equations implemented (the linear, closed-form variant of the paper; its
simultaneous non-linear variant is what :func:`kinhec.solvers.refine_lm` does
on SE(3))::

    q_A * q_X = q_X * q_B    <=>   (L(q_A) - R(q_B)) q_X = 0
    q_X = argmin_{|q| = 1} q^T S q,   S = sum_k (L(q_A,k) - R(q_B,k))^T (L(q_A,k) - R(q_B,k))
    (R_A - I) t_X = R_X t_B - t_A             (least squares over all motions)

``L(q) p = q * p`` and ``R(q) p = p * q`` are the left and right
Hamilton-product matrices; ``q_X`` is the eigenvector of the 4x4 matrix ``S``
with the smallest eigenvalue.  Both quaternions of a motion are taken with
``w >= 0``: the two rotations have the same angle, so this makes their signs
agree, which the linear equation requires (near 180 deg the sign is aligned
with a first estimate, :func:`kinhec.solvers._common.motion_quats`).
"""

from __future__ import annotations

import numpy as np

from kinhec.solvers import _common as c

__all__ = ["horaud_dornaika", "horaud_dornaika_kernel"]

CITATION = (
    'R. Horaud and F. Dornaika, "Hand-eye calibration," Int. J. Robotics Research 14(3), 1995.'
)


def quat_left(q: np.ndarray) -> np.ndarray:
    """Matrices (..., 4, 4) with ``L(q) p = q * p`` (Hamilton, w first)."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([w, -x, -y, -z], -1),
            np.stack([x, w, -z, y], -1),
            np.stack([y, z, w, -x], -1),
            np.stack([z, -y, x, w], -1),
        ],
        -2,
    )


def quat_right(q: np.ndarray) -> np.ndarray:
    """Matrices (..., 4, 4) with ``R(q) p = p * q`` (Hamilton, w first)."""
    w, x, y, z = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([w, -x, -y, -z], -1),
            np.stack([x, w, z, -y], -1),
            np.stack([y, -z, w, x], -1),
            np.stack([z, y, -x, w], -1),
        ],
        -2,
    )


def horaud_dornaika_kernel(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    qA, qB = c.motion_quats(A, B)
    c.check_rotation_axes(c.rotvecs_from_quats(qA), "horaud_dornaika")
    D = quat_left(qA) - quat_right(qB)
    S = np.einsum("nki,nkj->ij", D, D)
    _, V = np.linalg.eigh(S)
    R_X = c.se3.matrix_from_quaternion(V[:, 0], normalize=True)
    t_X = c.translation_axxb(A, B, R_X)
    return c.transform(R_X, t_X)


def horaud_dornaika(A, B) -> np.ndarray:
    """Solve ``A X = X B`` with the closed-form quaternion method of Horaud and Dornaika (1995).

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
    return horaud_dornaika_kernel(A, B)
