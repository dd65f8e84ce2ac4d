"""Andreff: one linear system for rotation and translation, written with Kronecker products.

Reference
---------
N. Andreff, R. Horaud and B. Espiau, "Robot hand-eye calibration using
structure-from-motion," *Int. J. Robotics Research* 20(3), 2001.
doi:10.1177/02783640122067372

Equations implemented.  With the row-major vectorisation ``vec(M)`` (so that
``vec(P M Q) = (P (x) Q^T) vec(M)``), motion ``k`` of ``A X = X B`` gives 12
linear equations in ``(vec(R_X), t_X)``::

    R_A R_X R_B^T = R_X       ->  (I_9 - R_A (x) R_B) vec(R_X)                  = 0
    R_A t_X + t_A = R_X t_B + t_X
                              ->  (I_3 (x) t_B^T) vec(R_X) + (I_3 - R_A) t_X    = t_A

Stacked over the motions (``12N x 12``) and solved in the least-squares sense.
The rotation rows are homogeneous, so the solution ``U = vec^-1(...)`` equals
``R_X`` up to a factor that the translation rows fix: when the camera
translations are only known up to a scale (structure from motion, monocular
visual odometry), ``t_B = s t_B,metric``, the same system returns
``U = R_X / s``.  The rotation is ``R_X = proj_SO(3)(sign(det U) U)``.  (When
the camera translations fix no scale at all, ``U`` vanishes and the null
vector of the rotation rows alone is used instead.)

The translation is then re-estimated with that proper rotation:

* known scale (``unknown_scale=False``):
  ``(R_A - I) t_X = R_X t_B - t_A``;
* unknown scale (``unknown_scale=True``): ``s t_A + (R_A - I) u = R_X t_B``
  in the four unknowns ``(s, u = s t_X)``, then ``t_X = u / s`` (metric: it
  comes with the robot translations).  Only the robot's (accurate) motions
  multiply the unknowns, so camera noise does not bias the scale, as it
  would with ``t_B`` as a regressor.

**Scale convention.**  ``s`` is the factor by which the camera translations
exceed the metric ones, ``t_B = s * t_B,metric``: the index column ``scale`` of
a monocular sequence.  Metric camera data give ``s = 1``.
"""

from __future__ import annotations

import numpy as np

from kinhec.errors import DegenerateMotionError
from kinhec.solvers import _common as c

__all__ = ["andreff"]

CITATION = (
    'N. Andreff, R. Horaud and B. Espiau, "Robot hand-eye calibration using structure-from-motion," '
    "Int. J. Robotics Research 20(3), 2001. doi:10.1177/02783640122067372"
)


def _rotation_andreff(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """The ``12N x 12`` Kronecker system; returns the unnormalised ``U`` (3, 3) and ``t`` (3,)."""
    n = A.shape[0]
    RA, RB = A[:, :3, :3], B[:, :3, :3]
    M = np.zeros((n, 12, 12))
    M[:, :9, :9] = np.eye(9) - c.kron_rows(RA, RB)
    M[:, 9:, :9] = c.kron_rows(np.broadcast_to(np.eye(3), (n, 3, 3)), B[:, None, :3, 3])
    M[:, 9:, 9:] = np.eye(3) - RA
    rhs = np.zeros((n, 12))
    rhs[:, 9:] = A[:, :3, 3]
    sol = c.lstsq(M.reshape(-1, 12), rhs.reshape(-1))
    return sol[:9].reshape(3, 3), sol[9:]


def _andreff(A: np.ndarray, B: np.ndarray, unknown_scale: bool = False):
    c.check_rotation_axes(c.rotvecs(A[:, :3, :3]), "andreff_scale" if unknown_scale else "andreff")
    name = "andreff_scale" if unknown_scale else "andreff"
    U, _ = _rotation_andreff(A, B)
    if abs(np.linalg.det(U)) <= 1e-9 * (np.linalg.norm(U) ** 3 + 1e-300):
        # the camera translations fix no scale of U (e.g. all zero): take the null vector
        # of the rotation rows alone
        K = (np.eye(9) - c.kron_rows(A[:, :3, :3], B[:, :3, :3])).reshape(-1, 9)
        U = np.linalg.svd(K, full_matrices=False)[2][-1].reshape(3, 3)
    R_X = c.normalize_rotation(U, name, "vec(R_X)")
    if not unknown_scale:
        return c.transform(R_X, c.translation_axxb(A, B, R_X))
    # s (t_A + (R_A - I) t_X) = R_X t_B, linear in (s, u = s t_X).  The regressors are the robot's
    # translations and rotations and the noisy camera translations stay on the right-hand side, so the
    # least-squares scale is not biased by camera noise (with t_B as a regressor it would be diluted).
    n = A.shape[0]
    C = np.zeros((n, 3, 4))
    C[:, :, 0] = A[:, :3, 3]
    C[:, :, 1:] = A[:, :3, :3] - np.eye(3)
    sol = c.lstsq(C.reshape(-1, 4), (B[:, :3, 3] @ R_X.T).reshape(-1))
    s = float(sol[0])
    if not s > 1e-12:
        raise DegenerateMotionError(
            f"andreff_scale: expected a positive scale s, got {s:.3g}; "
            "the camera translations do not determine the scale"
        )
    return c.transform(R_X, sol[1:] / s), s


def andreff(A, B, *, unknown_scale: bool = False):
    """Solve ``A X = X B`` with the linear Kronecker formulation of Andreff et al. (2001).

    Parameters
    ----------
    A : array_like, shape (N, 4, 4)
        Relative flange motions ``inv(A_i) A_j`` (``A_i = T_base_ee``) [m], N >= 2.
    B : array_like, shape (N, 4, 4)
        The matching relative camera motions ``inv(B_i) B_j``; with
        ``unknown_scale=True`` their translations may carry an unknown factor
        ``s`` (``t_B = s t_B,metric``).
    unknown_scale : bool
        Estimate the scale ``s`` of the camera translations as well.

    Returns
    -------
    X : ndarray, shape (4, 4)
        Hand-eye transform (``T_ee_cam`` eye-in-hand, ``T_ee_marker``
        eye-to-hand), translation metric [m] in both modes.
    scale : float
        Only with ``unknown_scale=True``: ``s`` such that the camera
        translations are ``s`` times metric (1 for metric data).

    Raises
    ------
    InputError
        Bad shapes, non-finite values, non-orthonormal rotations, N < 2.
    DegenerateMotionError
        All rotation axes of ``A`` parallel, or (``unknown_scale``) camera
        translations that do not fix a positive scale.
    """
    A, B = c.check_motions(A, B)
    return _andreff(A, B, bool(unknown_scale))
