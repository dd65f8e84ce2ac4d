"""Synthetic calibration chains for the solver tests, and the identities they must satisfy.

A chain is a set of robot flange poses ``A_i = T_base_ee`` drawn in the workspace
of an arm, a hand-eye transform ``X`` of a few centimetres and a reference
``Y`` about 0.5-1 m away, in either configuration:

* eye-in-hand: ``X = T_ee_cam``, ``Y = T_base_target`` (a board on the table
  below the flange), ``T_cam_target = inv(X) inv(A_i) Y`` and
  ``B_i = inv(T_cam_target)``;
* eye-to-hand: ``X = T_ee_marker``, ``Y = T_base_cam`` (a static camera looking
  at the workspace), ``B_i = T_cam_target = inv(Y) A_i X``.

In both, ``A_i X = Y B_i``; the relative motions between consecutive poses,
``A = inv(A_i) A_j``, ``B = inv(B_i) B_j`` (via :mod:`kinhec.geometry.motion`), satisfy
``A X = X B``.  Noise follows the dataset's models (flange-frame twist noise on
the robot; camera-frame anisotropic translation noise and a target-frame
rotation perturbation on ``T_cam_target``); outliers replace measurements by
random poses; a monocular scale multiplies the camera translations.

The solver tests, and ``docs/figures_solvers.py``, draw their chains with :func:`make_chain`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.geometry import motion, se3

#: Workspaces of arms of different sizes: box centre and half extents [m], maximal
#: tilt of the flange axis from straight down [deg].
WORKSPACES = {
    "small_arm": dict(center=(0.30, 0.00, 0.25), half=(0.10, 0.12, 0.08), tilt_deg=35.0),
    "medium_arm": dict(center=(0.50, 0.05, 0.40), half=(0.18, 0.25, 0.15), tilt_deg=45.0),
    "large_arm": dict(center=(0.85, -0.10, 0.55), half=(0.30, 0.40, 0.25), tilt_deg=55.0),
}
CONFIGURATIONS = ("eye_in_hand", "eye_to_hand")

_R_DOWN = np.diag([1.0, -1.0, -1.0])  # flange z pointing down


@dataclass
class Chain:
    configuration: str
    X: np.ndarray
    Y: np.ndarray
    A_abs_gt: np.ndarray
    B_abs_gt: np.ndarray
    A_abs: np.ndarray
    B_abs: np.ndarray
    outlier: np.ndarray
    scale: float

    def motions(self):
        """Consecutive relative motions ``(A, B)`` of the measured poses, shape (N-1, 4, 4) each."""
        return motion.relative_motions(self.A_abs), motion.relative_motions(self.B_abs)


def _axis_angle_in_cone(rng, n, max_deg):
    """Rotations (n, 3, 3) about horizontal axes by angles up to ``max_deg``, then a free roll."""
    phi = rng.uniform(0, 2 * np.pi, n)
    ang = np.radians(max_deg) * np.sqrt(rng.uniform(0, 1, n))
    tilt = se3.so3_exp(np.stack([np.cos(phi), np.sin(phi), np.zeros(n)], -1) * ang[:, None])
    return tilt


def flange_poses(rng, n, workspace):
    """``n`` flange poses ``T_base_ee`` in the workspace, flange axis within the tilt cone of straight down."""
    ws = WORKSPACES[workspace]
    p = np.asarray(ws["center"]) + rng.uniform(-1, 1, (n, 3)) * np.asarray(ws["half"])
    yaw = se3.so3_exp(np.stack([np.zeros(n), np.zeros(n), rng.uniform(-np.pi / 2, np.pi / 2, n)], -1))
    R = _R_DOWN @ _axis_angle_in_cone(rng, n, ws["tilt_deg"]) @ yaw
    return se3.transform_from_rotation_translation(R, p)


def _look_at(position, target, rng):
    z = target - position
    z /= np.linalg.norm(z)
    helper = rng.standard_normal(3)
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return se3.transform_from_rotation_translation(np.stack([x, y, z], axis=1), position)


def hand_eye(rng, configuration):
    """A ground-truth ``X``: camera 2-12 cm ahead of the flange, or a marker up to 10 cm along it."""
    if configuration == "eye_in_hand":
        t = np.array([rng.uniform(-0.06, 0.06), rng.uniform(-0.06, 0.06), rng.uniform(0.02, 0.12)])
        R = _axis_angle_in_cone(rng, 1, 40.0)[0] @ se3.so3_exp([0.0, 0.0, rng.uniform(-np.pi, np.pi)])
    else:
        t = np.array([rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), rng.uniform(0.0, 0.10)])
        R = _axis_angle_in_cone(rng, 1, 30.0)[0] @ se3.so3_exp([0.0, 0.0, rng.uniform(-np.pi, np.pi)])
    return se3.transform_from_rotation_translation(R, t)


def world(rng, configuration, workspace):
    """A ground-truth ``Y``: board on the table 0.5-1 m below the flanges, or a static camera ~1.2 m away."""
    c = np.asarray(WORKSPACES[workspace]["center"])
    if configuration == "eye_in_hand":
        p = np.array([c[0] + rng.uniform(-0.1, 0.1), c[1] + rng.uniform(-0.1, 0.1), c[2] - rng.uniform(0.5, 0.9)])
        R = se3.so3_exp(np.r_[rng.uniform(-0.2, 0.2, 2), rng.uniform(-np.pi, np.pi)])
        return se3.transform_from_rotation_translation(R, p)
    d = np.array([rng.uniform(0.6, 1.0), rng.uniform(-0.5, 0.5), rng.uniform(0.2, 0.7)])
    d /= np.linalg.norm(d)
    return _look_at(c + rng.uniform(1.0, 1.4) * d, c, rng)


def make_chain(
    rng,
    n,
    *,
    configuration="eye_in_hand",
    workspace="medium_arm",
    robot_noise=(0.0, 0.0),
    camera_noise=(0.0, 0.0, 0.0, 0.0),
    outlier_fraction=0.0,
    scale=1.0,
):
    """A synthetic chain of ``n`` pose pairs.

    ``robot_noise = (rot_std_rad, trans_std_m)`` (flange-frame twist noise);
    ``camera_noise = (rot_std_rad, x_std_m, y_std_m, z_std_m)`` (target-frame
    rotation, camera-frame translation); ``outlier_fraction`` of the camera
    measurements replaced by random poses; ``scale`` multiplies the camera
    translations of ``B_abs`` (monocular data).
    """
    X = hand_eye(rng, configuration)
    Y = world(rng, configuration, workspace)
    A_gt = flange_poses(rng, n, workspace)
    B_gt = se3.invert_transform(Y) @ A_gt @ X
    # measurement of the camera: T_cam_target
    T_ct = se3.invert_transform(B_gt) if configuration == "eye_in_hand" else B_gt.copy()
    r_rot, r_trans = robot_noise
    A = A_gt @ se3.se3_exp(np.concatenate([rng.normal(0, 1, (n, 3)) * r_rot, rng.normal(0, 1, (n, 3)) * r_trans], 1))
    c_rot, cx, cy, cz = camera_noise
    R_ct = T_ct[:, :3, :3] @ se3.so3_exp(rng.normal(0, 1, (n, 3)) * c_rot)
    t_ct = T_ct[:, :3, 3] + rng.normal(0, 1, (n, 3)) * np.array([cx, cy, cz])
    T_ct = se3.transform_from_rotation_translation(R_ct, t_ct)
    outlier = np.zeros(n, dtype=bool)
    if outlier_fraction > 0:
        k = int(round(outlier_fraction * n))
        idx = rng.choice(n, size=k, replace=False)
        outlier[idx] = True
        T_ct[idx] = se3.transform_from_rotation_translation(
            se3.random_rotations(rng, k), T_ct[idx, :3, 3] + rng.normal(0, 0.3, (k, 3))
        )
    B = se3.invert_transform(T_ct) if configuration == "eye_in_hand" else T_ct
    B = B.copy()
    B[:, :3, 3] *= scale
    return Chain(configuration, X, Y, A_gt, B_gt, A, B, outlier, float(scale))
