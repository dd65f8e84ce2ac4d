"""Synthetic rigs shared by the benchmark scripts (imported as ``_rigs`` from a script in this folder)."""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3


def eye_in_hand_rig(rng: np.random.Generator, n: int):
    """True flange poses ``A`` (n, 4, 4), ``T_cam_target`` (n, 4, 4), ``X`` and ``Y`` of an eye-in-hand rig.

    The flange looks down with up to 45 deg of tilt and +-90 deg of yaw over a 0.4 x 0.5 x 0.3 m box.
    """
    p = np.array([0.5, 0.0, 0.4]) + rng.uniform(-1, 1, (n, 3)) * np.array([0.2, 0.25, 0.15])
    tilt_axis = np.c_[rng.normal(size=(n, 2)), np.zeros(n)]
    tilt_axis /= np.linalg.norm(tilt_axis, axis=1, keepdims=True)
    tilt = se3.so3_exp(tilt_axis * np.radians(45.0) * np.sqrt(rng.uniform(0, 1, (n, 1))))
    yaw = se3.so3_exp(np.c_[np.zeros((n, 2)), rng.uniform(-np.pi / 2, np.pi / 2, n)])
    A = se3.transform_from_rotation_translation(np.diag([1.0, -1.0, -1.0]) @ tilt @ yaw, p)
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.2, 1.2]), [0.03, -0.04, 0.08])
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.05, -0.1, 0.7]), [0.55, 0.05, -0.3])
    C = se3.invert_transform(A @ X) @ Y
    return A, C, X, Y
