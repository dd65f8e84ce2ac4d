"""Intrinsics written back as OpenCV YAML and Kalibr camchains: read back exactly, by kinhec and by OpenCV."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kinhec.cli import main
from kinhec.models.intrinsics_files import IntrinsicsFile, read_intrinsics
from kinhec.models.intrinsics_writers import from_calibration, intrinsics_text, write_intrinsics
from kinhec.util.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
CORNERS = ROOT / "regression" / "observations" / "synth_pnp.json"


def _random_intrinsics(rng, model="radtan", n=5) -> IntrinsicsFile:
    w, h = 1280, 720
    return IntrinsicsFile(fx=float(rng.uniform(500, 2000)), fy=float(rng.uniform(500, 2000)),
                          cx=float(w / 2 + rng.normal(0, 20)), cy=float(h / 2 + rng.normal(0, 20)),
                          width_px=w, height_px=h, distortion=tuple(rng.normal(0, 0.1, n) * 10.0 ** -rng.integers(0, 8, n)),
                          distortion_model=model)  # fmt: skip


@pytest.mark.parametrize("fmt, model, n", [("opencv", "radtan", 5), ("opencv", "equidistant", 4),
                                           ("kalibr", "equidistant", 4), ("opencv", "rational", 8)])
def test_written_files_read_back_the_same_floats(tmp_path, fmt, model, n):
    rng = np.random.default_rng(11)
    for i in range(5):  # small and large exponents: every digit survives the text
        intr = _random_intrinsics(rng, model, n)
        back = read_intrinsics(write_intrinsics(tmp_path / f"{fmt}{i}.yaml", intr, fmt))
        assert (back.fx, back.fy, back.cx, back.cy) == (intr.fx, intr.fy, intr.cx, intr.cy)
        assert (back.width_px, back.height_px) == (1280, 720)
        assert back.distortion == intr.distortion and back.distortion_model == model
        assert back.format == ("opencv_yaml" if fmt == "opencv" else "kalibr")


def test_kalibr_radtan_keeps_four_terms_and_refuses_a_k3(tmp_path):
    rng = np.random.default_rng(3)
    intr = _random_intrinsics(rng, "radtan", 4)
    intr5 = IntrinsicsFile(intr.fx, intr.fy, intr.cx, intr.cy, 1280, 720, intr.distortion + (0.0,))
    back = read_intrinsics(write_intrinsics(tmp_path / "k.yaml", intr5, "kalibr"))
    assert back.distortion == intr.distortion  # k3 = 0 written as Kalibr's four terms
    bad = IntrinsicsFile(intr.fx, intr.fy, intr.cx, intr.cy, 1280, 720, intr.distortion + (0.02,))
    with pytest.raises(InputError, match=r"k1 k2 p1 p2 only.*0\.02"):
        write_intrinsics(tmp_path / "bad.yaml", bad, "kalibr")
    assert not (tmp_path / "bad.yaml").exists()


def test_opencv_pads_short_radtan_to_five_terms():
    intr = IntrinsicsFile(800.0, 801.0, 640.5, 360.25, 1280, 720, (0.1, -0.2))
    text = intrinsics_text(intr, "opencv")
    assert "rows: 5" in text and text.startswith("%YAML:1.0\n")
    assert "distortion_model" not in text  # OpenCV's own form has no such key for its radtan model


def test_opencv_reads_the_opencv_form(tmp_path):
    cv2 = pytest.importorskip("cv2", reason="OpenCV (opencv-python-headless, the dev extra) reads the file here")
    rng = np.random.default_rng(5)
    intr = _random_intrinsics(rng)
    path = write_intrinsics(tmp_path / "cam.yaml", intr, "opencv")
    fs = cv2.FileStorage(str(path), cv2.FILE_STORAGE_READ)
    try:
        K = fs.getNode("camera_matrix").mat()
        D = fs.getNode("distortion_coefficients").mat().ravel()
        w, h = int(fs.getNode("image_width").real()), int(fs.getNode("image_height").real())
    finally:
        fs.release()
    np.testing.assert_array_equal(K, [[intr.fx, 0, intr.cx], [0, intr.fy, intr.cy], [0, 0, 1]])
    np.testing.assert_array_equal(D, intr.distortion)
    assert (w, h) == (1280, 720)


@pytest.mark.parametrize("intr, match", [
    (IntrinsicsFile(800.0, 800.0, 640.0, 360.0, 0, 0), "image size"),
    (IntrinsicsFile(800.0, 800.0, 640.0, 360.0, 1280, 720, (0.1,) * 3, "equidistant"), "4 coefficients"),
    (IntrinsicsFile(800.0, 800.0, 640.0, 360.0, 1280, 720, (), "omni"), "distortion model"),
])  # fmt: skip
def test_bad_intrinsics_are_refused(intr, match):
    with pytest.raises(InputError, match=match):
        intrinsics_text(intr, "opencv")
    with pytest.raises(InputError, match="intrinsics format"):
        intrinsics_text(IntrinsicsFile(800.0, 800.0, 640.0, 360.0, 1280, 720), "ros")


def test_from_calibration_prefers_the_refined_intrinsics():
    inputs = {"intrinsics": [900.0, 900.0, 640.0, 360.0, 0, 0, 0, 0, 0],
              "intrinsics_refined": [901.0, 899.0, 641.0, 359.0, 0.01, 0.02, 0.0, 0.0, 0.03], "image_size": [1280, 720]}
    intr = from_calibration({"inputs": inputs})
    assert (intr.fx, intr.fy, intr.cx, intr.cy) == (901.0, 899.0, 641.0, 359.0)
    assert intr.distortion == (0.01, 0.02, 0.0, 0.0, 0.03) and (intr.width_px, intr.height_px) == (1280, 720)
    del inputs["intrinsics_refined"]
    assert from_calibration(inputs).fx == 900.0
    with pytest.raises(InputError, match="pose files"):
        from_calibration({"inputs": {"hand": "a.txt"}})


def test_calibrate_writes_intrinsics_that_calibrate_reads(tmp_path):
    runner = CliRunner()
    out, js = tmp_path / "cam.yaml", tmp_path / "calib.json"
    r = runner.invoke(main, ["calibrate", "--corners", str(CORNERS), "--write-intrinsics", str(out), "--json", str(js)])
    assert r.exit_code == 0, r.output
    stored = json.loads(js.read_text())["inputs"]
    back = read_intrinsics(out, image_size=stored["image_size"])
    assert [back.fx, back.fy, back.cx, back.cy, *back.distortion] == stored["intrinsics_refined"]
    # the same camera written from the JSON: the file is the calibration's, whichever way it is made
    assert out.read_text() == intrinsics_text(from_calibration(json.loads(js.read_text())), "opencv")


def test_calibrate_refuses_write_intrinsics_from_pose_files(tmp_path):
    out = tmp_path / "cam.yaml"
    r = CliRunner().invoke(main, ["calibrate", "--hand", str(tmp_path / "h.txt"), "--eye", str(tmp_path / "e.txt"),
                                  "--write-intrinsics", str(out)])  # fmt: skip
    assert r.exit_code == 2
    assert "--write-intrinsics" in r.output and "--corners or --images" in r.output
    assert not out.exists()


KALIBR_CAMCHAINS = {
    "radtan": """cam0:
  cam_overlaps: []
  camera_model: pinhole
  distortion_coeffs: [-0.28340811217029355, 0.07395907389290132, 0.00019359502856909603, 1.7618711454538528e-05]
  distortion_model: radtan
  intrinsics: [458.6548807207614, 457.2966964634893, 367.2158039615726, 248.37534060980727]
  resolution: [752, 480]
  rostopic: /cam0/image_raw
""",
    "equidistant": """cam0:
  cam_overlaps: []
  camera_model: pinhole
  distortion_coeffs: [0.0034823894022493434, 0.0007150348452162257, -0.0020532361418706202, 0.00020293673591811182]
  distortion_model: equidistant
  intrinsics: [190.97847715128717, 190.9733070521226, 254.93170605935475, 256.8974428996504]
  resolution: [512, 512]
  rostopic: /cam0/image_raw
""",
}


@pytest.mark.parametrize("model", ["radtan", "equidistant"])
def test_a_kalibr_camchain_is_written_back_as_it_was_read(tmp_path, model):
    """A camchain as Kalibr writes it (pinhole-radtan, pinhole-equi), read and written back as Kalibr: the camera's
    model, intrinsics, coefficients and resolution are the file's to 1e-12 (the writer keeps one camera's lens: the
    topic and overlaps are not written)."""
    import yaml

    src = tmp_path / "camchain.yaml"
    src.write_text(KALIBR_CAMCHAINS[model])
    intr = read_intrinsics(src)
    out = write_intrinsics(tmp_path / "back.yaml", intr, "kalibr")
    a, b = yaml.safe_load(src.read_text())["cam0"], yaml.safe_load(out.read_text())["cam0"]
    assert (b["camera_model"], b["distortion_model"], b["resolution"]) == ("pinhole", model, a["resolution"])
    for key in ("intrinsics", "distortion_coeffs"):
        x, y = np.array(a[key], dtype=float), np.array(b[key], dtype=float)
        assert x.shape == y.shape and np.abs(x - y).max() <= 1e-12 * np.abs(x).max(), key
    again = read_intrinsics(out)
    assert (again.fx, again.fy, again.cx, again.cy, again.distortion) == (intr.fx, intr.fy, intr.cx, intr.cy,
                                                                          intr.distortion)  # fmt: skip
