"""Detection's bookkeeping (:mod:`kinhec.vision.detect`) on detections built by hand (no images needed): one
sub-pixel method for a whole folder by the smallest median fit RMS, the accepted views with their hand poses and
target points as an observation set, and the checks with their exact messages."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.util.errors import InputError
from kinhec.vision.detect import detect, observations_from_detections, one_method
from kinhec.vision.detection import Detection
from kinhec.vision.targets import parse_target

SPEC = "chessboard:4x3:0.02"


def _det(name, rms, alt_rms, size=(640, 480), ids=(0, 1, 2)):
    ids = np.asarray(ids)
    uv = np.column_stack([ids * 10.0, ids * 5.0])
    return Detection(name, size, ids, uv, fit_rms_px=rms, method="sector",
                     alternatives=(("cornersubpix", uv + 0.25, alt_rms),))


def test_one_method_by_the_smallest_median_fit_rms():
    # sector: median of (0.10, 0.30, 0.50) = 0.30; cornersubpix: median of (0.20, 0.25, 0.90) = 0.25 -> cornersubpix
    dets = [_det("a.png", 0.10, 0.20), _det("b.png", 0.30, 0.25), _det("c.png", 0.50, 0.90),
            Detection.rejected("d.png", (640, 480), "no board")]
    out = one_method(dets)
    assert [d.method for d in out[:3]] == ["cornersubpix"] * 3 and out[3] is dets[3]
    assert [d.fit_rms_px for d in out[:3]] == [0.20, 0.25, 0.90]
    assert np.array_equal(out[1].uv_px, dets[1].uv_px + 0.25)
    assert out[0].notes == ("corners by cornersubpix for every view (median plane-fit RMS cornersubpix 0.250 px, "
                            "sector 0.300 px)",)
    # the other way round: sector kept, the note still says why
    out = one_method([_det("a.png", 0.1, 0.2), _det("b.png", 0.2, 0.3)])
    assert [d.method for d in out] == ["sector"] * 2 and out[0].notes[0].startswith("corners by sector ")
    plain = [Detection("a.png", (640, 480), np.arange(3), np.zeros((3, 2)), fit_rms_px=0.1, method="sector")]
    assert one_method(plain) is plain


def test_observations_of_the_accepted_views():
    t = parse_target(SPEC)
    dets = [_det("a.png", 0.1, 0.2, ids=(0, 2, 5)), Detection.rejected("b.png", (640, 480), "blurred"),
            _det("c.png", 0.1, 0.2, ids=(1, 3, 4))]
    T = np.repeat(np.eye(4)[None], 3, axis=0)
    T[:, 0, 3] = [0.1, 0.2, 0.3]
    obs = observations_from_detections(dets, T, SPEC, mode="eye_to_hand", camera_id="c1")
    assert obs.camera_id == "c1" and tuple(obs.image_size) == (640, 480) and obs.mode == "eye_to_hand"
    assert np.array_equal(obs.points_3d[1], t.points_m[[1, 3, 4]])
    assert np.array_equal(obs.points_2d[0], dets[0].uv_px)
    assert np.array_equal(obs.T_base_ee[:, 0, 3], [0.1, 0.3])


def test_observation_checks_name_what_came():
    T = np.repeat(np.eye(4)[None], 2, axis=0)
    with pytest.raises(InputError, match=r"^T_base_ee: expected one hand pose per detection \(3, 4, 4\), got \(2, 4, 4\)$"):
        observations_from_detections([_det("a.png", 0.1, 0.2)] * 3, T, SPEC)
    with pytest.raises(InputError, match=r"^detections: expected at least one accepted view, got none$"):
        observations_from_detections([Detection.rejected("a.png", (640, 480), "x")] * 2, T, SPEC)
    with pytest.raises(InputError) as e:
        observations_from_detections([_det("a.png", 0.1, 0.2), _det("b.png", 0.1, 0.2, size=(800, 600))], T, SPEC)
    assert str(e.value) == "b.png: expected every image of one camera to be 640x480 like a.png, got 800x600"


def test_detect_refuses_what_is_not_a_grey_byte_image():
    with pytest.raises(InputError, match=r"^view7: expected a grey uint8 image \(H, W\), got float64 \(4, 4\)$"):
        detect(np.zeros((4, 4)), SPEC, "view7")
    with pytest.raises(InputError, match=r"^image: expected a grey uint8 image \(H, W\), got uint8 \(4, 4, 3\)$"):
        detect(np.zeros((4, 4, 3), dtype=np.uint8), SPEC)
