"""What one pose tells about ``X``: the noise model of the planner and the Fisher information of a pose.

The measurement model is the generator's (:mod:`kinhec.models.noise`), linearised as in
:mod:`kinhec.solvers.pair_model` and :mod:`kinhec.evaluate.bounds`: each pose ``i`` gives a
camera measurement ``C_i = T_cam_target`` whose error ``rho_i`` (right twist,
target frame) has the covariance

    Sigma_i = Sigma_cam(C_i) + G_i diag(s_rot^2 I, s_trans^2 I) G_i^T

(camera noise, plus the robot's flange-frame twist noise carried by ``G_i``), and
whose Jacobian with respect to right perturbations of ``X`` and ``Y`` is ``J_i``
(:func:`kinhec.solvers.pair_model.pair_jacobians`).  Its Fisher information is
``F_i = J_i^T Sigma_i^-1 J_i`` (12 x 12, order ``(dx, dy)``, rotation first, rad
and m), and the information of a set of poses is the sum.

Camera noise is either ``pnp`` (pixel noise of every target point carried
through the PnP Jacobian, which depends on the distance and the angle of view:
what a real detector does) or ``se3_gaussian`` (the generator's named levels
``c0`` .. ``c5``: target-frame rotation and camera-frame translation noise of
fixed size).  Robot noise is a named level ``r0`` .. ``r4``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kinhec.evaluate.bounds import inverse_information, pnp_covariance
from kinhec.util.errors import InputError
from kinhec.models.noise import CAMERA_LEVELS, ROBOT_LEVELS, camera_level, robot_level
from kinhec.solvers import pair_model as pm
from kinhec.util.errors import UnknownNameError

__all__ = ["CAMERA_MODELS", "DEFAULT_PIXEL_STD", "DEFAULT_ROBOT_LEVEL", "PlannerNoise", "noise_model",
           "pose_information", "sigma_curve", "x_translation_variance"]  # fmt: skip

#: Camera noise models the planner knows.
CAMERA_MODELS = ("pnp", "se3_gaussian")
#: Default pixel noise [px] of the ``pnp`` camera model (a sub-pixel corner detector).
DEFAULT_PIXEL_STD = 0.5
#: Default robot noise level (flange twist 0.2 mrad, 0.1 mm: a calibrated industrial or collaborative arm).
DEFAULT_ROBOT_LEVEL = "r1"


@dataclass(frozen=True)
class PlannerNoise:
    """The measurement noise the plan is made for.

    Attributes
    ----------
    camera_model : {"pnp", "se3_gaussian"}
    pixel_std_px : float
        Pixel noise [px] (``pnp``).
    camera_rot_std_rad, camera_trans_std_xy_m, camera_trans_std_z_m : float
        ``se3_gaussian`` camera noise: rotation [rad] per target-frame axis, translation [m] along camera
        x, y and z (optical axis).
    robot_rot_std_rad, robot_trans_std_m : float
        Flange-frame twist noise of the robot [rad, m].
    """

    camera_model: str = "pnp"
    pixel_std_px: float = DEFAULT_PIXEL_STD
    camera_rot_std_rad: float = 0.0
    camera_trans_std_xy_m: float = 0.0
    camera_trans_std_z_m: float = 0.0
    robot_rot_std_rad: float = ROBOT_LEVELS[DEFAULT_ROBOT_LEVEL][0]
    robot_trans_std_m: float = ROBOT_LEVELS[DEFAULT_ROBOT_LEVEL][1]

    def __post_init__(self) -> None:
        if self.camera_model not in CAMERA_MODELS:
            raise InputError(f"camera noise model: expected one of {', '.join(CAMERA_MODELS)}, got {self.camera_model!r}")
        for name in ("pixel_std_px", "camera_rot_std_rad", "camera_trans_std_xy_m", "camera_trans_std_z_m",
                     "robot_rot_std_rad", "robot_trans_std_m"):  # fmt: skip
            v = getattr(self, name)
            if not isinstance(v, (int, float, np.floating, np.integer)) or not np.isfinite(v) or v < 0:
                raise InputError(f"{name}: expected a finite number >= 0, got {v!r}")
        cam = (self.pixel_std_px,) if self.camera_model == "pnp" else (
            self.camera_rot_std_rad, self.camera_trans_std_xy_m, self.camera_trans_std_z_m)
        if not any(v > 0 for v in cam):
            raise InputError(f"camera noise: expected a positive noise level for {self.camera_model!r}, got zero "
                             "(a noise-free camera makes every plan perfect)")  # fmt: skip

    def to_dict(self) -> dict:
        """JSON-ready description (only the fields of the camera model in use)."""
        d = {"camera_model": self.camera_model}
        if self.camera_model == "pnp":
            d["pixel_std_px"] = float(self.pixel_std_px)
        else:
            d.update(camera_rot_std_rad=float(self.camera_rot_std_rad),
                     camera_trans_std_xy_m=float(self.camera_trans_std_xy_m),
                     camera_trans_std_z_m=float(self.camera_trans_std_z_m))  # fmt: skip
        d.update(robot_rot_std_rad=float(self.robot_rot_std_rad), robot_trans_std_m=float(self.robot_trans_std_m))
        return d


def noise_model(camera: str = "pnp", robot: str = DEFAULT_ROBOT_LEVEL, *, pixel_std: float = DEFAULT_PIXEL_STD) -> PlannerNoise:
    """A :class:`PlannerNoise` from names: ``camera`` is ``"pnp"`` or a camera level ``c0`` .. ``c5``, ``robot`` a
    robot level ``r0`` .. ``r4`` (:mod:`kinhec.models.noise`).

    Raises
    ------
    UnknownNameError
        An unknown level name (the message lists the valid ones).
    """
    rr, rt = robot_level(robot)
    if camera == "pnp":
        return PlannerNoise("pnp", float(pixel_std), robot_rot_std_rad=rr, robot_trans_std_m=rt)
    if camera not in CAMERA_LEVELS:
        raise UnknownNameError("camera noise", camera, ("pnp",) + tuple(CAMERA_LEVELS))
    cr, cx, _, cz = camera_level(camera)
    return PlannerNoise("se3_gaussian", 0.0, cr, cx, cz, rr, rt)


def camera_covariance(C: np.ndarray, noise: PlannerNoise, camera, target) -> np.ndarray:
    """Covariance ``(N, 6, 6)`` of the camera error ``rho`` at the poses ``C = T_cam_target`` ``(N, 4, 4)``.

    ``pnp`` counts the target points inside the image (at least three must be, else the covariance is singular).
    """
    if noise.camera_model == "se3_gaussian":
        return pm.camera_covariance(C, noise.camera_rot_std_rad, noise.camera_trans_std_xy_m, noise.camera_trans_std_z_m)
    return pnp_covariance(C, camera, target, noise.pixel_std_px)


def robot_flange_covariance(n: int, noise: PlannerNoise) -> np.ndarray:
    """Flange-frame twist covariance ``(n, 6, 6)`` of the robot noise."""
    d = np.array([noise.robot_rot_std_rad**2] * 3 + [noise.robot_trans_std_m**2] * 3)
    return np.broadcast_to(np.diag(d), (n, 6, 6)).copy()


def pose_information(C: np.ndarray, X: np.ndarray, configuration: str, noise: PlannerNoise, camera, target) -> np.ndarray:
    """Fisher information ``(N, 12, 12)`` of each pose about the right perturbations ``(dx, dy)`` of ``X`` and ``Y``.

    Parameters
    ----------
    C : ndarray, shape (N, 4, 4)
        Predicted ``T_cam_target`` of the poses.
    X : ndarray, shape (4, 4)
        ``T_ee_cam`` (eye-in-hand) or ``T_ee_marker`` (eye-to-hand).
    configuration : {"eye_in_hand", "eye_to_hand"}
    noise : PlannerNoise
    camera, target : preset or name

    Returns
    -------
    ndarray, shape (N, 12, 12)
        ``J_i^T Sigma_i^-1 J_i`` [1/rad^2, 1/(rad m), 1/m^2].
    """
    J, G = pm.pair_jacobians(C, X, configuration)
    S = camera_covariance(C, noise, camera, target)
    S = S + pm.robot_covariance(G, noise.robot_rot_std_rad, noise.robot_trans_std_m)
    S += 1e-18 * np.eye(6)  # as in kinhec.evaluate.bounds: a noise-free component stays invertible
    W = pm.inverse_cholesky(S) @ J  # whitened Jacobians
    return np.swapaxes(W, -1, -2) @ W


def x_translation_variance(F: np.ndarray, criterion: str = "trace") -> np.ndarray:
    """The design criterion of information matrices ``F`` ``(..., 12, 12)``: the ``X`` translation block of ``inv(F)``.

    ``"trace"``: ``E|v|^2`` [m^2], the mean squared translation error of ``X`` (``Y`` unknown); ``"max_eig"``: its
    largest eigenvalue [m^2], the variance along the worst direction.  ``inf`` where ``F`` is singular.
    """
    E = np.zeros((12, 3))
    E[3:6] = np.eye(3)
    try:
        Z = np.linalg.solve(F, np.broadcast_to(E, F.shape[:-2] + (12, 3)))
    except np.linalg.LinAlgError:
        return np.full(F.shape[:-2], np.inf)
    block = Z[..., 3:6, :]
    if criterion == "trace":
        out = np.einsum("...ii->...", block)
    else:
        out = np.linalg.eigvalsh(0.5 * (block + np.swapaxes(block, -1, -2)))[..., -1]
    return np.where(np.isfinite(out) & (out > 0), out, np.inf)


def sigma_curve(info: np.ndarray, F_before: np.ndarray | None = None) -> dict:
    """Predicted errors of ``X`` after each pose of a sequence: the Cramér-Rao bound of every prefix.

    Parameters
    ----------
    info : ndarray, shape (K, 12, 12)
        Information of the poses, in the order they are taken.
    F_before : ndarray, shape (12, 12), optional
        Information of poses taken before (no prior).

    Returns
    -------
    dict
        ``trans_rms_mm`` and ``rot_rms_deg`` (K,): square roots of the traces of the translation and rotation
        blocks of ``X`` in the pseudo-inverse of the summed information (the RMS errors of an efficient
        estimator); ``inf`` while the poses leave that part of ``X`` undetermined (the rule of
        :func:`kinhec.evaluate.bounds.bound_from_pairs`).
    """
    F = np.zeros((12, 12)) if F_before is None else F_before.copy()
    t, r = [], []
    for k in range(info.shape[0]):
        F = F + info[k]
        cov, unidentified = inverse_information(F)
        r.append(math.inf if unidentified[0] else math.degrees(math.sqrt(max(np.trace(cov[:3, :3]), 0.0))))
        t.append(math.inf if unidentified[1] else 1000.0 * math.sqrt(max(np.trace(cov[3:6, 3:6]), 0.0)))
    return {"trans_rms_mm": np.asarray(t), "rot_rms_deg": np.asarray(r)}
