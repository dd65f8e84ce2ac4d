"""Frame names and pose kinds of ``kinhec calibrate``: the setups, the directions a file's poses may have,
the units, the names of ``X`` and ``Y`` per setup, and the conversions to the solver's form.

The solver form is ``A = T_base_ee`` for the hand stream and ``B = T_target_cam`` for the eye stream
eye-in-hand (and for every camera of a rig), ``B = T_cam_marker`` eye-to-hand; translations in metres.
"""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate.readers import PoseStream, to_metres
from kinhec.util.errors import InputError, UnknownNameError

__all__ = ["SETUPS", "HAND_POSES", "EYE_POSES", "UNITS", "names", "hand_metric", "eye_solver_form"]

SETUPS = ("eye_in_hand", "eye_to_hand", "rig")
HAND_POSES = ("base_T_ee", "ee_T_base")
EYE_POSES = ("cam_T_target", "target_T_cam")
UNITS = ("m", "mm")


def names(setup: str):
    """The names of ``X`` and ``Y`` for ``setup``: ``T_ee_cam``, ``T_base_target`` (``T_ee_marker``, ``T_base_cam``
    eye-to-hand)."""
    if setup == "eye_to_hand":
        return "T_ee_marker", "T_base_cam"
    return "T_ee_cam", "T_base_target"


def hand_metric(s: PoseStream, hand_pose, units) -> np.ndarray:
    """The hand stream as ``T_base_ee`` in metres (``hand_pose`` and ``units`` as given, else the file's)."""
    direction = hand_pose or s.direction or "base_T_ee"
    if direction not in HAND_POSES:
        raise UnknownNameError("hand pose direction", direction, HAND_POSES)
    T = to_metres(s.T, units or s.units or "m")
    return se3.invert_transform(T, check=False) if direction == "ee_T_base" else T


def eye_solver_form(s: PoseStream, eye_pose, units, setup: str) -> np.ndarray:
    """The eye stream in the solver's form for ``setup`` (``T_target_cam``; ``T_cam_marker`` eye-to-hand), in metres."""
    direction = eye_pose or s.direction or "cam_T_target"
    if eye_pose is None and s.direction in HAND_POSES:
        raise InputError(f"{s.span()}: holds robot poses ({s.fmt} format), not camera poses; give it as --hand")
    if direction not in EYE_POSES:
        raise UnknownNameError("eye pose direction", direction, EYE_POSES)
    T = to_metres(s.T, units or s.units or "m")
    cam_T_target = se3.invert_transform(T, check=False) if direction == "target_T_cam" else T
    return cam_T_target if setup == "eye_to_hand" else se3.invert_transform(cam_T_target, check=False)
