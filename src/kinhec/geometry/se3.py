"""Rotations and rigid-body poses: the mathematical core of kinhec.

Conventions (see ``docs/conventions.md``):

* ``T_a_b`` is the 4x4 homogeneous pose of frame *b* expressed in frame *a*:
  it maps b-coordinates to a-coordinates, ``p_a = T_a_b @ p_b``, so chains
  check themselves: ``T_base_cam = T_base_ee @ T_ee_cam``.
* Quaternions are Hamilton quaternions in the order ``(w, x, y, z)``; every
  function that *returns* a quaternion returns it with ``w >= 0``.  Other
  orders (TUM, calibration-rs: ``x, y, z, w``) are converted at the file
  boundary only; OpenCV's hand-eye functions take matrices or rotation vectors.
* A twist is a 6-vector ``xi = (omega, v)``: rotation part first [rad], then
  translation part [m].  ``exp(xi)`` is the SE(3) exponential, so a pose
  perturbed on the right is ``T @ exp(xi)`` (noise in the moving frame) and on
  the left ``exp(xi) @ T`` (noise in the fixed frame).

Every function works on arrays with arbitrary leading (batch) axes: a single
rotation is ``(3, 3)``, a stream of them ``(N, 3, 3)``.  Public functions
validate their input with the ``check_*`` helpers, which return clean float64
arrays or raise :class:`kinhec.util.errors.InputError` with "expected ... got ...".
"""

from __future__ import annotations

import numpy as np

from kinhec.util.errors import InputError

__all__ = [
    "check_array",
    "check_vectors",
    "check_quaternions",
    "check_rotations",
    "check_transforms",
    "rotation_defects",
    "check_timestamps",
    "matrix_from_quaternion",
    "quaternion_from_matrix",
    "canonical_quaternion",
    "quaternion_multiply",
    "transform_from_pq",
    "pq_from_transform",
    "transform_from_rotation_translation",
    "invert_transform",
    "concat",
    "hat",
    "vee",
    "so3_exp",
    "retract",
    "so3_log",
    "se3_exp",
    "se3_log",
    "se3_right_jacobian",
    "perturb_right",
    "perturb_left",
    "rotation_angle",
    "slerp_rotations",
    "interpolate_poses",
    "interpolate_rotations",
    "interpolated_rotation_angles",
    "random_rotations",
    "random_unit_vectors",
    "random_axes_in_cone",
    "random_poses",
    "pose_error",
    "se3_exp_unchecked",
    "so3_coefficients",
    "quaternion_from_matrix_unchecked",
]

#: Tolerance on ``R^T R - I`` and ``det(R) - 1`` accepted by :func:`check_rotations`.
ORTHONORMAL_TOL = 1e-6
#: Tolerance on ``|q| - 1`` accepted by :func:`check_quaternions`.
UNIT_TOL = 1e-6


# --------------------------------------------------------------------------- #
# validation
# --------------------------------------------------------------------------- #
def _describe(x) -> str:
    a = np.asarray(x)
    return f"array of shape {a.shape} and dtype {a.dtype}"


def check_array(x, name: str, tail: tuple[int, ...], *, allow_nan: bool = False) -> np.ndarray:
    """Return ``x`` as a float64 array whose trailing axes are ``tail``.

    Parameters
    ----------
    x : array_like
        Input.
    name : str
        Argument name used in the error message.
    tail : tuple of int
        Required trailing shape, e.g. ``(4, 4)``; leading axes are free.
    allow_nan : bool
        Accept NaN entries (infinities are always rejected).

    Raises
    ------
    InputError
        If the shape, the type or the finiteness is wrong.
    """
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: expected a numeric array, got {type(x).__name__} ({exc})") from None
    nt = len(tail)
    if a.ndim < nt or a.shape[a.ndim - nt :] != tuple(tail):
        want = "(..., " + ", ".join(map(str, tail)) + ")" if nt else "a scalar"
        raise InputError(f"{name}: expected shape {want}, got {_describe(x)}")
    bad = np.isinf(a) if allow_nan else ~np.isfinite(a)
    if bad.any():
        n = int(bad.reshape(-1).sum())
        what = "infinite" if allow_nan else "non-finite (NaN or inf)"
        raise InputError(f"{name}: expected finite values, got {n} {what} entries")
    return a


def check_vectors(v, name: str, dim: int = 3) -> np.ndarray:
    """Validate an array of ``dim``-vectors of shape ``(..., dim)``."""
    return check_array(v, name, (dim,))


def check_quaternions(q, name: str = "q", *, tol: float = UNIT_TOL, normalize: bool = False) -> np.ndarray:
    """Validate unit quaternions ``(..., 4)`` in (w, x, y, z) order.

    With ``normalize=True`` any non-zero quaternion is accepted and returned
    normalised; otherwise the norm must be 1 within ``tol``.
    """
    a = check_array(q, name, (4,))
    n = np.linalg.norm(a, axis=-1)
    if normalize:
        if (n < 1e-12).any():
            raise InputError(f"{name}: expected non-zero quaternions, got {int((n < 1e-12).sum())} of norm 0")
        return a / n[..., None]
    dev = np.abs(n - 1.0)
    if (dev > tol).any():
        raise InputError(
            f"{name}: expected unit quaternions (|q| = 1 within {tol:g}), got norms deviating by up to {dev.max():.3g}"
        )
    return a


def check_rotations(R, name: str = "R", *, tol: float = ORTHONORMAL_TOL) -> np.ndarray:
    """Validate rotation matrices ``(..., 3, 3)``: orthonormal with determinant +1."""
    a = check_array(R, name, (3, 3))
    if not a.size:
        return a
    err, det = _gram_deviation_and_det(a)
    if err > tol:
        raise InputError(
            f"{name}: expected orthonormal rotation matrices (|R^T R - I| <= {tol:g}), got a deviation of {err:.3g}"
        )
    if (det < 0).any():
        raise InputError(f"{name}: expected det(R) = +1, got a reflection (det = {np.min(det):.3g})")
    return a


def _gram_deviation_and_det(a: np.ndarray) -> tuple[float, np.ndarray]:
    """Largest ``|R^T R - I|`` entry over the matrices ``a`` ``(..., 3, 3)``, and their determinants."""
    if a.size <= 9 * 256:  # few matrices: the batched products are cheapest
        return float(np.abs(np.swapaxes(a, -1, -2) @ a - np.eye(3)).max()), np.linalg.det(a)
    dev, det = rotation_defects(a)
    return float(dev.max()), det


def rotation_defects(R) -> tuple[np.ndarray, np.ndarray]:
    """Per matrix of ``R`` ``(..., 3, 3)``: the largest ``|R^T R - I|`` entry and the determinant, both ``(n,)``.

    Computed from the columns as contiguous rows (the six distinct entries of ``R^T R`` and the triple
    product): a few whole-array operations, cheaper than batched 3 x 3 products for many matrices.
    """
    c0, c1, c2 = np.moveaxis(np.asarray(R, dtype=np.float64).reshape(-1, 3, 3), 2, 0).copy()  # columns, each (n, 3)
    dev = np.abs(np.einsum("ij,ij->i", c0, c0) - 1.0)
    for g in (np.einsum("ij,ij->i", c1, c1) - 1.0, np.einsum("ij,ij->i", c2, c2) - 1.0,
              np.einsum("ij,ij->i", c0, c1), np.einsum("ij,ij->i", c0, c2), np.einsum("ij,ij->i", c1, c2)):  # fmt: skip
        np.maximum(dev, np.abs(g), out=dev)
    cr = np.empty_like(c0)  # c1 x c2, written out (np.cross costs more than the arithmetic here)
    cr[:, 0] = c1[:, 1] * c2[:, 2] - c1[:, 2] * c2[:, 1]
    cr[:, 1] = c1[:, 2] * c2[:, 0] - c1[:, 0] * c2[:, 2]
    cr[:, 2] = c1[:, 0] * c2[:, 1] - c1[:, 1] * c2[:, 0]
    return dev, np.einsum("ij,ij->i", c0, cr)


def check_transforms(T, name: str = "T", *, tol: float = ORTHONORMAL_TOL) -> np.ndarray:
    """Validate homogeneous transforms ``(..., 4, 4)``: rotation block and ``[0, 0, 0, 1]`` last row."""
    a = check_array(T, name, (4, 4))
    if a.size:
        last = a[..., 3, :]
        dev = np.abs(last - np.array([0.0, 0.0, 0.0, 1.0])).max()
        if dev > tol:
            raise InputError(f"{name}: expected last row [0, 0, 0, 1], got a deviation of {dev:.3g}")
        check_rotations(a[..., :3, :3], f"{name} (rotation block)", tol=tol)
    return a


def check_timestamps(t, name: str = "t", *, strictly_increasing: bool = True) -> np.ndarray:
    """Validate a 1-D array of time stamps [s], strictly increasing by default."""
    a = check_array(t, name, ())
    if a.ndim != 1:
        raise InputError(f"{name}: expected a 1-D array of time stamps, got {_describe(t)}")
    if strictly_increasing and a.size > 1:
        d = np.diff(a)
        if (d <= 0).any():
            i = int(np.argmax(d <= 0))
            raise InputError(
                f"{name}: expected strictly increasing time stamps, got t[{i + 1}] = {float(a[i + 1])!r} <= t[{i}] = {float(a[i])!r}"
            )
    return a


# --------------------------------------------------------------------------- #
# quaternions and matrices
# --------------------------------------------------------------------------- #
def _flat(a: np.ndarray, tail: int) -> tuple[np.ndarray, tuple[int, ...]]:
    lead = a.shape[: a.ndim - tail]
    return a.reshape((-1,) + a.shape[a.ndim - tail :]), lead


def canonical_quaternion(q) -> np.ndarray:
    """Return ``q`` (``(..., 4)``, w first) with the sign chosen so that ``w >= 0``."""
    q = np.array(q, dtype=np.float64, copy=True)
    neg = q[..., 0] < 0
    q[neg] *= -1.0
    return q


def matrix_from_quaternion(q_wxyz, *, normalize: bool = False) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` from unit quaternions ``(..., 4)`` in (w, x, y, z) order."""
    q = check_quaternions(q_wxyz, "q_wxyz", normalize=normalize)
    return _matrix_from_quaternion(q)


def _matrix_from_quaternion(q: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    # Closed form (Hamilton, active rotation); assumes unit quaternions.  ``out`` (..., 3, 3): write there (a
    # pose stack's rotation blocks) instead of a new array.
    w, x, y, z = np.moveaxis(q, -1, 0)
    R = np.empty(q.shape[:-1] + (3, 3)) if out is None else out
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - w * z)
    R[..., 0, 2] = 2 * (x * z + w * y)
    R[..., 1, 0] = 2 * (x * y + w * z)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - w * x)
    R[..., 2, 0] = 2 * (x * z - w * y)
    R[..., 2, 1] = 2 * (y * z + w * x)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def quaternion_from_matrix(R, *, check: bool = True) -> np.ndarray:
    """Unit quaternions ``(..., 4)`` (w, x, y, z; ``w >= 0``) from rotation matrices ``(..., 3, 3)``."""
    R = check_rotations(R, "R") if check else np.asarray(R, dtype=np.float64)
    return quaternion_from_matrix_unchecked(R)


def quaternion_from_matrix_unchecked(R: np.ndarray) -> np.ndarray:
    """Shepperd's method, batched: w >= 0, accurate to round-off at every angle, NaN in -> NaN out.

    Of the four expressions ``4 w^2 = 1 + tr``, ``4 x^2 = 1 + r00 - r11 - r22``,
    ... the largest is used as the divisor, so no branch divides by a small
    number (the trace formula alone fails near 180 deg).
    """
    flat, lead = _flat(np.asarray(R, dtype=np.float64), 2)
    n = flat.shape[0]
    if n == 0:
        return np.zeros(lead + (4,))
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = flat.reshape(n, 9).T.copy()  # nine contiguous rows
    diag = np.empty((4, n))
    diag[0] = r00 + r11 + r22
    diag[1] = r00 - r11 - r22
    diag[2] = r11 - r00 - r22
    diag[3] = r22 - r00 - r11
    k = np.argmax(np.nan_to_num(diag, nan=0.0), axis=0)
    cols = np.arange(n)
    s = 2.0 * np.sqrt(np.maximum(1.0 + diag[k, cols], 1e-300))
    # The symmetric table holds 4wx, 4wy, 4wz off the first row and 4xy, 4xz, 4yz off the others: row k
    # divided by s is the quaternion of branch k, whose own component is s / 4.  Only that row is divided.
    table = np.zeros((4, 4, n))
    table[0, 1] = table[1, 0] = r21 - r12
    table[0, 2] = table[2, 0] = r02 - r20
    table[0, 3] = table[3, 0] = r10 - r01
    table[1, 2] = table[2, 1] = r01 + r10
    table[1, 3] = table[3, 1] = r02 + r20
    table[2, 3] = table[3, 2] = r12 + r21
    q = table[k, :, cols] / s[:, None]
    q[cols, k] = 0.25 * s
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    q[q[:, 0] < 0] *= -1.0
    return q.reshape(lead + (4,))


def quaternion_multiply(q1, q2) -> np.ndarray:
    """Hamilton product ``q1 * q2`` of quaternions ``(..., 4)`` in (w, x, y, z) order (not re-signed)."""
    return _quaternion_product(check_array(q1, "q1", (4,)), check_array(q2, "q2", (4,)))


def _quaternion_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`quaternion_multiply` of checked arrays ``(..., 4)``."""
    w1, x1, y1, z1 = np.moveaxis(a, -1, 0)
    w2, x2, y2, z2 = np.moveaxis(b, -1, 0)
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                     w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=-1)  # fmt: skip


def transform_from_rotation_translation(R, p) -> np.ndarray:
    """Homogeneous transforms ``(..., 4, 4)`` from rotations ``(..., 3, 3)`` and translations ``(..., 3)`` [m]."""
    R = np.asarray(R, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    lead = np.broadcast_shapes(R.shape[:-2], p.shape[:-1])
    T = np.zeros(lead + (4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = p
    T[..., 3, 3] = 1.0
    return T


def transform_from_pq(p, q_wxyz, *, normalize: bool = False) -> np.ndarray:
    """Poses ``(..., 4, 4)`` from positions ``(..., 3)`` [m] and unit quaternions ``(..., 4)`` (w, x, y, z)."""
    p = check_vectors(p, "p")
    q = check_quaternions(q_wxyz, "q_wxyz", normalize=normalize)
    # (the rotation blocks written in place: a stream of thousands of poses is read this way)
    T = np.empty(np.broadcast_shapes(p.shape[:-1], q.shape[:-1]) + (4, 4))
    _matrix_from_quaternion(q, out=T[..., :3, :3])
    T[..., :3, 3] = p
    T[..., 3, :3] = 0.0
    T[..., 3, 3] = 1.0
    return T


def pq_from_transform(T, *, check: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Positions ``(..., 3)`` [m] and quaternions ``(..., 4)`` (w, x, y, z; ``w >= 0``) of poses ``(..., 4, 4)``."""
    T = check_transforms(T, "T") if check else np.asarray(T, dtype=np.float64)
    return T[..., :3, 3].copy(), quaternion_from_matrix_unchecked(T[..., :3, :3])


def invert_transform(T, *, check: bool = True) -> np.ndarray:
    """Inverse of rigid transforms ``(..., 4, 4)``: ``inv(T_a_b) = T_b_a``, using ``R^T``."""
    T = check_transforms(T, "T") if check else np.asarray(T, dtype=np.float64)
    Rt = np.swapaxes(T[..., :3, :3], -1, -2)
    out = np.zeros_like(T)
    out[..., :3, :3] = Rt
    out[..., :3, 3] = -(Rt @ T[..., :3, 3, None])[..., 0]
    out[..., 3, 3] = 1.0
    return out


def concat(*transforms) -> np.ndarray:
    """Chain transforms left to right with broadcasting: ``concat(T_a_b, T_b_c) = T_a_c``."""
    if not transforms:
        raise InputError("concat: expected at least one transform, got none")
    out = check_array(transforms[0], "transforms[0]", (4, 4))
    for i, T in enumerate(transforms[1:], start=1):
        out = out @ check_array(T, f"transforms[{i}]", (4, 4))
    return out


# --------------------------------------------------------------------------- #
# Lie groups
# --------------------------------------------------------------------------- #
def hat(v) -> np.ndarray:
    """Skew-symmetric matrices ``(..., 3, 3)`` with ``hat(a) @ b = cross(a, b)``."""
    v = np.asarray(v, dtype=np.float64)
    if v.shape[-1:] != (3,):
        raise InputError(f"v: expected shape (..., 3), got {_describe(v)}")
    out = np.zeros(v.shape[:-1] + (3, 3))
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    out[..., 0, 1], out[..., 0, 2] = -z, y
    out[..., 1, 0], out[..., 1, 2] = z, -x
    out[..., 2, 0], out[..., 2, 1] = -y, x
    return out


def vee(W) -> np.ndarray:
    """Inverse of :func:`hat`: the vectors ``(..., 3)`` of skew matrices ``(..., 3, 3)`` (antisymmetrised)."""
    W = np.asarray(W, dtype=np.float64)
    if W.shape[-2:] != (3, 3):
        raise InputError(f"W: expected shape (..., 3, 3), got {_describe(W)}")
    return 0.5 * np.stack(
        [W[..., 2, 1] - W[..., 1, 2], W[..., 0, 2] - W[..., 2, 0], W[..., 1, 0] - W[..., 0, 1]], axis=-1
    )


def so3_coefficients(theta: np.ndarray):
    """A = sin(t)/t, B = (1-cos t)/t^2, C = (t - sin t)/t^3 with Taylor series near 0."""
    small = theta < 1e-4
    t = np.where(small, 1.0, theta)
    t2 = theta * theta
    A = np.where(small, 1 - t2 / 6 + t2 * t2 / 120, np.sin(t) / t)
    # (1 - cos t) / t^2 written with the half angle: the direct form cancels
    # catastrophically for small t, and B multiplies the first-order term of V.
    half_sinc = np.sin(t / 2) / (t / 2)
    B = np.where(small, 0.5 - t2 / 24 + t2 * t2 / 720, 0.5 * half_sinc * half_sinc)
    C = np.where(small, 1.0 / 6 - t2 / 120 + t2 * t2 / 5040, (t - np.sin(t)) / (t * t * t))
    return A, B, C


def so3_exp(omega) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` of rotation vectors ``(..., 3)`` [rad] (Rodrigues, stable at 0)."""
    w = check_vectors(omega, "omega")
    return _so3_exp(w)


def _so3_exp(w: np.ndarray) -> np.ndarray:
    theta = np.linalg.norm(w, axis=-1)
    A, B, _ = so3_coefficients(theta)
    K = hat(w)
    # (I + A K) + B K^2 in place: the same sums, in the same order, without the temporaries
    out = A[..., None, None] * K
    out += np.eye(3)
    KK = K @ K
    KK *= B[..., None, None]
    out += KK
    return out


def so3_log(R, *, check: bool = True) -> np.ndarray:
    """Rotation vectors ``(..., 3)`` [rad], angle in ``[0, pi]``, of rotations ``(..., 3, 3)``.

    Computed through the quaternion, which is well conditioned at every angle
    including pi (where the trace formula loses the axis).
    """
    R = check_rotations(R, "R") if check else np.asarray(R, dtype=np.float64)
    return _so3_log(R)


def _log_from_quaternion(q: np.ndarray) -> np.ndarray:
    w = q[..., 0]
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1)
    # angle = 2 atan2(s, w); rotvec = angle / s * v, with 2/w (1 - s^2/(3 w^2)) near s = 0 (w ~ 1 since w >= 0)
    small = s < 1e-7
    s_safe = np.where(small, 1.0, s)
    factor = np.where(small, 2.0 / np.maximum(w, 1e-300) * (1 - s * s / (3 * w * w + 1e-300)), 2.0 * np.arctan2(s, w) / s_safe)
    return factor[..., None] * v


def _so3_log(R: np.ndarray) -> np.ndarray:
    return _log_from_quaternion(quaternion_from_matrix_unchecked(R))


def se3_exp(xi) -> np.ndarray:
    """Poses ``(..., 4, 4)`` of twists ``xi = (omega, v)`` of shape ``(..., 6)`` (rotation first)."""
    xi = check_array(xi, "xi", (6,))
    return se3_exp_unchecked(xi)


def se3_exp_unchecked(xi: np.ndarray) -> np.ndarray:
    w, v = xi[..., :3], xi[..., 3:]
    theta = np.linalg.norm(w, axis=-1)
    A, B, C = so3_coefficients(theta)
    K = hat(w)
    K2 = K @ K
    I = np.eye(3)
    R = I + A[..., None, None] * K + B[..., None, None] * K2
    V = I + B[..., None, None] * K + C[..., None, None] * K2
    return transform_from_rotation_translation(R, (V @ v[..., None])[..., 0])


def se3_right_jacobian(xi: np.ndarray) -> np.ndarray:
    """Right Jacobians ``(..., 6, 6)`` of the exponential of SE(3) at twists ``xi = (omega, v)`` ``(..., 6)``.

    ``exp(xi + d) = exp(xi) exp(J_r(xi) d + O(d^2))``.  In the ``(omega, v)`` order
    ``J_r = [[J, 0], [Q, J]]`` with ``J = I - B W + C W^2`` the right Jacobian of SO(3) (``W = hat(omega)``,
    ``B``, ``C`` of :func:`so3_coefficients`) and ``Q = Q_l(-omega, -v)``, the translational block of the left
    Jacobian (Barfoot, *State Estimation for Robotics*, 2017, eq. 7.86) at the negated twist.  ``xi`` is taken
    as checked.
    """
    xi = np.asarray(xi, dtype=np.float64)
    w, v = xi[..., :3], xi[..., 3:]
    th = np.linalg.norm(w, axis=-1)
    _, B, C = so3_coefficients(th)
    small = th < 1e-2
    t = np.where(small, 1.0, th)
    t2 = th * th
    s, co = np.sin(t), np.cos(t)
    a1 = np.where(small, 1.0 / 6 - t2 / 120, (t - s) / t**3)
    a2 = np.where(small, 1.0 / 24 - t2 / 720, (t * t + 2 * co - 2) / (2 * t**4))
    a3 = np.where(small, 1.0 / 120 - t2 / 2520, (2 * t - 3 * s + t * co) / (2 * t**5))
    W, P = hat(w), hat(v)
    W2 = W @ W
    WP, PW = W @ P, P @ W
    WPW = WP @ W
    e = (..., None, None)
    # Q_l(-omega, -v): the terms of odd degree change sign
    Q = (-0.5 * P + a1[e] * (WP + PW - WPW) - a2[e] * (W2 @ P + PW @ W - 3 * WPW)
         + a3[e] * (WPW @ W + W2 @ PW))  # fmt: skip
    J = np.eye(3) - B[e] * W + C[e] * W2
    out = np.zeros(xi.shape[:-1] + (6, 6))
    out[..., :3, :3] = J
    out[..., 3:, 3:] = J
    out[..., 3:, :3] = Q
    return out


def se3_log(T, *, check: bool = True) -> np.ndarray:
    """Twists ``(..., 6)`` = ``(omega, v)`` with ``se3_exp(se3_log(T)) = T`` (rotation angle in [0, pi])."""
    T = check_transforms(T, "T") if check else np.asarray(T, dtype=np.float64)
    w = _so3_log(T[..., :3, :3])
    theta = np.linalg.norm(w, axis=-1)
    small = theta < 1e-4
    t = np.where(small, 1.0, theta)
    # V^{-1} = I - K/2 + D K^2 with D = 1/t^2 - cot(t/2) / (2 t), written with the half
    # angle so that it stays well conditioned up to t = pi; series 1/12 + t^2/720 near 0.
    D_big = 1.0 / (t * t) - np.cos(t / 2) / (2 * t * np.sin(t / 2))
    D = np.where(small, 1.0 / 12 + theta**2 / 720, D_big)
    K = hat(w)
    Vinv = np.eye(3) - 0.5 * K + D[..., None, None] * (K @ K)
    v = (Vinv @ T[..., :3, 3, None])[..., 0]
    return np.concatenate([w, v], axis=-1)


def perturb_right(T, xi) -> np.ndarray:
    """``T @ exp(xi)``: perturbation expressed in the moving (child) frame of ``T``."""
    return check_transforms(T, "T") @ se3_exp(xi)


def retract(T, d) -> np.ndarray:
    """``T`` (4, 4) moved by ``d = (phi, dt)``: rotation ``R exp(phi)`` (in ``T``'s child frame), translation
    ``t + dt`` (in its parent frame) -- the perturbation in which kinhec calibrate states its covariances."""
    d = np.asarray(d, dtype=np.float64)
    out = np.array(T, dtype=np.float64, copy=True)
    out[:3, :3] = out[:3, :3] @ so3_exp(d[:3])
    out[:3, 3] = out[:3, 3] + d[3:6]
    return out


def perturb_left(T, xi) -> np.ndarray:
    """``exp(xi) @ T``: perturbation expressed in the fixed (parent) frame of ``T``."""
    return se3_exp(xi) @ check_transforms(T, "T")


def rotation_angle(R, *, check: bool = True) -> np.ndarray:
    """Geodesic angle [rad] in ``[0, pi]`` of rotations ``(..., 3, 3)``."""
    R = check_rotations(R, "R") if check else np.asarray(R, dtype=np.float64)
    q = quaternion_from_matrix_unchecked(R)
    return 2.0 * np.arctan2(np.linalg.norm(q[..., 1:], axis=-1), np.abs(q[..., 0]))


# --------------------------------------------------------------------------- #
# interpolation
# --------------------------------------------------------------------------- #
def slerp_rotations(R0, R1, s) -> np.ndarray:
    """Geodesic interpolation ``R0 exp(s log(R0^T R1))`` for ``s`` in [0, 1] (broadcast)."""
    return _slerp(check_rotations(R0, "R0"), check_rotations(R1, "R1"), np.asarray(s, dtype=np.float64))


def _slerp(R0: np.ndarray, R1: np.ndarray, s: np.ndarray) -> np.ndarray:
    return R0 @ _so3_exp(_so3_log(np.swapaxes(R0, -1, -2) @ R1) * s[..., None])


def interpolate_poses(t, T, t_query, *, out_of_range: str = "nan", check: bool = True) -> np.ndarray:
    """Interpolate a pose stream at query times: SLERP on rotations, linear on translations.

    Parameters
    ----------
    t : array_like, shape (N,)
        Strictly increasing time stamps [s] of the stream.
    T : array_like, shape (N, 4, 4)
        Poses ``T_a_b`` at ``t``.
    t_query : array_like, shape (M,)
        Query times [s] (any order).
    out_of_range : {"nan", "clip", "raise"}
        What to do with query times outside ``[t[0], t[-1]]``: NaN poses,
        the nearest end pose, or an :class:`InputError`.
    check : bool
        False skips the validation of ``t`` and ``T`` (for a caller that has checked them, or interpolates
        one stream many times).

    Returns
    -------
    ndarray, shape (M, 4, 4)
    """
    t = check_timestamps(t, "t") if check else np.asarray(t, dtype=np.float64)
    T = check_transforms(T, "T") if check else np.asarray(T, dtype=np.float64)
    tq = check_array(t_query, "t_query", ())
    if T.shape[:-2] != t.shape:
        raise InputError(f"T: expected {t.shape[0]} poses to match t, got shape {T.shape}")
    if t.size < 1:
        raise InputError("t: expected at least one time stamp, got none")
    if out_of_range not in ("nan", "clip", "raise"):
        raise InputError(f"out_of_range: expected 'nan', 'clip' or 'raise', got {out_of_range!r}")
    tq = np.atleast_1d(tq)
    outside = (tq < t[0]) | (tq > t[-1])
    if out_of_range == "raise" and outside.any():
        raise InputError(
            f"t_query: expected times within [{float(t[0])!r}, {float(t[-1])!r}], got {int(outside.sum())} outside "
            f"(range [{float(tq.min())!r}, {float(tq.max())!r}])"
        )
    if t.size == 1:
        out = np.broadcast_to(T[0], tq.shape + (4, 4)).copy()
    else:
        i, s = _interval_positions(t, tq)
        R = _slerp_intervals(T[:, :3, :3], i, s)
        p = (1 - s)[:, None] * T[i, :3, 3] + s[:, None] * T[i + 1, :3, 3]
        out = transform_from_rotation_translation(R, p)
    if out_of_range == "nan" and outside.any():
        out[outside] = np.nan
    return out


def interpolate_rotations(t, R, t_query, *, check: bool = True) -> np.ndarray:
    """Rotations ``(M, 3, 3)`` of a stream ``R`` ``(N, 3, 3)`` at times ``t`` [s], by SLERP at ``t_query`` ``(M,)``.

    The rotations of :func:`interpolate_poses` (the same values, bit for bit), without the translations;
    query times outside ``[t[0], t[-1]]`` take the nearest end rotation.  ``check=False`` skips the
    validation of ``t`` and ``R`` (for a caller that has checked them).
    """
    t = check_timestamps(t, "t") if check else np.asarray(t, dtype=np.float64)
    R = check_rotations(R, "R") if check else np.asarray(R, dtype=np.float64)
    tq = np.atleast_1d(check_array(t_query, "t_query", ()))
    if R.shape[:-2] != t.shape:
        raise InputError(f"R: expected {t.shape[0]} rotations to match t, got shape {R.shape}")
    if t.size < 1:
        raise InputError("t: expected at least one time stamp, got none")
    if t.size == 1:
        return np.broadcast_to(R[0], tq.shape + (3, 3)).copy()
    return _slerp_intervals(R, *_interval_positions(t, tq))


def interpolated_rotation_angles(t, R, t_a, t_b) -> np.ndarray:
    """Geodesic angles [rad] ``(M,)`` between a stream's rotations at times ``t_a`` and ``t_b`` ``(M,)``.

    The angles of ``interpolate_rotations(t, R, t_a)[k]^T interpolate_rotations(t, R, t_b)[k]`` (SLERP on the
    shortest path of every interval, query times clipped to the stream), to round-off, computed on unit
    quaternions: each interval's relative rotation once, then two quaternion products per query instead of
    rotation matrices.  ``t`` ``(N,)`` strictly increasing and ``R`` ``(N, 3, 3)`` are taken as checked.
    """
    t = np.asarray(t, dtype=np.float64)
    if t.size == 1:
        return np.zeros(np.shape(t_a))
    q = quaternion_from_matrix_unchecked(np.asarray(R, dtype=np.float64))
    rel = _quaternion_product(q[:-1] * _CONJUGATE, q[1:])
    rel[rel[:, 0] < 0] *= -1.0  # the shortest path, as the logarithm takes it
    sin_half = np.linalg.norm(rel[:, 1:], axis=1)
    half = np.arctan2(sin_half, rel[:, 0])
    axis = rel[:, 1:] / np.where(sin_half > 0, sin_half, 1.0)[:, None]

    def at(tq):
        i, s = _interval_positions(t, np.atleast_1d(np.asarray(tq, dtype=np.float64)))
        h = s * half[i]
        return _quaternion_product(q[i], np.concatenate([np.cos(h)[:, None], np.sin(h)[:, None] * axis[i]], axis=1))

    d = _quaternion_product(at(t_a) * _CONJUGATE, at(t_b))
    return 2.0 * np.arctan2(np.linalg.norm(d[:, 1:], axis=1), np.abs(d[:, 0]))


_CONJUGATE = np.array([1.0, -1.0, -1.0, -1.0])


def _interval_positions(t: np.ndarray, tq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each query time (clipped to the stream), its interval ``i`` of ``t`` and its fraction ``s`` along it."""
    tc = np.clip(tq, t[0], t[-1])
    i = np.clip(np.searchsorted(t, tc, side="right") - 1, 0, t.size - 2)
    return i, (tc - t[i]) / (t[i + 1] - t[i])


def _slerp_intervals(R: np.ndarray, i: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``R_i exp(s log(R_i^T R_i+1))`` for intervals ``i`` and fractions ``s``.

    With more queries than intervals, every interval's logarithm is taken once and looked up (the same
    values as per query: each comes from the same two matrices).
    """
    if i.size <= R.shape[0] - 1:
        return _slerp(R[i], R[i + 1], s)
    rel = _so3_log(np.swapaxes(R[:-1], -1, -2) @ R[1:])[i]
    return R[i] @ _so3_exp(rel * s[:, None])


# --------------------------------------------------------------------------- #
# random draws (always from an explicit Generator)
# --------------------------------------------------------------------------- #
def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"rng: expected a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def random_unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` directions uniform on the unit sphere, shape ``(n, 3)``."""
    v = _check_rng(rng).standard_normal((n, 3))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def random_rotations(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` rotations uniform on SO(3) (Haar measure), shape ``(n, 3, 3)``."""
    q = _check_rng(rng).standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return _matrix_from_quaternion(q)


def random_axes_in_cone(rng: np.random.Generator, n: int, axis, half_angle_rad: float) -> np.ndarray:
    """``n`` unit vectors uniform on the spherical cap of half-angle ``half_angle_rad`` around ``axis``.

    ``half_angle_rad = 0`` returns ``axis`` itself ``n`` times; ``pi`` the whole sphere.
    """
    _check_rng(rng)
    a = check_vectors(axis, "axis")
    if a.shape != (3,):
        raise InputError(f"axis: expected shape (3,), got {_describe(axis)}")
    na = np.linalg.norm(a)
    if na < 1e-12:
        raise InputError("axis: expected a non-zero vector, got a zero vector")
    a = a / na
    if not (0.0 <= half_angle_rad <= np.pi):
        raise InputError(f"half_angle_rad: expected a value in [0, pi], got {half_angle_rad!r}")
    cos_h = np.cos(half_angle_rad)
    z = 1.0 - rng.random(n) * (1.0 - cos_h)  # uniform in [cos h, 1]: uniform area on the cap
    phi = rng.random(n) * 2 * np.pi
    r = np.sqrt(np.clip(1 - z * z, 0.0, None))
    local = np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=-1)
    # rotation taking e_z to a (Householder-free: build an orthonormal frame)
    helper = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(a, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(a, e1)
    return local @ np.stack([e1, e2, a])


def random_poses(rng: np.random.Generator, n: int, trans_std_m: float = 1.0) -> np.ndarray:
    """``n`` poses with uniform rotations and Gaussian translations of std ``trans_std_m`` [m]."""
    R = random_rotations(rng, n)
    p = rng.standard_normal((n, 3)) * trans_std_m
    return transform_from_rotation_translation(R, p)


# --------------------------------------------------------------------------- #
# errors
# --------------------------------------------------------------------------- #
def pose_error(T_est, T_true):
    """Rotation error [deg] (geodesic) and translation error [mm] (Euclidean) of ``T_est``.

    Works on single poses (returns two floats) or batches ``(..., 4, 4)``
    (returns two arrays).  Non-finite estimates give NaN errors rather than
    raising, so a failed solver can be scored.
    """
    try:
        Te = np.asarray(T_est, dtype=np.float64)
    except (TypeError, ValueError):
        Te = T_est  # let check_array word the error
    else:
        Te = np.where(np.isinf(Te), np.nan, Te)  # inf counts as a failed estimate, like NaN
    Te = check_array(Te, "T_est", (4, 4), allow_nan=True)
    Tt = check_transforms(T_true, "T_true")
    Te, Tt = np.broadcast_arrays(Te, Tt)
    finite = np.isfinite(Te).all(axis=(-1, -2))
    rel = np.swapaxes(Tt[..., :3, :3], -1, -2) @ np.where(finite[..., None, None], Te[..., :3, :3], np.eye(3))
    # project onto SO(3) defensively: a slightly non-orthonormal estimate still gets a geodesic angle
    U, _, Vt = np.linalg.svd(rel)
    D = np.ones(rel.shape[:-1])
    D[..., 2] = np.sign(np.linalg.det(U @ Vt))
    rel = (U * D[..., None, :]) @ Vt
    rot = np.degrees(rotation_angle(rel, check=False))
    trans = 1000.0 * np.linalg.norm(Te[..., :3, 3] - Tt[..., :3, 3], axis=-1)
    rot = np.where(finite, rot, np.nan)
    trans = np.where(finite, trans, np.nan)
    if rot.ndim == 0:
        return float(rot), float(trans)
    return rot, trans
