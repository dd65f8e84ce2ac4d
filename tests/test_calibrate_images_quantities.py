"""The choice between sub-pixel corner methods (``kinhec.calibrate.images._agrees_best``) at its margin, and the lens
model ``--lens`` names."""

from __future__ import annotations

import math

import numpy as np
import pytest
from types import SimpleNamespace

from kinhec.calibrate import images


def _run(rot, trans):
    return (None, None, [], SimpleNamespace(observability={"robot_std_rad_m": [rot, trans]}))


def test_another_method_replaces_the_first_only_beyond_the_sampling_error():
    """12 views: each level's log has a sampling std of 1 / sqrt(6 N); their sum's is 1 / sqrt(3 N) = 1/6."""
    n = 12
    margin = 1.0 / math.sqrt(3.0 * n)
    first = _run(1e-3, 1e-3)
    for drop, want in ((0.8 * margin, "sector"), (1.2 * margin, "subpix")):
        f = math.exp(-drop / 2)  # both levels smaller by this factor: the sum of logs by `drop`
        runs = {"sector": first, "subpix": _run(1e-3 * f, 1e-3 * f)}
        assert images._agrees_best(runs, n) == want
        assert math.isclose(images._robot_level(runs["sector"][3]) - images._robot_level(runs["subpix"][3]), drop)


def _calibrate_with_failures(monkeypatch, tmp_path, n_images, failed):
    """``calibrate_images`` on ``n_images`` images whose detection fails on ``failed``, every stage but the
    bookkeeping of used and dropped images replaced by a stand-in."""
    import numpy as np

    from kinhec.geometry import se3

    files = [tmp_path / f"{i:04d}.png" for i in range(n_images)]
    A = se3.random_poses(np.random.default_rng(111), n_images)
    hand = SimpleNamespace(path=str(tmp_path / "hand.txt"), fmt="rwhe", direction=None, units=None)

    def det(ok):
        d = SimpleNamespace(ok=ok, reason=None if ok else "no target found", method="subpix", alternatives=[])
        d.with_method = lambda m: d
        return d

    def corners(obs, **kw):
        return SimpleNamespace(notes=[], warnings=[], inputs={}, residuals={}, outliers=[], where=None,
                               observability={"robot_std_rad_m": [1e-3, 1e-3]})  # fmt: skip

    monkeypatch.setattr("kinhec.vision.targets.parse_target", lambda spec: SimpleNamespace(spec=spec, symmetric=False))
    monkeypatch.setattr("kinhec.vision.pairing.list_images", lambda folder: files)
    monkeypatch.setattr(images, "read_stream", lambda path, fmt: hand)
    monkeypatch.setattr(images, "hand_metric", lambda h, pose, units: A)
    monkeypatch.setattr("kinhec.vision.pairing.pair_images", lambda f, h, A_, mode: SimpleNamespace(
        paired=np.arange(n_images), missing={}, T_base_ee=A, mode="order", source=[f"line {i + 1}" for i in
        range(n_images)], notes=[]))  # fmt: skip
    def detect(f, t, progress=None, **options):  # workers, fast
        return [det(i not in failed) for i in range(len(f))]

    monkeypatch.setattr("kinhec.vision.detect.detect_images", detect)
    monkeypatch.setattr("kinhec.vision.detect.observations_from_detections", lambda dets, T, t, mode: None)
    monkeypatch.setattr("kinhec.calibrate.corners.calibrate_corners", corners)
    return images.calibrate_images(tmp_path, hand.path, "chessboard:9x6:0.025")


def test_dropped_images_warn_beyond_a_fifth_of_the_folder(monkeypatch, tmp_path):
    res = _calibrate_with_failures(monkeypatch, tmp_path, 10, {2, 7})  # 2 of 10: a fifth, no warning
    assert res.warnings == [] and [d["image"] for d in res.inputs["images"]["dropped"]] == ["0002.png", "0007.png"]
    assert len(res.inputs["images"]["used"]) == 8
    res = _calibrate_with_failures(monkeypatch, tmp_path, 10, {2, 5, 7})  # 3 of 10
    assert res.warnings == ["3 of 10 images dropped (see inputs.images.dropped)"]


def test_the_lens_model_of_each_name_and_of_given_intrinsics():
    # each lens is the camera model of that many intrinsics (kinhec.models.intrinsics.model_of: 9, 8, 12 numbers)
    from kinhec.models.intrinsics import model_of
    from kinhec.util.errors import InputError, UnknownNameError

    for lens, n in (("pinhole", 9), ("fisheye", 8), ("rational", 12)):
        assert images.lens_model(lens) == model_of(np.ones(n))
    assert images.lens_model(None) == "radtan"
    k12 = [500.0, 500.0, 320.0, 240.0] + [0.0] * 8
    assert images.lens_model(None, k12) == "rational" and images.lens_model("rational", k12) == "rational"
    with pytest.raises(InputError, match=r"--lens pinhole estimates a pinhole camera, got rational intrinsics \(12 "
                                         r"numbers\) from the given intrinsics; expected --lens rational"):
        images.lens_model("pinhole", k12)
    with pytest.raises(UnknownNameError, match="unknown lens 'equidistant'; expected one of: fisheye, pinhole, rational"):
        images.lens_model("equidistant")
