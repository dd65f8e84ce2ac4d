"""Chessboard detection with a canonical corner order.

Finding
-------
OpenCV's sector-based detector (``cv2.findChessboardCornersSB``; Duda and
Frese, BMVC 2018) finds the inner corners with sub-pixel positions of its
own.  ``cv2.cornerSubPix`` (Foerstner's gradient-orthogonality fit), run from
them with a window of 0.3 of a square, gives a second set.  Neither is best
everywhere: on the real RWHE-Calib images (31 px squares) the sector
detector's corners fit the board's plane to 0.10 px RMS and ``cornerSubPix``'s
to 0.13-0.25 px, on rendered images of small squares (10 px) the sector
detector's are off by 0.1-0.35 px with a bias per view and ``cornerSubPix``'s
by 0.05 px.  So both are kept (:attr:`Detection.alternatives`), the one with
the smaller plane-fit RMS (:func:`kinhec.vision.checks.fit_check`) is used
for a single image, and :func:`kinhec.vision.detect.detect_images` keeps one
method for a whole folder (the one whose median fit RMS is smaller), so that
the views share one corner convention.  The detector's numbering starts at
either end of the board, so it is put in the canonical order below before
anything uses it.

Canonical order
---------------
A grid of ``rows x cols`` corners can be numbered in 4 ways (8 for a square
grid) that keep its shape: the identity, the mirror images along either
axis and the half turn (and the transposes).  Two things single out the
board's own numbering (:mod:`kinhec.vision.targets`: corner ``i * cols + j``
at ``(j s, i s)``, ``z`` into the board, corner 0 at a black corner square):

1. **Printed side.** Seen from the front, the board's ``x`` (along a row) and
   ``y`` (along a column) run like the image's ``u`` and ``v`` up to a
   rotation, so the corner grid's orientation in the image (the sign of the
   cross product of its row and column directions) is positive.  A mirrored
   numbering has the other sign.
2. **Colours.** In the board's numbering the square between corners
   ``(i, j)`` and ``(i + 1, j + 1)`` of the grid extended by one square on
   every side is dark when ``i + j`` is even.  The intensities of every pair
   of neighbouring squares are compared; the numbering must order at least
   :data:`COLOUR_MIN_SCORE` of the pairs right.

When ``cols + rows`` is odd exactly one numbering passes both.  When it is
even the half turn passes too (the board looks the same turned round); corner
0 is then the candidate nearest the image's top-left corner.  When none
passes, the view is rejected: the image is mirrored, or the board is seen
through its back, in the only case where a mirror image can be told from a
board at all -- ``cols`` and ``rows`` both odd.  (With ``cols`` even, say, the
mirror image of the board across its columns is the board itself, so a
mirrored photograph of it is a photograph of the same board in another pose;
nothing can or need reject it.)
"""

from __future__ import annotations

import numpy as np

from kinhec.vision._cv import require_cv2
from kinhec.vision.checks import fit_check
from kinhec.vision.detection import Detection, sample_bilinear
from kinhec.vision.targets import Chessboard

__all__ = ["COLOUR_MIN_SCORE", "find_chessboard", "quick_find_chessboard", "suggest_chessboard_size", "order_chessboard", "check_chessboard_order", "detect_chessboard",
           "refine_corners"]

#: Fraction of neighbouring square pairs whose brightness order a numbering must get right.
COLOUR_MIN_SCORE = 0.9


def find_chessboard(gray: np.ndarray, board: Chessboard, *, fast: bool = False) -> np.ndarray | None:
    """The inner corners ``(rows, cols, 2)`` [px] as OpenCV's sector-based detector numbers them, or None.

    The whole image is searched (``CALIB_CB_EXHAUSTIVE`` as the last resort). With ``fast``, a large image
    (smaller side at least :data:`QUICK_MIN_SIDE` px) is searched at half size first
    (:func:`quick_find_chessboard`), and where the board is found there the sector detector runs at full
    resolution on the board's window only (:func:`_find_in_window`): 0.1 s instead of 0.28 s on a 1928x1208
    RWHE-Calib view. Its corners are as good (plane-fit RMS 0.0776 px against 0.0774 px on kuka_1) but not the
    same: the sector detector's sub-pixel positions move by about 0.02 px (median; 0.15 px at most) with the
    image's size and the board's place in it, so they are not the default.
    """
    cv2 = require_cv2()
    if fast and min(gray.shape) >= QUICK_MIN_SIDE:
        rough = quick_find_chessboard(gray, board)
        if rough is not None:
            grid = _find_in_window(gray, board, rough)
            if grid is not None:
                return grid
    size = (board.cols, board.rows)
    for flags in (0, cv2.CALIB_CB_EXHAUSTIVE):
        ok, corners = cv2.findChessboardCornersSB(gray, size, flags=flags)
        if ok:
            return corners.reshape(board.rows, board.cols, 2).astype(np.float64)
    return None


#: Images whose smaller side has at least this many pixels are searched at half size first.
QUICK_MIN_SIDE = 720
#: Margin of the full-resolution window round the roughly found corners, in squares (the outer squares plus slack).
WINDOW_MARGIN_SQUARES = 2.0


def quick_find_chessboard(gray: np.ndarray, board: Chessboard, size: tuple[int, int] | None = None) -> np.ndarray | None:
    """The inner corners ``(K, 2)`` found on the image at half size, in full-size pixels [px] (rough), or None.

    An image whose smaller side is under :data:`QUICK_MIN_SIDE` px is searched at its own size.

    OpenCV's classic detector with its fast check (``findChessboardCorners`` with ``CALIB_CB_FAST_CHECK``; a few ms
    on a 964x604 image whether the board is there or not), then the sector detector on the same half-size image.
    ``size`` ``(cols, rows)`` searches another number of inner corners than the board's (for the hint on a wrong
    size). The positions are only good to about a pixel: they place the window of :func:`_find_in_window`.
    """
    cv2 = require_cv2()
    size = (board.cols, board.rows) if size is None else tuple(size)
    h, w = gray.shape
    scale = 2.0 if min(h, w) >= QUICK_MIN_SIDE else 1.0  # a smaller image is searched as it is
    small = cv2.resize(gray, (w // 2, h // 2), interpolation=cv2.INTER_AREA) if scale == 2.0 else gray
    flags = cv2.CALIB_CB_FAST_CHECK | cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE
    ok, corners = cv2.findChessboardCorners(small, size, flags=flags)
    if not ok:
        ok, corners = cv2.findChessboardCornersSB(small, size, flags=0)
    if not ok:
        return None
    return (corners.reshape(-1, 2).astype(np.float64) + 0.5) * scale - 0.5  # pixel centres at integers


def _find_in_window(gray: np.ndarray, board: Chessboard, rough: np.ndarray) -> np.ndarray | None:
    """The sector detector at full resolution on the window round the rough corners ``(K, 2)``; None if not found.

    The window's origin is a multiple of 16 px, so a window is the same for rough corners that differ by
    round-off. Its corners differ from a search of the whole image by 0.02 px (median; at most 0.15 px on
    the RWHE-Calib kuka_1 views, where their plane-fit RMS is 0.08 px): the sector detector's positions
    depend on the image's size and the board's place in it, even with the pixels outside the board blanked.
    """
    cv2 = require_cv2()
    step = float(np.median(np.linalg.norm(np.diff(rough, axis=0), axis=1)))  # neighbours along a row, mostly
    margin = WINDOW_MARGIN_SQUARES * step + 8.0
    h, w = gray.shape
    u0, v0 = (np.floor(rough.min(axis=0) - margin).clip(0) // 16 * 16).astype(int)
    u1, v1 = np.ceil(rough.max(axis=0) + margin).astype(int)
    u1, v1 = min(int(u1), w), min(int(v1), h)
    if u1 - u0 < 32 or v1 - v0 < 32:
        return None
    ok, corners = cv2.findChessboardCornersSB(np.ascontiguousarray(gray[v0:v1, u0:u1]), (board.cols, board.rows),
                                              flags=0)  # fmt: skip
    if not ok:
        return None
    return (corners.reshape(board.rows, board.cols, 2).astype(np.float64) + np.array([u0, v0], dtype=np.float64))


def suggest_chessboard_size(gray: np.ndarray, board: Chessboard) -> tuple[int, int] | None:
    """The inner-corner count ``(cols, rows)`` near the board's that the image shows, or None.

    Tried in this order on the half-size image (:func:`quick_find_chessboard`): one fewer each way (the squares
    were counted instead of the inner corners), one more each way, one fewer in one direction only.
    """
    c, r = board.cols, board.rows
    for size in ((c - 1, r - 1), (c + 1, r + 1), (c - 1, r), (c, r - 1)):
        if min(size) >= 2 and quick_find_chessboard(gray, board, size) is not None:
            return size
    return None


def _extended(grid: np.ndarray) -> np.ndarray:
    """The corner grid extended by one corner on every side (linear extrapolation), ``(rows + 2, cols + 2, 2)``."""
    g = np.concatenate([2 * grid[:1] - grid[1:2], grid, 2 * grid[-1:] - grid[-2:-1]], axis=0)
    return np.concatenate([2 * g[:, :1] - g[:, 1:2], g, 2 * g[:, -1:] - g[:, -2:-1]], axis=1)


def square_intensities(gray: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Mean intensity of every square ``(rows + 1, cols + 1)`` of the board, the outer ring included.

    Square ``(a, b)`` lies between corners ``(a - 1, b - 1)`` and ``(a, b)``
    of the grid; it is sampled at its centre and half-way to its four corners.
    """
    e = _extended(grid)
    c4 = np.stack([e[:-1, :-1], e[:-1, 1:], e[1:, :-1], e[1:, 1:]])  # (4, rows + 1, cols + 1, 2)
    centre = c4.mean(axis=0)
    pts = np.concatenate([centre[None], 0.5 * (centre[None] + c4)])
    return sample_bilinear(gray, pts).mean(axis=0)


def colour_score(squares: np.ndarray) -> float:
    """Fraction of neighbouring square pairs ordered as in the canonical numbering (square (0, 0) dark)."""
    a, b = np.indices(squares.shape)
    dark = (a + b) % 2 == 0
    right = [np.where(dark[:, :-1], squares[:, :-1] < squares[:, 1:], squares[:, :-1] > squares[:, 1:]),
             np.where(dark[:-1], squares[:-1] < squares[1:], squares[:-1] > squares[1:])]  # fmt: skip
    n = sum(r.size for r in right)
    return float(sum(r.sum() for r in right) / n) if n else 0.0


def grid_orientation(grid: np.ndarray) -> float:
    """Cross product (image ``v`` down) of the grid's mean row and column directions: > 0 seen from the front."""
    du = (grid[:, 1:] - grid[:, :-1]).reshape(-1, 2).mean(axis=0)
    dv = (grid[1:] - grid[:-1]).reshape(-1, 2).mean(axis=0)
    return float(du[0] * dv[1] - du[1] * dv[0])


def _numberings(grid: np.ndarray) -> list[tuple[str, np.ndarray]]:
    out = [("as found", grid), ("mirrored across its rows", grid[:, ::-1]),
           ("mirrored across its columns", grid[::-1]), ("turned by half a turn", grid[::-1, ::-1])]  # fmt: skip
    if grid.shape[0] == grid.shape[1]:
        out += [(f"{name}, transposed", g.transpose(1, 0, 2)) for name, g in out]
    return out


def _top_left(candidates: list[np.ndarray]) -> np.ndarray:
    return min(candidates, key=lambda g: float(np.hypot(*g[0, 0])))


def order_chessboard(gray: np.ndarray, grid, board: Chessboard, image: str = "image") -> tuple[np.ndarray | None, str | None]:
    """Renumber detected corners into the board's canonical order (see the module docstring).

    Parameters
    ----------
    gray : ndarray, shape (H, W)
        The grey image.
    grid : array_like, shape (rows, cols, 2) or (rows * cols, 2)
        The corners in a detector's numbering [px].
    board : Chessboard
    image : str
        Name of the image for the message.

    Returns
    -------
    (grid, reason)
        The corners ``(rows, cols, 2)`` in canonical order and None, or None and why no order fits.
    """
    g = np.asarray(grid, dtype=np.float64).reshape(board.rows, board.cols, 2)
    scored = [(name, c, grid_orientation(c), colour_score(square_intensities(gray, c))) for name, c in _numberings(g)]
    front = [s for s in scored if s[2] > 0]
    valid = [s[1] for s in front if s[3] >= COLOUR_MIN_SCORE]
    if valid:
        return (valid[0] if len(valid) == 1 else _top_left(valid)), None
    best = max(s[3] for s in front) if front else 0.0
    if front and best > 1.0 - COLOUR_MIN_SCORE:
        return None, (f"{image}: the chessboard's squares do not alternate clearly (at best {100 * best:.0f} % of "
                      f"neighbouring squares in the right brightness order, expected {100 * COLOUR_MIN_SCORE:.0f} %)")
    return None, (f"{image}: no numbering of the {board.cols}x{board.rows} corners has the printed side towards the "
                  "camera and the squares' colours right: the image is mirrored or the board is seen through its back")


def check_chessboard_order(gray: np.ndarray, grid, board: Chessboard, image: str = "image") -> str | None:
    """Why a given corner numbering is not the board's canonical one (None when it is).

    Rejects a mirrored numbering (the grid runs the wrong way round), an
    upside-down one (corner 0 not at a black corner square; on a board whose
    half turn looks the same, not the candidate nearest the image's top-left),
    and corners that do not fit a plane (:func:`kinhec.vision.checks.fit_check`).
    """
    g = np.asarray(grid, dtype=np.float64).reshape(board.rows, board.cols, 2)
    if grid_orientation(g) <= 0:
        return (f"{image}: mirrored corner order: the rows and columns of the corners run the wrong way round for "
                "the printed side of the board")
    score = colour_score(square_intensities(gray, g))
    if score < COLOUR_MIN_SCORE:
        return (f"{image}: upside-down corner order: corner 0 is not at a black corner square ({100 * score:.0f} % of "
                "neighbouring squares in the expected brightness order)")
    if board.symmetric and not np.array_equal(_top_left([g, g[::-1, ::-1]]), g):
        return (f"{image}: upside-down corner order: on a board whose half turn looks the same, corner 0 is the "
                "candidate nearest the image's top-left")
    fit = fit_check(board.points_m[:, :2], g.reshape(-1, 2), board.spacing_m)
    if fit.n_bad or not fit.clean:
        return f"{image}: {fit.n_bad} corner(s) off the board's plane fit by more than a fifth of a square"
    return None


def detect_chessboard(gray: np.ndarray, board: Chessboard, image: str = "image", *, fast: bool = False) -> Detection:
    """Find a chessboard, number its corners canonically and check them; a :class:`Detection` (``fast``: see
    :func:`find_chessboard`)."""
    size = (gray.shape[1], gray.shape[0])
    grid = find_chessboard(gray, board, fast=fast)
    if grid is None:
        return Detection.rejected(image, size, f"no {board.cols}x{board.rows} chessboard found")
    grid, reason = order_chessboard(gray, grid, board, image)
    if reason is not None:
        return Detection(image, size, reason=reason)
    uv = grid.reshape(-1, 2)
    xy = board.points_m[:, :2]
    fit = fit_check(xy, uv, board.spacing_m)
    if fit.n_bad or not fit.clean:
        worst = float(fit.residual_px.max())
        return Detection.rejected(image, size, f"{fit.n_bad or 1} chessboard corner(s) off the board's plane fit "
                                               f"(worst {worst:.2f} px, squares of {fit.spacing_px:.1f} px)")
    alternatives = ()
    refined = refine_corners(gray, uv, fit.spacing_px)
    if refined is not None:
        fit2 = fit_check(xy, refined, board.spacing_m)
        if not fit2.n_bad and fit2.clean:
            alternatives = (("cornersubpix", refined, fit2.rms_px),)
    det = Detection(image, size, np.arange(board.n_points, dtype=np.int64), uv, fit_rms_px=fit.rms_px,
                    method="sector", alternatives=alternatives)  # fmt: skip
    best = min([("sector", fit.rms_px)] + [(a[0], a[2]) for a in alternatives], key=lambda a: a[1])[0]
    return det.with_method(best)


def refine_corners(gray: np.ndarray, uv: np.ndarray, spacing_px: float) -> np.ndarray | None:
    """``cv2.cornerSubPix`` on the corners ``(K, 2)``, with a window of 0.3 of a square; None if one moves too far.

    A corner that moves by more than a quarter of a square has been drawn to
    another feature: the refined set is then not used.
    """
    cv2 = require_cv2()
    half = int(np.clip(np.floor(0.3 * spacing_px), 2, 10))
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 50, 1e-4)
    out = cv2.cornerSubPix(gray, uv.reshape(-1, 1, 2).astype(np.float32), (half, half), (-1, -1), crit)
    out = out.reshape(-1, 2).astype(np.float64)
    if not np.isfinite(out).all() or np.linalg.norm(out - uv, axis=1).max() > 0.25 * spacing_px:
        return None
    return out
