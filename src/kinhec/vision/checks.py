"""Per-view checks of a detection: do the corners fit a plane seen by a camera, and from its printed side?

Two checks, common to every target kind:

* **Fit.** The detected pixels must follow the target's points through a
  plane-to-image homography (normalised DLT, Hartley 1997) plus, from
  :data:`CUBIC_MIN_POINTS` corners on, a smooth cubic term (which takes up the
  lens distortion a homography cannot), fitted robustly (Tukey's biweight by
  iteratively reweighted least squares) so that a far-off corner cannot bend
  the fit towards itself.  A corner with the wrong id, or one found on a
  neighbouring feature or refined astray, sits a good part of a point spacing
  off.  A corner counts as bad when its residual exceeds :data:`BAD_FRACTION`
  of the local point spacing in the image (at least :data:`BAD_MIN_PX`); bad
  corners are removed one at a time, worst first, and the fit repeated.
* **Orientation.** The homography's Jacobian at the points' centroid must have
  the sign of a board seen from its printed side: positive for a target frame
  whose ``z`` points into the board (OpenCV's chessboard and ChArUco frames),
  negative for one whose ``z`` points out of it (Kalibr's AprilGrid).  A
  corner order that is the mirror image of the board's -- the board seen
  through its back, a mirrored image, or a detector's mirrored numbering --
  has the other sign.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.models.intrinsics import normalisation

__all__ = ["BAD_FRACTION", "BAD_MIN_PX", "MAX_BAD_FRACTION", "FitCheck", "fit_check", "orientation_sign"]

#: A corner whose fit residual exceeds this fraction of the local point spacing in the image is bad.
BAD_FRACTION = 0.1
#: ... and at least this many pixels.
BAD_MIN_PX = 1.0
#: A view with more bad corners than this fraction of its corners is rejected as a whole.
MAX_BAD_FRACTION = 0.2
#: Points needed before the cubic term joins the fit (it has 10 coefficients per axis).
CUBIC_MIN_POINTS = 30
#: Reweighting rounds of the robust fit, and the smallest residual scale it assumes [px].
ROBUST_ITERATIONS = 6
ROBUST_MIN_SCALE_PX = 0.1


@dataclass(frozen=True)
class FitCheck:
    """Outcome of :func:`fit_check`.

    Attributes
    ----------
    good : ndarray of bool, shape (K,)
        Corners that fit.
    residual_px : ndarray, shape (K,)
        Residual [px] of every corner in the last fit (bad corners: their residual when removed).
    rms_px : float
        RMS residual [px] of the good corners.
    spacing_px : float
        Median point spacing in the image [px].
    orientation : float
        ``+1`` or ``-1``: sign of the homography's Jacobian determinant at the
        centroid (image ``v`` down).
    H : ndarray, shape (3, 3)
        Homography from the target plane (``x, y`` [m]) to the pixels, on the good corners.
    clean : bool
        Every good corner is within its threshold (False when the removal stopped at its limit).
    """

    good: np.ndarray
    residual_px: np.ndarray
    rms_px: float
    spacing_px: float
    orientation: float
    H: np.ndarray
    clean: bool

    @property
    def n_bad(self) -> int:
        return int((~self.good).sum())


def _homography(xy: np.ndarray, uv: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """Weighted normalised DLT (Hartley): ``uv ~ H [x, y, 1]``, ``H[2, 2] = 1``."""
    Ts, Td = normalisation(xy), normalisation(uv)
    a = xy @ Ts[:2, :2].T + Ts[:2, 2]
    b = uv @ Td[:2, :2].T + Td[:2, 2]
    one, zero = np.ones(len(a)), np.zeros((len(a), 3))
    A1 = np.column_stack([a, one])
    M = np.concatenate([np.hstack([A1, zero, -b[:, :1] * A1]), np.hstack([zero, A1, -b[:, 1:] * A1])])
    if w is not None:
        M = M * np.sqrt(np.concatenate([w, w]))[:, None]
    Hn = np.linalg.svd(M, full_matrices=M.shape[0] < 9)[2][-1].reshape(3, 3)
    H = np.linalg.solve(Td, Hn @ Ts)
    return H / H[2, 2]


def _apply(H: np.ndarray, xy: np.ndarray) -> np.ndarray:
    h = xy @ H[:, :2].T + H[:, 2]
    return h[:, :2] / h[:, 2:3]


def _jacobian_det(H: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """``det(d(u, v) / d(x, y))`` of the homography at points ``xy`` (K, 2)."""
    h = xy @ H[:, :2].T + H[:, 2]
    w = h[:, 2]
    uv = h[:, :2] / w[:, None]
    J = (H[None, :2, :2] - uv[:, :, None] * H[None, 2:3, :2]) / w[:, None, None]
    return np.linalg.det(J)


def orientation_sign(H, xy) -> float:
    """Sign (``+1.0`` / ``-1.0``) of the homography's Jacobian determinant at the centroid of ``xy`` (K, 2)."""
    c = np.asarray(xy, dtype=float).mean(axis=0, keepdims=True)
    return float(np.sign(_jacobian_det(np.asarray(H, dtype=float), c)[0]))


def _cubic_basis(xy: np.ndarray, centre: np.ndarray, scale: float) -> np.ndarray:
    x, y = ((xy - centre) / scale).T
    return np.column_stack([np.ones_like(x), x, y, x * x, x * y, y * y, x**3, x * x * y, x * y * y, y**3])


def _fit(xy, uv, w=None):
    H = _homography(xy, uv, w)
    pred = _apply(H, xy)
    if len(xy) >= CUBIC_MIN_POINTS:
        c, s = xy.mean(axis=0), max(float(np.ptp(xy, axis=0).max()), 1e-12)
        B = _cubic_basis(xy, c, s)
        sw = np.ones(len(xy)) if w is None else np.sqrt(w)
        coef, *_ = np.linalg.lstsq(B * sw[:, None], (uv - pred) * sw[:, None], rcond=None)
        pred = pred + B @ coef
    return H, np.linalg.norm(uv - pred, axis=1)


def _robust_fit(xy, uv):
    """Homography and residuals of a fit with Tukey's biweight (IRLS): a far-off corner cannot bend it towards itself."""
    w = np.ones(len(xy))
    for _ in range(ROBUST_ITERATIONS):
        H, r = _fit(xy, uv, w)
        scale = max(1.4826 * float(np.median(r)), ROBUST_MIN_SCALE_PX)
        u = r / (4.685 * scale)
        w = np.where(u < 1.0, (1.0 - u * u) ** 2, 0.0)
        if w.sum() < 4:
            break
    return H, r


def fit_check(points_xy, uv, spacing_m: float, *, max_remove: int | None = None) -> FitCheck:
    """Fit the detected pixels to the target plane and flag the corners that do not fit (see the module docstring).

    Parameters
    ----------
    points_xy : array_like, shape (K, 2)
        Target coordinates ``(x, y)`` [m] of the detected corners (``K >= 4``).
    uv : array_like, shape (K, 2)
        Their pixels [px].
    spacing_m : float
        Typical distance [m] between neighbouring points of the target.
    max_remove : int, optional
        Stop removing after this many corners (default: :data:`MAX_BAD_FRACTION` of ``K``, plus one).

    Returns
    -------
    FitCheck
    """
    xy = np.asarray(points_xy, dtype=float)
    uv = np.asarray(uv, dtype=float)
    k = len(xy)
    limit = int(MAX_BAD_FRACTION * k) + 1 if max_remove is None else int(max_remove)
    good = np.ones(k, dtype=bool)
    residual = np.zeros(k)
    while True:
        H, r = _robust_fit(xy[good], uv[good])
        residual[good] = r
        local = np.sqrt(np.abs(_jacobian_det(H, xy[good]))) * spacing_m
        thr = np.maximum(BAD_FRACTION * local, BAD_MIN_PX)
        worst = int(np.argmax(r / thr))
        clean = bool(r[worst] <= thr[worst])
        if clean or good.sum() - 1 < 4 or (~good).sum() >= limit:
            break
        good[np.flatnonzero(good)[worst]] = False
    H, r = _fit(xy[good], uv[good])
    spacing_px = float(np.median(np.sqrt(np.abs(_jacobian_det(H, xy[good])))) * spacing_m)
    rms = float(np.sqrt(np.mean(r**2)))
    return FitCheck(good, residual, rms, spacing_px, orientation_sign(H, xy[good]), H, clean)
