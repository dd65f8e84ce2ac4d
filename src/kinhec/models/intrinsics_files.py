"""Camera intrinsics from the files calibration tools write: OpenCV YAML, Kalibr camchain YAML, kinhec's JSON.

:func:`read_intrinsics` tells the three apart by content and returns :class:`IntrinsicsFile`: ``fx, fy, cx, cy``
[px], the distortion coefficients and model, and the image size [px].

* **OpenCV YAML** (``cv::FileStorage``, as OpenCV's calibration sample and ROS's ``camera_calibration`` write it):
  ``camera_matrix`` (a ``!!opencv-matrix`` or a mapping with ``rows``, ``cols``, ``data``; also ``cameraMatrix``
  or ``K``), ``distortion_coefficients`` (also ``dist_coeffs``, ``distCoeffs``, ``D``), ``image_width`` and
  ``image_height`` (or ``image_size: [w, h]``).  The ``%YAML:1.0`` header and the ``!!opencv-matrix`` tags are
  read without OpenCV.  The distortion model is ``radtan`` (OpenCV's ``k1 k2 p1 p2 k3 ...``), or the one
  ROS names in ``distortion_model`` (``plumb_bob``; ``rational_polynomial``, read as ``rational``: OpenCV's
  eight ``k1 k2 p1 p2 k3 k4 k5 k6``; ``equidistant``).  OpenCV itself states no model: a ``radtan`` file with
  nonzero ``k4 k5 k6`` is the rational model all the same (:func:`kinhec.calibrate.corners.intrinsics_vector`).
* **Kalibr camchain YAML**: ``cam0`` (or the camera named by ``camera``), with ``intrinsics: [fu, fv, pu, pv]``
  (``camera_model: pinhole``), ``distortion_model`` (``radtan``, ``equidistant``), ``distortion_coeffs`` and
  ``resolution: [w, h]``.  Kalibr's ``omni`` and ``ds`` models are refused (their intrinsics are not a pinhole's).
* **kinhec calibrate JSON** (``kinhec calibrate --corners/--images --json``): ``inputs.intrinsics_refined``
  (else ``inputs.intrinsics``), nine numbers ``fx fy cx cy k1 k2 p1 p2 k3`` (eight, ``fx fy cx cy k1 k2 k3 k4``, with
  ``inputs.distortion_model: equidistant``; twelve, ``fx fy cx cy k1 k2 p1 p2 k3 k4 k5 k6``, with
  ``inputs.distortion_model: rational``), and ``inputs.image_size``.  A JSON written before
  kinhec stored the image size needs it given (``image_size``).

An ``image_size`` given with a file that states its own must agree with it, and the principal point must lie
in the central half of the image (:data:`PRINCIPAL_POINT_SPAN`): intrinsics of another image size are refused.  Every problem is one
:class:`~kinhec.util.errors.InputError` line that names the file and what was expected.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kinhec.util.errors import InputError

__all__ = ["FORMATS", "IntrinsicsFile", "read_intrinsics", "read_opencv_yaml", "parse_image_size"]

#: The formats :func:`read_intrinsics` reads.
FORMATS = ("opencv_yaml", "kalibr", "kinhec_json")
#: The principal point must lie within this fraction of the image size from the centre (else the intrinsics
#: belong to another image size).
PRINCIPAL_POINT_SPAN = 0.25
_OPENCV_HEADER = re.compile(r"^%YAML[: ]1\.\d+\s*\n", re.MULTILINE)
_MATRIX_KEYS = ("camera_matrix", "cameraMatrix", "K")
_DIST_KEYS = ("distortion_coefficients", "dist_coeffs", "distCoeffs", "D")
_ROS_MODELS = {"plumb_bob": "radtan", "rational_polynomial": "rational", "rational": "rational",
               "equidistant": "equidistant"}


@dataclass(frozen=True)
class IntrinsicsFile:
    """Intrinsics read from a file.

    Attributes
    ----------
    fx, fy, cx, cy : float
        Focal lengths and principal point [px] (OpenCV's pixel convention: the centre of the top-left pixel at 0).
    width_px, height_px : int
        Image size [px].
    distortion : tuple of float
        Distortion coefficients in the file's order.
    distortion_model : str
        ``radtan`` (OpenCV's and Kalibr's ``k1 k2 p1 p2 [k3 ...]``), ``rational`` (OpenCV's ``k1 k2 p1 p2 k3 k4 k5
        k6``, as ROS's ``rational_polynomial`` states it) or ``equidistant`` (fisheye ``k1 .. k4``).
    format : str
        One of :data:`FORMATS`.
    path : str
    """

    fx: float
    fy: float
    cx: float
    cy: float
    width_px: int
    height_px: int
    distortion: tuple = field(default=())
    distortion_model: str = "radtan"
    format: str = ""
    path: str = ""

    def to_dict(self) -> dict:
        return {"fx": self.fx, "fy": self.fy, "cx": self.cx, "cy": self.cy, "width_px": self.width_px,
                "height_px": self.height_px, "distortion": list(self.distortion),
                "distortion_model": self.distortion_model, "format": self.format, "path": self.path}  # fmt: skip


def parse_image_size(text, what: str = "image size") -> tuple[int, int]:
    """``"WIDTHxHEIGHT"`` (or a pair) as two positive integers [px]."""
    if isinstance(text, str):
        m = re.fullmatch(r"\s*(\d+)\s*[xX,]\s*(\d+)\s*", text)
        if not m:
            raise InputError(f"{what}: expected WIDTHxHEIGHT in pixels (e.g. 1280x720), got {text!r}")
        w, h = int(m.group(1)), int(m.group(2))
    else:
        try:
            w, h = (int(v) for v in text)
        except (TypeError, ValueError):
            raise InputError(f"{what}: expected WIDTHxHEIGHT in pixels, got {text!r}") from None
    if w <= 0 or h <= 0:
        raise InputError(f"{what}: expected a positive width and height [px], got {w}x{h}")
    return w, h


def _opencv_loader():
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def matrix(loader, node):
        return loader.construct_mapping(node, deep=True)

    for tag in ("tag:yaml.org,2002:opencv-matrix", "tag:yaml.org,2002:opencv-nd-matrix"):
        Loader.add_constructor(tag, matrix)
    return Loader


def read_opencv_yaml(path) -> dict:
    """The top-level mapping of a ``cv::FileStorage`` YAML (``%YAML:1.0`` header, ``!!opencv-matrix`` tags).

    Matrices come back as mappings with ``rows``, ``cols`` and ``data`` (as ROS writes them too).
    """
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: expected an intrinsics file, got no such file") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: expected an intrinsics file (YAML or JSON text), got binary data") from None
    text = _OPENCV_HEADER.sub("", text, count=1)
    try:
        doc = yaml.load(text, Loader=_opencv_loader())  # noqa: S506 - a SafeLoader with one more tag
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: expected an intrinsics YAML, got invalid YAML ({' '.join(str(exc).split())})") from None
    return doc


def _matrix(value, what: str) -> np.ndarray:
    if isinstance(value, dict) and "data" in value:
        data = value["data"]
        rows, cols = value.get("rows"), value.get("cols")
    else:
        data, rows, cols = value, None, None
    try:
        a = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{what}: expected numbers, got {data!r}") from None
    if rows is not None and cols is not None:
        if a.size != int(rows) * int(cols):
            raise InputError(f"{what}: expected rows x cols = {rows} x {cols} numbers, got {a.size}")
        a = a.reshape(int(rows), int(cols))
    if not np.isfinite(a).all():
        raise InputError(f"{what}: expected finite numbers, got {a.ravel().tolist()}")
    return a


def _first(doc: dict, keys):
    return next((k for k in keys if k in doc), None)


def _from_opencv(doc: dict, path: Path) -> IntrinsicsFile:
    key = _first(doc, _MATRIX_KEYS)
    K = _matrix(doc[key], key)
    if K.size != 9:
        raise InputError(f"{key}: expected a 3x3 camera matrix, got {K.size} numbers")
    K = K.reshape(3, 3)
    dk = _first(doc, _DIST_KEYS)
    dist = tuple(float(v) for v in _matrix(doc[dk], dk).ravel()) if dk else ()
    model = _ROS_MODELS.get(str(doc.get("distortion_model", "plumb_bob")).strip().lower())
    if model is None:
        raise InputError(f"distortion_model: expected one of {', '.join(_ROS_MODELS)}, got {doc['distortion_model']!r}")
    if "image_width" in doc and "image_height" in doc:
        size = (doc["image_width"], doc["image_height"])
    elif "image_size" in doc or "imageSize" in doc:
        size = doc.get("image_size", doc.get("imageSize"))
        size = _matrix(size, "image_size").ravel().tolist() if isinstance(size, dict) else size
    else:
        size = None
    wh = None if size is None else parse_image_size(size, "image_width, image_height")
    return _make(K[0, 0], K[1, 1], K[0, 2], K[1, 2], wh, dist, model, "opencv_yaml", path)


def _from_kalibr(doc: dict, path: Path, camera: str | None) -> IntrinsicsFile:
    names = sorted(k for k, v in doc.items() if isinstance(v, dict) and "intrinsics" in v)
    name = camera or ("cam0" if "cam0" in names else (names[0] if names else None))
    if name not in doc or not isinstance(doc[name], dict):
        raise InputError(f"expected the camera {name!r} in the camchain, got cameras {', '.join(names) or 'none'}")
    cam = doc[name]
    model = str(cam.get("camera_model", "pinhole")).strip().lower()
    if model != "pinhole":
        raise InputError(f"{name}: camera_model: expected pinhole (intrinsics fu, fv, pu, pv), got {model!r}")
    k = _matrix(cam.get("intrinsics"), f"{name}: intrinsics").ravel()
    if k.size != 4:
        raise InputError(f"{name}: intrinsics: expected [fu, fv, pu, pv], got {k.size} numbers")
    dm = str(cam.get("distortion_model", "radtan")).strip().lower()
    if dm not in ("radtan", "equidistant", "none"):
        raise InputError(f"{name}: distortion_model: expected radtan or equidistant, got {dm!r}")
    dist = tuple(float(v) for v in _matrix(cam.get("distortion_coeffs", []), f"{name}: distortion_coeffs").ravel())
    if "resolution" not in cam:
        raise InputError(f"{name}: expected resolution: [width, height], got keys {', '.join(map(str, cam))}")
    wh = parse_image_size(cam["resolution"], f"{name}: resolution")
    return _make(k[0], k[1], k[2], k[3], wh, dist, "radtan" if dm == "none" else dm, "kalibr", path)


def _from_kinhec_json(doc: dict, path: Path) -> IntrinsicsFile:
    inputs = doc.get("inputs") or {}
    k = inputs.get("intrinsics_refined") or inputs.get("intrinsics")
    if not k:
        raise InputError("expected a calibration from corners or images (inputs.intrinsics), got a calibration "
                         "without intrinsics (from pose files)")  # fmt: skip
    k = _matrix(k, "inputs.intrinsics").ravel()
    model = inputs.get("distortion_model", "radtan")
    if model == "equidistant":
        if k.size != 8:
            raise InputError(f"inputs.intrinsics: expected fx fy cx cy k1 k2 k3 k4 (equidistant), got {k.size} numbers")
    elif model == "rational":
        if k.size != 12:
            raise InputError(f"inputs.intrinsics: expected fx fy cx cy k1 k2 p1 p2 k3 k4 k5 k6 (rational), got {k.size} "
                             "numbers")  # fmt: skip
    elif model != "radtan":
        raise InputError(f"inputs.distortion_model: expected radtan, rational or equidistant, got {model!r}")
    elif k.size != 9:
        raise InputError(f"inputs.intrinsics: expected fx fy cx cy k1 k2 p1 p2 k3, got {k.size} numbers")
    size = doc.get("image_size") or inputs.get("image_size")
    wh = None if size is None else parse_image_size(size, "image_size")
    return _make(k[0], k[1], k[2], k[3], wh, tuple(float(v) for v in k[4:]), model, "kinhec_json", path)


def _make(fx, fy, cx, cy, wh, dist, model, fmt, path) -> IntrinsicsFile:
    fx, fy, cx, cy = (float(v) for v in (fx, fy, cx, cy))
    if not (fx > 0 and fy > 0):
        raise InputError(f"expected focal lengths fx, fy > 0 [px], got {fx:g}, {fy:g}")
    w, h = (0, 0) if wh is None else wh
    return IntrinsicsFile(fx, fy, cx, cy, w, h, tuple(dist), model, fmt, str(path))


def read_intrinsics(path, *, image_size=None, camera: str | None = None,
                    size_from: str = "--image-size") -> IntrinsicsFile:
    """Intrinsics from an OpenCV YAML, a Kalibr camchain YAML or a ``kinhec calibrate`` JSON (module docstring).

    Parameters
    ----------
    path : str or Path
    image_size : str or (int, int), optional
        ``WIDTHxHEIGHT`` [px]: needed for a kinhec JSON; checked against the file's own size otherwise.
    camera : str, optional
        The camera of a Kalibr camchain (default ``cam0``).
    size_from : str
        Where ``image_size`` came from, for the messages (an option, or the images the intrinsics must fit).

    Raises
    ------
    InputError
        One line naming the file: no such file, invalid YAML or JSON, a format it is not, missing keys, no image
        size, an image size other than ``image_size``, a principal point outside the image.
    """
    path = Path(path)
    want = None if image_size is None else parse_image_size(image_size, size_from)
    try:
        if path.suffix.lower() == ".json":
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                raise InputError("expected an intrinsics file, got no such file") from None
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise InputError(f"expected the JSON of kinhec calibrate --json, got invalid JSON ({exc})") from None
            if not isinstance(doc, dict):
                raise InputError(f"expected the JSON of kinhec calibrate --json, got {type(doc).__name__}")
            intr = _from_kinhec_json(doc, path)
        else:
            doc = read_opencv_yaml(path)
            if not isinstance(doc, dict):
                raise InputError(f"expected a mapping (OpenCV YAML or Kalibr camchain), got {type(doc).__name__}")
            if _first(doc, _MATRIX_KEYS):
                intr = _from_opencv(doc, path)
            elif any(isinstance(v, dict) and "intrinsics" in v for v in doc.values()):
                intr = _from_kalibr(doc, path, camera)
            else:
                raise InputError("expected an OpenCV YAML (camera_matrix, distortion_coefficients, image_width, "
                                 "image_height) or a Kalibr camchain (cam0: intrinsics, resolution), got keys "
                                 f"{', '.join(map(str, list(doc)[:8]))}")  # fmt: skip
        if intr.width_px == 0:
            if want is None:
                raise InputError("expected the image size in the file, got none: give it (--image-size WIDTHxHEIGHT)")
            intr = IntrinsicsFile(intr.fx, intr.fy, intr.cx, intr.cy, want[0], want[1], intr.distortion,
                                  intr.distortion_model, intr.format, intr.path)  # fmt: skip
        elif want is not None and want != (intr.width_px, intr.height_px):
            raise InputError(f"expected intrinsics of {want[0]}x{want[1]} images ({size_from}), got intrinsics "
                             f"of {intr.width_px}x{intr.height_px} images")  # fmt: skip
        w, h = intr.width_px, intr.height_px
        if abs(intr.cx - 0.5 * w) > PRINCIPAL_POINT_SPAN * w or abs(intr.cy - 0.5 * h) > PRINCIPAL_POINT_SPAN * h:
            raise InputError(f"expected the principal point in the central half of the {w}x{h} image, got "
                             f"({intr.cx:g}, {intr.cy:g}) px: intrinsics of another image size?")  # fmt: skip
        if not math.isfinite(intr.fx * intr.fy):
            raise InputError("expected finite focal lengths")
    except InputError as exc:
        msg = str(exc)
        raise InputError(msg if msg.startswith(str(path)) else f"{path}: {msg}") from None
    return intr
