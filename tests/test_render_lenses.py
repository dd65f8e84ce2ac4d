"""``kinhec render --intrinsics``: a sequence drawn through a fisheye or a rational lens from an intrinsics file, its
corners where the lens projects them, and ``kinhec calibrate --images --intrinsics`` on those images."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.calibrate.corners import intrinsics_from_file
from kinhec.cli import main
from kinhec.geometry import se3
from kinhec.models.intrinsics import project
from kinhec.models.intrinsics_files import IntrinsicsFile
from kinhec.models.intrinsics_writers import write_intrinsics
from kinhec.synth.observations import read_observations, transform_from_pose_json
from kinhec.vision.pairing import list_images

from helpers.recordings import small_pnp_tier

cv2 = pytest.importorskip("cv2")

#: Two lenses on a 640 x 480 sensor: OpenCV's rational model (the coefficients of the generated 120 deg lens) as
#: an OpenCV YAML, and a fisheye as a Kalibr camchain (pinhole-equi).
LENSES = {
    "rational": IntrinsicsFile(400.0, 400.8, 321.3, 239.2, 640, 480, (2.0, 0.3, 2e-4, -1.5e-4, -0.01, 2.3, 0.8, 0.02),
                               "rational"),
    "equidistant": IntrinsicsFile(420.0, 420.8, 321.3, 239.2, 640, 480, (-0.012, 0.004, -0.0011, 0.0002), "equidistant"),
}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A generated eye-in-hand pnp sequence (8 stations, 9x6 chessboard of 25 mm)."""
    root = tmp_path_factory.mktemp("lenses")
    small_pnp_tier(root)
    return root


@pytest.mark.parametrize("model, fmt", [("rational", "opencv"), ("equidistant", "kalibr")])
def test_render_through_a_lens_file_and_calibrate_its_images(data, tmp_path, model, fmt):
    from kinhec.vision.detect import detect
    from kinhec.vision.targets import parse_target

    cam = write_intrinsics(tmp_path / "lens.yaml", LENSES[model], fmt)
    k = intrinsics_from_file(cam)
    out = tmp_path / "r"
    r = CliRunner().invoke(main, ["render", str(data / "data"), "--sequence", "pnp-000000", "--out", str(out),
                                  "--intrinsics", str(cam)])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert f"--intrinsics {out / 'camera.yaml'}" in r.output  # the calibrate line takes the lens from its file
    assert np.array_equal(intrinsics_from_file(out / "camera.yaml"), k)
    truth = json.loads((out / "truth.json").read_text())
    assert truth["distortion_model"] == model and truth["image_size"] == [640, 480]
    exact = read_observations(out / "exact_corners.json")
    assert exact.distortion_model == model and exact.image_size == (640, 480)
    # the detector finds the chessboard's corners where the lens projects them (its own error on pinhole renders is a
    # few hundredths of a pixel RMS)
    t = parse_target(truth["target"])
    errs = []
    for img, v in zip(list_images(out / "images"), truth["views"]):
        d = detect(cv2.imread(str(img), cv2.IMREAD_GRAYSCALE), t)
        if not d.ok:
            continue
        uv = project(k, transform_from_pose_json(v["T_cam_target"])[None], t.points_m[d.ids])[0]
        e = np.linalg.norm(d.uv_px - uv, axis=1)
        errs.append(np.minimum(e, np.linalg.norm(d.uv_px[::-1] - uv, axis=1)))  # the board's half-turn symmetry
    errs = np.concatenate(errs)
    assert len(errs) >= 6 * 54 and np.sqrt(np.mean(errs**2)) < 0.1 and errs.max() < 0.3
    res = tmp_path / "res.json"
    r = CliRunner().invoke(main, ["calibrate", "--images", str(out / "images"), "--hand", str(out / "hand_poses.txt"),
                                  "--target", truth["target"], "--intrinsics", str(out / "camera.yaml"), "--json",
                                  str(res)])  # fmt: skip
    assert r.exit_code == 0, r.output
    d = json.loads(res.read_text())
    assert d["inputs"]["distortion_model"] == model and d["inputs"]["intrinsics"] == k.tolist()
    X, X_true = np.array(d["X"]), np.array(truth["X"])
    e = np.concatenate([se3.so3_log(X_true[:3, :3].T @ X[:3, :3]), X[:3, 3] - X_true[:3, 3]])
    assert np.all(np.abs(e) < 4.5 * np.array(d["X_std"])), e / np.array(d["X_std"])


def test_render_refuses_a_lens_file_beside_a_distortion(data, tmp_path):
    cam = write_intrinsics(tmp_path / "lens.yaml", LENSES["rational"], "opencv")
    r = CliRunner().invoke(main, ["render", str(data / "data"), "--sequence", "pnp-000000", "--out", str(tmp_path / "r"),
                                  "--intrinsics", str(cam), "--distortion", "0.1,0,0,0"])  # fmt: skip
    assert r.exit_code == 2 and "expected either it or --intrinsics" in r.output
    assert not (tmp_path / "r").exists()


@pytest.fixture(scope="module")
def fisheye_render(data, tmp_path_factory):
    """The sequence drawn through the fisheye of :data:`LENSES` (its intrinsics written as a Kalibr camchain)."""
    root = tmp_path_factory.mktemp("fisheye")
    cam = write_intrinsics(root / "lens.yaml", LENSES["equidistant"], "kalibr")
    r = CliRunner().invoke(main, ["render", str(data / "data"), "--sequence", "pnp-000000", "--out", str(root / "r"),
                                  "--intrinsics", str(cam)])  # fmt: skip
    assert r.exit_code == 0, r.output
    return root / "r", json.loads((root / "r" / "truth.json").read_text())


def test_images_estimate_a_fisheye_lens_and_write_it_back(fisheye_render, tmp_path):
    out, truth = fisheye_render
    res, corners, cam = tmp_path / "res.json", tmp_path / "corners.json", tmp_path / "cam.yaml"
    r = CliRunner().invoke(main, ["calibrate", "--images", str(out / "images"), "--hand", str(out / "hand_poses.txt"),
                                  "--target", truth["target"], "--lens", "fisheye", "--json", str(res),
                                  "--save-corners", str(corners), "--write-intrinsics", str(cam),
                                  "--intrinsics-format", "kalibr"])  # fmt: skip
    assert r.exit_code == 0, r.output
    d = json.loads(res.read_text())
    assert d["inputs"]["distortion_model"] == "equidistant" and d["inputs"]["images"]["lens"] == "fisheye"
    # X against the rendered sequence's truth, within its reported standard deviation
    X, X_true = np.array(d["X"]), np.array(truth["X"])
    e = np.concatenate([se3.so3_log(X_true[:3, :3].T @ X[:3, :3]), X[:3, 3] - X_true[:3, 3]])
    assert np.all(np.abs(e) < 4.5 * np.array(d["X_std"])), e / np.array(d["X_std"])
    # the lens estimated: its eight numbers within their standard deviations of the lens drawn
    k_true = np.array([truth["intrinsics"][n] for n in ("fx", "fy", "cx", "cy", "k1", "k2", "k3", "k4")])
    k = np.array(d["inputs"]["intrinsics_refined"])
    k_std = np.array(list(d["observability"]["intrinsics_std"].values()))
    assert k.size == 8 and np.all(np.abs(k - k_true) < 4.5 * k_std), (k - k_true) / k_std
    # the corner file states the lens, and the camera written back is the refined one, as Kalibr's pinhole-equi
    assert read_observations(corners).distortion_model == "equidistant"
    assert "distortion_model: equidistant" in cam.read_text() and "camera_model: pinhole" in cam.read_text()
    assert np.allclose(intrinsics_from_file(cam), k, rtol=1e-12, atol=1e-12)


def test_images_estimate_a_rational_lens_written_as_opencv_not_kalibr(data, tmp_path):
    cam = write_intrinsics(tmp_path / "lens.yaml", LENSES["rational"], "opencv")
    out = tmp_path / "r"
    r = CliRunner().invoke(main, ["render", str(data / "data"), "--sequence", "pnp-000000", "--out", str(out),
                                  "--intrinsics", str(cam)])  # fmt: skip
    assert r.exit_code == 0, r.output
    truth = json.loads((out / "truth.json").read_text())
    args = ["calibrate", "--images", str(out / "images"), "--hand", str(out / "hand_poses.txt"), "--target",
            truth["target"], "--lens", "rational", "--json", str(tmp_path / "res.json")]
    r = CliRunner().invoke(main, [*args, "--write-intrinsics", str(tmp_path / "cam.yaml")])
    assert r.exit_code == 0, r.output
    d = json.loads((tmp_path / "res.json").read_text())
    assert d["inputs"]["distortion_model"] == "rational" and len(d["inputs"]["intrinsics_refined"]) == 12
    X, X_true = np.array(d["X"]), np.array(truth["X"])
    e = np.concatenate([se3.so3_log(X_true[:3, :3].T @ X[:3, :3]), X[:3, 3] - X_true[:3, 3]])
    assert np.all(np.abs(e) < 4.5 * np.array(d["X_std"])), e / np.array(d["X_std"])
    assert "distortion_model: rational_polynomial" in (tmp_path / "cam.yaml").read_text()
    assert np.allclose(intrinsics_from_file(tmp_path / "cam.yaml"), d["inputs"]["intrinsics_refined"], rtol=1e-12)
    r = CliRunner().invoke(main, [*args, "--write-intrinsics", str(tmp_path / "k.yaml"), "--intrinsics-format", "kalibr"])
    assert r.exit_code == 2 and "Kalibr has no rational model" in r.output and not (tmp_path / "k.yaml").exists()


@pytest.mark.parametrize("lens, given, named", [
    ("fisheye", "400,400,320,240,0,0,0,0,0", "--lens fisheye estimates a fisheye camera, got pinhole intrinsics (9 numbers)"),
    ("pinhole", "lens.yaml", "--lens pinhole estimates a pinhole camera, got fisheye intrinsics (8 numbers)"),
    ("rational", "lens.yaml", "--lens rational estimates a rational camera, got fisheye intrinsics (8 numbers)"),
])  # fmt: skip
def test_a_lens_that_contradicts_the_given_intrinsics_is_refused_in_one_line(tmp_path, lens, given, named):
    if given == "lens.yaml":
        given = str(write_intrinsics(tmp_path / "lens.yaml", LENSES["equidistant"], "opencv"))
    (tmp_path / "images").mkdir()
    (tmp_path / "hand.txt").write_text(" ".join(["1", "0", "0", "0", "0", "1", "0", "0", "0", "0", "1", "0", "0", "0", "0", "1"]) + "\n")
    r = CliRunner().invoke(main, ["calibrate", "--images", str(tmp_path / "images"), "--hand", str(tmp_path / "hand.txt"),
                                  "--target", "chessboard:9x6:0.025", "--lens", lens, "--intrinsics", given])  # fmt: skip
    assert r.exit_code == 2 and named in r.output and f"from --intrinsics {given}" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1  # one line, before any image is read


def test_a_lens_without_images_is_refused(tmp_path):
    obs = tmp_path / "c.json"
    obs.write_text("{}")
    r = CliRunner().invoke(main, ["calibrate", "--corners", str(obs), "--lens", "fisheye"])
    assert r.exit_code == 2 and "lens: the lens model estimated from images (--images), got lens 'fisheye'" in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_the_refusal_docs_images_shows_is_what_the_command_prints(tmp_path, monkeypatch):
    doc = (Path(__file__).resolve().parents[1] / "docs" / "images.md").read_text(encoding="utf-8")
    line = next(ln for ln in doc.splitlines() if ln.startswith("kinhec calibrate: error: lens: --lens fisheye"))
    monkeypatch.chdir(tmp_path)
    write_intrinsics("camera.yaml", IntrinsicsFile(920.0, 920.0, 640.0, 360.0, 1280, 720, (0.0,) * 5, "radtan"))
    Path("images").mkdir()
    Path("hand.txt").write_text(" ".join("1000010000100001") + "\n")
    r = CliRunner().invoke(main, ["calibrate", "--images", "images", "--hand", "hand.txt", "--target",
                                  "chessboard:9x6:0.025", "--lens", "fisheye", "--intrinsics", "camera.yaml"])  # fmt: skip
    assert r.exit_code == 2 and r.output.strip() == line, r.output
