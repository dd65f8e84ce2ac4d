"""Point observation sets: a depth camera's 3D points of the target and the robot pose of each view, as JSON.

The counterpart of :mod:`kinhec.synth.observations` (the corners' file of
``kinhec calibrate --corners``) for cameras that measure the target's points in
3D (``kinhec calibrate --points``)::

    {
      "version": 1,
      "cameras": [{"id": "depth0"}],
      "problem": "single_cam_handeye_points",
      "target": "chessboard:9x6:0.025",
      "input": {
        "mode": "eye_in_hand",
        "views": [
          {"obs": {"points_cam": [[x, y, z], ...], "ids": [0, 1, ...]},
           "meta": {"base_se3_gripper": {"rotation": [qx, qy, qz, qw], "translation": [x, y, z]}}}
        ]
      }
    }

* ``points_cam`` are the measured points [m] in the camera frame: the
  optical centre of the camera that produced them, ``z`` along its optical
  axis (positive in front), ``x`` right, ``y`` down.
* The model points they measure, in the target's frame [m]: per view
  ``points_3d`` (one per measured point, as in the corners' file), or the
  ``target`` spec (``chessboard:COLSxROWS:SQUARE_M``, ...; also
  ``--target``) with per view ``ids`` (its point ids, one per measured point)
  or none (every point of the target, in id order).
* ``base_se3_gripper`` is the flange pose ``T_base_ee`` of the view (scalar-last
  quaternion, metres): views and robot poses are paired by the file itself,
  one pose per view.  ``mode`` is ``eye_in_hand`` or ``eye_to_hand``.

:func:`generate_point_recording` draws such a recording with the depth noise
of :mod:`kinhec.models.depth_noise`, from an explicit seed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.models.depth_noise import check_noise, sample_point_noise
from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.util.fsutil import atomic_write_text

__all__ = ["PointObservationSet", "PROBLEM", "read_point_observations", "point_observations_from_json",
           "point_observations_to_json", "write_point_observations", "generate_point_recording"]

#: The ``problem`` of a point observation file.
PROBLEM = "single_cam_handeye_points"
_MODES = ("eye_in_hand", "eye_to_hand")


@dataclass(frozen=True)
class PointObservationSet:
    """One depth camera's views of a target with the robot pose of each view.

    Attributes
    ----------
    camera_id : str
    mode : {"eye_in_hand", "eye_to_hand"}
    points_cam : list of ndarray, each (P_i, 3)
        Measured points in the camera frame [m].
    T_base_ee : ndarray, shape (N, 4, 4)
    points_3d : list of (ndarray (P_i, 3) or None)
        The model points of each view in the target frame [m]; None where they come from ``target``.
    ids : list of (ndarray (P_i,) of int or None)
        The target's point ids of each view (None: every point in id order, or ``points_3d`` given).
    target : str or None
        The target's spec, when the file (or the caller) names it.
    """

    camera_id: str
    mode: str
    points_cam: list
    T_base_ee: np.ndarray
    points_3d: list = field(default_factory=list)
    ids: list = field(default_factory=list)
    target: str | None = None

    @property
    def n_views(self) -> int:
        return len(self.points_cam)


def _pose_json(T) -> dict:
    p, q = se3.pq_from_transform(np.asarray(T, dtype=np.float64), check=False)
    q = se3.canonical_quaternion(q)
    return {"rotation": [float(q[1]), float(q[2]), float(q[3]), float(q[0])], "translation": [float(v) for v in p]}


def _pose(d, where: str) -> np.ndarray:
    try:
        q = np.asarray(d["rotation"], dtype=np.float64)
        p = np.asarray(d["translation"], dtype=np.float64)
    except (KeyError, TypeError, ValueError):
        raise DatasetFormatError(f"{where}: expected {{rotation: [qx, qy, qz, qw], translation: [x, y, z]}}, got "
                                 f"{str(d)[:80]}") from None
    n = float(np.linalg.norm(q)) if q.shape == (4,) else float("nan")
    if q.shape != (4,) or p.shape != (3,) or not abs(n - 1.0) < 1e-6 or not np.isfinite(p).all():
        raise DatasetFormatError(f"{where}: expected a unit quaternion [qx, qy, qz, qw] and a translation [x, y, z], "
                                 f"got shapes {q.shape}, {p.shape} and |q| = {n:.9g}")
    return se3.transform_from_pq(p, np.array([q[3], q[0], q[1], q[2]]), normalize=True)


def _array(values, where: str, dim: int | None = 3) -> np.ndarray:
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        a = None
    if dim is None:
        if a is None or a.ndim != 1 or not np.isfinite(a).all() or np.any(a != np.round(a)) or np.any(a < 0):
            raise DatasetFormatError(f"{where}: expected a list of point ids (whole numbers >= 0), got "
                                     f"{str(values)[:80]}")
        return a.astype(int)
    if a is None or a.ndim != 2 or a.shape[1] != dim or not np.isfinite(a).all():
        shape = "a malformed list" if a is None else f"shape {a.shape}" + ("" if np.isfinite(a).all() else " with NaN")
        raise DatasetFormatError(f"{where}: expected a list of [x, y, z] points [m], got {shape}")
    return a


def point_observations_from_json(doc, where: str = "points") -> PointObservationSet:
    """The set a point observation document holds (see the module doc); ``where`` names it in errors."""
    if not isinstance(doc, dict) or "input" not in doc:
        got = f"the keys {', '.join(list(doc)[:6])}" if isinstance(doc, dict) else f"a JSON {type(doc).__name__}"
        raise DatasetFormatError(f"{where}: not a point observation JSON: expected the keys version, cameras, problem, "
                                 f"input (problem {PROBLEM}), got {got}")
    if doc.get("problem", PROBLEM) != PROBLEM:
        hint = " (a corners' file: use --corners)" if doc.get("problem") == "single_cam_handeye" else ""
        raise DatasetFormatError(f"{where}: $.problem: expected {PROBLEM!r}, got {doc.get('problem')!r}{hint}")
    cams = doc.get("cameras") or [{"id": "cam0"}]
    if not isinstance(cams, list) or len(cams) != 1 or not isinstance(cams[0], dict):
        raise DatasetFormatError(f"{where}: $.cameras: expected one camera, got {str(cams)[:80]}")
    inp = doc["input"]
    mode = inp.get("mode") if isinstance(inp, dict) else None
    if mode not in _MODES:
        raise DatasetFormatError(f"{where}: $.input.mode: expected eye_in_hand or eye_to_hand, got {mode!r}")
    views = inp.get("views")
    if not isinstance(views, list) or not views:
        raise DatasetFormatError(f"{where}: $.input.views: expected a list of views, got {str(views)[:80]}")
    target = doc.get("target")
    if target is not None and not isinstance(target, str):
        raise DatasetFormatError(f"{where}: $.target: expected a target spec string, got {target!r}")
    pc, p3, ids, T = [], [], [], []
    for i, v in enumerate(views):
        at = f"{where}: $.input.views[{i}]"
        obs = v.get("obs") if isinstance(v, dict) else None
        if not isinstance(obs, dict) or "points_cam" not in obs:
            raise DatasetFormatError(f"{at}.obs: expected {{points_cam: [[x, y, z], ...], ...}}, got {str(obs)[:80]}")
        m = _array(obs["points_cam"], f"{at}.obs.points_cam")
        pc.append(m)
        for key, dim, out in (("points_3d", 3, p3), ("ids", None, ids)):  # optional, one entry per point
            a = _array(obs[key], f"{at}.obs.{key}", dim) if key in obs else None
            if a is not None and a.shape[0] != m.shape[0]:
                raise DatasetFormatError(f"{at}.obs: expected as many {key} as points_cam, got {a.shape[0]} and "
                                         f"{m.shape[0]}")
            out.append(a)
        meta = v.get("meta") if isinstance(v, dict) else None
        if not isinstance(meta, dict) or "base_se3_gripper" not in meta:
            raise DatasetFormatError(f"{at}.meta: expected the view's robot pose base_se3_gripper, got "
                                     f"{str(meta)[:80]}")
        T.append(_pose(meta["base_se3_gripper"], f"{at}.meta.base_se3_gripper"))
    return PointObservationSet(str(cams[0].get("id", "cam0")), mode, pc, np.stack(T), p3, ids, target)


def read_point_observations(path) -> PointObservationSet:
    """Read a point observation file (see the module doc), errors naming the file and the JSON path."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise DatasetFormatError(f"{path}: expected a point observation file, got no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetFormatError(f"{path}: expected JSON, got {exc}") from None
    return point_observations_from_json(doc, str(path))


def point_observations_to_json(obs: PointObservationSet) -> dict:
    """The JSON document of a point observation set (full precision)."""
    views = []
    for i, m in enumerate(obs.points_cam):
        o = {"points_cam": np.asarray(m, dtype=np.float64).tolist()}
        if i < len(obs.points_3d) and obs.points_3d[i] is not None:
            o["points_3d"] = np.asarray(obs.points_3d[i], dtype=np.float64).tolist()
        if i < len(obs.ids) and obs.ids[i] is not None:
            o["ids"] = [int(k) for k in obs.ids[i]]
        views.append({"obs": o, "meta": {"base_se3_gripper": _pose_json(obs.T_base_ee[i])}})
    doc = {"version": 1, "cameras": [{"id": obs.camera_id}], "problem": PROBLEM}
    if obs.target is not None:
        doc["target"] = obs.target
    doc["input"] = {"mode": obs.mode, "views": views}
    return doc


def write_point_observations(path, obs: PointObservationSet) -> Path:
    """Write ``obs`` as a point observation file; returns the path."""
    path = Path(path)
    atomic_write_text(path, json.dumps(point_observations_to_json(obs)))
    return path


def _look_at(rng, centre, depth, cone_rad):
    """Camera poses in the target frame ``T_target_cam`` (n, 4, 4): at ``depth`` from ``centre`` on the viewer's
    side (the target's ``-z``), within ``cone_rad`` of the normal, optical axis at ``centre``, a random roll."""
    n = depth.size
    dirs = se3.random_axes_in_cone(rng, n, np.array([0.0, 0.0, -1.0]), cone_rad)
    pos = centre + depth[:, None] * dirs
    z = -dirs
    tmp = np.where(np.abs(z[:, [0]]) < 0.9, np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    x = np.cross(tmp, z)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    y = np.cross(z, x)
    R = np.stack([x, y, z], axis=-1) @ se3.so3_exp(np.c_[np.zeros((n, 2)), rng.uniform(-np.pi, np.pi, n)])
    T = np.broadcast_to(np.eye(4), (n, 4, 4)).copy()
    T[:, :3, :3], T[:, :3, 3] = R, pos
    return T


def generate_point_recording(setup: str, model_points, *, seed: int, n_views: int = 20, noise=(2e-3, 1.5e-3),
                             depth_m=(0.5, 1.2), cone_deg: float = 40.0, target: str | None = None):  # fmt: skip
    """A recording of a depth camera's points of a target and the flange poses, with its ground truth.

    Parameters
    ----------
    setup : {"eye_in_hand", "eye_to_hand"}
    model_points : array_like, shape (P, 3)
        The target's points in its frame [m] (e.g. a chessboard's corners, ``z = 0``, viewed from ``-z``).
    seed : int
        Seed of every draw (``X``, ``Y``, the views, the noise).
    n_views : int
    noise : (float, float)
        ``(a, b)`` of :mod:`kinhec.models.depth_noise` (defaults: 2 mm along the ray and 1.5 mm across it at 1 m).
    depth_m : (float, float)
        Range of the camera's distance to the target's centre [m] (uniform).
    cone_deg : float
        Largest angle between the view direction and the target's normal.
    target : str, optional
        The target's spec, written to the file (with every point in id order) instead of the model points.

    Returns
    -------
    obs : PointObservationSet
    truth : dict
        ``X``, ``Y`` (4, 4), ``C`` (N, 4, 4) the true ``T_cam_target`` and ``points_true`` (N, P, 3).
    """
    if setup not in _MODES:
        raise InputError(f"setup: expected eye_in_hand or eye_to_hand, got {setup!r}")
    a, b = check_noise(noise)
    P = np.asarray(model_points, dtype=np.float64)
    rng = np.random.default_rng(seed)
    rot = se3.random_rotations(rng, 2)
    X = se3.transform_from_rotation_translation(rot[0], rng.normal(0.0, 0.05, 3) + [0.0, 0.0, 0.1])
    Y = se3.transform_from_rotation_translation(rot[1], rng.normal(0.0, 0.2, 3) + [0.8, 0.0, 0.3])
    depth = rng.uniform(depth_m[0], depth_m[1], n_views)
    T_target_cam = _look_at(rng, P.mean(axis=0), depth, np.radians(cone_deg))
    C = se3.invert_transform(T_target_cam, check=False)
    Xi = se3.invert_transform(X, check=False)
    # eye-in-hand C = inv(A X) Y, so A = Y inv(C) inv(X); eye-to-hand C = inv(Y) A X, so A = Y C inv(X)
    A = Y @ (T_target_cam if setup == "eye_in_hand" else C) @ Xi
    q = np.einsum("nij,pj->npi", C[:, :3, :3], P) + C[:, None, :3, 3]
    meas = q + sample_point_noise(rng, q, (a, b))
    n = n_views
    obs = PointObservationSet("depth0", setup, list(meas), A,
                              [None] * n if target is not None else [P.copy() for _ in range(n)], [None] * n, target)
    return obs, {"X": X, "Y": Y, "C": C, "points_true": q}
