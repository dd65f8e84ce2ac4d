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
* unknown scale (``unknown_scale=True``), two linear forms of
  ``(R_A - I) t_X + t_A = R_X t_B / s``:

  - ``scale_regressor="robot"`` (the default of :func:`andreff`):
    ``s t_A + (R_A - I) u = R_X t_B`` in the four unknowns ``(s, u = s t_X)``,
    then ``t_X = u / s`` (metric: it comes with the robot translations).  Only
    the robot's (accurate) motions multiply the unknowns, so camera noise does
    not bias the scale.  A scale that is not positive is refused
    (:class:`~kinhec.util.errors.DegenerateMotionError`).
  - ``scale_regressor="camera"`` (the benchmark's ``andreff_scale``, the
    published toolkit's form: on the published copy it gives the published
    error on every one of the 46 sequences):
    ``(R_A - I) t_X - mu R_X t_B = -t_A`` in ``(t_X, mu = 1 / s)``.  The noisy
    camera translations are the regressor of ``mu``, which shrinks it towards 0
    (errors in variables): the scale comes out too large, by a factor that
    grows with the camera noise over the camera translation between keyframes,
    and the translation of ``X`` with it.  A scale that is not positive is
    returned as it is, with a :class:`DegenerateMotionWarning`.

**Scale convention.**  ``s`` is the factor by which the camera translations
exceed the metric ones, ``t_B = s * t_B,metric``: the index column ``scale`` of
a monocular sequence.  Metric camera data give ``s = 1``.
"""

from __future__ import annotations

import warnings

import numpy as np

from kinhec.util.errors import DegenerateMotionError, InputError
from kinhec.solvers import _common as c

__all__ = ["andreff", "andreff_kernel"]

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


#: The two linear forms of the unknown-scale translation (module docstring).
SCALE_REGRESSORS = ("robot", "camera")


def andreff_kernel(A: np.ndarray, B: np.ndarray, unknown_scale: bool = False, scale_regressor: str = "robot"):
    c.check_rotation_axes(c.rotvecs(A[:, :3, :3]), "andreff_scale" if unknown_scale else "andreff")
    name = "andreff_scale" if unknown_scale else "andreff"
    U = _rotation_andreff(A, B)
    R_X = c.normalize_rotation(U, name, "vec(R_X)")
    if not unknown_scale:
        return c.transform(R_X, c.translation_axxb(A, B, R_X))
    n = A.shape[0]
    C = np.zeros((n, 3, 4))
    if scale_regressor == "camera":
        # (R_A - I) t_X - mu R_X t_B = -t_A in (t_X, mu = 1/s): the camera translations are a regressor
        C[:, :, :3] = A[:, :3, :3] - np.eye(3)
        C[:, :, 3] = -(B[:, :3, 3] @ R_X.T)
        sol = c.lstsq(C.reshape(-1, 4), -A[:, :3, 3].reshape(-1))
        mu = float(sol[3])
        if not np.isfinite(mu) or mu == 0.0:
            raise DegenerateMotionError("andreff_scale: the camera translations do not determine the scale (1/s = 0)")
        if mu < 0:
            warnings.warn(
                f"andreff_scale: the camera translations give a negative scale s = {1 / mu:.3g}; they do not "
                "determine the scale, and the translation of X is unreliable",
                c.DegenerateMotionWarning,
                stacklevel=3,
            )
        return c.transform(R_X, sol[:3]), 1.0 / mu
    # s (t_A + (R_A - I) t_X) = R_X t_B, linear in (s, u = s t_X).  The regressors are the robot's
    # translations and rotations and the noisy camera translations stay on the right-hand side, so the
    # least-squares scale is not biased by camera noise (with t_B as a regressor it would be diluted).
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


def andreff(A, B, *, unknown_scale: bool = False, scale_regressor: str = "robot"):
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
    scale_regressor : {"robot", "camera"}
        With ``unknown_scale``: ``"robot"`` (default) solves for ``(s, s t_X)`` with the robot motions as
        regressors (unbiased by camera noise); ``"camera"`` solves for ``(t_X, 1/s)`` with the camera
        translations as the regressor of ``1/s``, the published toolkit's form (the benchmark's
        ``andreff_scale``), which overestimates ``s`` under camera noise and returns a negative scale with a
        :class:`DegenerateMotionWarning` instead of refusing it.

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
        Bad shapes, non-finite values, non-orthonormal rotations, N < 2, an unknown ``scale_regressor``.
    DegenerateMotionError
        All rotation axes of ``A`` parallel, or (``unknown_scale``) camera
        translations that do not fix a positive scale (``"camera"``: that do not fix one at all).
    """
    if scale_regressor not in SCALE_REGRESSORS:
        raise InputError(f"scale_regressor: expected one of {list(SCALE_REGRESSORS)}, got {scale_regressor!r}")
    A, B = c.check_motions(A, B)
    return andreff_kernel(A, B, bool(unknown_scale), scale_regressor)
