"""The outcome of detecting a target in one image: :class:`Detection`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

__all__ = ["Detection", "sample_bilinear"]


@dataclass(frozen=True)
class Detection:
    """The corners of a target found in one image, or why the image was rejected.

    Attributes
    ----------
    image : str
        The image's name (its file name), used in every message.
    image_size : (int, int)
        ``(width, height)`` [px].
    ids : ndarray of int, shape (K,)
        Point ids of the detected corners (rows of :attr:`kinhec.vision.targets.Target.points_m`).
    uv_px : ndarray, shape (K, 2)
        Their sub-pixel positions [px], pixel centres at integer coordinates (OpenCV's convention).
    reason : str or None
        Why the view is rejected (it names the image); None when it is accepted.
    notes : tuple of str
        What the checks changed on the way (e.g. corners that did not fit and were dropped).
    fit_rms_px : float
        RMS [px] of the corners about the plane fit of :func:`kinhec.vision.checks.fit_check`.
    method : str
        How the sub-pixel positions were found (e.g. ``"sector"``, ``"cornersubpix"``).
    alternatives : tuple of (str, ndarray (K, 2), float)
        Other sub-pixel positions of the same corners, by method, with their fit RMS [px]
        (:func:`kinhec.vision.detect.detect_images` keeps one method for a whole folder).
    """

    image: str
    image_size: tuple
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    uv_px: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    reason: str | None = None
    notes: tuple = ()
    fit_rms_px: float = float("nan")
    method: str = ""
    alternatives: tuple = ()

    @property
    def ok(self) -> bool:
        """The view is accepted."""
        return self.reason is None

    @property
    def n_points(self) -> int:
        return int(self.ids.size)

    def with_method(self, method: str) -> Detection:
        """The same detection with the positions of ``method`` (one of :attr:`alternatives` or the current one)."""
        if method == self.method:
            return self
        for name, uv, rms in self.alternatives:
            if name == method:
                others = tuple(a for a in self.alternatives if a[0] != method) + ((self.method, self.uv_px, self.fit_rms_px),)
                return replace(self, uv_px=uv, fit_rms_px=rms, method=method, alternatives=others)
        raise KeyError(method)

    @staticmethod
    def rejected(image: str, image_size, reason: str) -> Detection:
        """A rejected view; ``reason`` is prefixed with the image's name."""
        return Detection(image, tuple(image_size), reason=f"{image}: {reason}")


def sample_bilinear(img: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """Bilinear samples of a grey image ``(H, W)`` at pixels ``uv`` ``(..., 2)`` (clamped to the image)."""
    h, w = img.shape[:2]
    u = np.clip(uv[..., 0], 0.0, w - 1.000001)
    v = np.clip(uv[..., 1], 0.0, h - 1.000001)
    u0, v0 = np.floor(u).astype(np.intp), np.floor(v).astype(np.intp)
    a, b = u - u0, v - v0
    f = img.astype(np.float64, copy=False)
    return ((1 - a) * (1 - b) * f[v0, u0] + a * (1 - b) * f[v0, u0 + 1]
            + (1 - a) * b * f[v0 + 1, u0] + a * b * f[v0 + 1, u0 + 1])  # fmt: skip
