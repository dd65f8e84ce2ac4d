"""Tests of kinhec.geometry.motion: keyframes, relative motions and observability descriptors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from kinhec.geometry import motion, se3
from kinhec.util.errors import InputError


def pose(R, p):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def rot(axis, angle_deg):
    axis = np.asarray(axis, float)
    return se3.so3_exp(axis / np.linalg.norm(axis) * np.radians(angle_deg))


def gap(T_k, T_j):
    """Rotation [deg] and translation [m] between two poses, computed independently of kinhec."""
    ang = np.degrees(Rotation.from_matrix(T_k[:3, :3].T @ T_j[:3, :3]).magnitude())
    return ang, np.linalg.norm(T_j[:3, 3] - T_k[:3, 3])


def random_walk(rng, n, rot_step_deg, trans_step_m):
    """A stream whose consecutive poses differ by small random rotations and translations."""
    w = rng.standard_normal((n, 3)) * np.radians(rot_step_deg)
    d = rng.standard_normal((n, 3)) * trans_step_m
    T = np.empty((n, 4, 4))
    T[0] = np.eye(4)
    for k in range(1, n):
        T[k] = T[k - 1] @ pose(se3.so3_exp(w[k]), d[k])
    return T


def assert_greedy_keyframes(T, idx, min_rot_deg, min_trans_m):
    """Every keyframe is the first later frame that is far enough from the previous keyframe."""
    assert idx[0] == 0
    assert (np.diff(idx) > 0).all()
    for k, k_next in zip(idx[:-1], idx[1:]):
        ang, dist = gap(T[k], T[k_next])
        assert ang >= min_rot_deg or dist >= min_trans_m, (k, k_next, ang, dist)
        for j in range(k + 1, k_next):  # no skipped frame would have qualified earlier
            ang, dist = gap(T[k], T[j])
            assert ang < min_rot_deg and dist < min_trans_m, (k, j, ang, dist)
    for j in range(idx[-1] + 1, len(T)):  # nothing after the last keyframe qualifies either
        ang, dist = gap(T[idx[-1]], T[j])
        assert ang < min_rot_deg and dist < min_trans_m


# --------------------------------------------------------------------------- #
# keyframes
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_keyframes_random_walk_honour_both_thresholds(seed):
    rng = np.random.default_rng(seed)
    T = random_walk(rng, 300, rot_step_deg=1.0, trans_step_m=0.004)
    idx = motion.select_keyframes(T)
    assert idx.dtype == np.int64
    assert 3 <= idx.size <= 200
    assert_greedy_keyframes(T, idx, motion.KEYFRAME_MIN_ROT_DEG, motion.KEYFRAME_MIN_TRANS_M)
    # the unchecked path (poses the generator built itself) picks the same frames
    assert np.array_equal(motion.select_keyframes(T, check=False), idx)


def test_keyframes_check_rejects_a_broken_stream():
    T = random_walk(np.random.default_rng(3), 40, rot_step_deg=1.0, trans_step_m=0.004)
    T[5, :3, :3] *= 1.01
    with pytest.raises(InputError, match=r"T \(rotation block\): expected orthonormal"):
        motion.select_keyframes(T)


def test_keyframes_defaults_are_the_protocol():
    assert motion.KEYFRAME_MIN_ROT_DEG == 5.0
    assert motion.KEYFRAME_MIN_TRANS_M == 0.02
    assert motion.KEYFRAME_MAX == 200


def test_keyframes_rotation_threshold_alone():
    # 1.1 deg per frame about a fixed axis, no translation: every 5th frame (5.5 deg; 4 frames = 4.4 deg)
    T = np.stack([pose(rot([1, 2, 3], 1.1 * k), [0, 0, 0]) for k in range(41)])
    assert np.array_equal(motion.select_keyframes(T), np.arange(0, 41, 5))


def test_keyframes_translation_threshold_alone():
    # 6 mm per frame, no rotation: every 4th frame (24 mm; 3 frames = 18 mm)
    T = np.stack([pose(np.eye(3), [0.006 * k, 0, 0]) for k in range(30)])
    assert np.array_equal(motion.select_keyframes(T), np.arange(0, 30, 4))


def test_keyframes_either_threshold_triggers():
    # first a rotating segment (1.1 deg/frame), then a translating one (6 mm/frame)
    poses = [pose(rot([0, 0, 1], 1.1 * k), [0, 0, 0]) for k in range(11)]
    R_end = poses[-1][:3, :3]
    poses += [pose(R_end, [0.006 * k, 0, 0]) for k in range(1, 13)]
    T = np.stack(poses)
    idx = motion.select_keyframes(T)
    assert np.array_equal(idx, [0, 5, 10, 14, 18, 22])
    assert_greedy_keyframes(T, idx, 5.0, 0.02)


def test_keyframes_custom_thresholds():
    rng = np.random.default_rng(3)
    T = random_walk(rng, 200, rot_step_deg=2.0, trans_step_m=0.01)
    idx = motion.select_keyframes(T, min_rot_deg=12.0, min_trans_m=0.05)
    assert_greedy_keyframes(T, idx, 12.0, 0.05)
    # rotation only: an unreachable translation threshold
    idx_rot = motion.select_keyframes(T, min_rot_deg=12.0, min_trans_m=np.inf)
    assert_greedy_keyframes(T, idx_rot, 12.0, np.inf)
    assert idx_rot.size < idx.size


def test_keyframes_are_capped_evenly():
    # 6 deg between consecutive frames: every frame qualifies, 1000 candidates
    T = np.stack([pose(rot([1, 0, 1], 6.0 * k), [0, 0, 0]) for k in range(1000)])
    idx = motion.select_keyframes(T)
    assert idx.size == 200
    assert idx[0] == 0 and idx[-1] == 999
    assert (np.diff(idx) > 0).all()
    steps = np.diff(idx)
    assert steps.min() >= 4 and steps.max() <= 6  # evenly spread over the selection
    idx50 = motion.select_keyframes(T, max_keyframes=50)
    assert idx50.size == 50 and idx50[0] == 0 and idx50[-1] == 999
    # below the cap nothing is dropped
    assert np.array_equal(motion.select_keyframes(T[:150]), np.arange(150))


def test_keyframes_fall_back_to_all_frames():
    # tiny motion: only frame 0 survives
    rng = np.random.default_rng(4)
    T = random_walk(rng, 50, rot_step_deg=0.01, trans_step_m=0.0001)
    assert np.array_equal(motion.select_keyframes(T), np.arange(50))
    # exactly two survive: still the fallback
    T2 = np.stack([pose(np.eye(3), [x, 0, 0]) for x in [0, 0.001, 0.002, 0.03, 0.031, 0.032]])
    assert np.array_equal(motion.select_keyframes(T2), np.arange(6))
    # three survive: no fallback
    T3 = np.stack([pose(np.eye(3), [x, 0, 0]) for x in [0, 0.001, 0.03, 0.031, 0.06, 0.061]])
    assert np.array_equal(motion.select_keyframes(T3), [0, 2, 4])
    # short streams
    assert np.array_equal(motion.select_keyframes(T[:2]), [0, 1])
    assert np.array_equal(motion.select_keyframes(T[:1]), [0])
    assert motion.select_keyframes(np.zeros((0, 4, 4))).size == 0


def test_keyframes_reject_bad_input():
    T = np.stack([np.eye(4)] * 4)
    with pytest.raises(InputError, match=r"T: expected a stream of shape \(N, 4, 4\)"):
        motion.select_keyframes(np.eye(4))
    with pytest.raises(InputError, match=r"T: expected shape \(\.\.\., 4, 4\)"):
        motion.select_keyframes(np.zeros((4, 3, 3)))
    with pytest.raises(InputError, match="max_keyframes: expected an integer >= 2"):
        motion.select_keyframes(T, max_keyframes=1)
    bad = T.copy()
    bad[2, 0, 0] = np.nan
    with pytest.raises(InputError, match="T: expected finite values"):
        motion.select_keyframes(bad)


# --------------------------------------------------------------------------- #
# relative motions
# --------------------------------------------------------------------------- #
def test_relative_motions_chain_back_to_the_stream():
    rng = np.random.default_rng(5)
    T = se3.random_poses(rng, 8)
    rel = motion.relative_motions(T)
    assert rel.shape == (7, 4, 4)
    assert np.allclose(T[:-1] @ rel, T[1:], atol=1e-12)
    assert np.allclose(rel, np.linalg.inv(T[:-1]) @ T[1:], atol=1e-12)
    assert motion.relative_motions(T[:1]).shape == (0, 4, 4)


@pytest.mark.parametrize("configuration", ["eye_in_hand", "eye_to_hand"])
def test_relative_motions_of_keyframes_satisfy_ax_xb(configuration):
    rng = np.random.default_rng(6)
    A_abs = random_walk(rng, 120, rot_step_deg=2.0, trans_step_m=0.005)  # T_base_ee
    X = se3.random_poses(rng, 1, trans_std_m=0.05)[0]
    Y = se3.random_poses(rng, 1, trans_std_m=1.0)[0]
    inv = se3.invert_transform
    if configuration == "eye_in_hand":
        B_abs = inv(inv(X) @ inv(A_abs) @ Y)  # inv(T_cam_target)
    else:
        B_abs = inv(Y) @ A_abs @ X  # T_cam_marker
    idx = motion.select_keyframes(A_abs)
    A = motion.relative_motions(A_abs[idx])
    B = motion.relative_motions(B_abs[idx])
    assert np.allclose(A @ X, X @ B, atol=1e-12)


def test_relative_motions_rejects_non_poses():
    with pytest.raises(InputError, match=r"T: expected shape \(\.\.\., 4, 4\)"):
        motion.relative_motions(np.zeros((3, 3, 3)))


# --------------------------------------------------------------------------- #
# rotation-axis scatter
# --------------------------------------------------------------------------- #
def test_axis_scatter_parallel_axes():
    R = np.stack([rot([1, 1, 0], a) for a in (5.0, 20.0, -35.0, 90.0, 170.0)])
    ev = motion.rotation_axis_scatter(R)
    assert np.allclose(ev, [1.0, 0.0, 0.0], atol=1e-12)


def test_axis_scatter_isotropic_axes():
    R = np.stack([rot(a, 30.0) for a in np.vstack([np.eye(3), -np.eye(3)])])
    assert np.allclose(motion.rotation_axis_scatter(R), [1 / 3, 1 / 3, 1 / 3], atol=1e-12)
    rng = np.random.default_rng(7)
    axes = se3.random_unit_vectors(rng, 20000)
    R = se3.so3_exp(axes * np.radians(20.0))
    ev = motion.rotation_axis_scatter(R)
    assert np.allclose(ev, 1 / 3, atol=0.02)
    assert np.isclose(ev.sum(), 1.0)


def test_axis_scatter_weights_by_squared_angle():
    R = np.stack([rot([1, 0, 0], 20.0), rot([0, 1, 0], 10.0)])
    assert np.allclose(motion.rotation_axis_scatter(R), [0.8, 0.2, 0.0], atol=1e-12)
    R = np.stack([rot([1, 0, 0], 15.0), rot([0, 0, 1], 15.0)])
    assert np.allclose(motion.rotation_axis_scatter(R), [0.5, 0.5, 0.0], atol=1e-12)


def test_axis_scatter_without_rotation_is_zero():
    assert np.array_equal(motion.rotation_axis_scatter(np.stack([np.eye(3)] * 4)), np.zeros(3))
    with pytest.raises(InputError, match=r"R: expected det\(R\) = \+1"):
        motion.rotation_axis_scatter(np.diag([1.0, 1.0, -1.0])[None])


# --------------------------------------------------------------------------- #
# descriptors
# --------------------------------------------------------------------------- #
KEYS = (
    "n_motions",
    "axis_scatter_lambda2",
    "axis_scatter_lambda3",
    "mean_rot_angle_deg",
    "max_rot_angle_deg",
    "mean_trans_m",
    "translation_cond",
)


def test_descriptors_of_hand_built_motions():
    A = np.stack([pose(rot([1, 0, 0], 10.0), [0.03, 0.0, 0.04]), pose(rot([0, 1, 0], 20.0), [0.0, 0.1, 0.0])])
    d = motion.motion_descriptors(A)
    assert tuple(d) == KEYS
    assert d["n_motions"] == 2 and isinstance(d["n_motions"], int)
    assert d["axis_scatter_lambda2"] == pytest.approx(100 / 500, abs=1e-12)  # weights 10^2 and 20^2
    assert d["axis_scatter_lambda3"] == pytest.approx(0.0, abs=1e-12)
    assert d["mean_rot_angle_deg"] == pytest.approx(15.0, abs=1e-12)
    assert d["max_rot_angle_deg"] == pytest.approx(20.0, abs=1e-12)
    assert d["mean_trans_m"] == pytest.approx((0.05 + 0.1) / 2, abs=1e-15)
    # (R - I)^T (R - I) = (2 - 2 cos theta) (I - a a^T): with axes x and y the stacked blocks have
    # squared singular values c2, c1 and c1 + c2
    c1, c2 = 2 - 2 * np.cos(np.radians(10.0)), 2 - 2 * np.cos(np.radians(20.0))
    assert d["translation_cond"] == pytest.approx(np.sqrt((c1 + c2) / c1), rel=1e-10)


def test_descriptors_isotropic_motions():
    A = np.stack([pose(rot(a, 25.0), [0, 0, 0]) for a in np.eye(3)])
    d = motion.motion_descriptors(A)
    assert d["axis_scatter_lambda2"] == pytest.approx(1 / 3)
    assert d["axis_scatter_lambda3"] == pytest.approx(1 / 3)
    assert d["translation_cond"] == pytest.approx(1.0)  # stacked blocks: (R - I)^T (R - I) sum to 2c I
    assert d["mean_trans_m"] == 0.0


def test_descriptors_pure_translations():
    A = np.stack([pose(np.eye(3), t) for t in ([0.1, 0, 0], [0, 0.2, 0], [0, 0, 0.3])])
    d = motion.motion_descriptors(A)
    assert d["translation_cond"] == np.inf
    assert d["axis_scatter_lambda2"] == 0.0 and d["axis_scatter_lambda3"] == 0.0
    assert d["mean_rot_angle_deg"] == 0.0 and d["max_rot_angle_deg"] == 0.0
    assert d["mean_trans_m"] == pytest.approx(0.2)


def test_descriptors_single_axis_rotations():
    A = np.stack([pose(rot([0, 0, 1], a), [0.01 * a, 0, 0]) for a in (10.0, 30.0, -50.0)])
    d = motion.motion_descriptors(A)
    assert d["axis_scatter_lambda2"] == pytest.approx(0.0, abs=1e-12)
    assert d["translation_cond"] == np.inf  # R - I never moves the rotation axis: rank 2
    assert d["max_rot_angle_deg"] == pytest.approx(50.0)


def test_descriptors_without_motion_and_bad_input():
    d = motion.motion_descriptors(np.zeros((0, 4, 4)))
    assert d["n_motions"] == 0
    assert all(np.isnan(d[k]) for k in KEYS[1:])
    one = motion.motion_descriptors(pose(rot([1, 0, 0], 10.0), [0, 0, 0]))  # a single (4, 4) motion
    assert one["n_motions"] == 1 and one["max_rot_angle_deg"] == pytest.approx(10.0)
    with pytest.raises(InputError, match=r"A: expected shape \(\.\.\., 4, 4\)"):
        motion.motion_descriptors(np.zeros((2, 3, 3)))
