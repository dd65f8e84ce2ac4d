"""Measurement models of the generator: sensor noise, visual-odometry drift, monocular scale, outliers.

Every function here is pure: it takes ground-truth arrays and an explicit
:class:`numpy.random.Generator`, and returns new arrays (inputs are never
modified).  All frames of a stream are processed at once.

Conventions (see :mod:`kinhec.geometry.se3`): ``T_a_b`` is the pose of frame *b* in
frame *a*; a twist is ``xi = (omega, v)``, rotation [rad] first, translation
[m] second, and ``exp(xi)`` is the SE(3) exponential.  Streams are arrays of
shape ``(N, 4, 4)``.

Models
------
robot ``se3_gaussian``
    Flange-frame twist noise, ``T_meas = T_base_ee exp(xi)`` with
    ``xi ~ N(0, diag(rot_std^2 I3, trans_std^2 I3))``
    (:func:`robot_se3_gaussian`).
robot ``joint_gaussian``
    Gaussian noise on the encoder readings (:func:`joint_gaussian`); the
    caller propagates it through the kinematics.  Always Gaussian.
camera ``se3_gaussian``
    Translation noise in the camera frame with per-axis standard deviations
    (x, y lateral; z along the optical axis) added to the position, and a
    rotation perturbation in the target frame, ``R_meas = R exp(omega)``
    (:func:`camera_se3_gaussian`).
camera ``vo_drift``
    Noisy relative motions integrated into a random walk (:func:`vo_drift`).
monocular scale
    Translations multiplied by a (possibly drifting) scale
    (:func:`apply_scale`).
outliers
    A fraction of the measurements replaced by a random pose, the mirrored
    solution of the planar pose ambiguity, or a gross Gaussian error
    (:func:`apply_outliers`).

Heavy tails
-----------
With ``student_t_dof = nu`` the twist models draw a multivariate Student-t
vector instead of a Gaussian one: ``xi = sigma * z * sqrt(nu / c)`` with
``z ~ N(0, I6)`` and a single ``c ~ chi2(nu)`` per frame shared by the six
components.  The standard deviations then act as the *scale* of the
distribution: each component is ``sigma`` times a Student-t variable with
``nu`` degrees of freedom, the median absolute value is
``sigma * t_nu.ppf(0.75)``, and the covariance is ``nu / (nu - 2)`` times
``diag(sigma^2)`` for ``nu > 2`` (3 times for the ``nu = 3`` of the shipped
tiers) and infinite for ``nu <= 2``.  Because ``c`` is shared, a frame with a
large error is large in all six components at once.

Random streams
--------------
The number of values drawn from ``rng`` depends only on the number of frames
(and on whether ``student_t_dof`` is set), never on the standard deviations:
a zero standard deviation still consumes its draws.  Two sequences that differ
only by their noise level therefore see the same standardised noise, scaled.
"""

from __future__ import annotations

import numbers

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError, UnknownNameError

__all__ = [
    "ROBOT_LEVELS",
    "CAMERA_LEVELS",
    "OUTLIER_MODELS",
    "GROSS_ROT_STD_RAD",
    "GROSS_TRANS_STD_M",
    "RANDOM_POSE_DISTANCE_RATIO",
    "robot_level",
    "camera_level",
    "draw_twists",
    "robot_se3_gaussian",
    "joint_gaussian",
    "camera_se3_gaussian",
    "vo_drift",
    "apply_scale",
    "choose_outliers",
    "random_pose_outliers",
    "planar_flip",
    "gross_outliers",
    "apply_outliers",
]

# --------------------------------------------------------------------------- #
# named levels (identical in every tier)
# --------------------------------------------------------------------------- #
#: Robot levels: flange-frame twist noise ``(rot_std_rad, trans_std_m)``.
ROBOT_LEVELS: dict[str, tuple[float, float]] = {
    "r0": (0.0, 0.0),
    "r1": (0.0002, 0.0001),
    "r2": (0.0005, 0.0003),
    "r3": (0.002, 0.001),
    "r4": (0.005, 0.003),
}

#: Camera levels: ``(rot_std_rad, x_std_m, y_std_m, z_std_m)``; translation
#: standard deviations in the camera frame (z = optical axis), rotation in the
#: target frame.
CAMERA_LEVELS: dict[str, tuple[float, float, float, float]] = {
    "c0": (0.0, 0.0, 0.0, 0.0),
    "c1": (0.0005, 0.0003, 0.0003, 0.001),
    "c2": (0.002, 0.001, 0.001, 0.003),
    "c3": (0.005, 0.003, 0.003, 0.01),
    "c4": (0.01, 0.006, 0.006, 0.02),
    "c5": (0.02, 0.012, 0.012, 0.04),
}

#: Names accepted by :func:`apply_outliers`.
OUTLIER_MODELS: tuple[str, ...] = ("none", "random_pose", "planar_flip", "gross")

#: Default rotation std [rad] of the ``gross`` outlier model (about 17 deg per axis).  The card gives no size
#: for its gross errors; 0.3 rad is the value at which the closed-form solvers' median rotation errors on the
#: ``outliers`` track meet the card's (0.91-1.04x on the medium tier; 0.75-0.89x at 0.2 rad), while their
#: translation errors, which this value hardly moves, stay at 0.92-1.09x (docs/fidelity.md).
GROSS_ROT_STD_RAD = 0.3
#: Default translation std [m] per camera axis of the ``gross`` outlier model.
GROSS_TRANS_STD_M = 0.1

#: Distance of a ``random_pose`` outlier from the camera, as a range of multiples of the reference pose's
#: distance (uniform), as in the published copy (measured there: 0.63-1.43x between its 10th and 90th
#: percentiles, half of the poses behind the camera).
RANDOM_POSE_DISTANCE_RATIO: tuple[float, float] = (0.5, 1.5)


def robot_level(name: str) -> tuple[float, float]:
    """``(rot_std_rad, trans_std_m)`` of the named robot level ``r0`` .. ``r4``.

    Raises
    ------
    UnknownNameError
        If ``name`` is not a robot level.
    """
    try:
        return ROBOT_LEVELS[name]
    except (KeyError, TypeError):
        raise UnknownNameError("robot noise level", name, ROBOT_LEVELS) from None


def camera_level(name: str) -> tuple[float, float, float, float]:
    """``(rot_std_rad, x_std_m, y_std_m, z_std_m)`` of the named camera level ``c0`` .. ``c5``.

    Raises
    ------
    UnknownNameError
        If ``name`` is not a camera level.
    """
    try:
        return CAMERA_LEVELS[name]
    except (KeyError, TypeError):
        raise UnknownNameError("camera noise level", name, CAMERA_LEVELS) from None


# --------------------------------------------------------------------------- #
# validation
# --------------------------------------------------------------------------- #
def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"rng: expected a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _check_scalar(x, name: str, *, positive: bool = False) -> float:
    """A finite real scalar, ``>= 0`` (or ``> 0`` with ``positive``)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise InputError(f"{name}: expected a real number, got {type(x).__name__}")
    v = float(x)
    if not np.isfinite(v) or v < 0 or (positive and v == 0):
        want = "a finite number > 0" if positive else "a finite number >= 0"
        raise InputError(f"{name}: expected {want}, got {x!r}")
    return v


def _check_dof(dof) -> float | None:
    if dof is None:
        return None
    if isinstance(dof, bool) or not isinstance(dof, numbers.Real) or not np.isfinite(dof) or dof < 1:
        raise InputError(f"student_t_dof: expected None (Gaussian) or a finite number >= 1, got {dof!r}")
    return float(dof)


def _check_count(n, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise InputError(f"{name}: expected an integer >= 0, got {n!r}")
    return int(n)


def _check_stream(T, name: str) -> np.ndarray:
    """A stream of valid poses, shape ``(N, 4, 4)``."""
    a = se3.check_transforms(T, name)
    if a.ndim != 3:
        raise InputError(f"{name}: expected a stream of shape (N, 4, 4), got shape {a.shape}")
    return a


# --------------------------------------------------------------------------- #
# twist draws
# --------------------------------------------------------------------------- #
def _standard_draws(rng: np.random.Generator, n: int, dof: float | None) -> np.ndarray:
    """``(n, 6)`` unit-scale draws: N(0, I6), or multivariate Student-t with one chi2 per row."""
    z = rng.standard_normal((n, 6))
    if dof is not None:
        z *= np.sqrt(dof / rng.chisquare(dof, n))[:, None]
    return z


def draw_twists(rng: np.random.Generator, n: int, rot_std_rad: float, trans_std_m: float, *, student_t_dof=None):
    """Draw ``n`` random twists ``xi = (omega, v)``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    n : int
        Number of twists.
    rot_std_rad : float
        Standard deviation [rad] of each rotation component (scale for Student-t).
    trans_std_m : float
        Standard deviation [m] of each translation component (scale for Student-t).
    student_t_dof : float, optional
        Degrees of freedom ``nu >= 1`` of a multivariate Student-t with scale
        matrix ``diag(rot^2 I3, trans^2 I3)``: one ``chi2(nu)`` draw per twist
        is shared by its six components.  The covariance is then
        ``nu / (nu - 2)`` times the scale matrix (infinite for ``nu <= 2``).
        ``None`` draws a Gaussian ``N(0, diag(rot^2 I3, trans^2 I3))``.

    Returns
    -------
    ndarray, shape (n, 6)
        Twists, rotation part [rad] first, translation part [m] second.
    """
    _check_rng(rng)
    n = _check_count(n, "n")
    rot = _check_scalar(rot_std_rad, "rot_std_rad")
    trans = _check_scalar(trans_std_m, "trans_std_m")
    dof = _check_dof(student_t_dof)
    sigma = np.array([rot, rot, rot, trans, trans, trans])
    return _standard_draws(rng, n, dof) * sigma


# --------------------------------------------------------------------------- #
# robot models
# --------------------------------------------------------------------------- #
def robot_se3_gaussian(T_base_ee, rot_std_rad: float, trans_std_m: float, rng: np.random.Generator, *,
                       student_t_dof=None, check: bool = True) -> np.ndarray:
    """Flange poses reported with twist noise in the flange frame: ``T_meas = T_base_ee exp(xi)``.

    Parameters
    ----------
    T_base_ee : array_like, shape (N, 4, 4)
        True flange poses in the robot base frame.
    rot_std_rad, trans_std_m : float
        Standard deviation of each rotation [rad] and translation [m]
        component of ``xi``, expressed in the flange frame (scale of the
        Student-t variant, see :func:`draw_twists`).
    rng : numpy.random.Generator
        Source of randomness (``N`` twists are drawn).
    student_t_dof : float, optional
        Heavy-tailed variant, see :func:`draw_twists`.
    check : bool
        Validate ``T_base_ee`` (``False`` for poses the caller built itself).

    Returns
    -------
    ndarray, shape (N, 4, 4)
        Reported flange poses ``T_base_ee``; an exact copy when both
        standard deviations are zero.
    """
    T = _check_stream(T_base_ee, "T_base_ee") if check else np.asarray(T_base_ee, dtype=np.float64)
    xi = draw_twists(rng, T.shape[0], rot_std_rad, trans_std_m, student_t_dof=student_t_dof)
    if not xi.any():
        return T.copy()
    return T @ se3.se3_exp(xi)


def joint_gaussian(q, joint_std_rad: float, rng: np.random.Generator) -> np.ndarray:
    """Encoder readings with independent Gaussian noise (always Gaussian).

    Parameters
    ----------
    q : array_like, shape (N, n_joints)
        True joint positions [rad].
    joint_std_rad : float
        Standard deviation [rad] of every reading.
    rng : numpy.random.Generator
        Source of randomness (``N * n_joints`` normals are drawn).

    Returns
    -------
    ndarray, shape (N, n_joints)
        Measured joint positions ``q_meas`` [rad].  The caller propagates them
        through the (nominal) kinematics to obtain the reported flange pose.
    """
    q = se3.check_array(q, "q", ())
    if q.ndim != 2:
        raise InputError(f"q: expected joint positions of shape (N, n_joints), got shape {q.shape}")
    std = _check_scalar(joint_std_rad, "joint_std_rad")
    return q + std * _check_rng(rng).standard_normal(q.shape)


# --------------------------------------------------------------------------- #
# camera models
# --------------------------------------------------------------------------- #
def camera_se3_gaussian(T_cam_target, rot_std_rad: float, trans_std_xy_m: float, trans_std_z_m: float,
                        rng: np.random.Generator, *, student_t_dof=None, check: bool = True) -> np.ndarray:
    """Target poses measured with anisotropic camera-frame translation noise and target-frame rotation noise.

    ``p_meas = p + e`` with ``e = (e_x, e_y, e_z)`` in the camera frame
    (standard deviations ``trans_std_xy_m``, ``trans_std_xy_m``,
    ``trans_std_z_m``: lateral, lateral, along the optical axis), and
    ``R_meas = R exp(omega)`` with ``omega`` in the target frame (standard
    deviation ``rot_std_rad`` per component).  A pose sensor is typically much
    less precise in depth than laterally, hence the separate ``z``.

    Parameters
    ----------
    T_cam_target : array_like, shape (N, 4, 4)
        True poses of the observed reference in the camera frame.
    rot_std_rad : float
        Rotation standard deviation [rad] per target-frame axis.
    trans_std_xy_m, trans_std_z_m : float
        Translation standard deviations [m] along camera x and y, and along
        camera z (the optical axis).
    rng : numpy.random.Generator
        Source of randomness (``N`` six-vectors ``(omega, e)`` are drawn).
    student_t_dof : float, optional
        Multivariate Student-t with one ``chi2`` per frame shared by all six
        components (see :func:`draw_twists` for the variance consequence).
    check : bool
        Validate ``T_cam_target`` (``False`` for poses the caller built itself).

    Returns
    -------
    ndarray, shape (N, 4, 4)
        Measured ``T_cam_target``; an exact copy when all standard deviations are zero.
    """
    T = _check_stream(T_cam_target, "T_cam_target") if check else np.asarray(T_cam_target, dtype=np.float64)
    _check_rng(rng)
    rot = _check_scalar(rot_std_rad, "rot_std_rad")
    sxy = _check_scalar(trans_std_xy_m, "trans_std_xy_m")
    sz = _check_scalar(trans_std_z_m, "trans_std_z_m")
    dof = _check_dof(student_t_dof)
    d = _standard_draws(rng, T.shape[0], dof) * np.array([rot, rot, rot, sxy, sxy, sz])
    out = T.copy()
    if not d.any():
        return out
    out[:, :3, :3] = T[:, :3, :3] @ se3.so3_exp(d[:, :3])
    out[:, :3, 3] += d[:, 3:]
    return out


def _prefix_products(P: np.ndarray) -> np.ndarray:
    """Inclusive prefix products ``C_k = P_0 P_1 ... P_k`` of ``(N, 4, 4)`` matrices.

    Hillis-Steele scan: pass ``d = 1, 2, 4, ...`` replaces ``C_k`` by
    ``C_{k-d} C_k`` (earlier factor on the left), so after ``ceil(log2 N)``
    batched matmuls every ``C_k`` holds the full prefix.
    """
    C = P.copy()
    d = 1
    while d < C.shape[0]:
        C[d:] = C[:-d] @ C[d:]  # the right-hand side is evaluated before the assignment
        d *= 2
    return C


def vo_drift(T_vo_cam, rot_std_rad: float, trans_std_m: float, rng: np.random.Generator, *,
             student_t_dof=None) -> np.ndarray:
    """Visual-odometry trajectory: true relative motions with twist noise, integrated as a random walk.

    ``M_0 = T_0`` and ``M_{i+1} = M_i inv(T_i) T_{i+1} exp(xi_i)``: every
    measured frame-to-frame motion equals the true one perturbed on the right
    (in the camera frame of frame ``i + 1``) by an independent twist.  The
    error of the absolute pose ``inv(T_i) M_i`` is therefore a random walk
    whose variance grows about linearly with ``i``.  The product of the
    ``N - 1`` perturbed motions is formed by a parallel prefix scan
    (``ceil(log2 N)`` batched matrix products, no loop over frames).

    Parameters
    ----------
    T_vo_cam : array_like, shape (N, 4, 4)
        True camera poses in the visual-odometry (world) frame.
    rot_std_rad, trans_std_m : float
        Per-frame standard deviation of each rotation [rad] and translation
        [m] component of ``xi_i`` (scale of the Student-t variant).
    rng : numpy.random.Generator
        Source of randomness (``N - 1`` twists are drawn).
    student_t_dof : float, optional
        Heavy-tailed increments, see :func:`draw_twists`.

    Returns
    -------
    ndarray, shape (N, 4, 4)
        Measured ``T_vo_cam``; the first pose is the true one, and the whole
        stream is an exact copy when both standard deviations are zero.
    """
    T = _check_stream(T_vo_cam, "T_vo_cam")
    n = T.shape[0]
    xi = draw_twists(rng, max(n - 1, 0), rot_std_rad, trans_std_m, student_t_dof=student_t_dof)
    if n < 2 or not xi.any():
        return T.copy()
    rel = se3.invert_transform(T[:-1], check=False) @ T[1:]
    steps = np.concatenate([T[:1], rel @ se3.se3_exp(xi)])
    return _prefix_products(steps)


# --------------------------------------------------------------------------- #
# monocular scale
# --------------------------------------------------------------------------- #
def apply_scale(T_cam_target, scale: float, drift_std: float, rng: np.random.Generator):
    """Multiply the translation of every pose by a per-frame scale (monocular scale ambiguity).

    ``s_0 = scale`` and ``s_i = scale * exp(sum_{k=1..i} eta_k)`` with
    ``eta_k ~ N(0, drift_std^2)``: a multiplicative random walk, ``s_i = scale``
    exactly when ``drift_std = 0``.  Rotations are untouched.

    The function acts on the translation part of whatever poses it is given.
    Physically the unknown scale multiplies the camera translations expressed
    in the visual-odometry frame (the positions of ``T_vo_cam``); since
    ``inv(T)`` has translation ``-R^T t``, which is linear in ``t``, scaling a
    pose and scaling its inverse give the same result, so the stream may be
    passed as ``T_vo_cam`` or as ``T_cam_vo``.  Apply it to VO-frame poses,
    not to poses in another frame, where a scale on the translation has no
    such meaning.

    Parameters
    ----------
    T_cam_target : array_like, shape (N, 4, 4)
        Poses whose translations are scaled (typically ``T_cam_vo``, i.e. the
        camera stream of a monocular sequence, or its inverse ``T_vo_cam``).
    scale : float
        Scale at the first frame, ``> 0``.
    drift_std : float
        Standard deviation of the log-scale increment per frame, ``>= 0``.
    rng : numpy.random.Generator
        Source of randomness (``N - 1`` normals are drawn).

    Returns
    -------
    T_scaled : ndarray, shape (N, 4, 4)
        Poses with scaled translations.
    scale_per_frame : ndarray, shape (N,)
        The scale ``s_i`` applied to frame ``i``.
    """
    T = _check_stream(T_cam_target, "T_cam_target")
    _check_rng(rng)
    s0 = _check_scalar(scale, "scale", positive=True)
    drift = _check_scalar(drift_std, "drift_std")
    n = T.shape[0]
    eta = drift * rng.standard_normal(max(n - 1, 0))
    s = s0 * np.exp(np.concatenate([np.zeros(min(n, 1)), np.cumsum(eta)]))
    out = T.copy()
    out[:, :3, 3] *= s[:, None]
    return out, s


# --------------------------------------------------------------------------- #
# outliers
# --------------------------------------------------------------------------- #
def choose_outliers(rng: np.random.Generator, available, fraction: float) -> np.ndarray:
    """Pick exactly ``round(fraction * available.sum())`` frames among the available ones.

    ``round`` is Python's (ties to even, e.g. 2.5 -> 2).  The frames are drawn
    uniformly without replacement.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness.
    available : array_like of bool, shape (N,)
        Frames that may be chosen (e.g. frames with a measurement).
    fraction : float
        Fraction in ``[0, 1]`` of the available frames to choose.

    Returns
    -------
    ndarray of bool, shape (N,)
        ``True`` for the chosen frames.
    """
    _check_rng(rng)
    avail = np.asarray(available)
    if avail.dtype != bool or avail.ndim != 1:
        raise InputError(
            f"available: expected a 1-D boolean array, got array of shape {avail.shape} and dtype {avail.dtype}"
        )
    f = _check_scalar(fraction, "fraction")
    if f > 1:
        raise InputError(f"fraction: expected a value in [0, 1], got {fraction!r}")
    idx = np.flatnonzero(avail)
    k = round(f * idx.size)
    chosen = np.zeros(avail.shape, dtype=bool)
    chosen[rng.choice(idx, size=k, replace=False)] = True
    return chosen


def random_pose_outliers(T_cam_target, rng: np.random.Generator) -> np.ndarray:
    """Random target poses, one per input frame, at about the distance of the pose they replace.

    Rotation uniform on SO(3); position in a uniformly random direction at the
    reference pose's distance from the camera times a uniform factor in
    :data:`RANDOM_POSE_DISTANCE_RATIO` (0.5-1.5).  This is the published copy's
    random pose: a pose that has nothing to do with the measurement, not a
    plausible misdetection, so half of them lie behind the camera.  Its
    distance from the true pose is then of the order of the target's own
    distance, which decides how far it pulls a solver that does not reject it.

    Parameters
    ----------
    T_cam_target : array_like, shape (N, 4, 4)
        Poses to be replaced (their distances set the outliers').
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    ndarray, shape (N, 4, 4)
        Random ``T_cam_target``.
    """
    T = _check_stream(T_cam_target, "T_cam_target")
    _check_rng(rng)
    n = T.shape[0]
    R = se3.random_rotations(rng, n)
    u = rng.standard_normal((n, 3))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    lo, hi = RANDOM_POSE_DISTANCE_RATIO
    dist = np.linalg.norm(T[:, :3, 3], axis=1) * rng.uniform(lo, hi, n)
    return se3.transform_from_rotation_translation(R, u * dist[:, None])


def planar_flip(T_cam_target, *, check: bool = True) -> np.ndarray:
    """Second solution of the planar pose ambiguity: the target normal mirrored about the line of sight.

    With ``n`` the target normal (target z axis) in the camera frame and
    ``v = -p / |p|`` the unit line of sight from the target centre ``p`` to
    the camera, the orientation is rotated about ``n x v`` by twice the angle
    between ``n`` and ``v``, and the position is kept.  The new normal is the
    reflection ``2 (n . v) v - n``: it makes the same angle with the line of
    sight, on the other side, so the target looks alike from the camera to
    first order (the two-fold ambiguity of planar PnP; Schweighofer and Pinz
    2006).  The rotation is built as the product of two reflections,
    ``(I - 2 v v^T)(I - 2 n n^T)``, which is exactly that rotation, is proper
    by construction and has no singular case: it is the identity for a
    fronto-parallel view (``n = +-v``).  Applying the flip twice restores the
    pose.

    Parameters
    ----------
    T_cam_target : array_like, shape (N, 4, 4)
        Poses of the target in the camera frame (target not at the camera centre).
    check : bool
        Validate the poses (False: the caller has, as :func:`kinhec.geometry.se3.invert_transform` takes it).

    Returns
    -------
    ndarray, shape (N, 4, 4)
        Flipped ``T_cam_target``.
    """
    T = _check_stream(T_cam_target, "T_cam_target") if check else np.asarray(T_cam_target, dtype=np.float64)
    p = T[:, :3, 3]
    dist = np.linalg.norm(p, axis=1)
    if (dist <= 1e-12).any():
        raise InputError(
            f"T_cam_target: expected targets away from the camera centre, got {int((dist <= 1e-12).sum())} "
            "frames with the target at the origin"
        )
    v = -p / dist[:, None]
    # (I - 2 n n^T) R = R diag(1, 1, -1) because n = R e_z; then reflect about the plane normal to v.
    R = T[:, :3, :3] * np.array([1.0, 1.0, -1.0])
    R -= 2.0 * v[:, :, None] * np.einsum("ni,nij->nj", v, R)[:, None, :]
    out = T.copy()
    out[:, :3, :3] = R
    return out


def gross_outliers(T_cam_target, rng: np.random.Generator, *, rot_std_rad: float = GROSS_ROT_STD_RAD,
                   trans_std_m: float = GROSS_TRANS_STD_M) -> np.ndarray:
    """Poses with a large Gaussian error: :func:`camera_se3_gaussian` with isotropic translation noise.

    Defaults: ``GROSS_ROT_STD_RAD`` = 0.3 rad (about 17 deg) per target-frame
    axis and ``GROSS_TRANS_STD_M`` = 0.1 m per camera axis.  A gross error can
    move a near target behind the camera; it is an outlier.

    Parameters
    ----------
    T_cam_target : array_like, shape (N, 4, 4)
        Poses of the target in the camera frame.
    rng : numpy.random.Generator
        Source of randomness.
    rot_std_rad, trans_std_m : float
        Rotation [rad] and translation [m] standard deviations.

    Returns
    -------
    ndarray, shape (N, 4, 4)
    """
    return camera_se3_gaussian(T_cam_target, rot_std_rad, trans_std_m, trans_std_m, rng)


def apply_outliers(T_meas, T_gt, model: str, fraction: float, rng: np.random.Generator, *, available=None):
    """Replace a fraction of the measurements by outliers.

    Exactly ``round(fraction * n_available)`` frames (:func:`choose_outliers`)
    are replaced by an outlier built from the reference pose ``T_gt`` of that
    frame (the generator passes the frame's noisy measurement, as the
    published copy does; pass the true pose for an outlier model's error alone):

    * ``"random_pose"``: :func:`random_pose_outliers`;
    * ``"planar_flip"``: :func:`planar_flip` of the reference pose (an exactly
      fronto-parallel frame is left unchanged by it, although labelled);
    * ``"gross"``: :func:`gross_outliers` of the reference pose;
    * ``"none"``: no outlier (``fraction`` must then be 0).

    Parameters
    ----------
    T_meas : array_like, shape (N, 4, 4)
        Measured poses ``T_cam_target``; frames without a measurement are NaN.
    T_gt : array_like, shape (N, 4, 4)
        Reference poses the outliers are built from (finite on every frame).
    model : str
        One of :data:`OUTLIER_MODELS`.
    fraction : float
        Fraction in ``[0, 1]`` of the available frames to replace.
    rng : numpy.random.Generator
        Source of randomness.
    available : array_like of bool, shape (N,), optional
        Frames that may become outliers.  Frames whose measurement is not
        finite are never chosen, whatever ``available`` says.

    Returns
    -------
    T_out : ndarray, shape (N, 4, 4)
        Measurements with the outliers in place (a copy).
    outlier : ndarray of bool, shape (N,)
        ``True`` for the replaced frames.

    Raises
    ------
    UnknownNameError
        If ``model`` is not an outlier model.
    InputError
        On bad shapes, a fraction outside [0, 1], or ``model="none"`` with a
        non-zero fraction.
    """
    if model not in OUTLIER_MODELS:
        raise UnknownNameError("outlier model", model, OUTLIER_MODELS)
    Tm = se3.check_array(T_meas, "T_meas", (4, 4), allow_nan=True)
    if Tm.ndim != 3:
        raise InputError(f"T_meas: expected a stream of shape (N, 4, 4), got shape {Tm.shape}")
    finite = np.isfinite(Tm).all(axis=(1, 2))
    se3.check_transforms(Tm[finite], "T_meas (finite frames)")
    Tg = _check_stream(T_gt, "T_gt")
    if Tg.shape != Tm.shape:
        raise InputError(f"T_gt: expected shape {Tm.shape} to match T_meas, got shape {Tg.shape}")
    if available is None:
        avail = finite
    else:
        avail = np.asarray(available)
        if avail.dtype != bool or avail.shape != finite.shape:
            raise InputError(
                f"available: expected a boolean array of shape {finite.shape}, "
                f"got array of shape {avail.shape} and dtype {avail.dtype}"
            )
        avail = avail & finite
    f = _check_scalar(fraction, "fraction")
    if model == "none" and f != 0:
        raise InputError(f"fraction: expected 0 with outlier model 'none', got {fraction!r}")
    outlier = choose_outliers(rng, avail, f)
    out = Tm.copy()
    if outlier.any():
        if model == "random_pose":
            out[outlier] = random_pose_outliers(Tg[outlier], rng)
        elif model == "planar_flip":
            out[outlier] = planar_flip(Tg[outlier])
        else:  # "gross"
            out[outlier] = gross_outliers(Tg[outlier], rng)
    return out, outlier
