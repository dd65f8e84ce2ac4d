"""Camera intrinsics written back in the forms :mod:`kinhec.models.intrinsics_files` reads.

* ``opencv``: a ``cv::FileStorage`` YAML as OpenCV's calibration sample writes it (``%YAML:1.0``,
  ``image_width``, ``image_height``, ``camera_matrix`` and ``distortion_coefficients`` as ``!!opencv-matrix``);
  ``cv::FileStorage`` and ``cv2.FileStorage`` read it.  A fisheye (equidistant) model is written with its four
  coefficients and ``distortion_model: equidistant`` (the key ROS's camera files use); OpenCV's rational model with
  its eight coefficients ``k1 k2 p1 p2 k3 k4 k5 k6`` and ``distortion_model: rational_polynomial`` (ROS's name).
* ``kalibr``: a Kalibr camchain with one camera (``cam0``): ``camera_model: pinhole``, ``intrinsics: [fu, fv, pu,
  pv]``, ``distortion_model`` (``radtan`` or ``equidistant``), ``distortion_coeffs`` and ``resolution``.  Kalibr's
  ``radtan`` has four coefficients (``k1 k2 p1 p2``): intrinsics with a nonzero ``k3`` or more terms are refused,
  as Kalibr would drop them; Kalibr has no rational model, and one is refused likewise.

Numbers are written with 17 significant digits, so a file read back gives the same floats.
:func:`from_calibration` takes the intrinsics of a ``kinhec calibrate --corners/--images`` result (refined with
``X`` and ``Y`` when they were).
"""

from __future__ import annotations

from pathlib import Path

from kinhec.models.intrinsics_files import IntrinsicsFile
from kinhec.util.errors import InputError
from kinhec.util.fsutil import atomic_write_text

__all__ = ["WRITE_FORMATS", "intrinsics_text", "write_intrinsics", "from_calibration"]

#: The forms :func:`intrinsics_text` writes.
WRITE_FORMATS = ("opencv", "kalibr")
_MODELS = ("radtan", "equidistant", "rational")


def _num(v: float) -> str:
    """A float YAML reads back exactly (always with a decimal point, so YAML 1.1 readers see a float)."""
    return f"{float(v):.16e}"


def _seq(values) -> str:
    return "[ " + ", ".join(_num(v) for v in values) + " ]"


def _opencv_matrix(name: str, rows: int, cols: int, values) -> str:
    return f"{name}: !!opencv-matrix\n   rows: {rows}\n   cols: {cols}\n   dt: d\n   data: {_seq(values)}\n"


def _checked(intr: IntrinsicsFile) -> tuple:
    if intr.distortion_model not in _MODELS:
        raise InputError(f"distortion model: expected one of {', '.join(_MODELS)}, got {intr.distortion_model!r}")
    if intr.width_px <= 0 or intr.height_px <= 0:
        raise InputError(f"image size: expected a positive width and height [px], got {intr.width_px}x{intr.height_px}")
    dist = tuple(float(v) for v in intr.distortion)
    if intr.distortion_model == "equidistant" and len(dist) not in (0, 4):
        raise InputError(f"equidistant distortion: expected 4 coefficients k1..k4, got {len(dist)}")
    if intr.distortion_model == "rational" and len(dist) > 8:
        raise InputError(f"rational distortion: expected at most 8 coefficients k1 k2 p1 p2 k3 k4 k5 k6, got {len(dist)}")
    return dist


def intrinsics_text(intr: IntrinsicsFile, fmt: str = "opencv", *, camera: str = "cam0") -> str:
    """The text of an intrinsics file in the form ``fmt`` (:data:`WRITE_FORMATS`).

    Raises
    ------
    InputError
        An unknown form, no image size, or distortion terms the form cannot hold (Kalibr's ``radtan``: a nonzero
        ``k3`` or more terms).
    """
    dist = _checked(intr)
    K = (intr.fx, 0.0, intr.cx, 0.0, intr.fy, intr.cy, 0.0, 0.0, 1.0)
    if fmt == "opencv":
        if intr.distortion_model == "radtan" and len(dist) < 5:
            dist = dist + (0.0,) * (5 - len(dist))  # OpenCV's k1 k2 p1 p2 k3
        if intr.distortion_model == "rational":
            dist = dist + (0.0,) * (8 - len(dist))  # OpenCV's k1 k2 p1 p2 k3 k4 k5 k6
        if intr.distortion_model == "equidistant" and not dist:
            dist = (0.0,) * 4
        text = ("%YAML:1.0\n---\n"
                f"image_width: {int(intr.width_px)}\nimage_height: {int(intr.height_px)}\n"
                + _opencv_matrix("camera_matrix", 3, 3, K)
                + _opencv_matrix("distortion_coefficients", len(dist), 1, dist))  # fmt: skip
        if intr.distortion_model == "equidistant":
            text += "distortion_model: equidistant\n"
        elif intr.distortion_model == "rational":
            text += "distortion_model: rational_polynomial\n"
        return text
    if fmt == "kalibr":
        if intr.distortion_model == "rational":
            raise InputError("Kalibr has no rational model (OpenCV's k1 k2 p1 p2 k3 k4 k5 k6): write the OpenCV form "
                             "instead")  # fmt: skip
        if intr.distortion_model == "radtan":
            if any(v != 0.0 for v in dist[4:]):
                raise InputError("Kalibr's radtan model holds k1 k2 p1 p2 only, got nonzero higher terms "
                                 f"({', '.join(f'{v:.6g}' for v in dist[4:])}): write the OpenCV form instead")  # fmt: skip
            dist = (dist + (0.0,) * 4)[:4]
        elif not dist:
            dist = (0.0,) * 4
        return (f"{camera}:\n  camera_model: pinhole\n  intrinsics: {_seq((intr.fx, intr.fy, intr.cx, intr.cy))}\n"
                f"  distortion_model: {intr.distortion_model}\n  distortion_coeffs: {_seq(dist)}\n"
                f"  resolution: [{int(intr.width_px)}, {int(intr.height_px)}]\n")  # fmt: skip
    raise InputError(f"intrinsics format: expected one of {', '.join(WRITE_FORMATS)}, got {fmt!r}")


def write_intrinsics(path, intr: IntrinsicsFile, fmt: str = "opencv", *, camera: str = "cam0") -> Path:
    """Write :func:`intrinsics_text` to ``path`` (whole or not at all); returns the path."""
    text = intrinsics_text(intr, fmt, camera=camera)  # every check before anything is written
    path = Path(path)
    atomic_write_text(path, text)
    return path


def from_calibration(doc) -> IntrinsicsFile:
    """The intrinsics of a calibration from corners or images (a result's ``to_dict()`` or its ``inputs``).

    The refined intrinsics when the calibration refined them, else the ones it used; the image size it stored.
    Nine numbers are a pinhole with OpenCV's distortion (``radtan``), eight a fisheye (``equidistant``, as
    ``inputs.distortion_model`` states), twelve OpenCV's rational model (``rational``, stated likewise).
    """
    inputs = doc.get("inputs", doc) if isinstance(doc, dict) else {}
    k = inputs.get("intrinsics_refined") or inputs.get("intrinsics")
    if not k:
        raise InputError("intrinsics: expected a calibration from corners or images (--corners or --images), got one "
                         "from pose files, which holds no intrinsics")  # fmt: skip
    model = inputs.get("distortion_model", "radtan")
    n = {"radtan": 9, "equidistant": 8, "rational": 12}.get(model)
    if n is None:
        raise InputError(f"intrinsics: expected the distortion model radtan, rational or equidistant, got {model!r}")
    if len(k) != n:
        names = {9: "fx fy cx cy k1 k2 p1 p2 k3", 8: "fx fy cx cy k1 k2 k3 k4 (equidistant)",
                 12: "fx fy cx cy k1 k2 p1 p2 k3 k4 k5 k6 (rational)"}[n]  # fmt: skip
        raise InputError(f"intrinsics: expected {names}, got {len(k)} numbers")
    size = inputs.get("image_size")
    if not size:
        raise InputError("intrinsics: expected the calibration's image size (inputs.image_size), got none")
    return IntrinsicsFile(float(k[0]), float(k[1]), float(k[2]), float(k[3]), int(size[0]), int(size[1]),
                          tuple(float(v) for v in k[4:]), model, "kinhec_json", "")  # fmt: skip
