"""Cross-check of kinhec.solvers against OpenCV's calibrateHandEye / calibrateRobotWorldHandEye.

OpenCV is an independent implementation (dev extra); it is used only here.

Mapping.  ``calibrateHandEye(R_gripper2base, t_gripper2base, R_target2cam,
t_target2cam)`` forms, for every pair ``i < j`` of absolute poses, the motions
``inv(Hg_j) Hg_i`` and ``Hc_j inv(Hc_i)`` and returns ``cam2gripper``.  With
``Hg = A_i`` (``T_base_ee``) and ``Hc = inv(B_i)`` those motions are
``inv(A_j) A_i`` and ``inv(B_j) B_i``: the kinhec ``A X = X B`` problem, in both
configurations, and the output is ``X``.

``calibrateRobotWorldHandEye(R_world2cam, ..., R_base2gripper, ...)`` solves
``A' X' = Z' B'`` with ``A' = T_cam_world``, ``B' = T_gripper_base``,
``X' = T_world_base``, ``Z' = T_cam_gripper``, i.e. the kinhec equation
``A_i X = Y B_i`` inverted: ``A' = inv(B_i)``, ``B' = inv(A_i)``,
``X' = inv(Y)``, ``Z' = inv(X)``.

Known deviations (see docs/solvers.md), each pinned below:

* OpenCV uses all N(N-1)/2 pose pairs; kinhec solves the motions it is given
  (consecutive keyframes in the benchmark).  On the same all-pair motions the
  methods agree to machine precision, except
* TSAI: recent OpenCV drops motions whose ``|2 sin(theta/2)|`` is outside
  [0.3, 1.7] (rotation below ~17 deg or above ~116 deg); kinhec keeps them;
* ANDREFF: OpenCV solves the 12-unknown system (rotation and translation rows
  together); kinhec takes the rotation from the rotation rows alone, so the two
  differ by about the noise (a median 0.005 deg on noisy chains, docs/solvers.md);
* SHAH / LI on the inverted equation are the same computation; in kinhec's
  orientation Shah's rotations coincide and its translations differ slightly,
  Li differs slightly in both.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.chains import CONFIGURATIONS, make_chain

from kinhec import solvers
from kinhec.geometry import se3

cv2 = pytest.importorskip("cv2")

HAND_EYE = {
    "tsai_lenz": cv2.CALIB_HAND_EYE_TSAI,
    "park_martin": cv2.CALIB_HAND_EYE_PARK,
    "horaud_dornaika": cv2.CALIB_HAND_EYE_HORAUD,
    "andreff": cv2.CALIB_HAND_EYE_ANDREFF,
    "daniilidis": cv2.CALIB_HAND_EYE_DANIILIDIS,
}
ROBOT_WORLD = {"shah": cv2.CALIB_ROBOT_WORLD_HAND_EYE_SHAH, "li_kronecker": cv2.CALIB_ROBOT_WORLD_HAND_EYE_LI}
C2 = dict(robot_noise=(0.0005, 0.0003), camera_noise=(0.002, 0.001, 0.001, 0.003))


def cv_hand_eye(A_abs, B_abs, method):
    Hc = se3.invert_transform(B_abs)
    R, t = cv2.calibrateHandEye(
        [a[:3, :3] for a in A_abs], [a[:3, 3:4] for a in A_abs],
        [h[:3, :3] for h in Hc], [h[:3, 3:4] for h in Hc],
        method=method,
    )
    return se3.transform_from_rotation_translation(R, t[:, 0])


def cv_robot_world(A_abs, B_abs, method):
    Ai, Bi = se3.invert_transform(A_abs), se3.invert_transform(B_abs)
    R_bw, t_bw, R_gc, t_gc = cv2.calibrateRobotWorldHandEye(
        [b[:3, :3] for b in Bi], [b[:3, 3:4] for b in Bi],
        [a[:3, :3] for a in Ai], [a[:3, 3:4] for a in Ai],
        method=method,
    )
    X = se3.invert_transform(se3.transform_from_rotation_translation(R_gc, t_gc[:, 0]))
    Y = se3.invert_transform(se3.transform_from_rotation_translation(R_bw, t_bw[:, 0]))
    return X, Y


def all_pairs(A_abs, B_abs):
    """The motions OpenCV forms, in its order: ``inv(A_j) A_i``, ``inv(B_j) B_i`` for i < j."""
    i, j = np.triu_indices(A_abs.shape[0], 1)
    return se3.invert_transform(A_abs[j]) @ A_abs[i], se3.invert_transform(B_abs[j]) @ B_abs[i]


def err(T_est, T_true):
    return np.array(se3.pose_error(T_est, T_true))


def _chain(seed, configuration, n=12, **kw):
    """A small-arm chain whose pair motions all stay below 168 deg.

    Near 180 deg the quaternion sign of a motion is ambiguous; kinhec aligns the
    two sides with a first estimate, OpenCV takes ``w >= 0``.  Chains that
    come that close are skipped (deterministically) to compare like with like.
    """
    rng = np.random.default_rng(seed)
    while True:
        ch = make_chain(rng, n, configuration=configuration, workspace="small_arm", **kw)
        A, _ = all_pairs(ch.A_abs, ch.B_abs)
        if np.degrees(se3.rotation_angle(A[:, :3, :3])).max() < 168.0:
            return ch


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_noise_free_agreement(configuration):
    for seed in range(3):
        ch = _chain(seed, configuration)
        A, B = ch.motions()
        for name, method in HAND_EYE.items():
            X_cv = cv_hand_eye(ch.A_abs, ch.B_abs, method)
            assert err(X_cv, ch.X).max() < 1e-6, name
            assert err(getattr(solvers, name)(A, B), X_cv).max() < 1e-6, name
        for name, method in ROBOT_WORLD.items():
            X_cv, Y_cv = cv_robot_world(ch.A_abs, ch.B_abs, method)
            X, Y = getattr(solvers, name)(ch.A_abs, ch.B_abs)
            assert err(X, X_cv).max() < 1e-6 and err(Y, Y_cv).max() < 1e-6, name
            assert err(X_cv, ch.X).max() < 1e-6, name


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_noisy_same_motions_agree_to_machine_precision(configuration):
    tight = 1e-8  # deg, mm
    for seed in range(3):
        ch = _chain(10 + seed, configuration, **C2)
        Ap, Bp = all_pairs(ch.A_abs, ch.B_abs)
        for name in ("park_martin", "horaud_dornaika", "daniilidis"):
            X_cv = cv_hand_eye(ch.A_abs, ch.B_abs, HAND_EYE[name])
            assert err(getattr(solvers, name)(Ap, Bp), X_cv).max() < tight, name
        # TSAI: OpenCV keeps the motions with 0.3 <= 2 sin(theta/2) <= 1.7 on both sides (recent
        # versions) or all of them (older ones); kinhec on the same set agrees
        X_cv = cv_hand_eye(ch.A_abs, ch.B_abs, HAND_EYE["tsai_lenz"])
        p_a = 2 * np.sin(se3.rotation_angle(Ap[:, :3, :3]) / 2)
        p_b = 2 * np.sin(se3.rotation_angle(Bp[:, :3, :3]) / 2)
        keep = (p_a >= 0.3) & (p_a <= 1.7) & (p_b >= 0.3) & (p_b <= 1.7)
        d_kept = err(solvers.tsai_lenz(Ap[keep], Bp[keep]), X_cv).max()
        d_all = err(solvers.tsai_lenz(Ap, Bp), X_cv).max()
        assert min(d_kept, d_all) < tight
        # ANDREFF: OpenCV solves the 12-unknown system (rotation and translation rows together); kinhec
        # takes the rotation from the rotation rows alone (as the published toolkit does), so on noisy data
        # the two differ by about the noise: close to each other, and kinhec at least as close to the truth
        X_cv = cv_hand_eye(ch.A_abs, ch.B_abs, HAND_EYE["andreff"])
        X = solvers.andreff(Ap, Bp)
        e_k, e_cv = err(X, ch.X), err(X_cv, ch.X)
        assert (err(X, X_cv) < np.maximum(e_k, e_cv) + [1e-3, 0.1]).all()
        assert e_k[0] < 1.5 * e_cv[0] + 0.01
        # the rotation is the null vector of the stacked (I - R_A (x) R_B), found here with numpy's SVD
        K = np.concatenate([np.eye(9) - np.kron(a[:3, :3], b[:3, :3]) for a, b in zip(Ap, Bp)])
        U = np.linalg.svd(K)[2][-1].reshape(3, 3)
        U = np.sign(np.linalg.det(U)) * U
        u, _, vt = np.linalg.svd(U)
        assert np.degrees(se3.rotation_angle(X[:3, :3].T @ (u @ vt))) < tight


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_noisy_robot_world_agreement(configuration):
    tight = 1e-8
    for seed in range(3):
        ch = _chain(20 + seed, configuration, n=15, **C2)
        A_inv, B_inv = se3.invert_transform(ch.A_abs), se3.invert_transform(ch.B_abs)
        for name, method in ROBOT_WORLD.items():
            f = getattr(solvers, name)
            X_cv, Y_cv = cv_robot_world(ch.A_abs, ch.B_abs, method)
            # the equation OpenCV solves: inv(B_i) inv(Y) = inv(X) inv(A_i)
            Xp, Yp = f(B_inv, A_inv)
            assert err(se3.invert_transform(Yp), X_cv).max() < tight, name
            assert err(se3.invert_transform(Xp), Y_cv).max() < tight, name
            # kinhec's own orientation: close, and as close to the truth
            X, Y = f(ch.A_abs, ch.B_abs)
            e_k, e_cv = err(X, ch.X), err(X_cv, ch.X)
            assert (err(X, X_cv) < np.maximum(e_k, e_cv) + [1e-3, 0.05]).all(), name
            assert (e_k < 2 * e_cv + [0.02, 0.5]).all(), name
            if name == "shah":  # Shah's rotations do not depend on the orientation of the equation
                assert err(X, X_cv)[0] < tight and err(Y, Y_cv)[0] < tight


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_noisy_protocol_motions_close_to_opencv(configuration):
    """kinhec on consecutive motions (the benchmark protocol) against OpenCV on all pairs."""
    for seed in range(4):
        ch = _chain(30 + seed, configuration, n=20, **C2)
        A, B = ch.motions()
        for name, method in HAND_EYE.items():
            X_cv = cv_hand_eye(ch.A_abs, ch.B_abs, method)
            X = getattr(solvers, name)(A, B)
            d = err(X, X_cv)
            assert d[0] < 0.25 and d[1] < 3.0, (name, d)
            # neither is systematically far from the truth
            assert err(X, ch.X)[0] < 0.3 and err(X_cv, ch.X)[0] < 0.3, name
