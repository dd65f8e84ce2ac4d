"""Your own arm: a robot model from a DH-table YAML or from a URDF.

Both readers return a :class:`kinhec.models.robots.RobotModel`, the type of kinhec's preset arms, so forward
kinematics, the Jacobian, inverse kinematics and the joint limits work the same way.

DH-table YAML
-------------
One mapping (lengths in metres, angles in degrees)::

    name: my_arm                 # optional (default: the file's stem)
    convention: standard         # required: standard or modified
    base_frame: base             # optional: the name of the frame the table starts in
    joints:                      # required: one entry per joint, from the base to the flange
      - name: shoulder_pan_joint # optional (default j1, j2, ...)
        a_m: 0.0
        alpha_deg: 90.0
        d_m: 0.1625
        theta_offset_deg: 0.0    # optional (default 0): theta = sign * q + theta_offset
        sign: 1                  # optional (default 1): -1 for a joint counted against the table's z
        limits_deg: [-360, 360]  # required: the joint limits
        max_speed_deg_s: 180     # optional (default 90)
      - name: z_stroke           # a prismatic joint (type: revolute is the default)
        type: prismatic
        a_m: 0.0
        alpha_deg: 0.0
        d_m: 0.0                 # the offset: the joint's d is d_m + sign * q, q in metres
        theta_offset_deg: 0.0    # optional: the joint's constant theta
        limits_m: [-0.2, 0.0]    # required for a prismatic joint: the stroke [m]
        max_speed_m_s: 1.0       # optional (default 0.25)
    tool:                        # optional: last DH frame -> flange, xyz [m] then roll, pitch, yaw [deg]
      xyz_m: [0, 0, 0]           #   (URDF's rpy: R = Rz(yaw) Ry(pitch) Rx(roll)), or a 4x4 matrix under matrix:
      rpy_deg: [0, 0, 0]
    home_deg: [0, -90, 90, -90, -90, 0]  # optional: where IK starts and the path begins (metres for a prismatic joint)
    reach_m: 0.85                # optional: working radius (default: measured on the model)

``standard`` is ``T_{i-1,i} = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``; ``modified`` (Craig's) is
``T_{i-1,i} = Rx(alpha_i) Tx(a_i) Rz(theta_i) Tz(d_i)``, row ``i`` holding Craig's ``alpha_{i-1}, a_{i-1}``.
A prismatic joint has the constant ``theta_i = theta_offset`` and the variable ``d_i = d_m + sign * q`` [m]; it
takes ``limits_m`` and ``max_speed_m_s`` (``limits_deg`` and ``max_speed_deg_s`` are refused on it, and the other
way round).

URDF
----
:func:`robot_from_urdf` walks the kinematic tree from ``base_link`` to ``tip_link`` and writes the chain as
constant transforms around rotations about z (``convention="chain"``, exact for any joint origin and axis):
``revolute`` and ``continuous`` joints become joints (limits from ``<limit>``, continuous ones +-360 deg,
speed caps from ``velocity``), ``prismatic`` joints slide along their axis (``T = O A Tz(q) A^T``; limits [m] from
``<limit>``, which they must have, speed caps [m/s] from ``velocity``, default 0.25 m/s), ``fixed`` joints fold
into the constants.  ``floating`` and ``planar`` joints and ``<mimic>`` joints on the path are refused.  Parsing
uses ``yourdfpy`` (the ``robots`` extra).  The base frame is ``base_link``, the flange ``tip_link``; the joints
keep their URDF names.

Without ``home_deg`` (DH) or for a URDF, home is, of :data:`N_SAMPLES` fixed random configurations whose joint
frames all stay above the first, the one nearest to the middle of the limits among those whose Jacobian (translation
rows divided by the arm's size) has a condition number within 1.5 times the best; without ``reach_m`` the reach is the largest
distance between the first joint frame and the flange over the same samples.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from kinhec.models.robots import RobotModel, get_robot
from kinhec.util.errors import InputError
from kinhec.util.optional import require

__all__ = ["DH_KEYS", "N_SAMPLES", "load_robot", "robot_from_dh_yaml", "robot_from_dh_dict", "robot_from_urdf",
           "rpy_matrix"]  # fmt: skip

#: The keys of a joint entry of a DH-table YAML.
DH_KEYS = ("name", "type", "a_m", "alpha_deg", "d_m", "theta_offset_deg", "sign", "limits_deg", "max_speed_deg_s",
           "limits_m", "max_speed_m_s")
#: Random configurations (fixed seed) behind the default home and reach.
N_SAMPLES = 4096
_SAMPLE_SEED = 5050
#: Speed cap [deg/s] of a joint whose file states none.
DEFAULT_SPEED_DEG_S = 90.0
#: Speed cap [m/s] of a prismatic joint whose file states none.
DEFAULT_SPEED_M_S = 0.25
#: Limits [deg] of a continuous URDF joint.
CONTINUOUS_LIMIT_DEG = 360.0
_CONTROL_RATE_HZ = 125.0


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """Rotation ``Rz(yaw) Ry(pitch) Rx(roll)`` [rad] (URDF's rpy)."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw),
                              math.sin(yaw))  # fmt: skip
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])  # fmt: skip


def load_robot(robot, *, base_link: str | None = None, tip_link: str | None = None) -> RobotModel:
    """A robot from a preset name, a DH-table YAML (``.yaml``/``.yml``) or a URDF (``.urdf``/``.xml``, or any
    file given with ``base_link`` and ``tip_link``, which a URDF needs); a model is returned as it is.
    """
    if isinstance(robot, RobotModel):
        return robot
    if isinstance(robot, Path) or (isinstance(robot, str) and (robot.lower().endswith((".yaml", ".yml", ".urdf", ".xml"))
                                                               or base_link or tip_link)):
        path = Path(robot)
        if path.suffix.lower() in (".urdf", ".xml") or base_link or tip_link:
            if not base_link or not tip_link:
                raise InputError(f"{path}: a URDF needs its base link and tip link (--base-link, --tip-link), got "
                                 f"base {base_link!r} and tip {tip_link!r}")  # fmt: skip
            return robot_from_urdf(path, base_link, tip_link)
        return robot_from_dh_yaml(path)
    return get_robot(robot)


# --------------------------------------------------------------------------- #
# DH-table YAML
# --------------------------------------------------------------------------- #
def robot_from_dh_yaml(path) -> RobotModel:
    """The arm a DH-table YAML describes (module docstring).

    Raises
    ------
    InputError
        A missing file, invalid YAML, a missing or malformed key (one line naming the file and what was expected).
    """
    import yaml

    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: expected a DH-table YAML, got no such file") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: expected a DH-table YAML, got invalid YAML ({' '.join(str(exc).split())})") from None
    try:
        return robot_from_dh_dict(doc, default_name=path.stem, source=str(path))
    except InputError as exc:
        msg = str(exc)
        raise InputError(msg if msg.startswith(str(path)) else f"{path}: {msg}") from None


def _number(v, what: str) -> float:
    if isinstance(v, bool):
        raise InputError(f"{what}: expected a number, got {v!r}")
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise InputError(f"{what}: expected a number, got {v!r}") from None
    if not math.isfinite(x):
        raise InputError(f"{what}: expected a finite number, got {v!r}")
    return x


def _numbers(v, n: int, what: str) -> list[float]:
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise InputError(f"{what}: expected a list of {n} numbers, got {v!r}")
    return [_number(x, what) for x in v]


def _tool(doc) -> np.ndarray:
    if doc is None:
        return np.eye(4)
    if not isinstance(doc, dict):
        raise InputError(f"tool: expected a mapping with xyz_m and rpy_deg (or matrix), got {doc!r}")
    T = np.eye(4)
    if "matrix" in doc:
        m = doc["matrix"]
        if not isinstance(m, list) or len(m) != 4:
            raise InputError(f"tool: matrix: expected 4 rows of 4 numbers, got {m!r}")
        T = np.array([_numbers(r, 4, "tool: matrix") for r in m])
        if np.abs(T[:3, :3] @ T[:3, :3].T - np.eye(3)).max() > 1e-6 or np.abs(T[3] - [0, 0, 0, 1]).max() > 0:
            raise InputError("tool: matrix: expected a rigid transform (orthonormal rotation, last row 0 0 0 1)")
        return T
    unknown = sorted(set(doc) - {"xyz_m", "rpy_deg"})
    if unknown:
        raise InputError(f"tool: expected the keys xyz_m and rpy_deg (or matrix), got {', '.join(map(str, unknown))}")
    T[:3, 3] = _numbers(doc.get("xyz_m", [0, 0, 0]), 3, "tool: xyz_m")
    T[:3, :3] = rpy_matrix(*np.radians(_numbers(doc.get("rpy_deg", [0, 0, 0]), 3, "tool: rpy_deg")))
    return T


def robot_from_dh_dict(doc, *, default_name: str = "dh_robot", source: str = "") -> RobotModel:
    """The arm of a parsed DH-table YAML document (see the module docstring)."""
    if not isinstance(doc, dict):
        raise InputError(f"expected a mapping with convention and joints (a DH-table YAML), got {type(doc).__name__}")
    known = {"name", "convention", "base_frame", "joints", "tool", "home_deg", "reach_m", "description"}
    unknown = sorted(map(str, set(doc) - known))
    if unknown:
        raise InputError(f"unknown key(s) {', '.join(unknown)}; expected {', '.join(sorted(known))}")
    conv = doc.get("convention")
    if conv not in ("standard", "modified"):
        raise InputError(f"convention: expected standard (Rz Tz Tx Rx) or modified (Craig: Rx Tx Rz Tz), got {conv!r}")
    joints = doc.get("joints")
    if not isinstance(joints, list) or not joints:
        raise InputError(f"joints: expected a list of joints (a_m, alpha_deg, d_m, limits_deg, ...), got {joints!r}")
    cols = {k: [] for k in DH_KEYS}
    for i, j in enumerate(joints, start=1):
        w = f"joints[{i}]"
        if not isinstance(j, dict):
            raise InputError(f"{w}: expected a mapping of {', '.join(DH_KEYS)}, got {j!r}")
        bad = sorted(map(str, set(j) - set(DH_KEYS)))
        if bad:
            raise InputError(f"{w}: unknown key(s) {', '.join(bad)}; expected {', '.join(DH_KEYS)}")
        kind = j.get("type", "revolute")
        if kind not in ("revolute", "prismatic"):
            raise InputError(f"{w}: type: expected revolute or prismatic, got {kind!r}")
        cols["type"].append(kind)
        lim_key, speed_key = ("limits_m", "max_speed_m_s") if kind == "prismatic" else ("limits_deg", "max_speed_deg_s")
        wrong = sorted({"limits_m", "max_speed_m_s", "limits_deg", "max_speed_deg_s"} - {lim_key, speed_key} & set(j))
        if wrong:
            raise InputError(f"{w}: a {kind} joint takes {lim_key} and {speed_key}, got {', '.join(wrong)}")
        for k in ("a_m", "alpha_deg", "d_m", lim_key):
            if k not in j:
                what = f"the key {k}" + (" (the stroke [lower, upper] in metres)" if k == "limits_m" else "")
                raise InputError(f"{w}: expected {what} for a {kind} joint, got keys {', '.join(map(str, j))}")
        cols["name"].append(str(j.get("name", f"j{i}")))
        for k in ("a_m", "alpha_deg", "d_m"):
            cols[k].append(_number(j[k], f"{w}: {k}"))
        cols["theta_offset_deg"].append(_number(j.get("theta_offset_deg", 0.0), f"{w}: theta_offset_deg"))
        sign = _number(j.get("sign", 1), f"{w}: sign")
        if sign not in (1.0, -1.0):
            raise InputError(f"{w}: sign: expected 1 or -1, got {j.get('sign')!r}")
        cols["sign"].append(sign)
        lo, hi = _numbers(j[lim_key], 2, f"{w}: {lim_key}")
        if not lo < hi:
            raise InputError(f"{w}: {lim_key}: expected [lower, upper] with lower < upper, got {j[lim_key]!r}")
        sp = _number(j.get(speed_key, DEFAULT_SPEED_M_S if kind == "prismatic" else DEFAULT_SPEED_DEG_S),
                     f"{w}: {speed_key}")  # fmt: skip
        if sp <= 0:
            raise InputError(f"{w}: {speed_key}: expected a speed > 0, got {sp!r}")
        to_si = (lambda v: v) if kind == "prismatic" else math.radians  # noqa: E731
        cols["limits_deg"].append((to_si(lo), to_si(hi)))  # SI from here on (rad or m)
        cols["max_speed_deg_s"].append(to_si(sp))
    n = len(joints)
    lim = np.asarray(cols["limits_deg"])
    prismatic = np.array([t == "prismatic" for t in cols["type"]])
    home = doc.get("home_deg")
    home_q = None if home is None else np.where(prismatic, _numbers(home, n, "home_deg"),
                                                np.radians(_numbers(home, n, "home_deg")))  # fmt: skip
    model = RobotModel(
        name=str(doc.get("name") or default_name), dof=n, convention=conv,
        a_m=np.asarray(cols["a_m"]), d_m=np.asarray(cols["d_m"]), alpha_rad=np.radians(cols["alpha_deg"]),
        theta_offset_rad=np.radians(cols["theta_offset_deg"]), joint_sign=np.asarray(cols["sign"]),
        q_min_rad=lim[:, 0], q_max_rad=lim[:, 1], qd_max_rad_s=np.asarray(cols["max_speed_deg_s"]),
        home_q_rad=np.zeros(n) if home is None else home_q, joint_types=tuple(cols["type"]),
        tool=_tool(doc.get("tool")), control_rate_hz=_CONTROL_RATE_HZ, reach_m=1.0, source=source,
        description=str(doc.get("description") or f"DH table ({conv}) from {source or 'a YAML document'}"),
        joint_names=tuple(cols["name"]), base_frame=str(doc.get("base_frame") or ""),
    )  # fmt: skip
    if home is not None and not model.within_limits(model.home_q_rad):
        raise InputError(f"home_deg: expected a configuration inside the joints' limits, got {home!r}")
    reach = doc.get("reach_m")
    if reach is not None and _number(reach, "reach_m") <= 0:
        raise InputError(f"reach_m: expected a length > 0 [m], got {reach!r}")
    return _with_home_and_reach(model, home is None, None if reach is None else float(reach))


def _with_home_and_reach(model: RobotModel, pick_home: bool, reach: float | None) -> RobotModel:
    """``model`` with the default home and reach of the module docstring where the file gives none."""
    import dataclasses

    rng = np.random.default_rng(_SAMPLE_SEED)
    lo, hi = model.q_min_rad, model.q_max_rad
    q = lo + (hi - lo) * rng.random((N_SAMPLES, model.dof))
    changes = {}
    if pick_home:
        frames = model.joint_frames(q)
        up = np.all(frames[:, 1:, 2, 3] >= frames[:, :1, 2, 3] - 1e-9, axis=-1)
        J = model.jacobian(q)
        scale = max(float(np.abs(frames[:, -1, :3, 3]).max()), 1e-3)
        J[:, 3:] /= scale
        s = np.linalg.svd(J, compute_uv=False)
        cond = s[:, 0] / np.maximum(s[:, -1], 1e-300)
        cond = np.where(up, cond, np.inf) if up.any() else cond
        good = np.flatnonzero(cond <= 1.5 * cond.min())  # of the well-conditioned, the nearest to mid-range
        mid = 0.5 * (lo + hi)
        changes["home_q_rad"] = q[good[int(np.argmin(np.linalg.norm(q[good] - mid, axis=-1)))]]
    if reach is None:
        home = changes.get("home_q_rad", model.home_q_rad)
        shoulder = model.joint_frames(home)[1, :3, 3]
        reach = float(np.linalg.norm(model.fk(q)[:, :3, 3] - shoulder, axis=-1).max())
        reach = max(reach, 1e-3)
    changes["reach_m"] = reach
    return dataclasses.replace(model, **changes)


# --------------------------------------------------------------------------- #
# URDF
# --------------------------------------------------------------------------- #
def _z_to(axis: np.ndarray) -> np.ndarray:
    """A rotation ``A`` with ``A @ z = axis`` (unit): exact for the coordinate axes."""
    u = axis / np.linalg.norm(axis)
    exact = {(0, 0, 1): np.eye(3), (0, 0, -1): np.diag([1.0, -1.0, -1.0]),
             (1, 0, 0): np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]]),
             (-1, 0, 0): np.array([[0.0, 0, -1], [0, 1, 0], [1, 0, 0]]),
             (0, 1, 0): np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]]),
             (0, -1, 0): np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])}  # fmt: skip
    key = tuple(int(v) for v in np.round(u)) if np.allclose(u, np.round(u), atol=0, rtol=0) else None
    if key in exact:
        return exact[key]
    helper = np.array([1.0, 0.0, 0.0]) if abs(u[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, u)
    x /= np.linalg.norm(x)
    y = np.cross(u, x)
    return np.column_stack([x, y, u])


def robot_from_urdf(path, base_link: str, tip_link: str, *, name: str | None = None) -> RobotModel:
    """The arm from ``base_link`` to ``tip_link`` of a URDF (module docstring).

    Raises
    ------
    InputError
        An unreadable URDF, a base or tip that is not a link, no path from the base to the tip, a joint on the
        path that is not revolute, continuous, prismatic (with limits) or fixed, or a mimic joint.
    MissingDependencyError
        yourdfpy is not installed (the ``robots`` extra).
    """
    path = Path(path)
    yourdfpy = require("yourdfpy", f"{path}: reading a URDF")
    if not path.is_file():
        raise InputError(f"{path}: expected a URDF file, got no such file")
    try:
        urdf = yourdfpy.URDF.load(str(path), build_scene_graph=False, load_meshes=False,
                                  build_collision_scene_graph=False, load_collision_meshes=False)  # fmt: skip
    except Exception as exc:  # lxml and yourdfpy raise many types on a malformed file
        raise InputError(f"{path}: expected a URDF (XML robot description), got one that does not parse "
                         f"({' '.join(str(exc).split())[:200]})") from None
    links = [lk.name for lk in urdf.robot.links]
    for which, link in (("base link", base_link), ("tip link", tip_link)):
        if link not in links:
            raise InputError(f"{path}: expected the {which} to be one of the URDF's {len(links)} links "
                             f"({', '.join(links[:12])}{', ...' if len(links) > 12 else ''}), got {link!r}")  # fmt: skip
    by_child = {j.child: j for j in urdf.robot.joints}
    path_joints, link = [], tip_link
    while link != base_link:
        j = by_child.get(link)
        if j is None:
            raise InputError(f"{path}: expected a chain of joints from the base link {base_link!r} down to the tip "
                             f"link {tip_link!r}, got no path ({tip_link!r} does not hang below {base_link!r})")
        path_joints.append(j)
        link = j.parent
    path_joints.reverse()
    blocks, names, lo, hi, speed, types = [], [], [], [], [], []
    pending = np.eye(4)
    for j in path_joints:
        origin = np.eye(4) if j.origin is None else np.asarray(j.origin, dtype=np.float64)
        if j.type == "fixed":
            pending = pending @ origin
            continue
        if j.type not in ("revolute", "continuous", "prismatic"):
            raise InputError(f"{path}: joint {j.name!r} is {j.type}; expected revolute, continuous, prismatic or fixed "
                             f"joints between {base_link!r} and {tip_link!r}")  # fmt: skip
        if getattr(j, "mimic", None) is not None:
            raise InputError(f"{path}: joint {j.name!r} mimics another joint; expected independent joints between "
                             f"{base_link!r} and {tip_link!r}")  # fmt: skip
        axis = np.array([1.0, 0.0, 0.0]) if j.axis is None else np.asarray(j.axis, dtype=np.float64)
        if not np.isfinite(axis).all() or np.linalg.norm(axis) < 1e-12:
            raise InputError(f"{path}: joint {j.name!r}: expected a non-zero axis, got {axis.tolist()}")
        A = np.eye(4)
        A[:3, :3] = _z_to(axis)
        blocks.append(pending @ origin @ A)
        pending = A.T.copy()
        pending[:3, 3] = 0.0
        lim = getattr(j, "limit", None)
        if j.type == "prismatic" and (lim is None or lim.lower is None or lim.upper is None):
            raise InputError(f"{path}: joint {j.name!r} is prismatic without <limit lower= upper=>; expected its "
                             f"stroke in metres")  # fmt: skip
        if j.type == "continuous" or lim is None or lim.lower is None or lim.upper is None:
            a, b = -math.radians(CONTINUOUS_LIMIT_DEG), math.radians(CONTINUOUS_LIMIT_DEG)
        else:
            a, b = float(lim.lower), float(lim.upper)
        if not a < b:
            raise InputError(f"{path}: joint {j.name!r}: expected limits lower < upper, got {a:g} and {b:g}")
        v = None if lim is None else lim.velocity
        names.append(j.name)
        lo.append(a)
        hi.append(b)
        default = DEFAULT_SPEED_M_S if j.type == "prismatic" else math.radians(DEFAULT_SPEED_DEG_S)
        speed.append(float(v) if v is not None and float(v) > 0 else default)
        types.append("prismatic" if j.type == "prismatic" else "revolute")
    if not names:
        raise InputError(f"{path}: expected at least one revolute, continuous or prismatic joint between "
                         f"{base_link!r} and {tip_link!r}, got only fixed joints")  # fmt: skip
    blocks.append(pending)
    n = len(names)
    z = np.zeros(n)
    model = RobotModel(
        name=name or f"{urdf.robot.name or path.stem}", dof=n, convention="chain", a_m=z, d_m=z, alpha_rad=z,
        theta_offset_rad=z, joint_sign=np.ones(n), q_min_rad=np.asarray(lo), q_max_rad=np.asarray(hi),
        qd_max_rad_s=np.asarray(speed), home_q_rad=np.clip(z, lo, hi), tool=np.eye(4),
        control_rate_hz=_CONTROL_RATE_HZ, reach_m=1.0, source=f"{path} ({base_link} -> {tip_link})",
        description=f"URDF chain {base_link} -> {tip_link} of {path.name}", joint_names=tuple(names),
        base_frame=base_link, chain=np.asarray(blocks), joint_types=tuple(types),
    )  # fmt: skip
    return _with_home_and_reach(model, True, None)
