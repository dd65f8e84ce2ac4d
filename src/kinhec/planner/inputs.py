"""The planner's camera and target: a preset, or the user's own (an intrinsics file, a target spec).

* Camera: a preset name (:data:`kinhec.models.cameras.CAMERA_NAMES`) or an intrinsics file
  (:func:`kinhec.models.intrinsics_files.read_intrinsics`: OpenCV YAML, Kalibr camchain, ``kinhec calibrate``
  JSON).  The planner's camera is an ideal pinhole with one focal length: a file's camera becomes one with
  ``f = sqrt(fx fy)``, the file's principal point and image size; its distortion is not modelled (the
  visibility margin, 20 px by default, absorbs a moderate one).
* Target: a preset name (:data:`kinhec.models.cameras.TARGET_NAMES`, whose frame is kinhec's centred one) or
  the spec of ``kinhec calibrate --images`` (:func:`kinhec.vision.targets.parse_target`:
  ``chessboard:COLSxROWS:SQUARE_M``, ``charuco:...``, ``aprilgrid:...``, a Kalibr target YAML), whose frame is
  the printed target's own: OpenCV's for a chessboard and a ChArUco board (origin at corner 0, ``z`` into the
  board), Kalibr's for an AprilGrid.  The guesses and the plan's predicted target poses are in that frame, so
  they compare with what ``kinhec calibrate --images`` gives.  Internally the planner works in the centred
  frame (:attr:`kinhec.vision.targets.Target.T_centred_target`) and converts at its edges.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kinhec.models.cameras import CAMERA_NAMES, TARGET_NAMES, CameraPreset, TargetPreset, get_camera, get_target
from kinhec.models.intrinsics_files import read_intrinsics
from kinhec.util.errors import InputError, UnknownNameError
from kinhec.vision.targets import SPEC_FORMS, parse_target

__all__ = ["SpecTarget", "PlannerTarget", "planner_camera", "planner_target", "adjoint"]


@dataclass(frozen=True, eq=False)
class SpecTarget(TargetPreset):
    """A printed target (from a spec) as the planner sees it: its points in the centred frame.

    ``cols``, ``rows`` and ``pitch_m`` describe the grid roughly (an AprilGrid's corners are not evenly spaced);
    :attr:`points_m` holds the exact points.
    """

    centred_points: np.ndarray = None
    spec: str = ""

    @property
    def n_points(self) -> int:
        return int(self.centred_points.shape[0])

    @property
    def points_m(self) -> np.ndarray:
        return self.centred_points.copy()

    @property
    def size_m(self) -> tuple[float, float]:
        p = self.centred_points
        ext = p.max(axis=0) - p.min(axis=0)
        return float(ext[0]), float(ext[1])


@dataclass(frozen=True)
class PlannerTarget:
    """The planner's target (``preset``) and where the user's target frame sits in its centred frame.

    ``T_centred_target`` is None for a preset (the user's frame is the centred frame).
    """

    preset: TargetPreset
    T_centred_target: np.ndarray | None
    frame: str

    def to_dict(self) -> dict:
        return {"name": self.preset.name, "frame": self.frame,
                "T_centred_target": None if self.T_centred_target is None else self.T_centred_target.tolist()}


def planner_camera(camera, *, image_size=None) -> tuple[CameraPreset, dict]:
    """The planner's camera from a preset, a :class:`CameraPreset` or an intrinsics file, and what was read."""
    if isinstance(camera, CameraPreset):
        return camera, {"name": camera.name}
    if isinstance(camera, str) and camera in CAMERA_NAMES:
        if image_size is not None:
            raise InputError(f"--image-size: goes with an intrinsics file, got it with the preset {camera!r}")
        return get_camera(camera), {"name": camera}
    if not isinstance(camera, (str, Path)):
        raise InputError(f"camera: expected a preset name or an intrinsics file, got {type(camera).__name__}")
    path = Path(camera)
    if not path.is_file():
        raise UnknownNameError("camera preset", str(camera), CAMERA_NAMES + (
            "an intrinsics file (OpenCV YAML, Kalibr camchain, kinhec calibrate JSON)",))
    intr = read_intrinsics(path, image_size=image_size)
    f = math.sqrt(intr.fx * intr.fy)
    cam = CameraPreset(path.stem, intr.width_px, intr.height_px, f, intr.cx, intr.cy,
                       f"{intr.width_px}x{intr.height_px}, fx={intr.fx:g} fy={intr.fy:g} px from {path.name}")  # fmt: skip
    info = {"name": cam.name, "file": str(path), "intrinsics": intr.to_dict(), "f_px": f,
            "model": "pinhole with f = sqrt(fx fy) and the file's principal point; distortion not modelled"}  # fmt: skip
    return cam, info


def planner_target(target) -> PlannerTarget:
    """The planner's target from a preset name, a :class:`TargetPreset` or a ``calibrate --images`` spec."""
    if isinstance(target, TargetPreset):
        return PlannerTarget(target, None, "kinhec's centred frame")
    if isinstance(target, str) and target in TARGET_NAMES:
        return PlannerTarget(get_target(target), None, "kinhec's centred frame (a preset)")
    if not isinstance(target, (str, Path)):
        raise InputError(f"target: expected a preset name or a spec, got {type(target).__name__}")
    try:
        t = parse_target(target)
    except InputError as exc:
        msg = str(exc)
        if "expected one of" in msg:  # neither a spec nor a file: name the presets too
            raise InputError(f"target: expected a preset ({', '.join(TARGET_NAMES)}) or one of "
                             f"{'; '.join(SPEC_FORMS)}, got {str(target)!r}") from None  # fmt: skip
        raise
    T = np.asarray(t.T_centred_target, dtype=np.float64)
    p = t.points_m @ T[:3, :3].T + T[:3, 3]
    kind = "checkerboard" if t.kind == "chessboard" else "grid"
    cols = int(np.unique(np.round(p[:, 0], 9)).size)
    rows = int(np.unique(np.round(p[:, 1], 9)).size)
    preset = SpecTarget(t.spec, cols, rows, float(t.spacing_m), kind, int(t.min_points),
                        f"{t.spec} ({len(p)} points)", centred_points=p, spec=t.spec)  # fmt: skip
    frame = ("Kalibr's AprilGrid frame: origin at the outer bottom-left corner of tag 0, z out of the board"
             if t.z_towards_viewer else "OpenCV's: origin at corner 0, x along a row, y down a column, z into the board")
    return PlannerTarget(preset, T, frame)


def adjoint(T: np.ndarray) -> np.ndarray:
    """``Ad_T`` ``(6, 6)`` acting on twists ``(omega, v)``: ``T exp(xi) inv(T) = exp(Ad_T xi)``."""
    R, p = T[:3, :3], T[:3, 3]
    P = np.array([[0.0, -p[2], p[1]], [p[2], 0.0, -p[0]], [-p[1], p[0], 0.0]])
    A = np.zeros((6, 6))
    A[:3, :3] = R
    A[3:, 3:] = R
    A[3:, :3] = P @ R
    return A
