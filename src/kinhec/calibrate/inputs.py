"""The inputs of a pose-file calibration, read once into :class:`Inputs`: the hand stream and the eye streams
from files (:mod:`~kinhec.calibrate.readers`), a bag (:mod:`~kinhec.calibrate.bags`) or a kinhec dataset
sequence, their stamps in seconds (:mod:`~kinhec.calibrate.stamp_units`), and the options the inputs settle
(a dataset's directions, units and setup; the reference camera of a rig without a body stream).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from kinhec.calibrate import stamp_units
from kinhec.calibrate.bags import read_bag
from kinhec.calibrate.options import Options
from kinhec.calibrate.readers import PoseStream, read_kinhec, read_stream, read_streams
from kinhec.util.errors import InputError

__all__ = ["Inputs", "load_inputs"]


@dataclass(frozen=True)
class Inputs:
    """The streams of one calibration and the options as the inputs settle them.

    ``hand`` the hand stream (the reference camera's for a rig without one: ``reference_camera``), ``eyes``
    every eye stream, ``options`` the :class:`~kinhec.calibrate.options.Options` with a dataset's setup,
    directions, units and format, ``from_bag`` whether the streams came from a bag (their frames name ``X``
    and ``Y``), ``record`` the result's ``inputs`` as read (files and format).
    """

    hand: PoseStream
    eyes: list
    options: Options
    reference_camera: bool
    from_bag: bool
    record: dict


def _dataset(dataset, sequence, opts: Options):
    hand_s, eye_list, setup_ds = read_kinhec(dataset, sequence)
    setup = setup_ds if opts.setup != "rig" else opts.setup
    opts = replace(opts, setup=setup, setup_given=setup, hand_pose="base_T_ee", eye_pose="cam_T_target",
                   units_hand="m", units_eye="m", fmt="kinhec")
    return hand_s, [eye_list], opts


def _files(hand, eye, bag, opts: Options):
    fmt = opts.fmt
    if bag is not None:
        if fmt is not None:
            raise InputError(f"format: a bag's streams carry their own format, got --format {fmt} with a bag")
        hand, eye = read_bag(bag, hand, eye)
    eye_specs = [eye] if isinstance(eye, (str, Path)) else list(eye)
    if not eye_specs:
        raise InputError("eye: expected at least one eye pose file (--eye), got none")
    eyes = [s for spec in eye_specs for s in read_streams(spec, fmt)]
    if hand is None and opts.setup == "rig" and len(eyes) >= 2:
        # no body stream: the first camera is the reference, every X is camera-to-camera
        reference = eyes.pop(0)
        direction = opts.eye_pose or reference.direction or "cam_T_target"
        opts = replace(opts, hand_pose="base_T_ee" if direction == "target_T_cam" else "ee_T_base")
        hand_s = reference
    elif hand is None:
        raise InputError("hand: expected a hand pose file (--hand), got none (only a rig of two or more "
                         "cameras can do without)")
    else:
        hand_s = read_stream(hand, fmt if fmt != "rig" else None)
    return hand, hand_s, eyes, opts


def load_inputs(hand, eye, opts: Options, *, dataset=None, sequence=None, bag=None) -> Inputs:
    """Read the streams ``calibrate(hand, eye, dataset=, sequence=, bag=)`` names, and check their number."""
    if dataset is not None:
        hand_s, eyes, opts = _dataset(dataset, sequence, opts)
    else:
        hand, hand_s, eyes, opts = _files(hand, eye, bag, opts)
    if dataset is None:  # the stamps' unit: stated, or judged from rates, durations and overlap
        hand_s, eyes = stamp_units.settle_streams(hand_s, eyes, opts.stamp_unit, force=opts.force)
    elif opts.stamp_unit is not None:
        raise InputError(f"stamp_unit: a kinhec dataset's stamps are in seconds, got --stamp-unit {opts.stamp_unit}")
    setup = opts.setup
    if setup != "rig" and len(eyes) != 1:
        raise InputError(f"eye: expected one eye stream for {setup}, got {len(eyes)} ({', '.join(e.name for e in eyes)}); "
                         "use --setup rig for several cameras")
    reference_camera = hand is None and dataset is None and setup == "rig"
    if setup == "rig" and len(eyes) < (1 if reference_camera else 2):
        raise InputError(f"eye: expected two or more eye streams for a rig, got {len(eyes)}")
    record = {"hand": hand_s.path, "eye": [e.path for e in eyes], "format": opts.fmt or hand_s.fmt}
    return Inputs(hand_s, eyes, opts, reference_camera, bag is not None, record)
