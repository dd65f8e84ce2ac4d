"""Andreff: the rotation of ``A X = X B`` from a linear Kronecker system, then the translation.

Reference
---------
N. Andreff, R. Horaud and B. Espiau, "Robot hand-eye calibration using
structure-from-motion," *Int. J. Robotics Research* 20(3), 2001.
doi:10.1177/02783640122067372

Equations implemented.  With the row-major vectorisation ``vec(M)`` (so that
``vec(P M Q) = (P (x) Q^T) vec(M)``), motion ``k`` of ``A X = X B`` gives 9
homogeneous linear equations in ``vec(R_X)``::

    R_A R_X R_B^T = R_X       ->  (I_9 - R_A (x) R_B) vec(R_X) = 0

Stacked over the motions (``9N x 9``), the right singular vector of the
smallest singular value is ``vec(R_X)`` up to a factor; the rotation is
``R_X = proj_SO(3)(sign(det U) U)``.  The rotation comes from the rotations
alone, as in the published toolkit's ``andreff`` (on the published copy the
two agree to about 1e-6 deg).  Andreff et al. also write the 12-unknown system
that adds the translation rows ``(I_3 (x) t_B^T) vec(R_X) + (I_3 - R_A) t_X =
t_A``; solved jointly, it lets camera-translation noise (and an unknown scale)
pull the rotation, which is why it is not used here.

The translation is then estimated with that rotation:

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
    """The null vector of the ``9N x 9`` rotation rows, as a 3x3 matrix (unnormalised)."""
    K = (np.eye(9) - c.kron_rows(A[:, :3, :3], B[:, :3, :3])).reshape(-1, 9)
    # the eigenvector of the smallest eigenvalue of K^T K (9 x 9) is the right singular vector
    # of K's smallest singular value, at a fraction of the cost of an SVD of the tall K
    w, V = np.linalg.eigh(K.T @ K)
    return V[:, 0].reshape(3, 3)


def _andreff(A: np.ndarray, B: np.ndarray, unknown_scale: bool = False):
    c.check_rotation_axes(c.rotvecs(A[:, :3, :3]), "andreff_scale" if unknown_scale else "andreff")
    name = "andreff_scale" if unknown_scale else "andreff"
    U = _rotation_andreff(A, B)
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
