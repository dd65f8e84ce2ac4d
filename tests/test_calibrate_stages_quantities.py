"""The staged calibrate pipeline (:mod:`kinhec.calibrate.stages`, options, inputs, frames) against ground truth and
exact identities: the reading's units when the files are exchanged, the reported clock offset, the residuals' units,
the eye-bias prior from ``intrinsics_std``, the scale check's delta method and the rig's composed deviations."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from kinhec.calibrate import calibrate
from kinhec.calibrate.stages import rig, verdict
from kinhec.geometry import se3

from helpers.recordings import X_TRUE, streams, write_tum


@pytest.fixture(scope="module")
def exchanged(tmp_path_factory):
    """Stamped streams on one clock, the hand's in millimetres, given exchanged (--hand the camera's file) with
    their units as given (``m,mm``), a stated clock offset of 0 and ``intrinsics_std`` (2 %, 0.005)."""
    d = tmp_path_factory.mktemp("exchanged")
    t, A, C = streams(np.random.default_rng(3), n=40)
    A_mm = A.copy()
    A_mm[:, :3, 3] *= 1000.0
    hand, eye = write_tum(d / "hand_mm.txt", t, A_mm), write_tum(d / "eye_m.txt", t, C)
    res = calibrate(str(eye), str(hand), setup="eye_in_hand", offset=0.0, units="m,mm", intrinsics_std=(0.02, 0.005))
    return res, hand


def test_exchanged_files_keep_their_units(exchanged):
    res, hand = exchanged
    assert res.inputs["hand"] == str(hand) and res.inputs["units"] == "mm,m"
    # the hand's millimetres converted as the hand's: X within 4 sigma of the truth (sigma about 1 to 10 mm)
    err = np.abs(res.X[:3, 3] - X_TRUE[:3, 3])
    assert res.determined and np.all(err < 4 * res.X_std[3:] + 1e-4), (err, res.X_std)


def test_a_stated_clock_offset_is_reported_as_stated(exchanged):
    res, _ = exchanged
    assert res.time_offset_s == 0.0 and res.time_offset_std_s is None


def test_rotation_residuals_are_the_pairs_angles_in_degrees(exchanged):
    res, _ = exchanged
    A, B = res.pairs
    E = se3.invert_transform(A @ res.X) @ res.Y @ B  # A X = Y B eye-in-hand: E is the pair's discrepancy
    angle = np.degrees(np.linalg.norm(se3.so3_log(E[:, :3, :3]), axis=-1))
    assert np.allclose(res.residuals["rot_deg"], angle, rtol=1e-9, atol=1e-12)


def test_intrinsics_std_sets_the_eye_bias_prior(exchanged):
    # (focal length fraction, principal point over focal length): the rotations and shifts take the second,
    # the depth stretches the first
    res, _ = exchanged
    p = res.observability["eye_bias"]["prior_std"]
    assert [p[k] for k in ("rot_x_rad", "rot_y_rad", "shift_x_per_m", "shift_y_per_m")] == [0.005] * 4
    assert [p[k] for k in ("depth_stretch", "depth_stretch_turning")] == [0.02] * 2


@pytest.mark.parametrize("r, r_std", [(2.0, 0.3), (0.5, 0.12), (3.0, 0.2), (0.3, 0.02)])
def test_scale_check_uses_the_delta_method_on_log_r(r, r_std):
    # std(log r) = std(r) / r: the eye translations are not metric when |log r| exceeds three of them
    eye = SimpleNamespace(path="eye.txt")
    warn = verdict.check_scale(eye, SimpleNamespace(scale=r, scale_std=r_std), False)
    assert (warn is not None) == (abs(math.log(r)) > 3 * r_std / r)
    assert verdict.check_scale(eye, SimpleNamespace(scale=r, scale_std=r_std), True) is None


def test_rig_composed_deviations_of_an_isotropic_covariance():
    # inv(I) X2 with X2's covariance isotropic in rotation (a) and translation (b): the composed transform's
    # deviations are a and b exactly (the first order of the retraction, whatever X2's rotation)
    X2 = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -1.0, 0.5]), [0.1, 0.2, -0.3])
    a, b = 1e-3, 2e-3
    Z, s = rig.compose_std(np.eye(4), np.zeros((6, 6)), X2, np.diag([a * a] * 3 + [b * b] * 3))
    assert np.allclose(Z, X2, atol=1e-15)
    assert np.allclose(s, [a] * 3 + [b] * 3, rtol=1e-6, atol=0)


def test_units_given_override_the_files_own():
    # a file that states millimetres (Tabb's, say) read with units given as metres: the option wins, exactly
    from kinhec.calibrate.frames import eye_solver_form, hand_metric

    t, A, C = streams(np.random.default_rng(4), n=5)
    s = SimpleNamespace(T=A, direction="base_T_ee", units="mm")
    assert np.array_equal(hand_metric(s, None, "m"), A)
    scaled = hand_metric(s, None, None)
    assert np.array_equal(scaled[:, :3, :3], A[:, :3, :3])
    assert np.allclose(scaled[:, :3, 3], A[:, :3, 3] / 1000, rtol=1e-15)
    e = SimpleNamespace(T=C, direction="cam_T_target", units="mm", fmt="tum", span=lambda: "eye")
    assert np.allclose(eye_solver_form(e, None, "m", "eye_to_hand"), C, rtol=0, atol=0)


def test_offset_curve_is_21_offsets_a_period_apart_centred_on_the_estimate(tmp_path):
    t, A, C = streams(np.random.default_rng(5), n=40)
    hand, eye = write_tum(tmp_path / "hand.txt", t, A), write_tum(tmp_path / "eye.txt", t + 0.03, C)
    res = calibrate(str(hand), str(eye), setup="eye_in_hand", eye_pose="cam_T_target")
    assert res.time_offset_std_s is not None  # estimated
    offs, cost = np.asarray(res.offset_curve["offset_s"]), np.asarray(res.offset_curve["cost"])
    # period 0.5 s (both streams): the estimate at the centre, ten periods either side
    assert np.allclose(offs, res.time_offset_s + 0.5 * np.arange(-10, 11), rtol=0, atol=1e-12)
    assert cost.shape == (21,) and int(np.argmin(cost)) == 10
