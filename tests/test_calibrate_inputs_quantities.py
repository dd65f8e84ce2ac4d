"""The inputs of a pose-file calibration (:mod:`kinhec.calibrate.inputs`): the streams read once, their stamps in
seconds, the rig without a body stream (its first camera the reference, the hand direction it implies), and every
count check with its exact message."""

from __future__ import annotations

import numpy as np
import pytest

from kinhec.calibrate.inputs import load_inputs
from kinhec.calibrate.options import parse_options
from kinhec.util.errors import InputError

from helpers.recordings import rig, streams, write_tum

DEFAULTS = dict(setup=None, fmt=None, hand_pose=None, eye_pose=None, units=None, offset="auto", solver=None,
                force=False, max_offset_s=0.5, intrinsics=None, pairing="auto", save_corners=None, progress=None,
                rig_world="auto", quat_order=None, intrinsics_std=None, stamp_unit=None, workers=None,
                fast_detection=False)


def _load(hand, eye, **kw):
    opts = parse_options(hand, eye, **dict(DEFAULTS, **kw))
    return load_inputs(hand, eye, opts)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs")
    t, A, C = streams(np.random.default_rng(0), n=12)
    return write_tum(d / "hand.txt", t, A), write_tum(d / "eye.txt", t, C), write_tum(d / "eye_ms.txt", t * 1000, C)


def test_one_camera_record_and_stamps(files):
    hand, eye, eye_ms = files
    inp = _load(str(hand), [str(eye)])
    assert inp.record == {"hand": str(hand), "eye": [str(eye)], "format": "tum"} and not inp.reference_camera
    assert inp.hand.t[1] == 0.5 and len(inp.eyes) == 1 and inp.options.setup == "eye_in_hand" and not inp.from_bag
    # an eye stream stamped in milliseconds, stated: converted to seconds
    ms = _load(str(hand), [str(eye_ms)], stamp_unit="s,ms")
    assert np.allclose(ms.eyes[0].t, inp.eyes[0].t, rtol=1e-15, atol=1e-15)
    assert _load(str(hand), str(eye), fmt="tum").record["format"] == "tum"  # one eye file as a plain path


def test_counts_of_eye_streams(files):
    hand, eye, _ = files
    with pytest.raises(InputError) as e:
        _load(str(hand), [str(eye), str(eye)])
    assert str(e.value) == ("eye: expected one eye stream for eye_in_hand, got 2 (eye, eye); use --setup rig for "
                            "several cameras")
    with pytest.raises(InputError, match=r"^eye: expected two or more eye streams for a rig, got 1$"):
        _load(str(hand), [str(eye)], setup="rig")
    with pytest.raises(InputError, match=r"^eye: expected at least one eye pose file \(--eye\), got none$"):
        _load(str(hand), [])
    with pytest.raises(InputError) as e:
        _load(None, [str(eye)])
    assert str(e.value) == ("hand: expected a hand pose file (--hand), got none (only a rig of two or more cameras "
                            "can do without)")


def test_a_rig_without_a_body_takes_its_first_camera(tmp_path):
    rig(tmp_path, np.random.default_rng(1), n=12, cams=3)
    inp = _load(None, [str(tmp_path)], setup="rig")
    assert inp.reference_camera and inp.hand.name == "cam01" and [e.name for e in inp.eyes] == ["cam02", "cam03"]
    # the rig's files are camera-to-world (target_T_cam): the reference read as the hand in base_T_ee
    assert inp.options.hand_pose == "base_T_ee"
    assert _load(None, [str(tmp_path)], setup="rig", eye_pose="cam_T_target").options.hand_pose == "ee_T_base"
    two = _load(str(tmp_path / "body.tum"), [str(tmp_path)], setup="rig")
    assert not two.reference_camera and len(two.eyes) == 3 and two.hand.name == "body"
