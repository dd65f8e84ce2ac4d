"""Systematic camera errors: a board of another size than stated, intrinsics that are off.

A pose pipeline (detector + PnP) turns pixels into ``T_cam_target`` with the
board geometry and the intrinsics it is given.  When those are wrong the poses
are wrong in the same way in every frame -- a bias, not noise:

board scale
    The printed board is ``k`` times the size stated (a printer scales, a
    square is measured wrongly).  The pixels of the true board ``k P`` are those
    of the stated board ``P`` at the translation ``t / k``
    (``pi(R k P + t) = pi(k (R P + t / k))``), so PnP returns every
    translation divided by ``k`` and the rotations unchanged, exactly
    (:func:`apply_board_scale`).
intrinsics
    PnP with a focal length ``f (1 + e)`` and a principal point shifted by
    ``(dcx, dcy)`` [px].  To first order the pose is rotated about the camera
    centre by ``(dcy / f, -dcx / f)`` about the camera's x and y axes and its
    depth stretched by ``1 + e``; :func:`intrinsics_bias` computes the exact
    effect per frame by running PnP with the wrong camera on the noise-free
    pixels of the true pose.

These are the errors a calibration's error bars have to count when the data
cannot tell them apart from ``X`` (a rotation of the camera frame is absorbed
by ``X`` eye-in-hand, by ``Y`` eye-to-hand) or only partly (the board scale
is observable through the robot's translations).

Conventions: ``T_cam_target`` (N, 4, 4) [m]; a bias ``D`` acts on the left,
``T_biased = D T`` (a transform of the camera frame).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from kinhec.geometry import se3
from kinhec.models.cameras import as_camera, as_target, project_points
from kinhec.util.errors import InputError

__all__ = ["apply_board_scale", "intrinsics_bias", "biased_camera"]


def apply_board_scale(T_cam_target: np.ndarray, board_scale: float) -> np.ndarray:
    """Poses PnP gives on a board ``board_scale`` times the size it is told: translations divided by it.

    Parameters
    ----------
    T_cam_target : ndarray, shape (N, 4, 4)
        Poses measured with the true board geometry [m] (NaN rows pass through).
    board_scale : float
        True size over stated size (> 0), e.g. 1.005 for a board printed 0.5 % large.
    """
    k = float(board_scale)
    if not (np.isfinite(k) and k > 0):
        raise InputError(f"board_scale: expected a positive number, got {board_scale!r}")
    out = np.array(T_cam_target, dtype=np.float64, copy=True)
    out[..., :3, 3] /= k
    return out


def biased_camera(camera, f_scale: float, dc_px) -> object:
    """The camera preset with its focal length times ``f_scale`` and its principal point moved by ``dc_px``."""
    cam = as_camera(camera)
    dc = np.asarray(dc_px, dtype=np.float64).reshape(2)
    if not (np.isfinite(f_scale) and f_scale > 0 and np.isfinite(dc).all()):
        raise InputError(f"intrinsics error: expected f_scale > 0 and a finite (dcx, dcy), got {f_scale!r}, {dc_px!r}")
    return replace(cam, name=f"{cam.name}_biased", f_px=cam.f_px * float(f_scale), cx_px=cam.cx_px + float(dc[0]),
                   cy_px=cam.cy_px + float(dc[1]))  # fmt: skip


def intrinsics_bias(camera, target, T_cam_target_gt, f_scale: float, dc_px) -> np.ndarray:
    """Left biases ``D`` (N, 4, 4) such that PnP with off intrinsics returns ``D T`` for a true pose ``T``.

    Parameters
    ----------
    camera : CameraPreset or str
        The true camera.
    target : TargetPreset or str
        The board (all its points are used, as a detector seeing the whole board would).
    T_cam_target_gt : ndarray, shape (N, 4, 4)
        True poses [m]; rows with NaN, and poses with fewer than 3 board points in front of the camera, give
        NaN biases.
    f_scale : float
        Focal length used by PnP over the true one (e.g. 1.003).
    dc_px : (float, float)
        Principal point used by PnP minus the true one [px].

    Returns
    -------
    ndarray, shape (N, 4, 4)
        ``T_pnp inv(T_gt)`` per frame: the noise-free PnP pose with the off
        intrinsics, relative to the truth, in the camera frame.
    """
    from kinhec.models.pnp import solve_pnp

    cam, tgt = as_camera(camera), as_target(target)
    T = np.asarray(T_cam_target_gt, dtype=np.float64)
    ok = np.isfinite(T).all(axis=(1, 2))
    D = np.full(T.shape, np.nan)
    if not ok.any():
        return D
    pts = tgt.points_m
    uv, _ = project_points(cam, T[ok], pts)
    wrong = biased_camera(cam, f_scale, dc_px)
    # start from the first-order guess (rotation by the principal-point shift, depth stretched)
    dc = np.asarray(dc_px, dtype=np.float64)
    R0 = se3.so3_exp(np.array([dc[1], -dc[0], 0.0]) / wrong.f_px)
    T0 = T[ok].copy()
    T0[:, :3, :3] = R0 @ T0[:, :3, :3]
    T0[:, :3, 3] = (T0[:, :3, 3] @ R0.T) * np.array([1.0, 1.0, float(f_scale)])
    seen = np.isfinite(uv).all(axis=-1)  # points in front of the camera
    res = solve_pnp(wrong, pts, np.where(seen[..., None], uv, 0.0), T0, mask=seen)
    D[ok] = res.T_cam_target @ se3.invert_transform(T[ok], check=False)
    return D
