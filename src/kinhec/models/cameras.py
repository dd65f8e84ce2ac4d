"""Camera and calibration-target presets, pinhole projection and the visibility rule.

Conventions
-----------
* Camera frame ``cam``: the OpenCV optical frame, ``x`` right, ``y`` down,
  ``z`` forward along the optical axis.  A point ``p_cam = (x, y, z)`` with
  ``z > 0`` images at ``u = f x / z + cx``, ``v = f y / z + cy`` [px].  The
  cameras are ideal pinholes: square pixels (``fx = fy = f``), no skew, no
  distortion, principal point at the centre of the image, ``(cx, cy) =
  (width / 2, height / 2)``, so that the image spans ``[0, width] x [0,
  height]`` in continuous pixel coordinates.
* Target frame ``target``: the points lie in the plane ``z = 0`` on a regular
  grid centred on the origin; ``z`` points towards the viewer, out of the
  front face of the board; ``x`` runs along a row (to the right as seen from
  the front) and ``y`` up the columns, so ``(x, y, z)`` is right-handed.
  Points are ordered row by row in reading order as seen from the front: the
  first point is the top-left one (``x`` smallest, ``y`` largest).
  A board seen fronto-parallel at distance ``d`` has
  ``T_cam_target = [[1, 0, 0, 0], [0, -1, 0, 0], [0, 0, -1, d], [0, 0, 0, 1]]``
  and its first point appears in the top-left part of the image.
* ``T_cam_target`` is the pose of the target in the camera frame,
  ``p_cam = T_cam_target @ p_target``.

Visibility
----------
A target is visible in a frame when

1. its points project inside the image with a margin of
   :data:`VISIBILITY_MARGIN_PX` (a point counts when it has positive depth and
   ``margin <= u <= width - margin``, ``margin <= v <= height - margin``):
   every point for a ``"checkerboard"``, at least ``min_visible_points`` for a
   ``"grid"`` (marker grids and single markers, which a detector still finds
   when partly cut off);
2. the depth of the target centre (its origin) along the optical axis lies in
   ``[MIN_DEPTH_M, MAX_DEPTH_M]``;
3. the view angle, between the board normal (target ``z``) and the line of
   sight from the board centre to the camera, is below
   :data:`MAX_VIEW_ANGLE_DEG` (a board seen from behind has an angle above
   90 deg).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError, UnknownNameError

__all__ = [
    "VISIBILITY_MARGIN_PX",
    "MIN_DEPTH_M",
    "MAX_DEPTH_M",
    "MAX_VIEW_ANGLE_DEG",
    "TARGET_KINDS",
    "CameraPreset",
    "TargetPreset",
    "CAMERA_NAMES",
    "TARGET_NAMES",
    "get_camera",
    "get_target",
    "as_camera",
    "as_target",
    "check_points",
    "project_points",
    "points_in_image",
    "Visibility",
    "visibility",
    "view_angles_deg",
    "camera_json",
    "target_json",
    "cameras_targets_json",
    "camera_coordinates",
    "to_camera",
    "pinhole_pixels",
    "inside_image",
    "view_angles_deg_unchecked",
    "visibility_rule",
]

#: Margin [px] that a point must keep from every image border to count as inside.
VISIBILITY_MARGIN_PX = 5.0
#: Smallest depth [m] of the target centre along the optical axis at which the target is visible.
MIN_DEPTH_M = 0.1
#: Largest depth [m] of the target centre along the optical axis at which the target is visible.
MAX_DEPTH_M = 5.0
#: The view angle [deg] must stay strictly below this value.
MAX_VIEW_ANGLE_DEG = 75.0
#: Kinds of target: every point must be seen on a checkerboard, a minimum on a grid.
TARGET_KINDS = ("checkerboard", "grid")


# --------------------------------------------------------------------------- #
# presets
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class CameraPreset:
    """An ideal pinhole camera.

    Attributes
    ----------
    name : str
        Preset name (e.g. ``"hd"``).
    width_px, height_px : int
        Image size [px].
    f_px : float
        Focal length [px], the same on both axes.
    cx_px, cy_px : float
        Principal point [px] (the image centre for every preset).
    description : str
        One line for humans.
    """

    name: str
    width_px: int
    height_px: int
    f_px: float
    cx_px: float
    cy_px: float
    description: str

    @property
    def K(self) -> np.ndarray:
        """Intrinsic matrix ``[[f, 0, cx], [0, f, cy], [0, 0, 1]]``, shape ``(3, 3)`` [px]."""
        return np.array([[self.f_px, 0.0, self.cx_px], [0.0, self.f_px, self.cy_px], [0.0, 0.0, 1.0]])

    @property
    def hfov_deg(self) -> float:
        """Horizontal field of view [deg], ``2 atan(width / (2 f))``."""
        return float(np.degrees(2.0 * np.arctan(0.5 * self.width_px / self.f_px)))

    @property
    def vfov_deg(self) -> float:
        """Vertical field of view [deg], ``2 atan(height / (2 f))``."""
        return float(np.degrees(2.0 * np.arctan(0.5 * self.height_px / self.f_px)))


@dataclass(frozen=True)
class TargetPreset:
    """A planar calibration target: a ``cols x rows`` grid of points with spacing ``pitch_m``.

    Attributes
    ----------
    name : str
        Preset name (e.g. ``"checker_9x6_25mm"``).
    cols, rows : int
        Number of points along target ``x`` (a row) and along target ``y``.
    pitch_m : float
        Distance [m] between neighbouring points.
    kind : {"checkerboard", "grid"}
        A checkerboard is detected only when every point is in the image; a
        grid (marker board, single marker) from ``min_visible_points`` on.
    min_visible_points : int
        Fewest points inside the image for the target to count as visible.
    description : str
        One line for humans.
    """

    name: str
    cols: int
    rows: int
    pitch_m: float
    kind: str
    min_visible_points: int
    description: str

    @property
    def n_points(self) -> int:
        """Number of points, ``cols * rows``."""
        return self.cols * self.rows

    @property
    def points_m(self) -> np.ndarray:
        """Target points in the target frame [m], shape ``(cols * rows, 3)``.

        Plane ``z = 0``, centred on the origin, row by row from the top-left
        point as seen from the front (``x`` increasing along a row, ``y``
        decreasing from row to row).
        """
        x = (np.arange(self.cols) - 0.5 * (self.cols - 1)) * self.pitch_m
        y = (0.5 * (self.rows - 1) - np.arange(self.rows)) * self.pitch_m
        X, Y = np.meshgrid(x, y, indexing="xy")  # (rows, cols): row-major reading order
        return np.stack([X.ravel(), Y.ravel(), np.zeros(self.n_points)], axis=-1)

    @property
    def size_m(self) -> tuple[float, float]:
        """Extent ``(width, height)`` [m] of the point grid: ``((cols-1) pitch, (rows-1) pitch)``."""
        return ((self.cols - 1) * self.pitch_m, (self.rows - 1) * self.pitch_m)


def _camera(name: str, width_px: int, height_px: int, f_px: float, description: str) -> CameraPreset:
    return CameraPreset(name, width_px, height_px, float(f_px), width_px / 2.0, height_px / 2.0, description)


# The four cameras and five targets of the published benchmark (dataset card, "Camera and target presets").
_CAMERAS: dict[str, CameraPreset] = {
    c.name: c
    for c in (
        _camera("vga", 640, 480, 525, "640x480, f=525 px (RGB-D style sensor, HFOV ~63 deg)"),
        _camera("hd", 1280, 720, 920, "1280x720, f=920 px (HFOV ~70 deg)"),
        _camera("fhd", 1920, 1080, 1400, "1920x1080, f=1400 px (HFOV ~69 deg)"),
        _camera(
            "industrial_5mp", 2448, 2048, 3200, "2448x2048, f=3200 px (2/3in sensor, 11 mm lens, HFOV ~42 deg)"
        ),
    )
}

_TARGETS: dict[str, TargetPreset] = {
    t.name: t
    for t in (
        TargetPreset(
            "checker_7x5_20mm", 7, 5, 0.020, "checkerboard", 35,
            "A4 printout: 7x5 inner corners, 20 mm squares (0.12 x 0.08 m)",
        ),
        TargetPreset(
            "checker_9x6_25mm", 9, 6, 0.025, "checkerboard", 54,
            "Classic 9x6 inner corners, 25 mm squares (0.20 x 0.125 m)",
        ),
        TargetPreset(
            "grid_10x8_60mm", 10, 8, 0.060, "grid", 12,
            "Large marker grid (ChArUco/AprilGrid-like): 10x8 points, 60 mm pitch (0.54 x 0.42 m)",
        ),
        TargetPreset(
            "marker_2x2_40mm", 2, 2, 0.040, "grid", 4,
            "Single fiducial marker, 40 mm side (eye-to-hand flange marker)",
        ),
        TargetPreset(
            "marker_3x3_30mm", 3, 3, 0.030, "grid", 6,
            "Small marker cluster, 3x3 points, 30 mm pitch (eye-to-hand flange marker)",
        ),
    )
}

#: Names of the camera presets.
CAMERA_NAMES: tuple[str, ...] = tuple(_CAMERAS)
#: Names of the target presets.
TARGET_NAMES: tuple[str, ...] = tuple(_TARGETS)


def get_camera(name: str) -> CameraPreset:
    """The camera preset called ``name`` (one of :data:`CAMERA_NAMES`).

    Raises
    ------
    UnknownNameError
        If there is no such preset; the message lists the valid names.
    """
    try:
        return _CAMERAS[name]
    except (KeyError, TypeError):
        raise UnknownNameError("camera preset", name, CAMERA_NAMES) from None


def get_target(name: str) -> TargetPreset:
    """The target preset called ``name`` (one of :data:`TARGET_NAMES`).

    Raises
    ------
    UnknownNameError
        If there is no such preset; the message lists the valid names.
    """
    try:
        return _TARGETS[name]
    except (KeyError, TypeError):
        raise UnknownNameError("target preset", name, TARGET_NAMES) from None


def as_camera(camera) -> CameraPreset:
    """Accept a :class:`CameraPreset` or a preset name; return the preset."""
    if isinstance(camera, CameraPreset):
        return camera
    if isinstance(camera, str):
        return get_camera(camera)
    raise InputError(f"camera: expected a CameraPreset or a preset name, got {type(camera).__name__}")


def as_target(target) -> TargetPreset:
    """Accept a :class:`TargetPreset` or a preset name; return the preset."""
    if isinstance(target, TargetPreset):
        return target
    if isinstance(target, str):
        return get_target(target)
    raise InputError(f"target: expected a TargetPreset or a preset name, got {type(target).__name__}")


# --------------------------------------------------------------------------- #
# projection
# --------------------------------------------------------------------------- #
def check_points(points_m, name: str = "points_m") -> np.ndarray:
    """Validate a point set of shape ``(P, 3)`` [m] with ``P >= 1``; return it as float64."""
    a = se3.check_array(points_m, name, (3,))
    if a.ndim != 2 or a.shape[0] < 1:
        raise InputError(f"{name}: expected shape (P, 3) with P >= 1, got shape {a.shape}")
    return a


def camera_coordinates(T: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Camera-frame coordinates ``X, Y, Z`` (each (..., P)) of points (P, 3) under poses (..., 4, 4).

    Broadcast multiply-adds rather than a matrix product: no multi-threaded
    BLAS call, whose busy-waiting threads would compete with parallel workers.
    """
    planar = not points[:, 2].any()
    out = []
    for i in range(3):
        c = T[..., i, 0, None] * points[:, 0]
        c += T[..., i, 1, None] * points[:, 1]
        if not planar:
            c += T[..., i, 2, None] * points[:, 2]
        c += T[..., i, 3, None]
        out.append(c)
    return out[0], out[1], out[2]


def to_camera(T: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Points ``(P, 3)`` mapped by poses ``(..., 4, 4)``: ``(..., P, 3)`` in the camera frame."""
    return np.stack(camera_coordinates(T, points), axis=-1)


def pinhole_pixels(cam: CameraPreset, p_cam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pinhole pixels ``(..., 2)`` and depths ``(...,)`` of camera-frame points ``(..., 3)``.

    Points with depth ``<= 0`` have no image: their pixels are NaN.
    """
    z = p_cam[..., 2]
    front = z > 0.0
    inv_z = np.where(front, 1.0 / np.where(front, z, 1.0), np.nan)
    uv = np.empty(p_cam.shape[:-1] + (2,))
    uv[..., 0] = cam.f_px * p_cam[..., 0] * inv_z + cam.cx_px
    uv[..., 1] = cam.f_px * p_cam[..., 1] * inv_z + cam.cy_px
    return uv, z


def project_points(camera, T_cam_target, points_m) -> tuple[np.ndarray, np.ndarray]:
    """Project target points into the image of a pinhole camera.

    Parameters
    ----------
    camera : CameraPreset or str
        The camera (or its preset name).
    T_cam_target : array_like, shape (N, 4, 4)
        Pose of the target in the camera (OpenCV optical) frame, one per
        frame; any number of leading axes, or a single ``(4, 4)`` pose.
    points_m : array_like, shape (P, 3)
        Points in the target frame [m], e.g. ``TargetPreset.points_m``.

    Returns
    -------
    uv_px : ndarray, shape (N, P, 2)
        Pixel coordinates ``(u, v)`` [px]; NaN for points with depth ``<= 0``
        (on or behind the camera plane), which have no image.
    depth_m : ndarray, shape (N, P)
        Depth ``z`` [m] of each point in the camera frame.
    """
    cam = as_camera(camera)
    T = se3.check_transforms(T_cam_target, "T_cam_target")
    pts = check_points(points_m)
    return pinhole_pixels(cam, to_camera(T, pts))


def inside_image(cam: CameraPreset, uv: np.ndarray, depth: np.ndarray, margin_px: float) -> np.ndarray:
    """Boolean ``(...)``: positive depth and inside ``[margin, size - margin]`` on both axes (inclusive)."""
    u = uv[..., 0]
    v = uv[..., 1]
    with np.errstate(invalid="ignore"):  # NaN pixels of points behind the camera compare False
        return (
            (depth > 0.0)
            & (u >= margin_px)
            & (u <= cam.width_px - margin_px)
            & (v >= margin_px)
            & (v <= cam.height_px - margin_px)
        )


def points_in_image(camera, uv_px, depth_m, *, margin_px: float = VISIBILITY_MARGIN_PX) -> np.ndarray:
    """Which projected points count as seen: positive depth and inside the image with a margin.

    Parameters
    ----------
    camera : CameraPreset or str
    uv_px : array_like, shape (..., 2)
        Pixels as returned by :func:`project_points` (NaN allowed).
    depth_m : array_like, shape (...)
        Depths [m] of the same points.
    margin_px : float
        Margin [px] kept from every border; a point exactly on the margin counts.

    Returns
    -------
    ndarray of bool, shape (...)
    """
    cam = as_camera(camera)
    uv = se3.check_array(uv_px, "uv_px", (2,), allow_nan=True)
    depth = se3.check_array(depth_m, "depth_m", (), allow_nan=True)
    if depth.shape != uv.shape[:-1]:
        raise InputError(f"depth_m: expected shape {uv.shape[:-1]} to match uv_px, got shape {depth.shape}")
    return inside_image(cam, uv, depth, float(margin_px))


# --------------------------------------------------------------------------- #
# visibility
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Visibility:
    """Per-frame visibility of a target (see the module docstring for the rule).

    Attributes
    ----------
    visible : ndarray of bool, shape (N,)
        The target counts as visible (all three conditions hold).
    n_points : ndarray of int, shape (N,)
        Points with positive depth projecting inside the image with the margin.
    depth_m : ndarray, shape (N,)
        Depth [m] of the target origin (its centre) along the optical axis,
        the ``z`` of ``T_cam_target``'s translation.
    view_angle_deg : ndarray, shape (N,)
        Angle [deg] in ``[0, 180]`` between the board normal (target ``z``) and
        the line of sight from the board centre to the camera; 0 when the board
        faces the camera, above 90 when it is seen from behind.
    """

    visible: np.ndarray
    n_points: np.ndarray
    depth_m: np.ndarray
    view_angle_deg: np.ndarray


def view_angles_deg(T_cam_target) -> np.ndarray:
    """Angle [deg] between the target normal and the line of sight to the camera, shape ``(N,)``.

    With ``n = R[:, 2]`` (target ``z`` in the camera frame) and ``s = -t``
    (from the target origin to the camera centre), the angle is
    ``atan2(|n x s|, n . s)``; it is 0 when the target sits at the camera
    centre, where the line of sight is undefined.
    """
    T = se3.check_transforms(T_cam_target, "T_cam_target")
    return view_angles_deg_unchecked(T)


def view_angles_deg_unchecked(T: np.ndarray) -> np.ndarray:
    n = T[..., :3, 2]
    s = -T[..., :3, 3]
    return np.degrees(np.arctan2(np.linalg.norm(np.cross(n, s), axis=-1), np.einsum("...i,...i->...", n, s)))


def visibility(camera, target, T_cam_target, *, check: bool = True) -> Visibility:
    """Visibility of a target in every frame.

    Parameters
    ----------
    camera : CameraPreset or str
        The camera (or its preset name).
    target : TargetPreset or str
        The target (or its preset name).
    T_cam_target : array_like, shape (N, 4, 4)
        Pose of the target in the camera frame, one per frame (any leading
        axes, or a single ``(4, 4)`` pose).
    check : bool
        Validate the poses (``False`` for poses the caller built itself).

    Returns
    -------
    Visibility
        ``visible``, ``n_points``, ``depth_m`` and ``view_angle_deg``, each of
        shape ``(N,)``.
    """
    cam = as_camera(camera)
    tgt = as_target(target)
    T = se3.check_transforms(T_cam_target, "T_cam_target") if check else np.asarray(T_cam_target, dtype=np.float64)
    uv, depth = pinhole_pixels(cam, to_camera(T, tgt.points_m))
    return visibility_rule(cam, tgt, T, inside_image(cam, uv, depth, VISIBILITY_MARGIN_PX))


def visibility_rule(cam: CameraPreset, tgt: TargetPreset, T: np.ndarray, inside: np.ndarray) -> Visibility:
    """The visibility rule, given the poses (..., 4, 4) and which points are inside the image (..., P)."""
    n_points = inside.sum(axis=-1)
    if tgt.kind == "checkerboard":
        enough = n_points == tgt.n_points
    else:
        enough = n_points >= tgt.min_visible_points
    depth_c = T[..., 2, 3].copy()
    angle = view_angles_deg_unchecked(T)
    visible = enough & (depth_c >= MIN_DEPTH_M) & (depth_c <= MAX_DEPTH_M) & (angle < MAX_VIEW_ANGLE_DEG)
    return Visibility(visible=visible, n_points=n_points.astype(np.int64), depth_m=depth_c, view_angle_deg=angle)


# --------------------------------------------------------------------------- #
# serialisation
# --------------------------------------------------------------------------- #
def camera_json(camera) -> dict:
    """JSON-ready description of a camera preset, in the published ``cameras_targets.json`` form.

    Keys, in order: ``name, width, height`` [px], ``fx, fy, cx, cy`` [px],
    ``description``, ``hfov_deg`` (horizontal field of view [deg], 2 decimals).
    """
    c = as_camera(camera)
    return {
        "name": c.name,
        "width": int(c.width_px),
        "height": int(c.height_px),
        "fx": float(c.f_px),
        "fy": float(c.f_px),
        "cx": float(c.cx_px),
        "cy": float(c.cy_px),
        "description": c.description,
        "hfov_deg": round(float(c.hfov_deg), 2),
    }


def target_json(target) -> dict:
    """JSON-ready description of a target preset, in the published ``cameras_targets.json`` form.

    Keys, in order: ``name, cols, rows, spacing_m`` (point pitch [m]), ``kind,
    min_visible_points, description, n_points, size_m`` ([width, height] [m]).
    """
    t = as_target(target)
    w, h = t.size_m
    return {
        "name": t.name,
        "cols": int(t.cols),
        "rows": int(t.rows),
        "spacing_m": float(t.pitch_m),
        "kind": t.kind,
        "min_visible_points": int(t.min_visible_points),
        "description": t.description,
        "n_points": int(t.n_points),
        "size_m": [round(w, 9), round(h, 9)],
    }


def cameras_targets_json() -> dict:
    """Every camera and target preset as a JSON-ready dict (the content of ``cameras_targets.json``).

    Returns
    -------
    dict
        ``{"cameras": {name: {...}}, "targets": {name: {...}}}`` in preset
        order; see :func:`camera_json` and :func:`target_json` for the fields.
    """
    return {
        "cameras": {name: camera_json(c) for name, c in _CAMERAS.items()},
        "targets": {name: target_json(t) for name, t in _TARGETS.items()},
    }
