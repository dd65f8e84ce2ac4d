"""The fisheye (equidistant) camera model: its projection against OpenCV's, its Jacobians, and calibration from
generated fisheye corners through ``calibrate --corners``, the camera written back as Kalibr and OpenCV files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.calibrate.corners import calibrate_corners
from kinhec.cli import main
from kinhec.geometry import se3
from kinhec.models.intrinsics import (
    calibrate_camera,
    pack_views,
    project,
    project_points,
    project_points_jacobians,
    unproject_points,
)
from kinhec.models.intrinsics_files import read_intrinsics
from kinhec.models.intrinsics_writers import from_calibration, intrinsics_text
from kinhec.synth.observations import (
    FISHEYE_LENSES,
    fisheye_observations_from_recipe,
    read_observations,
    transform_from_pose_json,
    write_observations,
)
from kinhec.util.errors import DatasetFormatError, InputError

from helpers.recordings import lens_recipe

K180 = np.array(FISHEYE_LENSES["fisheye_180"].intrinsics)
K120 = np.array(FISHEYE_LENSES["fisheye_120"].intrinsics)


def _rays(rng, n: int, max_deg: float, min_deg: float = 0.0) -> np.ndarray:
    """Points at random distances (0.2-3 m) and angles off the axis up to ``max_deg`` [deg]; their angles too."""
    c = rng.uniform(np.cos(np.radians(max_deg)), np.cos(np.radians(min_deg)), n)  # uniform on the sphere's cap
    th = np.arccos(c)
    ph = rng.uniform(0.0, 2.0 * np.pi, n)
    d = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], axis=-1)
    return d * rng.uniform(0.2, 3.0, n)[:, None], th, ph


@pytest.mark.parametrize("k", [K120, K180, np.array([812.5, 809.1, 655.2, 498.7, -0.04, 0.011, -0.003, 0.0004])])
def test_projection_is_opencvs_up_to_90_deg(k):
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(5)
    p, _, _ = _rays(rng, 4000, 89.9)
    p[:3] = [[0.0, 0.0, 1.0], [1e-9, -2e-9, 0.7], [0.3, -0.2, 2.0]]  # on the axis, next to it
    K = np.array([[k[0], 0.0, k[2]], [0.0, k[1], k[3]], [0.0, 0.0, 1.0]])
    ref = cv2.fisheye.projectPoints(p[None], np.zeros(3), np.zeros(3), K, k[4:])[0][0]
    assert np.abs(project_points(k, p) - ref).max() < 1e-9


def test_projection_beyond_90_deg_follows_the_ray_angle():
    """Beyond 90 deg (180-200 deg lenses) the pixel lies at theta_d(theta) in the ray's azimuth, theta the ray's angle
    off the axis (OpenCV's ``projectPoints`` takes ``atan(rho / Z)`` there and mirrors the point through the centre,
    so it is no reference)."""
    rng = np.random.default_rng(6)
    p, th, ph = _rays(rng, 2000, 100.0, 80.0)
    d = K180[4:]
    td = th * (1 + d[0] * th**2 + d[1] * th**4 + d[2] * th**6 + d[3] * th**8)
    ref = np.stack([K180[0] * td * np.cos(ph) + K180[2], K180[1] * td * np.sin(ph) + K180[3]], axis=-1)
    assert np.abs(project_points(K180, p) - ref).max() < 1e-9
    assert (p[:, 2] < 0).sum() > 500  # half of them behind the camera's plane


def test_jacobians_are_the_central_differences():
    rng = np.random.default_rng(7)
    p, _, _ = _rays(rng, 300, 100.0)
    p[0] = [0.0, 0.0, 0.8]  # on the axis: the limits
    p[1] = [3e-9, -1e-9, 1.1]
    k = K180.copy()
    uv, dp, dk = project_points_jacobians(k, p)
    assert np.array_equal(uv, project_points(k, p))
    h = 1e-6
    num_p = np.stack([(project_points(k, p + h * e) - project_points(k, p - h * e)) / (2 * h) for e in np.eye(3)], -1)
    scale = np.abs(num_p).max()
    assert np.abs(dp - num_p).max() < 1e-6 * scale
    hk = np.array([1e-4, 1e-4, 1e-4, 1e-4, 1e-7, 1e-7, 1e-7, 1e-7])
    num_k = np.stack([(project_points(k + hk[j] * e, p) - project_points(k - hk[j] * e, p)) / (2 * hk[j])
                      for j, e in enumerate(np.eye(8))], -1)  # fmt: skip
    assert np.abs(dk - num_k).max() < 1e-5 * np.abs(num_k).max()
    # the on-axis limit against differences taken off the axis by more than the threshold
    q = np.array([[0.0, 0.0, 0.8]])
    num_q = np.stack([(project_points(k, q + 1e-5 * e) - project_points(k, q - 1e-5 * e)) / 2e-5 for e in np.eye(3)], -1)
    assert np.abs(project_points_jacobians(k, q)[1] - num_q).max() < 1e-6 * np.abs(num_q).max()


def test_unprojection_round_trips():
    rng = np.random.default_rng(8)
    for k, max_deg in ((K120, 60.0), (K180, 100.0)):
        p, _, _ = _rays(rng, 3000, max_deg)
        ray = unproject_points(k, project_points(k, p))
        assert np.abs(ray - p / np.linalg.norm(p, axis=1)[:, None]).max() < 1e-10


def test_project_takes_the_model_from_the_vector_length():
    rng = np.random.default_rng(9)
    T = se3.transform_from_rotation_translation(np.eye(3)[None].repeat(2, 0), np.array([[0.1, 0.0, 0.5], [0, 0.2, 0.4]]))
    pts = rng.uniform(-0.1, 0.1, (6, 3))
    p_cam = pts[None] @ T[:, :3, :3].transpose(0, 2, 1) + T[:, None, :3, 3]
    assert np.array_equal(project(K180, T, pts), project_points(K180, p_cam))
    with pytest.raises(InputError, match="expected 9 numbers .*, 8 .* or 12"):
        project_points(np.ones(7), p_cam)


def _recipe(**kw):
    return lens_recipe(**{"sequence_id": "fe", "seed": 3, **kw})


def test_generated_corners_are_the_lens_projection():
    obs, truth = fisheye_observations_from_recipe(_recipe(), "fisheye_120", pixel_std=0.0)
    assert obs.distortion_model == "equidistant" and obs.image_size == (1280, 1024)
    k = np.array(list(truth["parameters"].values()))
    cam = calibrate_camera(pack_views(obs.points_3d, obs.points_2d), obs.image_size, intrinsics=k)
    assert cam.rms_px < 1e-8  # exact corners: the lens reprojects them (with each view's PnP pose)
    noisy, _ = fisheye_observations_from_recipe(_recipe(), "fisheye_120")
    d = np.concatenate([a - b for a, b in zip(noisy.points_2d, obs.points_2d)])
    assert abs(d.std() / 0.08 - 1.0) < 0.05  # 2400 draws: 1.4 % relative std of the std


@pytest.mark.parametrize("setup", ["eye_in_hand", "eye_to_hand"])
def test_a_turned_lens_keeps_the_chain(setup):
    """The lens turned off the recipe camera's axis: the corners are the chain's projection with the truth's X, Y
    (the camera's part turned with it), and they lie that far off the axis."""
    from kinhec.solvers.reprojection import chain_poses

    r = _recipe(configuration=setup, robot_noise_models=(), robot_rot_std_rad=0.0, robot_trans_std_m=0.0)
    obs, truth = fisheye_observations_from_recipe(r, "fisheye_180", pixel_std=0.0, tilt_deg=50.0)
    X, Y = (transform_from_pose_json(truth["poses"][n]) for n in "XY")
    uv = project(K180, chain_poses(obs.T_base_ee, X, Y, setup), pack_views(obs.points_3d, obs.points_2d).points_3d)
    assert max(np.abs(uv[i, : len(p)] - p).max() for i, p in enumerate(obs.points_2d)) < 1e-9
    angle = np.degrees(np.arccos(unproject_points(K180, np.concatenate(obs.points_2d))[:, 2]))
    assert 35.0 < np.median(angle) < 65.0


@pytest.mark.parametrize("setup, lens", [("eye_in_hand", "fisheye_180"), ("eye_to_hand", "fisheye_120")])
def test_fisheye_corners_calibrate_to_the_truth(setup, lens):
    target = "grid_10x8_60mm" if setup == "eye_in_hand" else "checker_9x6_25mm"
    obs, truth = fisheye_observations_from_recipe(_recipe(configuration=setup, target=target), lens)
    res = calibrate_corners(obs)
    X, Y = (transform_from_pose_json(truth["poses"][n]) for n in "XY")
    for est, tru, std in ((res.X, X, res.X_std), (res.Y, Y, res.Y_std)):
        d = se3.invert_transform(tru) @ est
        err = np.concatenate([se3.so3_log(d[:3, :3]), est[:3, 3] - tru[:3, 3]])
        assert np.all(np.abs(err) < 4.5 * std), (err / std)
    k_true = np.array(list(truth["parameters"].values()))
    k = np.asarray(res.inputs["intrinsics_refined"])
    k_std = np.array(list(res.observability["intrinsics_std"].values()))
    assert k.size == 8 and res.inputs["distortion_model"] == "equidistant"
    assert list(res.observability["intrinsics_std"]) == ["fx", "fy", "cx", "cy", "k1", "k2", "k3", "k4"]
    assert np.all(np.abs(k - k_true) < 4.5 * k_std), ((k - k_true) / k_std)
    assert abs(res.observability["pixel_std_px"] / 0.08 - 1.0) < 0.1


KALIBR = """cam0:
  camera_model: pinhole
  intrinsics: [310.50852516, 311.12954221, 641.3, 509.2]
  distortion_model: equidistant
  distortion_coeffs: [0.025, -0.006, 0.0012, -0.0001]
  resolution: [1280, 1024]
  rostopic: /cam0/image_raw
"""


def test_kalibr_camchain_read_and_written_back(tmp_path):
    """A Kalibr camchain given to --corners and held fixed: --write-intrinsics writes the same camera (1e-12); the
    refined camera written as OpenCV YAML and Kalibr reads back the same floats."""
    src = tmp_path / "camchain.yaml"
    src.write_text(KALIBR)
    obs, _ = fisheye_observations_from_recipe(_recipe(n_stations=10), "fisheye_180")
    path = write_observations(tmp_path / "obs.json", obs)
    assert read_observations(path).distortion_model == "equidistant"
    given = read_intrinsics(src)
    for std, out in (("0,0", "held.yaml"), (None, "refined.yaml")):
        args = ["calibrate", "--corners", str(path), "--intrinsics", str(src), "--write-intrinsics",
                str(tmp_path / out), "--intrinsics-format", "kalibr", "--json", str(tmp_path / (out + ".json"))]
        args += ["--intrinsics-std", std] if std else []
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, r.output
    held = read_intrinsics(tmp_path / "held.yaml")
    assert held.format == "kalibr" and held.distortion_model == "equidistant"
    a = np.array([given.fx, given.fy, given.cx, given.cy, *given.distortion])
    b = np.array([held.fx, held.fy, held.cx, held.cy, *held.distortion])
    assert np.abs(a - b).max() <= 1e-12 * np.abs(a).max()
    doc = json.loads((tmp_path / "refined.yaml.json").read_text())
    refined = np.asarray(doc["inputs"]["intrinsics_refined"])
    assert not np.array_equal(refined, a)  # refined under the given prior
    for fmt in ("opencv", "kalibr"):
        (tmp_path / fmt).write_text(intrinsics_text(from_calibration(doc), fmt))
        back = read_intrinsics(tmp_path / fmt)
        assert back.distortion_model == "equidistant"
        assert list(np.array([back.fx, back.fy, back.cx, back.cy, *back.distortion])) == list(refined)


def test_mismatched_models_are_refused(tmp_path):
    obs, _ = fisheye_observations_from_recipe(_recipe(n_stations=6), "fisheye_120")
    with pytest.raises(InputError, match="states a equidistant camera, got radtan intrinsics"):
        calibrate_corners(obs, intrinsics="800,800,640,512")
    path = write_observations(tmp_path / "obs.json", obs)
    doc = json.loads(path.read_text())
    doc["cameras"][0]["distortion_model"] = "omni"
    path.write_text(json.dumps(doc))
    with pytest.raises(DatasetFormatError, match=r"cameras\[0\].distortion_model: expected one of radtan, equidistant"):
        read_observations(path)


def test_a_rendered_fisheye_view_shows_the_corners_where_the_lens_projects_them():
    """A chessboard drawn through the 180 deg lens, 50 deg off its axis (the board visibly curved): OpenCV's detector
    finds every corner within a fifth of a pixel of the projection (its own error on pinhole renders is a few
    hundredths of a pixel RMS, docs/images.md)."""
    pytest.importorskip("cv2")
    from kinhec.vision.detect import detect
    from kinhec.vision.render import RenderSettings, render_view
    from kinhec.vision.targets import parse_target

    t = parse_target("chessboard:9x6:0.025")
    a = np.radians(50.0)
    T = np.eye(4)
    T[:3, :3] = se3.so3_exp(np.array([a + 0.2, 0.15, 0.1]))  # the board tilted towards the camera
    T[:3, 3] = se3.so3_exp(np.array([a, 0.0, 0.0])) @ np.array([0.0, 0.0, 0.35]) - T[:3, :3] @ [0.1, 0.06, 0]
    img = render_view(t, K180, (1280, 1024), T, np.random.default_rng(2), RenderSettings(blur_px=0.8, noise_dn=2.0))
    d = detect(img, t)
    assert d.ok and len(d.ids) == 54
    exact = project(K180, T[None], t.points_m[d.ids])[0]
    theta = np.degrees(np.arccos(unproject_points(K180, exact)[:, 2]))
    assert theta.min() > 30.0 and theta.max() > 55.0
    err = np.linalg.norm(d.uv_px - exact, axis=1)
    assert np.sqrt(np.mean(err**2)) < 0.1 and err.max() < 0.2


def test_the_result_names_the_fisheye_coefficients():
    obs, truth = fisheye_observations_from_recipe(_recipe(n_stations=8), "fisheye_120")
    res = calibrate_corners(obs)
    sg = res.to_dict()["sigma"]["intrinsics"]
    k = res.inputs["intrinsics_refined"]
    assert list(sg) == ["fx", "fy", "cx", "cy", "k1", "k2", "k3", "k4"]
    assert [sg[n]["value"] for n in sg] == k


def test_the_fisheye_start_passes_over_a_focal_length_that_gives_a_view_no_pose(monkeypatch):
    # eye-to-hand through the 120 deg lens turned 20 deg: at one of the start's focal lengths a view's corners land
    # beyond the field and its homography gives no pose; the start tries the other focal lengths instead of stopping,
    # and the noise-free corners give back the lens
    from kinhec.models import intrinsics as mi
    from kinhec.util.errors import DegenerateMotionError

    # (seed 31: the first of 1-39 whose stations, drawn as published, reach such a focal length)
    r = _recipe(sequence_id="fe", seed=31, configuration="eye_to_hand", n_stations=14, target="checker_9x6_25mm")
    obs, _ = fisheye_observations_from_recipe(r, "fisheye_120", pixel_std=0.0, tilt_deg=20.0)
    refused, poses = [], mi.poses_from_homographies

    def counted(K, H):
        try:
            return poses(K, H)
        except DegenerateMotionError:
            refused.append(H.shape[0])
            raise

    monkeypatch.setattr(mi, "poses_from_homographies", counted)
    cam = mi.calibrate_camera(mi.pack_views(obs.points_3d, obs.points_2d), obs.image_size, model="equidistant")
    assert refused  # the recording does reach a focal length whose homographies give a view no pose
    np.testing.assert_allclose(cam.intrinsics, K120, rtol=0, atol=1e-6)
