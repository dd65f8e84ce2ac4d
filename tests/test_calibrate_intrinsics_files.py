"""``calibrate --intrinsics FILE``: the intrinsics an OpenCV YAML, a Kalibr camchain or a calibrate JSON holds are the
numbers themselves (the same calibration, bit for bit), and a file that holds other ones is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kinhec.calibrate import calibrate
from kinhec.calibrate.corners import parse_intrinsics
from kinhec.util.errors import InputError

REGRESSION = Path(__file__).resolve().parents[1] / "regression" / "observations"
CORNERS = REGRESSION / "kuka_2.json"  # 1920 x 1200 images
K = [1056.39, 1056.53, 958.68, 586.93, -0.1312, 0.0987, 0.000129, 0.000309, -0.0486]


def _opencv_yaml(path: Path, k=K, size=(1920, 1200)) -> Path:
    fx, fy, cx, cy, *d = k
    path.write_text("%YAML:1.0\n---\n"
                    f"image_width: {size[0]}\nimage_height: {size[1]}\n"
                    "camera_matrix: !!opencv-matrix\n   rows: 3\n   cols: 3\n   dt: d\n"
                    f"   data: [ {fx!r}, 0., {cx!r}, 0., {fy!r}, {cy!r}, 0., 0., 1. ]\n"
                    "distortion_coefficients: !!opencv-matrix\n   rows: 1\n   cols: 5\n   dt: d\n"
                    f"   data: [ {', '.join(repr(v) for v in d)} ]\n")  # fmt: skip
    return path


def _kalibr(path: Path, model="radtan", k=K) -> Path:
    fx, fy, cx, cy, k1, k2, p1, p2, _ = k
    path.write_text("cam0:\n  camera_model: pinhole\n"
                    f"  intrinsics: [{fx!r}, {fy!r}, {cx!r}, {cy!r}]\n"
                    f"  distortion_model: {model}\n  distortion_coeffs: [{k1!r}, {k2!r}, {p1!r}, {p2!r}]\n"
                    "  resolution: [1920, 1200]\n")  # fmt: skip
    return path


def test_every_file_form_gives_the_numbers(tmp_path):
    as_text = parse_intrinsics(",".join(repr(v) for v in K))
    assert np.array_equal(parse_intrinsics(str(_opencv_yaml(tmp_path / "cam.yaml")), (1920, 1200)), as_text)
    kalibr = parse_intrinsics(str(_kalibr(tmp_path / "camchain.yaml")), (1920, 1200))
    assert np.array_equal(kalibr, np.r_[as_text[:8], 0.0])  # Kalibr's radtan has no k3
    doc = {"inputs": {"intrinsics": K}}
    (tmp_path / "calib.json").write_text(json.dumps(doc))
    assert np.array_equal(parse_intrinsics(str(tmp_path / "calib.json"), (1920, 1200)), as_text)


@pytest.mark.heavy
def test_calibrate_with_an_intrinsics_file_equals_the_numbers(tmp_path):
    by_numbers = calibrate(corners=CORNERS, intrinsics=",".join(repr(v) for v in K))
    by_file = calibrate(corners=CORNERS, intrinsics=str(_opencv_yaml(tmp_path / "cam.yaml")))
    assert np.array_equal(by_file.X, by_numbers.X) and np.array_equal(by_file.Y, by_numbers.Y)
    assert np.array_equal(by_file.X_std, by_numbers.X_std)


def test_a_file_of_other_intrinsics_is_refused_in_one_line(tmp_path):
    small = _opencv_yaml(tmp_path / "vga.yaml", size=(640, 480), k=[500, 500, 320, 240, 0, 0, 0, 0, 0])
    with pytest.raises(InputError, match="1920x1200") as e:
        calibrate(corners=CORNERS, intrinsics=str(small))
    assert "\n" not in str(e.value)
    # a fisheye file gives the fisheye's eight numbers fx fy cx cy k1 k2 k3 k4 (its four coefficients as written)
    fisheye = parse_intrinsics(str(_kalibr(tmp_path / "fisheye.yaml", model="equidistant")), (1920, 1200))
    assert np.array_equal(fisheye, np.asarray(K[:8], dtype=float))
    with pytest.raises(InputError, match="no such file"):
        parse_intrinsics(str(tmp_path / "missing.yaml"), (1920, 1200))


@pytest.mark.heavy
def test_a_calibration_json_is_an_intrinsics_file_with_its_image_size(tmp_path):
    from kinhec.models.intrinsics_files import read_intrinsics

    res = calibrate(corners=CORNERS)
    out = res.write_json(tmp_path / "calib.json")
    intr = read_intrinsics(out)  # no image size given: the JSON states it
    assert (intr.width_px, intr.height_px) == (1920, 1200)
    assert np.array_equal([intr.fx, intr.fy, intr.cx, intr.cy], res.inputs["intrinsics_refined"][:4])
