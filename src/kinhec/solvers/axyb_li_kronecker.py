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

Check of the translation.  The unconstrained ``vec(R_Y)`` absorbs part of the
translation equations (through ``t_B``); once the rotations are projected onto
SO(3), the translations of the same solution need not fit the translation
equations any more, and on noisy pairs with a narrow rotation range they can be
metres off.  The residual sum of squares of the translation equations with
Li's ``t_X, t_Y`` is compared with its minimum over the translations for the
same projected rotations (``RSS_0``): ``F = ((RSS - RSS_0) / 6) / (RSS_0 /
(3N - 6))``.  Above the 99.9 % quantile of ``F(6, 3N - 6)`` the translation is
one that its own residuals reject -- when it also moves ``t_X`` by more than the
RMS residual of one equation -- and :class:`InconsistentTranslationWarning`
says so (the result is returned unchanged: it is Li's).
"""

from __future__ import annotations

import warnings

import numpy as np

from kinhec.solvers import _common as c

__all__ = ["li_kronecker", "InconsistentTranslationWarning", "translation_f_statistic", "li_kronecker_kernel"]

#: Tail probability below which the translation counts as rejected by its own residuals.
F_ALPHA = 1e-3


class InconsistentTranslationWarning(c.DegenerateMotionWarning):
    """Li's translation fits the translation equations far worse than the best translation for its rotations."""

CITATION = (
    'A. Li, L. Wang and D. Wu, "Simultaneous robot-world and hand-eye calibration using '
    'dual-quaternions and Kronecker product," Int. J. Physical Sciences 5(10), 2010.'
)


def li_kronecker_kernel(A: np.ndarray, B: np.ndarray):
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
    X, Y = c.transform(R_X, z[18:21]), c.transform(R_Y, z[21:24])
    F, p, t_best = translation_f_statistic(A, B, X, Y)
    shift = float(np.linalg.norm(t_best[:3] - X[:3, 3]))
    # significant, and larger than the residual of one translation equation (not a last-digit difference)
    rms = np.sqrt(max(_rss(A, B, Y, t_best) / max(3 * n - 6, 1), 0.0))
    if p < F_ALPHA and shift > max(rms, 1e-9):
        warnings.warn(
            f"li_kronecker: the translation is rejected by its own residuals (F = {F:.3g} with (6, {3 * n - 6}) "
            f"degrees of freedom, p = {p:.2g}): the best translations for its rotations move t_X by "
            f"{1000 * shift:.3g} mm; its rotations absorbed part of the translation equations",
            InconsistentTranslationWarning, stacklevel=3)
    return X, Y


def _translation_system(A, B, Y):
    """``C (t_X, t_Y) = d``: the translation equations ``R_A t_X - t_Y = R_Y t_B - t_A``, stacked (3N x 6)."""
    n = A.shape[0]
    C = np.zeros((n, 3, 6))
    C[:, :, :3] = A[:, :3, :3]
    C[:, :, 3:] = -np.eye(3)
    return C.reshape(-1, 6), (B[:, :3, 3] @ Y[:3, :3].T - A[:, :3, 3]).reshape(-1)


def _rss(A, B, Y, t) -> float:
    C, d = _translation_system(A, B, Y)
    return float(np.sum((C @ t - d) ** 2))


def translation_f_statistic(A: np.ndarray, B: np.ndarray, X: np.ndarray, Y: np.ndarray):
    """F statistic of the translations of ``(X, Y)`` against the best ones for the same rotations.

    Parameters
    ----------
    A, B : ndarray, shape (N, 4, 4)
        Pose pairs of ``A_i X = Y B_i`` [m].
    X, Y : ndarray, shape (4, 4)

    Returns
    -------
    F : float
        ``((RSS - RSS_0) / 6) / (RSS_0 / (3N - 6))`` over the translation equations
        ``R_A t_X - t_Y = R_Y t_B - t_A``.
    p : float
        Its upper tail probability under ``F(6, 3N - 6)`` (1 when undefined).
    t_best : ndarray, shape (6,)
        The least-squares ``(t_X, t_Y)`` for the rotations of ``X`` and ``Y`` [m].
    """
    n = A.shape[0]
    C, d = _translation_system(A, B, Y)
    t_best = c.lstsq(C, d)
    rss0 = float(np.sum((C @ t_best - d) ** 2))
    rss = float(np.sum((C @ np.concatenate([X[:3, 3], Y[:3, 3]]) - d) ** 2))
    dof = 3 * n - 6
    if dof <= 0 or rss0 <= 0:
        return 0.0, 1.0, t_best
    F = max(rss - rss0, 0.0) / 6.0 / (rss0 / dof)
    from scipy.special import fdtrc  # F(6, dof) survival function; scipy.stats (slow to import) is not needed

    return F, float(fdtrc(6, dof, F)), t_best


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
    return li_kronecker_kernel(A, B)
