"""The scale of the eye translations: far from metric (a board of the wrong size, a monocular stream) gives the
right X with one warning, never a confident wrong X; ``scale="fixed"`` holds it at 1."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from kinhec.geometry import se3
from kinhec.calibrate import calibrate
from kinhec.util.errors import InputError, KinhecError
from kinhec.synth.generator import simulate

from helpers.recordings import STATIONS as STATIONS_25

CHI2_6_999 = float(stats.chi2.ppf(0.999, 6))

STATIONS = STATIONS_25


def _nees(res, X_true) -> float:
    e = np.concatenate([se3.so3_log(res.X[:3, :3].T @ X_true[:3, :3]), X_true[:3, 3] - res.X[:3, 3]])
    return float(e @ np.linalg.solve(res.cov[:6, :6], e))


def _files(tmp_path, g, k=1.0):
    T = g.T_cam_target_meas.copy()
    T[:, :3, 3] *= k
    hand, eye = tmp_path / "hand.txt", tmp_path / "eye.txt"
    np.savetxt(hand, g.T_base_ee_meas.reshape(-1, 16), fmt="%.12g")
    np.savetxt(eye, T.reshape(-1, 16), fmt="%.12g")
    return hand, eye


def _run(hand, eye, conf, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return calibrate(hand, eye, fmt="rwhe", setup=conf, eye_pose="cam_T_target", **kw)


@pytest.mark.parametrize("k", [0.8, 0.95, 1.3, 0.5, 3.0])
@pytest.mark.parametrize("conf", ["eye_in_hand", "eye_to_hand"])
def test_eye_translations_far_from_metric_give_the_right_x_and_one_warning(tmp_path, conf, k):
    """Eye translations ``k`` times the metric ones (a board of the wrong size, a stream in other units or up to
    scale): before, 0.8 and 1.3 gave X 85-140 mm off eye-in-hand, "determined", no warning (the scale's 0.5 %
    prior held it near 1 and the mismatch was taken for noise)."""
    g = simulate(dict(STATIONS, configuration=conf))
    hand, eye = _files(tmp_path, g, k)
    try:
        res = _run(hand, eye, conf)
    except KinhecError as exc:  # refusing is right too, if it names the scale
        assert "scale" in str(exc)
        return
    assert res.determined
    assert _nees(res, g.X) < CHI2_6_999
    assert res.scale == pytest.approx(k, rel=0.02)
    said = [w for w in res.warnings if "eye translations are" in w]
    assert len(said) == 1, res.warnings
    assert str(eye) in said[0]
    if not 0.7 < k < 1.4:  # not metric: the message says so once, with the estimated scale
        assert "not metric" in said[0] and "--scale" in said[0]
    else:  # a board or a focal length off
        assert "board" in said[0]


def test_a_metric_stream_keeps_its_prior(tmp_path):
    """No second start where the translations are metric: the scale stays under its prior, no warning."""
    g = simulate(STATIONS)
    res = _run(*_files(tmp_path, g), "eye_in_hand")
    assert not any("eye translations are" in w for w in res.warnings)
    assert not any("estimated freely" in n for n in res.notes)
    assert res.observability["scale"]["mode"] == "metric" and abs(res.scale - 1) < 0.01


def test_scale_fixed_holds_it_at_one(tmp_path):
    g = simulate(STATIONS)
    hand, eye = _files(tmp_path, g)
    held = _run(hand, eye, "eye_in_hand", scale="fixed")
    assert held.scale == 1.0 and held.scale_std == 0.0
    assert held.observability["scale"]["mode"] == "fixed"
    assert any("held at 1" in n for n in held.notes)
    assert _nees(held, g.X) < CHI2_6_999
    assert held.cov.shape[0] == 12  # no scale parameter
    free = _run(hand, eye, "eye_in_hand", scale="free")
    assert free.observability["scale"]["mode"] == "monocular"
    with pytest.raises(InputError, match="scale: expected free, fixed or metric"):
        _run(hand, eye, "eye_in_hand", scale="half")


def test_corners_refuse_a_fixed_scale(tmp_path):
    with pytest.raises(InputError, match="do not apply to a corner file.*scale 'fixed'"):
        calibrate(corners=tmp_path / "obs.json", scale="fixed")


@pytest.mark.parametrize("k", [0.8, 1.25])
def test_corners_with_a_board_of_the_wrong_size(tmp_path, k):
    """A corner file whose board is stated ``1 / k`` times its true size: before, X 80-160 mm off, "determined", no
    warning (the board scale's 0.5 % prior held it); now the board is rescaled from the robot's translations, X
    as with the right size, one warning naming the file."""
    from kinhec.synth.observations import ObservationSet, observations_from_recipe, transform_from_pose_json, write_observations

    rec = dict(STATIONS, sequence_id="pnp-000000", track="pnp", camera_noise_model="pnp", pixel_std=0.5,
               camera_rot_std_rad=0.0, camera_trans_std_m=0.0, camera_trans_std_z_m=0.0, n_stations=20)
    obs, truth = observations_from_recipe(rec)
    X_true = transform_from_pose_json(truth["poses"]["X"])
    right = calibrate(corners=write_observations(tmp_path / "right.json", obs))
    wrong = ObservationSet(obs.camera_id, obs.image_size, obs.mode, [p / k for p in obs.points_3d], obs.points_2d,
                           obs.T_base_ee)  # fmt: skip
    path = write_observations(tmp_path / "wrong.json", wrong)
    res = calibrate(corners=path)
    assert res.determined
    assert _nees(res, X_true) < CHI2_6_999
    assert np.linalg.norm(res.X[:3, 3] - right.X[:3, 3]) < 1e-3  # as with the board's true size, within 1 mm
    assert res.scale == pytest.approx(1 / k, rel=0.01)
    said = [w for w in res.warnings if "eye translations are" in w]
    assert len(said) == 1 and str(path) in said[0]
    assert any("stated size" in n for n in res.notes)
    assert not any("stated size" in n for n in right.notes)
