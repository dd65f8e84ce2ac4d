"""Hand-eye and robot-world from target corners: joint refinement on the pixel residuals.

Problem
-------
Views ``i = 1..N`` of a planar target give target points ``P_ij`` [m] and
their pixels ``m_ij`` [px]; the robot reports the flange pose
``A_i = T_base_ee`` at each view.  The chain from the target to the image is

* eye-in-hand (``X = T_ee_cam``, ``Y = T_base_target``):
  ``T_cam_target,i = inv(A_i X) Y``;
* eye-to-hand (``X = T_ee_target``, ``Y = T_base_cam``):
  ``T_cam_target,i = inv(Y) A_i X``.

The solver minimises

.. math::

    \\sum_{ij} \\rho\\left(\\lVert \\pi(k, T_{cam,target,i} P_{ij}) - m_{ij} \\rVert\\right)
    + \\sum_i \\lVert \\Sigma_A^{-1/2} \\delta_i \\rVert^2

over ``X``, ``Y``, the intrinsics ``k = (fx, fy, cx, cy, k1, k2, p1, p2, k3)``
(:mod:`kinhec.models.intrinsics`) and, optionally, a correction ``delta_i`` of each
robot pose (``A_i exp(delta_i)``, a right perturbation in the flange frame)
held by a Gaussian prior of standard deviations ``robot_prior_rot_rad`` and
``robot_prior_trans_m``.  ``rho`` is the Huber loss on each pixel coordinate.

Initialisation: the intrinsics and the per-view target poses by Zhang's
method (:func:`kinhec.models.intrinsics.calibrate_camera`), then ``X`` and ``Y`` by
the closed form of the registry's ``shah`` solver on ``A_i`` and the view
poses.  Poses are updated by right perturbations ``T exp(xi)``, twists
``xi = (omega, v)`` [rad, m], rotation first.

Uncertainty
-----------
The classical covariance is ``s^2 (J^T W J)^-1`` with ``s^2 = sum w r^2 /
(m - n)`` (the Huber weights ``W`` at the solution).  It assumes
independent pixel errors.  When the views disagree more than that allows --
a robot pose error moves every corner of its view together -- the
covariance is too optimistic; the view-clustered (sandwich) estimate
``H^-1 (sum_i g_i g_i^T) H^-1``, ``g_i = J_i^T W r_i`` the gradient of view
``i``, measures the scatter of the views instead (Liang and Zeger 1986).
Each reported standard deviation is the larger of the two: the classical
one, scaled up when the residuals say it is optimistic.  Pose standard
deviations are those of the right-perturbation twist ``(rx, ry, rz, tx, ty,
tz)`` [rad, m].

References
----------
Z. Zhang, *IEEE TPAMI* 22(11), 2000 (intrinsics).  M. Shah, "Solving the
robot-world/hand-eye calibration problem using the Kronecker product,"
*J. Mechanisms and Robotics* 5(3), 2013 (initial X, Y).  A. Tabb and K. M.
Ahmad Yousef, "Solving the robot-world hand-eye(s) calibration problem with
iterative methods," *Machine Vision and Applications* 28, 2017 (reprojection
cost).  K.-Y. Liang and S. L. Zeger, "Longitudinal data analysis using
generalized linear models," *Biometrika* 73(1), 1986 (clustered covariance).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError
from kinhec.models.intrinsics import (
    INTRINSIC_NAMES,
    CameraCalibration,
    PackedViews,
    calibrate_camera,
    camera_calibration,
    pack_views,
    pose_jacobians,
    project,
    residual_norms,
)
from kinhec.geometry.lsq import BlockJacobian, BlockStructure, huber_weights, levenberg_marquardt
from kinhec.solvers import _common as c
from kinhec.solvers.axyb_shah import shah_kernel
from kinhec.solvers.pair_model import adjoint

__all__ = ["CONFIGURATIONS", "POSE_PARAMETER_NAMES", "ReprojectionResult", "PixelViews", "solve_reprojection",
           "solve_pixel_views", "chain_poses", "chain_perturbations"]

CONFIGURATIONS = ("eye_in_hand", "eye_to_hand")
#: Components of a pose's right-perturbation twist, in the order of its covariance.
POSE_PARAMETER_NAMES = ("rx", "ry", "rz", "tx", "ty", "tz")
CITATION = (
    "Zhang, IEEE TPAMI 22(11), 2000 (intrinsics); Shah, J. Mechanisms Robotics 5(3), 2013 (init); "
    "Tabb & Ahmad Yousef, Machine Vision and Applications 28, 2017 (reprojection cost)"
)


def chain_poses(T_base_ee, X, Y, configuration: str) -> np.ndarray:
    """``T_cam_target`` (N, 4, 4) of every view from the flange poses and ``X``, ``Y`` (see the module doc)."""
    if configuration == "eye_in_hand":
        return se3.invert_transform(T_base_ee @ X, check=False) @ Y
    return se3.invert_transform(Y, check=False) @ T_base_ee @ X


def chain_perturbations(C, A, X, Y, configuration: str, Jr_X, Jr_Y, Jr_A=None):
    """How steps of ``X``'s, ``Y``'s and the flange poses' twists perturb every view's ``C`` (:func:`chain_poses`).

    Each unknown pose enters as ``T0 exp(x)``, so a step ``d`` of its twist ``x`` perturbs it on the right by
    ``J_r(x) d`` (``Jr_X``, ``Jr_Y`` (6, 6), ``Jr_A`` (N, 6, 6) or None: the right Jacobians of SE(3),
    :func:`kinhec.geometry.se3.se3_right_jacobian`).  ``C`` moves on the right by ``eps = E d``:
    ``C = inv(A X) Y`` (eye-in-hand): ``E_X = -Ad(inv C) J_r(x_X)``, ``E_Y = J_r(x_Y)``,
    ``E_A = -Ad(inv(Y) A) J_r(x_A)``; ``C = inv(Y) A X`` (eye-to-hand): ``E_X = J_r(x_X)``,
    ``E_Y = -Ad(inv C) J_r(x_Y)``, ``E_A = Ad(inv X) J_r(x_A)``.  ``C`` (N, 4, 4) and ``A`` (N, 4, 4) are the
    views' poses and the flange poses as the chain used them.

    Returns ``(E_X, E_Y, E_A)``, each (N, 6, 6) (``E_A`` None without ``Jr_A``).
    """
    n = C.shape[0]
    ad_ci = adjoint(se3.invert_transform(C, check=False))
    if configuration == "eye_in_hand":
        EX, EY = -ad_ci @ Jr_X, np.broadcast_to(Jr_Y, (n, 6, 6))
        EA = None if Jr_A is None else -adjoint(se3.invert_transform(Y, check=False) @ A) @ Jr_A
    else:
        EX, EY = np.broadcast_to(Jr_X, (n, 6, 6)), -ad_ci @ Jr_Y
        EA = None if Jr_A is None else adjoint(se3.invert_transform(X, check=False)) @ Jr_A
    return EX, EY, EA


@dataclass(frozen=True)
class ReprojectionResult:
    """Result of :func:`solve_reprojection`.

    Attributes
    ----------
    X, Y : ndarray, shape (4, 4)
        Hand-eye and robot-world transforms (see the module doc for their frames) [m].
    intrinsics : ndarray, shape (9,)
        ``(fx, fy, cx, cy, k1, k2, p1, p2, k3)``.
    T_base_ee : ndarray, shape (N, 4, 4)
        Flange poses used at the solution (refined when ``refine_robot``).
    sigma : dict of str to float
        Standard deviation of every estimated parameter by name: the
        intrinsics (``fx``, ...), ``X.rx`` ... ``X.tz``, ``Y.rx`` ... ``Y.tz``
        (right-perturbation twist, rad and m).
    sigma_scale : float
        Largest ratio of the reported to the classical standard deviation (1: not scaled).
    rms_px, mean_px : float
        RMS and mean Euclidean reprojection error [px] through the whole chain.
    init_rms_px : float
        RMS [px] of the per-view intrinsic calibration (free pose per view), the corner noise floor.
    n_views, n_points, n_iter : int
    """

    X: np.ndarray
    Y: np.ndarray
    intrinsics: np.ndarray
    T_base_ee: np.ndarray
    sigma: dict = field(default_factory=dict)
    sigma_scale: float = 1.0
    rms_px: float = float("nan")
    mean_px: float = float("nan")
    init_rms_px: float = float("nan")
    n_views: int = 0
    n_points: int = 0
    n_iter: int = 0


def solve_reprojection(points_3d, points_2d, T_base_ee, image_size, *, configuration: str = "eye_in_hand",
                       refine_robot: bool = False, robot_prior_rot_rad: float = 1e-3,
                       robot_prior_trans_m: float = 1e-3, loss: str = "huber", f_scale_px: float = 1.0,
                       fix_k3: bool = False, refine_intrinsics: bool = True,
                       intrinsics=None, camera: CameraCalibration | None = None) -> ReprojectionResult:  # fmt: skip
    """Hand-eye ``X``, robot-world ``Y`` and the intrinsics from target corners and flange poses.

    Parameters
    ----------
    points_3d : sequence of array_like, each shape (P_i, 3)
        Target points [m] in the target frame (planar: ``z = 0``) of view ``i``.
    points_2d : sequence of array_like, each shape (P_i, 2)
        Their pixels [px] (pixel centres at integers).
    T_base_ee : array_like, shape (N, 4, 4)
        Measured flange pose at each view (maps flange to base coordinates) [m].
    image_size : (int, int)
        ``(width, height)`` [px].
    configuration : {"eye_in_hand", "eye_to_hand"}
    refine_robot : bool
        Refine every robot pose within its prior (otherwise taken as measured).
    robot_prior_rot_rad, robot_prior_trans_m : float
        Prior standard deviations of the robot poses [rad, m].
    loss : {"huber", "linear"}
    f_scale_px : float
        Huber threshold [px].
    fix_k3 : bool
        Keep ``k3 = 0``.
    refine_intrinsics : bool
        Refine the intrinsics with ``X`` and ``Y`` (otherwise they stay those
        of the free-pose calibration of the views, and have no ``sigma``).
        With the robot poses as measured, a joint refinement lets the
        intrinsics absorb robot pose errors; holding them is then the
        better choice.
    intrinsics : array_like, shape (9,), optional
        Known intrinsics (no Zhang initialisation); refined only with ``refine_intrinsics``.
    camera : CameraCalibration, optional
        The result of :func:`kinhec.models.intrinsics.calibrate_camera` on the same
        views with the same ``fix_k3`` / ``intrinsics`` (it is computed when
        None); lets several solves of one observation set share it.

    Returns
    -------
    ReprojectionResult
    """
    if configuration not in CONFIGURATIONS:
        raise InputError(f"configuration: expected one of {', '.join(CONFIGURATIONS)}, got {configuration!r}")
    A = se3.check_transforms(T_base_ee, "T_base_ee")
    views = pack_views(points_3d, points_2d)
    if A.shape != (views.n_views, 4, 4):
        raise InputError(f"T_base_ee: expected shape ({views.n_views}, 4, 4) (one per view), got {A.shape}")
    for name, v in (("robot_prior_rot_rad", robot_prior_rot_rad), ("robot_prior_trans_m", robot_prior_trans_m)):
        if not (np.isfinite(v) and v > 0):
            raise InputError(f"{name}: expected a positive number, got {v!r}")

    cal = calibrate_camera(views, image_size, fix_k3=fix_k3, intrinsics=intrinsics) if camera is None else camera
    if cal.T_cam_target.shape != (views.n_views, 4, 4):
        raise InputError(f"camera: expected a calibration of these {views.n_views} views, got {cal.T_cam_target.shape[0]}")
    B = se3.invert_transform(cal.T_cam_target, check=False) if configuration == "eye_in_hand" else cal.T_cam_target
    A_chk, B_chk = c.check_pairs(A, B)
    X0, Y0 = shah_kernel(A_chk, B_chk)
    return _refine(views, A, X0, Y0, cal.intrinsics, cal.rms_px, configuration, refine_robot,
                   robot_prior_rot_rad, robot_prior_trans_m, loss, f_scale_px, fix_k3, refine_intrinsics)  # fmt: skip


def _scaled_pinv(H: np.ndarray) -> np.ndarray:
    """Pseudo-inverse of a symmetric information matrix ``(n, n)``, taken on its unit-diagonal scaling.

    Intrinsics [px], rotations [rad] and translations [m] give ``H`` a
    diagonal over many decades (condition about 1e14 on the synthetic suite
    entries): inverted as it is, its smallest singular values sit near the
    cut-off of ``pinv``, and the standard deviations moved in their fourth
    digit with the BLAS kernel.  Scaled to unit diagonal, the condition is
    that of the correlations (about 1e6).
    """
    dg = np.diag(H)
    d = np.sqrt(np.where(dg > 0, dg, 1.0))
    return np.linalg.pinv(H / np.outer(d, d), hermitian=True) / np.outer(d, d)


def _refine(views: PackedViews, A, X0, Y0, k0, init_rms, configuration, refine_robot, prior_rot, prior_trans, loss,
            f_scale, fix_k3, refine_intrinsics) -> ReprojectionResult:  # fmt: skip
    N = views.n_views
    n_int = (8 if fix_k3 else 9) if refine_intrinsics else 0
    n_shared = n_int + 12
    obs = views.points_2d[views.mask]
    sig = np.array([prior_rot] * 3 + [prior_trans] * 3)

    def unpack(x):
        k = np.array(k0, dtype=np.float64)
        k[:n_int] = x[:n_int]
        X = X0 @ se3.se3_exp_unchecked(x[n_int : n_int + 6])
        Y = Y0 @ se3.se3_exp_unchecked(x[n_int + 6 : n_int + 12])
        Ab = A @ se3.se3_exp_unchecked(x[n_shared:].reshape(N, 6)) if refine_robot else A
        return k, X, Y, Ab

    def fun(x):
        k, X, Y, Ab = unpack(x)
        r = (project(k, chain_poses(Ab, X, Y, configuration), views.points_3d)[views.mask] - obs).ravel()
        if refine_robot:
            r = np.concatenate([r, (x[n_shared:].reshape(N, 6) / sig).ravel()])
        return r

    view_of_point = np.broadcast_to(np.arange(N)[:, None], views.mask.shape)[views.mask]
    row_view = np.repeat(view_of_point, 2)
    n_pix = row_view.size
    if refine_robot:
        row_view = np.concatenate([row_view, np.repeat(np.arange(N), 6)])
        structure = BlockStructure(n_shared, N, 6, row_view)
    else:
        structure = BlockStructure(n_shared, 0, 6, np.full(n_pix, -1))
    pts = views.points_3d[views.mask]
    rows = np.flatnonzero(structure.row_view >= 0)  # (none without the flange twists)

    def jac(x):
        """The analytic Jacobian: each pixel by the intrinsics and through its view's ``C`` by the poses' twists."""
        k, X, Y, Ab = unpack(x)
        C = chain_poses(Ab, X, Y, configuration)
        v = view_of_point
        Jk, G, _ = pose_jacobians(k, C[v, :3, :3], C[v, :3, 3], pts)
        xi = x[n_shared:].reshape(N, 6) if refine_robot else np.zeros((0, 6))
        Jr = se3.se3_right_jacobian(np.concatenate([x[n_int:n_shared].reshape(2, 6), xi]))
        EX, EY, EA = chain_perturbations(C, Ab, X, Y, configuration, Jr[0], Jr[1], Jr[2:] if refine_robot else None)
        shared = np.zeros((row_view.size, n_shared))
        shared[:n_pix, :n_int] = Jk[:, :, :n_int].reshape(n_pix, n_int)
        shared[:n_pix, n_int : n_int + 6] = (G @ EX[v]).reshape(n_pix, 6)
        shared[:n_pix, n_int + 6 : n_shared] = (G @ EY[v]).reshape(n_pix, 6)
        blocks = np.empty((rows.size, 6))
        if refine_robot:
            blocks[:n_pix] = (G @ EA[v]).reshape(n_pix, 6)
            blocks[n_pix:] = np.tile(np.diag(1.0 / sig), (N, 1))
        return BlockJacobian(shared, blocks, rows, structure)

    x0 = np.zeros(structure.n_params)
    x0[:n_int] = k0[:n_int]
    res = levenberg_marquardt(fun, x0, structure, n_robust=n_pix, loss=loss, f_scale=f_scale, tol=1e-12, jac=jac)
    k, X, Y, Ab = unpack(res.x)
    d = residual_norms(project(k, chain_poses(Ab, X, Y, configuration), views.points_3d), views)

    # covariance: classical and view-clustered, with X and Y re-centred (perturbations at the solution)
    X0, Y0 = X, Y
    xc = res.x.copy()
    xc[n_int:n_shared] = 0.0
    r = fun(xc)
    J = jac(xc).csr()
    w = np.ones(r.size)
    if loss == "huber":
        w[:n_pix] = huber_weights(r[:n_pix], f_scale)
    Jw = J.multiply(w[:, None]).tocsr()
    H = (J.T @ Jw).toarray()
    Hinv = _scaled_pinv(H)
    m, n = n_pix, structure.n_params - (N * 6 if refine_robot else 0)
    s2 = float((w[:n_pix] * r[:n_pix] ** 2).sum() / max(m - n, 1))
    cov0 = s2 * Hinv
    g = Jw.multiply(r[:, None]).tocsr()  # per-residual gradient contributions
    rv = np.where(row_view >= 0, row_view, 0)
    G = np.zeros((N, structure.n_params))
    coo = g.tocoo()
    np.add.at(G, (rv[coo.row], coo.col), coo.data)
    meat = G.T @ G
    cov_c = Hinv @ meat @ Hinv
    v0 = np.diag(cov0)[:n_shared]
    vc = np.diag(cov_c)[:n_shared]
    var = np.maximum(v0, vc)
    names = list(INTRINSIC_NAMES[:n_int]) + [f"X.{p}" for p in POSE_PARAMETER_NAMES] + [
        f"Y.{p}" for p in POSE_PARAMETER_NAMES
    ]
    sigma = {nm: float(np.sqrt(v)) for nm, v in zip(names, var)}
    ratio = np.sqrt(var / np.maximum(v0, 1e-300))
    return ReprojectionResult(
        X=X, Y=Y, intrinsics=k, T_base_ee=Ab, sigma=sigma, sigma_scale=float(ratio.max()),
        rms_px=float(np.sqrt(np.mean(d * d))), mean_px=float(d.mean()), init_rms_px=float(init_rms), n_views=N,
        n_points=views.n_points, n_iter=res.n_iter,
    )  # fmt: skip


@dataclass(frozen=True)
class PixelViews:
    """Pixel observations of one sequence, the input of the registry's pixel solvers.

    Attributes
    ----------
    points_3d, points_2d : list of ndarray, (P_i, 3) [m] and (P_i, 2) [px]
        Target points and their pixels per view.
    image_size : (int, int)
        ``(width, height)`` [px].
    configuration : {"eye_in_hand", "eye_to_hand"}
    intrinsics : ndarray, shape (9,), optional
        Known intrinsics (held fixed), e.g. a benchmark camera preset's; None: estimated.  ``he_ml``'s pixel
        stage also takes a fisheye's 8 or the rational model's 12 (:mod:`kinhec.models.intrinsics`).
    view_poses : ndarray, shape (N, 4, 4), optional
        With known intrinsics: each view's ``T_cam_target`` from a PnP on these
        pixels with these intrinsics (a benchmark sequence's measured poses).
        They replace the free-pose fit of the views, which would find them
        again; the solve still ends on the pixel residuals.
    """

    points_3d: list
    points_2d: list
    image_size: tuple
    configuration: str
    intrinsics: np.ndarray | None = None
    view_poses: np.ndarray | None = None


def solve_pixel_views(T_base_ee, views: PixelViews) -> ReprojectionResult:
    """:func:`solve_reprojection` on a :class:`PixelViews` (robot poses as measured, Huber 1.5 px)."""
    if not isinstance(views, PixelViews):
        raise InputError(f"views: expected a PixelViews, got {type(views).__name__}")
    known = views.intrinsics is not None
    camera = None
    if known and views.view_poses is not None:
        k = np.asarray(views.intrinsics, dtype=np.float64)
        T = se3.check_transforms(views.view_poses, "view_poses")
        packed = pack_views(views.points_3d, views.points_2d)
        if T.shape != (packed.n_views, 4, 4):
            raise InputError(f"view_poses: expected shape ({packed.n_views}, 4, 4) (one per view), got {T.shape}")
        camera = camera_calibration(packed, k, T)
    return solve_reprojection(views.points_3d, views.points_2d, T_base_ee, views.image_size,
                              configuration=views.configuration, loss="huber", f_scale_px=1.5,
                              refine_intrinsics=not known, intrinsics=views.intrinsics, camera=camera)  # fmt: skip
