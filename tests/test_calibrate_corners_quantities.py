"""The corner path's reported quantities (``kinhec.calibrate.corners``): the standard deviations of its noise
levels from their degrees of freedom."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kinhec.calibrate import calibrate
from kinhec.synth.observations import observations_from_recipe, write_observations


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    recipe = dict(sequence_id="corners-q", seed=43, robot="ur5e", configuration="eye_to_hand", family="lookat",
                  sampling_mode="stations", n_stations=15, camera="hd", target="marker_3x3_30mm",
                  camera_noise_model="pnp", pixel_std=1.0, robot_noise_models=("se3_gaussian",),
                  robot_rot_std_rad=2e-4, robot_trans_std_m=1e-4)  # fmt: skip
    obs, truth = observations_from_recipe(recipe)
    path = write_observations(tmp_path_factory.mktemp("corners_q") / "obs.json", obs)
    k = [truth["parameters"][n] for n in ("fx", "fy", "cx", "cy")]
    return calibrate(corners=path, intrinsics=k), obs


def test_noise_level_standard_deviations_follow_their_degrees_of_freedom(result):
    """A standard deviation estimated from ``d`` degrees of freedom has a standard deviation ``s / sqrt(2 d)``."""
    res, obs = result
    rep = res.observability
    inl = np.ones(obs.n_views, bool)
    inl[res.outliers] = False
    n_px = sum(len(obs.points_2d[i]) for i in np.flatnonzero(inl))
    P = 12 + 4 + 1  # X, Y, the four given intrinsics refined under their prior, the board's log-scale
    d_px = 2 * n_px - P  # two coordinates per corner, less what the fit takes
    assert math.isclose(rep["pixel_std_std_px"], rep["pixel_std_px"] / math.sqrt(2.0 * d_px), rel_tol=1e-12)
    # each robot level (rotation, translation) from 3 components per inlying view
    d_rob = 3 * int(inl.sum())
    for std, sd in zip(rep["robot_std_rad_m"], rep["robot_std_std_rad_m"]):
        assert math.isclose(sd, std / math.sqrt(2.0 * d_rob), rel_tol=1e-12)
    assert rep["n_inliers"] == int(inl.sum())



def test_the_intrinsics_standard_deviations_are_the_bundles_intrinsics_block(monkeypatch):
    """The reported ``intrinsics_std`` are the square roots of the bundle covariance's intrinsics entries, which
    follow the 12 of ``X`` and ``Y`` (``BundleFit.cov``: X, Y, the estimated intrinsics, ``log b``), by name."""
    from kinhec.calibrate import corners as corners_mod

    fits = []
    real = corners_mod.refine_bundle

    def spy(*args, **kw):
        fits.append(real(*args, **kw))
        return fits[-1]

    monkeypatch.setattr(corners_mod, "refine_bundle", spy)
    recipe = dict(sequence_id="cq", seed=4, robot="ur5e", configuration="eye_in_hand", family="lookat",
                  sampling_mode="stations", n_stations=12, camera="hd", target="checker_7x5_20mm",
                  camera_noise_model="pnp", pixel_std=0.5, robot_noise_models=())  # fmt: skip
    obs, _ = observations_from_recipe(recipe)
    res = corners_mod.calibrate_corners(obs)
    fit = fits[-1]
    n = len(fit.intrinsic_names)
    assert n >= 4 and fit.cov.shape == (12 + n + 1, 12 + n + 1)
    got = res.observability["intrinsics_std"]
    want = np.sqrt(np.diag(fit.cov)[12 : 12 + n])
    assert list(got) == list(fit.intrinsic_names)
    assert np.allclose([got[k] for k in fit.intrinsic_names], want, rtol=1e-12, atol=0)
    assert np.allclose(np.r_[res.X_std, res.Y_std], np.sqrt(np.diag(fit.cov)[:12]), rtol=1e-12, atol=0)
