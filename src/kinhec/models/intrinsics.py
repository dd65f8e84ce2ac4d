"""Camera intrinsics with Brown-Conrady distortion, and their calibration from views of a planar target.

Model
-----
A point ``p = (X, Y, Z)`` in the camera frame (x right, y down, z forward)
is normalised, ``x = X / Z``, ``y = Y / Z``, ``r^2 = x^2 + y^2``, distorted
with the Brown-Conrady model of OpenCV (the same coefficients, in the same
order as its five-element ``distCoeffs``)

.. math::

    x' = x (1 + k_1 r^2 + k_2 r^4 + k_3 r^6) + 2 p_1 x y + p_2 (r^2 + 2 x^2), \\\\
    y' = y (1 + k_1 r^2 + k_2 r^4 + k_3 r^6) + p_1 (r^2 + 2 y^2) + 2 p_2 x y,

and mapped to pixels ``u = f_x x' + c_x``, ``v = f_y y' + c_y`` (pixel
centres at integer coordinates, the OpenCV convention).  The nine numbers
``(fx, fy, cx, cy, k1, k2, p1, p2, k3)`` are the *intrinsics vector* of this
module, in that order (:data:`INTRINSIC_NAMES`).

Rational model
--------------
OpenCV's ``CALIB_RATIONAL_MODEL``: the radial factor is a ratio,

.. math::

    x' = x \\frac{1 + k_1 r^2 + k_2 r^4 + k_3 r^6}{1 + k_4 r^2 + k_5 r^4 + k_6 r^6}
         + 2 p_1 x y + p_2 (r^2 + 2 x^2)

(``y'`` likewise), which follows the strong barrel distortion of wide-angle
lenses further out than the polynomial does.  Its intrinsics vector has
twelve numbers ``(fx, fy, cx, cy, k1, k2, p1, p2, k3, k4, k5, k6)``
(:data:`RATIONAL_NAMES`, OpenCV's order of its eight ``distCoeffs``); this is
``cv2.projectPoints`` with those eight coefficients.  OpenCV's thin-prism and
tilt terms (12 and 14 coefficients) are not modelled.  Its calibration starts
from the pinhole's and from the fisheye's and holds the coefficients by a
prior (:func:`rational_start`, :data:`RATIONAL_PRIOR_STD`).

Calibration (Zhang 2000)
------------------------
1. One homography per view from the target plane (``z = 0``) to the image,
   by the normalised direct linear transform (Hartley 1997).
2. ``fx, fy, cx, cy`` in closed form from the homographies: each view gives
   two linear constraints on ``B = K^-T K^-1`` (``h1^T B h2 = 0``,
   ``h1^T B h1 = h2^T B h2``); zero skew is added as one more equation.
3. Each view's pose ``T_cam_target`` from ``K^-1 H`` (columns ``r1, r2, t``
   up to scale), projected onto SO(3).
4. Joint refinement of the intrinsics (distortion from 0) and every view pose
   on the pixel residuals by Levenberg-Marquardt with the block-sparse
   Jacobian (:mod:`kinhec.geometry.lsq`).

Fisheye (equidistant) model
---------------------------
The model of OpenCV's ``cv2.fisheye`` (Kannala-Brandt with four terms;
Kalibr's ``pinhole-equi``): the angle of the ray off the optical axis
``theta = atan2(sqrt(X^2 + Y^2), Z)`` is distorted,

.. math::

    \\theta_d = \\theta (1 + k_1 \\theta^2 + k_2 \\theta^4 + k_3 \\theta^6 + k_4 \\theta^8),

and the pixel lies at the radius ``theta_d`` in the ray's direction,
``u = f_x theta_d X / rho + c_x``, ``v = f_y theta_d Y / rho + c_y`` with
``rho = sqrt(X^2 + Y^2)`` (no skew).  Its *intrinsics vector* has eight
numbers ``(fx, fy, cx, cy, k1, k2, k3, k4)`` (:data:`EQUIDISTANT_NAMES`):
the length of an intrinsics vector tells the two models apart (nine: the
pinhole with Brown-Conrady distortion, eight: the fisheye).  Up to 90 deg off
the axis this is ``cv2.fisheye.projectPoints``; beyond, where OpenCV takes
``atan(rho / Z)`` and so mirrors a ray behind the camera's plane through the
centre, the angle here is the ray's own (lenses of 180 deg and more see it).
:func:`project_points`, :func:`project_points_jacobians` and
:func:`unproject_points` work on points in the camera frame.

References
----------
J. Kannala and S. S. Brandt, "A generic camera model and calibration method
for conventional, wide-angle, and fish-eye lenses," *IEEE TPAMI* 28(8), 2006.
Z. Zhang, "A flexible new technique for camera calibration," *IEEE TPAMI*
22(11), 2000.  R. I. Hartley, "In defense of the eight-point algorithm,"
*IEEE TPAMI* 19(6), 1997.  D. C. Brown, "Decentering distortion of lenses,"
*Photogrammetric Engineering* 32(3), 1966.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import DegenerateMotionError, InputError
from kinhec.geometry.lsq import BlockJacobian, BlockStructure, levenberg_marquardt

__all__ = [
    "INTRINSIC_NAMES",
    "EQUIDISTANT_NAMES",
    "RATIONAL_NAMES",
    "MODELS",
    "RATIONAL_PRIOR_STD",
    "intrinsic_names",
    "model_of",
    "project_points",
    "project_points_jacobians",
    "pose_jacobians",
    "unproject_points",
    "PackedViews",
    "pack_views",
    "project",
    "homographies",
    "zhang_intrinsics",
    "poses_from_homographies",
    "CameraCalibration",
    "calibrate_camera",
    "fisheye_start",
    "rational_start",
    "rational_from_equidistant",
    "camera_calibration",
    "residual_norms",
    "normalisation",
]

#: Names of the intrinsics vector, in order.
INTRINSIC_NAMES = ("fx", "fy", "cx", "cy", "k1", "k2", "p1", "p2", "k3")

#: Names of the fisheye (equidistant) intrinsics vector, in order.
EQUIDISTANT_NAMES = ("fx", "fy", "cx", "cy", "k1", "k2", "k3", "k4")
#: Names of the rational model's intrinsics vector, in order (OpenCV's eight ``distCoeffs`` after ``fx fy cx cy``).
RATIONAL_NAMES = ("fx", "fy", "cx", "cy", "k1", "k2", "p1", "p2", "k3", "k4", "k5", "k6")
#: The camera models, named as intrinsics files name their distortion, by the length of their intrinsics vector.
MODELS = {9: "radtan", 8: "equidistant", 12: "rational"}
_NAMES = {"radtan": INTRINSIC_NAMES, "equidistant": EQUIDISTANT_NAMES, "rational": RATIONAL_NAMES}
#: Below this ratio ``rho / Z`` a fisheye point is on the axis (the limits of ``theta_d / rho`` and its derivatives).
_ON_AXIS = 1e-7

#: Zero-mean prior standard deviations of the rational model's ``(k1, k2, p1, p2, k3, k4, k5, k6)`` in its fits.
#: The ratio is nearly degenerate (a numerator's and the denominator's terms that grow together leave the pixels
#: almost unchanged), and unheld the coefficients wander along that valley to tens, where numerator and denominator
#: share a zero inside the field; one unit keeps them to the few units a wide-angle lens needs.
RATIONAL_PRIOR_STD = np.array([1.0, 1.0, 0.005, 0.005, 1.0, 1.0, 1.0, 1.0])

#: Fewest views a planar calibration accepts (Zhang needs 3 for four unknowns with zero skew; 3 for margin).
MIN_VIEWS = 3
#: Fewest points per view (a homography needs 4).
MIN_POINTS = 4


@dataclass(frozen=True)
class PackedViews:
    """Views of a target padded to one array (views with fewer points are masked).

    Attributes
    ----------
    points_3d : ndarray, shape (N, P, 3)
        Target points [m] in the target frame, padded with zeros.
    points_2d : ndarray, shape (N, P, 2)
        Observed pixels [px], padded with zeros.
    mask : ndarray of bool, shape (N, P)
        Real (not padded) points.
    """

    points_3d: np.ndarray
    points_2d: np.ndarray
    mask: np.ndarray

    @property
    def n_views(self) -> int:
        return int(self.mask.shape[0])

    @property
    def n_points(self) -> int:
        return int(self.mask.sum())


def pack_views(points_3d, points_2d) -> PackedViews:
    """Pad per-view point lists into :class:`PackedViews`, checking shapes and finiteness.

    Parameters
    ----------
    points_3d : sequence of array_like, each shape (P_i, 3)
        Target points [m] of view ``i`` in the target frame.
    points_2d : sequence of array_like, each shape (P_i, 2)
        Their observed pixels [px].
    """
    if len(points_3d) != len(points_2d):
        raise InputError(f"points_3d / points_2d: expected as many views, got {len(points_3d)} and {len(points_2d)}")
    p3 = [np.asarray(p, dtype=np.float64) for p in points_3d]
    p2 = [np.asarray(p, dtype=np.float64) for p in points_2d]
    for i, (a, b) in enumerate(zip(p3, p2)):
        if a.ndim != 2 or a.shape[1] != 3 or b.shape != (a.shape[0], 2):
            raise InputError(f"view {i}: expected points_3d (P, 3) and points_2d (P, 2), got {a.shape} and {b.shape}")
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            raise InputError(f"view {i}: expected finite points, got NaN or inf")
    P = max((a.shape[0] for a in p3), default=0)
    N = len(p3)
    P3 = np.zeros((N, P, 3))
    P2 = np.zeros((N, P, 2))
    mask = np.zeros((N, P), dtype=bool)
    for i, (a, b) in enumerate(zip(p3, p2)):
        P3[i, : a.shape[0]] = a
        P2[i, : a.shape[0]] = b
        mask[i, : a.shape[0]] = True
    return PackedViews(P3, P2, mask)


def _distort(xy: np.ndarray, d: np.ndarray) -> np.ndarray:
    """OpenCV's distortion of normalised coordinates: ``d = (k1, k2, p1, p2, k3)`` or, the rational model,
    ``(k1, k2, p1, p2, k3, k4, k5, k6)``."""
    x, y = xy[..., 0], xy[..., 1]
    r2 = x * x + y * y
    radial = 1.0 + r2 * (d[0] + r2 * (d[1] + r2 * d[4]))
    if d.size == 8:
        radial = radial / (1.0 + r2 * (d[5] + r2 * (d[6] + r2 * d[7])))
    xd = x * radial + 2.0 * d[2] * x * y + d[3] * (r2 + 2.0 * x * x)
    yd = y * radial + d[2] * (r2 + 2.0 * y * y) + 2.0 * d[3] * x * y
    return np.stack([xd, yd], axis=-1)


#: The three lens models' parameter lists, as error messages name them.
MODEL_FORMS = ("9 numbers (fx, fy, cx, cy, k1, k2, p1, p2, k3; pinhole), 8 (fx, fy, cx, cy, k1, k2, k3, k4; fisheye) "
               "or 12 (fx, fy, cx, cy, k1, k2, p1, p2, k3, k4, k5, k6; rational)")


def model_of(intrinsics, what: str = "intrinsics") -> str:
    """``"radtan"`` for nine intrinsics, ``"equidistant"`` for eight, ``"rational"`` for twelve (see the module
    doc); else an InputError."""
    n = int(np.size(intrinsics))
    if n not in MODELS:
        raise InputError(f"{what}: expected {MODEL_FORMS}, got {n}")
    return MODELS[n]


def intrinsic_names(intrinsics) -> tuple:
    """:data:`INTRINSIC_NAMES`, :data:`EQUIDISTANT_NAMES` or :data:`RATIONAL_NAMES`, by the model of ``intrinsics``."""
    return _NAMES[model_of(intrinsics)]


def _equidistant_radius(p: np.ndarray, d: np.ndarray):
    """``theta``, ``theta_d``, ``d theta_d / d theta``, ``rho`` and ``s = theta_d / rho`` (its on-axis limit
    ``1 / Z`` there) of points ``p`` (..., 3)."""
    X, Y, Z = p[..., 0], p[..., 1], p[..., 2]
    rho = np.hypot(X, Y)
    theta = np.arctan2(rho, Z)
    t2 = theta * theta
    poly = 1.0 + t2 * (d[0] + t2 * (d[1] + t2 * (d[2] + t2 * d[3])))
    theta_d = theta * poly
    dpoly = 1.0 + t2 * (3.0 * d[0] + t2 * (5.0 * d[1] + t2 * (7.0 * d[2] + t2 * 9.0 * d[3])))
    axis = rho <= _ON_AXIS * np.abs(Z)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(axis, 1.0 / Z, theta_d / rho)
    return theta, theta_d, dpoly, rho, s, axis


def project_points(intrinsics, points) -> np.ndarray:
    """Pixels (..., 2) [px] of points (..., 3) [m] in the camera frame, by either model (see the module doc).

    Pinhole points must lie in front of the camera (``Z > 0``); fisheye points anywhere but the camera's centre.
    """
    k = np.asarray(intrinsics, dtype=np.float64)
    p = np.asarray(points, dtype=np.float64)
    if model_of(k) != "equidistant":
        return _distort(p[..., :2] / p[..., 2:3], k[4:]) * k[0:2] + k[2:4]
    s = _equidistant_radius(p, k[4:8])[4]
    return p[..., :2] * s[..., None] * k[0:2] + k[2:4]


def project_points_jacobians(intrinsics, points):
    """Pixels and their derivatives, analytic, by any of the three models (see the module doc).

    Parameters
    ----------
    intrinsics : array_like, shape (9,), (8,) or (12,)
        The pinhole's ``(fx, fy, cx, cy, k1, k2, p1, p2, k3)``, the fisheye's ``(fx, fy, cx, cy, k1, k2, k3, k4)``
        or the rational model's ``(fx, fy, cx, cy, k1, k2, p1, p2, k3, k4, k5, k6)``.
    points : array_like, shape (..., 3)
        Points [m] in the camera frame (a pinhole's and the rational model's in front of it, ``Z > 0``).

    Returns
    -------
    uv : ndarray, shape (..., 2)
        Pixels [px].
    d_point : ndarray, shape (..., 2, 3)
        ``d uv / d (X, Y, Z)`` [px/m].
    d_intrinsics : ndarray, shape (..., 2, n)
        ``d uv / d intrinsics``, in the intrinsics' order.
    """
    k = np.asarray(intrinsics, dtype=np.float64)
    p = np.asarray(points, dtype=np.float64)
    if model_of(k) != "equidistant":
        return _pinhole_jacobians(k, p)
    X, Y, Z = p[..., 0], p[..., 1], p[..., 2]
    theta, theta_d, dpoly, rho, s, axis = _equidistant_radius(p, k[4:8])
    n2 = rho * rho + Z * Z
    # d s / d X = a X, d s / d Y = a Y, d s / d Z = -dpoly / n2 with a = (dpoly Z / n2 - s) / rho^2; on the axis
    # the limit of a (theta_d = rho / Z + (k1 - 1/3) rho^3 / Z^3 + ...) is 2 (k1 - 1/3) / Z^3
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(axis, 2.0 * (k[4] - 1.0 / 3.0) / Z**3, (dpoly * Z / n2 - s) / (rho * rho))
    dsz = -dpoly / n2
    f = k[0:2]
    xy = p[..., :2]
    uv = xy * s[..., None] * f + k[2:4]
    d_point = np.zeros(p.shape[:-1] + (2, 3))
    for i in range(2):  # u from X, v from Y
        q = xy[..., i]
        d_point[..., i, 0] = f[i] * q * a * X
        d_point[..., i, 1] = f[i] * q * a * Y
        d_point[..., i, i] += f[i] * s
        d_point[..., i, 2] = f[i] * q * dsz
    d_int = np.zeros(p.shape[:-1] + (2, 8))
    d_int[..., 0, 0] = s * X
    d_int[..., 1, 1] = s * Y
    d_int[..., 0, 2] = 1.0
    d_int[..., 1, 3] = 1.0
    # d theta_d / d k_j = theta^(2j + 3); the pixel moves by it along X / rho (the on-axis limit: 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        dir_ = np.where(axis[..., None], 0.0, xy / rho[..., None])
    tp = theta**3
    t2 = theta * theta
    for j in range(4):
        d_int[..., :, 4 + j] = f * dir_ * tp[..., None]
        tp = tp * t2
    return uv, d_point, d_int


def pose_jacobians(intrinsics, R: np.ndarray, t: np.ndarray, points: np.ndarray, inv_b: float = 1.0):
    """A pixel's derivatives by the intrinsics, by a right perturbation of its view's pose and by its camera-frame point.

    A point ``P`` (target frame) seen through a pose ``T = (R, t0)`` lies at ``p = R P + t`` in the camera frame,
    ``t = inv_b t0`` (``inv_b``: one over a board's scale, which divides the translation).  ``T exp(eps)``,
    ``eps = (omega, v)``, moves it by ``R (omega x P + inv_b v)``, so a row ``g`` of ``d uv / d p`` times ``R``
    gives ``(P x g, inv_b g)``.

    Parameters
    ----------
    intrinsics : array_like, shape (9,), (8,) or (12,)
        As :func:`project_points_jacobians` takes them.
    R : ndarray, shape (n, 3, 3)
        The rotation of each point's pose.
    t : ndarray, shape (n, 3)
        The translation of each point's pose as the point sees it (times ``inv_b``) [m].
    points : ndarray, shape (n, 3)
        The points in the target frame [m].
    inv_b : float
        The factor on the pose's translation.

    Returns
    -------
    d_intrinsics : ndarray, shape (n, 2, len(intrinsics))
    d_eps : ndarray, shape (n, 2, 6)
    d_point : ndarray, shape (n, 2, 3)
    """
    _, d_point, d_int = project_points_jacobians(intrinsics, (R @ points[:, :, None])[:, :, 0] + t)
    G = d_point @ R
    out = np.empty(G.shape[:-1] + (6,))
    out[..., 3:] = G * inv_b
    P = points[:, None, :]
    out[..., 0] = P[..., 1] * G[..., 2] - P[..., 2] * G[..., 1]
    out[..., 1] = P[..., 2] * G[..., 0] - P[..., 0] * G[..., 2]
    out[..., 2] = P[..., 0] * G[..., 1] - P[..., 1] * G[..., 0]
    return d_int, out, d_point


def _pinhole_jacobians(k: np.ndarray, p: np.ndarray):
    """:func:`project_points_jacobians` of the pinhole (nine intrinsics) and the rational model (twelve)."""
    rational = k.size == 12
    d = k[4:]
    Z = p[..., 2]
    x, y = p[..., 0] / Z, p[..., 1] / Z
    r2 = x * x + y * y
    num = 1.0 + r2 * (d[0] + r2 * (d[1] + r2 * d[4]))
    dnum = d[0] + r2 * (2.0 * d[1] + 3.0 * r2 * d[4])  # d num / d r^2
    if rational:
        den = 1.0 + r2 * (d[5] + r2 * (d[6] + r2 * d[7]))
        dden = d[5] + r2 * (2.0 * d[6] + 3.0 * r2 * d[7])
    else:
        den, dden = np.ones_like(r2), np.zeros_like(r2)
    g = num / den
    dg = (dnum - g * dden) / den  # d g / d r^2
    p1, p2 = d[2], d[3]
    xd = x * g + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x)
    yd = y * g + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y
    fx, fy = k[0], k[1]
    uv = np.stack([fx * xd + k[2], fy * yd + k[3]], axis=-1)
    # d (xd, yd) / d (x, y)
    a = 2.0 * dg
    dxx = g + a * x * x + 2.0 * p1 * y + 6.0 * p2 * x
    dxy = a * x * y + 2.0 * p1 * x + 2.0 * p2 * y
    dyx = a * x * y + 2.0 * p1 * x + 2.0 * p2 * y
    dyy = g + a * y * y + 6.0 * p1 * y + 2.0 * p2 * x
    # (x, y) from (X, Y, Z): d x / d X = 1 / Z, d x / d Z = -x / Z
    d_point = np.zeros(p.shape[:-1] + (2, 3))
    d_point[..., 0, 0] = fx * dxx / Z
    d_point[..., 0, 1] = fx * dxy / Z
    d_point[..., 0, 2] = -fx * (dxx * x + dxy * y) / Z
    d_point[..., 1, 0] = fy * dyx / Z
    d_point[..., 1, 1] = fy * dyy / Z
    d_point[..., 1, 2] = -fy * (dyx * x + dyy * y) / Z
    d_int = np.zeros(p.shape[:-1] + (2, k.size))
    d_int[..., 0, 0] = xd
    d_int[..., 1, 1] = yd
    d_int[..., 0, 2] = 1.0
    d_int[..., 1, 3] = 1.0
    # the radial terms: d g / d k1..k3 = r^(2j) / den, d g / d k4..k6 = -g r^(2j) / den
    r4 = r2 * r2
    for col, pw in ((4, r2), (5, r4), (8, r4 * r2)):
        d_int[..., 0, col] = fx * x * pw / den
        d_int[..., 1, col] = fy * y * pw / den
    if rational:
        for col, pw in ((9, r2), (10, r4), (11, r4 * r2)):
            d_int[..., 0, col] = -fx * x * g * pw / den
            d_int[..., 1, col] = -fy * y * g * pw / den
    d_int[..., 0, 6] = fx * 2.0 * x * y
    d_int[..., 1, 6] = fy * (r2 + 2.0 * y * y)
    d_int[..., 0, 7] = fx * (r2 + 2.0 * x * x)
    d_int[..., 1, 7] = fy * 2.0 * x * y
    return uv, d_point, d_int


def _distortion_and_jacobian(x: np.ndarray, y: np.ndarray, d: np.ndarray):
    """The distorted normalised coordinates of ``(x, y)`` (:func:`_distort`, ``d`` five or eight coefficients) and
    their 2 x 2 Jacobian ``(dxx, dxy, dyx, dyy)``."""
    r2 = x * x + y * y
    num = 1.0 + r2 * (d[0] + r2 * (d[1] + r2 * d[4]))
    dnum = d[0] + r2 * (2.0 * d[1] + 3.0 * r2 * d[4])
    if d.size == 8:
        den = 1.0 + r2 * (d[5] + r2 * (d[6] + r2 * d[7]))
        g = num / den
        dg = (dnum - g * (d[5] + r2 * (2.0 * d[6] + 3.0 * r2 * d[7]))) / den
    else:
        g, dg = num, dnum
    p1, p2 = d[2], d[3]
    xd = x * g + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x)
    yd = y * g + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y
    a = 2.0 * dg
    cross = a * x * y + 2.0 * p1 * x + 2.0 * p2 * y
    return xd, yd, g + a * x * x + 2.0 * p1 * y + 6.0 * p2 * x, cross, cross, g + a * y * y + 6.0 * p1 * y + 2.0 * p2 * x


def _undistort_pinhole(k: np.ndarray, uv: np.ndarray, n_iter: int) -> np.ndarray:
    """Normalised coordinates (..., 2) of pixels of a pinhole or rational camera by Newton's method on the
    distortion, started at the distorted coordinates (each pixel until its step is below 1e-15); NaN where it does
    not converge to 1e-9, or to a point where the map is not increasing or that lies on the other side of the centre
    (a pixel beyond the radius where the model's radial map turns back has no ray)."""
    m = ((uv - k[2:4]) / k[0:2]).reshape(-1, 2)
    d = k[4:]
    x, y = m[:, 0].copy(), m[:, 1].copy()
    live = np.arange(x.size)
    with np.errstate(all="ignore"):  # a pixel without a ray diverges; it is told apart below
        for _ in range(n_iter):
            xd, yd, a, b, c, e = _distortion_and_jacobian(x[live], y[live], d)
            rx, ry = xd - m[live, 0], yd - m[live, 1]
            det = a * e - b * c
            sx, sy = (e * rx - b * ry) / det, (a * ry - c * rx) / det
            x[live] -= sx
            y[live] -= sy
            moving = np.abs(sx) + np.abs(sy) > 1e-15 * (1.0 + np.abs(x[live]) + np.abs(y[live]))
            live = live[moving]  # NaN steps are not moving: NaN compares false
            if live.size == 0:
                break
        xd, yd, a, b, c, e = _distortion_and_jacobian(x, y, d)
        # converged, the map increasing there, and on the pixel's own side of the centre (far beyond the field the
        # rational model's radial factor turns negative and mirrors a ray through the centre)
        bad = (~(np.maximum(np.abs(xd - m[:, 0]), np.abs(yd - m[:, 1])) <= 1e-9) | ~(a * e - b * c > 0)
               | ~(x * m[:, 0] + y * m[:, 1] >= 0))  # fmt: skip
    q = np.stack([x, y], axis=-1)
    q[bad] = np.nan
    return q.reshape(np.shape(uv))


def unproject_points(intrinsics, uv, n_iter: int = 30) -> np.ndarray:
    """Unit rays (..., 3) in the camera frame of pixels (..., 2) [px] (the inverse of :func:`project_points`).

    Fisheye: ``theta`` from ``theta_d`` by Newton's method, started at ``theta_d`` (the distortion polynomial must
    be increasing up to the pixel's radius, as a calibrated lens's is over its image circle).  Pinhole and rational
    model: the normalised coordinates by Newton's method on the distortion, started at the distorted ones; a pixel
    it does not invert (beyond the radius where the model's radial map stops increasing) gets a NaN ray.
    """
    k = np.asarray(intrinsics, dtype=np.float64)
    if model_of(k) != "equidistant":
        q = _undistort_pinhole(k, np.asarray(uv, dtype=np.float64), max(n_iter, 50))
        r = np.concatenate([q, np.ones(q.shape[:-1] + (1,))], axis=-1)
        return r / np.linalg.norm(r, axis=-1, keepdims=True)
    m = (np.asarray(uv, dtype=np.float64) - k[2:4]) / k[0:2]
    td = np.hypot(m[..., 0], m[..., 1])
    d = k[4:8]
    theta = td.copy()
    for _ in range(n_iter):
        t2 = theta * theta
        g = theta * (1.0 + t2 * (d[0] + t2 * (d[1] + t2 * (d[2] + t2 * d[3])))) - td
        dg = 1.0 + t2 * (3.0 * d[0] + t2 * (5.0 * d[1] + t2 * (7.0 * d[2] + t2 * 9.0 * d[3])))
        step = g / dg
        theta = theta - step
        if np.all(np.abs(step) <= 1e-15 * np.maximum(theta, 1.0)):
            break
    with np.errstate(divide="ignore", invalid="ignore"):
        dir_ = np.where((td > 0)[..., None], m / td[..., None], 0.0)
    return np.concatenate([dir_ * np.sin(theta)[..., None], np.cos(theta)[..., None]], axis=-1)


def project(intrinsics, T_cam_target, points_3d) -> np.ndarray:
    """Pixels of target points seen by a camera with the given intrinsics.

    Parameters
    ----------
    intrinsics : array_like, shape (9,) or (8,)
        ``(fx, fy, cx, cy, k1, k2, p1, p2, k3)`` [px, px, px, px, -, -, -, -, -], or the fisheye's
        ``(fx, fy, cx, cy, k1, k2, k3, k4)``.
    T_cam_target : array_like, shape (N, 4, 4)
        Pose of the target in the camera frame (maps target to camera coordinates) [m].
    points_3d : array_like, shape (N, P, 3) or (P, 3)
        Target points [m] in the target frame.

    Returns
    -------
    ndarray, shape (N, P, 2)
        Pixels ``(u, v)`` [px].
    """
    k = np.asarray(intrinsics, dtype=np.float64)
    T = np.asarray(T_cam_target, dtype=np.float64)
    pts = np.asarray(points_3d, dtype=np.float64)
    p = np.matmul(pts, np.swapaxes(T[:, :3, :3], -1, -2)) + T[:, None, :3, 3]
    if k.size == 8:  # the fisheye
        return project_points(k, p)
    xy = p[..., :2] / p[..., 2:3]
    xyd = _distort(xy, k[4:])
    return xyd * k[None, None, 0:2] + k[None, None, 2:4]


def normalisation(pts: np.ndarray) -> np.ndarray:
    c = pts.mean(axis=0)
    s = np.sqrt(2.0) / max(np.mean(np.linalg.norm(pts - c, axis=1)), 1e-12)
    return np.array([[s, 0.0, -s * c[0]], [0.0, s, -s * c[1]], [0.0, 0.0, 1.0]])


def homographies(views: PackedViews) -> np.ndarray:
    """Homographies ``H_i`` (target plane ``z = 0`` -> pixels) by the normalised DLT.

    Returns
    -------
    ndarray, shape (N, 3, 3)
        ``[u, v, 1]^T ~ H_i [X, Y, 1]^T``, scaled so that ``H[2, 2] = 1``.
    """
    out = np.empty((views.n_views, 3, 3))
    for i in range(views.n_views):  # one small SVD per view; views have different point counts
        m = views.mask[i]
        if m.sum() < MIN_POINTS:
            raise InputError(f"view {i}: expected at least {MIN_POINTS} points for a homography, got {int(m.sum())}")
        src = views.points_3d[i, m, :2]
        dst = views.points_2d[i, m]
        Ts, Td = normalisation(src), normalisation(dst)
        s = src @ Ts[:2, :2].T + Ts[:2, 2]
        d = dst @ Td[:2, :2].T + Td[:2, 2]
        n = s.shape[0]
        M = np.zeros((2 * n, 9))
        one = np.ones(n)
        M[0::2, 0:3] = np.column_stack([s, one])
        M[0::2, 6:9] = -d[:, :1] * np.column_stack([s, one])
        M[1::2, 3:6] = np.column_stack([s, one])
        M[1::2, 6:9] = -d[:, 1:2] * np.column_stack([s, one])
        # with four points M is 8 x 9, and only the full V holds its null vector (five or more: the same V as before)
        Hn = np.linalg.svd(M, full_matrices=M.shape[0] < 9)[2][-1].reshape(3, 3)
        H = np.linalg.solve(Td, Hn @ Ts)
        out[i] = H / H[2, 2]
    return out


def _v(H: np.ndarray, i: int, j: int) -> np.ndarray:
    hi, hj = H[:, :, i], H[:, :, j]
    return np.stack([
        hi[:, 0] * hj[:, 0], hi[:, 0] * hj[:, 1] + hi[:, 1] * hj[:, 0], hi[:, 1] * hj[:, 1],
        hi[:, 2] * hj[:, 0] + hi[:, 0] * hj[:, 2], hi[:, 2] * hj[:, 1] + hi[:, 1] * hj[:, 2], hi[:, 2] * hj[:, 2],
    ], axis=-1)  # fmt: skip


def zhang_intrinsics(H, image_size) -> np.ndarray:
    """Closed-form ``(fx, fy, cx, cy)`` [px] from at least three homographies (zero skew).

    Parameters
    ----------
    H : array_like, shape (N, 3, 3)
        Plane-to-image homographies (:func:`homographies`).
    image_size : (int, int)
        ``(width, height)`` [px]; used to condition the linear system.

    Raises
    ------
    DegenerateMotionError
        When the views do not constrain the intrinsics (e.g. all target planes parallel).
    """
    H = np.asarray(H, dtype=np.float64)
    w, h = float(image_size[0]), float(image_size[1])
    # condition: pixels scaled to about unit size around the image centre
    N0 = np.array([[2.0 / w, 0.0, -1.0], [0.0, 2.0 / w, -h / w], [0.0, 0.0, 1.0]])
    Hc = N0 @ H
    Hc = Hc / np.linalg.norm(Hc, axis=(1, 2))[:, None, None]
    V = np.concatenate([_v(Hc, 0, 1), _v(Hc, 0, 0) - _v(Hc, 1, 1), 10.0 * np.array([[0, 1.0, 0, 0, 0, 0]])])
    _, sv, Vt = np.linalg.svd(V)
    b = Vt[-1]
    B11, B12, B22, B13, B23, B33 = b
    if B11 < 0:
        B11, B12, B22, B13, B23, B33 = -b
    den = B11 * B22 - B12 * B12
    if H.shape[0] < MIN_VIEWS or not (den > 0 and sv[-2] > 1e-9 * sv[0]):
        raise DegenerateMotionError(
            f"intrinsics: expected at least {MIN_VIEWS} views of the target in different orientations, "
            f"got {H.shape[0]} views that do not constrain the focal lengths"
        )
    v0 = (B12 * B13 - B11 * B23) / den
    lam = B33 - (B13 * B13 + v0 * (B12 * B13 - B11 * B23)) / B11
    if not lam / B11 > 0:
        raise DegenerateMotionError("intrinsics: the homographies give no real focal length (views too similar)")
    alpha = np.sqrt(lam / B11)
    beta = np.sqrt(lam * B11 / den)
    u0 = -B13 * alpha * alpha / lam
    Kc = np.array([[alpha, 0.0, u0], [0.0, beta, v0], [0.0, 0.0, 1.0]])
    K = np.linalg.solve(N0, Kc)
    return np.array([K[0, 0], K[1, 1], K[0, 2], K[1, 2]])


def poses_from_homographies(K, H) -> np.ndarray:
    """Target poses ``T_cam_target`` (N, 4, 4) [m] from homographies and the intrinsic matrix ``K`` (3, 3).

    The target is in front of the camera (positive depth); the rotation is the
    nearest one (SVD) to ``[r1, r2, r1 x r2]``.
    """
    M = np.linalg.solve(np.asarray(K, dtype=np.float64), np.asarray(H, dtype=np.float64))
    if not np.isfinite(M).all() or not (np.linalg.norm(M[:, :, 0], axis=1) > 0).all():
        bad = np.flatnonzero(~np.isfinite(M).all(axis=(1, 2)) | ~(np.linalg.norm(M[:, :, 0], axis=1) > 0))
        raise DegenerateMotionError(f"intrinsics: the homographies of views {bad.tolist()} give no target pose "
                                    "(a view whose corners are degenerate, or a camera matrix that does not fit them)")
    lam = 1.0 / np.linalg.norm(M[:, :, 0], axis=1)
    lam = np.where(M[:, 2, 2] * lam < 0, -lam, lam)
    r1 = M[:, :, 0] * lam[:, None]
    r2 = M[:, :, 1] * lam[:, None]
    t = M[:, :, 2] * lam[:, None]
    R = np.stack([r1, r2, np.cross(r1, r2)], axis=-1)
    U, _, Vt = np.linalg.svd(R)
    D = np.ones((R.shape[0], 3))
    D[:, 2] = np.sign(np.linalg.det(U @ Vt))
    R = (U * D[:, None, :]) @ Vt
    return se3.transform_from_rotation_translation(R, t)


@dataclass(frozen=True)
class CameraCalibration:
    """Result of :func:`calibrate_camera`.

    Attributes
    ----------
    intrinsics : ndarray, shape (9,)
        ``(fx, fy, cx, cy, k1, k2, p1, p2, k3)``.
    T_cam_target : ndarray, shape (N, 4, 4)
        Pose of the target in the camera frame per view [m].
    rms_px, mean_px : float
        Root-mean-square and mean Euclidean reprojection error [px].
    """

    intrinsics: np.ndarray
    T_cam_target: np.ndarray
    rms_px: float
    mean_px: float


def residual_norms(uv: np.ndarray, views: PackedViews) -> np.ndarray:
    """Euclidean distance [px] between projected and observed pixels of the real points, shape (n_points,)."""
    return np.linalg.norm((uv - views.points_2d)[views.mask], axis=-1)


def camera_calibration(views: PackedViews, intrinsics, T_cam_target) -> CameraCalibration:
    """A :class:`CameraCalibration` of given intrinsics and view poses, with their reprojection errors."""
    k = np.asarray(intrinsics, dtype=np.float64)
    d = residual_norms(project(k, T_cam_target, views.points_3d), views)
    return CameraCalibration(k, T_cam_target, float(np.sqrt(np.mean(d * d))), float(d.mean()))


def calibrate_camera(views: PackedViews, image_size, *, fix_k3: bool = False, intrinsics=None,
                     model: str = "radtan") -> CameraCalibration:  # fmt: skip
    """Intrinsics and view poses from views of a planar target (Zhang's method, then joint refinement).

    Parameters
    ----------
    views : PackedViews
        Target points (``z = 0`` in the target frame) [m] and their pixels [px].
    image_size : (int, int)
        ``(width, height)`` [px].
    fix_k3 : bool
        Keep ``k3 = 0`` (pinhole only).
    intrinsics : array_like, shape (9,), (8,) or (12,), optional
        Known intrinsics (nine: pinhole, eight: fisheye, twelve: rational): only the view poses are estimated (a
        batch PnP).
    model : {"radtan", "equidistant", "rational"}
        The camera model estimated when ``intrinsics`` is None (:data:`MODELS`); the fisheye starts as
        :func:`fisheye_start` says, the rational model as :func:`rational_start` says.

    Returns
    -------
    CameraCalibration
    """
    if views.n_views < MIN_VIEWS:
        raise InputError(f"views: expected at least {MIN_VIEWS} views of the target, got {views.n_views}")
    if np.abs(views.points_3d[..., 2][views.mask]).max(initial=0.0) > 1e-9:
        raise InputError("points_3d: expected a planar target (z = 0 in the target frame), got points off the plane")
    if model not in MODELS.values():
        raise InputError(f"model: expected one of {', '.join(MODELS.values())}, got {model!r}")
    if (intrinsics is not None and np.size(intrinsics) == 8) or (intrinsics is None and model == "equidistant"):
        k0, T0 = fisheye_start(views, image_size, intrinsics)
        n_int = 0 if intrinsics is not None else 8
        return _refine_camera(views, k0, n_int, T0)
    if intrinsics is not None and np.size(intrinsics) == 12:
        k0 = np.asarray(intrinsics, dtype=np.float64)
        if not np.isfinite(k0).all() or k0[0] <= 0 or k0[1] <= 0:
            raise InputError(f"intrinsics: expected 12 finite rational intrinsics (fx, fy, cx, cy, k1, k2, p1, p2, k3, "
                             f"k4, k5, k6) with fx, fy > 0, got {k0!r}")  # fmt: skip
        return _refine_camera(views, k0, 0, _fisheye_poses(views, k0)[0])
    if intrinsics is None and model == "rational":
        return rational_start(views, image_size)
    H = homographies(views)
    if intrinsics is None:
        f4 = zhang_intrinsics(H, image_size)
        k0 = np.concatenate([f4, np.zeros(5)])
        n_int = 8 if fix_k3 else 9
    else:
        k0 = np.asarray(intrinsics, dtype=np.float64)
        if k0.shape != (9,) or not np.isfinite(k0).all():
            raise InputError(f"intrinsics: expected 9 finite numbers (fx, fy, cx, cy, k1, k2, p1, p2, k3), got {k0!r}")
        f4 = k0[:4]
        n_int = 0
    K = np.array([[f4[0], 0.0, f4[2]], [0.0, f4[1], f4[3]], [0.0, 0.0, 1.0]])
    T0 = poses_from_homographies(K, H)
    return _refine_camera(views, k0, n_int, T0)


def _refine_camera(views: PackedViews, k0, n_int: int, T0, prior_std=None, pixel_std: float = 1.0) -> CameraCalibration:
    """The first ``n_int`` intrinsics and every view pose refined on the pixels from ``k0`` and ``T0``; ``prior_std``
    (``n_int``,): a zero-mean prior on each of those intrinsics (``inf``: none), weighed against pixels of noise
    ``pixel_std`` [px]."""
    N = views.n_views
    obs = views.points_2d[views.mask]
    w = np.zeros(0) if prior_std is None else float(pixel_std) / np.asarray(prior_std, dtype=np.float64)
    held = np.flatnonzero(w > 0)

    def unpack(x):
        k = k0.copy()
        k[:n_int] = x[:n_int]
        T = T0 @ se3.se3_exp_unchecked(x[n_int:].reshape(N, 6))
        return k, T

    def fun(x):
        k, T = unpack(x)
        return np.concatenate([(project(k, T, views.points_3d)[views.mask] - obs).ravel(), x[held] * w[held]])

    view_of_point = np.broadcast_to(np.arange(N)[:, None], views.mask.shape)[views.mask]
    structure = BlockStructure(n_int, N, 6, np.concatenate([np.repeat(view_of_point, 2), np.full(held.size, -1)]))
    pts = views.points_3d[views.mask]
    n_pix = 2 * pts.shape[0]
    rows = np.arange(n_pix)  # the pixels' rows: the views' blocks; the priors' rows touch the intrinsics only

    def jac(x):
        k, T = unpack(x)
        Jk, G, _ = pose_jacobians(k, T[view_of_point, :3, :3], T[view_of_point, :3, 3], pts)
        # T = T0 exp(x_i): a step d of x_i perturbs T on the right by J_r(x_i) d
        Jr = se3.se3_right_jacobian(x[n_int:].reshape(N, 6))
        blocks = (G @ Jr[view_of_point]).reshape(n_pix, 6)
        shared = np.zeros((n_pix + held.size, n_int))
        shared[:n_pix] = Jk[:, :, :n_int].reshape(n_pix, n_int)
        shared[n_pix + np.arange(held.size), held] = w[held]
        return BlockJacobian(shared, blocks, rows, structure)

    x0 = np.concatenate([k0[:n_int], np.zeros(6 * N)])
    res = levenberg_marquardt(fun, x0, structure, tol=1e-12, jac=jac)
    k, T = unpack(res.x)
    return camera_calibration(views, k, T)


#: The fisheye start takes the corners within this angle of the optical axis [rad] for its homographies.
_START_MAX_ANGLE = np.radians(75.0)
#: Focal lengths the fisheye start tries, as multiples of ``max(width, height) / pi`` (a 180 deg lens across the
#: image's longer side; OpenCV's ``cv::fisheye::calibrate`` starts from it).
_START_FOCAL_FACTORS = (0.6, 0.8, 1.0, 1.25, 1.6, 2.0, 2.5, 3.2, 4.0)


def _fisheye_poses(views: PackedViews, k) -> tuple[np.ndarray, float]:
    """View poses from the homographies of the rays of fisheye intrinsics ``k`` (corners within
    :data:`_START_MAX_ANGLE` of the axis, all corners in front of the camera in a view with fewer than 4 of them),
    and the RMS reprojection error [px] they give."""
    ray = unproject_points(k, views.points_2d)
    front = views.mask & (ray[..., 2] > 0.05)
    near = views.mask & (ray[..., 2] > np.cos(_START_MAX_ANGLE))
    use = np.where((near.sum(axis=1) >= MIN_POINTS)[:, None], near, front)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.where(use[..., None], ray[..., :2] / ray[..., 2:3], 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):  # a focal length far off: degenerate homographies, rms inf
        H = homographies(PackedViews(views.points_3d, m, use))
        T = poses_from_homographies(np.eye(3), H)
        uv = project(k, T, views.points_3d)
    d = residual_norms(uv, views)
    return T, float(np.sqrt(np.mean(d * d))) if np.isfinite(d).all() else float("inf")


def fisheye_start(views: PackedViews, image_size, intrinsics=None) -> tuple[np.ndarray, np.ndarray]:
    """Start of a fisheye calibration: intrinsics (8,) and view poses (N, 4, 4).

    Given intrinsics: the poses from the homographies of the corners' rays (a PnP).  Else the principal point at
    the image's centre, no distortion, and of the focal lengths :data:`_START_FOCAL_FACTORS` the one whose poses
    reproject the corners best.
    """
    if intrinsics is not None:
        k = np.asarray(intrinsics, dtype=np.float64)
        if k.shape != (8,) or not np.isfinite(k).all() or k[0] <= 0 or k[1] <= 0:
            raise InputError(f"intrinsics: expected 8 finite fisheye intrinsics (fx, fy, cx, cy, k1, k2, k3, k4) with "
                             f"fx, fy > 0, got {k!r}")  # fmt: skip
        return k.copy(), _fisheye_poses(views, k)[0]
    w, h = float(image_size[0]), float(image_size[1])
    f0 = max(w, h) / np.pi
    best = None
    for a in _START_FOCAL_FACTORS:
        k = np.array([a * f0, a * f0, (w - 1.0) / 2.0, (h - 1.0) / 2.0, 0.0, 0.0, 0.0, 0.0])
        try:
            T, rms = _fisheye_poses(views, k)
        except (InputError, DegenerateMotionError, np.linalg.LinAlgError):  # a focal length far off
            continue
        if best is None or rms < best[2]:
            best = (k, T, rms)
    if best is None:
        raise DegenerateMotionError("intrinsics: expected views whose corners determine a fisheye camera, got none "
                                    "that give a homography")  # fmt: skip
    return best[0], best[1]


def rational_from_equidistant(k_eq, max_angle: float) -> np.ndarray:
    """The rational model (12,) nearest to fisheye intrinsics ``k_eq`` (8,) out to ``max_angle`` [rad] off the axis.

    The same ``fx fy cx cy``, no tangential terms, and the radial coefficients that fit the ratio ``g(r) =
    theta_d / r`` at ``r = tan(theta)`` (``theta`` in ``[0, max_angle]``, ``max_angle`` below 90 deg) by linear least
    squares on ``num(r) - g den(r) = 0``.
    """
    k = np.asarray(k_eq, dtype=np.float64)
    d = k[4:8]
    theta = np.linspace(max_angle / 200.0, max_angle, 200)
    t2 = theta * theta
    r = np.tan(theta)
    g = theta * (1.0 + t2 * (d[0] + t2 * (d[1] + t2 * (d[2] + t2 * d[3])))) / r
    r2 = r * r
    A = np.column_stack([r2, r2**2, r2**3, -g * r2, -g * r2**2, -g * r2**3])
    c = np.linalg.lstsq(A, g - 1.0, rcond=None)[0]
    return np.concatenate([k[:4], c[:2], [0.0, 0.0], c[2:3], c[3:6]])


def rational_start(views: PackedViews, image_size) -> CameraCalibration:
    """The rational model estimated from the views: of two starts, the better fit.

    A wide-angle lens and a narrow one need different starts: (1) the pinhole with OpenCV's five coefficients
    (:func:`calibrate_camera`), ``k4 = k5 = k6 = 0``; (2) the fisheye (:func:`fisheye_start`, refined), turned into
    the rational model by :func:`rational_from_equidistant` out to the widest corner's angle.  Each start is refined
    (all twelve intrinsics and every view pose, the coefficients under :data:`RATIONAL_PRIOR_STD` weighed against the
    pixel noise the better start's residuals give) and the one with the lower RMS kept.
    """
    prior = np.concatenate([np.full(4, np.inf), RATIONAL_PRIOR_STD])
    starts = []
    try:
        c = calibrate_camera(views, image_size)
        starts.append((np.concatenate([c.intrinsics, np.zeros(3)]), c.T_cam_target, c.rms_px))
    except (InputError, DegenerateMotionError, np.linalg.LinAlgError):
        pass
    try:
        c = calibrate_camera(views, image_size, model="equidistant")
        ray = unproject_points(c.intrinsics, views.points_2d)[views.mask]
        widest = float(np.arccos(np.clip(ray[:, 2].min(initial=1.0), -1.0, 1.0)))
        if widest < np.radians(85.0):  # the rational model sees only the half-space in front of the camera
            k0 = rational_from_equidistant(c.intrinsics, max(widest, np.radians(10.0)))
            starts.append((k0, c.T_cam_target, c.rms_px))
    except (InputError, DegenerateMotionError, np.linalg.LinAlgError):
        pass
    # the prior weighed against the pixels' noise, as the better start's residuals put it (an upper bound)
    pixel_std = max(min((s[2] for s in starts if np.isfinite(s[2])), default=1.0) / np.sqrt(2.0), 1e-3)
    fits = []
    for k0, T0, _ in starts:
        try:
            fits.append(_refine_camera(views, k0, 12, T0, prior, pixel_std))
        except (InputError, np.linalg.LinAlgError):
            pass
    fits = [f for f in fits if np.isfinite(f.rms_px)]
    if not fits:
        raise DegenerateMotionError("intrinsics: expected views whose corners determine a rational camera, got none "
                                    "from which its fit starts")  # fmt: skip
    return min(fits, key=lambda f: f.rms_px)
