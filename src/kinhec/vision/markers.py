"""Marker-based targets: ChArUco boards and Kalibr's AprilGrid, detected through OpenCV's ``aruco`` module.

ChArUco
-------
``cv2.aruco.CharucoDetector`` finds the markers (and, from the board's
layout, looks again for those it missed), then the chessboard corners next
to the markers found, with sub-pixel refinement; each corner carries its
board id, so partial views count and the order is fixed by the ids.  Under
strong blur OpenCV's refinement of a corner known from one marker only can
stop a few pixels off; every corner is therefore refined a second time with
``cv2.cornerSubPix`` and a window inside the white margin round the markers,
and a corner whose two positions differ by more than
:data:`CHARUCO_AGREE_PX` (or :data:`CHARUCO_AGREE_FRACTION` of a square) is
dropped.  When no marker of the target's dictionary is found, the markers of the
other predefined families are looked for, so that a board printed with
another dictionary is named in the message.

AprilGrid
---------
``cv2.aruco.ArucoDetector`` with the AprilTag 36h11 dictionary and Kalibr's
two-bit black border finds the tags; each tag id gives its four point ids
(:meth:`kinhec.vision.targets.AprilGrid.tag_point_ids`).  The tag corners
touch Kalibr's small black corner squares, so each is an X junction that
``cv2.cornerSubPix`` refines, with a window inside the tag border and the
gap, from the corners of lines fitted to the tag's contour (the contour
polygon's own corners sit 1-3 px off, pulled towards the corner squares); a
corner the refinement moves by more than half the border's width (at least
:data:`MAX_REFINE_SHIFT_PX`) is dropped, as Kalibr drops those that move far.  Tags with ids beyond the grid, or seen twice,
are not the board's and are ignored.

Both then go through :func:`kinhec.vision.checks.fit_check`: corners off the
plane fit are dropped (a view with too many is rejected), the view must be
seen from the printed side, and the corners left must span two rows and two
columns of the target (collinear points fix no pose).
"""

from __future__ import annotations

import threading
from functools import lru_cache

import numpy as np

from kinhec.vision._cv import require_cv2
from kinhec.vision.checks import MAX_BAD_FRACTION, fit_check
from kinhec.vision.detection import Detection
from kinhec.vision.targets import DICTIONARIES, AprilGrid, Charuco, Target

__all__ = ["MAX_REFINE_SHIFT_PX", "detect_charuco", "detect_aprilgrid", "charuco_board", "dictionary", "other_markers"]

#: A tag corner moved further than this, or half the border's width if more, by the sub-pixel refinement is dropped [px].
MAX_REFINE_SHIFT_PX = 1.5
#: A ChArUco corner whose OpenCV position and a second refinement differ by more than this [px] ...
CHARUCO_AGREE_PX = 1.0
#: ... or this fraction of a square, if more, is dropped (its refinement went astray).
CHARUCO_AGREE_FRACTION = 0.03
#: Dictionaries tried when the target's finds nothing (the 1000-marker sets hold the smaller ones of their size).
_OTHER_FAMILIES = ("DICT_4X4_1000", "DICT_5X5_1000", "DICT_6X6_1000", "DICT_7X7_1000", "DICT_ARUCO_ORIGINAL",
                   "DICT_APRILTAG_36h11", "DICT_APRILTAG_25h9", "DICT_APRILTAG_16h5")  # fmt: skip


@lru_cache(maxsize=None)
def dictionary(name: str):
    """OpenCV's predefined dictionary ``name`` (one of :data:`kinhec.vision.targets.DICTIONARIES`)."""
    cv2 = require_cv2()
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, name))


@lru_cache(maxsize=None)
def charuco_board(target: Charuco):
    """The ``cv2.aruco.CharucoBoard`` of a :class:`~kinhec.vision.targets.Charuco` target."""
    cv2 = require_cv2()
    board = cv2.aruco.CharucoBoard((target.squares_x, target.squares_y), target.square_m, target.marker_m,
                                   dictionary(target.dictionary))  # fmt: skip
    board.setLegacyPattern(bool(target.legacy))
    return board


_THREAD = threading.local()


def _per_thread(key, make):
    """``make()`` once per thread and key: OpenCV's detector objects are not shared between the threads of
    :func:`kinhec.vision.detect.detect_images` (each thread's die with it)."""
    cache = getattr(_THREAD, "detectors", None)
    if cache is None:
        cache = _THREAD.detectors = {}
    if key not in cache:
        cache[key] = make()
    return cache[key]


def _charuco_detector(target: Charuco):
    def make():
        cv2 = require_cv2()
        ch = cv2.aruco.CharucoParameters()
        ch.minMarkers = 1  # a corner next to one found marker counts (it is refined on the image anyway)
        ch.tryRefineMarkers = True  # look again for the markers the board's layout says are missing
        return cv2.aruco.CharucoDetector(charuco_board(target), ch, _detector_parameters())

    return _per_thread(("charuco", target), make)


def _detector_parameters(border_bits: int = 1, refine: bool = False):
    cv2 = require_cv2()
    params = cv2.aruco.DetectorParameters()
    params.markerBorderBits = int(border_bits)
    # read each module from 8 x 8 pixels, ignoring a fifth of it at its edges: small, blurred markers decode
    params.perspectiveRemovePixelPerCell = 8
    params.perspectiveRemoveIgnoredMarginPerCell = 0.2
    if refine:  # corners from lines fitted to the marker's contour (the polygon's own corners are px off)
        params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_CONTOUR
    return params


def _marker_detector(name: str, border_bits: int = 1, refine: bool = False):
    cv2 = require_cv2()
    return _per_thread(("markers", name, border_bits, refine),
                       lambda: cv2.aruco.ArucoDetector(dictionary(name), _detector_parameters(border_bits, refine)))


def other_markers(gray: np.ndarray, exclude: str) -> tuple[str, int] | None:
    """The predefined family (other than ``exclude``) with the most markers in the image, and their count."""
    best = None
    for name in _OTHER_FAMILIES:
        if name == exclude:
            continue
        _, ids, _ = _marker_detector(name).detectMarkers(gray)
        n = 0 if ids is None else len(ids)
        if n >= 2 and (best is None or n > best[1]):
            best = (name, n)
    return best


def _family(name: str) -> str:
    b = DICTIONARIES[name][0]
    return f"DICT_{b}X{b}_* ({b}x{b} bits)" if "X" in name[5:8] else name


def _no_markers(gray, target: Target, image: str, size) -> Detection:
    hint = other_markers(gray, target.dictionary)
    msg = f"no marker of {target.dictionary} found"
    if hint is not None:
        msg += f", but {hint[1]} markers of {_family(hint[0])}: check the dictionary in the target ({target.spec})"
    return Detection.rejected(image, size, msg)


def _checked(image: str, size, target: Target, ids: np.ndarray, uv: np.ndarray, notes: list) -> Detection:
    """Fit, orientation and spread checks shared by the marker targets."""
    if ids.size < target.min_points:
        return Detection.rejected(image, size, f"only {ids.size} corner(s) of the {target.kind} found, expected at "
                                               f"least {target.min_points}")
    pts = target.points_m[ids, :2]
    fit = fit_check(pts, uv, target.spacing_m)
    want = 1.0 if not target.z_towards_viewer else -1.0
    if fit.orientation != want:
        return Detection.rejected(image, size, f"the {target.kind} is seen mirrored (through its back, or the "
                                               "image is mirrored)")
    if not fit.clean or fit.n_bad > MAX_BAD_FRACTION * ids.size:
        return Detection.rejected(image, size, f"{fit.n_bad} of {ids.size} corners off the board's plane fit: the "
                                               f"ids do not match the board ({target.spec})?")
    if fit.n_bad:
        notes.append(f"{fit.n_bad} corner(s) off the plane fit dropped")
        ids, uv, pts = ids[fit.good], uv[fit.good], pts[fit.good]
    if ids.size < target.min_points or min(np.unique(pts[:, 0]).size, np.unique(pts[:, 1]).size) < 2:
        return Detection.rejected(image, size, f"the {ids.size} corners found lie on one line of the {target.kind}")
    order = np.argsort(ids, kind="stable")
    return Detection(image, size, ids[order], uv[order], notes=tuple(notes), fit_rms_px=fit.rms_px)


def detect_charuco(gray: np.ndarray, target: Charuco, image: str = "image") -> Detection:
    """Find a ChArUco board's corners (partial views count) and check them; a :class:`Detection`."""
    size = (gray.shape[1], gray.shape[0])
    corners, ids, _, marker_ids = _charuco_detector(target).detectBoard(gray)
    if marker_ids is None or len(marker_ids) == 0:
        return _no_markers(gray, target, image, size)
    if ids is None or len(ids) == 0:
        return Detection.rejected(image, size, f"{len(marker_ids)} marker(s) of {target.dictionary} but no ChArUco "
                                               f"corner between them ({target.spec})")
    ids = np.asarray(ids, dtype=np.int64).ravel()
    uv = np.asarray(corners, dtype=np.float64).reshape(-1, 2)
    notes = []
    if ids.size >= 4:  # a second refinement, with a window inside the white margin round the markers
        cv2 = require_cv2()
        spacing_px = fit_check(target.points_m[ids, :2], uv, target.spacing_m).spacing_px
        margin_px = 0.5 * (target.square_m - target.marker_m) / target.square_m * spacing_px
        half = int(np.clip(np.floor(0.9 * margin_px), 2, 10))
        crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 50, 1e-4)
        ref = cv2.cornerSubPix(gray, uv.reshape(-1, 1, 2).astype(np.float32), (half, half), (-1, -1), crit)
        limit = max(CHARUCO_AGREE_PX, CHARUCO_AGREE_FRACTION * spacing_px)
        off = np.linalg.norm(ref.reshape(-1, 2) - uv, axis=1) > limit
        if off.any():
            notes.append(f"{int(off.sum())} corner(s) whose two sub-pixel refinements differ by more than "
                         f"{limit:.1f} px dropped")
            ids, uv = ids[~off], uv[~off]
    return _checked(image, size, target, ids, uv, notes)


def detect_aprilgrid(gray: np.ndarray, target: AprilGrid, image: str = "image") -> Detection:
    """Find an AprilGrid's tags, refine their corners and check them; a :class:`Detection`."""
    cv2 = require_cv2()
    size = (gray.shape[1], gray.shape[0])
    corners, tag_ids, _ = _marker_detector(target.dictionary, target.border_bits, True).detectMarkers(gray)
    if tag_ids is None or len(tag_ids) == 0:
        return _no_markers(gray, target, image, size)
    tag_ids = np.asarray(tag_ids, dtype=np.int64).ravel()
    quads = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    notes = []
    n_tags = target.cols * target.rows
    ids_u, counts = np.unique(tag_ids, return_counts=True)
    keep = (tag_ids < n_tags) & np.isin(tag_ids, ids_u[counts == 1])
    if (~keep).any():
        notes.append(f"{int((~keep).sum())} tag(s) not on the grid (ids beyond {n_tags - 1} or seen twice) ignored")
    tag_ids, quads = tag_ids[keep], quads[keep]
    if tag_ids.size == 0:
        return Detection.rejected(image, size, f"no tag of the {target.cols}x{target.rows} grid found")
    # X-junction refinement inside the tag's black border and the gap
    side = np.linalg.norm(np.roll(quads, -1, axis=1) - quads, axis=2).mean(axis=1)  # (T,) tag side [px]
    inner = min(target.border_bits / (DICTIONARIES[target.dictionary][0] + 2 * target.border_bits), target.spacing)
    inner_px = inner * float(np.median(side))  # the black border's or the gap's width, whichever is less
    half = int(np.clip(np.floor(0.6 * inner_px), 2, 10))
    raw = quads.reshape(-1, 1, 2).astype(np.float32)
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 40, 1e-3)
    ref = cv2.cornerSubPix(gray, raw.copy(), (half, half), (-1, -1), crit).reshape(-1, 2).astype(np.float64)
    limit = max(MAX_REFINE_SHIFT_PX, 0.5 * inner_px)
    moved = np.linalg.norm(ref - raw.reshape(-1, 2), axis=1) > limit
    ids = target.tag_point_ids(tag_ids).ravel()
    if moved.any():
        notes.append(f"{int(moved.sum())} tag corner(s) moved more than {limit:.1f} px by the sub-pixel refinement "
                     "dropped")
    return _checked(image, size, target, ids[~moved], ref[~moved], notes)
