"""OpenCV, imported where it is used: a missing install is one line naming the extra to install."""

from __future__ import annotations

from kinhec.util.errors import InputError
from kinhec.util.optional import install_hint, require

__all__ = ["require_cv2", "EXTRA"]

#: The pip extra that brings OpenCV (``opencv-python-headless``).
EXTRA = install_hint("cv2")


def require_cv2(what: str = "target detection"):
    """The ``cv2`` module; :class:`~kinhec.util.optional.MissingDependencyError` when OpenCV is not installed and
    :class:`~kinhec.util.errors.InputError` when it is older than 4.8 (no ChArUco detector), each saying how to
    install it.

    Parameters
    ----------
    what : str
        What needs OpenCV, for the message (``"target detection"``, ``"image rendering"``).
    """
    cv2 = require("cv2", what)
    if not hasattr(cv2, "aruco") or not hasattr(cv2.aruco, "CharucoDetector"):
        raise InputError(f"{what} needs OpenCV 4.8 or newer with its aruco module, got cv2 {cv2.__version__}: {EXTRA}")
    return cv2
