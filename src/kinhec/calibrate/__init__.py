"""Calibrate a user's own recordings: hand (robot or mocap) poses against camera poses.

``kinhec.calibrate.calibrate(hand, eye, setup=...)`` reads the pose files,
pairs them (by order or by time, with the clock offset), solves ``A X = Y B``
robustly over the registry's solvers, refines ``X``, ``Y``, the offset and the
scale jointly with outlier rejection, and returns a :class:`CalibrationResult`
with standard deviations, per-pair residuals and an observability verdict.

Modules, by role: :mod:`readers` (every pose-file format), :mod:`bags` (ROS 1
and ROS 2 bags through rosbags: tf frame pairs via :mod:`tftree` and
:mod:`tf_messages`, pose topics; :mod:`bag_writer` writes them), :mod:`pairing`
(time pairing, interpolation), :mod:`conventions` (direction and unit
checks), :mod:`solve` (initialisation, outliers, refinement, covariance),
:mod:`observability`, :mod:`result` (the result and its JSON),
:mod:`output` (OpenCV YAML, ROS, URDF, ROS 2 launch file), :mod:`figure` (matplotlib, lazy),
:mod:`corners` (the camera from detected corners, ``X`` and ``Y`` from their
pixels: ``calibrate(corners=FILE)``), :mod:`multi` (many cameras and targets
solved jointly with a certificate of global optimality: ``calibrate_multi``,
and the joint solution of a rig).
"""

from __future__ import annotations

from kinhec.calibrate.calibration import EYE_POSES, HAND_POSES, SETUPS, UNITS, calibrate
from kinhec.calibrate.multi import MultiCalibrationResult, calibrate_multi
from kinhec.calibrate.readers import FORMATS, PoseStream, read_stream, read_streams
from kinhec.calibrate.result import CalibrationResult, RigResult

__all__ = [
    "calibrate",
    "calibrate_multi",
    "MultiCalibrationResult",
    "CalibrationResult",
    "RigResult",
    "PoseStream",
    "read_stream",
    "read_streams",
    "FORMATS",
    "SETUPS",
    "HAND_POSES",
    "EYE_POSES",
    "UNITS",
]
