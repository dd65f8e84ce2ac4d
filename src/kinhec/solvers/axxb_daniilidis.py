"""Daniilidis: rotation and translation at once from the screw motions, with dual quaternions.

Reference
---------
K. Daniilidis, "Hand-eye calibration using dual quaternions," *Int. J.
Robotics Research* 18(3), 1999. doi:10.1177/02783649922066213

Equations implemented.  A pose ``(R, t)`` is the unit dual quaternion
``q + eps q'`` with ``q`` the rotation quaternion and ``q' = 1/2 (0, t) * q``.
For motion ``k`` let ``a, a'`` be the vector parts of ``q_A, q'_A`` and
``b, b'`` those of ``q_B, q'_B`` (scalar parts with ``w >= 0``, so that the
screw angles of the two sides agree; aligned near 180 deg by
:func:`kinhec.solvers._common.motion_quats`).  ``A X = X B`` becomes, in the
unknowns ``x = (q_X, q'_X)`` (8 entries)::

    [ a - b     skew(a + b)     0        0          ]   [ q_X  ]
    [ a' - b'   skew(a' + b')   a - b    skew(a + b) ] . [ q'_X ] = 0        (Daniilidis eq. 31)

Stacked over the motions this is a ``6N x 8`` matrix ``T``.  Noise-free, its
null space is two-dimensional; ``x = l1 v7 + l2 v8`` with ``v7 = (u1, v1)``,
``v8 = (u2, v2)`` the right singular vectors of the two smallest singular
values, and ``(l1, l2)`` fixed by the unit-dual-quaternion constraints::

    |q_X| = 1,   q_X . q'_X = 0:
    l1^2 u1.v1 + l1 l2 (u1.v2 + u2.v1) + l2^2 u2.v2 = 0                    (eq. 34)
    l1^2 u1.u1 + 2 l1 l2 u1.u2 + l2^2 u2.u2 = 1                             (eq. 35)

Of the two directions that solve the quadratic, the one with the larger
rotation part is kept (the other is the spurious pure-dual solution).  The
quadratic is solved through the eigen-decomposition of its 2x2 form, which
stays well defined when the coefficient of ``l1^2`` vanishes.
"""

from __future__ import annotations

import numpy as np

from kinhec.util.errors import DegenerateMotionError
from kinhec.solvers import _common as c

__all__ = ["daniilidis", "daniilidis_kernel"]

CITATION = (
    'K. Daniilidis, "Hand-eye calibration using dual quaternions," Int. J. Robotics Research 18(3), '
    "1999. doi:10.1177/02783649922066213"
)


def _dual_vector_parts(T: np.ndarray, q: np.ndarray):
    """Vector parts of the real and the dual quaternion of poses (N, 4, 4) with rotation quaternions q."""
    t = T[:, :3, 3]
    w, v = q[:, :1], q[:, 1:]
    # q' = 1/2 (0, t) * q ; vector part = 1/2 (w t + t x v)
    dual_v = 0.5 * (w * t + c.cross(t, v))
    return v, dual_v


def daniilidis_kernel(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    qA, qB = c.motion_quats(A, B)
    c.check_rotation_axes(c.rotvecs_from_quats(qA), "daniilidis")
    a, a_d = _dual_vector_parts(A, qA)
    b, b_d = _dual_vector_parts(B, qB)
    n = A.shape[0]
    T = np.zeros((n, 6, 8))
    T[:, :3, 0] = a - b
    T[:, :3, 1:4] = c.skew(a + b)
    T[:, 3:, 0] = a_d - b_d
    T[:, 3:, 1:4] = c.skew(a_d + b_d)
    T[:, 3:, 4] = a - b
    T[:, 3:, 5:8] = c.skew(a + b)
    _, _, Vt = np.linalg.svd(T.reshape(-1, 8), full_matrices=False)
    v7, v8 = Vt[6], Vt[7]
    u1, w1 = v7[:4], v7[4:]
    u2, w2 = v8[:4], v8[4:]
    # constraint q . q' = 0 as a quadratic form in (l1, l2)
    P = np.array([[u1 @ w1, 0.5 * (u1 @ w2 + u2 @ w1)], [0.5 * (u1 @ w2 + u2 @ w1), u2 @ w2]])
    ev, E = np.linalg.eigh(P)
    if ev[0] < 0.0 < ev[1]:
        cands = [
            np.sqrt(ev[1]) * E[:, 0] + np.sqrt(-ev[0]) * E[:, 1],
            np.sqrt(ev[1]) * E[:, 0] - np.sqrt(-ev[0]) * E[:, 1],
        ]
    else:  # noise moved the form off indefinite: take the direction that violates it least
        cands = [E[:, int(np.argmin(np.abs(ev)))]]
    best = None
    best_norm = -1.0
    for d in cands:
        d = d / np.linalg.norm(d)
        qn = np.linalg.norm(d[0] * u1 + d[1] * u2)
        if qn > best_norm:
            best, best_norm = d, qn
    if not best_norm > 1e-9:
        raise DegenerateMotionError("daniilidis: expected a rotation part in the null space, got none")
    x = (best[0] * v7 + best[1] * v8) / best_norm
    q, q_d = x[:4], x[4:]
    R_X = c.se3.matrix_from_quaternion(q, normalize=True)
    # t = 2 q' * conj(q), vector part
    w, v = q[0], q[1:]
    wd, vd = q_d[0], q_d[1:]
    t_X = 2.0 * (w * vd - wd * v - c.cross(vd, v))
    return c.transform(R_X, t_X)


def daniilidis(A, B) -> np.ndarray:
    """Solve ``A X = X B`` with the dual-quaternion method of Daniilidis (1999).

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
    return daniilidis_kernel(A, B)
