"""A generated recording whose mount moves part-way: a knock (a step) or a slow drift of ``X`` or ``Y``.

``with_mount_change(seq, start=k, dX=..., dY=...)`` takes a sequence made by
:func:`kinhec.synth.generator.simulate` and returns its measured eye poses as they would have been had ``X``
(``T_ee_cam`` eye-in-hand: a camera knocked on the flange; ``T_ee_marker`` eye-to-hand) or ``Y``
(``T_base_target``: the target moved; ``T_base_cam``) changed from camera frame ``start`` on.  The change is
a 6-vector in the calibration's perturbation convention: ``R exp(phi)`` (rotation [rad] about the transform's
own axes, right perturbation), then ``t + d`` (translation [m] in its parent frame).  With ``ramp_frames`` the
change grows linearly over that many frames (a slow drift), else it is a step.

The measurement noise of every frame is kept as drawn: the camera's translation error (camera frame) and
rotation error (target frame, right) are carried over to the changed true pose, so a recording with and
without the change differ only by the change.  Only pose-noise camera models are supported (not ``pnp``,
whose noise lives in the pixels).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError

__all__ = ["MountChange", "with_mount_change", "perturb"]


def perturb(T: np.ndarray, d) -> np.ndarray:
    """``T`` with rotation ``R exp(d[:3])`` and translation ``t + d[3:]`` (the calibration's perturbation)."""
    return se3.retract(T, d)


@dataclass
class MountChange:
    """A recording with a changed mount: the measured eye poses and the true ``X``, ``Y`` of every camera frame."""

    T_cam_target_meas: np.ndarray  # (N, 4, 4) (T_cam_marker eye-to-hand), NaN where the original has none
    X_per_frame: np.ndarray  # (N, 4, 4)
    Y_per_frame: np.ndarray  # (N, 4, 4)
    fraction: np.ndarray  # (N,) share of the full change at each frame (0 before start, 1 after the ramp)


def with_mount_change(seq, *, start: int, dX=None, dY=None, ramp_frames: int = 0) -> MountChange:
    """The measured eye poses of ``seq`` with ``X`` and/or ``Y`` changed from camera frame ``start`` on.

    Parameters
    ----------
    seq : kinhec.synth.generator.GeneratedSequence
    start : int
        First camera frame with the changed mount.
    dX, dY : array_like, shape (6,), optional
        The change of ``X`` and of ``Y``: rotation [rad], translation [m] (see the module documentation).
    ramp_frames : int
        0 for a step; else the change grows linearly over this many frames from ``start``.
    """
    if seq.recipe.camera_noise_model == "pnp":
        raise InputError("with_mount_change: expected a pose-noise camera model, got 'pnp'")
    n = seq.T_cam_target_gt.shape[0]
    if not 0 <= start <= n:
        raise InputError(f"start: expected a camera frame in [0, {n}], got {start}")
    dX = np.zeros(6) if dX is None else np.asarray(dX, dtype=float)
    dY = np.zeros(6) if dY is None else np.asarray(dY, dtype=float)
    k = np.arange(n)
    if ramp_frames > 0:
        frac = np.clip((k - start + 1) / ramp_frames, 0.0, 1.0)
    else:
        frac = (k >= start).astype(float)
    eye_to_hand = seq.recipe.configuration == "eye_to_hand"
    X, Y = seq.X, seq.Y
    T_gt, T_meas = seq.T_cam_target_gt, seq.T_cam_target_meas
    out = np.array(T_meas, copy=True)
    Xs = np.repeat(X[None], n, axis=0)
    Ys = np.repeat(Y[None], n, axis=0)
    iX, iY = se3.invert_transform(X, check=False), se3.invert_transform(Y, check=False)
    for i in np.flatnonzero(frac > 0):
        Xi, Yi = perturb(X, frac[i] * dX), perturb(Y, frac[i] * dY)
        Xs[i], Ys[i] = Xi, Yi
        if eye_to_hand:  # T_cam_marker = inv(Y) A X
            G = se3.invert_transform(Yi, check=False) @ Y @ T_gt[i] @ iX @ Xi
        else:  # T_cam_target = inv(X) inv(A) Y
            G = se3.invert_transform(Xi, check=False) @ X @ T_gt[i] @ iY @ Yi
        if not np.all(np.isfinite(T_meas[i])):
            continue
        M = np.eye(4)
        M[:3, :3] = G[:3, :3] @ T_gt[i][:3, :3].T @ T_meas[i][:3, :3]  # rotation error kept (target frame)
        M[:3, 3] = G[:3, 3] + (T_meas[i][:3, 3] - T_gt[i][:3, 3])  # translation error kept (camera frame)
        out[i] = M
    return MountChange(T_cam_target_meas=out, X_per_frame=Xs, Y_per_frame=Ys, fraction=frac)
