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

