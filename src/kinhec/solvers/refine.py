"""Non-linear least-squares refinement of ``A X = X B`` and ``A X = Y B`` on SE(3).

References
----------
R. Horaud and F. Dornaika, "Hand-eye calibration," *Int. J. Robotics Research*
14(3), 1995 (simultaneous non-linear estimation of rotation and translation);
K. H. Strobl and G. Hirzinger, "Optimal hand-eye calibration," *IEEE/RSJ IROS*,
2006 (weighting of the rotational against the translational residual).

Two costs (``cost=``).  ``"twist"``, the default and the published toolkit's
refinement (the registry's ``park_martin+lm`` and ``shah+lm``): the six
components of ``Log(inv(Y B_i) A_i X)`` (``Y = X`` for ``A X = X B``),
rotation [rad] and translation [m] unweighted unless noise scales are given,
stopped at scipy's default tolerances; analytic Jacobian through the inverse
right Jacobian of SE(3) (:func:`_twist_problem`).  ``"chordal"``, below.

The chordal cost.  The unknown rotations are parametrised locally around
the start, ``R_X = R_X0 exp(phi_X)``, translations directly.  Every motion
(or pose pair) contributes 12 residuals, a rotational block (the chordal
error, 9 entries, about the rotation angle of the disagreement in [rad]) and a
translational block [m], each divided by its noise scale::

    A X = X B:   e_R = (R_A R_X - R_X R_B) / (sqrt(2) sigma_R)
                 e_t = (R_A t_X + t_A - R_X t_B - t_X) / sigma_t
    A X = Y B:   e_R = (R_A R_X - R_Y R_B) / (sqrt(2) sigma_R)
                 e_t = (R_A t_X + t_A - R_Y t_B - t_Y) / sigma_t

and ``sum |e|^2`` is minimised with Levenberg-Marquardt
(``scipy.optimize.least_squares``).  The Jacobian is analytic and built for all
motions at once: with ``G_k = hat(J_r(phi) e_k)`` (``J_r`` the right Jacobian
of SO(3)), ``dR/dphi_k = R G_k``, so for ``A X = X B``::

    de_R/dphi_k = (R_A R_X G_k - R_X G_k R_B) / (sqrt(2) sigma_R)     de_R/dt_X = 0
    de_t/dphi_k = -(R_X G_k t_B) / sigma_t                           de_t/dt_X = (R_A - I) / sigma_t

and similarly for ``A X = Y B``.  When the noise scales are not given they
are estimated from the residuals: the RMS of each block at the start, then
once more at the solution (and the problem re-solved if they changed by more
than a factor 1.5), so that neither block dominates because of its units.
An exact start (all residuals below 1e-12) is returned unchanged.
"""

from __future__ import annotations

import math

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError
from kinhec.solvers import _common as c
from kinhec.solvers.gauss_newton import levenberg_marquardt
from kinhec.solvers.pair_model import adjoint, fast_se3_log

__all__ = ["refine_lm", "refine_lm_axyb", "refine_twist"]

CITATION = (
    'R. Horaud and F. Dornaika, "Hand-eye calibration," Int. J. Robotics Research 14(3), 1995; '
    'K. H. Strobl and G. Hirzinger, "Optimal hand-eye calibration," IEEE/RSJ IROS, 2006.'
)

_SQRT2 = np.sqrt(2.0)
_I3 = np.eye(3)
_EXACT = 1e-12

#: Residual forms of :func:`refine_lm` and :func:`refine_lm_axyb`.
COSTS = ("twist", "chordal")

#: Tolerances of the twist cost's Levenberg-Marquardt: scipy's defaults, at which the published toolkit's
#: refinements stop (with tighter ones the solution moves by up to 1e-3 relative on a few sequences).
_TWIST_TOL = 1e-8


def _exp_and_jr(phi: np.ndarray):
    """``exp(phi)`` and the right Jacobian ``J_r(phi)`` of SO(3), both (3, 3).

    ``J_r(phi) = I - b hat(phi) + c hat(phi)^2`` with ``b = (1 - cos t) / t^2``,
    ``c = (t - sin t) / t^3`` (series below 1e-4 rad); scalar arithmetic, as
    this runs once per residual evaluation.
    """
    theta = math.sqrt(float(phi @ phi))
    if theta < 1e-4:
        t2 = theta * theta
        a, b, cc = 1.0 - t2 / 6.0, 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    else:
        s, h = math.sin(theta), math.sin(0.5 * theta)
        a, b, cc = s / theta, 2.0 * h * h / (theta * theta), (theta - s) / theta**3
    K = c.skew(phi)
    K2 = K @ K
    return _I3 + a * K + b * K2, _I3 - b * K + cc * K2


def _exp_and_generators(phi: np.ndarray):
    """``exp(phi)`` and the three matrices ``hat(J_r(phi) e_k)`` (3, 3, 3), k first."""
    R, Jr = _exp_and_jr(phi)
    return R, c.skew(Jr.T)  # row k of Jr.T = column k of Jr


def _check_std(value, name: str):
    if value is None:
        return None
    v = float(value)
    if not (np.isfinite(v) and v > 0):
        raise InputError(f"{name}: expected a positive finite number or None, got {value!r}")
    return v


def _check_cost(cost) -> str:
    if cost not in COSTS:
        raise InputError(f"cost: expected one of {', '.join(map(repr, COSTS))}, got {cost!r}")
    return cost


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x * x)))


def _scales(rot_rms: float, trans_rms: float, rot_std, trans_std):
    """Noise scales (rad, m) for the two residual blocks; None when the start is exact."""
    if rot_std is not None and trans_std is not None:
        return rot_std, trans_std
    if rot_rms < _EXACT and trans_rms < _EXACT:
        return None
    s_r = rot_std if rot_std is not None else rot_rms
    s_t = trans_std if trans_std is not None else trans_rms
    # keep both finite when one block happens to be exact: 1 rad ~ 1 m
    floor = 1e-6 * max(s_r, s_t)
    return max(s_r, floor, _EXACT), max(s_t, floor, _EXACT)


def _solve(fun, jac, n_params: int, max_nfev: int):
    from scipy.optimize import least_squares  # here, so that listing solvers does not import scipy

    res = least_squares(fun, np.zeros(n_params), jac=jac, method="lm", max_nfev=max_nfev,
                        xtol=1e-12, ftol=1e-12, gtol=1e-12)
    return res.x


# --------------------------------------------------------------------------- #
# A X = X B
# --------------------------------------------------------------------------- #
def _left(RA_rows: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``R_A,n @ M`` for all n as one matrix product: RA_rows (3N, 3), M (3, m) -> (N, 3, m)."""
    return (RA_rows @ M).reshape(-1, 3, M.shape[1])


def _right(M: np.ndarray, RB_cols: np.ndarray) -> np.ndarray:
    """``M @ R_B,n`` for all n as one matrix product: M (m, 3), RB_cols (3, 3N) -> (N, m, 3)."""
    return (M @ RB_cols).reshape(M.shape[0], -1, 3).transpose(1, 0, 2)


def _stacks(A, B):
    """Rotation blocks of A and B laid out for :func:`_left` / :func:`_right`, and translations."""
    RA_rows = np.ascontiguousarray(A[:, :3, :3]).reshape(-1, 3)
    RB_cols = np.ascontiguousarray(B[:, :3, :3].transpose(1, 0, 2)).reshape(3, -1)
    return RA_rows, A[:, :3, 3], RB_cols, B[:, :3, 3]


def _axxb_raw(RA_rows, tA, RB_cols, tB, R, t):
    """Unweighted residual blocks (N, 9) [rad-like] and (N, 3) [m]."""
    eR = (_left(RA_rows, R) - _right(R, RB_cols)) / _SQRT2
    et = (RA_rows @ t).reshape(-1, 3) + tA - tB @ R.T - t
    return eR.reshape(-1, 9), et


def _axxb_problem(A, B, R0, t0, s_r, s_t):
    """Residual and analytic Jacobian of ``A X = X B`` in ``p = (phi, dt)``, ``X = (R0 exp(phi), t0 + dt)``."""
    RA_rows, tA, RB_cols, tB = _stacks(A, B)
    n = A.shape[0]
    RAmI = A[:, :3, :3] - np.eye(3)

    def fun(p):
        R, _ = _exp_and_generators(p[:3])
        eR, et = _axxb_raw(RA_rows, tA, RB_cols, tB, R0 @ R, t0 + p[3:])
        return np.concatenate([eR / s_r, et / s_t], axis=1).reshape(-1)

    def jac(p):
        Rphi, G = _exp_and_generators(p[:3])
        RG = (R0 @ Rphi) @ G  # (3, 3, 3): k, i, j -- dR/dphi_k
        J = np.zeros((n, 12, 6))
        # (R_A RG_k - RG_k R_B)[i, l] for all n and k, as two matrix products
        left = _left(RA_rows, RG.transpose(1, 0, 2).reshape(3, 9)).reshape(n, 3, 3, 3)  # n, i, k, l
        right = _right(RG.reshape(9, 3), RB_cols).reshape(n, 3, 3, 3)  # n, k, i, l
        dR = left - right.transpose(0, 2, 1, 3)  # n, i, k, l
        J[:, :9, :3] = dR.transpose(0, 1, 3, 2).reshape(n, 9, 3) / (_SQRT2 * s_r)
        J[:, 9:, :3] = -(tB @ RG.transpose(2, 1, 0).reshape(3, 9)).reshape(n, 3, 3) / s_t  # n, i, k
        J[:, 9:, 3:] = RAmI / s_t
        return J.reshape(-1, 6)

    return fun, jac


def _refine_lm(A, B, X0, rot_std=None, trans_std=None, max_nfev: int = 200):
    RA, tA, RB, tB = _stacks(A, B)

    def run(R0, t0, s_r, s_t):
        fun, jac = _axxb_problem(A, B, R0, t0, s_r, s_t)
        p = _solve(fun, jac, 6, max_nfev)
        R, _ = _exp_and_generators(p[:3])
        return c.project_to_so3(R0 @ R), t0 + p[3:]

    R, t = X0[:3, :3], X0[:3, 3]
    eR, et = _axxb_raw(RA, tA, RB, tB, R, t)
    sc = _scales(_rms(eR), _rms(et), rot_std, trans_std)
    if sc is None:
        return X0.copy()
    R1, t1 = run(R, t, *sc)
    if rot_std is None or trans_std is None:
        eR, et = _axxb_raw(RA, tA, RB, tB, R1, t1)
        sc2 = _scales(_rms(eR), _rms(et), rot_std, trans_std)
        if sc2 is not None:
            ratio = (sc2[0] / sc2[1]) / (sc[0] / sc[1])
            if ratio > 1.5 or ratio < 1 / 1.5:
                R1, t1 = run(R1, t1, *sc2)
    return c.transform(R1, t1)


def refine_lm(A, B, X0, *, cost: str = "twist", rot_std_rad=None, trans_std_m=None, max_nfev: int = 200) -> np.ndarray:
    """Refine ``X`` of ``A X = X B`` by Levenberg-Marquardt on SE(3) from any start ``X0``.

    Parameters
    ----------
    A : array_like, shape (N, 4, 4)
        Relative flange motions ``inv(A_i) A_j`` [m], N >= 2.
    B : array_like, shape (N, 4, 4)
        The matching relative camera motions ``inv(B_i) B_j``.
    X0 : array_like, shape (4, 4)
        Starting hand-eye transform (e.g. from :func:`park_martin`).
    cost : {"twist", "chordal"}
        ``"twist"`` (default, the published baseline ``park_martin+lm``):
        ``Log(inv(X B) A X)``, rotation [rad] and translation [m] unweighted
        unless scales are given.  ``"chordal"``: the chordal and translation
        blocks, each divided by its noise scale.
    rot_std_rad, trans_std_m : float, optional
        Noise scales of the rotational [rad] and translational [m] residual
        blocks.  Omitted: ``"chordal"`` estimates them from the residuals,
        ``"twist"`` takes 1 rad ~ 1 m.
    max_nfev : int
        Limit on residual evaluations per Levenberg-Marquardt run.

    Returns
    -------
    X : ndarray, shape (4, 4)
        Refined hand-eye transform (``T_ee_cam`` or ``T_ee_marker``) [m].

    Raises
    ------
    InputError
        Bad shapes or values of ``A``, ``B``, ``X0`` or the noise scales.
    DegenerateMotionError
        All rotation axes of ``A`` parallel (or no rotation at all).
    """
    A, B = c.check_motions(A, B)
    X0 = c.check_pose(X0, "X0")
    rs = _check_std(rot_std_rad, "rot_std_rad")
    ts = _check_std(trans_std_m, "trans_std_m")
    c.check_rotation_axes(c.rotvecs(A[:, :3, :3]), "refine_lm")
    if _check_cost(cost) == "twist":
        return refine_twist(A, B, X0, None, rs, ts, int(max_nfev))[0]
    return _refine_lm(A, B, X0, rs, ts, int(max_nfev))


# --------------------------------------------------------------------------- #
# A X = Y B
# --------------------------------------------------------------------------- #
def _axyb_raw(RA_rows, tA, RB_cols, tB, RX, tX, RY, tY):
    """Unweighted residual blocks (N, 9) [rad-like] and (N, 3) [m]."""
    eR = (_left(RA_rows, RX) - _right(RY, RB_cols)) / _SQRT2
    et = (RA_rows @ tX).reshape(-1, 3) + tA - tB @ RY.T - tY
    return eR.reshape(-1, 9), et


def _axyb_problem(A, B, RX0, tX0, RY0, tY0, s_r, s_t):
    """Residual and analytic Jacobian of ``A X = Y B`` in ``p = (phi_X, dt_X, phi_Y, dt_Y)``."""
    RA_rows, tA, RB_cols, tB = _stacks(A, B)
    RA = A[:, :3, :3]
    n = A.shape[0]

    def unpack(p):
        RxP, Gx = _exp_and_generators(p[0:3])
        RyP, Gy = _exp_and_generators(p[6:9])
        return RX0 @ RxP, tX0 + p[3:6], RY0 @ RyP, tY0 + p[9:12], Gx, Gy

    def fun(p):
        RX, tX, RY, tY, _, _ = unpack(p)
        eR, et = _axyb_raw(RA_rows, tA, RB_cols, tB, RX, tX, RY, tY)
        return np.concatenate([eR / s_r, et / s_t], axis=1).reshape(-1)

    def jac(p):
        RX, _, RY, _, Gx, Gy = unpack(p)
        RXG = RX @ Gx  # (3, 3, 3): k, i, j
        RYG = RY @ Gy
        J = np.zeros((n, 12, 12))
        dRx = _left(RA_rows, RXG.transpose(1, 0, 2).reshape(3, 9)).reshape(n, 3, 3, 3)  # n, i, k, l
        dRy = _right(RYG.reshape(9, 3), RB_cols).reshape(n, 3, 3, 3)  # n, k, i, l
        J[:, :9, 0:3] = dRx.transpose(0, 1, 3, 2).reshape(n, 9, 3) / (_SQRT2 * s_r)
        J[:, :9, 6:9] = -dRy.transpose(0, 2, 3, 1).reshape(n, 9, 3) / (_SQRT2 * s_r)
        J[:, 9:, 3:6] = RA / s_t
        J[:, 9:, 6:9] = -(tB @ RYG.transpose(2, 1, 0).reshape(3, 9)).reshape(n, 3, 3) / s_t
        J[:, 9:, 9:12] = -np.eye(3) / s_t
        return J.reshape(-1, 12)

    return fun, jac, unpack


def _refine_lm_axyb(A, B, X0, Y0, rot_std=None, trans_std=None, max_nfev: int = 200):
    RA, tA, RB, tB = _stacks(A, B)

    def run(RX0, tX0, RY0, tY0, s_r, s_t):
        fun, jac, unpack = _axyb_problem(A, B, RX0, tX0, RY0, tY0, s_r, s_t)
        p = _solve(fun, jac, 12, max_nfev)
        RX, tX, RY, tY, _, _ = unpack(p)
        return c.project_to_so3(RX), tX, c.project_to_so3(RY), tY

    st = (X0[:3, :3], X0[:3, 3], Y0[:3, :3], Y0[:3, 3])
    eR, et = _axyb_raw(RA, tA, RB, tB, *st)
    sc = _scales(_rms(eR), _rms(et), rot_std, trans_std)
    if sc is None:
        return X0.copy(), Y0.copy()
    st1 = run(*st, *sc)
    if rot_std is None or trans_std is None:
        eR, et = _axyb_raw(RA, tA, RB, tB, *st1)
        sc2 = _scales(_rms(eR), _rms(et), rot_std, trans_std)
        if sc2 is not None:
            ratio = (sc2[0] / sc2[1]) / (sc[0] / sc[1])
            if ratio > 1.5 or ratio < 1 / 1.5:
                st1 = run(*st1, *sc2)
    RX, tX, RY, tY = st1
    return c.transform(RX, tX), c.transform(RY, tY)


def refine_lm_axyb(A_abs, B_abs, X0, Y0, *, cost: str = "twist", rot_std_rad=None, trans_std_m=None,
                   max_nfev: int = 200):
    """Refine ``X`` and ``Y`` of ``A_i X = Y B_i`` by Levenberg-Marquardt on SE(3) x SE(3).

    Parameters
    ----------
    A_abs : array_like, shape (N, 4, 4)
        Absolute flange poses ``T_base_ee`` [m], N >= 3.
    B_abs : array_like, shape (N, 4, 4)
        The paired camera measurements: ``inv(T_cam_target)`` (eye-in-hand) or
        ``T_cam_target`` (eye-to-hand).
    X0, Y0 : array_like, shape (4, 4)
        Starting estimates (e.g. from :func:`shah`).
    cost : {"twist", "chordal"}
        ``"twist"`` (default, the published baseline ``shah+lm``):
        ``Log(inv(Y B) A X)``, rotation [rad] and translation [m] unweighted
        unless scales are given.  ``"chordal"``: the chordal and translation
        blocks, each divided by its noise scale.
    rot_std_rad, trans_std_m : float, optional
        Noise scales of the rotational [rad] and translational [m] residual
        blocks.  Omitted: ``"chordal"`` estimates them from the residuals,
        ``"twist"`` takes 1 rad ~ 1 m.
    max_nfev : int
        Limit on residual evaluations per Levenberg-Marquardt run.

    Returns
    -------
    X, Y : ndarray, shape (4, 4)
        Refined ``X`` (``T_ee_cam`` / ``T_ee_marker``) and ``Y``
        (``T_base_world`` / ``T_base_cam``) [m].

    Raises
    ------
    InputError
        Bad shapes or values of the poses, the starts or the noise scales.
    DegenerateMotionError
        The flange rotations all differ by rotations about one axis.
    """
    A, B = c.check_pairs(A_abs, B_abs)
    X0 = c.check_pose(X0, "X0")
    Y0 = c.check_pose(Y0, "Y0")
    rs = _check_std(rot_std_rad, "rot_std_rad")
    ts = _check_std(trans_std_m, "trans_std_m")
    c.check_rotation_axes(c.relative_rotvecs_of_poses(A[:, :3, :3]), "refine_lm_axyb",
                          "the motions between the poses A_abs")
    if _check_cost(cost) == "twist":
        return refine_twist(A, B, X0, Y0, rs, ts, int(max_nfev))
    return _refine_lm_axyb(A, B, X0, Y0, rs, ts, int(max_nfev))


# --------------------------------------------------------------------------- #
# the twist cost (the published baselines)
# --------------------------------------------------------------------------- #
def _se3_jr_inv(xi: np.ndarray) -> np.ndarray:
    """Inverse right Jacobians ``(N, 6, 6)`` of SE(3) at twists ``xi = (omega, v)`` (N, 6).

    ``Log(exp(xi) exp(d)) = xi + J_r^-1(xi) d + O(d^2)``.  In the ``(omega, v)``
    order ``J_r^-1 = [[K, 0], [-K Q K, K]]`` with ``K = J_r^-1(omega)`` of SO(3)
    and ``Q = Q_l(-omega, -v)``, the translational coupling block of the left
    Jacobian of SE(3) (Barfoot, *State Estimation for Robotics*, 2017, eq. 7.86).
    """
    w, v = xi[:, :3], xi[:, 3:]
    th = np.linalg.norm(w, axis=1)
    small = th < 1e-2
    t = np.where(small, 1.0, th)
    t2 = th * th
    s, co = np.sin(t), np.cos(t)
    # J_r^-1(omega) = I + W/2 + d W^2, d = 1/t^2 - cot(t/2) / (2 t)
    d = np.where(small, 1.0 / 12 + t2 / 720, 1.0 / (t * t) - np.cos(t / 2) / (2 * t * np.sin(t / 2)))
    a1 = np.where(small, 1.0 / 6 - t2 / 120, (t - s) / t**3)
    a2 = np.where(small, 1.0 / 24 - t2 / 720, (t * t + 2 * co - 2) / (2 * t**4))
    a3 = np.where(small, 1.0 / 120 - t2 / 2520, (2 * t - 3 * s + t * co) / (2 * t**5))
    W = c.skew(w)
    P = c.skew(v)
    W2 = W @ W
    WP, PW = W @ P, P @ W
    WPW = WP @ W
    # Q_l(-omega, -v): the odd-degree terms change sign
    Q = (-0.5 * P + a1[:, None, None] * (WP + PW - WPW) - a2[:, None, None] * (W2 @ P + PW @ W - 3 * WPW)
         + a3[:, None, None] * (WPW @ W + W2 @ PW))  # fmt: skip
    K = np.eye(3) + 0.5 * W + d[:, None, None] * W2
    out = np.zeros((xi.shape[0], 6, 6))
    out[:, :3, :3] = K
    out[:, 3:, 3:] = K
    out[:, 3:, :3] = -K @ Q @ K
    return out


def _twist_problem(A, B, X0, Y0, s_r: float, s_t: float):
    """Residual and analytic Jacobian of ``Log(inv(Y B_i) A_i X)`` (``Y = X`` when ``Y0`` is None).

    Parameters ``p = (phi_X, dt_X[, phi_Y, dt_Y])`` with ``X = (R_X0 exp(phi_X), t_X0 + dt_X)``.
    For a right perturbation ``X exp(dx)``, ``Y exp(dy)`` of the poses, the residual of pair i moves by
    ``J_r^-1(r_i) (dx - Ad(M_i) dy)``, ``M_i = inv(X) inv(A_i) Y``; the parameters map to the
    perturbations by ``dx = (J_r(phi_X) dphi_X, R_X^T dt_X)``.
    """

    same = Y0 is None
    n = A.shape[0]
    Ainv = se3.invert_transform(A, check=False)
    Binv = se3.invert_transform(B, check=False)
    scale = np.array([s_r] * 3 + [s_t] * 3)

    def unpack(p):
        Rx, Jx = _exp_and_jr(p[0:3])
        X = c.transform(X0[:3, :3] @ Rx, X0[:3, 3] + p[3:6])
        if same:
            return X, X, Jx, Jx
        Ry, Jy = _exp_and_jr(p[6:9])
        return X, c.transform(Y0[:3, :3] @ Ry, Y0[:3, 3] + p[9:12]), Jx, Jy

    last = {}

    def residual(p):
        # scipy asks for the Jacobian at the point whose residual it has just computed: keep that one
        if last.get("p") is None or not np.array_equal(last["p"], p):
            X, Y, Jx, Jy = unpack(p)
            # (the logarithm from the skew part of the rotation: se3_log's value to round-off, several times faster)
            r = fast_se3_log(Binv @ se3.invert_transform(Y, check=False) @ A @ X)
            last.update(p=p.copy(), r=r, poses=(X, Y, Jx, Jy))
        return last["r"], last["poses"]

    def fun(p):
        return (residual(p)[0] / scale).reshape(-1)

    def to_params(J, R, Jr):
        out = np.empty_like(J)
        out[..., :3] = J[..., :3] @ Jr
        out[..., 3:] = J[..., 3:] @ R.T
        return out

    def jac(p):
        r, (X, Y, Jx, Jy) = residual(p)
        Ji = _se3_jr_inv(r)
        M = se3.invert_transform(X, check=False) @ Ainv @ Y
        dy = -Ji @ adjoint(M)
        if same:
            J = to_params(Ji + dy, X[:3, :3], Jx)
        else:
            J = np.concatenate([to_params(Ji, X[:3, :3], Jx), to_params(dy, Y[:3, :3], Jy)], axis=2)
        return (J / scale[None, :, None]).reshape(n * 6, -1)

    return fun, jac, unpack


def refine_twist(A, B, X0, Y0=None, rot_std=None, trans_std=None, max_nfev: int = 200):
    """Unweighted (or given-scale) Levenberg-Marquardt on the twist residual; ``(X, Y)``.

    MINPACK's iterations at scipy's default tolerances, as ``least_squares(method="lm")`` takes them (the published
    refinements stop there), through :func:`kinhec.solvers.gauss_newton.levenberg_marquardt`: the same minimiser
    to the last bit at a quarter less cost per call.
    """
    s_r = 1.0 if rot_std is None else rot_std
    s_t = 1.0 if trans_std is None else trans_std
    fun, jac, unpack = _twist_problem(A, B, X0, Y0, s_r, s_t)
    n_params = 6 if Y0 is None else 12
    p0 = np.zeros(n_params)
    if np.abs(fun(p0).reshape(-1, 6) * np.array([s_r] * 3 + [s_t] * 3)).max() < _EXACT:
        return X0.copy(), (X0 if Y0 is None else Y0).copy()
    X, Y, _, _ = unpack(levenberg_marquardt(fun, jac, n_params, _TWIST_TOL, max_nfev))
    return c.transform(c.project_to_so3(X[:3, :3]), X[:3, 3]), c.transform(c.project_to_so3(Y[:3, :3]), Y[:3, 3])
