"""Detect a target in images: one entry point for every kind, one :class:`~kinhec.vision.detection.Detection` per image.

:func:`detect` takes one image (a grey array or a file), :func:`detect_images`
a list of files with progress; :func:`observations_from_detections` turns the
accepted views and their hand poses into a
:class:`~kinhec.synth.observations.ObservationSet`, the input of the corner-based
calibration (:mod:`kinhec.calibrate.corners`).  The kinds and their checks:
:mod:`kinhec.vision.chessboard`, :mod:`kinhec.vision.markers`,
:mod:`kinhec.vision.checks`.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np

from kinhec.util.errors import InputError
from kinhec.synth.observations import ObservationSet
from kinhec.vision._cv import require_cv2
from kinhec.vision.detection import Detection
from kinhec.vision.targets import AprilGrid, Charuco, Chessboard, parse_target
from kinhec.vision.chessboard import detect_chessboard, quick_find_chessboard, suggest_chessboard_size
from kinhec.vision.markers import detect_aprilgrid, detect_charuco

__all__ = ["IMAGE_SUFFIXES", "PROBE_IMAGES", "read_gray", "detect", "detect_images", "check_board_size",
           "available_cores", "one_method", "observations_from_detections"]

#: File suffixes read as images (case-insensitive).
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".pgm", ".ppm", ".pnm", ".webp")


def read_gray(path) -> np.ndarray:
    """An image file as an 8-bit grey array ``(H, W)``, read as ``cv2.imread(path, cv2.IMREAD_GRAYSCALE)`` reads it.

    (OpenCV's own grey conversion, so that corners agree with what OpenCV finds in the same file; colour is
    converted, 16-bit images are scaled to 8 bits.)
    """
    cv2 = require_cv2()
    path = Path(path)
    img = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    if img is None:
        what = "no such file" if not path.exists() else "a file OpenCV cannot read as an image"
        raise InputError(f"{path}: expected an image, got {what}")
    return img


def detect(image, target, name: str | None = None, *, fast: bool = False) -> Detection:
    """Detect ``target`` in one image.

    Parameters
    ----------
    image : ndarray (H, W) uint8, str or Path
        A grey image, or an image file.
    target : Target or str
        The target (or its spec, :func:`kinhec.vision.targets.parse_target`).
    name : str, optional
        The image's name in messages (default: the file name, else ``"image"``).
    fast : bool
        A chessboard in a large image: search it at half size first, then at full resolution in its window only
        (:func:`kinhec.vision.chessboard.find_chessboard`; about 3x less CPU, corners within about 0.02 px of the
        full search, not bit for bit).

    Returns
    -------
    Detection
        Accepted (``ok``) with the corner ids and sub-pixel pixels, or rejected with the reason.
    """
    t = parse_target(target)
    if isinstance(image, (str, Path)):
        name = name or Path(image).name
        image = read_gray(image)
    gray = np.asarray(image)
    if gray.ndim != 2 or gray.dtype != np.uint8:
        raise InputError(f"{name or 'image'}: expected a grey uint8 image (H, W), got {gray.dtype} {gray.shape}")
    name = name or "image"
    if isinstance(t, Chessboard):
        return detect_chessboard(gray, t, name, fast=fast)
    if isinstance(t, Charuco):
        return detect_charuco(gray, t, name)
    if isinstance(t, AprilGrid):
        return detect_aprilgrid(gray, t, name)
    raise InputError(f"target: expected a chessboard, charuco or aprilgrid target, got {type(t).__name__}")


#: A chessboard found in none of the first this many images at half size has its size checked (:func:`check_board_size`).
PROBE_IMAGES = 3


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity; ``os.cpu_count()`` where that is unknown)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def detect_images(paths, target, *, progress: Callable[[int, int, Detection], None] | None = None,
                  workers: int | None = None, fast: bool = False) -> list[Detection]:  # fmt: skip
    """Detect ``target`` in every image file of ``paths`` (in that order); ``progress(i, n, detection)`` after each.

    Parameters
    ----------
    paths : sequence of str or Path
    target : Target or str
    progress : callable, optional
        Called in the images' order.
    workers : int, optional
        Images detected at once, in threads (OpenCV releases the GIL); default: the cores available. OpenCV's
        own threads are set to ``cores // workers`` (at least 1) meanwhile and restored after. Every image's
        detection depends on that image alone, so the result is the same, bit for bit, for every ``workers``.
    fast : bool
        See :func:`detect`.

    Raises
    ------
    InputError
        A chessboard found in none of the first :data:`PROBE_IMAGES` images when a board with one inner corner
        fewer or more is (:func:`check_board_size`): the size was likely given in squares.
    """
    t = parse_target(target)
    paths = [Path(p) for p in paths]
    if isinstance(t, Chessboard):
        check_board_size(paths, t)
    cores = available_cores()
    workers = cores if workers is None else int(workers)
    if workers < 1:
        raise InputError(f"workers: expected a positive number, got {workers}")
    workers = min(workers, max(1, len(paths)))
    out = []
    if workers == 1:
        for i, p in enumerate(paths):
            out.append(detect(p, t, fast=fast))
            if progress is not None:
                progress(i + 1, len(paths), out[-1])
        return one_method(out)
    cv2 = require_cv2()
    threads = cv2.getNumThreads()
    cv2.setNumThreads(max(1, cores // workers))
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for i, d in enumerate(pool.map(lambda p: detect(p, t, fast=fast), paths)):
                out.append(d)
                if progress is not None:
                    progress(i + 1, len(paths), d)
    finally:
        cv2.setNumThreads(threads)
    return one_method(out)


def check_board_size(paths, board: Chessboard) -> None:
    """Stop early when a chessboard's size is likely wrong: a one-line :class:`~kinhec.util.errors.InputError`.

    The first :data:`PROBE_IMAGES` images are searched at half size
    (:func:`kinhec.vision.chessboard.quick_find_chessboard`, 0.01-0.7 s each on 1928x1208 images; a small image
    at its own size); when the board
    is in none of them, the sizes next to the given one are tried on the first image
    (:func:`kinhec.vision.chessboard.suggest_chessboard_size`). One found stops the run naming it; none found
    lets the full search go on (a board too small or blurred for the half-size image).
    """

    probe = paths[:PROBE_IMAGES]
    first = None
    for p in probe:
        gray = read_gray(p)
        if quick_find_chessboard(gray, board) is not None:
            return
        first = gray if first is None else first
    if first is None:
        return
    size = suggest_chessboard_size(first, board)
    if size is None:
        return
    names = ", ".join(p.name for p in probe)
    spec = board.spec.split(":")
    spec[1] = f"{size[0]}x{size[1]}"
    what = ("give inner corners, not squares" if size == (board.cols - 1, board.rows - 1)
            else "count the inner corners (where four squares meet)")  # fmt: skip
    raise InputError(f"{paths[0].parent}: no {board.cols}x{board.rows} chessboard in {names}, but {size[0]}x{size[1]} "
                     f"inner corners found in {probe[0].name}: {what}: {':'.join(spec)}")


def one_method(detections: list[Detection]) -> list[Detection]:
    """The detections with one sub-pixel method for all: the one with the smallest median plane-fit RMS.

    Only methods that every accepted view has compete; the choice is added to each view's notes.
    """
    ok = [d for d in detections if d.ok]
    if not ok or not any(d.alternatives for d in ok):
        return detections
    methods = set.intersection(*({d.method} | {a[0] for a in d.alternatives} for d in ok))
    rms = {m: float(np.median([d.with_method(m).fit_rms_px for d in ok])) for m in methods}
    best = min(sorted(rms), key=rms.get)
    note = f"corners by {best} for every view (median plane-fit RMS " + ", ".join(
        f"{m} {v:.3f} px" for m, v in sorted(rms.items(), key=lambda kv: kv[1])) + ")"
    return [replace(d.with_method(best), notes=d.notes + (note,)) if d.ok else d for d in detections]


def observations_from_detections(detections, T_base_ee, target, *, mode: str = "eye_in_hand",
                                 camera_id: str = "cam0") -> ObservationSet:  # fmt: skip
    """The accepted views and their hand poses as an :class:`~kinhec.synth.observations.ObservationSet`.

    Parameters
    ----------
    detections : sequence of Detection
        One per image; rejected ones are skipped.
    T_base_ee : array_like, shape (N, 4, 4)
        The hand pose paired with each detection [m] (same length, same order).
    target : Target or str
    mode : {"eye_in_hand", "eye_to_hand"}

    Raises
    ------
    InputError
        Different lengths, images of different sizes, or no accepted view.
    """
    t = parse_target(target)
    T = np.asarray(T_base_ee, dtype=np.float64)
    if T.shape != (len(detections), 4, 4):
        raise InputError(f"T_base_ee: expected one hand pose per detection ({len(detections)}, 4, 4), got {T.shape}")
    used = [i for i, d in enumerate(detections) if d.ok]
    if not used:
        raise InputError("detections: expected at least one accepted view, got none")
    sizes = {tuple(detections[i].image_size) for i in used}
    if len(sizes) > 1:
        first = detections[used[0]]
        odd = next(detections[i] for i in used if tuple(detections[i].image_size) != tuple(first.image_size))
        raise InputError(f"{odd.image}: expected every image of one camera to be {first.image_size[0]}x"
                         f"{first.image_size[1]} like {first.image}, got {odd.image_size[0]}x{odd.image_size[1]}")
    pts = t.points_m
    return ObservationSet(camera_id, tuple(int(v) for v in sizes.pop()), mode,
                          [pts[detections[i].ids] for i in used], [detections[i].uv_px for i in used], T[used])  # fmt: skip
