"""Measurements of a plan's poses under the generator's noise models, to try a plan before the robot moves.

For true ``X`` and ``Y`` (a :class:`~kinhec.planner.candidates.Scene` with the
truth in it) and flange poses ``T_base_ee``, the camera sees
``C = T_cam_target`` and reports it with the camera model of
:class:`~kinhec.planner.model.PlannerNoise` (``pnp``: pixel noise on the target
points, then PnP, :func:`kinhec.models.pnp.simulate_pnp`; ``se3_gaussian``:
:func:`kinhec.models.noise.camera_se3_gaussian`), and the robot reports its flange
pose with flange-frame twist noise (:func:`kinhec.models.noise.robot_se3_gaussian`).
The result is what an ``A X = Y B`` solver takes: ``A = T_base_ee`` and
``B = inv(T_cam_target)`` (eye-in-hand) or ``T_cam_target`` (eye-to-hand).
"""

from __future__ import annotations

import copy

import numpy as np

from kinhec.geometry import se3
from kinhec.models.cameras import VISIBILITY_MARGIN_PX, inside_image, pinhole_pixels, to_camera
from kinhec.models.noise import camera_se3_gaussian, robot_se3_gaussian
from kinhec.planner.candidates import Scene
from kinhec.planner.model import PlannerNoise
from kinhec.models.pnp import simulate_pnp

__all__ = ["simulate_measurements"]


def simulate_measurements(scene: Scene, T_base_ee: np.ndarray, noise: PlannerNoise, rng: np.random.Generator,
                          pixels: bool = False):  # fmt: skip
    """Noisy ``A`` and ``B`` ``(N, 4, 4)`` of flange poses ``T_base_ee`` ``(N, 4, 4)`` in the true ``scene``.

    Returns
    -------
    A_meas, B_meas : ndarray, shape (N, 4, 4)
        Reported flange poses and camera poses in the solver's convention; rows whose target is not
        detected (``pnp``: fewer points in the image than PnP needs) are NaN.
    points : (list, list), only with ``pixels`` (``pnp``)
        Per row the target points [m] and the noisy pixels [px] the PnP pose came from (those in the image):
        the very draws of the PnP, so a solver on the pixels sees the same measurement as one on the poses.
    """
    C = scene.observed(T_base_ee)
    views = None
    if noise.camera_model == "pnp":
        if pixels:
            # the pixels simulate_pnp draws, drawn again from a copy of the generator in the same order
            twin = copy.deepcopy(rng)
            pts = scene.target.points_m
            uv_true, depth = pinhole_pixels(scene.camera, to_camera(C, pts))
            inside = inside_image(scene.camera, uv_true, depth, VISIBILITY_MARGIN_PX)
            uv = uv_true + noise.pixel_std_px * twin.standard_normal((C.shape[0], pts.shape[0], 2))
            views = ([pts[m] for m in inside], [u[m] for u, m in zip(uv, inside)])
        C_meas = simulate_pnp(scene.camera, scene.target, C, noise.pixel_std_px, rng,
                              available=np.ones(C.shape[0], dtype=bool)).T_cam_target  # fmt: skip
    else:
        C_meas = camera_se3_gaussian(C, noise.camera_rot_std_rad, noise.camera_trans_std_xy_m,
                                     noise.camera_trans_std_z_m, rng)  # fmt: skip
    A = robot_se3_gaussian(T_base_ee, noise.robot_rot_std_rad, noise.robot_trans_std_m, rng)
    ok = np.isfinite(C_meas).all(axis=(1, 2))
    B = np.full_like(C_meas, np.nan)
    if scene.configuration == "eye_in_hand":
        B[ok] = se3.invert_transform(C_meas[ok], check=False)
    else:
        B[ok] = C_meas[ok]
    A[~ok] = np.nan
    return (A, B, views) if pixels else (A, B)
