"""Clock-offset estimation between asynchronous robot and camera streams."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec import solvers
from kinhec.geometry import se3
from kinhec.util.errors import InputError
from kinhec.solvers import DegenerateMotionWarning

X = se3.transform_from_rotation_translation(se3.so3_exp([0.3, 0.2, 1.0]), [0.02, 0.05, 0.08])
Y = se3.transform_from_rotation_translation(se3.so3_exp([0.1, -0.2, 0.5]), [0.6, 0.0, -0.3])


def flange(t, params):
    """Flange poses ``T_base_ee`` at times ``t``: a sum of sinusoids in the rotation vector and position."""
    if params is None:  # constant angular velocity about a fixed axis: no structure in the speed
        phi = t[:, None] * np.array([0.3, 0.2, 0.1])
        p = 0.01 * t[:, None] * np.ones(3)
    else:
        f, a, ph = params
        phi = (a[None] * np.sin(2 * np.pi * f[None] * t[:, None, None] + ph[None])).sum(-1)
        p = 0.1 * np.sin(2 * np.pi * 0.2 * t[:, None] + np.array([0.0, 1.0, 2.0])) + np.array([0.5, 0.0, 0.4])
    return se3.transform_from_rotation_translation(se3.so3_exp(phi), p)


def streams(rng, offset_s, *, robot_hz=500.0, camera_hz=30.0, duration_s=20.0, jitter_s=0.002, drop=0.1,
            noisy=True, structured=True, configuration="eye_in_hand"):
    """Robot stream on the robot clock and camera stream stamped ``t = t_gt + offset + jitter``."""
    params = (rng.uniform(0.15, 0.6, (3, 3)), rng.uniform(0.2, 0.6, (3, 3)), rng.uniform(0, 2 * np.pi, (3, 3)))
    params = params if structured else None
    t_r = np.arange(0.0, duration_s, 1.0 / robot_hz)
    A_r = flange(t_r, params)
    t_gt = np.arange(rng.uniform(0, 1 / camera_hz) + 0.5, duration_s - 0.5, 1.0 / camera_hz)
    t_gt = t_gt[rng.random(t_gt.size) > drop]
    A_c = flange(t_gt, params)
    B = se3.invert_transform(Y) @ A_c @ X
    T_ct = se3.invert_transform(B) if configuration == "eye_in_hand" else B
    if noisy:
        A_r = A_r @ se3.se3_exp(np.c_[rng.normal(0, 5e-4, (t_r.size, 3)), rng.normal(0, 3e-4, (t_r.size, 3))])
        T_ct = T_ct @ se3.se3_exp(np.c_[rng.normal(0, 2e-3, (t_gt.size, 3)), rng.normal(0, 1e-3, (t_gt.size, 3))])
    t_c = t_gt + offset_s + rng.normal(0, jitter_s, t_gt.size)
    order = np.argsort(t_c)
    return t_r, A_r, t_c[order], T_ct[order], t_gt[order]


@pytest.mark.parametrize("camera_hz", [10.0, 30.0, 60.0])
@pytest.mark.parametrize("robot_hz", [125.0, 500.0])
def test_offset_recovered_within_a_camera_period(camera_hz, robot_hz):
    rng = np.random.default_rng(int(camera_hz * robot_hz))
    period = 1.0 / camera_hz
    errs = []
    for offset in (0.0, 0.013, 0.05, 0.1, 0.137, 0.2, -0.08):
        t_r, A_r, t_c, T_ct, _ = streams(rng, offset, robot_hz=robot_hz, camera_hz=camera_hz)
        est = solvers.estimate_time_offset(t_r, A_r, t_c, T_ct)
        assert isinstance(est, solvers.TimeOffsetEstimate)
        assert est.peak_corr > 0.85 and not est.at_boundary
        errs.append(est.offset_s - offset)
    errs = np.abs(errs)
    assert errs.max() < period
    # sub-sample refinement: far better than the grid of a quarter period
    assert errs.mean() < 0.25 * period


def test_subsample_refinement_beats_the_lag_grid():
    rng = np.random.default_rng(3)
    t_r, A_r, t_c, T_ct, _ = streams(rng, 0.137, camera_hz=10.0)
    est = solvers.estimate_time_offset(t_r, A_r, t_c, T_ct, grid_dt_s=0.05)
    on_grid = est.lags_s[np.nanargmax(est.corr)]
    assert abs(est.offset_s - 0.137) < abs(on_grid - 0.137)
    assert abs(est.offset_s - 0.137) < 0.01


def test_sign_convention_pairs_the_streams():
    """Sampling the robot at ``t - offset`` reproduces the flange pose at the true capture instant."""
    rng = np.random.default_rng(4)
    t_r, A_r, t_c, T_ct, t_gt = streams(rng, 0.12, noisy=False, jitter_s=0.0, drop=0.0)
    est = solvers.estimate_time_offset(t_r, A_r, t_c, T_ct)
    assert est.offset_s > 0.0
    paired = se3.interpolate_poses(t_r, A_r, t_c - est.offset_s, out_of_range="clip")
    truth = se3.interpolate_poses(t_r, A_r, t_gt, out_of_range="clip")
    rot, trans = se3.pose_error(paired, truth)
    assert np.median(rot) < 0.1 and np.median(trans) < 1.0
    wrong = se3.interpolate_poses(t_r, A_r, t_c + est.offset_s, out_of_range="clip")
    assert np.median(se3.pose_error(wrong, truth)[0]) > 10 * np.median(rot)


def test_both_configurations_and_inverted_camera_poses_agree():
    for conf in ("eye_in_hand", "eye_to_hand"):
        t_r, A_r, t_c, T_ct, _ = streams(np.random.default_rng(6), 0.07, configuration=conf)
        e1 = solvers.estimate_time_offset(t_r, A_r, t_c, T_ct)
        e2 = solvers.estimate_time_offset(t_r, A_r, t_c, se3.invert_transform(T_ct))
        assert abs(e1.offset_s - 0.07) < 0.01
        assert abs(e1.offset_s - e2.offset_s) < 1e-9


def test_low_confidence_without_structure():
    rng = np.random.default_rng(7)
    structured = solvers.estimate_time_offset(*streams(rng, 0.1)[:4])
    flat = [solvers.estimate_time_offset(*streams(rng, 0.1, structured=False)[:4]) for _ in range(3)]
    assert structured.peak_corr > 0.9
    assert all(f.peak_corr < 0.4 for f in flat)
    assert all(-1.0 <= f.peak_corr <= 1.0 for f in flat)


def test_still_streams_warn_and_report_zero_confidence():
    t = np.arange(0.0, 5.0, 0.01)
    T = np.broadcast_to(np.eye(4), (t.size, 4, 4))
    tc = np.arange(0.1, 4.9, 1 / 30)
    with pytest.warns(DegenerateMotionWarning, match="constant"):
        est = solvers.estimate_time_offset(t, T, tc, np.broadcast_to(np.eye(4), (tc.size, 4, 4)))
    assert est.peak_corr == 0.0 and est.offset_s == 0.0


def test_offset_outside_the_search_range_is_flagged():
    rng = np.random.default_rng(8)
    t_r, A_r, t_c, T_ct, _ = streams(rng, 0.35)
    est = solvers.estimate_time_offset(t_r, A_r, t_c, T_ct, max_offset_s=0.2)
    assert est.at_boundary
    assert solvers.estimate_time_offset(t_r, A_r, t_c, T_ct, max_offset_s=0.5).at_boundary is False


def test_time_offset_input_errors():
    rng = np.random.default_rng(9)
    t_r, A_r, t_c, T_ct, _ = streams(rng, 0.05, duration_s=4.0)
    with pytest.raises(InputError, match="robot_t: expected strictly increasing time stamps"):
        solvers.estimate_time_offset(t_r[::-1], A_r, t_c, T_ct)
    # camera stamps out of order (jitter can reorder them) are taken in stamp order: the same estimate
    ref = solvers.estimate_time_offset(t_r, A_r, t_c, T_ct)
    assert solvers.estimate_time_offset(t_r, A_r, t_c[::-1], T_ct[::-1]).offset_s == ref.offset_s
    with pytest.raises(InputError, match=r"robot_poses: expected shape \(\d+, 4, 4\) to match robot_t"):
        solvers.estimate_time_offset(t_r, A_r[:-1], t_c, T_ct)
    with pytest.raises(InputError, match="camera_t: expected at least 3 samples, got 2"):
        solvers.estimate_time_offset(t_r, A_r, t_c[:2], T_ct[:2])
    with pytest.raises(InputError, match="max_offset_s: expected a positive finite number"):
        solvers.estimate_time_offset(t_r, A_r, t_c, T_ct, max_offset_s=0.0)
    with pytest.raises(InputError, match="grid_dt_s: expected a positive finite number"):
        solvers.estimate_time_offset(t_r, A_r, t_c, T_ct, grid_dt_s=-1.0)
    with pytest.raises(InputError, match="robot_t, camera_t: expected streams that overlap"):
        solvers.estimate_time_offset(t_r + 100.0, A_r, t_c, T_ct)
    bad = T_ct.copy()
    bad[0, :3, :3] *= 2.0
    with pytest.raises(InputError, match=r"camera_poses \(rotation block\): expected orthonormal"):
        solvers.estimate_time_offset(t_r, A_r, t_c, bad)


# --------------------------------------------------------------------------- #
# wrong camera frames, drops, jitter and pose noise: generated asynchronous sequences
# --------------------------------------------------------------------------- #
def generated(root, **kw):
    """A generated asynchronous sequence (kinhec's generator), written to ``root`` and loaded back."""
    from kinhec import io as kio
    from kinhec.synth.generator import generate_sequence
    from kinhec.synth.recipe import Recipe

    recipe = dict(sequence_id="mixed-000000", track="mixed", level="test", seed=41, robot="ur5e",
                  configuration="eye_in_hand", family="joint_sinusoid", camera="hd", sampling_mode="continuous",
                  sync="async", duration_s=20.0, camera_rate_hz=15.0, time_offset_s=0.0576, time_jitter_std_s=0.005,
                  camera_drop_fraction=0.1, robot_noise_models=("se3_gaussian",), camera_noise_model="se3_gaussian",
                  robot_rot_std_rad=5e-4, robot_trans_std_m=5e-4, camera_rot_std_rad=5e-3, camera_trans_std_m=5e-3,
                  camera_trans_std_z_m=1e-2)  # fmt: skip
    recipe.update(kw)
    tables = generate_sequence(Recipe.from_dict(recipe))
    kio.write_index(root, kio.write_shard(root, "mixed", 0, [tables]))
    return kio.load_sequence(root, recipe["sequence_id"])


def measured_streams(seq):
    """The measured robot and camera streams, as the benchmark passes them to the estimator."""
    c_ok = seq.camera.has_measurement & np.isfinite(seq.camera.t)
    return seq.robot.t, seq.robot.T_base_ee_meas, seq.camera.t[c_ok], seq.camera.T_cam_target_meas[c_ok]


# Tolerance: a quarter of the camera period, the step of the lag grid.  Each wrong frame would put two speed
# spikes of its error over one period into the camera signal; the old Pearson correlation of the raw speeds
# then lost the peak altogether (errors of hundreds of ms, peak correlation below 0.2).
@pytest.mark.parametrize(
    ("family", "camera_hz", "model", "seed"),
    [("joint_sinusoid", 15.0, "random_pose", 41), ("joint_waypoints", 10.0, "random_pose", 42),
     ("joint_sinusoid", 30.0, "random_pose", 43), ("joint_sinusoid", 15.0, "gross", 44)],
)  # fmt: skip
def test_offset_found_with_a_fifth_of_wrong_frames_and_drops(tmp_path, family, camera_hz, model, seed):
    seq = generated(tmp_path, family=family, camera_rate_hz=camera_hz, outlier_model=model, outlier_fraction=0.2,
                    seed=seed)
    assert seq.camera.outlier.mean() > 0.15 and seq.time_offset == pytest.approx(0.0576)
    est = solvers.estimate_time_offset(*measured_streams(seq))
    assert abs(est.offset_s - seq.time_offset) < 0.25 / camera_hz
    assert est.peak_corr > 0.85 and not est.at_boundary


def test_wrong_frames_are_found_and_good_ones_kept(tmp_path):
    from kinhec.solvers.time_offset import _camera_in_stamp_order, _isolated_outliers

    seq = generated(tmp_path, outlier_model="random_pose", outlier_fraction=0.3, seed=45)
    c = seq.camera
    ok = c.has_measurement & np.isfinite(c.t)
    order = np.argsort(c.t[ok], kind="stable")
    t, T = _camera_in_stamp_order(c.t[ok][order], c.T_cam_target_meas[ok][order])
    wrong = c.outlier[ok][order][: t.size]
    out = _isolated_outliers(t, T[:, :3, :3])
    assert out[wrong].mean() > 0.97  # adjacent wrong frames too
    assert out[~wrong].mean() < 0.05


def test_noisy_fast_camera_without_outliers(tmp_path):
    """60 Hz camera with 0.01 rad of rotation noise: frame-to-frame speeds are mostly noise, longer baselines not."""
    seq = generated(tmp_path, camera_rate_hz=60.0, camera_rot_std_rad=0.01, time_jitter_std_s=0.0, duration_s=30.0,
                    seed=46)
    est = solvers.estimate_time_offset(*measured_streams(seq))
    assert abs(est.offset_s - seq.time_offset) < 0.25 / 60.0


def test_helper_streams_with_random_pose_frames():
    """The unit-test streams with a fifth of the camera frames replaced by random poses."""
    from kinhec.models.noise import random_pose_outliers

    for camera_hz in (10.0, 30.0, 60.0):
        rng = np.random.default_rng(int(camera_hz) + 100)
        t_r, A_r, t_c, T_ct, _ = streams(rng, 0.137, camera_hz=camera_hz, jitter_s=0.003, drop=0.1)
        bad = rng.random(t_c.size) < 0.2
        T_ct = T_ct.copy()
        T_ct[bad] = random_pose_outliers(T_ct[bad], rng)
        est = solvers.estimate_time_offset(t_r, A_r, t_c, T_ct)
        assert abs(est.offset_s - 0.137) < 0.25 / camera_hz, camera_hz


def test_significance_of_a_peak_below_zero_correlation_is_finite_and_silent():
    """A correlation curve whose best value is negative (no match at any shift) has no peak radius to measure."""
    import warnings

    from kinhec.solvers.time_offset import _significance

    corr = np.array([-0.5, -0.3, -0.1, -0.3, -0.5])
    n = np.full(5, 100.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z = _significance(corr, n, 0.01, 0.05)
    assert np.isfinite(z) and z < 0
