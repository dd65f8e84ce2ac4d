"""The intrinsics' systematic error on camera poses (``kinhec.calibrate.eye_bias.correct``), one parameter at a
time against the correction written out by hand."""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import eye_bias as eb


def _poses(seed=31, n=6):
    rng = np.random.default_rng(seed)
    R = se3.random_rotations(rng, n)
    t = np.column_stack([rng.uniform(-0.2, 0.2, (n, 2)), rng.uniform(0.4, 1.2, n)])  # in front of the camera
    return se3.transform_from_rotation_translation(R, t)


def test_camera_frame_rotation_turns_translation_and_rotation():
    T = _poses()
    theta = np.array([2e-3, -3e-3, 0, 0, 0, 0])
    out = eb.correct(T, theta, eye_in_hand=False)
    R0 = se3.so3_exp(np.array([2e-3, -3e-3, 0.0]))
    np.testing.assert_allclose(out[:, :3, 3], (R0 @ T[:, :3, 3, None])[..., 0], atol=1e-15)
    np.testing.assert_allclose(out[:, :3, :3], R0 @ T[:, :3, :3], atol=1e-15)


def test_lateral_shift_and_depth_stretch_scale_with_depth():
    T = _poses()
    ax, ay, e = 1e-3, -2e-3, 3e-3
    out = eb.correct(T, np.array([0, 0, ax, ay, e, 0]), eye_in_hand=False)
    z = T[:, 2, 3]
    want = T[:, :3, 3] + z[:, None] * np.array([ax, ay, e])
    np.testing.assert_allclose(out[:, :3, 3], want, atol=1e-15)
    np.testing.assert_allclose(out[:, :3, :3], T[:, :3, :3], atol=1e-15)


def test_turning_depth_stretch_turns_the_target_with_the_line_of_sight():
    T = _poses()
    e2 = 3e-3
    out = eb.correct(T, np.array([0, 0, 0, 0, 0, e2]), eye_in_hand=False)
    t = T[:, :3, 3]
    t_new = t + t[:, 2:3] * np.array([0.0, 0.0, e2])
    np.testing.assert_allclose(out[:, :3, 3], t_new, atol=1e-15)
    turn = out[:, :3, :3] @ np.swapaxes(T[:, :3, :3], 1, 2)
    a = t / np.linalg.norm(t, axis=1, keepdims=True)
    b = t_new / np.linalg.norm(t_new, axis=1, keepdims=True)
    np.testing.assert_allclose((turn @ a[..., None])[..., 0], b, atol=1e-8)  # the old ray onto the new one
    assert np.degrees(se3.rotation_angle(turn, check=False)).max() > 0.01  # and it does turn


def test_eye_in_hand_corrects_the_inverse_pose():
    T = _poses(seed=32)
    theta = np.array([1e-3, 2e-3, -1e-3, 5e-4, 2e-3, -1e-3])
    B = se3.invert_transform(T)
    np.testing.assert_allclose(eb.correct(B, theta, eye_in_hand=True),
                               se3.invert_transform(eb.correct(T, theta, eye_in_hand=False)), atol=1e-14)


def test_a_camera_at_the_origin_of_its_stream_is_left_where_it_is():
    # the first pose of a visual-odometry trajectory is the identity: no line of sight, no depth, nothing to turn
    T = _poses(seed=33)
    T[0] = np.eye(4)
    theta = np.array([1e-3, 2e-3, -1e-3, 5e-4, 2e-3, -1e-3])
    out = eb.correct(T, theta, eye_in_hand=False)
    assert np.isfinite(out).all()
    R0 = se3.so3_exp(np.array([1e-3, 2e-3, 0.0]))
    np.testing.assert_allclose(out[0, :3, :3], R0, atol=1e-15)  # only the camera-frame rotation acts
    np.testing.assert_allclose(out[0, :3, 3], 0.0, atol=0)
    np.testing.assert_allclose(out[1:], eb.correct(T[1:], theta, eye_in_hand=False), atol=0)
    np.testing.assert_allclose(eb.correct(se3.invert_transform(T), theta, eye_in_hand=True)[0, :3, 3], 0.0, atol=1e-18)
