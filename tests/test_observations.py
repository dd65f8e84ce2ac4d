"""The observation format: round trip, conventions, schema errors, and the generator's pixel observations."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kinhec.geometry import se3
from kinhec.util.errors import DatasetFormatError
from kinhec.synth.generator import simulate
from kinhec.synth.observations import (
    ObservationSet,
    observations_from_recipe,
    pose_json,
    read_observations,
    transform_from_pose_json,
    write_observations,
)
from kinhec.models.pnp import solve_pnp
from kinhec.models.cameras import get_camera

RECIPE = dict(sequence_id="obs-test", seed=7, robot="ur5e", configuration="eye_in_hand", family="lookat",
              sampling_mode="stations", n_stations=6, camera="vga", target="checker_7x5_20mm",
              camera_noise_model="pnp", pixel_std=0.3)  # fmt: skip


def _obs(n=4):
    rng = np.random.default_rng(3)
    pts = np.c_[rng.uniform(0, 0.2, (5, 2)), np.zeros(5)]
    return ObservationSet("cam0", (640, 480), "eye_in_hand", [pts] * n, [rng.uniform(0, 600, (5, 2))] * n,
                          se3.random_poses(rng, n, 0.5))  # fmt: skip


def test_pose_json_is_scalar_last_and_maps_b_to_a():
    # a rotation of 90 deg about z: q = (w, x, y, z) = (cos 45, 0, 0, sin 45)
    T = se3.transform_from_pq([1.0, 2.0, 3.0], [np.cos(np.pi / 4), 0, 0, np.sin(np.pi / 4)])
    d = pose_json(T)
    assert d["rotation"] == pytest.approx([0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)])
    assert d["translation"] == [1.0, 2.0, 3.0]
    # the gripper x axis maps to base y (a_se3_b maps b-coordinates to a-coordinates)
    assert (transform_from_pose_json(d) @ [1, 0, 0, 1])[:3] == pytest.approx([1.0, 3.0, 3.0])


def test_round_trip(tmp_path):
    obs = _obs()
    path = write_observations(tmp_path / "o.json", obs)
    back = read_observations(path)
    assert back.image_size == (640, 480) and back.mode == "eye_in_hand" and back.n_views == 4
    np.testing.assert_allclose(back.T_base_ee, obs.T_base_ee, atol=1e-12)
    np.testing.assert_array_equal(back.points_2d[2], obs.points_2d[2])


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda d: d.update(version=2), r"\$\.version"),
        (lambda d: d["input"]["views"][1]["obs"].pop("points_2d"), r"\$\.input\.views\[1\]\.obs"),
        (lambda d: d["input"]["views"][2]["meta"]["base_se3_gripper"].update(rotation=[0, 0, 1]),
         r"\$\.input\.views\[2\]\.meta\.base_se3_gripper\.rotation"),
        (lambda d: d["cameras"][0].update(image_size=[640]), r"\$\.cameras\[0\]\.image_size"),
    ],
)
def test_schema_errors_name_file_and_json_path(tmp_path, edit, match):
    path = write_observations(tmp_path / "o.json", _obs())
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(DatasetFormatError, match=str(path).replace(".", r"\.") + ": " + match):
        read_observations(path)


def test_non_unit_quaternion_and_bad_json_are_refused(tmp_path):
    path = write_observations(tmp_path / "o.json", _obs())
    doc = json.loads(path.read_text())
    doc["input"]["views"][0]["meta"]["base_se3_gripper"]["rotation"] = [0, 0, 0, 2.0]
    path.write_text(json.dumps(doc))
    with pytest.raises(DatasetFormatError, match=r"views\[0\].*unit quaternion"):
        read_observations(path)
    path.write_text("{")
    with pytest.raises(DatasetFormatError, match="expected JSON"):
        read_observations(path)


def test_generated_pixels_are_the_ones_the_generator_used():
    """A PnP on the written pixels gives the sequence's measured poses: the same noise draw."""
    obs, truth = observations_from_recipe(RECIPE)
    g = simulate(RECIPE)
    has = np.isfinite(g.T_cam_target_meas).all(axis=(1, 2))
    assert obs.n_views == has.sum() >= 3
    cam = get_camera("vga")
    P = max(len(p) for p in obs.points_2d)
    assert all(len(p) == P for p in obs.points_2d)  # a checkerboard is seen whole
    uv = np.stack(obs.points_2d)
    res = solve_pnp(cam, obs.points_3d[0], uv, g.T_cam_target_gt[has])
    err_r, err_t = se3.pose_error(res.T_cam_target, g.T_cam_target_meas[has])
    assert err_r.max() < 1e-6 and err_t.max() < 1e-6
    # noise statistics: residuals against the true projection have the recipe's standard deviation
    np.testing.assert_allclose(obs.T_base_ee, g.T_base_ee_meas[has])
    assert truth["parameters"]["fx"] == cam.f_px
    np.testing.assert_allclose(transform_from_pose_json(truth["poses"]["X"]), g.X, atol=1e-12)


def test_a_malformed_point_deep_in_a_view_is_named(tmp_path):
    path = write_observations(tmp_path / "o.json", _obs())
    doc = json.loads(path.read_text())
    doc["input"]["views"][3]["obs"]["points_2d"][4] = [1.0, "x"]
    path.write_text(json.dumps(doc))
    with pytest.raises(DatasetFormatError, match=r"views\[3\]\.obs\.points_2d: expected a list of \[x, y\]"):
        read_observations(path)


def test_another_json_is_named_as_not_an_observation_file(tmp_path):
    # RWHE-Calib's corner detections (corners_opencv_detected.json) have none of the observation keys
    dump = {"dataset": "kuka_1", "pattern_size_cols_rows": [3, 2], "square_size_m": 0.02,
            "object_points_m": [[0.0, 0.0, 0.0]] * 6, "views": [{"image_size_wh": [640, 480], "corners_px": [[1.0, 2.0]] * 6}]}
    path = tmp_path / "corners_opencv_detected.json"
    path.write_text(json.dumps(dump))
    with pytest.raises(DatasetFormatError, match=r"corners_opencv_detected.json: not an observation JSON: expected the "
                                                 r"keys version, cameras, problem, input .* got a JSON object with the "
                                                 r"keys dataset, pattern_size_cols_rows") as info:
        read_observations(path)
    assert "kinhec suite freeze" in str(info.value) and "RobotPosesVec.txt" in str(info.value)
    path.write_text("[1, 2, 3]")
    with pytest.raises(DatasetFormatError, match="not an observation JSON: .* got a JSON list"):
        read_observations(path)
    # a file that is one but breaks the schema still gets the schema's message with its JSON path
    path.write_text(json.dumps({"problem": "single_cam_handeye"}))
    with pytest.raises(DatasetFormatError, match=r"\$: 'version' is a required property"):
        read_observations(path)
