"""OpenCV, imported where it is used: a missing install is one line naming the extra to install."""

from __future__ import annotations

from kinhec.util.errors import InputError

__all__ = ["require_cv2", "EXTRA"]

#: The pip extra that brings OpenCV (``opencv-python-headless``).
EXTRA = 'pip install "kinhec[vision]"'


def require_cv2(what: str = "target detection"):
    """The ``cv2`` module, or an :class:`~kinhec.util.errors.InputError` saying how to install it.

    Parameters
    ----------
    what : str
        What needs OpenCV, for the message (``"target detection"``, ``"image rendering"``).
    """
    try:
        import cv2
    except ImportError as exc:
        raise InputError(f"{what} needs OpenCV ({exc}): {EXTRA}") from None
    if not hasattr(cv2, "aruco") or not hasattr(cv2.aruco, "CharucoDetector"):
        raise InputError(f"{what} needs OpenCV 4.8 or newer with its aruco module, got cv2 {cv2.__version__}: {EXTRA}")
    return cv2
