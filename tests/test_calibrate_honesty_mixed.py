"""A determined answer's error bars hold on mixed-track recordings on one clock (benchmarks/calibrate_honesty_mixed).

The recordings of ``MIXED_ONE_CLOCK`` (``tests/helpers/recordings.py``: hand and camera at 60 Hz on one clock, a hand
stream with 2.5 mrad of per-sample noise, PnP camera poses, 11 % random-pose outliers) that were answered
"determined" with ``X`` far outside its error bars, one of each cause: seed 0 (the clock offset two sample periods
off), 7 (3.8 ms off, pulled by the interpolation of the noisy hand stream), 15 (a second rotation axis within the
hand's noise), 20 (a free scale won by the pairs the fit under the prior had labelled outliers) and 1 (a fit that
follows where its noise model is estimated: the rounds do not settle, ``kinhec.calibrate.solve.noise_feedback``).  Each must now be
right within its error bars (the NEES of ``X`` below chi-square's 99.9 % quantile with 6 dof) or not determined.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from kinhec.calibrate import calibrate
from kinhec.calibrate import pairing as pr
from kinhec.calibrate import uncertainty as unc
from kinhec.calibrate.observability import observability
from kinhec.calibrate.readers import PoseStream
from kinhec.geometry import se3
from kinhec.util.errors import InputError

from helpers.recordings import calibrated_mixed

CHI2_6_999 = float(stats.chi2.ppf(0.999, 6))


def _nees(res, X_true) -> float:
    e = np.r_[se3.so3_log(res.X[:3, :3].T @ X_true[:3, :3]), X_true[:3, 3] - res.X[:3, 3]]
    return float(e @ np.linalg.solve(res.cov[:6, :6], e))


@pytest.mark.parametrize("seed", [0, 1, 7, 15, 20])
def test_determined_means_within_the_error_bars(seed, tmp_path):
    try:
        g, res = calibrated_mixed(tmp_path, seed=seed)
    except InputError as e:
        # a refusal is an answer that is not determined: since the dwells are drawn in 0.6-1.4 s the recording of
        # seed 7 is another scene, whose clock offset the angular speeds do not fix; it is refused, and says why.
        # (seed 15's hand direction was misread by the conventions' coarse fit through its 11 % gross outliers and
        # refused by the mount check; read right since the coarse fit leaves out the poses that change the motions'
        # angles, it is answered "not determined")
        assert seed == 7 and "the clock offset is not determined" in str(e), (seed, str(e))
        return
    nees = _nees(res, g.X)
    assert not res.determined or nees < CHI2_6_999, (seed, nees, res.time_offset_s, res.scale, res.warnings)
    if seed == 0:  # this one determines X (rotation about several axes, the target long in view): answered
        assert res.determined, res.warnings
        assert abs(res.time_offset_s) < 3 * res.time_offset_std_s + 1e-4, (res.time_offset_s, res.time_offset_std_s)


def test_widen_moves_the_others_along_their_regression():
    # a 2x2 Gaussian: x = 2 d + u; widening d's variance by v adds 4 v to x's and 2 v to the covariance
    cov = np.array([[4.0 * 0.5 + 1.0, 2.0 * 0.5], [2.0 * 0.5, 0.5]])  # var d = 0.5, var u = 1
    out = unc.widen(cov, 1, 0.3)
    want = np.array([[4.0 * 0.8 + 1.0, 2.0 * 0.8], [2.0 * 0.8, 0.8]])
    np.testing.assert_allclose(out, want, rtol=1e-14)


def test_interpolation_bias_follows_noise_and_motion():
    # a hand stream turning at a constant rate about z, m = 4 mrad per sample, with 2.5 mrad of noise per rotation
    # component (seeded) and 0.1 mm per translation component on a constant 1 mm step; the eye stream sparser
    rng = np.random.default_rng(11)
    n, period, m, sig = 3000, 1.0 / 60.0, 4e-3, 2.5e-3
    t = np.arange(n) * period
    R = se3.so3_exp(np.c_[np.zeros(n), np.zeros(n), m * np.arange(n)]) @ se3.so3_exp(rng.normal(0.0, sig, (n, 3)))
    p = np.c_[1e-3 * np.arange(n), np.zeros(n), np.zeros(n)] + rng.normal(0.0, 1e-4, (n, 3))
    A = se3.transform_from_rotation_translation(R, p)
    te = t[5:-5:7] + 0.3 * period
    B = np.repeat(np.eye(4)[None], te.size, axis=0)
    hand = PoseStream(t=t, T=A, path="hand", lines=np.arange(n) + 1, name="hand", fmt="tum")
    eye = PoseStream(t=te, T=B, path="eye", lines=np.arange(te.size) + 1, name="eye", fmt="tum")
    # (the samples as they are: the smoothing of the denser stream is checked below)
    p0 = pr.TimePairing(hand, A, eye, B, 0.0, 0.0, smooth=False)
    # s* = 3 sigma^2 / (6 sigma^2 + mean |m|^2), m^2 the squared increment (its noise included: 2 sigma^2 per component)
    rot = 3 * sig**2 / (6 * sig**2 + m**2 + 6 * sig**2)
    trans = 3 * 1e-8 / (6 * 1e-8 + 1e-6 + 6 * 1e-8)
    got = p0.interpolation_bias(0.0, (1.0, 1.0))
    assert got == pytest.approx(max(rot, trans) * period, rel=0.1)
    # the eye stamps spread over the hand's intervals (another rate): the pairs pull every way, no bias
    te2 = t[5:-5:7] + np.linspace(0.0, 1.0, t[5:-5:7].size, endpoint=False) * period
    eye2 = PoseStream(t=te2, T=B[: te2.size], path="eye", lines=np.arange(te2.size) + 1, name="eye", fmt="tum")
    spread = pr.TimePairing(hand, A, eye2, B[: te2.size], 0.0, 0.0, smooth=False).interpolation_bias(0.0, (1.0, 1.0))
    assert spread < 0.02 * got
    # the residuals' noise caps the stream's: a tenth of the variance, a tenth of the bias or so
    capped = p0.interpolation_bias(0.0, (sig**2 / 10, 1e-9))
    assert capped == pytest.approx(3 * sig**2 / 10 / (6 * sig**2 / 10 + m**2 + 6 * sig**2) * period, rel=0.1)
    # smoothed over the 7 samples between two eye stamps, neighbouring samples share most of their noise: the
    # interpolated pose's noise hardly changes across an interval, and so does the pull
    smoothed = pr.TimePairing(hand, A, eye, B, 0.0, 0.0)
    assert smoothed.smoothing.window == 7 and "smoothed over 7" in smoothed.notes[0]
    assert smoothed.interpolation_bias(0.0, (1.0, 1.0)) < 0.3 * got


def test_a_second_axis_within_the_noise_is_not_determined():
    # rotations about z over +-0.2 rad and about x over +-10 mrad: above 0.1 mrad of noise, within 5 mrad of it
    rng = np.random.default_rng(5)
    n = 200
    w = np.c_[rng.uniform(-1e-2, 1e-2, n), np.zeros(n), rng.uniform(-0.2, 0.2, n)]
    A = se3.transform_from_rotation_translation(se3.so3_exp(w), rng.normal(0.0, 0.1, (n, 3)))
    cov = np.eye(12) * 1e-8
    quiet, _ = observability(A, cov, np.full(6, 1e-4), rot_noise_var=(1e-4) ** 2)
    noisy, warn = observability(A, cov, np.full(6, 1e-4), rot_noise_var=(5e-3) ** 2)
    # lambda2_noise = N sigma^2 / sum |w|^2, by hand
    tot = float(np.sum(se3.so3_log(A[:, :3, :3], check=False) ** 2))
    assert noisy["lambda2_noise"] == pytest.approx(n * 5e-3**2 / tot, rel=0.05)
    assert noisy["lambda2"] < 4 * noisy["lambda2_noise"] < 4 * 4 * quiet["lambda2_noise"] * 1e3
    assert quiet["determined"] and not noisy["determined"]
    assert any("no more than its noise" in w_ for w_ in warn), warn


def test_gross_outliers_no_longer_mislead_the_hand_direction_and_an_impossible_mount_is_refused(tmp_path, monkeypatch):
    """Seed 123: the 11 % gross outliers used to mislead the conventions stage's coarse fit, which read the hand file
    the wrong way round (``ee_T_base``, the hand direction being unstated), and the refined fit put the camera 1642 mm
    from the flange, refused as no mounting allows.  The coarse fit now takes its motions between the poses that keep
    their rotation angles (``readings.consistent_poses``): the hand file is read as written and the answer lies
    within its error bars.  A camera truly more than 0.5 m from the flange is still refused, naming the reading it
    was fitted in and the next one."""
    import helpers.recordings as rec

    g, res = calibrated_mixed(tmp_path, seed=123)
    assert res.determined and _nees(res, g.X) < CHI2_6_999
    assert res.inputs["hand_pose"] == "base_T_ee"  # as the file was written
    far = se3.transform_from_rotation_translation(se3.so3_exp([0.3, -0.2, 1.2]), [0.45, -0.3, 0.2])  # 0.58 m
    monkeypatch.setattr(rec, "X_TRUE", far)
    t, A, C = rec.streams(np.random.default_rng(3), n=40)
    hand, eye = rec.write_tum(tmp_path / "far_hand.txt", t, A), rec.write_tum(tmp_path / "far_eye.txt", t, C)
    with pytest.raises(InputError) as e:
        calibrate(hand, eye, fmt="tum", setup="eye_in_hand", eye_pose="cam_T_target", hand_pose="base_T_ee")
    msg = str(e.value)
    assert "which no mounting allows" in msg and "the next reading was" in msg, msg


def test_block_jackknife_agrees_with_the_model_on_independent_noise():
    """On pairs with independent, homoscedastic noise (the model's own assumption), the block jackknife's variances
    of X and Y match the covariance's: the ratio of each is a chi-square(9) / 9 draw, so their mean over the 12
    parameters lies within about 0.6-1.5 (3 sigma), and none exceeds the widening limit."""
    from kinhec.calibrate import solve as sv
    from kinhec.calibrate.spread_check import JACKKNIFE_LIMIT

    rng = np.random.default_rng(7)
    n = 300
    rv = rng.normal(size=(n, 3))
    rv *= (rng.uniform(0.2, 0.8, n) / np.linalg.norm(rv, axis=1))[:, None]
    A = se3.transform_from_rotation_translation(se3.so3_exp(rv), rng.uniform(-0.2, 0.2, (n, 3)) + [0.5, 0.0, 0.4])
    X = se3.transform_from_rotation_translation(se3.so3_exp([0.1, -0.2, 0.3]), [0.03, -0.02, 0.1])
    Y = se3.transform_from_rotation_translation(se3.so3_exp([3.0, 0.1, 0.0]), [0.6, 0.1, -0.2])
    B = se3.invert_transform(Y) @ A @ X  # T_target_cam
    B = B @ se3.se3_exp(np.c_[rng.normal(0, 1e-3, (n, 3)), rng.normal(0, 1e-3, (n, 3))])
    pairing = pr.OrderPairing(A, B, np.arange(n), np.arange(n))
    fit = dict(estimate_offset=False, estimate_scale=False, inverse_domain=False)
    sol = sv.refine(pairing, X, Y, reject=False, **fit)
    ratio = np.diag(sv.block_jackknife(pairing, sol, fit))[:12] / np.diag(sol.cov)[:12]
    assert 0.6 < ratio.mean() < 1.5, ratio
    assert ratio.max() < JACKKNIFE_LIMIT, ratio
    # and the noise model barely depends on where it is estimated: no feedback to count
    M = sv.noise_feedback(pairing, sol, fit)
    assert np.abs(np.linalg.eigvals(M)).max() < 0.1

def test_a_drifting_scale_that_runs_off_is_discarded(tmp_path):
    # seed 1: one of the starting fits (30 pairs, 16 of them inliers) reached the drifting-scale stage with residuals
    # far above its noise levels; the stage's cost then falls all the way to the scale's degenerate end (s -> 0,
    # no predicted camera translation), and an unbounded step took log s to -1e9 (an overflow).  The stage is now
    # discarded for that start and calibrate answers: its scale (the poses are PnP's, metric: truth 1) and clock
    # offset (one clock: truth 0) agree with the truth within three standard deviations.
    g, res = calibrated_mixed(tmp_path, seed=1)
    assert abs(res.scale - 1.0) < 3 * res.scale_std, (res.scale, res.scale_std)
    assert abs(res.time_offset_s) < 3 * res.time_offset_std_s + 1e-4, (res.time_offset_s, res.time_offset_std_s)


def test_a_camera_drift_fit_whose_scale_runs_off_is_dropped(tmp_path):
    """Seed 90: the camera-drift stage's fit on the motions drove the log scale without bound (a scale the motions did
    not determine) until ``exp`` overflowed; the fit is now dropped when its scale runs more than a factor of 2 from
    the pair model's, and the recording is calibrated within its error bars."""
    g, res = calibrated_mixed(tmp_path, seed=90)
    assert res.determined, res.warnings
    assert _nees(res, g.X) < CHI2_6_999
    assert res.scale == pytest.approx(1.0, abs=3 * res.scale_std)  # PnP poses: metric


def test_the_mount_check_leaves_an_undetermined_translation_to_the_verdict():
    """A fit 512 mm from the flange with 200 mm of standard deviation (a motion that hardly turns about a second axis,
    true 79 mm) does not prove its reading wrong: the mount check lets it pass to the verdict, which says that X is
    not determined; with 1 mm of standard deviation the same X is refused as no mounting allows."""
    from types import SimpleNamespace

    from kinhec.calibrate.stages.solve import _check_mount

    X = np.eye(4)
    X[:3, 3] = [0.512, 0.0, 0.0]
    cv = SimpleNamespace(setup="eye_in_hand", where="h.txt and e.txt",
                         decision=SimpleNamespace(report={"ranking": [{"reading": ["--hand-pose", "base_T_ee"]}]}))
    loose = SimpleNamespace(X=X, cov=np.diag([1e-6] * 3 + [0.2**2, 0.14**2, 0.12**2] + [1e-6] * 6))
    _check_mount(cv, loose)  # no refusal
    tight = SimpleNamespace(X=X, cov=np.diag([1e-6] * 3 + [1e-6] * 3 + [1e-6] * 6))
    with pytest.raises(InputError, match="which no mounting allows: the reading it was fitted in"):
        _check_mount(cv, tight)
