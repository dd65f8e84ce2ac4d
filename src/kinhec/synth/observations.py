"""Observation sets: target corners, robot poses and image sizes of one calibration, as plain JSON.

An observation set is what a corner-based calibration consumes, extracted
once from the images.  The format (version 1) is shared with other
calibration tools, so they can run on exactly the same data::

    {
      "version": 1,
      "cameras": [{"id": "cam0", "image_size": [1928, 1208]}],
      "problem": "single_cam_handeye",
      "input": {
        "mode": "eye_in_hand",
        "views": [
          {"obs": {"points_3d": [[0.0, 0.0, 0.0], ...], "points_2d": [[109.8, 92.8], ...]},
           "meta": {"base_se3_gripper": {"rotation": [qx, qy, qz, qw], "translation": [x, y, z]}}}
        ]
      }
    }

* ``points_3d`` are target points [m] in the target frame (planar: ``z = 0``);
  ``points_2d`` their pixels [px], integer coordinates at pixel centres
  (the OpenCV convention).
* A pose is a unit quaternion, **scalar last**, and a translation [m].
  ``a_se3_b`` maps b-coordinates to a-coordinates: ``base_se3_gripper`` is
  kinhec's ``T_base_ee`` (OpenCV's ``R/t_gripper2base``).  The quaternion
  order is converted here, once, to kinhec's internal ``(w, x, y, z)``.
* A camera may state its lens model: ``"distortion_model": "equidistant"``
  (a fisheye, :mod:`kinhec.models.intrinsics`), ``"rational"`` (OpenCV's
  rational model, eight coefficients) or ``"radtan"`` (a pinhole with
  OpenCV's distortion, the default when it is not stated); ``kinhec calibrate
  --corners`` estimates that model when no intrinsics are given.
* ``mode`` says where the camera is: ``eye_in_hand`` (on the flange, the
  target fixed in the world) or ``eye_to_hand`` (fixed, the target on the flange).

The JSON Schema is ``kinhec/io/data/observation_set.schema.json``
(:func:`schema_path`); :func:`read_observations` validates every file
against it and names the file and the JSON path of the first violation.

:func:`observations_from_recipe` writes a generated ``pnp`` sequence in this
format: the projected target points with the pixel noise of the sequence,
drawn exactly as the generator drew them.  :func:`fisheye_observations_from_recipe`
sees the same sequence through a fisheye lens (:data:`FISHEYE_LENSES`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.models.cameras import VISIBILITY_MARGIN_PX, get_camera, get_target, inside_image, pinhole_pixels, to_camera
from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.util.fsutil import atomic_write_text
from kinhec.synth.generator import as_recipe, seed_streams, simulate
from kinhec.models.intrinsics import INTRINSIC_NAMES, MODELS, intrinsic_names, model_of, project_points
from kinhec.solvers.reprojection import PixelViews

__all__ = [
    "FORMAT_VERSION",
    "ObservationSet",
    "schema_path",
    "load_schema",
    "read_observations",
    "write_observations",
    "observations_to_json",
    "pose_json",
    "transform_from_pose_json",
    "observations_from_recipe",
    "fisheye_observations_from_recipe",
    "FISHEYE_LENSES",
    "RATIONAL_LENSES",
    "FisheyeLens",
    "DETECTOR_STD_PX",
    "RecipePixels",
    "recipe_pixels",
    "PosePairs",
    "PoseStreams",
    "read_pose_pairs",
    "read_pose_streams",
    "write_document",
    "poses_json",
    "transforms_from_poses_json",
]

FORMAT_VERSION = 1
MODES = ("eye_in_hand", "eye_to_hand")


@dataclass(frozen=True)
class ObservationSet:
    """One camera's views of a planar target with the robot pose of each view.

    Attributes
    ----------
    camera_id : str
    image_size : (int, int)
        ``(width, height)`` [px].
    mode : {"eye_in_hand", "eye_to_hand"}
    points_3d : list of ndarray, each (P_i, 3)
        Target points [m] in the target frame.
    points_2d : list of ndarray, each (P_i, 2)
        Their pixels [px].
    T_base_ee : ndarray, shape (N, 4, 4)
        Flange pose in the robot base at each view [m].
    problem : str
        ``"single_cam_handeye"``.
    distortion_model : {"radtan", "equidistant", "rational"}
        The lens model the file states (``radtan`` when it states none).
    """

    camera_id: str
    image_size: tuple[int, int]
    mode: str
    points_3d: list
    points_2d: list
    T_base_ee: np.ndarray
    problem: str = "single_cam_handeye"
    distortion_model: str = "radtan"

    @property
    def n_views(self) -> int:
        return len(self.points_3d)


def schema_path(name: str = "observation_set") -> Path:
    """Path of a JSON Schema shipped with kinhec (``observation_set``)."""
    return Path(str(resources.files("kinhec") / "io" / "data" / f"{name}.schema.json"))


def load_schema(name: str = "observation_set") -> dict:
    """The JSON Schema ``name`` as a dict."""
    return json.loads(schema_path(name).read_text())


def pose_json(T) -> dict:
    """``{"rotation": [qx, qy, qz, qw], "translation": [x, y, z]}`` of one pose ``T`` (4, 4) [m], ``qw >= 0``."""
    p, q = se3.pq_from_transform(np.asarray(T, dtype=np.float64), check=False)
    q = se3.canonical_quaternion(q)
    return {"rotation": [float(q[1]), float(q[2]), float(q[3]), float(q[0])], "translation": [float(v) for v in p]}


def transform_from_pose_json(d: dict, where: str = "pose") -> np.ndarray:
    """The (4, 4) transform of a pose record (scalar-last quaternion, metres); ``where`` names it in errors."""
    try:
        q_xyzw = np.asarray(d["rotation"], dtype=np.float64)
        p = np.asarray(d["translation"], dtype=np.float64)
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{where}: expected {{rotation: [qx, qy, qz, qw], translation: [x, y, z]}}, got {d!r}") from None
    n = float(np.linalg.norm(q_xyzw))
    if q_xyzw.shape != (4,) or p.shape != (3,) or not abs(n - 1.0) < 1e-6:
        raise InputError(f"{where}: expected a unit quaternion (4) and a translation (3), got |q| = {n:.9g}")
    q_wxyz = np.array([q_xyzw[3], q_xyzw[0], q_xyzw[1], q_xyzw[2]])
    return se3.transform_from_pq(p, q_wxyz, normalize=True)


def _skeleton(doc):
    """``doc`` with every point list cut to its first 4 points (enough for the schema's counts).

    Validating ~10^5 points one by one with jsonschema takes seconds; the
    point arrays are checked with numpy instead (:func:`_points`), with the
    same JSON paths in the messages.
    """
    try:
        views = doc["input"]["views"]
    except (KeyError, TypeError):
        return doc
    if not isinstance(views, list):
        return doc
    cut = []
    for v in views:
        try:
            obs = dict(v["obs"])
            obs.update({k: obs[k][:4] for k in ("points_3d", "points_2d") if isinstance(obs.get(k), list)})
            cut.append({**v, "obs": obs})
        except (KeyError, TypeError):
            cut.append(v)
    return {**doc, "input": {**doc["input"], "views": cut}}


#: The top-level keys of an observation JSON.
OBSERVATION_KEYS = ("version", "cameras", "problem", "input")


def _not_an_observation_file(doc, where: str) -> str | None:
    """A one-line reason when ``doc`` is some other JSON altogether (none of the observation keys), else None."""
    if isinstance(doc, dict) and any(k in doc for k in OBSERVATION_KEYS):
        return None
    got = (f"a JSON object with the keys {', '.join(list(doc)[:6])}{', ...' if len(doc) > 6 else ''}"
           if isinstance(doc, dict) else f"a JSON {type(doc).__name__}")  # fmt: skip
    msg = (f"{where}: not an observation JSON: expected the keys {', '.join(OBSERVATION_KEYS)} (the calibration-rs "
           f"observation format, docs/regression.md; regression/observations/kuka_1.json is one), got {got}")  # fmt: skip
    views = doc.get("views") if isinstance(doc, dict) else None
    if "object_points_m" in doc and isinstance(views, list) and views and isinstance(views[0], dict) \
            and "corners_px" in views[0]:  # fmt: skip
        msg += ("; this is RWHE-Calib's corner detections (corners_opencv_detected.json), which kinhec suite freeze "
                "converts together with the robot poses of RobotPosesVec.txt into regression/observations/<id>.json")
    return msg


def _validate(doc, where: str) -> None:
    import jsonschema  # runtime dependency; imported here to keep `import kinhec` light

    other = _not_an_observation_file(doc, where)
    if other is not None:
        raise DatasetFormatError(other)

    validator = jsonschema.Draft202012Validator(load_schema())
    err = jsonschema.exceptions.best_match(validator.iter_errors(_skeleton(doc)))
    if err is not None:
        raise DatasetFormatError(f"{where}: {err.json_path}: {err.message}")


def _points(values, dim: int, where: str) -> np.ndarray:
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        a = None
    if a is None or a.ndim != 2 or a.shape[1] != dim or not np.isfinite(a).all():
        raise DatasetFormatError(f"{where}: expected a list of [{', '.join('xyz'[:dim])}] numbers, got a malformed list")
    return a


def observations_from_json(doc, where: str = "observations") -> ObservationSet:
    """Convert a validated ``single_cam_handeye`` document (``where`` names it in errors)."""
    cam = doc["cameras"][0]
    if len(doc["cameras"]) != 1:
        raise DatasetFormatError(f"{where}: $.cameras: expected one camera for single_cam_handeye, got {len(doc['cameras'])}")
    p3, p2, T = [], [], []
    for i, v in enumerate(doc["input"]["views"]):
        a = _points(v["obs"]["points_3d"], 3, f"{where}: $.input.views[{i}].obs.points_3d")
        b = _points(v["obs"]["points_2d"], 2, f"{where}: $.input.views[{i}].obs.points_2d")
        if a.shape[0] != b.shape[0]:
            raise DatasetFormatError(
                f"{where}: $.input.views[{i}].obs: expected as many points_2d as points_3d, got {b.shape[0]} and {a.shape[0]}"
            )
        p3.append(a)
        p2.append(b)
        try:
            T.append(transform_from_pose_json(v["meta"]["base_se3_gripper"], f"$.input.views[{i}].meta.base_se3_gripper"))
        except InputError as exc:
            raise DatasetFormatError(f"{where}: {exc}") from None
    model = cam.get("distortion_model", "radtan")
    if model not in MODELS.values():
        raise DatasetFormatError(f"{where}: $.cameras[0].distortion_model: expected one of "
                                 f"{', '.join(MODELS.values())}, got {model!r}")  # fmt: skip
    return ObservationSet(str(cam["id"]), (int(cam["image_size"][0]), int(cam["image_size"][1])),
                          doc["input"]["mode"], p3, p2, np.stack(T), doc["problem"], model)  # fmt: skip


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise DatasetFormatError(f"{path}: expected an observation file, got no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetFormatError(f"{path}: expected JSON, got {exc}") from None


def read_observations(path) -> ObservationSet:
    """Read and validate a ``single_cam_handeye`` observation file (see the module doc).

    Raises
    ------
    DatasetFormatError
        Naming the file and the JSON path of the first violation of the schema.
    """
    path = Path(path)
    doc = _read_json(path)
    _validate(doc, str(path))
    if doc["problem"] != "single_cam_handeye":
        raise DatasetFormatError(f"{path}: $.problem: expected 'single_cam_handeye', got {doc['problem']!r}")
    return observations_from_json(doc, str(path))


@dataclass(frozen=True)
class PosePairs:
    """A ``pose_pairs`` observation file: robot and camera pose per view.

    Attributes
    ----------
    mode : {"eye_in_hand", "eye_to_hand"}
    image_size : (int, int)
    T_base_ee, T_cam_target : ndarray, shape (N, 4, 4)
        Flange pose in the base and target pose in the camera at each view [m].
    """

    mode: str
    image_size: tuple[int, int]
    T_base_ee: np.ndarray
    T_cam_target: np.ndarray


@dataclass(frozen=True)
class PoseStreams:
    """A ``pose_streams`` observation file: time-stamped robot and camera streams on two clocks.

    Attributes
    ----------
    mode : {"eye_in_hand", "eye_to_hand"}
    image_size : (int, int)
    t_robot_s : ndarray, shape (Nr,)
    T_base_ee : ndarray, shape (Nr, 4, 4)
    t_camera_s : ndarray, shape (Nc,)
    T_cam_target : ndarray, shape (Nc, 4, 4)
    """

    mode: str
    image_size: tuple[int, int]
    t_robot_s: np.ndarray
    T_base_ee: np.ndarray
    t_camera_s: np.ndarray
    T_cam_target: np.ndarray


def poses_json(T) -> list:
    """Pose records of a stack of poses ``(N, 4, 4)`` (see :func:`pose_json`)."""
    return [pose_json(t) for t in np.asarray(T, dtype=np.float64)]


def transforms_from_poses_json(records, where: str) -> np.ndarray:
    """``(N, 4, 4)`` transforms of a list of pose records (``where`` names the list in errors)."""
    q = np.asarray([r["rotation"] for r in records], dtype=np.float64)
    p = np.asarray([r["translation"] for r in records], dtype=np.float64)
    n = np.linalg.norm(q, axis=1)
    bad = np.flatnonzero(~(np.abs(n - 1.0) < 1e-6))
    if bad.size:
        raise DatasetFormatError(f"{where}[{bad[0]}].rotation: expected a unit quaternion, got |q| = {n[bad[0]]:.9g}")
    return se3.transform_from_pq(p, q[:, [3, 0, 1, 2]], normalize=True)


def _size(doc) -> tuple[int, int]:
    return int(doc["cameras"][0]["image_size"][0]), int(doc["cameras"][0]["image_size"][1])


def read_pose_pairs(path) -> PosePairs:
    """Read and validate a ``pose_pairs`` observation file."""
    path = Path(path)
    doc = _read_json(path)
    _validate(doc, str(path))
    if doc["problem"] != "pose_pairs":
        raise DatasetFormatError(f"{path}: $.problem: expected 'pose_pairs', got {doc['problem']!r}")
    views = doc["input"]["views"]
    A = transforms_from_poses_json([v["meta"]["base_se3_gripper"] for v in views], f"{path}: base_se3_gripper")
    C = transforms_from_poses_json([v["meta"]["camera_se3_target"] for v in views], f"{path}: camera_se3_target")
    return PosePairs(doc["input"]["mode"], _size(doc), A, C)


def read_pose_streams(path) -> PoseStreams:
    """Read and validate a ``pose_streams`` observation file."""
    path = Path(path)
    doc = _read_json(path)
    _validate(doc, str(path))
    if doc["problem"] != "pose_streams":
        raise DatasetFormatError(f"{path}: $.problem: expected 'pose_streams', got {doc['problem']!r}")
    inp = doc["input"]
    out = []
    for key, pose_key in (("robot", "base_se3_gripper"), ("camera", "camera_se3_target")):
        t = np.asarray(inp[key]["t_s"], dtype=np.float64)
        T = transforms_from_poses_json(inp[key][pose_key], f"{path}: $.input.{key}.{pose_key}")
        if t.shape[0] != T.shape[0]:
            raise DatasetFormatError(f"{path}: $.input.{key}: expected as many t_s as poses, got {t.size} and {len(T)}")
        out += [t, T]
    return PoseStreams(inp["mode"], _size(doc), *out)


def write_document(path, doc: dict) -> Path:
    """Validate an observation document of any problem and write it (atomically, one record per line)."""
    _validate(doc, str(path))
    text = json.dumps(doc, separators=(",", ":")).replace("},{", "},\n{")
    path = Path(path)
    atomic_write_text(path, text + "\n")
    return path


def observations_to_json(obs: ObservationSet) -> dict:
    """The JSON document (a dict) of an observation set."""
    views = []
    for a, b, T in zip(obs.points_3d, obs.points_2d, obs.T_base_ee):
        views.append({
            "obs": {"points_3d": np.asarray(a, dtype=float).tolist(), "points_2d": np.asarray(b, dtype=float).tolist()},
            "meta": {"base_se3_gripper": pose_json(T)},
        })  # fmt: skip
    cam = {"id": obs.camera_id, "image_size": [int(obs.image_size[0]), int(obs.image_size[1])]}
    if obs.distortion_model != "radtan":
        cam["distortion_model"] = obs.distortion_model
    return {
        "version": FORMAT_VERSION,
        "cameras": [cam],
        "problem": obs.problem,
        "input": {"mode": obs.mode, "views": views},
    }


def write_observations(path, obs: ObservationSet) -> Path:
    """Write ``obs`` to ``path`` (validated first; one view per line, atomically)."""
    doc = observations_to_json(obs)
    _validate(doc, str(path))
    head = {k: v for k, v in doc.items() if k != "input"}
    lines = [json.dumps(v, separators=(",", ":")) for v in doc["input"]["views"]]
    text = json.dumps(head)[:-1] + ', "input": {"mode": ' + json.dumps(obs.mode) + ', "views": [\n'
    text += ",\n".join(lines) + "\n]}}\n"
    path = Path(path)
    atomic_write_text(path, text)
    return path


@dataclass(frozen=True)
class RecipePixels:
    """The pixels of every camera frame of a generated ``pnp`` sequence, as the generator drew them.

    Attributes
    ----------
    sequence_id : str
    configuration : {"eye_in_hand", "eye_to_hand"}
    image_size : (int, int)
        ``(width, height)`` [px].
    intrinsics : ndarray, shape (9,)
        The camera preset's ``(fx, fy, cx, cy, k1, k2, p1, p2, k3)`` (no distortion).
    points_m : ndarray, shape (P, 3)
        Target points [m] in the target frame.
    uv_px : ndarray, shape (N, P, 2)
        Noisy pixels of every point in every camera frame [px] (also where no detector would report them).
    detected : ndarray of bool, shape (N, P)
        Points a detector reports: positive depth, inside the image with the visibility margin.
    T_base_ee_meas : ndarray, shape (N, 4, 4)
        Measured flange pose at each camera frame [m].
    T_cam_target_meas : ndarray, shape (N, 4, 4)
        The measured pose of each frame (the PnP on these pixels; outliers where the recipe has them; NaN
        where there is no measurement).
    X, Y : ndarray, shape (4, 4)
        Ground truth.
    """

    sequence_id: str
    configuration: str
    image_size: tuple
    intrinsics: np.ndarray
    points_m: np.ndarray
    uv_px: np.ndarray
    detected: np.ndarray
    T_base_ee_meas: np.ndarray
    T_cam_target_meas: np.ndarray
    X: np.ndarray
    Y: np.ndarray

    @property
    def has_measurement(self) -> np.ndarray:
        """Frames with a finite measured pose, shape (N,)."""
        return np.isfinite(self.T_cam_target_meas).all(axis=(1, 2))

    def views(self, frames):
        """``(points_3d, points_2d)`` lists of the detected points of camera frames ``frames``."""
        return ([self.points_m[self.detected[i]] for i in frames], [self.uv_px[i, self.detected[i]] for i in frames])

    def pixel_views(self, frames, view_poses=None):
        """The detected points of camera frames ``frames`` as a :class:`kinhec.solvers.reprojection.PixelViews`.

        With the sequence's configuration, image size and intrinsics; ``view_poses`` (one ``T_cam_target``
        per frame) optionally start the pixel solver.
        """

        return PixelViews(*self.views(frames), self.image_size, self.configuration, self.intrinsics, view_poses)


def recipe_pixels(recipe) -> RecipePixels:
    """Re-simulate a synchronous generated ``pnp`` sequence and return the pixels of every camera frame.

    The target points are projected with the true poses and the pixel noise
    is the first draw of the sequence's camera-noise stream, exactly as
    :func:`kinhec.models.pnp.simulate_pnp` draws it, so a PnP on the detected pixels
    of a frame gives the sequence's measured ``T_cam_target``.

    Raises
    ------
    InputError
        The recipe's camera model is not ``pnp``, or the sequence is not
        synchronous (one robot pose per camera frame).
    """
    r = as_recipe(recipe)
    if r.camera_noise_model != "pnp":
        raise InputError(f"recipe {r.sequence_id}: expected camera_noise_model 'pnp', got {r.camera_noise_model!r}")
    g = simulate(r)
    if not g.clocks.same_clock or g.T_base_ee_meas.shape[0] != g.T_cam_target_gt.shape[0]:
        raise InputError(f"recipe {r.sequence_id}: expected a synchronous sequence (one robot pose per camera frame)")
    cam, tgt = get_camera(r.camera), get_target(r.target)
    pts = tgt.points_m
    uv_true, depth = pinhole_pixels(cam, to_camera(g.T_cam_target_gt, pts))
    inside = inside_image(cam, uv_true, depth, VISIBILITY_MARGIN_PX)
    rng = seed_streams(r.seed)["camera_noise"]
    noise = rng.standard_normal((g.T_cam_target_gt.shape[0], pts.shape[0], 2))  # the generator's first draw
    k = np.array([cam.f_px, cam.f_px, cam.cx_px, cam.cy_px, 0.0, 0.0, 0.0, 0.0, 0.0])
    return RecipePixels(r.sequence_id, r.configuration, (cam.width_px, cam.height_px), k, pts,
                        uv_true + float(r.pixel_std) * noise, inside, g.T_base_ee_meas, g.T_cam_target_meas,
                        g.X, g.Y)  # fmt: skip


def observations_from_recipe(recipe) -> tuple[ObservationSet, dict]:
    """Pixel observations of a generated ``pnp`` sequence and its ground truth.

    The target points are projected with the true poses and the pixel noise
    is drawn from the sequence's camera-noise stream exactly as the generator
    draws it (:func:`kinhec.models.pnp.simulate_pnp`, :func:`recipe_pixels`), so a
    PnP on these pixels gives the sequence's measured ``T_cam_target``.  Only
    frames with a measurement and the points a detector reports are kept.
    The sequence must be synchronous (one robot pose per camera frame).

    Returns
    -------
    (ObservationSet, dict)
        The observations (robot poses as measured) and the truth:
        ``{"parameters": {fx, fy, cx, cy, k1, k2, p1, p2, k3}, "poses": {"X": pose, "Y": pose}}``.
    """
    px = recipe_pixels(recipe)
    keep = np.flatnonzero(px.has_measurement)
    # target points: the generator's grid is centred on the origin; the file keeps them in the target frame
    obs = ObservationSet("cam0", px.image_size, px.configuration, *px.views(keep), px.T_base_ee_meas[keep])
    truth = {"parameters": {n: float(v) for n, v in zip(INTRINSIC_NAMES, px.intrinsics)},
             "poses": {"X": pose_json(px.X), "Y": pose_json(px.Y)}}  # fmt: skip
    return obs, truth


#: Pixel noise [px] of generated fisheye corners: the plane-fit RMS of the corners OpenCV's detector finds in the
#: real kuka_1 images (0.078 px, docs/images.md), rounded.
DETECTOR_STD_PX = 0.08


@dataclass(frozen=True)
class FisheyeLens:
    """A generated wide-angle camera: image size [px], the intrinsics (the fisheye's ``(fx, fy, cx, cy, k1, k2, k3,
    k4)`` or the rational model's twelve, :mod:`kinhec.models.intrinsics`) and the field of view [deg] (full angle:
    no corner further than half of it off the axis is seen)."""

    name: str
    image_size: tuple
    intrinsics: tuple
    fov_deg: float


def _lens(name: str, fov_deg: float, radius_px: float, k) -> FisheyeLens:
    """A 1280 x 1024 fisheye whose field's edge (``fov_deg / 2`` off the axis) lands ``radius_px`` from the centre."""
    t = np.radians(fov_deg / 2.0)
    td = t * (1.0 + k[0] * t**2 + k[1] * t**4 + k[2] * t**6 + k[3] * t**8)
    f = radius_px / td
    return FisheyeLens(name, (1280, 1024), (f, 1.002 * f, 641.3, 509.2, *k), fov_deg)


#: Generated fisheye lenses on a 1280 x 1024 sensor: a 120 deg lens whose field covers the image to its corners (the
#: field's edge at the half diagonal, 820 px), and a 180 deg circular fisheye whose image circle fits the height.
FISHEYE_LENSES = {
    "fisheye_120": _lens("fisheye_120", 120.0, 819.6, (-0.012, 0.004, -0.0011, 0.0002)),
    "fisheye_180": _lens("fisheye_180", 180.0, 507.0, (0.025, -0.006, 0.0012, -0.0001)),
}


def _rational_lens(name: str, fov_deg: float, radius_px: float, d) -> FisheyeLens:
    """A 1280 x 1024 camera of OpenCV's rational model ``d = (k1, k2, p1, p2, k3, k4, k5, k6)`` whose field's edge
    (``fov_deg / 2`` off the axis, below 90 deg) lands ``radius_px`` from the centre (the radial part alone)."""
    r2 = np.tan(np.radians(fov_deg / 2.0)) ** 2
    g = (1.0 + r2 * (d[0] + r2 * (d[1] + r2 * d[4]))) / (1.0 + r2 * (d[5] + r2 * (d[6] + r2 * d[7])))
    f = radius_px / (np.sqrt(r2) * g)
    return FisheyeLens(name, (1280, 1024), (f, 1.002 * f, 641.3, 509.2, *d), fov_deg)


#: A generated wide-angle lens of OpenCV's rational model on a 1280 x 1024 sensor: 120 deg, its field covering the
#: image to its corners as ``fisheye_120``'s; a strong denominator (``k4 k5 k6``) and decentring of about 1 px at
#: the field's edge.
RATIONAL_LENSES = {
    "rational_120": _rational_lens("rational_120", 120.0, 819.6, (2.0, 0.3, 2e-4, -1.5e-4, -0.01, 2.3, 0.8, 0.02)),
}


def fisheye_observations_from_recipe(recipe, lens: str = "fisheye_180", *, pixel_std: float = DETECTOR_STD_PX,
                                     seed: int | None = None, tilt_deg: float = 0.0) -> tuple[ObservationSet, dict]:  # fmt: skip
    """The views of a generated sequence (its true target poses and measured robot poses) through a wide-angle lens.

    The target points are projected exactly with the lens of :data:`FISHEYE_LENSES` or :data:`RATIONAL_LENSES`
    (:func:`kinhec.models.intrinsics.project_points`) and Gaussian noise of ``pixel_std`` [px] per axis is added (its own stream, seeded by
    ``seed``, default the recipe's seed).  A corner is kept when it lies within the lens's field and inside the
    image with the generator's visibility margin; a view with fewer than 4 corners is left out.  The sequence must
    be synchronous (one robot pose per camera frame).

    The generator aims its pinhole camera at the target, which a fisheye then sees near its centre.
    ``tilt_deg`` mounts the fisheye turned by that angle [deg] about its ``x`` axis against the recipe's camera
    (the camera's part of ``X`` or ``Y`` turned with it), so that the target lies that far off the axis, towards
    the edge of the field where the lens's distortion is largest.

    Returns
    -------
    (ObservationSet, dict)
        The observations (``distortion_model`` the lens's: ``equidistant`` or ``rational``) and the truth:
        ``{"parameters": {fx, fy, cx, cy, k1, ...}, "poses": {"X": pose, "Y": pose}}`` (the lens's intrinsics named
        as :func:`kinhec.models.intrinsics.intrinsic_names` names them).
    """
    lenses = {**FISHEYE_LENSES, **RATIONAL_LENSES}
    if lens not in lenses:
        raise InputError(f"lens: expected one of {', '.join(lenses)}, got {lens!r}")
    if not (np.isfinite(pixel_std) and pixel_std >= 0):
        raise InputError(f"pixel_std: expected a finite standard deviation >= 0 [px], got {pixel_std!r}")
    r = as_recipe(recipe)
    g = simulate(r)
    if not g.clocks.same_clock or g.T_base_ee_meas.shape[0] != g.T_cam_target_gt.shape[0]:
        raise InputError(f"recipe {r.sequence_id}: expected a synchronous sequence (one robot pose per camera frame)")
    L = lenses[lens]
    k = np.asarray(L.intrinsics, dtype=np.float64)
    pts = get_target(r.target).points_m
    a = np.radians(float(tilt_deg))
    M = np.eye(4)  # the fisheye's frame from the recipe camera's
    M[1:3, 1:3] = [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]
    p = to_camera(M @ g.T_cam_target_gt, pts)
    uv = project_points(k, p)
    theta = np.arctan2(np.hypot(p[..., 0], p[..., 1]), p[..., 2])
    w, h = L.image_size
    m = VISIBILITY_MARGIN_PX
    seen = ((theta <= np.radians(L.fov_deg / 2.0)) & (uv[..., 0] >= m) & (uv[..., 0] <= w - 1 - m)
            & (uv[..., 1] >= m) & (uv[..., 1] <= h - 1 - m))  # fmt: skip
    rng = np.random.default_rng([int(r.seed if seed is None else seed), 0xF15E])
    uv = uv + float(pixel_std) * rng.standard_normal(uv.shape)
    keep = np.flatnonzero(seen.sum(axis=1) >= 4)
    obs = ObservationSet("cam0", L.image_size, r.configuration, [pts[seen[i]] for i in keep],
                         [uv[i, seen[i]] for i in keep], g.T_base_ee_meas[keep], distortion_model=model_of(k))  # fmt: skip
    # the camera's pose in the chain turned with it: eye-in-hand inv(A X) Y, eye-to-hand inv(Y) A X
    Minv = se3.invert_transform(M)
    X, Y = (g.X @ Minv, g.Y) if r.configuration == "eye_in_hand" else (g.X, g.Y @ Minv)
    truth = {"parameters": {n: float(v) for n, v in zip(intrinsic_names(k), k)},
             "poses": {"X": pose_json(X), "Y": pose_json(Y)}}  # fmt: skip
    return obs, truth
