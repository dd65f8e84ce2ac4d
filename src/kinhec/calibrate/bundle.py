"""The last step of ``--corners``: ``X``, ``Y``, the intrinsics and the board's scale from the pixels, jointly.

:func:`kinhec.solvers.he_ml.he_ml` fits ``X`` and ``Y`` to the pixels with the
robot's pose errors marginalised, but at fixed intrinsics and for the board
as stated.  Neither is exact in practice: the intrinsics come from the same
views (or from an earlier calibration), and a printed board is rarely its
stated size.  Both move ``X`` along the optical axis by a fraction of the
target's distance -- far more than the pixel noise does -- so holding them
fixed gives error bars that do not hold.

Model
-----
View ``i`` sees the target points ``b P_ij`` (``b``: true over stated board
size) at pixels ``m_ij = pi(k, C_i P_ij b) + e_ij``, ``e_ij ~ N(0, s_px^2 I)``,
with ``C_i`` the chain pose of :func:`kinhec.solvers.reprojection.chain_poses`
from the true flange pose ``A_i exp(xi_i)``, ``xi_i ~ N(0, diag(v_rot I,
v_trans I))``.  Since ``pi(R b P + t) = pi(R P + t / b)``, the board scale
divides the chain's translation.  The negative log-posterior

    sum_ij |m_ij - pi(k, C_i(X, Y, xi_i) P_ij b)|^2 / s_px^2 + sum_i xi_i^T S^-1 xi_i
        + (log b / sigma_b)^2 [+ sum_j ((k_j - k_j,given) / sigma_kj)^2]

is minimised over the intrinsics ``k`` (those estimated), ``X``, ``Y``,
``log b`` and every view's twist ``xi_i`` by Levenberg-Marquardt
(:func:`kinhec.geometry.lsq.levenberg_marquardt`, block-sparse, with the
analytic Jacobian of :func:`_jacobian`), starting from ``he_ml``'s solution.
The noise levels ``s_px``, ``v_rot``, ``v_trans`` start at ``he_ml``'s and are
re-estimated by expectation-maximisation at the refined intrinsics
(``he_ml``'s, at intrinsics that a small target leaves far off, absorb the
intrinsics' misfit as noise):
``s_px^2 = (|e|^2 + s_px^2 tr(J_p C J_p^T)) / n_p`` and
``v = (sum xi^2 + tr C_xi) / 3N``, ``C`` the posterior covariance,
alternating with the solve until they settle.  ``sigma_b`` is
:data:`kinhec.calibrate.scale.PRIOR_STD`; given intrinsics enter with the
prior :data:`INTRINSICS_PRIOR` (they are refined, not trusted), estimated ones
without.

The covariance of the shared unknowns is the corresponding block of the
inverse normal matrix: every view twist, every intrinsic and the board scale
are marginalised.

References
----------
B. Triggs, P. McLauchlan, R. Hartley and A. Fitzgibbon, "Bundle adjustment --
a modern synthesis," *Vision Algorithms: Theory and Practice*, 2000
(marginal covariances from the normal equations).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kinhec.calibrate.reduced_dof import KNOWN_WEIGHT
from kinhec.geometry import se3
from kinhec.models.intrinsics import RATIONAL_PRIOR_STD, PackedViews, intrinsic_names, pose_jacobians, project
from kinhec.geometry.lsq import BlockJacobian, BlockStructure
from kinhec.solvers.reprojection import chain_perturbations, chain_poses

__all__ = ["BundleFit", "BundleSystem", "refine_bundle", "INTRINSICS_PRIOR", "DISTORTION_PRIOR",
           "FISHEYE_DISTORTION_PRIOR", "RATIONAL_DISTORTION_PRIOR", "DISTORTION_PRIORS"]

#: Prior of given intrinsics: focal lengths to this fraction, principal point to this fraction of the focal length.
INTRINSICS_PRIOR = {"focal_rel": 0.01, "principal_point_rel_f": 0.01}
#: Prior standard deviations of distortion coefficients estimated from the views ``(k1, k2, p1, p2, k3)``: wide for
#: the lenses the pinhole-plus-polynomial model suits, they only matter where the corners do not determine a
#: coefficient (a small marker in the middle of the image), which would otherwise wander off to absurd values.
DISTORTION_PRIOR = np.array([0.5, 0.5, 0.005, 0.005, 0.5])
#: The same for a fisheye's ``(k1, k2, k3, k4)`` (:mod:`kinhec.models.intrinsics`): the coefficients of fisheye
#: lenses are a few hundredths; wide, as :data:`DISTORTION_PRIOR` is.
FISHEYE_DISTORTION_PRIOR = np.array([0.5, 0.5, 0.5, 0.5])
#: The same for the rational model's ``(k1, k2, p1, p2, k3, k4, k5, k6)``: the prior its camera fit holds them by
#: (:data:`kinhec.models.intrinsics.RATIONAL_PRIOR_STD`, which says why).
RATIONAL_DISTORTION_PRIOR = RATIONAL_PRIOR_STD
#: The distortion prior of each model (:data:`kinhec.models.intrinsics.MODELS`).
DISTORTION_PRIORS = {"radtan": DISTORTION_PRIOR, "equidistant": FISHEYE_DISTORTION_PRIOR,
                     "rational": RATIONAL_DISTORTION_PRIOR}
#: Most iterations (each a damped Gauss-Newton step at fixed noise levels, then their EM update) ...
_MAX_ITER = 60
#: ... ending when the shared unknowns stop moving (every step below this fraction of its standard deviation) and
#: no noise level (as a standard deviation) moves by more than :data:`_EM_TOL`, or the unknowns have been still
#: for :data:`_STILL_ITER` iterations (EM creeps where a level is weakly identified, without moving them).
_STEP_TOL = 0.01
_EM_TOL = 0.02
_STILL_ITER = 3
#: Smallest robot twist std [rad, m]: a perfect robot keeps an invertible prior.
_STD_FLOOR = 1e-10


@dataclass(frozen=True)
class BundleSystem:
    """The whitened least-squares system of a :func:`refine_bundle` fit at its solution (what its covariance
    came from), for :mod:`kinhec.calibrate.held_out_pixels`.

    Attributes
    ----------
    jacobian : kinhec.geometry.lsq.BlockJacobian
        Whitened Jacobian (central differences): the shared columns (estimated intrinsics, ``X``, ``Y`` as
        right perturbations, ``log b``), then one 6-column block per view (its flange twist); rows: the pixels
        (``2`` per corner, view by view), every view's twist prior (6 rows), the priors of the intrinsics and of
        ``log b`` (view ``-1``).
    residuals : ndarray, shape (M,)
        Whitened residuals (prediction minus observation) at the solution.
    residuals_measured : ndarray, shape (n_pix,)
        The pixel rows' whitened residuals with every view's twist zero (the robot poses as measured).
    n_pix : int
        Pixel rows (the first ``n_pix`` rows).
    pixel_std : float
        The pixel noise the rows are whitened by [px].
    robot_std : ndarray, shape (6,)
        The flange twist noise per component (rotation [rad] x3, translation [m] x3).
    """

    jacobian: BlockJacobian
    residuals: np.ndarray
    residuals_measured: np.ndarray
    n_pix: int
    pixel_std: float
    robot_std: np.ndarray


@dataclass(frozen=True)
class BundleFit:
    """Result of :func:`refine_bundle`.

    Attributes
    ----------
    X, Y : ndarray, shape (4, 4)
        [m], for the board at its estimated size.
    intrinsics : ndarray, shape (9,) or (8,)
    board_scale : float
        True over stated board size ``b``.
    cov : ndarray, shape (12 + n_int + 1, 12 + n_int + 1)
        Covariance of ``(phi_X, d_X, phi_Y, d_Y)`` (rotation right perturbation [rad], translation in the
        parent frame [m]), the estimated intrinsics (``intrinsic_names``) and ``log b``.
    intrinsic_names : tuple of str
    board_scale_data_std : float
        Standard deviation of ``log b`` from the pixels alone (no prior; inf when they do not determine it).
    twists : ndarray, shape (N, 6)
        Posterior mean of every view's flange twist error.
    rms_px : float
        RMS pixel residual at the solution.
    n_iter : int
    pixel_std : float
        Pixel noise [px] (EM estimate at the refined intrinsics).
    robot_rot_std_rad, robot_trans_std_m : float
        Flange twist noise per component (EM estimates).
    system : BundleSystem or None
        The whitened system at the solution.
    """

    X: np.ndarray
    Y: np.ndarray
    intrinsics: np.ndarray
    board_scale: float
    cov: np.ndarray
    intrinsic_names: tuple
    board_scale_data_std: float
    twists: np.ndarray
    rms_px: float
    n_iter: int
    pixel_std: float = float("nan")
    robot_rot_std_rad: float = float("nan")
    robot_trans_std_m: float = float("nan")
    system: BundleSystem | None = field(default=None, repr=False, compare=False)


def _exp6(v: np.ndarray) -> np.ndarray:
    """``exp(v)`` of one twist ``(omega, v)`` (4, 4), Rodrigues' formula written out (called once per residual
    evaluation, where the batched :func:`kinhec.geometry.se3.se3_exp` costs more in overhead than in arithmetic)."""
    w, u = v[:3], v[3:]
    th2 = float(w @ w)
    K = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    if th2 < 1e-12:
        a, bb, c = 1.0 - th2 / 6.0, 0.5 - th2 / 24.0, 1.0 / 6.0 - th2 / 120.0
    else:
        th = np.sqrt(th2)
        a, bb, c = np.sin(th) / th, (1.0 - np.cos(th)) / th2, (th - np.sin(th)) / (th2 * th)
    K2 = K @ K
    T = np.eye(4)
    T[:3, :3] += a * K + bb * K2
    T[:3, 3] = u + bb * (K @ u) + c * (K2 @ u)
    return T


def _inverse(H: np.ndarray, exact: bool = False) -> np.ndarray:
    """Pseudo-inverse of a normal matrix ``(n, n)``, computed on its diagonally scaled form.

    The rows of ``H`` span many orders of magnitude (a robot rotation noise estimated near zero gives its view
    twists a weight of 1e13 and more beside intrinsics of weight 1 px^-2): a pseudo-inverse of ``H`` as it is cuts
    every direction below 1e-15 of the largest one, the weakly determined combinations of intrinsics and pose
    included, and reports them as exactly known.  Scaled to a unit diagonal, ``H``'s condition number is that of
    the problem, not of its units.  ``exact``: the inverse proper (raises ``LinAlgError`` when ``H`` is singular).
    """
    H = 0.5 * (H + H.T)
    s = np.sqrt(np.maximum(np.diagonal(H), 1e-300))
    d = np.outer(s, s)
    return (np.linalg.inv(H / d) if exact else np.linalg.pinv(H / d, hermitian=True)) / d


def _chain(A, X, Y, configuration):
    return chain_poses(A, X, Y, configuration)


def _jacobian(unpack, structure: BlockStructure, views: PackedViews, A, configuration: str, lv: dict, free, k_std,
              board_prior_std, held_idx, w_hold):  # fmt: skip
    """The analytic Jacobian ``jac(x) -> BlockJacobian`` of the residuals of :func:`refine_bundle` (its rows and
    columns in the same order).

    A pixel's derivatives come from :func:`kinhec.models.intrinsics.pose_jacobians`: by the intrinsics directly, by
    the others through the right perturbation ``eps`` of its view's ``C = T_cam_target`` (before the board's scale
    divides its translation).  Every unknown pose
    enters as ``T0 exp(x)``: :func:`kinhec.solvers.reprojection.chain_perturbations` carries steps of ``X``'s,
    ``Y``'s and the view twists onto ``eps`` (the flange poses ``A exp(xi)`` corrected by the view twists).
    """
    mask = views.mask
    N = A.shape[0]
    pts = views.points_3d[mask]
    v = np.broadcast_to(np.arange(N)[:, None], mask.shape)[mask]  # the view of every point
    n_pix = 2 * pts.shape[0]
    n_int, ns = free.size, structure.n_shared
    est_b = board_prior_std is not None
    rows = np.flatnonzero(structure.row_view >= 0)  # the pixels' rows, then the view twists' priors
    M = structure.row_view.size
    prior_row = n_pix + 6 * N  # the first row of the priors on the shared unknowns
    if k_std is not None and n_int:
        k_rows = prior_row + np.arange(n_int)
        prior_row += n_int
    b_row = prior_row if est_b else None
    h_rows = prior_row + int(est_b) + np.arange(held_idx.size)

    def jac(x):
        k, X, Y, b, xi = unpack(x)
        s_px, sig = lv["s_px"], lv["sig"]
        Ap = A @ se3.se3_exp_unchecked(xi)
        C = chain_poses(Ap, X, Y, configuration)
        t = C[v, :3, 3]
        Jk, G, Jp = pose_jacobians(k, C[v, :3, :3], t / b, pts, 1.0 / b)
        G /= s_px  # (n, 2, 6): by eps
        Jr = se3.se3_right_jacobian(np.concatenate([x[n_int : n_int + 12].reshape(2, 6), xi]))
        JrX, JrY = Jr[0], Jr[1]
        EX, EY, Exi = chain_perturbations(C, Ap, X, Y, configuration, JrX, JrY, Jr[2:])
        shared = np.zeros((M, ns))
        shared[:n_pix, :n_int] = Jk[:, :, free].reshape(n_pix, n_int) / s_px
        shared[:n_pix, n_int : n_int + 6] = (G @ EX[v]).reshape(n_pix, 6)
        shared[:n_pix, n_int + 6 : n_int + 12] = (G @ EY[v]).reshape(n_pix, 6)
        if est_b:  # p = R P + t exp(-log b)
            shared[:n_pix, n_int + 12] = (Jp @ (-t / b)[:, :, None]).reshape(n_pix) / s_px
            shared[b_row, n_int + 12] = 1.0 / board_prior_std
        if k_std is not None and n_int:
            shared[k_rows, np.arange(n_int)] = 1.0 / k_std
        if held_idx.size:  # a held translation of X (or Y) moves with the pose: R J_r(x)[3:] d
            dt = np.concatenate([X[:3, :3] @ JrX[3:], Y[:3, :3] @ JrY[3:]])  # (6, 6): t_X, t_Y by d_X, d_Y
            for r_i, h in zip(h_rows, held_idx):
                if h < 6:
                    shared[r_i, n_int : n_int + 6] = w_hold[0] * dt[h - 3]
                else:
                    shared[r_i, n_int + 6 : n_int + 12] = w_hold[0] * dt[h - 6]
        blocks = np.empty((rows.size, 6))
        blocks[:n_pix] = (G @ Exi[v]).reshape(n_pix, 6)
        blocks[n_pix:] = np.tile(np.diag(1.0 / sig), (N, 1))
        return BlockJacobian(shared, blocks, rows, structure)

    return jac


def _em(fun, jac, x, pix_rows, n_pix: int, ns: int, N: int, lv: dict):
    """Generalised EM (see :func:`refine_bundle`): returns the parameters and the iterations run; ``lv`` (the
    noise levels ``fun`` and ``jac`` whiten with) is updated in place."""
    lam, still, it = 1e-3, 0, 0
    r = fun(x)
    for it in range(1, _MAX_ITER + 1):
        J = jac(x)
        H, g = J.normal(r)
        cost = float(r @ r)
        d = np.maximum(np.diag(H), 1e-12 * max(float(np.diag(H).max()), 1e-300))
        step = np.zeros_like(x)
        for _ in range(12):
            try:
                dx = np.linalg.solve(H + lam * np.diag(d), -g)
            except np.linalg.LinAlgError:
                lam *= 10.0
                continue
            r_new = fun(x + dx)
            if np.isfinite(r_new).all() and float(r_new @ r_new) < cost:
                x, r, step = x + dx, r_new, dx
                lam = max(lam / 3.0, 1e-12)
                break
            lam *= 4.0
        C = _inverse(H)
        tr_p = float(np.sum(C * J.normal(w=pix_rows)[0]))  # trace(J_p C J_p^T), J_p the pixel rows
        s_px = lv["s_px"]
        e2 = float(np.sum((r[:n_pix] * s_px) ** 2))
        s_new = float(np.sqrt(max((e2 + s_px**2 * tr_p) / n_pix, 1e-24)))
        xi = x[ns:].reshape(N, 6)
        dC = np.diagonal(C)[ns:].reshape(N, 6)
        v_rot = (np.sum(xi[:, :3] ** 2) + np.sum(dC[:, :3])) / (3 * N)
        v_trans = (np.sum(xi[:, 3:] ** 2) + np.sum(dC[:, 3:])) / (3 * N)
        sig_new = np.maximum(np.sqrt([v_rot] * 3 + [v_trans] * 3), _STD_FLOOR)
        moved = max(abs(s_new / s_px - 1.0), float(np.max(np.abs(sig_new / lv["sig"] - 1.0))))
        lv["s_px"], lv["sig"] = s_new, sig_new
        r = fun(x)
        # the shared unknowns have stopped moving: their step far below their uncertainty
        sd = np.sqrt(np.maximum(np.diagonal(C)[:ns], 1e-300))
        still = still + 1 if float(np.max(np.abs(step[:ns]) / sd)) < _STEP_TOL else 0
        if still and (moved < _EM_TOL or still >= _STILL_ITER):
            break
    return x, it


def _covariance(fun, jac, x, X, Y, n_int: int, ns: int, board_prior_std):
    """The covariance at the solution (X and Y re-centred), ordered X, Y, intrinsics, log b with translations in
    the parent frames; the pixels' own standard deviation of ``log b``; the re-centred parameters; the whitened
    Jacobian and residuals there."""
    est_b = board_prior_std is not None
    res_x = x
    # covariance at the solution, X and Y re-centred (perturbations about the estimate)
    xc = res_x.copy()
    xc[n_int : n_int + 12] = 0.0
    r = fun(xc)
    J = jac(xc)
    H = J.normal()[0]
    cov_full = _inverse(H)
    # order: X, Y, intrinsics, log b; translations into the parent frames
    order = np.r_[n_int : n_int + 12, 0:n_int, n_int + 12 : ns].astype(int)
    cov = cov_full[np.ix_(order, order)]
    T = np.eye(cov.shape[0])
    T[3:6, 3:6] = X[:3, :3]
    T[9:12, 9:12] = Y[:3, :3]
    cov = T @ cov @ T.T
    data_std = float("inf")
    if est_b:  # information on log b from the pixels alone: drop its prior row
        kb = n_int + 12
        Hd = H.copy()
        Hd[kb, kb] -= 1.0 / board_prior_std**2
        try:
            v = float(_inverse(Hd, exact=True)[kb, kb])
            data_std = float(np.sqrt(v)) if v > 0 else float("inf")
        except np.linalg.LinAlgError:
            pass
    return cov, data_std, xc, J, r


def _held_translations(hold) -> tuple[np.ndarray, np.ndarray]:
    """The held components of ``hold`` (see :func:`refine_bundle`) as sorted indices and their values [m]."""
    held = dict(hold or {})
    if any(i % 6 < 3 for i in held):
        raise ValueError(f"hold: translations of X and Y only (indices 3-5, 9-11), got {sorted(held)}")
    idx = np.array(sorted(held), dtype=int)
    return idx, np.array([float(held[i]) for i in idx])


def refine_bundle(views: PackedViews, A, X0, Y0, intrinsics0, configuration: str, *, pixel_std: float,
                  robot_std: tuple[float, float], twists0=None, free_intrinsics=(), intrinsics_prior_std=None,
                  intrinsics_prior_mean=None, board_prior_std: float | None, hold=None) -> BundleFit:  # fmt: skip
    """Joint maximum a posteriori of ``X``, ``Y``, the intrinsics and the board scale (see the module doc).

    Parameters
    ----------
    views : PackedViews
        The views' target points (stated size) [m] and pixels [px], one per flange pose.
    A : ndarray, shape (N, 4, 4)
        Measured flange poses ``T_base_ee`` [m].
    X0, Y0 : ndarray, shape (4, 4)
        Start (``he_ml``'s pixel solution).
    intrinsics0 : ndarray, shape (9,), (8,) or (12,)
        ``(fx, fy, cx, cy, k1, k2, p1, p2, k3)``, or a fisheye's ``(fx, fy, cx, cy, k1, k2, k3, k4)``
        (:mod:`kinhec.models.intrinsics`): start, and the prior's mean when given.
    configuration : {"eye_in_hand", "eye_to_hand"}
    pixel_std : float
        Pixel noise [px].
    robot_std : (float, float)
        Flange twist noise, rotation [rad] and translation [m].
    twists0 : ndarray, shape (N, 6), optional
        Start of the view twists (default 0).
    free_intrinsics : sequence of int
        Indices (into the intrinsics) that are estimated; the others stay as given.
    intrinsics_prior_std : ndarray, optional
        Prior standard deviation of each free intrinsic (same order; ``inf``: none); None: no prior at all.
    intrinsics_prior_mean : ndarray, optional
        The prior's mean of each free intrinsic (default: their start values).  A start outside three prior
        standard deviations of the mean is moved to that bound.
    board_prior_std : float or None
        Prior standard deviation of ``log b``; None holds the board at its stated size (``b = 1``).
    hold : dict, optional
        Translation components of ``X`` and ``Y`` held (index of
        :data:`kinhec.calibrate.reduced_dof.COMPONENTS` -> value [m], in the parent frame): each by a prior
        :data:`kinhec.calibrate.reduced_dof.KNOWN_WEIGHT` times the largest information the pixels give ``X``
        and ``Y`` at the start (a constrained fit in the limit, as the pose path holds them); their rows and
        columns of the covariance are 0.

    Returns
    -------
    BundleFit
    """
    A = np.asarray(A, dtype=np.float64)
    N = A.shape[0]
    free = np.asarray(list(free_intrinsics), dtype=int)
    n_int = free.size
    est_b = board_prior_std is not None
    ns = n_int + 12 + int(est_b)
    k0 = np.asarray(intrinsics0, dtype=np.float64).copy()
    mask = views.mask
    obs = views.points_2d[mask]
    n_pix = 2 * int(mask.sum())
    # noise levels (updated by EM below): pixel std [px], robot twist std per component [rad x3, m x3]
    lv = {"s_px": float(pixel_std), "sig": np.maximum(np.array([robot_std[0]] * 3 + [robot_std[1]] * 3), _STD_FLOOR)}
    k_std = None if intrinsics_prior_std is None else np.asarray(intrinsics_prior_std, dtype=np.float64)
    k_mean = k0[free].copy() if intrinsics_prior_mean is None else np.asarray(intrinsics_prior_mean, dtype=np.float64)
    if k_std is not None:
        k0[free] = np.clip(k0[free], k_mean - 3 * k_std, k_mean + 3 * k_std)

    def unpack(x):
        k = k0.copy()
        k[free] = x[:n_int]
        X = X0 @ _exp6(x[n_int : n_int + 6])
        Y = Y0 @ _exp6(x[n_int + 6 : n_int + 12])
        b = float(np.exp(x[n_int + 12])) if est_b else 1.0
        xi = x[ns:].reshape(N, 6)
        return k, X, Y, b, xi

    held_idx, held_val = _held_translations(hold)
    w_hold = [0.0]  # the held components' prior weight, set from the data's information below

    def fun(x):
        k, X, Y, b, xi = unpack(x)
        C = _chain(A @ se3.se3_exp_unchecked(xi), X, Y, configuration)
        C[:, :3, 3] /= b
        r = [((project(k, C, views.points_3d)[mask] - obs) / lv["s_px"]).ravel(), (xi / lv["sig"]).ravel()]
        if k_std is not None and n_int:
            r.append((x[:n_int] - k_mean) / k_std)
        if est_b:
            r.append(np.array([x[n_int + 12] / board_prior_std]))
        if held_idx.size:
            t = np.r_[X[:3, 3], Y[:3, 3]]
            r.append(w_hold[0] * (t[np.where(held_idx < 6, held_idx - 3, held_idx - 6)] - held_val))
        return np.concatenate(r)

    view_of_point = np.broadcast_to(np.arange(N)[:, None], mask.shape)[mask]
    n_prior = (n_int if k_std is not None else 0) + int(est_b) + held_idx.size
    row_view = np.concatenate([np.repeat(view_of_point, 2), np.repeat(np.arange(N), 6), np.full(n_prior, -1)])
    structure = BlockStructure(ns, N, 6, row_view)
    jac = _jacobian(unpack, structure, views, A, configuration, lv, free, k_std, board_prior_std, held_idx, w_hold)
    pix_rows = (np.arange(row_view.size) < n_pix).astype(np.float64)
    x = np.zeros(structure.n_params)
    x[:n_int] = k0[free]
    if twists0 is not None:
        x[ns:] = np.nan_to_num(np.asarray(twists0, dtype=np.float64)).ravel()
    if held_idx.size:  # KNOWN_WEIGHT times the largest information the data give X and Y
        H0 = jac(x).normal()[0]
        w_hold[0] = float(np.sqrt(KNOWN_WEIGHT * np.diag(H0)[n_int : n_int + 12].max()))
    # generalised EM: a damped Gauss-Newton step at the current noise levels, then their EM update from the
    # posterior (restricted likelihood: the shared unknowns' uncertainty counts, as their flat priors make it)
    x, n_iter = _em(fun, jac, x, pix_rows, n_pix, ns, N, lv)
    k, X, Y, b, xi = unpack(x)
    s_px = lv["s_px"]
    X0, Y0 = X, Y  # the covariance's increments about the solution (fun reads X0, Y0 when called)
    cov, data_std, xc, J, r = _covariance(fun, jac, x, X, Y, n_int, ns, board_prior_std)
    cov[held_idx, :] = 0.0  # held: exactly (their prior leaves them a variance 1e-6 of the data's smallest)
    cov[:, held_idx] = 0.0
    e = fun(xc)[:n_pix] * s_px
    xm = xc.copy()
    xm[ns:] = 0.0  # every robot pose as measured
    system = BundleSystem(J, r, fun(xm)[:n_pix], n_pix, float(s_px), lv["sig"].copy())
    rms = float(np.sqrt(np.mean(e * e) * 2.0)) if e.size else float("nan")
    names = tuple(intrinsic_names(k0)[i] for i in free)
    return BundleFit(X=X, Y=Y, intrinsics=k, board_scale=b, cov=cov, intrinsic_names=names,
                     board_scale_data_std=data_std, twists=xi, rms_px=rms, n_iter=n_iter,
                     pixel_std=float(s_px), robot_rot_std_rad=float(lv["sig"][0]),
                     robot_trans_std_m=float(lv["sig"][3]), system=system)  # fmt: skip
