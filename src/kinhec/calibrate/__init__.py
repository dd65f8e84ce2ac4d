"""Calibrate a user's own recordings: hand (robot or mocap) poses against camera poses.

``kinhec.calibrate.calibrate(hand, eye, setup=...)`` reads the pose files,
pairs them (by order or by time, with the clock offset), solves ``A X = Y B``
robustly over the registry's solvers, refines ``X``, ``Y``, the offset and the
scale jointly with outlier rejection, and returns a :class:`CalibrationResult`
with standard deviations, per-pair residuals and an observability verdict.

Stages of :func:`calibrate` (:mod:`calibration` runs them in turn; each a module with its own result):

1. options (:mod:`options`: checked once into :class:`~kinhec.calibrate.options.Options`; images and
   corner files branch off here to :mod:`images` and :mod:`corners`, a depth camera's point files to
   :mod:`points`),
2. inputs (:mod:`inputs`: the streams from files, a bag or a dataset),
3. conventions (:mod:`firewall` decides the reading, :mod:`stages.conventions` applies it with
   :mod:`frames`),
4. pairing (:mod:`stages.pairing`),
5. solve (:mod:`stages.solve`),
6. uncertainty (:mod:`stages.uncertainty`),
7. verdict (:mod:`stages.verdict`),
8. outputs (:mod:`stages.outputs`; a rig's cameras then jointly: :mod:`stages.rig`).

Modules, by role: :mod:`readers` (every pose-file format), :mod:`bags` (ROS 1
and ROS 2 bags through rosbags: tf frame pairs via :mod:`tftree` and
:mod:`tf_messages`, pose topics; :mod:`bag_writer` writes them), :mod:`pairing`
(time pairing, interpolation, row alignments), :mod:`firewall` (every
reading of the input scored before solving: directions, setup, units,
quaternion order, which file is the hand, rows without a partner), with
:mod:`readings` (what the poses say) and :mod:`conventions` (what the files
say, physical priors), :mod:`solve` (initialisation, refinement, covariance),
:mod:`outliers` (whether the fit supports its outlier labels),
:mod:`observability`, :mod:`result` (the result and its JSON),
:mod:`output` (OpenCV YAML, ROS, URDF, ROS 2 launch file), :mod:`figure` (matplotlib, lazy),
:mod:`corners` (the camera from detected corners, ``X`` and ``Y`` from their
pixels: ``calibrate(corners=FILE)``), :mod:`points` (``X`` and ``Y`` from a depth
camera's 3D points of the target: ``calibrate(points=FILE)``), :mod:`multi` (many cameras and targets
solved jointly with a certificate of global optimality: ``calibrate_multi``,
and the joint solution of a rig).
"""

from __future__ import annotations

from kinhec.calibrate.calibration import calibrate
from kinhec.calibrate.frames import EYE_POSES, HAND_POSES, SETUPS, UNITS
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
