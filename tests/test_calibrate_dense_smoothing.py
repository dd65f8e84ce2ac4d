"""The denser stream's sample noise smoothed before interpolation (``kinhec.calibrate.dense_smoothing``): the noise
estimate, the window's limits, and what it does to the pairs of a noisy 500 Hz robot stream and a 10 Hz camera
(``benchmarks/dense_smoothing.py`` measures the clock offset and X over generated recordings)."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.calibrate import dense_smoothing as ds
from kinhec.calibrate import pairing as pr
from kinhec.calibrate.readers import PoseStream
from kinhec.geometry import se3


def _motion(t, f_hz=0.2):
    """A smooth flange motion: rotation about a tilting axis and a translation on an ellipse."""
    w = np.c_[0.4 * np.sin(2 * np.pi * f_hz * t), 0.3 * np.cos(2 * np.pi * 0.7 * f_hz * t), 0.5 * np.sin(2 * np.pi * 0.5 * f_hz * t)]
    p = np.c_[0.5 + 0.15 * np.cos(2 * np.pi * f_hz * t), 0.1 * np.sin(2 * np.pi * f_hz * t), 0.4 + 0.05 * t / t[-1]]
    return se3.transform_from_rotation_translation(se3.so3_exp(w), p)


def _noisy(T, rng, rot, trans):
    n = T.shape[0]
    return T @ se3.se3_exp(np.c_[rng.normal(0, rot, (n, 3)), rng.normal(0, trans, (n, 3))])


def _stream(t, T, name):
    return PoseStream(t=t, T=T, path=name, lines=np.arange(t.size) + 1, name=name, fmt="tum")


def test_the_noise_comes_from_the_second_differences_whatever_the_smooth_motion():
    rng = np.random.default_rng(3)
    t = np.arange(20000) / 500.0
    T0 = _motion(t)
    T = _noisy(T0, rng, 1e-3, 5e-4)
    R, p = T[:, :3, :3], T[:, :3, 3]
    rot, trans = (ds.sample_noise(inc) for inc in ds._increments(R, p))
    # se3_exp's translation part turns with the rotation noise by a second-order amount: 5 % is ample
    assert rot[0] == pytest.approx(1e-6, rel=0.05) and trans[0] == pytest.approx(2.5e-7, rel=0.05)
    assert rot[1] > 0.95 and trans[1] > 0.95  # the noise makes up the second differences
    # the motion alone: second differences are motion, no noise found, nothing smoothed
    s2, share = ds.sample_noise(np.diff(T0[:, :3, 3], axis=0))
    assert share < 0.01
    out, info = ds.smooth(t, T0, 1.0 / 30.0, pr.GAP_FACTOR)
    assert info.window == 0 and out is T0


def test_the_window_stays_within_one_interval_of_the_other_stream_and_averages_the_noise():
    rng = np.random.default_rng(4)
    t = np.arange(10000) / 500.0
    T0 = _motion(t)
    T = _noisy(T0, rng, 2e-3, 1e-3)
    for other_hz, most in ((30.0, 15), (100.0, 5), (60.0, 7)):
        out, info = ds.smooth(t, T, 1.0 / other_hz, pr.GAP_FACTOR)
        assert 5 <= info.window <= most and info.window % 2 == 1
    out, info = ds.smooth(t, T, 1.0 / 30.0, pr.GAP_FACTOR)
    assert info.window == 15  # the smooth motion leaves the largest window its residuals allow
    err = lambda A: np.sqrt(np.mean((A[:, :3, 3] - T0[:, :3, 3]) ** 2))  # noqa: E731
    # the noise left at the centre of a quadratic Savitzky-Golay window: its centre weight times the variance
    assert err(out) / err(T) == pytest.approx(np.sqrt(ds.centre_weight(15)), rel=0.1)
    dr = se3.so3_log(np.swapaxes(out[:, :3, :3], 1, 2) @ T0[:, :3, :3], check=False)
    assert np.sqrt(np.mean(dr**2)) == pytest.approx(2e-3 * np.sqrt(ds.centre_weight(15)), rel=0.1)
    # 300 Hz of samples for a 100 Hz camera: 3 per interval, no window of 5 fits in one
    t3 = np.arange(6000) / 300.0
    assert ds.smooth(t3, _noisy(_motion(t3), rng, 2e-3, 1e-3), 0.01, pr.GAP_FACTOR)[1].window == 0


def test_a_motion_the_quadratic_cannot_follow_stops_the_window():
    rng = np.random.default_rng(5)
    t = np.arange(10000) / 500.0
    T0 = _motion(t, f_hz=0.2)
    slow = ds.smooth(t, _noisy(T0, rng, 2e-4, 1e-4), 0.2, pr.GAP_FACTOR)[1].window
    T1 = _motion(t, f_hz=6.0)  # a 6 Hz vibration over 100 samples: curvature a quadratic misses beyond a few samples
    fast = ds.smooth(t, _noisy(T1, rng, 2e-4, 1e-4), 0.2, pr.GAP_FACTOR)[1].window
    assert slow == 99 and 0 <= fast < 31


def test_parts_between_gaps_are_smoothed_on_their_own():
    rng = np.random.default_rng(6)
    t = np.arange(6000) / 500.0
    t[3000:] += 0.5  # a half-second gap
    T0 = _motion(t)
    T = _noisy(T0, rng, 2e-3, 1e-3)
    out, info = ds.smooth(t, T, 1.0 / 30.0, pr.GAP_FACTOR)
    assert info.window >= 5
    # the same as smoothing the two parts apart: no sample of one part reaches into the other
    a, _ = ds._smoothed(T[:3000, :3, :3], T[:3000, :3, 3], info.window)
    np.testing.assert_allclose(out[:3000, :3, :3], a, atol=1e-15)
    assert np.isfinite(out).all()


def test_a_noisy_500_hz_robot_stream_is_smoothed_within_the_camera_interval_and_its_pairs_lose_most_noise():
    # a 10 Hz camera whose stamps fall at the same fraction of the robot's 2 ms period in every interval (the
    # streams on one grid): the pairs slide onto new noisy samples together as the offset moves
    rng = np.random.default_rng(7)
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.2, 1.2]), [0.03, -0.05, 0.09])
    Y = se3.transform_from_rotation_translation(se3.so3_exp([0.1, 2.0, 0.2]), [0.8, 0.1, -0.2])
    th = np.arange(15000) / 500.0
    A0 = _motion(th, f_hz=0.1)
    A = _noisy(A0, rng, 3e-3, 1e-3)
    offset = 0.0035
    te = np.arange(0.5, 29.0, 0.1)
    Ae = se3.interpolate_poses(th, A0, te - offset)
    B = se3.invert_transform(Ae @ X) @ Y  # T_cam_target
    B = _noisy(B, rng, 5e-4, 2e-4)
    hand, eye = _stream(th, A, "hand"), _stream(te, se3.invert_transform(B), "eye")
    raw = pr.TimePairing(hand, A, eye, B, offset, 0.02, smooth=False)
    smoothed = pr.TimePairing(hand, A, eye, B, offset, 0.02)
    assert smoothed.smoothing.window == 49 and smoothed.notes[0].startswith("hand: samples smoothed over 49")
    # the interpolated hand poses at the true offset: the noise per pair down by the window's centre weight or so
    truth = se3.interpolate_poses(th, A0, te - offset)
    e_raw = np.sqrt(np.mean((raw.at(offset)[0][:, :3, 3] - truth[:, :3, 3]) ** 2))
    e_smooth = np.sqrt(np.mean((smoothed.at(offset)[0][:, :3, 3] - truth[:, :3, 3]) ** 2))
    assert e_smooth < 0.3 * e_raw


def test_the_quadratic_filter_is_scipys_savitzky_golay():
    from scipy.signal import savgol_filter

    x = np.random.default_rng(8).normal(size=(500, 4)).cumsum(axis=0)
    for w in (5, 9, 31, 99):
        np.testing.assert_allclose(ds.savgol_quadratic(x, w), savgol_filter(x, w, 2, axis=0), rtol=0, atol=1e-10)
        impulse = np.zeros((2 * w + 1, 1))
        impulse[w] = 1.0
        assert ds.savgol_quadratic(impulse, w)[w, 0] == pytest.approx(ds.centre_weight(w), rel=1e-12)
