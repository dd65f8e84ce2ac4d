"""Machinery shared by the solvers: input checks, the degeneracy test and small linear algebra.

Everything here works on stacked arrays: ``A`` and ``B`` of shape ``(N, 4, 4)``.
The public solvers call :func:`check_motions` or :func:`check_pairs` once at
their boundary and then hand clean float64 arrays to the kernels
(``park_martin_kernel`` and friends), which trust their input.  The registry and the
refinements call the kernels directly, so data are checked exactly once.
A caller that hands the same stacks to many solvers (the benchmark: thirteen
solvers on one sequence's keyframes) validates them once with
:func:`validated_stacks`; inside that block the checks of those very array
objects keep their shape and count tests and skip the per-pose ones.
"""

from __future__ import annotations

import contextlib
import threading
import warnings

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import DegenerateMotionError, InputError

__all__ = [
    "DegenerateMotionWarning",
    "MIN_MOTIONS",
    "MIN_PAIRS",
    "DEGENERATE_LAMBDA2",
    "NEAR_DEGENERATE_LAMBDA2",
    "check_motions",
    "check_pairs",
    "check_pose",
    "validated_stacks",
    "axis_scatter_lambda2",
]

#: Fewest relative motions an ``A X = X B`` solver accepts (two non-parallel rotation axes fix X).
MIN_MOTIONS = 2
#: Fewest absolute pose pairs an ``A X = Y B`` solver accepts (two motions between three poses).
MIN_PAIRS = 3
#: Below this second eigenvalue of the rotation-axis scatter matrix the axes are parallel to
#: numerical precision: the solvers raise :class:`~kinhec.util.errors.DegenerateMotionError`.
DEGENERATE_LAMBDA2 = 1e-10
#: Below this value (axes within about a degree of a common direction) the solvers still return
#: but emit a :class:`DegenerateMotionWarning` with the measured value.
NEAR_DEGENERATE_LAMBDA2 = 1e-4


class DegenerateMotionWarning(UserWarning):
    """The rotation axes are nearly parallel: the result is returned but poorly constrained."""


class AbsolutePosesWarning(UserWarning):
    """``A X = X B`` received pairs whose rotation angles disagree: most likely absolute poses, not motions."""


#: Paired relative motions ``A = X B X^-1`` rotate by the same angle; :func:`check_motions` warns when the
#: median disagreement of the given pairs exceeds this [deg] ...
MISMATCH_ANGLE_DEG = 2.0
#: ... and is this many times that of the motions between consecutive entries of the given stacks.
MISMATCH_RATIO = 5.0


# --------------------------------------------------------------------------- #
# input checks
# --------------------------------------------------------------------------- #
def _check_stack(T, name: str, what: str) -> np.ndarray:
    T = se3.check_array(T, name, (4, 4))
    if T.ndim != 3:
        raise InputError(f"{name}: expected {what} of shape (N, 4, 4), got shape {T.shape}")
    return T


def _check_rigid(T: np.ndarray, n_first: int, names) -> None:
    """Last row ``[0, 0, 0, 1]`` and orthonormal, proper rotation blocks for stacked poses.

    ``T`` holds the poses of two arguments one after the other (``n_first``
    of the first); the messages name the argument at fault.  Same tolerance
    as :func:`kinhec.geometry.se3.check_transforms`, computed with a handful of
    vectorised operations for speed.
    """
    tol = se3.ORTHONORMAL_TOL
    if T.shape[0] == 0:
        return
    dev_last = np.abs(T[:, 3, :] - _LAST_ROW).max(axis=1)
    e, det = se3.rotation_defects(T[:, :3, :3])

    def name_of(i):
        return names[0] if i < n_first else names[1]

    if (dev_last > tol).any():
        i = int(np.argmax(dev_last))
        raise InputError(f"{name_of(i)}: expected last row [0, 0, 0, 1], got a deviation of {dev_last[i]:.3g}")
    if (e > tol).any():
        i = int(np.argmax(e))
        raise InputError(
            f"{name_of(i)} (rotation block): expected orthonormal rotation matrices "
            f"(|R^T R - I| <= {tol:g}), got a deviation of {e[i]:.3g}"
        )
    if (det < 0).any():
        i = int(np.argmin(det))
        raise InputError(
            f"{name_of(i)} (rotation block): expected det(R) = +1, got a reflection (det = {det[i]:.3g})"
        )


_LAST_ROW = np.array([0.0, 0.0, 0.0, 1.0])


#: Per thread, the ``(A, B)`` stacks that passed the per-pose checks inside a :func:`validated_stacks` block, by
#: identity (a thread's block vouches for its own arrays only: a benchmark's Dask workers run units in threads).
_TRUSTED = threading.local()


def _validated_list() -> list:
    if not hasattr(_TRUSTED, "pairs"):
        _TRUSTED.pairs = []
    return _TRUSTED.pairs


def _validated(A, B) -> bool:
    return any(A is a and B is b for a, b in _validated_list())


@contextlib.contextmanager
def validated_stacks(*pairs):
    """Check each ``(A, B)`` pair of stacks once; inside the block, the solvers' checks of them skip that work.

    Each pair must be two float64 arrays of shape ``(N, 4, 4)``; those that pass the per-pose tests of
    :func:`check_motions` (finite entries, last row, orthonormal proper rotations) are read-only while the block
    runs, and :func:`check_motions` and :func:`check_pairs` given those very objects test only the shapes and
    the count (and still warn about absolute poses).  A pair that fails is left as it is: every solver then raises
    its own error, as without the block.  The results are those of the checks run every time.
    """
    mine, writeable = [], []
    for A, B in pairs:
        if not (isinstance(A, np.ndarray) and isinstance(B, np.ndarray) and A.dtype == np.float64
                and B.dtype == np.float64 and A.ndim == 3 and A.shape[1:] == (4, 4) and A.shape == B.shape):  # fmt: skip
            continue
        try:
            _check_two_stacks(A, B, ("A", "B"), "stacks", "poses", 0)  # the checks the solvers would run
        except InputError:
            continue
        writeable.append((A.flags.writeable, B.flags.writeable))
        A.flags.writeable = False
        B.flags.writeable = False
        mine.append((A, B))
    trusted = _validated_list()
    trusted.extend(mine)
    try:
        yield
    finally:
        for pair, flags in zip(mine, writeable):
            for k in range(len(trusted) - 1, -1, -1):
                if trusted[k][0] is pair[0] and trusted[k][1] is pair[1]:
                    del trusted[k]
                    break
            for arr, flag in zip(pair, flags):
                if flag and not any(arr is a or arr is b for a, b in trusted):
                    arr.flags.writeable = True


def _check_two_stacks(A, B, names, what: str, unit: str, minimum: int):
    na, nb = names
    if _validated(A, B):
        if A.shape[0] < minimum:
            raise InputError(f"{na}, {nb}: expected at least {minimum} {unit}, got {A.shape[0]}")
        return A, B
    A = _check_stack(A, na, what)
    B = _check_stack(B, nb, what)
    if A.shape != B.shape:
        raise InputError(f"{nb}: expected the same shape as {na} {A.shape}, got {B.shape}")
    if A.shape[0] < minimum:
        raise InputError(f"{na}, {nb}: expected at least {minimum} {unit}, got {A.shape[0]}")
    _check_rigid(np.concatenate([A, B]), A.shape[0], names)
    return A, B


def check_motions(A, B, *, min_motions: int = MIN_MOTIONS, names=("A", "B")):
    """Validate paired relative motions for ``A X = X B``.

    Parameters
    ----------
    A, B : array_like, shape (N, 4, 4)
        Relative motions of the robot flange and of the camera (or target).
    min_motions : int
        Fewest motions accepted.
    names : tuple of str
        Argument names used in messages.

    Returns
    -------
    A, B : ndarray, shape (N, 4, 4), float64

    Raises
    ------
    InputError
        Wrong shape, non-finite entries, non-orthonormal rotation blocks,
        different lengths or fewer than ``min_motions`` motions.

    Warns
    -----
    AbsolutePosesWarning
        Relative motions ``A_k = X B_k X^-1`` rotate by the same angle, and so
        do the motions between consecutive entries of the stacks,
        ``inv(A_k) A_{k+1}`` vs ``inv(B_k) B_{k+1}``.  Absolute poses
        (``T_base_ee`` and ``T_cam_target``, what OpenCV's
        ``calibrateHandEye`` takes) break the first and keep the second: the
        warning comes when the median angle disagreement of the given pairs
        exceeds :data:`MISMATCH_ANGLE_DEG` and :data:`MISMATCH_RATIO` times
        that of the consecutive motions.  Outlying motions raise both, and do
        not warn.
    """
    A, B = _check_two_stacks(A, B, names, "relative motions", "motions", min_motions)
    _warn_if_not_motions(A, B, names)
    return A, B


def _rotation_angles_deg(R: np.ndarray) -> np.ndarray:
    c = (np.trace(R, axis1=-2, axis2=-1) - 1.0) / 2.0
    return np.degrees(np.arccos(np.clip(c, -1.0, 1.0)))


def _angle_disagreement_deg(RA: np.ndarray, RB: np.ndarray) -> float:
    return float(np.median(np.abs(_rotation_angles_deg(RA) - _rotation_angles_deg(RB))))


def _warn_if_not_motions(A: np.ndarray, B: np.ndarray, names) -> None:
    if A.shape[0] < 4:
        return
    RA, RB = A[:, :3, :3], B[:, :3, :3]
    given = _angle_disagreement_deg(RA, RB)
    if given <= MISMATCH_ANGLE_DEG:
        return
    between = _angle_disagreement_deg(np.swapaxes(RA[:-1], 1, 2) @ RA[1:], np.swapaxes(RB[:-1], 1, 2) @ RB[1:])
    if given > MISMATCH_RATIO * between:
        warnings.warn(
            f"{names[0]}, {names[1]}: expected relative motions inv(T_i) T_j, whose paired rotation angles agree, got "
            f"angles {given:.3g} deg apart (median; {between:.2g} deg between consecutive entries); absolute poses "
            "(T_base_ee, T_cam_target) give a wrong X: pass Sequence.axxb_motions() or "
            "kinhec.geometry.motion.relative_motions() of both streams",
            AbsolutePosesWarning,
            stacklevel=4,
        )


def check_pairs(A_abs, B_abs, *, min_pairs: int = MIN_PAIRS, names=("A_abs", "B_abs")):
    """Validate paired absolute poses for ``A_i X = Y B_i`` (same checks as :func:`check_motions`)."""
    return _check_two_stacks(A_abs, B_abs, names, "absolute poses", "pose pairs", min_pairs)


def check_pose(T, name: str) -> np.ndarray:
    """Validate a single rigid transform of shape ``(4, 4)``."""
    T = se3.check_transforms(T, name)
    if T.shape != (4, 4):
        raise InputError(f"{name}: expected a single pose of shape (4, 4), got shape {T.shape}")
    return T


# --------------------------------------------------------------------------- #
# degeneracy
# --------------------------------------------------------------------------- #
def axis_scatter_lambda2(w: np.ndarray) -> float:
    """Second eigenvalue of the angle-weighted rotation-axis scatter of rotation vectors ``w`` (N, 3).

    ``S = sum_k w_k w_k^T / sum_k |w_k|^2``; 0 when every axis is parallel (or
    nothing rotates), 1/3 for isotropic axes.  Same definition as the index
    column ``axis_scatter_lambda2`` (:func:`kinhec.geometry.motion.rotation_axis_scatter`).
    """
    S = w.T @ w
    tot = float(np.trace(S))
    if not tot > 0.0:
        return 0.0
    ev = np.linalg.eigvalsh(S / tot)  # ascending
    return float(max(ev[1], 0.0))


def check_rotation_axes(w: np.ndarray, solver: str, what: str = "A") -> float:
    """Raise or warn when the rotation vectors ``w`` (N, 3) all share one axis.

    Returns the measured ``lambda2``.  Raises :class:`DegenerateMotionError`
    below :data:`DEGENERATE_LAMBDA2`; warns with :class:`DegenerateMotionWarning`
    below :data:`NEAR_DEGENERATE_LAMBDA2`.
    """
    lam2 = axis_scatter_lambda2(w)
    if lam2 < DEGENERATE_LAMBDA2:
        if not np.any(np.linalg.norm(w, axis=1) > 1e-12):
            raise DegenerateMotionError(
                f"{solver}: expected rotating motions, got {what} without any rotation; "
                "the rotation of X is unobservable"
            )
        raise DegenerateMotionError(
            f"{solver}: expected rotation axes in at least two directions, got all rotation axes of "
            f"{what} parallel (axis-scatter lambda2 = {lam2:.3g} < {DEGENERATE_LAMBDA2:g}); "
            "the rotation of X about that axis is unobservable"
        )
    if lam2 < NEAR_DEGENERATE_LAMBDA2:
        warnings.warn(
            f"{solver}: the rotation axes of {what} are nearly parallel (axis-scatter lambda2 = "
            f"{lam2:.3g} < {NEAR_DEGENERATE_LAMBDA2:g}); the result is poorly constrained",
            DegenerateMotionWarning,
            stacklevel=3,
        )
    return lam2


def relative_rotvecs_of_poses(R: np.ndarray) -> np.ndarray:
    """Rotation vectors (N-1, 3) of the consecutive relative rotations ``R_i^T R_{i+1}``."""
    rel = np.swapaxes(R[:-1], -1, -2) @ R[1:]
    return rotvecs(rel)


# --------------------------------------------------------------------------- #
# linear algebra helpers
# --------------------------------------------------------------------------- #
def rotvecs(R: np.ndarray) -> np.ndarray:
    """Rotation vectors (N, 3) [rad], angle in [0, pi], of checked rotations (N, 3, 3)."""
    return rotvecs_from_quats(quats(R))


def quats(R: np.ndarray) -> np.ndarray:
    """Unit quaternions (N, 4), (w, x, y, z) with ``w >= 0``, of checked rotations (N, 3, 3).

    Shepperd's method, vectorised: of the four algebraically equivalent
    formulas the one with the largest pivot is used for every matrix.  Same
    result as :func:`kinhec.geometry.se3.quaternion_from_matrix`, with less overhead
    for the short stacks the solvers see.
    """
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = R.reshape(-1, 9).T
    t0 = 1.0 + m00 + m11 + m22
    t1 = 1.0 + m00 - m11 - m22
    t2 = 1.0 - m00 + m11 - m22
    t3 = 1.0 - m00 - m11 + m22
    a, b, c = m21 - m12, m02 - m20, m10 - m01
    d, e, f = m01 + m10, m02 + m20, m12 + m21
    C = np.array([[t0, a, b, c], [a, t1, d, e], [b, d, t2, f], [c, e, f, t3]])
    i = np.argmax(np.array([t0, t1, t2, t3]), axis=0)
    q = C[i, :, np.arange(i.size)]
    q /= np.sqrt(np.einsum("ni,ni->n", q, q))[:, None]
    q *= np.where(q[:, :1] < 0.0, -1.0, 1.0)
    return q


#: Motions whose quaternion scalar part is below this (rotation angle above about 168.5 deg)
#: have an uncertain quaternion sign; :func:`motion_quats` aligns them using a first estimate.
AMBIGUOUS_W = 0.1


def rotvecs_from_quats(q: np.ndarray) -> np.ndarray:
    """Rotation vectors (..., 3) of quaternions of either sign: angle ``2 atan2(|v|, w)`` in [0, 2 pi]."""
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1)
    ang = 2.0 * np.arctan2(s, q[..., 0])
    small = s < 1e-12
    f = np.where(small, 2.0, ang / np.where(small, 1.0, s))
    return f[..., None] * v


def motion_quats(A: np.ndarray, B: np.ndarray):
    """Quaternions ``q_A``, ``q_B`` (N, 4) of paired motions with consistent signs.

    ``R_A = R_X R_B R_X^T`` implies ``q_A = +-q_X * q_B * conj(q_X)``; the
    linear solvers need the ``+`` sign.  Both rotations have the same angle, so
    taking ``w >= 0`` on both sides is right except near 180 deg, where noise
    can put the two scalar parts on opposite sides of zero.  For those
    motions (``|w| < AMBIGUOUS_W``) the sign of ``q_B`` is chosen to agree
    with ``q_A`` under a first Park-Martin rotation fitted on the others.
    """
    n = A.shape[0]
    q = quats(np.concatenate([A[:, :3, :3], B[:, :3, :3]]))
    qA, qB = q[:n], q[n:]
    amb = (qA[:, 0] < AMBIGUOUS_W) | (qB[:, 0] < AMBIGUOUS_W)
    if amb.any() and (~amb).sum() >= 2:
        alpha = rotvecs_from_quats(qA[~amb])
        beta = rotvecs_from_quats(qB[~amb])
        if axis_scatter_lambda2(alpha) >= DEGENERATE_LAMBDA2:
            R0 = project_to_so3(alpha.T @ beta)
            agree = np.einsum("ni,ni->n", qA[amb, 1:], qB[amb, 1:] @ R0.T)
            flip = np.flatnonzero(amb)[agree < 0]
            qB[flip] *= -1.0
    return qA, qB


def skew(v: np.ndarray) -> np.ndarray:
    """Skew-symmetric matrices (..., 3, 3) of vectors (..., 3): ``skew(a) @ b = a x b`` (:func:`kinhec.geometry.se3.hat`)."""
    return se3.hat(v)


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross products of (N, 3) arrays (``np.cross`` without its overhead)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def project_to_so3(M: np.ndarray) -> np.ndarray:
    """Closest rotation (Frobenius norm) to ``M`` (..., 3, 3): ``U diag(1, 1, det) V^T``."""
    U, _, Vt = np.linalg.svd(M)
    d = np.sign(np.linalg.det(U @ Vt))
    d = np.where(d == 0, 1.0, d)
    D = np.ones(M.shape[:-2] + (3,))
    D[..., 2] = d
    return (U * D[..., None, :]) @ Vt


def normalize_rotation(M: np.ndarray, solver: str, what: str) -> np.ndarray:
    """Rotation from a 3x3 matrix known up to a (possibly negative) scale.

    The sign of ``det(M)`` is removed first, so a null vector found with the
    opposite sign still gives a proper rotation; then ``M`` is projected onto
    SO(3).  A (numerically) singular ``M`` means the linear system did not fix
    the rotation and raises :class:`DegenerateMotionError`.
    """
    det = float(np.linalg.det(M))
    scale = float(np.linalg.norm(M)) ** 3 / (3.0 * np.sqrt(3.0))  # |det| of a scaled rotation
    if not np.isfinite(det) or abs(det) <= 1e-9 * max(scale, 1e-300):
        raise DegenerateMotionError(
            f"{solver}: expected a full-rank estimate of {what}, got a singular matrix "
            f"(det = {det:.3g}); the motions do not fix the rotation"
        )
    return project_to_so3(np.sign(det) * M)


def transform(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """A single 4x4 pose from a rotation and a translation [m]."""
    return se3.transform_from_rotation_translation(R, t)


def lstsq(M: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Least-squares solution of the tall system ``M x = b``.

    Normal equations with a Cholesky factorisation and one step of iterative
    refinement on the residual, which is several times faster than an SVD for
    the stacked systems here (thousands of rows, at most 24 columns) and as
    accurate for their conditioning; falls back to the SVD solution when the
    normal matrix is not positive definite.
    """
    G = M.T @ M
    h = M.T @ b
    from scipy.linalg import cho_factor, cho_solve  # here, so that listing solvers does not import scipy

    try:
        cf = cho_factor(G, check_finite=False)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(M, b, rcond=None)[0]
    x = cho_solve(cf, h, check_finite=False)
    x += cho_solve(cf, M.T @ (b - M @ x), check_finite=False)
    return x


def translation_axxb(A: np.ndarray, B: np.ndarray, R_X: np.ndarray) -> np.ndarray:
    """Least-squares ``t_X`` of ``(R_A - I) t_X = R_X t_B - t_A`` stacked over all motions [m]."""
    C = (A[:, :3, :3] - np.eye(3)).reshape(-1, 3)
    d = (B[:, :3, 3] @ R_X.T - A[:, :3, 3]).reshape(-1)
    return lstsq(C, d)


def kron_rows(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Batched Kronecker products ``P_n (x) Q_n`` of (N, a, b) and (N, c, d) -> (N, a*c, b*d)."""
    n, a, b = P.shape
    _, c, d = Q.shape
    return np.einsum("nij,nkl->nikjl", P, Q).reshape(n, a * c, b * d)
