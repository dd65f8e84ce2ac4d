"""Images of a generated sequence: the target drawn through the camera, with blur, noise and uneven light.

:func:`render_sequence` writes, for one synchronous sequence whose camera
looks at a target, one grey PNG per camera frame, the hand file that
``kinhec calibrate --images`` reads, the truth and the exact corners::

    OUT/images/0000.png ...   one per camera frame (the target may be out of view in some)
    OUT/hand_poses.txt        T_base_ee of each frame as measured, a row-major 4x4 per line [m]
    OUT/truth.json            target, intrinsics, X and Y in the target's frame, every view's true pose
    OUT/exact_corners.json    the observation file of the exact projected corners (noise-free)
    OUT/camera.yaml           with another camera than the sequence's (``intrinsics``): its intrinsics file

Image formation
---------------
Every pixel is split into ``s x s`` samples (``supersample``) at the centres
of its sub-squares (pixel centres at integer coordinates, OpenCV's
convention).  Each sample's pixel is undistorted (the inverse of
:func:`kinhec.models.intrinsics.project`'s Brown-Conrady model, by fixed-point
iteration; for a fisheye's eight intrinsics, :func:`kinhec.models.intrinsics.unproject_points`)
into a ray, the ray is intersected with the target's plane
(the inverse of the plane-to-image homography ``[r1 r2 t]``), and the
printed pattern is evaluated exactly there: ink, paper or the background
beyond the paper.  The mean over the samples is the pixel's reflectance
(anti-aliasing by supersampling; every edge is exact to ``1 / s`` of a
pixel).  Then, per view, with a generator seeded from
``(seed, view index)``:

* **uneven lighting**: a linear gradient of relative amplitude up to
  ``lighting`` in a random direction, times a vignette ``1 - lighting r^2 / 2``;
  paper and ink reflectances drawn around 0.85 and 0.06; a smooth random
  background;
* **defocus blur**: a Gaussian of standard deviation ``blur_px`` times a
  factor drawn in ``[0.75, 1.25]``;
* **motion blur** (optional): a line of ``motion_blur_px`` times ``[0.5, 1]``
  pixels in a random direction;
* **sensor noise**: Gaussian with the variance of shot plus read noise,
  ``noise_dn^2 (0.3 + 0.7 I / 128)`` (``noise_dn`` grey levels at mid grey),
  then rounding to 8 bits.

The whole image is computed with whole-array numpy and OpenCV operations, in
bands of rows (no per-pixel Python loop).  The seed defaults to the
sequence's own (which comes from the dataset's global seed and the sequence
id), so the same sequence renders to the same bytes everywhere.  An
interrupted run is resumed: images already written with the same settings
are kept.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np

from kinhec import __version__
from kinhec.geometry import se3
from kinhec.util.errors import InputError
from kinhec.util.fsutil import atomic_write, atomic_write_text
from kinhec.models.intrinsics import intrinsic_names, model_of, project, unproject_points
from kinhec.models.intrinsics_files import IntrinsicsFile
from kinhec.models.intrinsics_writers import write_intrinsics
from kinhec.synth.observations import ObservationSet, observations_to_json, pose_json, write_document
from kinhec.vision._cv import require_cv2
from kinhec.vision.targets import AprilGrid, Charuco, Chessboard, Target, parse_target, target_for_preset
from kinhec.vision.markers import charuco_board
from kinhec.vision.markers import dictionary as get_dictionary
from kinhec.models.cameras import get_camera

__all__ = ["RenderSettings", "RenderedSequence", "render_view", "render_sequence", "exact_corners",
           "reflectance", "undistort_normalised", "VIEW_MARGIN_PX", "HAND_FILE", "TRUTH_FILE", "EXACT_FILE", "CAMERA_FILE"]  # fmt: skip

#: A projected corner counts as in the image when it keeps this margin [px] from every border.
VIEW_MARGIN_PX = 5.0
HAND_FILE = "hand_poses.txt"
TRUTH_FILE = "truth.json"
EXACT_FILE = "exact_corners.json"
CAMERA_FILE = "camera.yaml"
_RENDER_STREAM = 0x52454E44  # "REND": the render's own stream of the sequence seed
_BAND_SAMPLES = 1 << 20  # samples evaluated at once
_MISSED_M = 1e6  # where a sample's ray that misses the target's plane (or has no ray) lands on it [m]


@dataclass(frozen=True)
class RenderSettings:
    """How the images are degraded (see the module docstring).

    Attributes
    ----------
    blur_px : float
        Standard deviation [px] of the defocus blur (scaled per view by a factor in ``[0.75, 1.25]``).
    noise_dn : float
        Sensor noise [grey levels] at mid grey.
    lighting : float
        Relative amplitude of the uneven lighting (0: uniform).
    motion_blur_px : float
        Length [px] of the motion-blur streak (scaled per view by ``[0.5, 1]``); 0 for none.
    supersample : int
        Samples per pixel along each axis.
    distortion : tuple of 5 float
        The lens's ``(k1, k2, p1, p2, k3)`` (OpenCV's order); zeros for the sequence's ideal pinhole.
    """

    blur_px: float = 0.7
    noise_dn: float = 2.0
    lighting: float = 0.3
    motion_blur_px: float = 0.0
    supersample: int = 4
    distortion: tuple = (0.0, 0.0, 0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        for name in ("blur_px", "noise_dn", "lighting", "motion_blur_px"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
                raise InputError(f"{name}: expected a number >= 0, got {v!r}")
        if self.lighting > 0.9:
            raise InputError(f"lighting: expected a relative amplitude below 0.9, got {self.lighting!r}")
        if not (isinstance(self.supersample, (int, np.integer)) and 1 <= self.supersample <= 16):
            raise InputError(f"supersample: expected an integer in [1, 16], got {self.supersample!r}")
        d = tuple(float(v) for v in self.distortion)
        if len(d) != 5 or not np.isfinite(d).all():
            raise InputError(f"distortion: expected 5 finite numbers k1, k2, p1, p2, k3, got {self.distortion!r}")
        object.__setattr__(self, "distortion", d)


# --------------------------------------------------------------------------- #
# the printed patterns
# --------------------------------------------------------------------------- #
@lru_cache(maxsize=None)
def _marker_modules(dictionary: str, ids: tuple, border_bits: int) -> np.ndarray:
    """``(len(ids), n, n)`` module images (1 = white) of markers ``ids``, rows from the top, OpenCV's orientation."""
    cv2 = require_cv2("image rendering")

    d = get_dictionary(dictionary)
    n = d.markerSize + 2 * border_bits
    return np.stack([cv2.aruco.generateImageMarker(d, int(i), n, borderBits=border_bits) > 127 for i in ids]).astype(np.float32)


@lru_cache(maxsize=None)
def _charuco_layout(target: Charuco):
    """Per square ``(sy, sx)``: white (holds a marker or not), the marker's index; and the module images."""

    board = charuco_board(target)
    s = target.square_m
    obj = np.asarray(board.getObjPoints(), dtype=np.float64)  # (M, 4, 3): TL, TR, BR, BL in the board frame
    ids = tuple(int(i) for i in np.asarray(board.getIds()).ravel())
    white = np.zeros((target.squares_y, target.squares_x), dtype=bool)
    marker = np.full(white.shape, -1, dtype=np.int64)
    centre = obj[:, :, :2].mean(axis=1)
    col = np.floor(centre[:, 0] / s).astype(int)
    row = np.floor(centre[:, 1] / s).astype(int)
    white[row, col] = True
    marker[row, col] = np.arange(len(ids))
    return white, marker, _marker_modules(target.dictionary, ids, 1)


def _lookup(modules: np.ndarray, which: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    n = modules.shape[1]
    return modules[which, np.clip(r, 0, n - 1), np.clip(c, 0, n - 1)]


def reflectance(target: Target, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The printed pattern at target-frame points ``(x, y)`` [m].

    Returns
    -------
    (white, on_paper)
        ``white``: 1 on paper, 0 on ink (float32, same shape as ``x``);
        ``on_paper``: the point lies on the board (the pattern and its margin).
    """
    x0, y0, x1, y1 = target.pattern_bounds_m
    m = target.margin_m
    on_paper = (x >= x0 - m) & (x < x1 + m) & (y >= y0 - m) & (y < y1 + m)
    white = np.ones(x.shape, dtype=np.float32)
    if isinstance(target, Chessboard):
        s = target.square_m
        a, b = np.floor(x / s), np.floor(y / s)
        inside = (x >= x0) & (x < x1) & (y >= y0) & (y < y1)
        white[inside & ((a + b) % 2 == 0)] = 0.0
    elif isinstance(target, Charuco):
        is_white, marker, modules = _charuco_layout(target)
        s, mk = target.square_m, target.marker_m
        inside = (x >= x0) & (x < x1) & (y >= y0) & (y < y1)
        a = np.clip(np.floor(x / s).astype(np.int64), 0, target.squares_x - 1)
        b = np.clip(np.floor(y / s).astype(np.int64), 0, target.squares_y - 1)
        white[inside & ~is_white[b, a]] = 0.0
        k = np.where(inside, marker[b, a], -1)
        o = 0.5 * (s - mk)
        lx, ly = x - a * s - o, y - b * s - o
        in_marker = (k >= 0) & (lx >= 0) & (lx < mk) & (ly >= 0) & (ly < mk)
        n = modules.shape[1]
        white[in_marker] = _lookup(modules, k[in_marker], np.floor(ly[in_marker] / mk * n).astype(np.int64),
                                   np.floor(lx[in_marker] / mk * n).astype(np.int64))  # fmt: skip
    elif isinstance(target, AprilGrid):
        P, S, g = target.pitch_m, target.tag_m, target.spacing * target.tag_m
        c, r = np.floor(x / P).astype(np.int64), np.floor(y / P).astype(np.int64)
        lx, ly = x - c * P, y - r * P
        in_tag = (c >= 0) & (c < target.cols) & (r >= 0) & (r < target.rows) & (lx < S) & (ly < S)
        modules = _marker_modules(target.dictionary, tuple(range(target.cols * target.rows)), target.border_bits)
        n = modules.shape[1]
        tag = (r * target.cols + c)[in_tag]
        # a Kalibr tag is OpenCV's marker image turned by half a turn (module rows counted from the bottom here)
        white[in_tag] = _lookup(modules, tag, np.floor(ly[in_tag] / S * n).astype(np.int64),
                                n - 1 - np.floor(lx[in_tag] / S * n).astype(np.int64))  # fmt: skip
        i, j = np.floor((x + g) / P), np.floor((y + g) / P)
        corner = ((x + g - i * P) < g) & ((y + g - j * P) < g) & (i >= 0) & (i <= target.cols) & (j >= 0) & (j <= target.rows)
        white[corner] = 0.0
    else:
        raise InputError(f"target: expected a chessboard, charuco or aprilgrid target, got {type(target).__name__}")
    return white, on_paper


# --------------------------------------------------------------------------- #
# one view
# --------------------------------------------------------------------------- #
def undistort_normalised(xd: np.ndarray, yd: np.ndarray, d, iterations: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """Normalised coordinates whose Brown-Conrady distortion with ``d = (k1, k2, p1, p2, k3)`` is ``(xd, yd)``."""
    k1, k2, p1, p2, k3 = (float(v) for v in d)
    if not any((k1, k2, p1, p2, k3)):
        return xd, yd
    x, y = xd.copy(), yd.copy()
    for _ in range(iterations):
        r2 = x * x + y * y
        radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3))
        dx = 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x)
        dy = p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y
        x = (xd - dx) / radial
        y = (yd - dy) / radial
    return x, y


def _on_the_lens(K: np.ndarray, uv: np.ndarray, p_cam: np.ndarray) -> np.ndarray:
    """Whether each pixel ``uv`` of camera-frame points ``p_cam`` of a rational lens (twelve intrinsics) is where
    their ray lands: the rational model's radial map turns back beyond some angle, and a point further out projects
    back into the field (a pixel whose inverse is another ray)."""
    ray = unproject_points(K, uv)
    d = p_cam / np.linalg.norm(p_cam, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        return (p_cam[..., 2] > 0) & (np.sum(ray * d, axis=-1) > 1.0 - 1e-9)


def _footprint(target: Target, K9: np.ndarray, size, T: np.ndarray) -> tuple[int, int, int, int]:
    """Pixel rectangle ``(u0, v0, u1, v1)`` (end exclusive) that holds the board's paper, or the whole image."""
    w, h = size
    x0, y0, x1, y1 = target.pattern_bounds_m
    m = target.margin_m
    t = np.linspace(0.0, 1.0, 33)
    xs = np.concatenate([x0 - m + (x1 - x0 + 2 * m) * t, np.full(33, x1 + m), x1 + m - (x1 - x0 + 2 * m) * t, np.full(33, x0 - m)])
    ys = np.concatenate([np.full(33, y0 - m), y0 - m + (y1 - y0 + 2 * m) * t, np.full(33, y1 + m), y1 + m - (y1 - y0 + 2 * m) * t])
    pts = np.column_stack([xs, ys, np.zeros_like(xs)])
    depth = pts @ T[2, :3] + T[2, 3]
    if not (depth > 1e-6).all():
        return 0, 0, w, h
    uv = project(K9, T[None], pts)[0]
    if not np.isfinite(uv).all():
        return 0, 0, w, h
    if K9.size == 12 and not _on_the_lens(K9, uv, pts @ T[:3, :3].T + T[:3, 3]).all():
        return 0, 0, w, h  # the board reaches beyond the rational lens's field: its outline's pixels are no bound
    u0, v0 = np.floor(uv.min(axis=0)).astype(int) - 2
    u1, v1 = np.ceil(uv.max(axis=0)).astype(int) + 3
    return max(0, u0), max(0, v0), min(w, max(0, u1)), min(h, max(0, v1))


def _reflectance_image(target: Target, K9: np.ndarray, size, T_cam_target: np.ndarray, s: int,
                       distortion) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Mean paper fraction and mean board coverage per pixel, each ``(H, W)`` float32."""
    w, h = size
    white_img = np.zeros((h, w), dtype=np.float32)
    cover_img = np.zeros((h, w), dtype=np.float32)
    K = np.concatenate([K9[:4], np.asarray(distortion, dtype=np.float64)])
    u0, v0, u1, v1 = _footprint(target, K, size, T_cam_target)
    if u1 <= u0 or v1 <= v0:
        return white_img, cover_img
    Hinv = np.linalg.inv(T_cam_target[:3, [0, 1, 3]]).astype(np.float32)
    # the board's printed side faces the camera when the camera centre lies on its front half-space
    cam_in_target = se3.invert_transform(T_cam_target, check=False)[:3, 3]
    front = (cam_in_target[2] > 0) == target.z_towards_viewer
    offs = ((np.arange(s) + 0.5) / s - 0.5).astype(np.float32)
    fx, fy, cx, cy = (np.float32(v) for v in K9[:4])
    by_ray = K.size in (8, 12)  # a fisheye, or the rational model: each sample's ray by the model's own inverse
    us = (np.arange(u0, u1, dtype=np.float32)[:, None] + offs[None, :]).ravel()
    xn = ((us - cx) / fx)[None, :]
    wb_ = u1 - u0
    rows = max(1, _BAND_SAMPLES // (wb_ * s * s))
    for r0 in range(v0, v1, rows):
        r1 = min(v1, r0 + rows)
        vs = (np.arange(r0, r1, dtype=np.float32)[:, None] + offs[None, :]).ravel()
        yn = ((vs - cy) / fy)[:, None]
        xd, yd = np.broadcast_to(xn, (yn.shape[0], xn.shape[1])), np.broadcast_to(yn, (yn.shape[0], xn.shape[1]))
        if by_ray:  # the sample's ray (x, y, z): a fisheye's may point beyond 90 deg off the axis, a rational
            # lens's is NaN beyond its field
            uv = np.stack(np.broadcast_arrays(us[None, :], vs[:, None]), axis=-1).astype(np.float64)
            ray = unproject_points(K, uv).astype(np.float32)
            xu, yu, zu = ray[..., 0], ray[..., 1], ray[..., 2]
        else:
            xu, yu = undistort_normalised(xd, yd, distortion)
            zu = np.float32(1.0)
        q0 = Hinv[0, 0] * xu + Hinv[0, 1] * yu + Hinv[0, 2] * zu
        q1 = Hinv[1, 0] * xu + Hinv[1, 1] * yu + Hinv[1, 2] * zu
        q2 = Hinv[2, 0] * xu + Hinv[2, 1] * yu + Hinv[2, 2] * zu
        ahead = q2 > 0  # the ray meets the plane in front of the camera
        with np.errstate(divide="ignore", invalid="ignore"):
            # a ray that misses the plane lands far off the board (finite: the patterns' integer arithmetic stays
            # defined)
            X, Y = np.where(ahead, q0 / q2, _MISSED_M), np.where(ahead, q1 / q2, _MISSED_M)
        white, on = reflectance(target, X, Y)
        on &= ahead
        if not front:
            white = np.full_like(white, 0.8)  # the back of the board: plain
        white_img[r0:r1, u0:u1] = np.where(on, white, 0.0).reshape(r1 - r0, s, wb_, s).mean(axis=(1, 3))
        cover_img[r0:r1, u0:u1] = on.astype(np.float32).reshape(r1 - r0, s, wb_, s).mean(axis=(1, 3))
    return white_img, cover_img


def _motion_kernel(length: float, angle: float) -> np.ndarray:
    n = int(np.ceil(length)) | 1
    n = max(n, 3)
    t = np.linspace(-0.5, 0.5, 8 * n) * length
    k = np.zeros((n, n), dtype=np.float32)
    c = (n - 1) / 2
    xs, ys = c + t * np.cos(angle), c + t * np.sin(angle)
    x0, y0 = np.floor(xs).astype(int), np.floor(ys).astype(int)
    ax, ay = xs - x0, ys - y0
    for dx, dy, wgt in ((0, 0, (1 - ax) * (1 - ay)), (1, 0, ax * (1 - ay)), (0, 1, (1 - ax) * ay), (1, 1, ax * ay)):
        np.add.at(k, (np.clip(y0 + dy, 0, n - 1), np.clip(x0 + dx, 0, n - 1)), wgt)
    return k / k.sum()


def render_view(target, intrinsics, image_size, T_cam_target, rng: np.random.Generator,
                settings: RenderSettings = RenderSettings()) -> np.ndarray:  # fmt: skip
    """One grey image of ``target`` seen from ``T_cam_target`` (see the module docstring).

    Parameters
    ----------
    target : Target or str
    intrinsics : array_like, shape (4,), (9,), (8,) or (12,)
        ``(fx, fy, cx, cy[, k1, k2, p1, p2, k3])`` [px]; a given distortion replaces ``settings.distortion``.
        Eight numbers are a fisheye's ``(fx, fy, cx, cy, k1, k2, k3, k4)``, twelve OpenCV's rational model's
        ``(fx, fy, cx, cy, k1, k2, p1, p2, k3, k4, k5, k6)`` (:mod:`kinhec.models.intrinsics`).
    image_size : (int, int)
        ``(width, height)`` [px].
    T_cam_target : array_like, shape (4, 4)
        Pose of the target's frame (:mod:`kinhec.vision.targets`) in the camera frame [m].
    rng : numpy.random.Generator
        The view's own generator (lighting, blur, noise).
    settings : RenderSettings

    Returns
    -------
    ndarray of uint8, shape (height, width)
    """
    cv2 = require_cv2("image rendering")
    t = parse_target(target)
    k = np.asarray(intrinsics, dtype=np.float64).ravel()
    if k.shape not in ((4,), (9,), (8,), (12,)) or not np.isfinite(k).all() or k[0] <= 0 or k[1] <= 0:
        raise InputError(f"intrinsics: expected fx, fy, cx, cy[, k1, k2, p1, p2, k3[, k4, k5, k6]] (or a fisheye's fx, "
                         f"fy, cx, cy, k1, k2, k3, k4) with fx, fy > 0, got {k!r}")  # fmt: skip
    dist = tuple(k[4:]) if k.size > 4 else settings.distortion
    w, h = int(image_size[0]), int(image_size[1])
    T = se3.check_transforms(T_cam_target, "T_cam_target")
    white, cover = _reflectance_image(t, k, (w, h), T, settings.supersample, dist)
    # photometry: paper and ink reflectances, a smooth background, light with a gradient and a vignette
    paper, ink = rng.uniform(0.80, 0.90), rng.uniform(0.03, 0.09)
    bg_small = rng.uniform(0.15, 0.55, size=(6, 8)).astype(np.float32)
    background = cv2.resize(bg_small, (w, h), interpolation=cv2.INTER_CUBIC)
    board = ink + (paper - ink) * white / np.maximum(cover, 1e-6)
    refl = cover * board + (1.0 - cover) * background
    u = (np.arange(w, dtype=np.float32) - 0.5 * w) / (0.5 * w)
    v = (np.arange(h, dtype=np.float32) - 0.5 * h) / (0.5 * h)
    ang = rng.uniform(0.0, 2.0 * np.pi)
    amp = settings.lighting * rng.uniform(0.5, 1.0)
    light = 1.0 + amp * (np.cos(ang) * u[None, :] + np.sin(ang) * v[:, None])
    light *= 1.0 - 0.5 * settings.lighting * (u[None, :] ** 2 + v[:, None] ** 2) / 2.0
    exposure = rng.uniform(0.85, 1.0) * 255.0 / (paper * (1.0 + settings.lighting))
    img = (refl * light * exposure).astype(np.float32)
    sigma = settings.blur_px * rng.uniform(0.75, 1.25)
    if sigma > 0.05:
        img = cv2.GaussianBlur(img, (0, 0), sigmaX=sigma, sigmaY=sigma, borderType=cv2.BORDER_REFLECT)
    if settings.motion_blur_px > 0:
        length = settings.motion_blur_px * rng.uniform(0.5, 1.0)
        img = cv2.filter2D(img, -1, _motion_kernel(length, rng.uniform(0.0, np.pi)), borderType=cv2.BORDER_REFLECT)
    if settings.noise_dn > 0:
        std = settings.noise_dn * np.sqrt(0.3 + 0.7 * np.clip(img, 0.0, None) / 128.0)
        img = img + std * rng.standard_normal(img.shape, dtype=np.float32)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


# --------------------------------------------------------------------------- #
# a whole sequence
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class RenderedSequence:
    """What :func:`render_sequence` wrote.

    Attributes
    ----------
    out : Path
    images : list of Path
        One per camera frame, in frame order (their sorted order).
    hand : Path
        The hand poses, one row-major 4x4 ``T_base_ee`` [m] per line, row k for image k.
    truth : Path
    exact : Path or None
        The observation file of the exact corners (None when fewer than 3 views see the target).
    target : Target
    configuration : str
    X, Y : ndarray, shape (4, 4)
        Truth in the rendered target's frame (``T_ee_cam``/``T_base_target`` or ``T_ee_marker``/``T_base_cam``).
    intrinsics : ndarray, shape (9,), (8,) or (12,)
    n_written : int
        Images rendered by this call (the others were there already).
    camera_file : Path or None
        The given camera's intrinsics file (:data:`CAMERA_FILE`), None for the sequence's own camera.
    """

    out: Path
    images: list
    hand: Path
    truth: Path
    exact: Path | None
    target: Target
    configuration: str
    X: np.ndarray
    Y: np.ndarray
    intrinsics: np.ndarray
    n_written: int = 0
    camera_file: Path | None = None

    def calibrate_command(self) -> str:
        """The ``kinhec calibrate`` command line that calibrates from these images (a given camera's intrinsics
        from its file; ``--lens fisheye`` or ``--lens rational`` in their place estimates the lens from the images)."""
        return (f"kinhec calibrate --images {self.out / 'images'} --hand {self.hand} --target {self.target.spec} "
                f"--setup {self.configuration}"
                + (f" --intrinsics {self.camera_file}" if self.camera_file is not None else ""))


def exact_corners(target: Target, intrinsics, image_size, T_cam_target) -> tuple[list, list, np.ndarray]:
    """The exact projected corners of every view, as a detector that misses nothing would report them.

    A corner counts when it lies in front of the camera and inside the image
    with :data:`VIEW_MARGIN_PX`; a view counts when the board's printed side
    faces the camera and it has :attr:`Target.min_points` such corners
    spanning two rows and two columns (all of them for a chessboard).

    Returns
    -------
    (ids, uv, used)
        Per used view the corner ids and their pixels ``(K, 2)``; ``used`` the boolean mask of views ``(N,)``.
    """
    T = np.asarray(T_cam_target, dtype=np.float64)
    pts = target.points_m
    k = np.asarray(intrinsics, dtype=np.float64)
    uv = project(k, T, pts)
    p_cam = np.einsum("nij,pj->npi", T[:, :3, :3], pts) + T[:, None, :3, 3]
    w, h = image_size
    m = VIEW_MARGIN_PX
    inside = (p_cam[..., 2] > 0) & (uv[..., 0] >= m - 0.5) & (uv[..., 0] <= w - 0.5 - m)
    inside &= (uv[..., 1] >= m - 0.5) & (uv[..., 1] <= h - 0.5 - m)
    if k.size == 12:
        inside &= _on_the_lens(k, uv, p_cam)
    cam_in_target = se3.invert_transform(T, check=False)[:, :3, 3]
    front = (cam_in_target[:, 2] > 0) == target.z_towards_viewer
    ids_out, uv_out, used = [], [], np.zeros(len(T), dtype=bool)
    for i in range(len(T)):  # per view: the kept corners differ in number
        sel = np.flatnonzero(inside[i])
        xy = pts[sel, :2]
        spread = min(np.unique(xy[:, 0]).size, np.unique(xy[:, 1]).size) if sel.size else 0
        if front[i] and sel.size >= target.min_points and spread >= 2:
            used[i] = True
            ids_out.append(sel)
            uv_out.append(uv[i, sel])
    return ids_out, uv_out, used


def _source(source):
    """``(sequence_id, configuration, camera, target, seed, T_cam_target_gt, T_base_ee_meas, X, Y)`` of a sequence."""
    from kinhec.io.sequence import Sequence

    if not isinstance(source, Sequence):
        from kinhec.synth.generator import generate_sequence

        st = generate_sequence(source)
        source = Sequence.from_tables(st.index_row, st.robot, st.camera)
    seq = source
    sid = seq.sequence_id
    if str(seq.info.get("world_frame", "target")) != "target":
        raise InputError(f"sequence {sid}: expected a camera that sees a target (world_frame target), got "
                         f"{seq.info.get('world_frame')!r}: there is nothing to draw")
    if not seq.is_synchronous or len(seq.robot) != len(seq.camera):
        raise InputError(f"sequence {sid}: expected a synchronous sequence (one robot pose per camera frame), got "
                         f"{len(seq.robot)} robot and {len(seq.camera)} camera frames ({seq.info.get('sync')})")
    return (sid, seq.configuration, str(seq.info["camera"]), str(seq.info["target"]), int(seq.info["seed"]),
            np.asarray(seq.camera.T_cam_target_gt), np.asarray(seq.robot.T_base_ee_meas), seq.X, seq.Y)  # fmt: skip


def _hand_text(T: np.ndarray, sid: str) -> str:
    head = (f"# {sid}: T_base_ee as measured at each camera frame, a row-major 4x4 per line [m]; the k-th pose "
            "goes with the k-th image\n")
    return head + "".join(" ".join(f"{v:.12g}" for v in row) + "\n" for row in T.reshape(-1, 16))


def render_sequence(source, out, *, target=None, settings: RenderSettings = RenderSettings(), seed: int | None = None,
                    progress: Callable[[int, int], None] | None = None, intrinsics=None,
                    image_size=None) -> RenderedSequence:  # fmt: skip
    """Render every camera frame of a synchronous generated sequence, with the hand file and the truth.

    Parameters
    ----------
    source : kinhec.io.Sequence or recipe
        A loaded sequence (:func:`kinhec.io.load_sequence`), or a recipe (dict or
        :class:`~kinhec.synth.recipe.Recipe`) generated on the fly.
    out : str or Path
        Output folder (created); see the module docstring for its files.
    target : Target or str, optional
        The printed target to draw (default: the one standing for the sequence's
        target preset, :func:`kinhec.vision.targets.target_for_preset`).  Another
        target is centred where the preset's points are (:attr:`Target.T_centred_target`).
    settings : RenderSettings
    seed : int, optional
        Seed of the degradations (default: the sequence's seed).
    progress : callable, optional
        ``progress(done, total)`` after each image.
    intrinsics : array_like, shape (9,), (8,) or (12,), optional
        Another camera in the sequence camera's place, with ``image_size`` ``(width, height)`` [px]: a pinhole, a
        fisheye or OpenCV's rational model (:mod:`kinhec.models.intrinsics`; ``settings.distortion`` is then not
        used).  It sees the target from the sequence's poses, and is written to ``OUT/camera.yaml``
        (:data:`CAMERA_FILE`, OpenCV's form) for ``kinhec calibrate --images --intrinsics``; the exact corners'
        file states its model.

    Returns
    -------
    RenderedSequence

    Raises
    ------
    InputError
        An asynchronous sequence, one without a target, a folder rendered with other settings.
    """
    cv2 = require_cv2("image rendering")
    sid, conf, cam_name, preset, seq_seed, T_ct, T_be, X, Y = _source(source)

    t = parse_target(target) if target is not None else target_for_preset(preset)
    if intrinsics is None:
        cam = get_camera(cam_name)
        size = (int(cam.width_px), int(cam.height_px))
        K9 = np.array([cam.f_px, cam.f_px, cam.cx_px, cam.cy_px, *settings.distortion])
    else:
        K9 = np.asarray(intrinsics, dtype=np.float64).ravel()
        model_of(K9)
        if image_size is None:
            raise InputError("image_size: expected the size of the given camera's images (width, height), got none")
        size = (int(image_size[0]), int(image_size[1]))
        cam_name = f"{cam_name} replaced by the given {model_of(K9)} camera"
    T_ct_t = T_ct @ t.T_centred_target  # the rendered target's frame in the camera
    if conf == "eye_in_hand":
        X_t, Y_t, names = X, Y @ t.T_centred_target, ("T_ee_cam", "T_base_target")
    else:
        X_t, Y_t, names = X @ t.T_centred_target, Y, ("T_ee_marker", "T_base_cam")
    seed = seq_seed if seed is None else int(seed)
    out = Path(out)
    img_dir = out / "images"
    img_dir.mkdir(parents=True, exist_ok=True)
    n = T_ct.shape[0]
    width = max(4, len(str(n - 1)))
    images = [img_dir / f"{i:0{width}d}.png" for i in range(n)]
    signature = json.loads(json.dumps({"sequence_id": sid, "target": t.spec, "settings": asdict(settings),
                                       "seed": seed, "kinhec_version": __version__}))  # fmt: skip
    if intrinsics is not None:  # images of another camera are other images
        signature["camera_intrinsics"] = [float(v) for v in K9]
        signature["camera_image_size"] = list(size)
    truth_path = out / TRUTH_FILE
    if truth_path.exists():
        try:
            old = json.loads(truth_path.read_text())
        except json.JSONDecodeError:
            old = {}
        if {k: old.get(k) for k in signature} != signature:
            if any(p.exists() for p in images):
                raise InputError(f"{out}: holds images rendered with other settings ({truth_path}); choose another "
                                 "folder or remove it")
    ok = np.isfinite(T_ct).all(axis=(1, 2))
    truth = dict(signature, configuration=conf, camera=cam_name, target_preset=preset, image_size=list(size),
                 intrinsics=dict(zip(intrinsic_names(K9), (float(v) for v in K9))),
                 **({} if intrinsics is None else {"distortion_model": model_of(K9)}),
                 X_name=names[0], Y_name=names[1], X=X_t.tolist(), Y=Y_t.tolist(),
                 poses={"X": pose_json(X_t), "Y": pose_json(Y_t)},
                 T_centred_target=t.T_centred_target.tolist(),
                 views=[{"image": p.name, "T_cam_target": pose_json(T_ct_t[i]) if ok[i] else None}
                        for i, p in enumerate(images)])  # fmt: skip
    atomic_write_text(truth_path, json.dumps(truth, indent=1) + "\n")
    hand = atomic_write_text(out / HAND_FILE, _hand_text(T_be, sid))
    idx_ok = np.flatnonzero(ok)
    ids, uv, used_ok = exact_corners(t, K9, size, T_ct_t[idx_ok])
    used = np.zeros(n, dtype=bool)
    used[idx_ok[used_ok]] = True
    exact = None
    if used.sum() >= 3:
        obs = ObservationSet("cam0", size, conf, [t.points_m[i] for i in ids], uv, T_be[used],
                             distortion_model=model_of(K9))  # fmt: skip
        doc = observations_to_json(obs)
        for v, p in zip(doc["input"]["views"], np.array(images)[used]):
            v["meta"]["image"] = p.name
        exact = write_document(out / EXACT_FILE, doc)
    written = 0
    for i, p in enumerate(images):
        if not p.exists():
            rng = np.random.default_rng([seed, _RENDER_STREAM, i])
            if ok[i]:
                img = render_view(t, K9, size, T_ct_t[i], rng, settings)
            else:
                img = np.full((size[1], size[0]), 64, dtype=np.uint8)
            good, buf = cv2.imencode(".png", img)
            if not good:
                raise InputError(f"{p}: OpenCV could not encode the image as PNG")
            atomic_write(p, lambda tmp, b=buf: tmp.write_bytes(b.tobytes()))
            written += 1
        if progress is not None:
            progress(i + 1, n)
    camera_file = None
    if intrinsics is not None:
        camera_file = write_intrinsics(out / CAMERA_FILE, IntrinsicsFile(*K9[:4], size[0], size[1], tuple(K9[4:]),
                                                                         model_of(K9)))  # fmt: skip
    return RenderedSequence(out, images, hand, truth_path, exact, t, conf, X_t, Y_t, K9, written, camera_file)
