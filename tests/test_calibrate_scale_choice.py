"""Who chooses the scale of the eye translations: the data decisively, the user's statement, or nobody (a refusal
showing both answers) -- kinhec.calibrate.free_scale.decide / restart and ``--scale metric``."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from kinhec.calibrate import calibrate
from kinhec.calibrate import free_scale as fs
from kinhec.geometry import se3
from kinhec.util.errors import InputError

from helpers.paths import REALDATA

KUKA_2 = REALDATA / "rwhe_calib" / "kuka_2"

A_NOISE = 1e-3
BASE = np.r_[np.eye(6), -np.eye(6)]  # twelve pairs, residual +-a along each axis: chi-square 6 each under a^2/6 I


def _fit(factor: float, scale: float, t_x_mm: float, std_mm: float = 1.0):
    """A fit whose residuals are ``factor`` times the base ones (log-likelihood -36 log((f a)^2 / 6) - 36), with
    X a pure translation along x and every standard deviation ``std_mm``."""
    X = np.eye(4)
    X[0, 3] = t_x_mm / 1000
    return SimpleNamespace(residuals=factor * A_NOISE * BASE, inliers=np.ones(12, bool), scale=scale,
                           noise_cov=(factor * A_NOISE) ** 2 / 6.0 * np.eye(6), X=X, Y=np.eye(4),
                           cov=(std_mm / 1000) ** 2 * np.eye(14), scale_data_std=0.002, offset=None)


def _factor_for_gain(g: float) -> float:
    # gain = 36 log(1 / f^2) with the held fit at scale 1 (no prior penalty): f = exp(-g / 72)
    return float(np.exp(-g / 72.0))


@pytest.mark.parametrize(("gain", "shift_mm", "verdict", "free_scale"), [
    (10.0, 3.0, "free", 1.02),       # 10 > 6.25 + 2.30: decisive
    (7.0, 3.0, "neither", 1.02),     # within the band, X 3 sigma apart
    (5.0, 3.0, "neither", 1.02),     # below the margin but within the band
    (3.5, 3.0, "held", 1.02),        # 3.5 <= 6.25 - 2.30
    (7.0, 0.8, "held", 1.02),        # within the band, but both give the same X within one sigma
    (7.0, 3.0, "held", 1.0015),  # within the band, X apart, but at the same scale within its 0.002: not the reading
])
def test_decide_has_a_band_round_the_margin(gain, shift_mm, verdict, free_scale):
    held = _fit(1.0, 1.0, 0.0)
    free = _fit(_factor_for_gain(gain), free_scale, shift_mm)
    v, g, needed, shift = fs.decide(free, held)
    assert g == pytest.approx(gain, rel=1e-9)
    assert needed == pytest.approx(np.log(100.0) + 0.5 * np.log(12.0), rel=1e-12)  # 6.2477
    assert shift == pytest.approx(shift_mm, rel=1e-9)
    assert v == verdict


def test_x_shift_measures_rotation_in_x_frame_over_its_sigma():
    held = _fit(1.0, 1.0, 0.0)
    free = _fit(1.0, 1.0, 0.0)
    free.X = held.X.copy()
    free.X[:3, :3] = se3.so3_exp(np.array([0.0, 0.0, 0.004]))  # 4 mrad about z against a sigma of 1 mrad
    free.cov = np.diag([1e-6] * 6 + [1e-6] * 8)
    assert fs.x_shift(free, held) == pytest.approx(4.0, rel=1e-9)


def _decision(ratio=1.07, std=0.01):
    return SimpleNamespace(scale=ratio, scale_std=std)


def test_restart_refuses_within_the_band_and_shows_both_answers():
    # gain 6 in likelihood plus the held fit's prior penalty 0.5 (log(1.0094) / 0.005)^2 = 1.75: 7.75, in the band
    held = _fit(1.0, 1.0094, 17.7)
    free = _fit(_factor_for_gain(6.0), 1.0223, 22.8)
    assert fs.decide(free, held)[1] == pytest.approx(6.0 + 0.5 * (np.log(1.0094) / 0.005) ** 2, rel=1e-9)
    fit = dict(eye_in_hand=True, scale0=1.0)
    with pytest.raises(InputError) as err:
        fs.restart(fit, held, _decision(), lambda: (free, dict(fit)), where="h.txt")
    msg = str(err.value)
    assert msg.startswith("h.txt: the data cannot choose the scale of the eye translations")
    assert "(1) --scale free" in msg and "(2) --scale metric" in msg and "--force" in msg
    # each answer with the transform it would publish
    assert "X translation (22.8, 0.0, 0.0) mm, scale 1.0223" in msg and "--x 0.0228 " in msg
    assert "X translation (17.7, 0.0, 0.0) mm, scale 1.0094" in msg and "--x 0.0177 " in msg
    # --force: the metric fit kept, the refusal as a warning
    warnings = []
    sol, kept, note = fs.restart(fit, held, _decision(), lambda: (free, dict(fit)),
                                 force=True, warnings=warnings)
    assert sol is held and kept is fit and note is None
    assert len(warnings) == 1 and warnings[0].endswith("(--force: kept the metric fit)")


def test_restart_frees_only_decisively_and_not_when_near_metric():
    held = _fit(1.0, 1.0094, 17.7)
    free = _fit(_factor_for_gain(12.0), 1.0223, 22.8)
    fit = dict(eye_in_hand=True, scale0=1.0)
    sol, _, note = fs.restart(fit, held, _decision(), lambda: (free, dict(fit)))
    assert sol is free and "estimated freely" in note
    # translations near metric: no second fit at all
    called = []
    sol, _, note = fs.restart(fit, held, _decision(1.004, 0.01),
                              lambda: called.append(1) or (free, dict(fit)))
    assert sol is held and note is None and not called


@pytest.fixture(scope="module")
def kuka_2_files(tmp_path_factory):
    """RWHE kuka_2's flange poses written inverted (``T_ee_base``), the last one left out, and OpenCV's 28 per-view
    camera poses: a recording whose reading the files must tell, and whose translations are 2-3 % longer than the
    robot's."""
    if not (KUKA_2 / "opencv_reference_calibration.json").exists():
        pytest.skip(f"{KUKA_2}: the RWHE kuka_2 data is missing")
    ref = json.loads((KUKA_2 / "opencv_reference_calibration.json").read_text())
    E = np.array([v["T_cam_target"] for v in ref["per_view"]], dtype=float)
    A = se3.invert_transform(np.loadtxt(KUKA_2 / "RobotPosesVec.txt").reshape(-1, 4, 4))
    d = tmp_path_factory.mktemp("kuka_2")
    np.savetxt(d / "RobotPosesVec.txt", A[:27].reshape(27, 16))
    np.savetxt(d / "cam_T_target.txt", E.reshape(28, 16))  # the name states the direction
    return d / "RobotPosesVec.txt", d / "cam_T_target.txt"


def test_a_freed_scale_publishes_what_scale_free_publishes(kuka_2_files):
    # unstated, the scale is freed; the X it publishes is the one a stated --scale free gives, with the
    # intrinsics' systematic error still in sigma
    hand, eye = kuka_2_files
    auto = calibrate(hand, eye)
    free = calibrate(hand, eye, scale="free")
    assert any("the scale is estimated freely" in n for n in auto.notes)
    np.testing.assert_allclose(auto.X, free.X, rtol=0, atol=1e-12)
    assert auto.scale == pytest.approx(free.scale, rel=1e-12)
    assert np.all(auto.X_std[3:] >= free.X_std[3:])
    # stated metric: never freed, the scale within three of its prior's 0.5 %
    metric = calibrate(hand, eye, scale="metric")
    assert not any("estimated freely" in n for n in metric.notes)
    assert abs(np.log(metric.scale)) < 3 * 0.005
    assert np.linalg.norm(metric.X[:3, 3] - free.X[:3, 3]) > 2e-3  # the two readings differ by millimetres here


def test_restart_that_keeps_the_metric_fit_says_the_first_look_was_off():
    # the coarse ratio far from 1, but the free fit loses on the pairs: metric, and the note says why
    held = _fit(1.0, 1.0024, 17.7)
    free = _fit(_factor_for_gain(-7.0), 1.0014, 17.8)
    fit = dict(eye_in_hand=True, scale0=1.0, scale_prior_std=0.005)
    sol, kept, note = fs.restart(fit, held, _decision(1.67, 0.05), lambda: (free, dict(fit, scale_prior_std=None)))
    assert sol is held and kept is fit
    assert note.startswith("the eye translations looked 1.67 times the robot's at the first look")
    assert "gives 1.0014 (1.0024 under the prior)" in note and note.endswith("the translations are metric")
