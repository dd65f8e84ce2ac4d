"""The systematic error that intrinsics leave in camera poses, as a nuisance of the pose path.

An eye stream computed by PnP inherits the errors of the intrinsics it was
computed with (:mod:`kinhec.camera_bias` simulates them).  To first order,
for a target at ``t = (x, y, z)`` in the camera:

* a principal point off by ``(dcx, dcy)`` [px] turns the camera frame by
  ``(dcy, -dcx) / f`` about its x and y axes, or shifts the target laterally
  by ``z (-dcx, -dcy) / f`` -- PnP splits the effect between the two, by the
  target's size and tilt;
* a focal length off by a fraction ``e`` stretches every depth: ``z (1 + e)``.

The pose path cannot see these well (a rotation of the camera frame is
absorbed by ``X`` eye-in-hand, by ``Y`` eye-to-hand; the rest is a pattern
over the views that a five-parameter model describes only roughly), but
they move ``X`` by as much as the noise of a good recording does.  They are
therefore counted as a *consider* covariance (Schmidt's consider parameters):
six parameters ``theta = (rho_x, rho_y, a_x, a_y, e, e')`` of a correction
of every measured camera pose ``T_cam_target``

    t' = R0 t + z (a_x, a_y, e + e'),    R' = Q R0 R,    R0 = exp([rho_x, rho_y, 0])

where ``Q`` turns the line of sight ``R0 t`` onto ``R0 t + z (0, 0, e')``.
PnP answers a focal length that is off either way: a large board's
perspective pins its orientation (the depth stretches, ``e``), a small
marker keeps its appearance from the new line of sight and turns with it
(``e'``: a focal length 0.3 % off turns a marker seen 30 deg off axis by
about 1.6 mrad).  Both are counted, each with the focal length's prior --
conservative where one of them dominates.

with the prior ``rho, a ~ N(0, ROT_STD^2)``, ``e ~ N(0, FOCAL_STD^2)``
(:data:`ROT_STD`, 1 mrad: a principal point known to about 1 px at a focal
length of 1000 px; :data:`FOCAL_STD`, 0.3 %: what a careful camera
calibration achieves) are not estimated -- the data would trade them against
the unknowns where the model is only approximate -- but their effect on the
estimate, ``S = -H^-1 J^T W J_theta``, adds ``S diag(prior^2) S^T`` to its
covariance.  The board's size, which the robot's translations do determine,
is the scale of :mod:`kinhec.calibrate.scale`, estimated.

It applies to eye streams measured by a camera against a target (eye-in-hand
and eye-to-hand setups, metric); not to a rig of mocap bodies or a monocular
stream, whose errors are of another kind.
"""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3

__all__ = ["ROT_STD", "FOCAL_STD", "N_PARAMS", "prior_std", "correct", "describe", "note"]

#: Prior standard deviation of the camera-frame rotation and of the lateral shift per metre of depth [rad].
ROT_STD = 1e-3
#: Prior standard deviation of the depth stretch (relative focal length error).
FOCAL_STD = 0.003
#: Number of parameters ``(rho_x, rho_y, a_x, a_y, e, e_turn)``.
N_PARAMS = 6


def prior_std(rot_std: float = ROT_STD, focal_std: float = FOCAL_STD) -> np.ndarray:
    """The prior's standard deviations of ``theta`` (6,)."""
    return np.array([rot_std, rot_std, rot_std, rot_std, focal_std, focal_std], dtype=np.float64)


def correct(B: np.ndarray, theta: np.ndarray, eye_in_hand: bool) -> np.ndarray:
    """Eye poses in solver form ``B`` (N, 4, 4) corrected by ``theta`` (see the module documentation).

    ``B`` is ``T_target_cam`` eye-in-hand and ``T_cam_marker`` eye-to-hand; the
    correction acts on the camera-frame pose ``T_cam_target`` of either.
    """
    T = se3.invert_transform(B, check=False) if eye_in_hand else B
    R0 = se3.so3_exp(np.array([theta[0], theta[1], 0.0]))
    t = T[:, :3, 3] @ R0.T
    stretch = t[:, 2:3] * np.array([0.0, 0.0, theta[5]])
    t_new = t + t[:, 2:3] * np.array([theta[2], theta[3], theta[4]]) + stretch
    # the second depth stretch turns the target with the line of sight (weak perspective: a small target keeps
    # its appearance from the new ray)
    # (a camera at the origin of its stream, the first pose of a visual-odometry trajectory, has no line of sight
    # and its depth stretch is 0: no turn)
    a = t / np.maximum(np.linalg.norm(t, axis=1, keepdims=True), 1e-300)
    b = (t + stretch) / np.maximum(np.linalg.norm(t + stretch, axis=1, keepdims=True), 1e-300)
    turn = se3.so3_exp(np.cross(a, b))  # small angles: the rotation taking a to b
    out = np.empty_like(T)
    out[:, :3, :3] = turn @ R0 @ T[:, :3, :3]
    out[:, :3, 3] = t_new
    out[:, 3] = T[:, 3]
    return se3.invert_transform(out, check=False) if eye_in_hand else out


def describe(prior, cov_X: np.ndarray) -> dict:
    """JSON-ready report: the assumed standard deviations and what they add to the variances of X."""
    names = ("rot_x_rad", "rot_y_rad", "shift_x_per_m", "shift_y_per_m", "depth_stretch", "depth_stretch_turning")
    return {
        "prior_std": {n: float(v) for n, v in zip(names, prior)},
        "X_std_added": [float(v) for v in np.sqrt(np.maximum(np.diag(cov_X), 0.0))],
    }


def note(prior) -> str:
    """One line for the notes: what the standard deviations assume about the intrinsics."""
    p = np.asarray(prior, dtype=np.float64)
    return (f"the camera poses' systematic error from their intrinsics is counted in the standard deviations: "
            f"principal point to {1e3 * p[0]:.2g} mrad (about {1e3 * p[0]:.2g} px at a focal length of 1000 px), "
            f"focal length to {100 * p[4]:.2g} % (intrinsics_std to change)")
