"""The calibration targets people print: chessboard, ChArUco and Kalibr's AprilGrid, with their frames and points.

A target is given as a spec string (the ``--target`` option) or a Kalibr
target YAML, and parsed by :func:`parse_target` into one of three classes.
Each knows its points (one id per detectable corner, in the target's own
frame, metres), its frame and what the detector needs.  Nothing here imports
OpenCV; the detectors (:mod:`kinhec.vision.detect`) and the renderer
(:mod:`kinhec.vision.render`) do, where they are used.

Spec strings
------------
``chessboard:COLSxROWS:SQUARE_M``
    ``COLS x ROWS`` *inner* corners, squares of ``SQUARE_M`` metres
    (e.g. ``chessboard:9x6:0.025``).
``charuco:SXxSY:SQUARE_M:MARKER_M:DICT[:legacy]``
    ``SX x SY`` *squares*, the square and marker sides [m] and an OpenCV
    dictionary (e.g. ``charuco:12x9:0.06:0.045:DICT_5X5_100``); ``legacy``
    for boards made before OpenCV 4.6 changed the layout of boards with an
    even number of rows.
``aprilgrid:COLSxROWS:TAG_M:SPACING``
    Kalibr's AprilGrid: ``COLS x ROWS`` AprilTag 36h11 tags of side
    ``TAG_M`` [m] (the outer edge of the black border), gaps of
    ``SPACING * TAG_M`` (e.g. ``aprilgrid:6x6:0.088:0.3``).
A path to a YAML file
    Kalibr's target YAML (``target_type: aprilgrid`` with ``tagCols``,
    ``tagRows``, ``tagSize``, ``tagSpacing``; ``target_type: checkerboard``
    with ``targetCols``, ``targetRows``, ``rowSpacingMeters``,
    ``colSpacingMeters``) or the ETH-ASL hand-eye variant
    (``april_tag_number_horizontal``, ``april_tag_number_vertical``,
    ``april_tag_size_m``, ``april_tag_gap_size_m``,
    ``april_tag_number_pixel_boarder``).

Frames and point ids
--------------------
``chessboard``
    OpenCV's: corner ``k = i * cols + j`` at ``(j s, i s, 0)``; ``x`` along a
    row of ``cols`` corners, ``y`` along a column, ``z = x cross y`` into the
    board (away from a viewer in front of it).  Corner 0 is the inner corner
    of a *black* corner square.  A board whose half turn looks the same
    (``cols + rows`` even: the black corner squares sit at both ends of a
    diagonal) has no such mark; corner 0 is then the candidate nearest the
    image's top-left, which stays consistent only while the camera rolls less
    than 90 degrees about the board's normal between views, and a calibration
    from images settles each view with the hand's motion
    (:mod:`kinhec.vision.symmetry`).
``charuco``
    OpenCV's (``cv::aruco::CharucoBoard``): origin at the outer top-left
    corner of the squares, ``x`` right, ``y`` down, ``z`` into the board;
    inner corner ``id = i * (SX - 1) + j`` at ``((j + 1) s, (i + 1) s, 0)``.
``aprilgrid``
    Kalibr's: origin at the outer bottom-left corner of tag 0, ``x`` right,
    ``y`` up, ``z`` out of the board towards the viewer; tag ``t`` in column
    ``t % COLS`` and row ``t // COLS`` counted from the bottom; point
    ``r * 2 COLS + c`` (``r < 2 ROWS``, ``c < 2 COLS``) at
    ``(floor(c / 2) (1 + spacing) + (c % 2), floor(r / 2) (1 + spacing) + (r % 2)) * TAG_M``.
    The poses a calibration gives (``T_base_target``, ``T_ee_marker``) are
    Kalibr's target frame, so they compare with Kalibr's directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from kinhec.util.errors import InputError, UnknownNameError
from kinhec.models.cameras import get_target

__all__ = [
    "TARGET_KINDS",
    "DICTIONARIES",
    "SPEC_FORMS",
    "Target",
    "Chessboard",
    "Charuco",
    "AprilGrid",
    "parse_target",
    "target_from_yaml",
    "target_for_preset",
]

TARGET_KINDS = ("chessboard", "charuco", "aprilgrid")

#: The spec string of every kind (for messages and ``--help``).
SPEC_FORMS = ("chessboard:COLSxROWS:SQUARE_M", "charuco:SXxSY:SQUARE_M:MARKER_M:DICT[:legacy]",
              "aprilgrid:COLSxROWS:TAG_M:SPACING", "a Kalibr target YAML")  # fmt: skip

#: OpenCV's predefined marker dictionaries: name -> (data bits per side, number of markers).
DICTIONARIES = {
    **{f"DICT_{b}X{b}_{n}": (b, n) for b in (4, 5, 6, 7) for n in (50, 100, 250, 1000)},
    "DICT_ARUCO_ORIGINAL": (5, 1024),
    "DICT_APRILTAG_16h5": (4, 30),
    "DICT_APRILTAG_25h9": (5, 35),
    "DICT_APRILTAG_36h10": (6, 2320),
    "DICT_APRILTAG_36h11": (6, 587),
    "DICT_ARUCO_MIP_36h12": (6, 250),
}
_DICT_BY_UPPER = {k.upper(): k for k in DICTIONARIES}

#: AprilGrid tags: the AprilTag 36h11 family, as in Kalibr.
APRILGRID_DICTIONARY = "DICT_APRILTAG_36h11"


def _grid_xy(n_cols: int, n_rows: int, xs, ys) -> np.ndarray:
    X, Y = np.meshgrid(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), indexing="xy")
    return np.stack([X.ravel(), Y.ravel(), np.zeros(n_cols * n_rows)], axis=-1)


@dataclass(frozen=True)
class Target:
    """A planar target: its points by id in its own frame [m] (see the module docstring for each kind)."""

    kind: ClassVar[str] = ""
    #: The board's ``z`` axis points out of the printed face (towards a viewer in front): Kalibr's frame.
    z_towards_viewer: ClassVar[bool] = False

    @property
    def spec(self) -> str:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    @property
    def points_m(self) -> np.ndarray:  # pragma: no cover
        """Every point of the target by id, shape ``(P, 3)`` [m], ``z = 0``."""
        raise NotImplementedError

    @property
    def n_points(self) -> int:
        return int(self.points_m.shape[0])

    @property
    def pattern_bounds_m(self) -> tuple[float, float, float, float]:  # pragma: no cover
        """``(x_min, y_min, x_max, y_max)`` [m] of the printed pattern in the target frame."""
        raise NotImplementedError

    @property
    def margin_m(self) -> float:  # pragma: no cover
        """White paper [m] around the pattern (a detector needs a quiet zone)."""
        raise NotImplementedError

    @property
    def spacing_m(self) -> float:  # pragma: no cover
        """Typical distance [m] between neighbouring points."""
        raise NotImplementedError

    @property
    def min_points(self) -> int:
        """Fewest detected points a view needs to count (every point for a chessboard)."""
        return 4

    @property
    def T_centred_target(self) -> np.ndarray:
        """Pose ``(4, 4)`` of the target frame in the *centred* frame.

        The centred frame is the one of kinhec's generated targets
        (:mod:`kinhec.models.cameras`): origin at the centre of the points' bounding
        box, ``x`` right and ``y`` up as the board is seen from the front,
        ``z`` towards the viewer.
        """
        p = self.points_m
        c = 0.5 * (p.min(axis=0) + p.max(axis=0))
        R = np.eye(3) if self.z_towards_viewer else np.diag([1.0, -1.0, -1.0])
        T = np.eye(4)
        T[:3, :3] = R
        T[:3, 3] = -R @ c
        return T

    def __str__(self) -> str:
        return self.spec


@dataclass(frozen=True)
class Chessboard(Target):
    """A chessboard of ``cols x rows`` inner corners and squares of ``square_m`` metres (OpenCV's frame)."""

    cols: int
    rows: int
    square_m: float
    kind: ClassVar[str] = "chessboard"

    def __post_init__(self) -> None:
        _check_count("chessboard", "inner corners", self.cols, self.rows, 2)
        _check_length("chessboard", "square side", self.square_m)

    @property
    def spec(self) -> str:
        return f"chessboard:{self.cols}x{self.rows}:{self.square_m:g}"

    @property
    def points_m(self) -> np.ndarray:
        s = self.square_m
        return _grid_xy(self.cols, self.rows, np.arange(self.cols) * s, np.arange(self.rows) * s)

    @property
    def pattern_bounds_m(self):
        s = self.square_m
        return (-s, -s, self.cols * s, self.rows * s)

    @property
    def margin_m(self) -> float:
        return self.square_m

    @property
    def spacing_m(self) -> float:
        return self.square_m

    @property
    def min_points(self) -> int:
        return self.cols * self.rows

    @property
    def symmetric(self) -> bool:
        """Its half turn looks the same (``cols + rows`` even): corner 0 cannot be told from the last one."""
        return (self.cols + self.rows) % 2 == 0


@dataclass(frozen=True)
class Charuco(Target):
    """A ChArUco board of ``squares_x x squares_y`` squares (OpenCV's ``CharucoBoard`` and frame)."""

    squares_x: int
    squares_y: int
    square_m: float
    marker_m: float
    dictionary: str
    legacy: bool = False
    kind: ClassVar[str] = "charuco"

    def __post_init__(self) -> None:
        _check_count("charuco", "squares", self.squares_x, self.squares_y, 2)
        _check_length("charuco", "square side", self.square_m)
        _check_length("charuco", "marker side", self.marker_m)
        if not self.marker_m < self.square_m:
            raise InputError(f"target charuco: expected a marker smaller than its square, got marker "
                             f"{self.marker_m:g} m in squares of {self.square_m:g} m")
        if self.dictionary not in DICTIONARIES:
            raise UnknownNameError("ArUco dictionary", self.dictionary, DICTIONARIES)
        need = self.n_markers
        have = DICTIONARIES[self.dictionary][1]
        if need > have:
            raise InputError(f"target {self.spec}: expected a dictionary of at least {need} markers for "
                             f"{self.squares_x}x{self.squares_y} squares, got {self.dictionary} ({have} markers)")

    @property
    def n_markers(self) -> int:
        return (self.squares_x * self.squares_y) // 2

    @property
    def spec(self) -> str:
        tail = ":legacy" if self.legacy else ""
        return f"charuco:{self.squares_x}x{self.squares_y}:{self.square_m:g}:{self.marker_m:g}:{self.dictionary}{tail}"

    @property
    def points_m(self) -> np.ndarray:
        s = self.square_m
        return _grid_xy(self.squares_x - 1, self.squares_y - 1, np.arange(1, self.squares_x) * s,
                        np.arange(1, self.squares_y) * s)  # fmt: skip

    @property
    def pattern_bounds_m(self):
        return (0.0, 0.0, self.squares_x * self.square_m, self.squares_y * self.square_m)

    @property
    def margin_m(self) -> float:
        return 0.5 * self.square_m

    @property
    def spacing_m(self) -> float:
        return self.square_m


@dataclass(frozen=True)
class AprilGrid(Target):
    """Kalibr's AprilGrid: ``cols x rows`` AprilTag 36h11 tags of ``tag_m``, gaps of ``spacing * tag_m`` (Kalibr's frame)."""

    cols: int
    rows: int
    tag_m: float
    spacing: float
    border_bits: int = 2
    kind: ClassVar[str] = "aprilgrid"
    z_towards_viewer: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_count("aprilgrid", "tags", self.cols, self.rows, 1)
        _check_length("aprilgrid", "tag side", self.tag_m)
        if not (np.isfinite(self.spacing) and 0.0 < self.spacing <= 1.0):
            raise InputError(f"target aprilgrid: expected a spacing (gap / tag side) in (0, 1], got {self.spacing!r}")
        if not 1 <= int(self.border_bits) <= 3:
            raise InputError(f"target aprilgrid: expected 1 to 3 black border bits per tag, got {self.border_bits!r}")
        need, have = self.cols * self.rows, DICTIONARIES[APRILGRID_DICTIONARY][1]
        if need > have:
            raise InputError(f"target {self.spec}: expected at most {have} tags (AprilTag 36h11), got {need}")

    @property
    def dictionary(self) -> str:
        return APRILGRID_DICTIONARY

    @property
    def spec(self) -> str:
        tail = f":border{self.border_bits}" if self.border_bits != 2 else ""
        return f"aprilgrid:{self.cols}x{self.rows}:{self.tag_m:g}:{self.spacing:g}{tail}"

    @property
    def pitch_m(self) -> float:
        """Distance [m] between the origins of neighbouring tags, ``tag_m (1 + spacing)``."""
        return self.tag_m * (1.0 + self.spacing)

    @property
    def points_m(self) -> np.ndarray:
        c = np.arange(2 * self.cols)
        r = np.arange(2 * self.rows)
        xs = (c // 2) * self.pitch_m + (c % 2) * self.tag_m
        ys = (r // 2) * self.pitch_m + (r % 2) * self.tag_m
        return _grid_xy(2 * self.cols, 2 * self.rows, xs, ys)

    @property
    def pattern_bounds_m(self):
        g = self.spacing * self.tag_m  # the black corner squares reach one gap beyond the outer tags
        return (-g, -g, self.cols * self.pitch_m, self.rows * self.pitch_m)

    @property
    def margin_m(self) -> float:
        return 2.0 * self.spacing * self.tag_m

    @property
    def spacing_m(self) -> float:
        return self.tag_m * min(1.0, self.spacing)  # across a gap

    def tag_point_ids(self, tag_ids) -> np.ndarray:
        """Point ids ``(T, 4)`` of tags ``tag_ids`` in OpenCV's corner order of a detected marker.

        OpenCV reports a marker's corners clockwise from its own top-left; a
        Kalibr tag is printed upside down with respect to OpenCV's marker
        image, so they fall on the tag's bottom-right, bottom-left, top-left
        and top-right corners in the target frame (``y`` up).
        """
        t = np.asarray(tag_ids, dtype=np.int64)
        base = (t // self.cols) * 4 * self.cols + (t % self.cols) * 2
        w = 2 * self.cols
        return np.stack([base + 1, base, base + w, base + w + 1], axis=-1)


# --------------------------------------------------------------------------- #
# parsing
# --------------------------------------------------------------------------- #
def _check_count(kind: str, what: str, a, b, least: int) -> None:
    for v in (a, b):
        if not isinstance(v, (int, np.integer)) or v < least:
            raise InputError(f"target {kind}: expected at least {least} x {least} {what}, got {a} x {b}")


def _check_length(kind: str, what: str, v) -> None:
    if not (isinstance(v, (int, float, np.floating)) and np.isfinite(v) and 0.0 < v < 10.0):
        raise InputError(f"target {kind}: expected a {what} in metres (0 < s < 10), got {v!r}")


_DIMS = re.compile(r"^\s*(\d+)\s*[xX*]\s*(\d+)\s*$")


def _dims(text: str, what: str, spec: str) -> tuple[int, int]:
    m = _DIMS.match(text)
    if not m:
        raise InputError(f"target: expected {what} as AxB (e.g. 9x6) in {spec!r}, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def _metres(text: str, what: str, spec: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise InputError(f"target: expected the {what} in metres in {spec!r}, got {text!r}") from None
    if v >= 10.0:
        raise InputError(f"target: expected the {what} in metres in {spec!r}, got {v:g} (millimetres?)")
    return v


def _dictionary(name: str) -> str:
    key = name.strip().upper()
    if not key.startswith("DICT_"):
        key = "DICT_" + key
    if key not in _DICT_BY_UPPER:
        raise UnknownNameError("ArUco dictionary", name, DICTIONARIES)
    return _DICT_BY_UPPER[key]


def _forms() -> str:
    return "; ".join(SPEC_FORMS)


def parse_target(spec) -> Target:
    """The target a spec string or a Kalibr YAML file describes (see the module docstring).

    Parameters
    ----------
    spec : str, Path or Target
        ``chessboard:9x6:0.025``, ``charuco:12x9:0.06:0.045:DICT_5X5_100``,
        ``aprilgrid:6x6:0.088:0.3``, a path to a target YAML, or a target (returned as is).

    Raises
    ------
    InputError
        A malformed spec (naming it and what was expected), an unknown
        dictionary, impossible sizes, an unreadable YAML.
    """
    if isinstance(spec, Target):
        return spec
    if isinstance(spec, Path) or (isinstance(spec, str) and spec.lower().endswith((".yaml", ".yml"))):
        return target_from_yaml(spec)
    if not isinstance(spec, str):
        raise InputError(f"target: expected a spec string ({_forms()}), got {type(spec).__name__}")
    parts = [p.strip() for p in spec.split(":")]
    kind = parts[0].lower()
    if kind in ("chessboard", "checkerboard"):
        if len(parts) != 3:
            raise InputError(f"target: expected chessboard:COLSxROWS:SQUARE_M (inner corners), got {spec!r}")
        cols, rows = _dims(parts[1], "the inner corners", spec)
        return Chessboard(cols, rows, _metres(parts[2], "square side", spec))
    if kind == "charuco":
        legacy = len(parts) == 6 and parts[5].lower() == "legacy"
        if len(parts) != 5 and not legacy:
            raise InputError(f"target: expected charuco:SXxSY:SQUARE_M:MARKER_M:DICT[:legacy] (squares), got {spec!r}")
        sx, sy = _dims(parts[1], "the squares", spec)
        return Charuco(sx, sy, _metres(parts[2], "square side", spec), _metres(parts[3], "marker side", spec),
                       _dictionary(parts[4]), legacy)  # fmt: skip
    if kind == "aprilgrid":
        border = 2
        if len(parts) == 5 and re.fullmatch(r"border[123]", parts[4].lower()):
            border = int(parts[4][-1])
        elif len(parts) != 4:
            raise InputError(f"target: expected aprilgrid:COLSxROWS:TAG_M:SPACING (tags), got {spec!r}")
        cols, rows = _dims(parts[1], "the tags", spec)
        try:
            spacing = float(parts[3])
        except ValueError:
            raise InputError(f"target: expected the spacing (gap / tag side, e.g. 0.3) in {spec!r}, got {parts[3]!r}") from None
        return AprilGrid(cols, rows, _metres(parts[2], "tag side", spec), spacing, border)
    if spec.strip() and Path(spec).is_file():
        return target_from_yaml(spec)
    raise InputError(f"target: expected one of {_forms()}, got {spec!r}")


def _yaml_number(doc: dict, key: str, path, kind=float):
    if key not in doc:
        raise InputError(f"{path}: expected the key {key!r} in the target YAML, got keys {sorted(doc)}")
    try:
        v = kind(doc[key])
    except (TypeError, ValueError):
        raise InputError(f"{path}: {key}: expected a number, got {doc[key]!r}") from None
    if kind is int and float(doc[key]) != v:
        raise InputError(f"{path}: {key}: expected a whole number, got {doc[key]!r}")
    return v


def target_from_yaml(path) -> Target:
    """A target from a Kalibr target YAML (``aprilgrid`` or ``checkerboard``) or the ETH-ASL AprilGrid variant."""
    import yaml

    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: expected a target YAML, got no such file") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: expected a target YAML, got invalid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a mapping of target keys, got {type(doc).__name__}")
    try:
        if "april_tag_size_m" in doc:  # ETH-ASL hand_eye_calibration's form
            size = _yaml_number(doc, "april_tag_size_m", path)
            gap = _yaml_number(doc, "april_tag_gap_size_m", path)
            border = int(doc.get("april_tag_number_pixel_boarder", 2))
            return AprilGrid(_yaml_number(doc, "april_tag_number_horizontal", path, int),
                             _yaml_number(doc, "april_tag_number_vertical", path, int), size, gap / size, border)
        kind = str(doc.get("target_type", "")).strip().lower()
        if kind == "aprilgrid":
            return AprilGrid(_yaml_number(doc, "tagCols", path, int), _yaml_number(doc, "tagRows", path, int),
                             _yaml_number(doc, "tagSize", path), _yaml_number(doc, "tagSpacing", path))
        if kind == "checkerboard":
            row, col = _yaml_number(doc, "rowSpacingMeters", path), _yaml_number(doc, "colSpacingMeters", path)
            if abs(row - col) > 1e-9 * max(row, col):
                raise InputError(f"{path}: expected square squares, got rowSpacingMeters {row:g} and "
                                 f"colSpacingMeters {col:g}")
            return Chessboard(_yaml_number(doc, "targetCols", path, int), _yaml_number(doc, "targetRows", path, int), row)
    except InputError as exc:
        msg = str(exc)
        raise InputError(msg if msg.startswith(str(path)) else f"{path}: {msg}") from None
    raise InputError(f"{path}: expected target_type aprilgrid or checkerboard (Kalibr), or the april_tag_* keys, "
                     f"got target_type {doc.get('target_type')!r}")


def target_for_preset(name: str) -> Target:
    """The printed target that stands for a generated target preset (:data:`kinhec.models.cameras.TARGET_NAMES`).

    The points of the returned target are the preset's (mapped by
    :attr:`Target.T_centred_target`; in the same order except the AprilGrid's,
    whose rows count from the bottom): a ``checkerboard`` preset is a
    chessboard with its inner corners; a ``grid`` preset of ``C x R`` points is a
    ChArUco board of ``(C + 1) x (R + 1)`` squares (markers 3/4 of a square,
    the smallest 4x4 dictionary that holds them); the single 2x2 marker is a
    one-tag AprilGrid.
    """

    p = get_target(name)
    if p.kind == "checkerboard":
        return Chessboard(p.cols, p.rows, p.pitch_m)
    if p.cols == 2 and p.rows == 2:
        return AprilGrid(1, 1, p.pitch_m, 0.3)
    n = ((p.cols + 1) * (p.rows + 1)) // 2
    size = next(k for k in (50, 100, 250, 1000) if k >= n)
    return Charuco(p.cols + 1, p.rows + 1, p.pitch_m, round(0.75 * p.pitch_m, 6), f"DICT_4X4_{size}")
