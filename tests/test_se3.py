"""Tests of kinhec.geometry.se3: conventions, round trips, perturbations, interpolation, sampling, errors.

The convention tests pin the statements of ``docs/conventions.md``; the OpenCV
tests hold the translation table of that page to ``cv2`` itself.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.linalg import expm
from scipy.spatial.transform import Rotation, Slerp

from kinhec.geometry import se3
from kinhec.util.errors import InputError

DOCS = Path(__file__).resolve().parents[1] / "docs"
PROPS = settings(max_examples=60, deadline=None, derandomize=True)

I4 = np.eye(4)


# --------------------------------------------------------------------------- #
# helpers and strategies
# --------------------------------------------------------------------------- #
def Rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def Ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def Rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def pose(R, p):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def inv(T):
    return np.linalg.inv(T)  # independent of se3.invert_transform


def adjoint(T):
    """Adjoint of T for rotation-first twists (omega, v)."""
    R, p = T[:3, :3], T[:3, 3]
    Ad = np.zeros((6, 6))
    Ad[:3, :3] = R
    Ad[3:, :3] = se3.hat(p) @ R
    Ad[3:, 3:] = R
    return Ad


def twist_matrix(xi):
    M = np.zeros((4, 4))
    M[:3, :3] = se3.hat(xi[:3])
    M[:3, 3] = xi[3:]
    return M


unit_axes = (
    st.tuples(*[st.floats(-1, 1, allow_nan=False)] * 3)
    .map(np.array)
    .filter(lambda v: np.linalg.norm(v) > 0.1)
    .map(lambda v: v / np.linalg.norm(v))
)
angles_any = st.floats(0.0, np.pi)
angles_tiny = st.floats(-12.0, -5.0).map(lambda e: 10.0**e)  # 1e-12 .. 1e-5, log-uniform
angles_near_pi = st.floats(np.pi - 1e-9, np.pi)
angles = st.one_of(angles_any, angles_tiny, angles_near_pi)
translations = st.tuples(*[st.floats(-3, 3, allow_nan=False)] * 3).map(np.array)
seeds = st.integers(0, 2**32 - 1)


def rotvec(axis, angle):
    return axis * angle


def quat(axis, angle):
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


def close_up_to_sign(q1, q2, atol):
    return min(np.abs(q1 - q2).max(), np.abs(q1 + q2).max()) <= atol


# --------------------------------------------------------------------------- #
# conventions
# --------------------------------------------------------------------------- #
def test_hamilton_product_table():
    one, i, j, k = np.eye(4)
    mul = se3.quaternion_multiply
    assert np.array_equal(mul(i, j), k)
    assert np.array_equal(mul(j, k), i)
    assert np.array_equal(mul(k, i), j)
    assert np.array_equal(mul(j, i), -k)
    for u in (i, j, k):
        assert np.array_equal(mul(u, u), -one)
    assert np.array_equal(mul(mul(i, j), k), -one)  # i j k = -1


def test_quaternion_product_composes_like_matrices():
    rng = np.random.default_rng(0)
    q1 = se3.quaternion_from_matrix(se3.random_rotations(rng, 20))
    q2 = se3.quaternion_from_matrix(se3.random_rotations(rng, 20))
    R12 = se3.matrix_from_quaternion(se3.quaternion_multiply(q1, q2), normalize=True)
    assert np.allclose(R12, se3.matrix_from_quaternion(q1) @ se3.matrix_from_quaternion(q2), atol=1e-14)


def test_matrix_from_quaternion_is_active_z90_maps_x_to_y():
    c = np.cos(np.pi / 4)
    R = se3.matrix_from_quaternion([c, 0.0, 0.0, c])
    assert np.allclose(R @ [1, 0, 0], [0, 1, 0], atol=1e-15)
    assert np.allclose(R @ [0, 1, 0], [-1, 0, 0], atol=1e-15)
    assert np.allclose(R, Rz(np.pi / 2), atol=1e-15)
    # same rotation through the exponential map
    assert np.allclose(se3.so3_exp([0, 0, np.pi / 2]), R, atol=1e-15)


def test_pose_maps_child_to_parent_coordinates():
    # frame b: origin at (1, 2, 3) in a, rotated 90 deg about z
    T_a_b = se3.transform_from_rotation_translation(Rz(np.pi / 2), [1.0, 2.0, 3.0])
    assert np.allclose(T_a_b @ [0, 0, 0, 1], [1, 2, 3, 1])  # origin of b in a
    assert np.allclose(T_a_b @ [1, 0, 0, 1], [1, 3, 3, 1])  # x of b is y of a
    T_b_a = se3.invert_transform(T_a_b)
    assert np.allclose(T_a_b @ T_b_a, I4, atol=1e-15)
    assert np.allclose(T_b_a @ T_a_b, I4, atol=1e-15)
    assert np.allclose(T_b_a @ [1, 2, 3, 1], [0, 0, 0, 1])


def test_concat_chains_left_to_right_and_broadcasts():
    rng = np.random.default_rng(1)
    T_a_b = se3.random_poses(rng, 5)
    T_b_c = se3.random_poses(rng, 1)[0]
    T_c_d = se3.random_poses(rng, 5)
    out = se3.concat(T_a_b, T_b_c, T_c_d)
    assert out.shape == (5, 4, 4)
    assert np.allclose(out, T_a_b @ T_b_c @ T_c_d)
    with pytest.raises(InputError, match="expected at least one transform"):
        se3.concat()


def test_scipy_agreement_with_explicit_scalar_first():
    rng = np.random.default_rng(2)
    R = se3.random_rotations(rng, 200)
    q = se3.quaternion_from_matrix(R)
    ref_wxyz = Rotation.from_matrix(R).as_quat(canonical=True, scalar_first=True)
    assert np.allclose(q, ref_wxyz, atol=1e-14)
    ref_xyzw = Rotation.from_matrix(R).as_quat(canonical=True, scalar_first=False)
    assert np.allclose(q[:, [1, 2, 3, 0]], ref_xyzw, atol=1e-14)
    assert np.allclose(se3.matrix_from_quaternion(q), Rotation.from_quat(q, scalar_first=True).as_matrix(), atol=1e-14)
    # a scalar-last reader of our quaternions must reorder first
    assert not np.allclose(Rotation.from_quat(q, scalar_first=False).as_matrix(), R)
    assert np.allclose(se3.so3_log(R), Rotation.from_matrix(R).as_rotvec(), atol=1e-12)


def test_rotation_vector_matches_opencv_rodrigues():
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(3)
    R = se3.random_rotations(rng, 20)
    for Rk in R:
        rvec, _ = cv2.Rodrigues(Rk)
        assert np.allclose(se3.so3_log(Rk), rvec.ravel(), atol=1e-9)


def test_conventions_doc_examples_run():
    text = (DOCS / "conventions.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 5
    namespace: dict = {}
    exec(compile("\n".join(blocks), "docs/conventions.md", "exec"), namespace)


# --------------------------------------------------------------------------- #
# hand-built calibration chains
# --------------------------------------------------------------------------- #
FLIP = np.diag([1.0, -1.0, -1.0])  # 180 deg about x: z down


def test_eye_in_hand_chain_by_hand():
    """Board on the table, flange pointing down above it, camera 5 cm in front of the flange."""
    Y = pose(np.eye(3), [0.6, 0.0, 0.0])  # T_base_world: board at x = 0.6 m, z up (towards the camera)
    X = pose(np.eye(3), [0.0, 0.0, 0.05])  # T_ee_cam: optical axis = flange z
    A0 = pose(FLIP, [0.6, 0.0, 0.5])  # flange 0.5 m above the board, z down
    A1 = pose(Rz(np.pi / 2) @ FLIP, [0.7, 0.0, 0.5])  # 10 cm further in x, turned 90 deg about vertical
    # what the camera sees, worked out by hand
    T_cam_target_0 = pose(np.diag([1.0, -1.0, -1.0]), [0.0, 0.0, 0.45])
    T_cam_target_1 = pose(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]), [0.0, -0.1, 0.45])
    A = np.stack([A0, A1])
    T_cam_target = np.stack([T_cam_target_0, T_cam_target_1])
    # the chain T_cam_target = T_cam_ee T_ee_base T_base_world
    chain = se3.concat(se3.invert_transform(X), se3.invert_transform(A), Y)
    assert np.allclose(chain, T_cam_target, atol=1e-15)
    # the board is in front of the camera (z > 0) and faces it (its z axis points back, -z_cam)
    assert (T_cam_target[:, 2, 3] > 0).all()
    assert (T_cam_target[:, 2, 2] < 0).all()
    # A_i X = Y B_i with B_i = inv(T_cam_target(i))
    B = se3.invert_transform(T_cam_target)
    assert np.allclose(A @ X, Y @ B, atol=1e-15)
    # relative form: A = inv(A_0) A_1, B = inv(B_0) B_1 (camera motion seen from camera pose 0)
    A01 = inv(A0) @ A1
    B01 = inv(B[0]) @ B[1]
    assert np.allclose(A01 @ X, X @ B01, atol=1e-15)
    assert np.allclose(B01, inv(A0 @ X) @ (A1 @ X), atol=1e-15)  # T_cam0_cam1


def test_eye_to_hand_chain_by_hand():
    """Static camera 1.5 m out along x looking back at the robot, marker 2 cm in front of the flange."""
    R_base_cam = np.column_stack([[0, 1, 0], [0, 0, -1], [-1, 0, 0]]).astype(float)  # x right, y down, z -> -x_base
    Y = pose(R_base_cam, [1.5, 0.0, 0.5])  # T_base_cam
    X = pose(np.eye(3), [0.0, 0.0, 0.02])  # T_ee_marker: marker z = flange z
    R_base_ee = np.column_stack([[0, 0, 1], [0, -1, 0], [1, 0, 0]]).astype(float)  # flange z towards the camera
    A0 = pose(R_base_ee, [0.8, 0.0, 0.5])
    A1 = pose(R_base_ee @ Rz(np.radians(30)), [0.8, 0.1, 0.6])
    T_cam_marker_0 = pose(np.array([[0.0, -1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, -1.0]]), [0.0, 0.0, 0.68])
    chain0 = se3.concat(se3.invert_transform(Y), A0, X)  # T_cam_base T_base_ee T_ee_marker
    assert np.allclose(chain0, T_cam_marker_0, atol=1e-15)
    assert T_cam_marker_0[2, 2] < 0  # marker z points towards the viewer
    A = np.stack([A0, A1])
    B = se3.concat(se3.invert_transform(Y), A, X)  # eye-to-hand: B_i = T_cam_marker(i)
    # second pose: 10 cm to the camera's left (base +y is camera x), 10 cm up (camera -y)
    assert np.allclose(B[1, :3, 3], [0.1, -0.1, 0.68], atol=1e-15)
    assert np.allclose(A @ X, Y @ B, atol=1e-15)
    A01 = inv(A0) @ A1
    B01 = inv(B[0]) @ B[1]
    assert np.allclose(A01 @ X, X @ B01, atol=1e-15)
    assert np.allclose(B01, inv(A0 @ X) @ (A1 @ X), atol=1e-15)  # T_marker0_marker1


@pytest.mark.parametrize("configuration", ["eye_in_hand", "eye_to_hand"])
def test_random_chains_satisfy_both_forms(configuration):
    rng = np.random.default_rng(4)
    n = 12
    A = se3.random_poses(rng, n, trans_std_m=0.3)  # T_base_ee(i)
    X = se3.random_poses(rng, 1, trans_std_m=0.05)[0]
    Y = se3.random_poses(rng, 1, trans_std_m=1.0)[0]
    if configuration == "eye_in_hand":  # X = T_ee_cam, Y = T_base_world
        T_cam_target = inv(X) @ inv(A) @ Y
        B = se3.invert_transform(T_cam_target)
    else:  # X = T_ee_marker, Y = T_base_cam
        T_cam_target = inv(Y) @ A @ X
        B = T_cam_target
    assert np.allclose(A @ X, Y @ B, atol=1e-12)
    i, j = np.triu_indices(n, 1)
    A_rel = se3.invert_transform(A[i]) @ A[j]
    B_rel = se3.invert_transform(B[i]) @ B[j]
    assert np.allclose(A_rel @ X, X @ B_rel, atol=1e-12)
    # the rotation angles of A and B agree (the classical A X = X B invariant)
    assert np.allclose(se3.rotation_angle(A_rel[:, :3, :3]), se3.rotation_angle(B_rel[:, :3, :3]), atol=1e-7)


def _cv(T, idx):
    return [np.ascontiguousarray(T[k, :3, :3]) for k in idx], [np.ascontiguousarray(T[k, :3, 3:]) for k in idx]


def test_opencv_translation_table():
    """docs/conventions.md, section 9, against cv2 itself (noise-free data, exact recovery)."""
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(5)
    n = 10
    idx = range(n)
    A = se3.random_poses(rng, n, trans_std_m=0.3)
    X = se3.random_poses(rng, 1, trans_std_m=0.1)[0]
    Y = se3.random_poses(rng, 1, trans_std_m=1.0)[0]
    A_inv = se3.invert_transform(A)
    tol = dict(atol=1e-8)

    # eye-in-hand: X = T_ee_cam, Y = T_base_world (board)
    T_cam_target = inv(X) @ A_inv @ Y
    R, t = cv2.calibrateHandEye(*_cv(A, idx), *_cv(T_cam_target, idx), method=cv2.CALIB_HAND_EYE_PARK)
    assert np.allclose(pose(R, t.ravel()), X, **tol)  # R_cam2gripper = T_ee_cam
    R_bw, t_bw, R_gc, t_gc = cv2.calibrateRobotWorldHandEye(*_cv(T_cam_target, idx), *_cv(A_inv, idx))
    assert np.allclose(pose(R_bw, t_bw.ravel()), inv(Y), **tol)  # R_base2world = T_world_base
    assert np.allclose(pose(R_gc, t_gc.ravel()), inv(X), **tol)  # R_gripper2cam = T_cam_ee

    # eye-to-hand: X = T_ee_marker, Y = T_base_cam
    T_cam_marker = inv(Y) @ A @ X
    R, t = cv2.calibrateHandEye(*_cv(A_inv, idx), *_cv(T_cam_marker, idx), method=cv2.CALIB_HAND_EYE_PARK)
    assert np.allclose(pose(R, t.ravel()), Y, **tol)  # inverted robot poses: output is T_base_cam = Y
    X_from_Y = inv(A[0]) @ pose(R, t.ravel()) @ T_cam_marker[0]
    assert np.allclose(X_from_Y, X, **tol)
    R_bw, t_bw, R_gc, t_gc = cv2.calibrateRobotWorldHandEye(
        *_cv(se3.invert_transform(T_cam_marker), idx), *_cv(A_inv, idx)
    )
    assert np.allclose(pose(R_bw, t_bw.ravel()), inv(Y), **tol)  # T_cam_base
    assert np.allclose(pose(R_gc, t_gc.ravel()), inv(X), **tol)  # T_marker_ee


# --------------------------------------------------------------------------- #
# seeded round trips
# --------------------------------------------------------------------------- #
@PROPS
@given(axis=unit_axes, angle=angles)
def test_quaternion_matrix_round_trip(axis, angle):
    q = se3.canonical_quaternion(quat(axis, angle))
    R = se3.matrix_from_quaternion(q)
    assert np.allclose(R, Rotation.from_rotvec(axis * angle).as_matrix(), atol=1e-14)
    q2 = se3.quaternion_from_matrix(R)
    assert q2[0] >= 0
    assert np.isclose(np.linalg.norm(q2), 1.0, atol=1e-15)
    # the sign is only ambiguous at exactly 180 deg (w = 0)
    if q[0] > 1e-6:
        assert np.allclose(q2, q, atol=1e-14)
    else:
        assert close_up_to_sign(q2, q, 1e-14)
    assert np.allclose(se3.matrix_from_quaternion(q2), R, atol=1e-14)


@PROPS
@given(axis=unit_axes, angle=angles, p=translations)
def test_pq_transform_round_trip(axis, angle, p):
    q = se3.canonical_quaternion(quat(axis, angle))
    T = se3.transform_from_pq(p, q)
    assert np.array_equal(T[3], [0, 0, 0, 1])
    assert np.array_equal(T[:3, 3], p)
    p2, q2 = se3.pq_from_transform(T)
    assert np.array_equal(p2, p)
    assert q2[0] >= 0
    assert close_up_to_sign(q2, q, 1e-14)
    assert np.allclose(se3.transform_from_pq(p2, q2), T, atol=1e-14)


@PROPS
@given(axis=unit_axes, angle=angles, p=translations)
def test_invert_transform(axis, angle, p):
    T = pose(se3.so3_exp(axis * angle), p)
    Ti = se3.invert_transform(T)
    assert np.allclose(T @ Ti, I4, atol=1e-14)
    assert np.allclose(Ti @ T, I4, atol=1e-14)
    assert np.allclose(Ti, np.linalg.inv(T), atol=1e-13)
    assert np.allclose(se3.invert_transform(Ti), T, atol=1e-14)


@PROPS
@given(axis=unit_axes, angle=angles)
def test_so3_exp_log_round_trip(axis, angle):
    w = axis * angle
    R = se3.so3_exp(w)
    assert np.allclose(R, Rotation.from_rotvec(w).as_matrix(), atol=1e-15)
    assert np.allclose(R.T @ R, np.eye(3), atol=1e-15)
    assert np.isclose(np.linalg.det(R), 1.0, atol=1e-15)
    w2 = se3.so3_log(R)
    assert np.isclose(np.linalg.norm(w2), angle, rtol=1e-9, atol=1e-15)
    assert np.isclose(se3.rotation_angle(R), angle, rtol=1e-9, atol=1e-15)
    if angle < np.pi - 1e-6:
        # tiny angles keep their relative precision
        assert np.abs(w2 - w).max() <= 1e-12 * angle
    else:
        assert min(np.abs(w2 - w).max(), np.abs(w2 + w).max()) < 1e-8
    assert np.allclose(se3.so3_exp(w2), R, atol=1e-15)


@PROPS
@given(axis=unit_axes, angle=angles, v=translations)
def test_se3_exp_log_round_trip(axis, angle, v):
    xi = np.concatenate([axis * angle, v])
    T = se3.se3_exp(xi)
    scale = 1.0 + np.abs(v).max()
    assert np.allclose(T, expm(twist_matrix(xi)), atol=1e-14 * scale)  # against the matrix exponential
    xi2 = se3.se3_log(T)
    assert np.allclose(se3.se3_exp(xi2), T, atol=1e-13 * scale)
    if angle < np.pi - 1e-6:
        assert np.abs(xi2[:3] - xi[:3]).max() <= 1e-12 * angle
        assert np.allclose(xi2[3:], v, atol=1e-13 * scale)


@PROPS
@given(seed=seeds)
def test_se3_log_exp_round_trip_random_poses(seed):
    T = se3.random_poses(np.random.default_rng(seed), 16, trans_std_m=2.0)
    assert np.allclose(se3.se3_exp(se3.se3_log(T)), T, atol=1e-13)
    xi = np.random.default_rng(seed).standard_normal((16, 6))
    xi[:, :3] *= 0.9  # |omega| well below pi: log(exp(xi)) = xi
    xi = xi[np.linalg.norm(xi[:, :3], axis=1) < 3.0]
    assert np.allclose(se3.se3_log(se3.se3_exp(xi)), xi, atol=1e-12)


@PROPS
@given(a=translations, b=translations)
def test_hat_vee(a, b):
    W = se3.hat(a)
    assert np.allclose(W, -W.T)
    assert np.allclose(W @ b, np.cross(a, b), atol=1e-13)
    assert np.array_equal(se3.vee(W), a)
    assert np.allclose(se3.vee(W + np.diag([1.0, 2.0, 3.0])), a)  # symmetric part is ignored


def test_hat_vee_batched():
    v = np.random.default_rng(6).standard_normal((2, 5, 3))
    assert se3.hat(v).shape == (2, 5, 3, 3)
    assert np.array_equal(se3.vee(se3.hat(v)), v)


def test_exp_is_stable_below_and_above_series_threshold():
    # the closed forms switch to series below 1e-4 rad; both sides must agree with expm
    rng = np.random.default_rng(7)
    for theta in (1e-12, 1e-8, 9.9e-5, 1.01e-4, 3e-4, 1e-3, 1e-2):
        axis = se3.random_unit_vectors(rng, 20)
        xi = np.concatenate([axis * theta, rng.standard_normal((20, 3))], axis=1)
        T = se3.se3_exp(xi)
        ref = np.stack([expm(twist_matrix(x)) for x in xi])
        assert np.abs(T - ref).max() < 5e-15, theta
        assert np.abs(se3.se3_log(T) - xi).max() < 5e-15, theta


def test_returned_quaternions_have_nonnegative_w():
    rng = np.random.default_rng(8)
    R = se3.random_rotations(rng, 2000)
    assert (se3.quaternion_from_matrix(R)[:, 0] >= 0).all()
    T = se3.random_poses(rng, 2000)
    assert (se3.pq_from_transform(T)[1][:, 0] >= 0).all()
    q = rng.standard_normal((2000, 4))
    qc = se3.canonical_quaternion(q)
    assert (qc[:, 0] >= 0).all()
    assert np.allclose(np.abs(qc), np.abs(q))
    # 180 deg rotations (w = 0 up to rounding) still come back with w >= 0
    Rpi = se3.so3_exp(se3.random_unit_vectors(rng, 200) * np.pi)
    assert (se3.quaternion_from_matrix(Rpi)[:, 0] >= 0).all()
    # batch axes are kept
    assert se3.quaternion_from_matrix(R.reshape(20, 100, 3, 3)).shape == (20, 100, 4)


# --------------------------------------------------------------------------- #
# perturbations
# --------------------------------------------------------------------------- #
@PROPS
@given(seed=seeds)
def test_right_perturbation_equals_left_with_adjoint(seed):
    rng = np.random.default_rng(seed)
    T = se3.random_poses(rng, 1, trans_std_m=1.0)[0]
    xi = rng.standard_normal(6) * [0.5, 0.5, 0.5, 0.2, 0.2, 0.2]
    right = se3.perturb_right(T, xi)
    assert np.allclose(right, T @ se3.se3_exp(xi), atol=1e-14)
    assert np.allclose(right, se3.perturb_left(T, adjoint(T) @ xi), atol=1e-12)
    assert np.allclose(se3.perturb_left(T, xi), se3.se3_exp(xi) @ T, atol=1e-14)


def test_perturbation_frames():
    T = pose(Rz(np.pi / 2), [1.0, 0.0, 0.0])
    step = [0.0, 0.0, 0.0, 0.1, 0.0, 0.0]
    assert np.allclose(se3.perturb_right(T, step)[:3, 3], [1.0, 0.1, 0.0])  # child x = parent y
    assert np.allclose(se3.perturb_left(T, step)[:3, 3], [1.1, 0.0, 0.0])
    turn = [0.0, 0.0, 0.3, 0.0, 0.0, 0.0]  # rotation about z
    assert np.allclose(se3.perturb_right(T, turn)[:3, 3], [1.0, 0.0, 0.0])  # about the child origin
    assert np.allclose(se3.perturb_left(T, turn)[:3, 3], [np.cos(0.3), np.sin(0.3), 0.0])  # about the parent origin


# --------------------------------------------------------------------------- #
# interpolation
# --------------------------------------------------------------------------- #
def _stream(rng, n=6):
    t = np.cumsum(rng.uniform(0.1, 1.0, n))
    T = se3.random_poses(rng, n, trans_std_m=0.5)
    # keep consecutive rotations below 180 deg apart so that the geodesic is unique
    w = rng.standard_normal((n, 3))
    w *= (rng.uniform(0.1, 2.5, n) / np.linalg.norm(w, axis=1))[:, None]
    R = np.empty((n, 3, 3))
    R[0] = T[0, :3, :3]
    for k in range(1, n):
        R[k] = R[k - 1] @ se3.so3_exp(w[k])
    T[:, :3, :3] = R
    return t, T


def test_interpolate_exact_at_knots():
    t, T = _stream(np.random.default_rng(9))
    out = se3.interpolate_poses(t, T, t)
    assert out.shape == T.shape
    assert np.allclose(out, T, atol=1e-13)
    # query order does not matter
    perm = np.random.default_rng(10).permutation(t.size)
    assert np.allclose(se3.interpolate_poses(t, T, t[perm]), T[perm], atol=1e-13)


def test_interpolate_midpoint_of_known_rotation():
    R0 = Rx(0.7)
    T = np.stack([pose(R0, [0, 0, 0]), pose(R0 @ Rz(np.pi / 2), [2.0, -4.0, 1.0])])
    mid = se3.interpolate_poses([1.0, 3.0], T, [2.0])[0]
    assert np.allclose(mid[:3, :3], R0 @ Rz(np.pi / 4), atol=1e-15)  # half-way about the body z axis
    assert np.allclose(mid[:3, 3], [1.0, -2.0, 0.5], atol=1e-15)


def test_interpolate_matches_scipy_slerp_and_linear_translation():
    rng = np.random.default_rng(11)
    t, T = _stream(rng)
    tq = rng.uniform(t[0], t[-1], 300)
    out = se3.interpolate_poses(t, T, tq)
    ref_R = Slerp(t, Rotation.from_matrix(T[:, :3, :3]))(tq).as_matrix()
    assert np.allclose(out[:, :3, :3], ref_R, atol=1e-12)
    for k in range(3):
        assert np.allclose(out[:, k, 3], np.interp(tq, t, T[:, k, 3]), atol=1e-14)
    assert np.allclose(out[:, 3], [0, 0, 0, 1])


def test_interpolate_constant_angular_speed_on_a_segment():
    rng = np.random.default_rng(12)
    t, T = _stream(rng, n=2)
    theta = se3.rotation_angle(T[0, :3, :3].T @ T[1, :3, :3])
    s = np.linspace(0, 1, 41)
    out = se3.interpolate_poses(t, T, t[0] + s * (t[1] - t[0]))
    # angle from the start grows linearly, and equal time steps turn by equal angles
    from_start = se3.rotation_angle(np.swapaxes(T[0, :3, :3], -1, -2) @ out[:, :3, :3])
    assert np.allclose(from_start, s * theta, atol=1e-12)
    steps = se3.rotation_angle(np.swapaxes(out[:-1, :3, :3], -1, -2) @ out[1:, :3, :3])
    assert np.allclose(steps, theta / 40, atol=1e-12)
    # and about one fixed (body) axis
    axes = se3.so3_log(np.swapaxes(out[:-1, :3, :3], -1, -2) @ out[1:, :3, :3])
    assert np.allclose(axes, axes[0], atol=1e-12)


def test_interpolate_out_of_range():
    t, T = _stream(np.random.default_rng(13), n=3)
    tq = np.array([t[0] - 0.5, t[0], 0.5 * (t[0] + t[1]), t[-1], t[-1] + 0.5])
    out = se3.interpolate_poses(t, T, tq)  # default "nan"
    assert np.isnan(out[[0, -1]]).all()
    assert np.isfinite(out[1:-1]).all()
    clip = se3.interpolate_poses(t, T, tq, out_of_range="clip")
    assert np.allclose(clip[0], T[0]) and np.allclose(clip[-1], T[-1], atol=1e-13)
    assert np.allclose(clip[1:-1], out[1:-1])
    with pytest.raises(InputError, match=r"t_query: expected times within .* got 2 outside"):
        se3.interpolate_poses(t, T, tq, out_of_range="raise")
    inside = se3.interpolate_poses(t, T, tq[1:-1], out_of_range="raise")
    assert np.allclose(inside, out[1:-1])
    with pytest.raises(InputError, match="out_of_range: expected 'nan', 'clip' or 'raise'"):
        se3.interpolate_poses(t, T, tq, out_of_range="extrapolate")


def test_interpolate_single_pose_and_scalar_query():
    T = se3.random_poses(np.random.default_rng(14), 1)
    out = se3.interpolate_poses([2.0], T, [2.0, 3.0])
    assert np.allclose(out[0], T[0]) and np.isnan(out[1]).all()
    assert se3.interpolate_poses([0.0, 1.0], np.stack([I4, I4]), 0.5).shape == (1, 4, 4)


@pytest.mark.parametrize("n_query", [3, 2000])
def test_interpolate_rotations_are_those_of_interpolate_poses(n_query):
    """Rotations alone, bit for bit those of the poses, with few queries (a logarithm each) or many (one per interval)."""
    rng = np.random.default_rng(16)
    t, T = _stream(rng, n=30)
    tq = rng.uniform(t[0] - 0.2, t[-1] + 0.2, n_query)
    R = se3.interpolate_rotations(t, T[:, :3, :3], tq)
    assert np.array_equal(R, se3.interpolate_poses(t, T, tq, out_of_range="clip")[:, :3, :3])
    ref = Slerp(t, Rotation.from_matrix(T[:, :3, :3]))(np.clip(tq, t[0], t[-1])).as_matrix()
    assert np.allclose(R, ref, atol=1e-12)
    assert np.array_equal(se3.interpolate_rotations(t, T[:, :3, :3], tq, check=False), R)
    assert np.array_equal(se3.interpolate_rotations([1.0], T[:1, :3, :3], [0.0, 2.0]), T[[0, 0], :3, :3])
    with pytest.raises(InputError, match="R: expected 30 rotations to match t"):
        se3.interpolate_rotations(t, T[:29, :3, :3], tq)
    with pytest.raises(InputError, match=r"R \(rotation block\)|R: expected orthonormal"):
        se3.interpolate_rotations(t, 1.1 * T[:, :3, :3], tq)


def test_interpolated_rotation_angles_are_the_angles_between_interpolated_rotations():
    """The angle between a stream's SLERP rotations at two sets of times, from quaternions, equals the angle of
    the matrices' relative rotation (queries outside the stream clipped to its ends), also across a half-turn
    interval and for a stream of one rotation; ``check=False`` poses are the checked ones."""
    rng = np.random.default_rng(17)
    t, T = _stream(rng, n=40)
    R = T[:, :3, :3].copy()
    R[7] = R[6] @ se3.so3_exp(np.array([0.0, 0.0, 3.1]))  # an interval that turns almost half a turn
    ta = rng.uniform(t[0] - 0.2, t[-1] + 0.2, 500)
    tb = np.r_[rng.uniform(t[0], t[-1], 499), ta[-1]]  # the last pair at the same instant: angle 0
    Ra, Rb = se3.interpolate_rotations(t, R, ta), se3.interpolate_rotations(t, R, tb)
    ref = se3.rotation_angle(np.swapaxes(Ra, -1, -2) @ Rb)
    got = se3.interpolated_rotation_angles(t, R, ta, tb)
    assert got.shape == (500,) and np.abs(got - ref).max() < 1e-12 and got[-1] < 1e-7
    assert ref.max() > 2.0  # (large angles are part of the comparison)
    assert np.array_equal(se3.interpolated_rotation_angles([1.0], R[:1], ta, tb), np.zeros(500))
    assert np.array_equal(se3.interpolate_poses(t, T, ta, out_of_range="clip", check=False),
                          se3.interpolate_poses(t, T, ta, out_of_range="clip"))  # fmt: skip


def test_interpolate_rejects_bad_input():
    t, T = _stream(np.random.default_rng(15), n=4)
    with pytest.raises(InputError, match="expected strictly increasing time stamps"):
        se3.interpolate_poses(t[::-1], T, t)
    with pytest.raises(InputError, match="T: expected 4 poses to match t"):
        se3.interpolate_poses(t, T[:3], t)
    with pytest.raises(InputError, match="t_query: expected finite values"):
        se3.interpolate_poses(t, T, [np.nan])


# --------------------------------------------------------------------------- #
# random draws
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("half_angle_deg", [1.0, 10.0, 45.0, 120.0])
def test_random_axes_in_cone_is_uniform_on_the_cap(half_angle_deg):
    rng = np.random.default_rng(16)
    axis = np.array([1.0, -2.0, 0.5])  # not normalised on purpose
    a = axis / np.linalg.norm(axis)
    h = np.radians(half_angle_deg)
    n = 20000
    v = se3.random_axes_in_cone(rng, n, axis, h)
    assert v.shape == (n, 3)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0)
    c = v @ a
    assert (c >= np.cos(h) - 1e-12).all()  # inside the cone
    # uniform area on the cap <=> cos of the angle to the axis uniform on [cos h, 1]
    lo = np.cos(h)
    mean, sd = (1 + lo) / 2, (1 - lo) / np.sqrt(12)
    assert abs(c.mean() - mean) < 5 * sd / np.sqrt(n)
    assert stats.kstest((c - lo) / (1 - lo), "uniform").pvalue > 1e-3
    # and uniform in azimuth: the components orthogonal to the axis average to zero
    perp = v - c[:, None] * a
    assert np.abs(perp.mean(axis=0)).max() < 5 * np.sin(h) / np.sqrt(n)


def test_random_axes_in_cone_limits_and_errors():
    rng = np.random.default_rng(17)
    v = se3.random_axes_in_cone(rng, 10, [0.0, 0.0, 2.0], 0.0)
    assert np.allclose(v, [0, 0, 1], atol=1e-15)
    v = se3.random_axes_in_cone(rng, 20000, [0.0, 1.0, 0.0], np.pi)  # whole sphere
    assert np.abs(v.mean(axis=0)).max() < 0.03
    assert (v[:, 1] < -0.99).any()
    with pytest.raises(InputError, match="axis: expected a non-zero vector"):
        se3.random_axes_in_cone(rng, 3, [0.0, 0.0, 0.0], 0.1)
    with pytest.raises(InputError, match=r"half_angle_rad: expected a value in \[0, pi\]"):
        se3.random_axes_in_cone(rng, 3, [0.0, 0.0, 1.0], 4.0)
    with pytest.raises(InputError, match=r"axis: expected shape \(3,\)"):
        se3.random_axes_in_cone(rng, 3, np.ones((2, 3)), 0.1)
    with pytest.raises(InputError, match="rng: expected a numpy.random.Generator"):
        se3.random_axes_in_cone(np.random.RandomState(0), 3, [0.0, 0.0, 1.0], 0.1)


def test_random_rotations_are_haar():
    rng = np.random.default_rng(18)
    n = 20000
    R = se3.random_rotations(rng, n)
    assert np.allclose(np.swapaxes(R, -1, -2) @ R, np.eye(3), atol=1e-14)
    assert np.allclose(np.linalg.det(R), 1.0)
    # E[R] = 0 under Haar measure; each entry has variance 1/3
    tol = 5 * np.sqrt(1 / 3 / n)
    assert np.abs(R.mean(axis=0)).max() < tol
    assert abs(np.trace(R, axis1=1, axis2=2).mean()) < 5 * np.sqrt(1 / n)  # Var(trace) = 1
    assert np.allclose((R**2).mean(axis=0), 1 / 3, atol=0.02)
    # angle density (1 - cos theta) / pi, CDF (theta - sin theta) / pi
    theta = se3.rotation_angle(R)
    assert stats.kstest(theta, lambda x: (x - np.sin(x)) / np.pi).pvalue > 1e-3
    # left invariance: a fixed rotation applied on the left leaves the angle law unchanged
    theta_left = se3.rotation_angle(Rx(1.0) @ R)
    assert stats.kstest(theta_left, lambda x: (x - np.sin(x)) / np.pi).pvalue > 1e-3


def test_random_draws_are_reproducible_and_need_a_generator():
    a = se3.random_poses(np.random.default_rng(19), 5, trans_std_m=0.1)
    b = se3.random_poses(np.random.default_rng(19), 5, trans_std_m=0.1)
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(se3.random_unit_vectors(np.random.default_rng(1), 100), axis=1), 1.0)
    for f in (se3.random_rotations, se3.random_unit_vectors):
        with pytest.raises(InputError, match="rng: expected a numpy.random.Generator"):
            f(42, 3)


# --------------------------------------------------------------------------- #
# pose_error
# --------------------------------------------------------------------------- #
def test_pose_error_known_offsets_scalar():
    rng = np.random.default_rng(20)
    T_true = se3.random_poses(rng, 1)[0]
    offset = pose(se3.so3_exp(np.radians(3.0) * np.array([0.6, 0.0, 0.8])), [0.003, 0.0, -0.004])
    rot_deg, trans_mm = se3.pose_error(T_true @ offset, T_true)  # right offset: 3 deg, 5 mm
    assert isinstance(rot_deg, float) and isinstance(trans_mm, float)
    assert np.isclose(rot_deg, 3.0, atol=1e-10)
    assert np.isclose(trans_mm, 5.0, atol=1e-9)
    assert se3.pose_error(T_true, T_true) == pytest.approx((0.0, 0.0), abs=1e-6)
    # 180 deg error
    flipped = T_true @ pose(Rx(np.pi), [0, 0, 0])
    assert np.isclose(se3.pose_error(flipped, T_true)[0], 180.0)


def test_pose_error_batched_and_nan():
    rng = np.random.default_rng(21)
    n = 7
    T_true = se3.random_poses(rng, n)
    deg = np.linspace(0.0, 90.0, n)
    mm = np.linspace(0.0, 60.0, n)
    axes = se3.random_unit_vectors(rng, n)
    dirs = se3.random_unit_vectors(rng, n)
    T_est = T_true.copy()
    T_est[:, :3, :3] = T_true[:, :3, :3] @ se3.so3_exp(axes * np.radians(deg)[:, None])
    T_est[:, :3, 3] += dirs * (mm / 1000)[:, None]
    T_est[2] = np.nan  # a failed solve
    T_est[4, 0, 3] = np.inf
    rot, trans = se3.pose_error(T_est, T_true)
    assert rot.shape == trans.shape == (n,)
    ok = np.ones(n, bool)
    ok[[2, 4]] = False
    assert np.isnan(rot[~ok]).all() and np.isnan(trans[~ok]).all()
    assert np.allclose(rot[ok], deg[ok], atol=1e-9)
    assert np.allclose(trans[ok], mm[ok], atol=1e-9)
    # one truth broadcast against many estimates
    rot_b, _ = se3.pose_error(T_est[ok], T_true[0])
    assert rot_b.shape == (ok.sum(),)
    # scalar NaN
    nan_pose = np.full((4, 4), np.nan)
    r, t = se3.pose_error(nan_pose, I4)
    assert np.isnan(r) and np.isnan(t)


def test_pose_error_rejects_bad_truth_and_shapes():
    with pytest.raises(InputError, match="T_true: expected finite values"):
        se3.pose_error(I4, np.full((4, 4), np.nan))
    with pytest.raises(InputError, match=r"T_est: expected shape \(\.\.\., 4, 4\)"):
        se3.pose_error(np.eye(3), I4)


# --------------------------------------------------------------------------- #
# check_* helpers
# --------------------------------------------------------------------------- #
def test_check_array_and_vectors():
    assert se3.check_array([[1, 2, 3]], "v", (3,)).dtype == np.float64
    with pytest.raises(InputError, match=r"v: expected shape \(\.\.\., 3\), got array of shape \(2, 2\)"):
        se3.check_vectors(np.zeros((2, 2)), "v")
    with pytest.raises(InputError, match="v: expected finite values, got 1 non-finite"):
        se3.check_vectors([0.0, np.nan, 1.0], "v")
    with pytest.raises(InputError, match="v: expected finite values, got 1 infinite"):
        se3.check_array([0.0, np.inf, np.nan], "v", (3,), allow_nan=True)
    assert np.isnan(se3.check_array([0.0, np.nan, 1.0], "v", (3,), allow_nan=True)).sum() == 1
    with pytest.raises(InputError, match="v: expected a numeric array, got str"):
        se3.check_vectors("abc", "v")
    with pytest.raises(InputError, match="xi: expected shape"):
        se3.se3_exp(np.zeros(5))
    with pytest.raises(InputError, match="omega: expected finite values"):
        se3.so3_exp([np.nan, 0.0, 0.0])
    with pytest.raises(InputError, match="v: expected shape"):
        se3.hat(np.zeros(4))
    with pytest.raises(InputError, match="W: expected shape"):
        se3.vee(np.zeros((4, 4)))


def test_check_quaternions():
    q = np.array([1.0, 0.0, 0.0, 0.0])
    assert np.array_equal(se3.check_quaternions(q), q)
    with pytest.raises(InputError, match=r"q_wxyz: expected unit quaternions .* got norms deviating by up to 1"):
        se3.matrix_from_quaternion([2.0, 0.0, 0.0, 0.0])
    assert np.allclose(se3.matrix_from_quaternion([2.0, 0.0, 0.0, 0.0], normalize=True), np.eye(3))
    with pytest.raises(InputError, match="q: expected non-zero quaternions, got 1 of norm 0"):
        se3.check_quaternions(np.zeros((1, 4)), normalize=True)
    with pytest.raises(InputError, match=r"q: expected shape \(\.\.\., 4\)"):
        se3.check_quaternions(np.zeros(3))
    with pytest.raises(InputError, match="q: expected finite values"):
        se3.check_quaternions([np.nan, 0.0, 0.0, 1.0])
    with pytest.raises(InputError, match="q_wxyz: expected unit quaternions"):
        se3.transform_from_pq([0.0, 0.0, 0.0], [0.5, 0.5, 0.5, 0.0])


def test_check_rotations():
    rng = np.random.default_rng(22)
    R = se3.random_rotations(rng, 3)
    assert np.array_equal(se3.check_rotations(R), R)
    with pytest.raises(InputError, match=r"R: expected orthonormal rotation matrices .* got a deviation of"):
        se3.check_rotations(1.01 * R)
    shear = np.eye(3)
    shear[0, 1] = 1e-3
    with pytest.raises(InputError, match="expected orthonormal"):
        se3.quaternion_from_matrix(shear)
    with pytest.raises(InputError, match=r"R: expected det\(R\) = \+1, got a reflection"):
        se3.check_rotations(np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(InputError, match=r"R: expected det\(R\) = \+1"):
        se3.so3_log(-R)
    with pytest.raises(InputError, match=r"R: expected shape \(\.\.\., 3, 3\)"):
        se3.check_rotations(np.eye(4))
    with pytest.raises(InputError, match="R: expected finite values"):
        se3.rotation_angle(np.full((3, 3), np.nan))
    # within tolerance is accepted
    se3.check_rotations(R + 1e-9)


@pytest.mark.parametrize("n", [3, 256, 257, 3000])
def test_check_rotations_batches_small_and_large(n):
    """Both ways of checking (few matrices at once, many as columns) accept and refuse the same."""
    rng = np.random.default_rng(n)
    R = se3.random_rotations(rng, n).reshape(-1, 3, 3)
    assert np.array_equal(se3.check_rotations(R), R)
    se3.check_rotations(R + 1e-9)
    bad = R.copy()
    bad[n // 2] *= 1.0 + 2e-6  # one matrix past the tolerance: R^T R = (1 + 2e-6)^2 I
    with pytest.raises(InputError, match="got a deviation of 4e-06"):
        se3.check_rotations(bad)
    dev, det = se3.rotation_defects(bad)  # per matrix, against numpy's products and determinants
    np.testing.assert_allclose(dev, np.abs(np.swapaxes(bad, 1, 2) @ bad - np.eye(3)).max(axis=(1, 2)), atol=1e-15)
    np.testing.assert_allclose(det, np.linalg.det(bad), rtol=1e-14)
    assert int(np.argmax(dev)) == n // 2
    bad = R.copy()
    bad[n - 1, :, 0] *= -1.0  # one reflection
    with pytest.raises(InputError, match=r"got a reflection \(det = -1\)"):
        se3.check_rotations(bad)
    # a stack with leading axes is checked the same way
    assert np.array_equal(se3.check_rotations(R[: n - n % 3].reshape(3, -1, 3, 3)), R[: n - n % 3].reshape(3, -1, 3, 3))


def test_check_transforms():
    T = se3.random_poses(np.random.default_rng(23), 2)
    assert np.array_equal(se3.check_transforms(T), T)
    bad_row = T.copy()
    bad_row[1, 3, 0] = 0.5
    with pytest.raises(InputError, match=r"T: expected last row \[0, 0, 0, 1\]"):
        se3.invert_transform(bad_row)
    reflect = T.copy()
    reflect[0, :3, 2] *= -1
    with pytest.raises(InputError, match=r"T \(rotation block\): expected det\(R\) = \+1"):
        se3.check_transforms(reflect)
    scaled = T.copy()
    scaled[0, :3, :3] *= 2
    with pytest.raises(InputError, match=r"T \(rotation block\): expected orthonormal"):
        se3.se3_log(scaled)
    with pytest.raises(InputError, match=r"T: expected shape \(\.\.\., 4, 4\), got array of shape \(3, 4\)"):
        se3.check_transforms(np.zeros((3, 4)))
    nan = T.copy()
    nan[0, 0, 3] = np.nan
    with pytest.raises(InputError, match="T: expected finite values"):
        se3.pq_from_transform(nan)
    with pytest.raises(InputError, match="T: expected"):
        se3.perturb_right(nan, np.zeros(6))


def test_check_timestamps():
    assert np.array_equal(se3.check_timestamps([0.0, 0.1, 0.3]), [0.0, 0.1, 0.3])
    with pytest.raises(InputError, match=r"t: expected strictly increasing time stamps, got t\[2\] = 0.1 <= t\[1\] = 0.1"):
        se3.check_timestamps([0.0, 0.1, 0.1])
    with pytest.raises(InputError, match=r"t: expected strictly increasing time stamps, got t\[1\]"):
        se3.check_timestamps([1.0, 0.5])
    assert np.array_equal(se3.check_timestamps([1.0, 1.0], strictly_increasing=False), [1.0, 1.0])
    with pytest.raises(InputError, match="t: expected a 1-D array of time stamps"):
        se3.check_timestamps(np.zeros((2, 2)))
    with pytest.raises(InputError, match="t: expected finite values"):
        se3.check_timestamps([0.0, np.nan])


# --------------------------------------------------------------------------- #
# slerp_rotations
# --------------------------------------------------------------------------- #
def test_slerp_rotations_follows_the_geodesic():
    rng = np.random.default_rng(21)
    R0 = se3.random_rotations(rng, 50)
    axis = se3.random_unit_vectors(rng, 50)
    theta = rng.uniform(0.01, 3.0, 50)  # up to 172 deg
    R1 = R0 @ se3.so3_exp(axis * theta[:, None])  # R1 = R0 exp(theta axis), the relative motion in R0's frame
    np.testing.assert_allclose(se3.slerp_rotations(R0, R1, np.zeros(50)), R0, atol=1e-12)
    np.testing.assert_allclose(se3.slerp_rotations(R0, R1, np.ones(50)), R1, atol=1e-12)
    for s in (0.25, 0.5, 0.8):
        Rs = se3.slerp_rotations(R0, R1, np.full(50, s))
        # exactly R0 exp(s theta axis): the right (body-frame) increment, not the left one
        np.testing.assert_allclose(Rs, R0 @ se3.so3_exp(axis * (s * theta)[:, None]), atol=1e-12)
        np.testing.assert_allclose(se3.rotation_angle(np.swapaxes(R0, 1, 2) @ Rs), s * theta, atol=1e-9)
        np.testing.assert_allclose(se3.rotation_angle(np.swapaxes(Rs, 1, 2) @ R1), (1 - s) * theta, atol=1e-9)


def test_slerp_rotations_broadcasts_and_takes_the_short_way():
    rng = np.random.default_rng(22)
    R0, R1 = se3.random_rotations(rng, 2)
    s = np.linspace(0.0, 1.0, 11)
    Rs = se3.slerp_rotations(R0, R1, s)  # one pair, eleven fractions
    assert Rs.shape == (11, 3, 3)
    steps = se3.rotation_angle(np.swapaxes(Rs[:-1], 1, 2) @ Rs[1:])
    total = se3.rotation_angle(R0.T @ R1)
    assert total <= np.pi
    np.testing.assert_allclose(steps, total / 10, atol=1e-9)  # constant angular speed, the shorter arc
    with pytest.raises(InputError, match="R1"):
        se3.slerp_rotations(R0, np.eye(3) * 2.0, 0.5)
