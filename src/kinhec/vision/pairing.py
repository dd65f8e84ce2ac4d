"""Which hand pose goes with which image: by order, by a time stamp in the file name, or by a CSV map.

The pairing is made from the file names and the hand file alone, *before*
any detection, so an image whose detection fails later is dropped with its
own pose and never shifts the others.

Modes (``--pairing``)
---------------------
``order``
    The k-th image (names sorted naturally: ``img2`` before ``img10``) goes
    with the k-th pose of the hand file; the counts must match.
``stamp``
    The last number in each image's name is a time stamp on the hand file's
    clock, in seconds, milliseconds, microseconds or nanoseconds (the unit
    that puts the stamps inside the hand stream is chosen).  A hand stream
    about as dense as the images (one pose per capture) gives each image the
    pose with the nearest stamp, within half the median period; a denser one
    (a robot logging at its own rate) is interpolated at the image's stamp
    (SLERP and linear, :func:`kinhec.geometry.se3.interpolate_poses`), except across
    gaps longer than three median periods.
``FILE.csv``
    A CSV file with a header and the columns ``image`` and either ``pose``
    (the 0-based index of the pose in the hand file) or ``t`` (a stamp [s] on
    the hand file's clock, as in ``stamp`` mode).  Images it does not name are
    left out.
``auto`` (the default)
    ``order`` when there are as many images as poses, else ``stamp`` when
    the hand file has stamps and the names have numbers.

An image with no pose (its stamp outside the hand stream, in a gap, or not
in the map) is dropped with the reason, like a failed detection.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError

__all__ = ["PAIRING_MODES", "natural_key", "list_images", "stamp_from_name", "ImagePairing", "pair_images"]

PAIRING_MODES = ("auto", "order", "stamp")
#: A bracket of the hand stream longer than this many median periods is a gap (no interpolation across it).
GAP_FACTOR = 3.0
#: Stamp units tried for the numbers in the file names: seconds per unit.
_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def natural_key(name: str) -> tuple:
    """Sort key that orders the digit runs of a name by value (``img2`` before ``img10``)."""
    return tuple((0, int(p), p) if p.isdigit() else (1, 0, p.lower()) for p in re.split(r"(\d+)", name) if p)


def list_images(folder) -> list[Path]:
    """The image files of a folder, sorted naturally by name.

    Raises
    ------
    InputError
        The folder is missing or holds no image (with the suffixes of
        :data:`kinhec.vision.detect.IMAGE_SUFFIXES`).
    """
    from kinhec.vision.detect import IMAGE_SUFFIXES

    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: expected a folder of images, got {'a file' if folder.exists() else 'no such folder'}")
    files = [p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES]
    if not files:
        raise InputError(f"{folder}: expected image files ({', '.join(IMAGE_SUFFIXES)}), got none")
    return sorted(files, key=lambda p: natural_key(p.name))


def stamp_from_name(name: str) -> float | None:
    """The last number in a file name's stem (``frame_1690000000.250.png`` -> 1690000000.25), or None."""
    found = _NUMBER.findall(Path(name).stem)
    return float(found[-1]) if found else None


@dataclass
class ImagePairing:
    """Images and their hand poses.

    Attributes
    ----------
    images : list of Path
        Every image considered, in order.
    T_base_ee : ndarray, shape (N, 4, 4)
        The hand pose of each image (NaN where it has none) [m].
    source : list of str
        Where each pose comes from (``"line 12"``, ``"t = 3.25 s, interpolated"``); ``""`` where there is none.
    missing : dict of int -> str
        Images without a pose and why.
    mode : str
        ``"order"``, ``"stamp"`` or the CSV file's path.
    notes : list of str
    """

    images: list
    T_base_ee: np.ndarray
    source: list
    missing: dict = field(default_factory=dict)
    mode: str = "order"
    notes: list = field(default_factory=list)

    @property
    def paired(self) -> np.ndarray:
        """Indices of the images with a pose."""
        return np.array([i for i in range(len(self.images)) if i not in self.missing], dtype=np.int64)


def _line(hand, j: int) -> str:
    return f"line {int(hand.lines[j])}" if len(hand.lines) > j else f"pose {j}"


def _poses_at(hand, A: np.ndarray, t_query: np.ndarray, images, why: str) -> tuple[np.ndarray, list, dict]:
    """Hand poses at stamps ``t_query`` (nearest or interpolated), their source and the images without one."""
    t = hand.t
    n = len(t_query)
    out = np.full((n, 4, 4), np.nan)
    source, missing = [""] * n, {}
    period = float(np.median(np.diff(t))) if t.size > 1 else np.inf
    dense = t.size > 2 * n
    i = np.clip(np.searchsorted(t, t_query), 1, max(t.size - 1, 1))
    if t.size == 1:
        nearest = np.zeros(n, dtype=np.int64)
    else:
        nearest = np.where(np.abs(t[i - 1] - t_query) <= np.abs(t[i] - t_query), i - 1, i)
    for k in range(n):  # per image: a handful of scalar decisions
        tq = t_query[k]
        j = int(nearest[k])
        if not dense:
            if abs(t[j] - tq) <= 0.5 * period or t.size == 1 and abs(t[j] - tq) < 1e-6:
                out[k] = A[j]
                source[k] = _line(hand, j)
            else:
                missing[k] = (f"{images[k].name}: no hand pose within half a period ({0.5 * period:.4g} s) of its "
                              f"{why} {tq:.6f} s (nearest: {t[j]:.6f} s)")
            continue
        if not (t[0] <= tq <= t[-1]):
            missing[k] = f"{images[k].name}: its {why} {tq:.6f} s lies outside the hand stream [{t[0]:.6f}, {t[-1]:.6f}] s"
            continue
        lo = int(np.clip(np.searchsorted(t, tq, side="right") - 1, 0, t.size - 2))
        if t[lo + 1] - t[lo] > GAP_FACTOR * period:
            missing[k] = f"{images[k].name}: its {why} {tq:.6f} s falls in a gap of the hand stream"
            continue
        out[k] = se3.interpolate_poses(t, A, np.array([tq]), out_of_range="nan")[0]
        source[k] = f"t = {tq:.6f} s, interpolated"
    return out, source, missing


def _stamps(images, hand) -> tuple[np.ndarray, str]:
    raw = [stamp_from_name(p.name) for p in images]
    bad = [p.name for p, s in zip(images, raw) if s is None]
    if bad:
        raise InputError(f"{bad[0]}: expected a time stamp (a number) in the image's name to pair by stamp, got none")
    s = np.array(raw)
    lo, hi = hand.t[0], hand.t[-1]
    span = max(hi - lo, 1e-9)
    best = max(_UNITS, key=lambda u: np.mean((s * _UNITS[u] >= lo - span) & (s * _UNITS[u] <= hi + span)))
    scaled = s * _UNITS[best]
    if not np.any((scaled >= lo - span) & (scaled <= hi + span)):
        raise InputError(f"{images[0].parent}: expected the stamps in the image names to fall inside the hand stream "
                         f"[{lo:.6f}, {hi:.6f}] s, got {s.min():.6f} to {s.max():.6f} in any unit (s, ms, us, ns)")
    return scaled, best


def _read_map(path: Path) -> list[dict]:
    try:
        rows = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
    except FileNotFoundError:
        raise InputError(f"{path}: expected a CSV map of images to poses, got no such file") from None
    cols = {c.strip().lower(): c for c in (rows[0].keys() if rows else [])}
    if "image" not in cols or not ({"pose", "t"} & set(cols)):
        raise InputError(f"{path}: expected a header with the columns image and pose (0-based index) or t "
                         f"(stamp [s]), got {sorted(cols)}")
    return [{k: (r[cols[k]] or "").strip() for k in ("image", "pose", "t") if k in cols} for r in rows]


def pair_images(images, hand, A, mode: str = "auto") -> ImagePairing:
    """Pair image files with the hand poses of a stream (see the module docstring).

    Parameters
    ----------
    images : list of Path
        The images, in their (natural) order.
    hand : kinhec.calibrate.readers.PoseStream
        The hand stream as read (its stamps and line numbers name the poses).
    A : ndarray, shape (N, 4, 4)
        Its poses in metres as ``T_base_ee``.
    mode : {"auto", "order", "stamp"} or a path to a CSV map

    Raises
    ------
    InputError
        Counts that differ in ``order`` mode, names without stamps, stamps
        outside the hand stream, a malformed map.
    """
    images = [Path(p) for p in images]
    n = len(images)
    where = hand.path
    if mode not in PAIRING_MODES:
        rows = _read_map(Path(mode))
        by_name = {p.name: k for k, p in enumerate(images)}
        out, source, missing = np.full((n, 4, 4), np.nan), [""] * n, {}
        named = set()
        t_rows = []
        for line, r in enumerate(rows, start=2):
            k = by_name.get(r["image"])
            if k is None:
                raise InputError(f"{mode}, line {line}: image {r['image']!r} is not in {images[0].parent}")
            named.add(k)
            if r.get("pose"):
                try:
                    j = int(r["pose"])
                except ValueError:
                    raise InputError(f"{mode}, line {line}: expected a 0-based pose index, got {r['pose']!r}") from None
                if not 0 <= j < len(A):
                    raise InputError(f"{mode}, line {line}: expected a pose index in [0, {len(A) - 1}] ({where}), got {j}")
                out[k], source[k] = A[j], _line(hand, j)
            else:
                if hand.t is None:
                    raise InputError(f"{mode}, line {line}: a stamp needs a hand file with time stamps, got {where}")
                try:
                    t_rows.append((k, float(r["t"])))
                except ValueError:
                    raise InputError(f"{mode}, line {line}: expected a stamp in seconds, got {r.get('t')!r}") from None
        if t_rows:
            ks = [k for k, _ in t_rows]
            T, src, miss = _poses_at(hand, A, np.array([s for _, s in t_rows]), [images[k] for k in ks], "mapped stamp")
            for m, k in enumerate(ks):
                out[k], source[k] = T[m], src[m]
                if m in miss:
                    missing[k] = miss[m]
        for k in range(n):
            if k not in named:
                missing[k] = f"{images[k].name}: not in {mode}"
        return ImagePairing(images, out, source, missing, str(mode), [f"images paired with hand poses by {mode}"])
    if mode == "auto":
        if n == len(A):
            mode = "order"
        elif hand.t is not None and all(stamp_from_name(p.name) is not None for p in images):
            mode = "stamp"
        else:
            raise InputError(f"{images[0].parent} and {where}: expected as many images as hand poses to pair by "
                             f"order, got {n} images and {len(A)} poses (and no stamps to pair by: --pairing stamp "
                             "needs stamps in the hand file and in the image names, or give a CSV map)")
    if mode == "order":
        if n != len(A):
            raise InputError(f"{images[0].parent} and {where}: expected as many images as hand poses to pair by order, "
                             f"got {n} images and {len(A)} poses")
        src = [_line(hand, k) for k in range(n)]
        return ImagePairing(images, np.asarray(A, dtype=np.float64).copy(), src, {}, "order",
                            [f"images paired with hand poses by order ({images[0].name} with {src[0]}, "
                             f"{images[-1].name} with {src[-1]})"])  # fmt: skip
    if hand.t is None:
        raise InputError(f"{where}: pairing by stamp needs time stamps in the hand file, got none ({hand.fmt} format)")
    t_img, unit = _stamps(images, hand)
    T, source, missing = _poses_at(hand, A, t_img, images, "stamp")
    notes = [f"images paired with hand poses by the stamps in their names (read as {unit})"]
    return ImagePairing(images, T, source, missing, "stamp", notes)
