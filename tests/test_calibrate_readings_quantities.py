"""The readings of two pose files (:mod:`kinhec.calibrate.readings`) against hand computations: which file each
reading inverts, the angles between rotations, the congruence of paired rotations, the class fit's ``X``, ``Y``
and unit ratio on exact data and what the symmetries of ``A X = Y B`` make of them, and the fit score's formula."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.calibrate import readings as rd
from kinhec.geometry import se3

X = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.2, 1.2]), [0.03, -0.05, 0.09])
Y = se3.transform_from_rotation_translation(se3.so3_exp([0.1, 2.0, 0.2]), [0.8, 0.1, -0.2])


@pytest.mark.parametrize("setup, eye_pose, inv_eye", [("eye_in_hand", "cam_T_target", True),
                                                      ("eye_in_hand", "target_T_cam", False),
                                                      ("eye_to_hand", "cam_T_target", False),
                                                      ("eye_to_hand", "target_T_cam", True)])
@pytest.mark.parametrize("hand_pose", ["base_T_ee", "ee_T_base"])
def test_which_files_a_reading_inverts(setup, eye_pose, inv_eye, hand_pose):
    # solver form: A = T_base_ee, B = T_target_cam eye-in-hand, T_cam_marker eye-to-hand
    r = rd.Reading(hand_pose=hand_pose, eye_pose=eye_pose, setup=setup)
    inv_hand = hand_pose == "ee_T_base"
    assert r.inv_hand is inv_hand and r.inv_eye is inv_eye and r.klass == int(inv_hand != inv_eye)
    assert r.hand_file_inverted is inv_hand
    assert rd.Reading(swap=True, hand_pose=hand_pose, eye_pose=eye_pose, setup=setup).hand_file_inverted is inv_eye
    # the setup with its matching eye direction changes names only, not numbers
    other = rd.Reading(hand_pose=hand_pose, setup="eye_to_hand" if setup == "eye_in_hand" else "eye_in_hand",
                       eye_pose="target_T_cam" if eye_pose == "cam_T_target" else "cam_T_target")
    assert other.outcome == r.outcome and other != r


def test_angle_matrix():
    rng = np.random.default_rng(0)
    R1, R2 = se3.so3_exp(rng.normal(0, 1, (4, 3))), se3.so3_exp(rng.normal(0, 1, (3, 3)))
    D = rd.angle_matrix(R1, R2)
    ref = np.array([[np.linalg.norm(se3.so3_log(a.T @ b)) for b in R2] for a in R1])
    assert D.shape == (4, 3) and np.allclose(D, ref, atol=1e-7)
    assert np.allclose(rd.rotation_angles(R1.transpose(0, 2, 1) @ R1[0]), rd.angle_matrix(R1, R1[:1])[:, 0], atol=1e-7)


def test_congruence_of_paired_rotations():
    # R_B = R_X^T R_A R_Y: the angles between any two pairs agree whatever X and Y are
    rng = np.random.default_rng(1)
    RA = se3.so3_exp(rng.normal(0, 0.8, (12, 3)))
    RB = X[:3, :3].T @ RA @ Y[:3, :3]
    score, med, sigma = rd.congruence(RA, RB)
    assert score == 0.0 and med < 1e-7 and sigma == rd.ANGLE_FLOOR
    # two pairs exchanged: each of their rows disagrees (capped) with the 10 other pairs and agrees with the other
    # exchanged one, a mean of 10/11 CAP, less the noise's cost; every other row stays under it
    bad = RB.copy()
    bad[[2, 7]] = bad[[7, 2]]
    s_bad, med_bad, _ = rd.congruence(RA, bad, sigma=np.radians(0.1))
    assert s_bad == pytest.approx(-2 * (10 / 11 * rd.CAP - rd.NOISE_COST), rel=1e-12) and med_bad < 1e-7


@pytest.mark.parametrize("s", [1.0, 1e-3])
def test_class_fit_on_exact_poses_and_its_symmetries(s):
    rng = np.random.default_rng(2)
    H = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.6, (15, 3))), rng.normal(0.4, 0.2, (15, 3)))
    E = se3.invert_transform(Y) @ H @ X  # H X = Y (s E): E's translations in units 1 / s of the hand's
    E[:, :3, 3] /= s
    fit = rd.fit_class(H, E)
    assert fit.scale == pytest.approx(s, rel=1e-9) and fit.n == 15
    assert np.allclose(fit.X, X, atol=1e-9) and np.allclose(fit.Y, Y, atol=1e-9)
    assert fit.rot_med < 1e-9 and fit.trans_med < 1e-9
    assert fit.trans_ref == pytest.approx(np.median(np.linalg.norm(
        (se3.invert_transform(H[np.triu_indices(15, 1)[0]]) @ H[np.triu_indices(15, 1)[1]])[:, :3, 3], axis=1)))
    # both files inverted exchange X and Y; the files exchanged invert both
    Xi, Yi = fit.transforms(swap=False, hand_file_inverted=True)
    assert Xi is fit.Y and Yi is fit.X
    Xs, Ys = fit.transforms(swap=True, hand_file_inverted=False)
    assert np.allclose(Xs, np.linalg.inv(fit.X), atol=1e-12) and np.allclose(Ys, np.linalg.inv(fit.Y), atol=1e-12)


def test_fit_score_formula():
    fit = rd.ClassFit(X=np.eye(4), Y=np.eye(4), scale=1.0, scale_std=0.0, rot_med=0.02, trans_med=0.003,
                      trans_ref=0.5, n=10)
    # rotation 2 times the best, translation 1.2 times (within the 1.25 tolerance): -n (ln 2 - ln 1.25)
    assert rd.fit_score(fit, 0.01, 0.0025) == pytest.approx(-10 * (np.log(2.0) - np.log(1.25)), rel=1e-12)
    assert rd.fit_score(fit, 0.02 / 1.25, 0.003 / 1.25) == pytest.approx(0.0, abs=1e-12)
    both = -10 * (np.log(4.0) - np.log(1.25)) - 10 * (np.log(3.0) - np.log(1.25))
    assert rd.fit_score(fit, 0.005, 0.001) == pytest.approx(both, rel=1e-12)


def test_class_fit_scale_std_against_the_scatter_of_its_scale():
    """``scale_std`` of the class fit against the scatter of its ``scale`` over 200 noisy draws of one recording:
    a standard deviation, within a factor of 2 of the scatter (a variance would be orders of magnitude off)."""
    rng = np.random.default_rng(21)
    n = 30
    A = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.5, (n, 3))), rng.normal([0.5, 0, 0.4], 0.15, (n, 3)))
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.2, 1.2]), [0.03, -0.05, 0.09])
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.1, 2.0, 0.2]), [0.8, 0.1, -0.2])
    C = se3.invert_transform(A @ X) @ Y
    scales, stds = [], []
    for _ in range(200):
        Cm = C @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (n, 3)), rng.normal(0, 1e-3, (n, 3))])
        fit = rd.fit_class(A, se3.invert_transform(Cm))
        scales.append(fit.scale)
        stds.append(fit.scale_std)
    ratio = np.median(stds) / np.std(scales)
    assert 0.5 < ratio < 2.0, ratio  # 0.93 with this seed


def test_gross_outliers_among_the_poses_are_left_out_of_the_class_fit():
    # 30 pose pairs, 9 of the eye poses replaced by random ones: half the motions between them are wrong, and the
    # three-times-the-median trimming alone no longer finds the right ones
    rng = np.random.default_rng(12)
    n = 30
    A = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 0.4, (n, 3))), rng.normal([0.5, 0, 0.4], 0.15, (n, 3)))
    B = se3.invert_transform(Y) @ A @ X  # T_target_cam (eye-in-hand, solver form)
    B = B @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (n, 3)), rng.normal(0, 5e-4, (n, 3))])
    bad = rng.choice(n, 9, replace=False)
    B[bad] = se3.transform_from_rotation_translation(se3.random_rotations(rng, 9), rng.normal(0, 0.5, (9, 3)))
    ok = rd.consistent_poses(A[:, :3, :3], B[:, :3, :3])
    assert set(np.flatnonzero(~ok)) == set(bad)
    fit = rd.fit_class(A, B)
    assert np.degrees(np.linalg.norm(se3.so3_log(fit.X[:3, :3].T @ X[:3, :3]))) < 0.2
    assert np.linalg.norm(fit.X[:3, 3] - X[:3, 3]) < 3e-3 and abs(fit.scale - 1.0) < 0.02
    assert np.degrees(fit.rot_med) < 0.2  # the medians over the motions between the consistent poses
    # without outliers every pose is kept, and the wrong direction class (its angles disagree everywhere) too
    clean = np.delete(np.arange(n), bad)
    assert rd.consistent_poses(A[clean, :3, :3], B[clean, :3, :3]).all()
    assert rd.consistent_poses(A[clean, :3, :3], se3.invert_transform(B[clean])[:, :3, :3]).all()
