"""OpenCV's rational distortion model (eight coefficients): its projection against ``cv2.projectPoints``, its
inverse, calibration from generated wide-angle corners through ``calibrate --corners``, and the model read from and
written to intrinsics files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.calibrate.corners import calibrate_corners, intrinsics_vector, parse_intrinsics
from kinhec.cli import main
from kinhec.geometry import se3
from kinhec.models.intrinsics import (
    RATIONAL_NAMES,
    calibrate_camera,
    model_of,
    pack_views,
    project,
    project_points,
    project_points_jacobians,
    rational_from_equidistant,
    unproject_points,
)
from kinhec.models.intrinsics_files import IntrinsicsFile, read_intrinsics
from kinhec.models.intrinsics_writers import from_calibration, intrinsics_text, write_intrinsics
from kinhec.synth.observations import (
    FISHEYE_LENSES,
    RATIONAL_LENSES,
    fisheye_observations_from_recipe,
    read_observations,
    transform_from_pose_json,
    write_observations,
)
from kinhec.util.errors import InputError

from helpers.recordings import lens_recipe

K = np.array(RATIONAL_LENSES["rational_120"].intrinsics)


def _points(rng, n: int, max_deg: float) -> np.ndarray:
    """Points in front of the camera at 0.2-3 m, up to ``max_deg`` off the axis (uniform on the sphere's cap)."""
    th = np.arccos(rng.uniform(np.cos(np.radians(max_deg)), 1.0, n))
    ph = rng.uniform(0.0, 2.0 * np.pi, n)
    d = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], axis=-1)
    return d * rng.uniform(0.2, 3.0, n)[:, None]


def _random_rational(rng) -> np.ndarray:
    return np.array([rng.uniform(400, 1200), rng.uniform(400, 1200), rng.uniform(600, 700), rng.uniform(450, 550),
                     *rng.normal(0, 0.3, 2), *rng.normal(0, 1e-3, 2), rng.normal(0, 0.05), *rng.normal(0, 0.3, 3)])  # fmt: skip


@pytest.mark.parametrize("which", ["lens", "random", "pinhole"])
def test_projection_is_opencvs(which):
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(21)
    k = {"lens": K, "random": _random_rational(rng), "pinhole": _random_rational(rng)[:9]}[which]
    p = _points(rng, 3000, 60.0 if which == "lens" else 35.0)
    Km = np.array([[k[0], 0.0, k[2]], [0.0, k[1], k[3]], [0.0, 0.0, 1.0]])
    ref = cv2.projectPoints(p, np.zeros(3), np.zeros(3), Km, k[4:])[0][:, 0]
    uv = project_points(k, p)
    assert np.abs(uv - ref).max() < 1e-9
    T = np.eye(4)[None]
    assert np.array_equal(project(k, T, p), uv[None])


def test_jacobians_are_the_central_differences():
    """Both pinhole models' analytic derivatives, each column against central differences of its own size."""
    rng = np.random.default_rng(22)
    for k, max_deg in ((K, 60.0), (_random_rational(rng), 35.0), (_random_rational(rng)[:9], 35.0)):
        p = _points(rng, 400, max_deg)  # random coefficients: a narrower field keeps the denominator from its zero
        uv, dp, dk = project_points_jacobians(k, p)
        assert np.array_equal(uv, project_points(k, p)) and dk.shape == (400, 2, k.size)
        h = 1e-6
        num_p = np.stack([(project_points(k, p + h * e) - project_points(k, p - h * e)) / (2 * h) for e in np.eye(3)], -1)
        assert np.abs(dp - num_p).max() < 1e-6 * np.abs(num_p).max()
        for j in range(k.size):
            hj = 1e-4 if j < 4 else 1e-7
            e = np.zeros(k.size)
            e[j] = hj
            num = (project_points(k + e, p) - project_points(k - e, p)) / (2 * hj)
            assert np.abs(dk[..., j] - num).max() <= 1e-5 * max(np.abs(num).max(), 1e-12), (k.size, j)


def test_unprojection_round_trips_within_the_field():
    rng = np.random.default_rng(23)
    p = _points(rng, 3000, 60.0)
    for k in (K, K[:9] * np.r_[np.ones(4), 0.1 * np.ones(5)]):
        ray = unproject_points(k, project_points(k, p))
        assert np.abs(ray - p / np.linalg.norm(p, axis=1)[:, None]).max() < 1e-10


def test_the_model_is_told_by_the_vector_length():
    assert model_of(K) == "rational" and model_of(K[:9]) == "radtan" and model_of(K[:8]) == "equidistant"
    with pytest.raises(InputError, match="or 12 .*rational.*got 10"):
        model_of(np.ones(10))
    assert parse_intrinsics(",".join(str(v) for v in K)).tolist() == K.tolist()


def test_rational_from_equidistant_is_the_same_lens():
    """The start the rational fit takes from a fisheye: within a fraction of a pixel of the fisheye out to 60 deg."""
    k8 = np.array(FISHEYE_LENSES["fisheye_120"].intrinsics)
    k12 = rational_from_equidistant(k8, np.radians(60.0))
    p = _points(np.random.default_rng(24), 2000, 60.0)
    assert k12.size == 12 and np.abs(project_points(k12, p) - project_points(k8, p)).max() < 0.05


def _recipe(**kw):
    return lens_recipe(**{"sequence_id": "ra", "seed": 4, **kw})


def test_exact_corners_give_the_lens_back():
    """Noise-free corners through the 120 deg lens: the rational fit reprojects them to a few thousandths of a pixel
    (what the coefficients' prior costs: 0.0013-0.0021 px on the look-at stations of seeds 1-8; the detector's noise
    is 0.08 px) and its pixels agree with the lens's over the
    corners' field (its coefficients themselves are nearly degenerate: numerator and denominator trade off)."""
    obs, truth = fisheye_observations_from_recipe(_recipe(), "rational_120", pixel_std=0.0, tilt_deg=20.0)
    assert obs.distortion_model == "rational" and list(truth["parameters"]) == list(RATIONAL_NAMES)
    views = pack_views(obs.points_3d, obs.points_2d)
    cam = calibrate_camera(views, obs.image_size, model="rational")
    assert cam.intrinsics.size == 12 and cam.rms_px < 3e-3
    rays = unproject_points(K, np.concatenate(obs.points_2d))
    assert np.degrees(np.arccos(rays[:, 2])).max() > 45.0  # the corners reach far into the field
    # (at most 0.015 px on seed 4's stations, a fifth of the detector's noise)
    assert np.abs(project_points(cam.intrinsics, rays) - project_points(K, rays)).max() < 0.02
    fisheye = calibrate_camera(views, obs.image_size, model="equidistant")  # the lens's decentring it cannot follow
    assert fisheye.rms_px > 10 * cam.rms_px  # the lens's decentring shows in the fisheye's pixels
    given = calibrate_camera(views, obs.image_size, intrinsics=K)  # a PnP with the given lens
    assert given.rms_px < 1e-8 and np.array_equal(given.intrinsics, K)


@pytest.mark.parametrize("setup", ["eye_in_hand", "eye_to_hand"])
def test_rational_corners_calibrate_to_the_truth(setup):
    target = "grid_10x8_60mm" if setup == "eye_in_hand" else "checker_9x6_25mm"
    obs, truth = fisheye_observations_from_recipe(_recipe(configuration=setup, target=target), "rational_120",
                                                  tilt_deg=20.0)  # fmt: skip
    res = calibrate_corners(obs)
    X, Y = (transform_from_pose_json(truth["poses"][n]) for n in "XY")
    for est, tru, std in ((res.X, X, res.X_std), (res.Y, Y, res.Y_std)):
        d = se3.invert_transform(tru) @ est
        err = np.concatenate([se3.so3_log(d[:3, :3]), est[:3, 3] - tru[:3, 3]])
        assert np.all(np.abs(err) < 4.5 * std), (err / std)
    assert res.inputs["distortion_model"] == "rational" and len(res.inputs["intrinsics_refined"]) == 12
    assert list(res.observability["intrinsics_std"]) == list(RATIONAL_NAMES)
    sg = res.to_dict()["sigma"]["intrinsics"]
    assert [sg[n]["value"] for n in sg] == res.inputs["intrinsics_refined"]
    assert abs(res.observability["pixel_std_px"] / 0.08 - 1.0) < 0.1


def test_a_rational_file_is_fitted_as_given(tmp_path):
    """The lens written as OpenCV YAML (eight coefficients, as cv2.FileStorage writes them) and given to --corners
    held fixed: the result holds the twelve numbers; the same file written back reads the same floats."""
    cv2 = pytest.importorskip("cv2")
    path = tmp_path / "cam.yaml"
    fs = cv2.FileStorage(str(path), cv2.FILE_STORAGE_WRITE)
    fs.write("image_width", 1280)
    fs.write("image_height", 1024)
    fs.write("camera_matrix", np.array([[K[0], 0, K[2]], [0, K[1], K[3]], [0, 0, 1.0]]))
    fs.write("distortion_coefficients", K[4:].reshape(1, 8))
    fs.release()
    intr = read_intrinsics(path)
    assert intr.distortion_model == "radtan" and len(intr.distortion) == 8  # OpenCV states no model: the count tells
    assert intrinsics_vector(intr, path).tolist() == K.tolist()
    obs, _ = fisheye_observations_from_recipe(_recipe(n_stations=10), "rational_120", tilt_deg=20.0)
    res = calibrate_corners(obs, intrinsics=path, intrinsics_prior=(0.0, 0.0))
    assert res.inputs["intrinsics"] == K.tolist() and res.inputs["distortion_model"] == "rational"
    back = from_calibration(res.to_dict())
    assert back.distortion_model == "rational" and back.distortion == tuple(K[4:])
    out = write_intrinsics(tmp_path / "out.yaml", back, "opencv")
    again = read_intrinsics(out)
    assert again.distortion_model == "rational" and again.distortion == tuple(K[4:])
    fs = cv2.FileStorage(str(out), cv2.FILE_STORAGE_READ)
    assert np.array_equal(fs.getNode("distortion_coefficients").mat().ravel(), K[4:])
    with pytest.raises(InputError, match="^Kalibr has no rational model .*: write the OpenCV form instead$"):
        intrinsics_text(back, "kalibr")


def test_ros_rational_polynomial_and_thin_prism_terms(tmp_path):
    base = ("image_width: 1280\nimage_height: 1024\ncamera_matrix:\n  rows: 3\n  cols: 3\n  data: [800, 0, 640, 0, "
            "801, 512, 0, 0, 1]\ndistortion_model: rational_polynomial\ndistortion_coefficients:\n  rows: 1\n  cols: "
            "{n}\n  data: [{d}]\n")  # fmt: skip
    p = tmp_path / "ros.yaml"
    p.write_text(base.format(n=5, d="0.1, -0.02, 0.001, 0.0005, 0.003"))
    intr = read_intrinsics(p)
    assert intr.distortion_model == "rational"  # ROS's name, five of its eight terms given: the rest zero
    assert intrinsics_vector(intr, p).tolist() == [800, 801, 640, 512, 0.1, -0.02, 0.001, 0.0005, 0.003, 0, 0, 0]
    q = tmp_path / "prism.yaml"
    q.write_text(base.format(n=12, d="0.1, -0.02, 0.001, 0.0005, 0.003, 0.2, 0.01, 0.002, 0.0, 0.0, 0.0, 0.0"))
    assert intrinsics_vector(read_intrinsics(q), q).size == 12  # zero thin-prism terms: the rational model
    q.write_text(base.format(n=12, d="0.1, -0.02, 0.001, 0.0005, 0.003, 0.2, 0.01, 0.002, 0.0, 0.0004, 0.0, 0.0"))
    with pytest.raises(InputError, match=r"prism.yaml: expected at most 8 distortion coefficients .* got 12 .*0\.0004"):
        intrinsics_vector(read_intrinsics(q), q)


def test_calibrate_cli_estimates_the_stated_rational_model_and_writes_it(tmp_path):
    obs, _ = fisheye_observations_from_recipe(_recipe(n_stations=10), "rational_120", tilt_deg=20.0)
    path = write_observations(tmp_path / "obs.json", obs)
    assert read_observations(path).distortion_model == "rational"
    doc = json.loads(path.read_text())
    assert doc["cameras"][0]["distortion_model"] == "rational"
    r = CliRunner().invoke(main, ["calibrate", "--corners", str(path), "--json", str(tmp_path / "r.json"),
                                  "--write-intrinsics", str(tmp_path / "cam.yaml"), "--yaml", str(tmp_path / "x.yaml")])  # fmt: skip
    assert r.exit_code == 0, r.output
    inputs = json.loads((tmp_path / "r.json").read_text())["inputs"]
    k = inputs["intrinsics_refined"]
    back = read_intrinsics(tmp_path / "cam.yaml")
    assert back.distortion_model == "rational" and [back.fx, back.fy, back.cx, back.cy, *back.distortion] == k
    cv2 = pytest.importorskip("cv2")
    fs = cv2.FileStorage(str(tmp_path / "x.yaml"), cv2.FILE_STORAGE_READ)  # the result's YAML: OpenCV's eight terms
    assert np.allclose(fs.getNode("distortion_coefficients").mat().ravel(), inputs["intrinsics"][4:], rtol=1e-12)
    fs.release()
    r = CliRunner().invoke(main, ["calibrate", "--corners", str(path), "--write-intrinsics", str(tmp_path / "k.yaml"),
                                  "--intrinsics-format", "kalibr"])  # fmt: skip
    assert r.exit_code == 2 and "Kalibr has no rational model" in r.output and not (tmp_path / "k.yaml").exists()


def test_a_board_beyond_the_field_is_no_ghost_in_the_image():
    """The rational model's radial map turns back beyond about 68 deg off the axis (for this lens): a board 80 deg off
    the axis projects into the image by the formula, but no ray of the image reaches it. Its corners are not
    counted (no view), and the rendered image shows no board; the same board 35 deg off the axis is seen where the
    lens projects it."""
    cv2 = pytest.importorskip("cv2")
    from kinhec.vision.detect import detect
    from kinhec.vision.render import RenderSettings, exact_corners, render_view
    from kinhec.vision.targets import parse_target

    t = parse_target("chessboard:9x6:0.025")
    size = RATIONAL_LENSES["rational_120"].image_size
    views = []
    for deg, dist in ((79.5, 3.0), (35.0, 0.6)):  # the first far, so that all of it lies 77-82 deg off the axis
        a = np.radians(deg)
        T = np.eye(4)
        T[:3, :3] = se3.so3_exp(np.array([0.0, a, 0.0]))  # the board square to the line of sight
        centre = dist * np.array([np.sin(a), 0.0, np.cos(a)])
        T[:3, 3] = centre - T[:3, :3] @ np.r_[t.points_m.mean(axis=0)[:2], 0.0]
        views.append(T)
    T = np.stack(views)
    uv = project(K, T, t.points_m)
    inside = (uv >= 0).all(axis=-1) & (uv[..., 0] < size[0]) & (uv[..., 1] < size[1])
    assert inside[0].all() and inside[1].all()  # the formula puts both boards in the image
    ids, pix, used = exact_corners(t, K, size, T)
    assert used.tolist() == [False, True] and np.array_equal(pix[0], uv[1])
    settings = RenderSettings(blur_px=0.8, noise_dn=2.0, supersample=2)
    ghost = render_view(t, K, size, T[0], np.random.default_rng(1), settings)
    seen = render_view(t, K, size, T[1], np.random.default_rng(1), settings)
    assert not detect(ghost, t).ok
    d = detect(seen, t)
    assert d.ok and np.sqrt(np.mean(np.sum((d.uv_px - uv[1, d.ids]) ** 2, axis=1))) < 0.1


def test_a_view_whose_homography_gives_no_pose_is_named_not_a_linalg_crash():
    # a camera looking at the board head-on: the homography of a pose is K [r1 r2 t]; one view's homography zero in
    # its first column (corners all on one line) gives no rotation, and used to end in SVD's LinAlgError
    from kinhec.models.intrinsics import poses_from_homographies
    from kinhec.util.errors import DegenerateMotionError

    K = np.array([[500.0, 0.0, 320.0], [0.0, 500.0, 240.0], [0.0, 0.0, 1.0]])
    Rt = np.array([[1.0, 0.0, 0.01], [0.0, 1.0, -0.02], [0.0, 0.0, 0.5]])  # [r1 r2 t], the board 0.5 m away
    H = np.stack([K @ Rt, K @ Rt])
    T = poses_from_homographies(K, H)
    np.testing.assert_allclose(T[0, :3, 3], [0.01, -0.02, 0.5], atol=1e-12)
    H[1][:, 0] = 0.0
    with pytest.raises(DegenerateMotionError, match=r"views \[1\] give no target pose"):
        poses_from_homographies(K, H)
    H[1] = np.nan
    with pytest.raises(DegenerateMotionError, match=r"views \[1\] give no target pose"):
        poses_from_homographies(K, H)
