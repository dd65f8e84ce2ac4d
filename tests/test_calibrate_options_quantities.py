"""calibrate's options (:mod:`kinhec.calibrate.options`, :mod:`kinhec.calibrate.option_values`) and the frames'
conversions (:mod:`kinhec.calibrate.frames`): each value parsed to what it says, per file in the order given, both
sides of every check, the exact messages, and the conversions against their inverses."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from kinhec.calibrate import eye_bias as eb
from kinhec.calibrate import frames
from kinhec.calibrate.option_values import intrinsics_std, nonnegative_pair, quat_pair, units_pair
from kinhec.calibrate.options import parse_options
from kinhec.geometry import se3
from kinhec.util.errors import InputError, UnknownNameError

DEFAULTS = dict(setup=None, fmt=None, hand_pose=None, eye_pose=None, units=None, offset="auto", solver=None,
                force=False, max_offset_s=0.5, intrinsics=None, pairing="auto", save_corners=None, progress=None,
                rig_world="auto", quat_order=None, intrinsics_std=None, stamp_unit=None, workers=None,
                fast_detection=False)


def opts(hand="h.txt", eye=("e.txt",), **kw):
    extra = {k: kw.pop(k) for k in ("dataset", "corners", "bag", "images", "target", "sequence", "scale",
                                    "robot_accuracy") if k in kw}
    return parse_options(hand, list(eye), **extra, **dict(DEFAULTS, **kw))


def test_nonnegative_pairs():
    assert nonnegative_pair("0.05,0.3", "x", "e") == (0.05, 0.3) and nonnegative_pair((0, 2), "x", "e") == (0.0, 2.0)
    assert nonnegative_pair(None, "x", "e") is None
    for bad in ("1", "-0.001,2", "nan,1", "1,inf", "a,b", "1,2,3", 3.0):
        with pytest.raises(InputError) as e:
            nonnegative_pair(bad, "robot_accuracy", "deg, mm")
        assert str(e.value) == f"robot_accuracy: expected two numbers >= 0 (deg, mm), got {bad!r}"
    assert intrinsics_std("0.003, 0.001") == (0.003, 0.001)


def test_per_file_values_are_hand_then_eye():
    assert units_pair("mm") == ("mm", "mm") and units_pair("mm, m") == ("mm", "m") and units_pair(None) == (None, None)
    assert quat_pair("wxyz,xyzw") == ("wxyz", "xyzw")
    with pytest.raises(UnknownNameError):
        units_pair("cm")
    with pytest.raises(InputError) as e:
        units_pair("mm,m,m")
    assert str(e.value) == "unit: expected one of m, mm or HAND,EYE (e.g. mm,m), got 'mm,m,m'"


def test_scale_offset_and_setup():
    o = opts()
    assert (o.kind, o.setup, o.setup_given, o.scale, o.fixed_scale, o.offset) == ("poses", "eye_in_hand", None, False,
                                                                                   False, "auto")
    assert (opts(scale="free").scale, opts(scale="free").fixed_scale) == (True, False)
    assert (opts(scale="fixed").scale, opts(scale="fixed").fixed_scale) == (False, True)
    m = opts(scale="metric")
    assert (m.scale, m.fixed_scale, m.metric_scale, o.metric_scale) == (False, False, True, False)
    assert opts(scale=True).scale is True and opts(offset="0.03").offset == 0.03 and opts(offset="none").offset == "none"
    with pytest.raises(InputError, match=r"^scale: expected free, fixed or metric \(or a flag\), got 'half'$"):
        opts(scale="half")
    with pytest.raises(InputError, match=r"^offset: expected auto, none or a number of seconds, got '3 ms'$"):
        opts(offset="3 ms")
    with pytest.raises(UnknownNameError):
        opts(setup="eye_on_hand")
    assert opts(setup="eye_to_hand").setup_given == "eye_to_hand"


def test_intrinsics_std_gives_the_eye_bias_prior():
    # (focal length fraction, principal point over focal length): rotations and shifts take the second
    o = opts(intrinsics_std="0.02,0.004")
    assert o.intrinsics_std == (0.02, 0.004)
    assert np.array_equal(o.eye_bias_prior, [0.004] * 4 + [0.02] * 2)
    assert np.array_equal(opts().eye_bias_prior, eb.prior_std())
    assert opts(intrinsics_std="0,0").eye_bias_prior is None
    assert np.array_equal(opts(intrinsics_std="0,0.001").eye_bias_prior, [0.001] * 4 + [0.0] * 2)


def test_firewall_options_pass_units_and_quaternions_only_when_given():
    o = opts(units="mm,m", quat_order="wxyz")
    fo = o.firewall_options()
    assert fo["units"] == ("mm", "m") and fo["quat"] == ("wxyz", "wxyz") and fo["max_offset_s"] == 0.5
    fo = opts(units="m,mm", quat_order="wxyz,xyzw").firewall_options()  # per file: hand first, then eye
    assert fo["units"] == ("m", "mm") and fo["quat"] == ("wxyz", "xyzw")
    fo = opts(eye_pose="cam_T_target", force=True).firewall_options()
    assert fo["units"] is None and fo["quat"] is None and fo["eye_pose"] == "cam_T_target" and fo["force"] is True


def test_options_that_do_not_fit_the_input():
    with pytest.raises(InputError) as e:
        opts(setup="rig", robot_accuracy="0.05,0.3")
    assert str(e.value) == ("robot_accuracy: counted for one camera (eye_in_hand, eye_to_hand), not for a rig, got "
                            "--setup rig with robot_accuracy '0.05,0.3'")
    with pytest.raises(InputError, match=r"^intrinsics: only used with corners \(--corners\), got intrinsics"):
        opts(intrinsics="K.yaml")
    with pytest.raises(InputError) as e:
        opts(hand=None, eye=(), corners="c.json", scale="fixed", units="mm", offset="0.1")
    assert str(e.value).endswith("got scale 'fixed', units 'mm', offset '0.1'")
    assert opts(hand=None, eye=(), corners="c.json", offset="auto").kind == "corners"
    with pytest.raises(InputError) as e:
        opts(hand="h.txt", eye=("e.txt",), images="imgs", target="t")
    assert str(e.value) == "images: expected --images DIR with --hand FILE and --target SPEC, got eye"


def _stream(T, direction=None, units=None):
    return SimpleNamespace(T=T, direction=direction, units=units, fmt="tum", span=lambda: "e.txt, lines 1-3")


def test_frames_directions_and_units():
    rng = np.random.default_rng(1)
    T = se3.transform_from_rotation_translation(se3.so3_exp(rng.normal(0, 1, (3, 3))), rng.normal(0, 500, (3, 3)))
    Tm = T.copy()
    Tm[:, :3, 3] /= 1000.0
    inv = se3.invert_transform(Tm)
    assert np.allclose(frames.hand_metric(_stream(T, "ee_T_base", "mm"), None, None), inv, rtol=0, atol=1e-12)
    assert np.allclose(frames.hand_metric(_stream(T), "ee_T_base", "mm"), inv, rtol=0, atol=1e-12)
    assert np.array_equal(frames.hand_metric(_stream(Tm), None, None), Tm)  # unstated: base_T_ee in metres
    # the eye: T_target_cam eye-in-hand, T_cam_marker eye-to-hand, from either direction as stored
    assert np.allclose(frames.eye_solver_form(_stream(T, units="mm"), None, None, "eye_in_hand"), inv, rtol=0, atol=1e-12)
    assert np.allclose(frames.eye_solver_form(_stream(T), "target_T_cam", "mm", "eye_in_hand"), Tm, rtol=0, atol=1e-12)
    assert np.allclose(frames.eye_solver_form(_stream(T), "target_T_cam", "mm", "eye_to_hand"), inv, rtol=0, atol=1e-12)
    assert np.allclose(frames.eye_solver_form(_stream(T), "cam_T_target", "mm", "rig"), inv, rtol=0, atol=1e-12)
    with pytest.raises(InputError) as e:
        frames.eye_solver_form(_stream(T, "base_T_ee"), None, None, "eye_in_hand")
    assert str(e.value) == "e.txt, lines 1-3: holds robot poses (tum format), not camera poses; give it as --hand"
    with pytest.raises(UnknownNameError):
        frames.hand_metric(_stream(T), "cam_T_target", None)
    assert frames.names("eye_to_hand") == ("T_ee_marker", "T_base_cam")
    assert frames.names("eye_in_hand") == frames.names("rig") == ("T_ee_cam", "T_base_target")


@pytest.mark.parametrize("setup, expected", [("eye_in_hand", ("T_ee_cam", "T_base_target")),
                                             ("eye_to_hand", ("T_ee_marker", "T_base_cam"))])
def test_the_names_of_x_and_y(setup, expected):
    # eye-to-hand X is the marker on the flange and Y the fixed camera in the base
    assert frames.names(setup) == expected
