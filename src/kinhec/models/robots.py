"""Manipulator models: Denavit-Hartenberg kinematics, Jacobians and inverse kinematics.

The benchmark uses thirteen serial arms with published kinematics plus ``free6d``,
a free-floating end-effector without a kinematic chain (Cartesian trajectory
families).  Each arm is a :class:`RobotModel`: a DH table, joint limits, joint
speed caps, a home configuration, the controller rate and an optional fixed tool
transform after the last joint.

kinhec also models three reduced-DOF machines that the published model table and
tiers do not carry (:data:`MACHINE_NAMES`): ``scara_ls6`` (an Epson LS6-B602S
SCARA, DH with a prismatic joint), ``palletiser_irb460`` (an ABB IRB 460 4-axis
palletiser, a chain whose parallelograms are a linear ``coupling`` of passive
joints) and ``gantry_xyzr`` (a Cartesian gantry, three prismatic joints and a
turn).  Their flanges stay level: every motion turns about the vertical only.

Conventions
-----------
* Joint ``i`` (1-based in the formulas, 0-based in the arrays) has the angle
  ``theta_i = joint_sign[i] * q[i] + theta_offset_rad[i]`` [rad].
* A prismatic joint (``joint_types[i] == "prismatic"``) slides along its z axis instead: DH joints have the
  constant angle ``theta_i = theta_offset_rad[i]`` and the length ``d_i = d_m[i] + joint_sign[i] * q[i]``
  [m]; in a chain, ``Rz(theta)`` becomes ``Tz(joint_sign * q)``.  Its position, limits and home are in metres
  and its speed cap in m/s, stored in the same ``_rad`` arrays; its Jacobian column is ``(0, axis)``.
* A chain may carry a ``coupling`` ``M`` ``(m, dof)``: its ``m`` joint angles are ``M @ theta`` (passive joints
  driven by a linkage, e.g. the parallelograms that keep a palletiser's flange level), and the Jacobian is the
  chain's times ``M diag(joint_sign)``.
* Standard DH: ``T_{i-1,i} = Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``.
* Modified (Craig) DH: ``T_{i-1,i} = Rx(alpha_i) Tx(a_i) Rz(theta_i) Tz(d_i)``,
  where row ``i`` of the table holds the ``alpha_{i-1}, a_{i-1}`` of Craig's book.
* A general chain (``convention="chain"``, e.g. read from a URDF by
  :mod:`kinhec.models.robot_files`): ``T_base_ee = C_0 Rz(theta_1) C_1 ... Rz(theta_n) C_n @ tool`` with
  the constant transforms ``C_k`` given as ``chain`` (shape ``(dof + 1, 4, 4)``); a joint turning about any
  axis ``u`` through a joint origin ``O`` is ``O A Rz(theta) A^T`` with ``A`` any rotation taking ``z`` to
  ``u``, so every revolute chain has this form exactly.  The DH arrays of such a model are zeros.
* The base frame is the frame of the manufacturer's DH table (``base_frame`` names it when known; for the
  Universal Robots arms UR's ``base``, which ROS's ``ur_description`` calls ``base`` and which is turned by
  180 deg about z from ROS's ``base_link``).
* The flange pose is ``T_base_ee = T_{0,1} ... T_{n-1,n} @ tool``; ``ee`` is the
  robot flange (tool0), the frame every hand-eye transform ``X`` is attached to.
* The geometric Jacobian ``J`` (``(6, dof)``, base frame) has rows
  ``(omega, v)``, rotation first like the twists of :mod:`kinhec.geometry.se3`: ``omega`` is
  the angular velocity of the flange and ``v`` the linear velocity of the flange
  origin, both in the base frame, per unit joint velocity ``dq``.
* Lengths in metres, angles in radians internally; :meth:`RobotModel.to_dict`
  writes angles in degrees like the published tables.

Implementation
--------------
Because ``Rz(theta)`` and ``Tz(d)`` commute, every joint is "constant transform,
rotation about the local z axis, constant transform", and the whole chain is
``C_0 Rz(theta_1) C_1 Rz(theta_2) ... Rz(theta_n) C_n`` with constant 3x4 blocks
``C_k`` (the tool folded into ``C_n``).  Forward kinematics evaluates this product
for all configurations at once, one joint at a time, on the columns of the
accumulated 3x4 block stored as ``(3, n)`` arrays: right-multiplying by
``Rz(theta)`` mixes two columns with ``cos``/``sin``, and right-multiplying by a
constant block is a linear combination that skips the zero entries of the DH
constants.  Configurations are processed in cache-sized chunks.  The axis of joint
``i`` is the z column and a point on it the translation column of the
accumulator just before ``Rz(theta_i)``, so the Jacobian comes out of the same pass.

Sources of the numbers: the manufacturers' DH tables and specifications named in
each model's ``source`` field (Universal Robots DH article, Franka Control
Interface documentation, KUKA LBR iiwa specification with the iiwa_stack URDF,
ABB IRB 120 product specification, P. Corke's Robotics Toolbox PUMA 560 model; for the machines the Epson
LS6-B602S specification sheet and the ABB IRB 460 product specification).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError, UnknownNameError

__all__ = [
    "RobotModel",
    "IKResult",
    "ROBOT_NAMES",
    "MACHINE_NAMES",
    "get_robot",
    "robots_json",
]

#: Configurations per chunk in forward kinematics (keeps the temporaries in cache).
FK_CHUNK = 8192
#: Largest joint step [rad] of one damped-least-squares iteration.
IK_MAX_STEP_RAD = 0.5
#: Uniform draws per random restart; the one closest to the target pose is the start.
IK_SEED_CANDIDATES = 16
_IK_LAMBDA_MIN = 1e-6
_IK_LAMBDA_MAX = 1e3
#: An attempt is abandoned when its cost fell by less than 1 % over this many iterations.
_IK_STALL_WINDOW = 10
_IK_STALL_RATIO = 0.99
_CONVENTIONS = ("standard", "modified", "free", "chain")
#: Units named by the ``units`` entry of every published ``robots.json`` model.
PUBLISHED_UNITS = {"a": "m", "d": "m", "alpha": "rad", "theta_offset": "rad", "q_min": "rad", "q_max": "rad",
                   "qd_max": "rad/s"}  # fmt: skip


# --------------------------------------------------------------------------- #
# constant transforms
# --------------------------------------------------------------------------- #
def _cos_sin(angle_rad: float) -> tuple[float, float]:
    """cos and sin, exact at multiples of 90 deg (within 1e-14 rad) so that true zeros stay zero."""
    k = round(angle_rad / (math.pi / 2))
    if abs(angle_rad - k * (math.pi / 2)) < 1e-14:
        return ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))[k % 4]
    return math.cos(angle_rad), math.sin(angle_rad)


def _rot_x(alpha_rad: float) -> np.ndarray:
    c, s = _cos_sin(alpha_rad)
    T = np.eye(4)
    T[1, 1], T[1, 2], T[2, 1], T[2, 2] = c, -s, s, c
    return T


def _rot_z(theta_rad: float) -> np.ndarray:
    c, s = _cos_sin(theta_rad)
    T = np.eye(4)
    T[0, 0], T[0, 1], T[1, 0], T[1, 1] = c, -s, s, c
    return T


def _trans(x: float = 0.0, z: float = 0.0) -> np.ndarray:
    T = np.eye(4)
    T[0, 3], T[2, 3] = x, z
    return T


def _plan(C: np.ndarray):
    """Sparse recipe for right-multiplying an accumulated block by the constant 4x4 ``C``.

    New column j (j < 3) = sum_k col_k C[k, j]; new translation = p + sum_k col_k C[k, 3].
    Each term list holds (k, weight) for the non-zero weights only.
    """
    rot = tuple(tuple((k, float(C[k, j])) for k in range(3) if C[k, j] != 0.0) for j in range(3))
    trans = tuple((k, float(C[k, 3])) for k in range(3) if C[k, 3] != 0.0)
    return rot, trans


def _lincomb(cols, terms, start=None):
    out = start
    for k, w in terms:
        if out is None:
            out = cols[k] if w == 1.0 else (-cols[k] if w == -1.0 else cols[k] * w)
        elif w == 1.0:
            out = out + cols[k]
        elif w == -1.0:
            out = out - cols[k]
        else:
            out = out + cols[k] * w
    return out


def _apply_constant(cols, plan):
    rot, trans = plan
    new = [_lincomb(cols, terms) for terms in rot]
    new.append(_lincomb(cols, trans, cols[3]))
    return new


_IDENTITY_COLS = (
    np.array([[1.0], [0.0], [0.0]]),
    np.array([[0.0], [1.0], [0.0]]),
    np.array([[0.0], [0.0], [1.0]]),
    np.zeros((3, 1)),
)


def _run_chain(ops, cos_t, sin_t, *, frames=None, axes=None, slide=None):
    """Evaluate a compiled chain on ``(dof, n)`` cosines/sines; returns the 4 columns ``(3, n|1)``.

    ``frames`` (list) receives a copy of the columns at every ``"emit"`` op;
    ``axes`` (list) receives ``(z, p)`` (joint axis and a point on it) before every rotation or slide;
    ``slide`` holds the ``(dof, n)`` displacements [m] that the ``"slide"`` ops (prismatic joints) read.
    """
    cols = list(_IDENTITY_COLS)
    for op in ops:
        kind = op[0]
        if kind == "slide":  # Tz(s) on the right: the origin moves along the current z column
            if axes is not None:
                axes.append((cols[2], cols[3]))
            cols = [cols[0], cols[1], cols[2], cols[3] + cols[2] * slide[op[1]]]
        elif kind == "rot":
            i = op[1]
            c, s = cos_t[i], sin_t[i]
            if axes is not None:
                axes.append((cols[2], cols[3]))
            x, y = cols[0], cols[1]
            cols = [x * c + y * s, y * c - x * s, cols[2], cols[3]]
        elif kind == "const":
            cols = _apply_constant(cols, op[1])
        else:  # emit
            frames.append(list(cols))
    return cols


def _is_identity(C: np.ndarray) -> bool:
    return bool(np.array_equal(C, np.eye(4)))


# --------------------------------------------------------------------------- #
# small validation helpers
# --------------------------------------------------------------------------- #
def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"rng: expected a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _check_nonneg(x, name: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{name}: expected a non-negative number, got {x!r}") from None
    if not math.isfinite(v) or v < 0:
        raise InputError(f"{name}: expected a finite non-negative number, got {x!r}")
    return v


def _check_positive(x, name: str) -> float:
    v = _check_nonneg(x, name)
    if v == 0:
        raise InputError(f"{name}: expected a positive number, got {x!r}")
    return v


def _check_int(x, name: str, minimum: int) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or int(x) < minimum:
        raise InputError(f"{name}: expected an integer >= {minimum}, got {x!r}")
    return int(x)


def _degrees_exact(x_rad: np.ndarray) -> list[float]:
    """Degrees with the shortest decimal form that converts back to exactly the same radians."""
    out = []
    for v in np.asarray(x_rad, dtype=np.float64).reshape(-1):
        deg = float(np.degrees(v))
        for ndigits in range(0, 16):
            r = round(deg, ndigits)
            if float(np.radians(r)) == float(v):
                deg = r
                break
        out.append(deg + 0.0)  # no "-0.0"
    return out


def _rotation_error(R_target: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotation vector ``log(R_target R^T)`` (base frame, ``(K, 3)``) and its angle [rad] ``(K,)``."""
    E = R_target @ np.swapaxes(R, -1, -2)
    w = 0.5 * np.stack([E[:, 2, 1] - E[:, 1, 2], E[:, 0, 2] - E[:, 2, 0], E[:, 1, 0] - E[:, 0, 1]], axis=-1)
    sin_a = np.linalg.norm(w, axis=-1)
    cos_a = 0.5 * (E[:, 0, 0] + E[:, 1, 1] + E[:, 2, 2] - 1.0)
    angle = np.arctan2(sin_a, cos_a)
    factor = np.where(sin_a > 1e-300, angle / np.maximum(sin_a, 1e-300), 1.0)
    omega = w * factor[:, None]
    near_pi = angle > 3.0  # the skew part loses the axis near pi: take the quaternion route there
    if near_pi.any():
        omega[near_pi] = se3.so3_log(E[near_pi], check=False)
    return omega, angle


# --------------------------------------------------------------------------- #
# models
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class IKResult:
    """Result of :meth:`RobotModel.ik` for ``M`` target flange poses.

    Attributes
    ----------
    q : ndarray, shape (M, dof)
        Joint configuration [rad] per target: the solution when ``success``,
        otherwise the best configuration found (smallest pose residual).
    success : ndarray of bool, shape (M,)
        True only when ``fk(q)`` reproduces the target within the tolerances and
        ``q`` lies inside the joint limits.
    pos_err_m : ndarray, shape (M,)
        Distance [m] between the flange origin of ``fk(q)`` and the target.
    rot_err_rad : ndarray, shape (M,)
        Geodesic angle [rad] between the orientation of ``fk(q)`` and the target.

    For a single target pose ``(4, 4)`` the leading ``M`` axis is dropped.
    """

    q: np.ndarray
    success: np.ndarray
    pos_err_m: np.ndarray
    rot_err_rad: np.ndarray

    @property
    def success_rate(self) -> float:
        """Fraction of targets solved (1.0 for an empty batch)."""
        s = np.asarray(self.success)
        return float(s.mean()) if s.size else 1.0


_ARRAY_FIELDS = (
    "a_m",
    "d_m",
    "alpha_rad",
    "theta_offset_rad",
    "joint_sign",
    "q_min_rad",
    "q_max_rad",
    "qd_max_rad_s",
    "home_q_rad",
)


@dataclass(frozen=True, eq=False)
class RobotModel:
    """A serial manipulator (DH table, limits, speed caps) or the free-floating ``free6d``.

    Parameters
    ----------
    name : str
        Registry name (``"ur5e"``, ``"panda"``, ...).
    dof : int
        Number of joints (0 for ``free6d``).
    convention : {"standard", "modified", "free", "chain"}
        DH convention (see the module docstring); ``"free"`` for ``free6d``.
    a_m, d_m : ndarray, shape (dof,)
        DH link lengths and offsets [m].
    alpha_rad, theta_offset_rad : ndarray, shape (dof,)
        DH twists and joint-angle offsets [rad].
    joint_sign : ndarray, shape (dof,)
        +1 or -1: ``theta_i = joint_sign[i] * q[i] + theta_offset_rad[i]``.
    q_min_rad, q_max_rad : ndarray, shape (dof,)
        Joint limits [rad] ([m] for a prismatic joint).
    qd_max_rad_s : ndarray, shape (dof,)
        Nominal joint speed caps [rad/s] ([m/s] for a prismatic joint).
    home_q_rad : ndarray, shape (dof,)
        Configuration [rad] around which joint-space trajectories are generated.
    tool : ndarray, shape (4, 4)
        Fixed transform from the last DH frame to the flange (identity if none).
    control_rate_hz : float
        Native controller rate [Hz].
    reach_m : float
        Nominal working radius [m] (a conservative bound for sampling reachable poses).
    source, description : str
        Where the numbers come from; a one-line description.
    joint_names : tuple of str, optional
        The joints' names (e.g. from a URDF); empty for ``j1 .. jn``.
    base_frame : str, optional
        The name of the base frame, when known (a URDF's base link).
    chain : ndarray, shape (m + 1, 4, 4), optional
        The constant transforms ``C_k`` of a ``"chain"`` model (module docstring); None otherwise.  ``m`` is the
        number of joints of the chain: ``dof``, or the rows of ``coupling``.
    joint_types : tuple of str, optional
        ``"revolute"`` or ``"prismatic"`` per joint; empty for all revolute.  A prismatic joint's position, limits,
        home and speed cap are in metres and m/s (the ``_rad`` arrays hold metres for it).
    coupling : ndarray, shape (m, dof), optional
        ``"chain"`` models only, revolute joints only: the chain's ``m`` joint angles are
        ``coupling @ (joint_sign * q + theta_offset_rad)`` (a linkage that drives passive joints, e.g. the
        parallelograms that keep a palletiser's flange level); None when every chain joint is a joint of ``q``.

    Arrays are stored as read-only float64, so a model (and the shared registry
    instances returned by :func:`get_robot`) cannot be modified in place; use
    :meth:`perturbed` or :func:`dataclasses.replace` for variants.
    """

    name: str
    dof: int
    convention: str
    a_m: np.ndarray
    d_m: np.ndarray
    alpha_rad: np.ndarray
    theta_offset_rad: np.ndarray
    joint_sign: np.ndarray
    q_min_rad: np.ndarray
    q_max_rad: np.ndarray
    qd_max_rad_s: np.ndarray
    home_q_rad: np.ndarray
    tool: np.ndarray
    control_rate_hz: float
    reach_m: float
    source: str = ""
    description: str = ""
    joint_names: tuple = ()
    base_frame: str = ""
    chain: np.ndarray | None = None
    joint_types: tuple = ()
    coupling: np.ndarray | None = None
    _fk_ops: tuple = field(init=False, repr=False, compare=False)
    _frame_ops: tuple = field(init=False, repr=False, compare=False)

    # ------------------------------------------------------------------ setup
    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InputError(f"name: expected a non-empty string, got {self.name!r}")
        if self.convention not in _CONVENTIONS:
            raise InputError(f"convention: expected one of {', '.join(_CONVENTIONS)}, got {self.convention!r}")
        dof = _check_int(self.dof, "dof", 0)
        if (self.convention == "free") != (dof == 0):
            raise InputError(f"dof: expected 0 exactly for the 'free' convention, got dof={dof} with {self.convention!r}")
        object.__setattr__(self, "dof", dof)
        for name in _ARRAY_FIELDS:
            arr = se3.check_array(getattr(self, name), name, ())
            if arr.shape != (dof,):
                raise InputError(f"{name}: expected shape ({dof},), got array of shape {arr.shape}")
            arr = arr.copy()
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        tool = se3.check_transforms(self.tool, "tool").copy()
        if tool.shape != (4, 4):
            raise InputError(f"tool: expected shape (4, 4), got array of shape {tool.shape}")
        tool.setflags(write=False)
        object.__setattr__(self, "tool", tool)
        if not np.all(np.abs(self.joint_sign) == 1.0):
            raise InputError(f"joint_sign: expected entries +1 or -1, got {self.joint_sign.tolist()}")
        if np.any(self.q_min_rad > self.q_max_rad):
            raise InputError(
                f"q_min_rad, q_max_rad: expected q_min <= q_max, got {self.q_min_rad.tolist()} > {self.q_max_rad.tolist()}"
            )
        object.__setattr__(self, "control_rate_hz", _check_positive(self.control_rate_hz, "control_rate_hz"))
        object.__setattr__(self, "reach_m", _check_positive(self.reach_m, "reach_m"))
        names = tuple(str(v) for v in (self.joint_names or ()))
        if names and len(names) != dof:
            raise InputError(f"joint_names: expected {dof} names, got {len(names)}")
        object.__setattr__(self, "joint_names", names)
        if (self.convention == "chain") != (self.chain is not None):
            raise InputError(f"chain: expected constant transforms exactly for the 'chain' convention, got "
                             f"{'none' if self.chain is None else 'some'} with {self.convention!r}")
        if self.chain is not None:
            chain = se3.check_transforms(self.chain, "chain").copy()
            m = None if self.coupling is None else np.shape(self.coupling)[0]
            if m is None and chain.shape != (dof + 1, 4, 4):
                raise InputError(f"chain: expected shape ({dof + 1}, 4, 4), got array of shape {chain.shape}")
            chain.setflags(write=False)
            object.__setattr__(self, "chain", chain)
        types = tuple(str(v) for v in (self.joint_types or ()))
        if types and (len(types) != dof or set(types) - {"revolute", "prismatic"}):
            raise InputError(f"joint_types: expected {dof} entries of 'revolute' or 'prismatic', got {list(types)}")
        object.__setattr__(self, "joint_types", types if "prismatic" in types else ())
        if self.coupling is not None:
            M = se3.check_array(self.coupling, "coupling", ()).copy()
            if self.convention != "chain" or M.ndim != 2 or M.shape[1] != dof or self.joint_types:
                raise InputError(f"coupling: expected an (m, {dof}) matrix on a 'chain' model of revolute joints, got "
                                 f"shape {M.shape} on a {self.convention!r} model"
                                 f"{' with prismatic joints' if self.joint_types else ''}")  # fmt: skip
            if self.chain.shape[0] != M.shape[0] + 1:
                raise InputError(f"chain: expected shape ({M.shape[0] + 1}, 4, 4) for a coupling of {M.shape[0]} "
                                 f"chain joints, got array of shape {self.chain.shape}")  # fmt: skip
            M.setflags(write=False)
            object.__setattr__(self, "coupling", M)
        fk_ops, frame_ops = self._compile() if dof else ((), ())
        object.__setattr__(self, "_fk_ops", fk_ops)
        object.__setattr__(self, "_frame_ops", frame_ops)

    def _compile(self):
        """Chain programs: merged constants for FK/Jacobian, per-joint frames for :meth:`joint_frames`."""
        pre, post = [], []
        prismatic = self.prismatic
        n_chain = self.n_chain_joints
        for i in range(n_chain):
            if self.convention == "chain":  # C_0 before the first joint, C_i after joint i: as with DH, frame i
                pre.append(np.asarray(self.chain[0], dtype=np.float64) if i == 0 else np.eye(4))  # is on axis i + 1
                post.append(np.asarray(self.chain[i + 1], dtype=np.float64))
                continue
            a, d, alpha = float(self.a_m[i]), float(self.d_m[i]), float(self.alpha_rad[i])
            if prismatic[i]:  # the joint moves d; theta is the constant offset (taken out of the joint's motion)
                fixed = _rot_z(float(self.theta_offset_rad[i]))
                if self.convention == "standard":  # Rz(theta) Tz(d) Tz(s) Tx(a) Rx(alpha)
                    pre.append(fixed @ _trans(z=d))
                    post.append(_trans(x=a) @ _rot_x(alpha))
                else:  # Rx(alpha) Tx(a) Rz(theta) Tz(d) Tz(s)
                    pre.append(_rot_x(alpha) @ _trans(x=a) @ fixed @ _trans(z=d))
                    post.append(np.eye(4))
            elif self.convention == "standard":  # Rz(theta) Tz(d) Tx(a) Rx(alpha) = Tz(d) Rz(theta) Tx(a) Rx(alpha)
                pre.append(_trans(z=d))
                post.append(_trans(x=a) @ _rot_x(alpha))
            else:  # Rx(alpha) Tx(a) Rz(theta) Tz(d)
                pre.append(_rot_x(alpha) @ _trans(x=a))
                post.append(_trans(z=d))
        post[-1] = post[-1] @ np.asarray(self.tool)
        move = lambda i: ("slide", i) if prismatic[i] else ("rot", i)  # noqa: E731

        fk_ops = []
        pending = np.eye(4)
        for i in range(n_chain):
            pending = pending @ pre[i]
            if not _is_identity(pending):
                fk_ops.append(("const", _plan(pending)))
            fk_ops.append(move(i))
            pending = post[i]
        if not _is_identity(pending):
            fk_ops.append(("const", _plan(pending)))

        frame_ops = [("emit",)]
        for i in range(n_chain):
            if not _is_identity(pre[i]):
                frame_ops.append(("const", _plan(pre[i])))
            frame_ops.append(move(i))
            if not _is_identity(post[i]):
                frame_ops.append(("const", _plan(post[i])))
            frame_ops.append(("emit",))
        return tuple(fk_ops), tuple(frame_ops)

    def __reduce__(self):
        # rebuild through the constructor so that an unpickled model is validated and read-only again
        return (type(self), tuple(getattr(self, f.name) for f in dataclasses.fields(self) if f.init))

    def __repr__(self) -> str:
        return f"RobotModel(name={self.name!r}, dof={self.dof}, convention={self.convention!r})"

    @property
    def prismatic(self) -> np.ndarray:
        """Boolean mask ``(m,)`` of the chain's prismatic joints (all False for the revolute arms and for a coupled
        chain, whose ``m`` may exceed ``dof``; with prismatic joints ``m`` is ``dof``)."""
        if not self.joint_types:
            return np.zeros(self.n_chain_joints, dtype=bool)
        return np.array([t == "prismatic" for t in self.joint_types])

    @property
    def n_chain_joints(self) -> int:
        """Joints of the kinematic chain: ``dof``, or the rows of ``coupling`` (which adds passive joints)."""
        return self.dof if self.coupling is None else int(self.coupling.shape[0])

    @property
    def is_free(self) -> bool:
        """True for the free-floating ``free6d`` (no kinematic chain)."""
        return self.dof == 0

    # ------------------------------------------------------------ validation
    def _require_chain(self, what: str) -> None:
        if self.is_free:
            raise InputError(
                f"{what}: robot {self.name!r} is free-floating and has no kinematic chain "
                f"(expected one of the arms, got dof = 0)"
            )

    def _check_q(self, q, name: str = "q") -> tuple[np.ndarray, tuple[int, ...]]:
        a = se3.check_array(q, name, (self.dof,))
        lead = a.shape[:-1]
        return a.reshape(int(np.prod(lead, dtype=np.int64)), self.dof), lead

    # ----------------------------------------------------------- kinematics
    def _angles(self, q_flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        theta = q_flat.T * self.joint_sign[:, None] + self.theta_offset_rad[:, None]
        if self.coupling is not None:
            theta = self.coupling @ theta
        return np.cos(theta), np.sin(theta)

    def _slides(self, q_flat: np.ndarray) -> np.ndarray | None:
        """Displacements [m] ``joint_sign * q`` of the prismatic joints, ``(dof, n)`` (None without any)."""
        if not self.joint_types:
            return None
        return q_flat.T * self.joint_sign[:, None]

    def _fk_flat(self, q_flat: np.ndarray, *, jacobian: bool = False):
        n = q_flat.shape[0]
        T = np.empty((n, 4, 4))
        T[:, 3, :3] = 0.0
        T[:, 3, 3] = 1.0
        J = np.empty((n, 6, self.dof)) if jacobian else None
        for i0 in range(0, n, FK_CHUNK):
            i1 = min(i0 + FK_CHUNK, n)
            cos_t, sin_t = self._angles(q_flat[i0:i1])
            axes = [] if jacobian else None
            cols = _run_chain(self._fk_ops, cos_t, sin_t, axes=axes, slide=self._slides(q_flat[i0:i1]))
            block = T[i0:i1]
            for j in range(4):
                block[:, :3, j] = cols[j].T
            if jacobian:
                nb = i1 - i0
                m = self.n_chain_joints
                Jb = np.empty((m, 6, nb))
                for k, (z, p) in enumerate(axes):
                    Jb[k, :3] = z
                    Jb[k, 3:] = p
                if self.coupling is None:
                    Jb[:, :3] *= self.joint_sign[:, None, None]
                z = Jb[:, :3]
                r = cols[3] - Jb[:, 3:]  # from a point on each axis to the flange origin
                Jb[:, 3] = z[:, 1] * r[:, 2] - z[:, 2] * r[:, 1]
                Jb[:, 4] = z[:, 2] * r[:, 0] - z[:, 0] * r[:, 2]
                Jb[:, 5] = z[:, 0] * r[:, 1] - z[:, 1] * r[:, 0]
                if self.joint_types:  # a prismatic joint moves the flange along its (signed) axis, without turning it
                    pris = self.prismatic
                    Jb[pris, 3:] = Jb[pris, :3]
                    Jb[pris, :3] = 0.0
                if self.coupling is not None:  # d(theta_chain)/dq = coupling diag(joint_sign)
                    Jb = np.einsum("kin,kj->jin", Jb, self.coupling * self.joint_sign[None, :])
                J[i0:i1] = Jb.transpose(2, 1, 0)
        return T, J

    def fk(self, q) -> np.ndarray:
        """Flange poses ``T_base_ee`` of joint configurations.

        Parameters
        ----------
        q : array_like, shape (N, dof) or (dof,)
            Joint positions [rad] (any leading axes are accepted).

        Returns
        -------
        T_base_ee : ndarray, shape (N, 4, 4) or (4, 4)
            Pose of the flange frame ``ee`` in the robot base frame [m].

        Raises
        ------
        InputError
            Wrong shape, non-finite entries, or a free-floating model.
        """
        self._require_chain("fk")
        q_flat, lead = self._check_q(q)
        T, _ = self._fk_flat(q_flat)
        return T.reshape(lead + (4, 4))

    def fk_jacobian(self, q) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`fk` and :meth:`jacobian` from one pass over the chain (shapes as there)."""
        self._require_chain("fk_jacobian")
        q_flat, lead = self._check_q(q)
        T, J = self._fk_flat(q_flat, jacobian=True)
        return T.reshape(lead + (4, 4)), J.reshape(lead + (6, self.dof))

    def jacobian(self, q) -> np.ndarray:
        """Geometric Jacobian in the base frame.

        Parameters
        ----------
        q : array_like, shape (N, dof) or (dof,)
            Joint positions [rad].

        Returns
        -------
        J : ndarray, shape (N, 6, dof) or (6, dof)
            Rows ``(omega, v)``: angular velocity of the flange and linear velocity
            of the flange origin, both in the base frame, per unit joint velocity
            [rad/rad, m/rad].  ``omega = J[:3] @ dq``, ``v = J[3:] @ dq``.
        """
        self._require_chain("jacobian")
        q_flat, lead = self._check_q(q)
        _, J = self._fk_flat(q_flat, jacobian=True)
        return J.reshape(lead + (6, self.dof))

    def joint_frames(self, q) -> np.ndarray:
        """Poses of the base and of every DH frame, for drawing the arm.

        Parameters
        ----------
        q : array_like, shape (N, dof) or (dof,)
            Joint positions [rad].

        Returns
        -------
        T_base_frames : ndarray, shape (N, m + 1, 4, 4) or (m + 1, 4, 4)
            Index 0 is the base (identity), index ``i`` the frame after joint ``i``
            (``T_{0,1} ... T_{i-1,i}``); the last one includes the tool, so it
            equals :meth:`fk`.  ``m`` is :attr:`n_chain_joints` (``dof`` unless a
            coupling adds passive joints).
        """
        self._require_chain("joint_frames")
        q_flat, lead = self._check_q(q)
        n = q_flat.shape[0]
        m = self.n_chain_joints
        out = np.zeros((n, m + 1, 4, 4))
        out[..., 3, 3] = 1.0
        for i0 in range(0, n, FK_CHUNK):
            i1 = min(i0 + FK_CHUNK, n)
            cos_t, sin_t = self._angles(q_flat[i0:i1])
            frames: list = []
            _run_chain(self._frame_ops, cos_t, sin_t, frames=frames, slide=self._slides(q_flat[i0:i1]))
            for f, cols in enumerate(frames):
                for j in range(4):
                    out[i0:i1, f, :3, j] = cols[j].T
        return out.reshape(lead + (m + 1, 4, 4))

    def within_limits(self, q) -> np.ndarray:
        """Whether each configuration lies inside the joint limits (bounds included).

        Parameters
        ----------
        q : array_like, shape (N, dof) or (dof,)
            Joint positions [rad].

        Returns
        -------
        inside : ndarray of bool, shape (N,) (a 0-d array for a single configuration)
        """
        q_flat, lead = self._check_q(q)
        inside = np.all((q_flat >= self.q_min_rad) & (q_flat <= self.q_max_rad), axis=-1)
        return inside.reshape(lead)

    # ------------------------------------------------------------------ IK
    def ik(
        self,
        T_base_ee,
        rng: np.random.Generator,
        *,
        q_init=None,
        n_restarts: int = 8,
        max_iter: int = 200,
        damping: float = 1e-2,
        pos_tol_m: float = 1e-6,
        rot_tol_rad: float = 1e-6,
    ) -> IKResult:
        """Joint configurations that put the flange at given poses (damped least squares).

        Each target is solved by Levenberg-Marquardt-style damped least squares,
        ``dq = J^T (J J^T + lambda^2 I)^{-1} e``, on the weighted pose residual
        ``e = (log(R_target R^T), (p_target - p) / reach_m)`` in the base frame:
        a step is kept only when it lowers ``|e|^2`` (``lambda`` then shrinks,
        otherwise it grows) and joint steps are capped at :data:`IK_MAX_STEP_RAD`.
        An attempt first iterates without limits and brings the solution into the
        limits by whole turns (``q + 2 pi k``, nearest to the start); if that is
        impossible it continues with every iterate clipped into the limits (joints
        on a limit that the step pushes outwards are frozen for that step).
        Targets still unsolved after the first attempt (from ``q_init``, or the
        home configuration) are retried from up to ``n_restarts`` random starts,
        each the best of :data:`IK_SEED_CANDIDATES` configurations drawn uniformly
        inside the limits from ``rng``.  All targets are processed as one batch;
        the result depends only on the inputs and the state of ``rng``.

        Parameters
        ----------
        T_base_ee : array_like, shape (M, 4, 4) or (4, 4)
            Target flange poses in the base frame [m].
        rng : numpy.random.Generator
            Source of the random restart configurations.
        q_init : array_like, shape (M, dof) or (dof,), optional
            Start configuration(s) [rad] (clipped into the limits); default the
            home configuration.  Whole-turn ambiguities are resolved towards it,
            so passing the previous configuration of a path keeps it continuous.
        n_restarts : int
            Random restarts after the first attempt.
        max_iter : int
            Iterations per attempt (per phase).
        damping : float
            Initial damping ``lambda`` (adapted per target).
        pos_tol_m, rot_tol_rad : float
            Success tolerances on the position [m] and orientation [rad] residuals.

        Returns
        -------
        IKResult
            ``q`` ``(M, dof)``, ``success`` ``(M,)``, ``pos_err_m`` ``(M,)``,
            ``rot_err_rad`` ``(M,)``; ``success`` is set only when the pose is
            actually reached within the tolerances and the limits.  Unreachable
            targets return the closest configuration found with ``success=False``.
        """
        self._require_chain("ik")
        T_t = se3.check_transforms(T_base_ee, "T_base_ee")
        single = T_t.ndim == 2
        if T_t.ndim > 3:
            raise InputError(f"T_base_ee: expected shape (M, 4, 4) or (4, 4), got array of shape {T_t.shape}")
        T_t = T_t.reshape(-1, 4, 4)
        m = T_t.shape[0]
        _check_rng(rng)
        n_restarts = _check_int(n_restarts, "n_restarts", 0)
        max_iter = _check_int(max_iter, "max_iter", 1)
        damping = _check_positive(damping, "damping")
        pos_tol_m = _check_positive(pos_tol_m, "pos_tol_m")
        rot_tol_rad = _check_positive(rot_tol_rad, "rot_tol_rad")
        if q_init is None:
            q0 = np.broadcast_to(self.home_q_rad, (m, self.dof)).copy()
        else:
            qi = se3.check_array(q_init, "q_init", (self.dof,))
            if qi.ndim == 1:
                qi = np.broadcast_to(qi, (m, self.dof))
            elif qi.shape != (m, self.dof):
                raise InputError(f"q_init: expected shape ({self.dof},) or ({m}, {self.dof}), got array of shape {qi.shape}")
            q0 = qi.copy()
        q0 = np.clip(q0, self.q_min_rad, self.q_max_rad)

        R_t, p_t = T_t[:, :3, :3], T_t[:, :3, 3]
        q_best = q0.copy()
        cost_best = np.full(m, np.inf)
        todo = np.arange(m)
        tol = (damping, pos_tol_m, rot_tol_rad)
        for attempt in range(n_restarts + 1):
            if todo.size == 0:
                break
            start = q0[todo] if attempt == 0 else self._restart_seeds(R_t[todo], p_t[todo], rng)
            q, ok, cost = self._attempt(R_t[todo], p_t[todo], start, max_iter, *tol)
            better = ok | (cost < cost_best[todo])
            q_best[todo[better]] = q[better]
            cost_best[todo[better]] = cost[better]
            todo = todo[~ok]

        # report the residuals of what is returned, measured afresh
        if m:
            T_fin, _ = self._fk_flat(q_best)
            _, rot_err = _rotation_error(R_t, T_fin[:, :3, :3])
            pos_err = np.linalg.norm(T_fin[:, :3, 3] - p_t, axis=-1)
        else:
            rot_err = pos_err = np.zeros(0)
        success = (pos_err <= pos_tol_m) & (rot_err <= rot_tol_rad) & self.within_limits(q_best)
        if single:
            return IKResult(q_best[0], success[0], pos_err[0], rot_err[0])
        return IKResult(q_best, success, pos_err, rot_err)

    def _restart_seeds(self, R_t, p_t, rng):
        """One start per target: the best (lowest pose residual) of IK_SEED_CANDIDATES uniform draws."""
        k = IK_SEED_CANDIDATES
        m = R_t.shape[0]
        cand = rng.uniform(self.q_min_rad, self.q_max_rad, size=(m * k, self.dof))
        Tc, _ = self._fk_flat(cand)
        _, ang = _rotation_error(np.repeat(R_t, k, axis=0), Tc[:, :3, :3])
        dp = np.linalg.norm(Tc[:, :3, 3] - np.repeat(p_t, k, axis=0), axis=-1) * self._ik_pos_weight()
        cost = (ang * ang + dp * dp).reshape(m, k)
        return cand.reshape(m, k, self.dof)[np.arange(m), np.argmin(cost, axis=1)]

    def _residual(self, T, R_t, p_t):
        omega, rot_err = _rotation_error(R_t, T[:, :3, :3])
        dp = p_t - T[:, :3, 3]
        e = np.concatenate([omega, dp * self._ik_pos_weight()], axis=-1)
        return e, np.linalg.norm(dp, axis=-1), rot_err

    def _wrap_into_limits(self, q, q_ref):
        """Add multiples of 2 pi to each joint to bring it inside the limits, nearest to ``q_ref``.

        Returns the wrapped configurations and a mask of the rows that fit.
        """
        two_pi = 2.0 * np.pi
        k_lo = np.ceil((self.q_min_rad - q) / two_pi)
        k_hi = np.floor((self.q_max_rad - q) / two_pi)
        k = np.clip(np.round((q_ref - q) / two_pi), k_lo, k_hi)
        if self.joint_types:  # a prismatic joint has no whole turns
            k = np.where(self.prismatic, 0.0, k)
            k_lo, k_hi = np.where(self.prismatic, 0.0, k_lo), np.where(self.prismatic, 0.0, k_hi)
        qw = q + two_pi * k
        fits = np.all((k_lo <= k_hi) & (qw >= self.q_min_rad) & (qw <= self.q_max_rad), axis=-1)
        return qw, fits

    def _attempt(self, R_t, p_t, q_start, max_iter, lam0, pos_tol, rot_tol):
        """One IK attempt per target: free solve, wrap into the limits, else a solve inside the limits."""
        q, conv, cost = self._lm(R_t, p_t, q_start, max_iter, lam0, pos_tol, rot_tol, limits=False)
        q, fits = self._wrap_into_limits(q, q_start)
        ok = conv & fits
        cost = np.where(fits, cost, np.inf)
        redo = np.flatnonzero(~ok)
        if redo.size:
            # converged outside the limits: continue inside them from the clipped solution;
            # not converged: start again from the clipped start
            q_in = np.clip(np.where(conv[redo, None], q[redo], q_start[redo]), self.q_min_rad, self.q_max_rad)
            q2, conv2, cost2 = self._lm(R_t[redo], p_t[redo], q_in, max_iter, lam0, pos_tol, rot_tol, limits=True)
            q[redo], ok[redo], cost[redo] = q2, conv2, cost2
        return q, ok, cost

    def _lm(self, R_t, p_t, q0, max_iter, lam0, pos_tol, rot_tol, *, limits):
        """Batched Levenberg-Marquardt on the pose residual; returns q, converged, final cost.

        With ``limits``, every iterate is clipped into the joint limits and joints
        resting on a limit whose step would push them further out are frozen for
        that step (their Jacobian columns are zeroed and the step recomputed), so
        the iteration slides along the limit instead of crawling.  A target leaves
        the loop when converged, when ``lambda`` exceeds its ceiling or when its
        cost fell by less than 1 % over the last ``_IK_STALL_WINDOW`` iterations
        (a local minimum): the next restart takes over.
        """
        q = q0.copy()
        w = self._ik_pos_weight()
        T, J = self._fk_flat(q, jacobian=True)
        J[:, 3:] *= w
        e, pe, re = self._residual(T, R_t, p_t)
        cost = np.einsum("ij,ij->i", e, e)
        cost_mark = cost.copy()
        lam = np.full(q.shape[0], lam0)
        conv = (pe <= pos_tol) & (re <= rot_tol)
        active = np.flatnonzero(~conv)
        eye6 = np.eye(6)
        lo, hi = self.q_min_rad, self.q_max_rad
        for it in range(1, max_iter + 1):
            if active.size == 0:
                break
            qa, Ja, ea, la = q[active], J[active], e[active], lam[active]
            damp = (la * la)[:, None, None] * eye6
            dq = self._dls_step(Ja, ea, damp)
            if limits:
                blocked = ((qa <= lo) & (dq < 0)) | ((qa >= hi) & (dq > 0))
                if blocked.any():
                    rows = blocked.any(axis=1)
                    Jf = Ja[rows] * (~blocked[rows])[:, None, :]
                    dq[rows] = self._dls_step(Jf, ea[rows], damp[rows])
            big = np.abs(dq).max(axis=1)
            dq *= np.minimum(1.0, IK_MAX_STEP_RAD / np.maximum(big, 1e-300))[:, None]
            qn = qa + dq
            if limits:
                qn = np.clip(qn, lo, hi)
            Tn, Jn = self._fk_flat(qn, jacobian=True)
            Jn[:, 3:] *= w
            en, pen, ren = self._residual(Tn, R_t[active], p_t[active])
            cn = np.einsum("ij,ij->i", en, en)
            acc = cn < cost[active]
            ia, ir = active[acc], active[~acc]
            q[ia], J[ia], e[ia], cost[ia], pe[ia], re[ia] = qn[acc], Jn[acc], en[acc], cn[acc], pen[acc], ren[acc]
            lam[ia] = np.maximum(lam[ia] * 0.3, _IK_LAMBDA_MIN)
            lam[ir] = lam[ir] * 5.0
            conv[ia] = (pe[ia] <= pos_tol) & (re[ia] <= rot_tol)
            keep = ~conv[active] & (lam[active] <= _IK_LAMBDA_MAX)
            if it % _IK_STALL_WINDOW == 0:
                keep &= cost[active] < _IK_STALL_RATIO * cost_mark[active]
                cost_mark[active] = cost[active]
            active = active[keep]
        return q, conv, cost

    def _ik_pos_weight(self) -> float:
        """Weight [1/m] of the position residual: 1 rad of rotation counts as much as one reach."""
        return 1.0 / self.reach_m

    @staticmethod
    def _dls_step(J, e, damp):
        JT = np.swapaxes(J, 1, 2)
        y = np.linalg.solve(J @ JT + damp, e[:, :, None])
        return (JT @ y)[:, :, 0]

    # ------------------------------------------------------------- variants
    def perturbed(self, rng: np.random.Generator, len_std_m: float, ang_std_rad: float, theta_std_rad=None) -> "RobotModel":
        """A copy whose DH geometry carries independent Gaussian errors (the ``dh_error`` model).

        Draws, in this order, ``a_m += N(0, len_std_m)``, ``d_m += N(0, len_std_m)``,
        ``alpha_rad += N(0, ang_std_rad)`` and ``theta_offset_rad += N(0, theta_std_rad)``
        (one value per joint each).  Limits, speeds, signs, home and tool are kept;
        ``self`` is left untouched.

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of the errors.
        len_std_m : float
            Standard deviation [m] of the errors on ``a`` and ``d``.
        ang_std_rad : float
            Standard deviation [rad] of the errors on ``alpha``.
        theta_std_rad : float, optional
            Standard deviation [rad] of the errors on the joint offsets; default
            ``ang_std_rad``.

        Returns
        -------
        RobotModel
            The "true" model; same name, description marked as perturbed.
        """
        self._require_chain("perturbed")
        if self.convention == "chain":
            raise InputError(f"perturbed: robot {self.name!r} is a general chain without a DH table to perturb")
        _check_rng(rng)
        len_std_m = _check_nonneg(len_std_m, "len_std_m")
        ang_std_rad = _check_nonneg(ang_std_rad, "ang_std_rad")
        theta_std_rad = ang_std_rad if theta_std_rad is None else _check_nonneg(theta_std_rad, "theta_std_rad")
        n = self.dof
        da = rng.normal(0.0, len_std_m, n)
        dd = rng.normal(0.0, len_std_m, n)
        dalpha = rng.normal(0.0, ang_std_rad, n)
        dtheta = rng.normal(0.0, theta_std_rad, n)
        desc = self.description if self.description.endswith("(perturbed DH)") else f"{self.description} (perturbed DH)"
        return dataclasses.replace(
            self,
            a_m=self.a_m + da,
            d_m=self.d_m + dd,
            alpha_rad=self.alpha_rad + dalpha,
            theta_offset_rad=self.theta_offset_rad + dtheta,
            description=desc,
        )

    # ------------------------------------------------------------ serialise
    def to_dict(self) -> dict:
        """JSON-ready description: lengths in metres, angles in degrees (exact round trip).

        Keys: ``name, dof, convention, a_m, d_m, alpha_deg, theta_offset_deg,
        joint_sign, q_min_deg, q_max_deg, qd_max_deg_s, home_q_deg, tool`` (4x4
        nested list, or None for the identity), ``control_rate_hz, reach_m,
        source, description``.  :meth:`from_dict` inverts it.  A model with
        prismatic joints writes ``joint_types`` and its joint lists in SI units
        per joint (rad or m) as ``q_min, q_max, qd_max, home_q`` instead of the
        four ``_deg`` lists; a coupled chain writes ``coupling``.
        """
        if self.joint_types:
            si = lambda a: [float(v) for v in a]  # noqa: E731
            joints = {"joint_types": list(self.joint_types), "q_min": si(self.q_min_rad), "q_max": si(self.q_max_rad),
                      "qd_max": si(self.qd_max_rad_s), "home_q": si(self.home_q_rad)}  # fmt: skip
        else:
            joints = {"q_min_deg": _degrees_exact(self.q_min_rad), "q_max_deg": _degrees_exact(self.q_max_rad),
                      "qd_max_deg_s": _degrees_exact(self.qd_max_rad_s), "home_q_deg": _degrees_exact(self.home_q_rad)}
        return {
            "name": self.name,
            "dof": self.dof,
            "convention": self.convention,
            "a_m": [float(v) for v in self.a_m],
            "d_m": [float(v) for v in self.d_m],
            "alpha_deg": _degrees_exact(self.alpha_rad),
            "theta_offset_deg": _degrees_exact(self.theta_offset_rad),
            "joint_sign": [float(v) for v in self.joint_sign],
            **joints,
            "tool": None if _is_identity(self.tool) else self.tool.tolist(),
            "control_rate_hz": float(self.control_rate_hz),
            "reach_m": float(self.reach_m),
            "source": self.source,
            "description": self.description,
            **({"joint_names": list(self.joint_names)} if self.joint_names else {}),
            **({"base_frame": self.base_frame} if self.base_frame else {}),
            **({"chain": self.chain.tolist()} if self.chain is not None else {}),
            **({"coupling": self.coupling.tolist()} if self.coupling is not None else {}),
        }

    def to_published_dict(self) -> dict:
        """The entry of ``robots.json`` in the published KinHEC form: SI units (metres, radians).

        Keys, in order: ``name, dof, convention, a, d, alpha, theta_offset,
        q_min, q_max, qd_max, control_rate_hz, tool, q_sign, reach_m,
        description, source, home_q, units``.  ``q_sign`` is ``None`` when
        every joint counts positively, ``tool`` ``None`` for the identity;
        ``free6d`` has ``dof`` 0, convention ``"standard"``, empty lists and
        ``home_q`` ``None``.  A DH model with prismatic joints adds kinhec's
        ``joint_types`` (their ``q`` entries are metres).  :meth:`from_dict` reads it back.
        """
        free = self.convention == "free"
        vals = lambda a: [float(v) for v in np.asarray(a, dtype=np.float64).reshape(-1)]  # noqa: E731
        signs = vals(self.joint_sign)
        return {
            "name": self.name,
            "dof": int(self.dof),
            "convention": "standard" if free else self.convention,
            "a": vals(self.a_m),
            "d": vals(self.d_m),
            "alpha": vals(self.alpha_rad),
            "theta_offset": vals(self.theta_offset_rad),
            "q_min": vals(self.q_min_rad),
            "q_max": vals(self.q_max_rad),
            "qd_max": vals(self.qd_max_rad_s),
            "control_rate_hz": float(self.control_rate_hz),
            "tool": None if _is_identity(self.tool) else self.tool.tolist(),
            "q_sign": None if all(v == 1.0 for v in signs) else signs,
            "reach_m": float(self.reach_m),
            "description": self.description,
            "source": self.source,
            "home_q": None if free else vals(self.home_q_rad),
            "units": dict(PUBLISHED_UNITS),
            **({"joint_types": list(self.joint_types)} if self.joint_types else {}),  # kinhec's: q in m where prismatic
        }

    def dh_published(self) -> dict:
        """The DH table in the published ``extra_json["true_dh"]`` form: ``a, d`` [m], ``alpha, theta_offset`` [rad]."""
        vals = lambda a: [float(v) for v in np.asarray(a, dtype=np.float64).reshape(-1)]  # noqa: E731
        return {"a": vals(self.a_m), "d": vals(self.d_m), "alpha": vals(self.alpha_rad),
                "theta_offset": vals(self.theta_offset_rad)}  # fmt: skip

    @classmethod
    def _from_published_dict(cls, data: dict) -> "RobotModel":
        required = ("name", "dof", "convention", "a", "d", "alpha", "theta_offset", "q_min", "q_max", "qd_max",
                    "control_rate_hz", "reach_m")  # fmt: skip
        missing = [k for k in required if k not in data]
        if missing:
            raise InputError(f"data: expected the keys {', '.join(required)}, got a dict missing {', '.join(missing)}")
        dof = data["dof"]
        arr = lambda k: np.asarray(data[k] if data.get(k) is not None else [], dtype=np.float64).reshape(-1)  # noqa: E731
        free = isinstance(dof, (int, np.integer)) and not isinstance(dof, bool) and dof == 0
        sign = data.get("q_sign")
        home = data.get("home_q")
        tool = data.get("tool")
        n = len(arr("a"))
        return cls(
            name=data["name"],
            dof=dof,
            convention="free" if free else data["convention"],
            a_m=arr("a"),
            d_m=arr("d"),
            alpha_rad=arr("alpha"),
            theta_offset_rad=arr("theta_offset"),
            joint_sign=np.ones(n) if sign is None else np.asarray(sign, dtype=np.float64).reshape(-1),
            q_min_rad=arr("q_min"),
            q_max_rad=arr("q_max"),
            qd_max_rad_s=arr("qd_max"),
            home_q_rad=(np.zeros(n) if home is None else np.asarray(home, dtype=np.float64).reshape(-1)),
            tool=np.eye(4) if tool is None else np.asarray(tool, dtype=np.float64),
            control_rate_hz=data["control_rate_hz"],
            reach_m=data["reach_m"],
            source=data.get("source") or "",
            description=data.get("description") or "",
            joint_types=tuple(data.get("joint_types") or ()),
        )

    @classmethod
    def from_dict(cls, data: dict) -> "RobotModel":
        """Rebuild a model from :meth:`to_dict` or :meth:`to_published_dict` output (e.g. ``robots.json``).

        A dict with the key ``a`` (and not ``a_m``) is read in the published
        form (metres, radians, ``q_sign``); otherwise kinhec's own form.
        """
        if not isinstance(data, dict):
            raise InputError(f"data: expected a dict as written by RobotModel.to_dict, got {type(data).__name__}")
        if "a" in data and "a_m" not in data:
            return cls._from_published_dict(data)
        typed = data.get("joint_types") is not None
        joint_keys = ("q_min", "q_max", "qd_max", "home_q") if typed else ("q_min_deg", "q_max_deg", "qd_max_deg_s",
                                                                             "home_q_deg")  # fmt: skip
        required = ("name", "dof", "convention", "a_m", "d_m", "alpha_deg", "theta_offset_deg", "joint_sign",
                    *joint_keys, "control_rate_hz", "reach_m")
        missing = [k for k in required if k not in data]
        if missing:
            raise InputError(f"data: expected the keys {', '.join(required)}, got a dict missing {', '.join(missing)}")
        rad = lambda k: np.radians(np.asarray(data[k], dtype=np.float64).reshape(-1))  # noqa: E731
        joint = (lambda k: np.asarray(data[k], dtype=np.float64).reshape(-1)) if typed else rad  # noqa: E731
        tool = data.get("tool")
        return cls(
            name=data["name"],
            dof=data["dof"],
            convention=data["convention"],
            a_m=np.asarray(data["a_m"], dtype=np.float64).reshape(-1),
            d_m=np.asarray(data["d_m"], dtype=np.float64).reshape(-1),
            alpha_rad=rad("alpha_deg"),
            theta_offset_rad=rad("theta_offset_deg"),
            joint_sign=np.asarray(data["joint_sign"], dtype=np.float64).reshape(-1),
            q_min_rad=joint(joint_keys[0]),
            q_max_rad=joint(joint_keys[1]),
            qd_max_rad_s=joint(joint_keys[2]),
            home_q_rad=joint(joint_keys[3]),
            tool=np.eye(4) if tool is None else np.asarray(tool, dtype=np.float64),
            control_rate_hz=data["control_rate_hz"],
            reach_m=data["reach_m"],
            source=data.get("source", ""),
            description=data.get("description", ""),
            joint_names=tuple(data.get("joint_names") or ()),
            base_frame=data.get("base_frame", ""),
            chain=None if data.get("chain") is None else np.asarray(data["chain"], dtype=np.float64),
            joint_types=tuple(data.get("joint_types") or ()),
            coupling=None if data.get("coupling") is None else np.asarray(data["coupling"], dtype=np.float64),
        )


# --------------------------------------------------------------------------- #
# the registry (numbers from /spec/robots.md: the manufacturers' tables)
# --------------------------------------------------------------------------- #
_UR_SOURCE = "Universal Robots, 'DH parameters for calculations of kinematics and dynamics' (official support article)"
_UR_HOME_DEG = [0.0, -90.0, 90.0, -90.0, -90.0, 0.0]
_UR_ALPHA_DEG = [90.0, 0.0, 0.0, 90.0, -90.0, 0.0]
_IIWA_SOURCE = (
    "KUKA LBR iiwa 7 R800 / 14 R820 specification (axis ranges, speeds); "
    "link lengths cross-checked with the iiwa_stack URDF"
)


def _arm(name, convention, rate_hz, reach_m, a, d, alpha_deg, q_lim_deg, qd_max_deg_s, home_deg, *,
         theta_off_deg=None, joint_sign=None, tool=None, source, description) -> RobotModel:
    n = len(a)
    lim = np.asarray(q_lim_deg, dtype=np.float64)
    return RobotModel(
        name=name,
        dof=n,
        convention=convention,
        a_m=np.asarray(a, dtype=np.float64),
        d_m=np.asarray(d, dtype=np.float64),
        alpha_rad=np.radians(alpha_deg),
        theta_offset_rad=np.radians(theta_off_deg if theta_off_deg is not None else [0.0] * n),
        joint_sign=np.asarray(joint_sign if joint_sign is not None else [1.0] * n, dtype=np.float64),
        q_min_rad=np.radians(lim[:, 0]),
        q_max_rad=np.radians(lim[:, 1]),
        qd_max_rad_s=np.radians(qd_max_deg_s),
        home_q_rad=np.radians(home_deg),
        tool=np.eye(4) if tool is None else np.asarray(tool, dtype=np.float64),
        control_rate_hz=rate_hz,
        reach_m=reach_m,
        source=source,
        description=description,
    )


def _ur(name, rate_hz, reach_m, d1, a2, a3, d4, d5, d6, qd_max_deg_s, description) -> RobotModel:
    return _arm(
        name, "standard", rate_hz, reach_m,
        a=[0.0, a2, a3, 0.0, 0.0, 0.0],
        d=[d1, 0.0, 0.0, d4, d5, d6],
        alpha_deg=_UR_ALPHA_DEG,
        q_lim_deg=[[-360.0, 360.0]] * 6,
        qd_max_deg_s=qd_max_deg_s,
        home_deg=_UR_HOME_DEG,
        source=_UR_SOURCE,
        description=description,
    )


def _iiwa(name, d1, d3, qd_max_deg_s, description) -> RobotModel:
    return _arm(
        name, "standard", 500.0, 0.8 if name == "iiwa7" else 0.82,
        a=[0.0] * 7,
        d=[d1, 0.0, d3, 0.0, 0.4, 0.0, 0.126],
        alpha_deg=[-90.0, 90.0, 90.0, -90.0, -90.0, 90.0, 0.0],
        q_lim_deg=[[-170.0, 170.0], [-120.0, 120.0], [-170.0, 170.0], [-120.0, 120.0],
                   [-170.0, 170.0], [-120.0, 120.0], [-175.0, 175.0]],
        qd_max_deg_s=qd_max_deg_s,
        home_deg=[0.0, 30.0, 0.0, -60.0, 0.0, 90.0, 0.0],
        source=_IIWA_SOURCE,
        description=description,
    )


def _free6d() -> RobotModel:
    empty = np.zeros(0)
    return RobotModel(
        name="free6d", dof=0, convention="free",
        a_m=empty, d_m=empty, alpha_rad=empty, theta_offset_rad=empty, joint_sign=empty,
        q_min_rad=empty, q_max_rad=empty, qd_max_rad_s=empty, home_q_rad=empty,
        tool=np.eye(4), control_rate_hz=100.0, reach_m=1.0,
        source="kinhec (no kinematic chain)",
        description="Free-floating end-effector (Cartesian trajectory families without a kinematic chain)",
    )


_UR_CB3_SPEED = [180.0, 180.0, 180.0, 360.0, 360.0, 360.0]
_MODELS = (
    _ur("ur3", 125.0, 0.5, 0.1519, -0.24365, -0.21325, 0.11235, 0.08535, 0.0819,
        _UR_CB3_SPEED, "UR3 (CB3), 6-DoF collaborative arm"),
    _ur("ur5", 125.0, 0.85, 0.089159, -0.425, -0.39225, 0.10915, 0.09465, 0.0823,
        [180.0] * 6, "UR5 (CB3), 6-DoF collaborative arm"),
    _ur("ur10", 125.0, 1.3, 0.1273, -0.612, -0.5723, 0.163941, 0.1157, 0.0922,
        [120.0, 120.0, 180.0, 180.0, 180.0, 180.0], "UR10 (CB3), 6-DoF collaborative arm"),
    _ur("ur3e", 500.0, 0.5, 0.15185, -0.24355, -0.2132, 0.13105, 0.08535, 0.0921,
        _UR_CB3_SPEED, "UR3e (e-Series)"),
    _ur("ur5e", 500.0, 0.85, 0.1625, -0.425, -0.3922, 0.1333, 0.0997, 0.0996,
        [180.0] * 6, "UR5e (e-Series)"),
    _ur("ur10e", 500.0, 1.3, 0.1807, -0.6127, -0.57155, 0.17415, 0.11985, 0.11655,
        [120.0, 120.0, 180.0, 180.0, 180.0, 180.0], "UR10e (e-Series)"),
    _ur("ur16e", 500.0, 0.9, 0.1807, -0.4784, -0.36, 0.17415, 0.11985, 0.11655,
        [120.0, 120.0, 180.0, 180.0, 180.0, 180.0], "UR16e (e-Series)"),
    _ur("ur20", 500.0, 1.75, 0.2363, -0.862, -0.7287, 0.201, 0.1593, 0.1543,
        [120.0, 120.0, 150.0, 210.0, 210.0, 210.0], "UR20 (e-Series)"),
    _arm(
        "panda", "modified", 1000.0, 0.855,
        a=[0.0, 0.0, 0.0, 0.0825, -0.0825, 0.0, 0.088],
        d=[0.333, 0.0, 0.316, 0.0, 0.384, 0.0, 0.0],
        alpha_deg=[0.0, -90.0, 90.0, 90.0, -90.0, 90.0, 90.0],
        q_lim_deg=[[-166.0, 166.0], [-101.0, 101.0], [-166.0, 166.0], [-176.0, -4.0],
                   [-166.0, 166.0], [-1.0, 215.0], [-166.0, 166.0]],
        qd_max_deg_s=[124.6, 124.6, 124.6, 124.6, 149.5, 149.5, 149.5],
        home_deg=[0.0, -45.0, 0.0, -135.0, 0.0, 90.0, 45.0],
        tool=[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.107], [0.0, 0.0, 0.0, 1.0]],
        source=(
            "Franka Control Interface documentation, 'Robot and interface specifications' "
            "(Craig's convention DH table, joint limits)"
        ),
        description="Franka Emika Panda, 7-DoF (flange frame, without hand)",
    ),
    _iiwa("iiwa7", 0.34, 0.4, [98.0, 98.0, 100.0, 130.0, 140.0, 180.0, 180.0], "KUKA LBR iiwa 7 R800, 7-DoF"),
    _iiwa("iiwa14", 0.36, 0.42, [85.0, 85.0, 100.0, 75.0, 130.0, 135.0, 135.0], "KUKA LBR iiwa 14 R820, 7-DoF"),
    _arm(
        "irb120", "standard", 250.0, 0.58,
        a=[0.0, 0.27, 0.07, 0.0, 0.0, 0.0],
        d=[0.29, 0.0, 0.0, 0.302, 0.0, 0.072],
        alpha_deg=[-90.0, 0.0, -90.0, 90.0, -90.0, 0.0],
        theta_off_deg=[0.0, -90.0, 0.0, 0.0, 0.0, 180.0],
        joint_sign=[1.0, 1.0, -1.0, 1.0, 1.0, 1.0],
        q_lim_deg=[[-165.0, 165.0], [-110.0, 110.0], [-110.0, 70.0], [-160.0, 160.0],
                   [-120.0, 120.0], [-400.0, 400.0]],
        qd_max_deg_s=[250.0, 250.0, 250.0, 320.0, 320.0, 420.0],
        home_deg=[0.0, 20.0, -10.0, 0.0, 60.0, 0.0],
        source=(
            "ABB IRB 120 product specification (axis ranges, speeds, reach); DH link lengths as in the "
            "published kinematic tables (290/270/70/302/72 mm)"
        ),
        description=(
            "ABB IRB 120, 6-DoF industrial arm (joint zero = ABB calibration pose: tool0 at (0.374, 0, 0.630) m, "
            "orientation quaternion (0.7071, 0, 0.7071, 0))"
        ),
    ),
    _arm(
        "puma560", "standard", 100.0, 0.88,
        a=[0.0, 0.4318, 0.0203, 0.0, 0.0, 0.0],
        d=[0.67183, 0.0, 0.15005, 0.4318, 0.0, 0.0],
        alpha_deg=[90.0, 0.0, -90.0, 90.0, -90.0, 0.0],
        q_lim_deg=[[-160.03, 160.03], [-110.01, 110.01], [-134.99, 134.99], [-265.97, 265.97],
                   [-99.98, 99.98], [-265.97, 265.97]],
        qd_max_deg_s=[85.9] * 6,
        home_deg=[0.0, -40.0, -30.0, 0.0, -80.0, 0.0],
        source="P. Corke, Robotics Toolbox for Python, models.DH.Puma560",
        description="Unimation PUMA 560, 6-DoF (standard-DH model of the Robotics Toolbox, including the 0.67183 m pedestal)",
    ),
    _free6d(),
)

#: The 13 arms then ``"free6d"``, in the order of the published model table.
ROBOT_NAMES: tuple[str, ...] = tuple(m.name for m in _MODELS)


# --------------------------------------------------------------------------- #
# reduced-DOF machines (kinhec only: not in the published model table or tiers)
# --------------------------------------------------------------------------- #
_AXIS_ROTATIONS = {"x": np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]),
                   "y": np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]]),
                   "z": np.eye(3)}  # fmt: skip


def _axis_chain(joints, tool: np.ndarray) -> np.ndarray:
    """Constant blocks ``C_k`` of a chain whose joints sit at offsets ``xyz`` [m] (each in the frame of the joint
    before it, axes parallel to the base frame at zero) and move about / along the base axis ``"x"``, ``"y"`` or
    ``"z"``: joint ``k`` is ``Trans(xyz_k) A_k [Rz or Tz] A_k^T`` with ``A_k`` the exact rotation taking z to the axis.
    """
    blocks, pending = [], np.eye(4)
    for xyz, axis in joints:
        O = np.eye(4)
        O[:3, 3] = xyz
        A = np.eye(4)
        A[:3, :3] = _AXIS_ROTATIONS[axis]
        blocks.append(pending @ O @ A)
        pending = A.T.copy()
    blocks.append(pending @ tool)
    return np.asarray(blocks)


_FLANGE_DOWN = _rot_x(math.pi)  # the flange's z axis points down (towards the work surface)
_SCARA_SOURCE = (
    "Epson LS6-B602S specification sheet (arm #1 325 mm, arm #2 275 mm; joint #1 +-132 deg, joint #2 +-150 deg, "
    "joint #3 stroke 200 mm, joint #4 +-360 deg; maximum speeds joints #1+#2 6800 mm/s, joint #3 2350 mm/s, "
    "joint #4 2400 deg/s); the caps of joints #1 and #2 are the composite speed over their radius (0.600 m, 0.275 m)"
)
_PALLETISER_SOURCE = (
    "ABB IRB 460 product specification (4 axes; axis 1 +-165 deg at 145 deg/s, axis 2 -40/+85 deg at 110 deg/s, "
    "axis 3 -20/+120 deg at 120 deg/s, axis 6 +-300 deg at 400 deg/s; 2.4 m reach); link lengths are kinhec's "
    "nominal values for that reach (the drawing's exact offsets are not transcribed)"
)


def _scara_ls6() -> RobotModel:
    lim = np.array([[-132.0, 132.0], [-150.0, 150.0]])
    return RobotModel(
        name="scara_ls6", dof=4, convention="standard",
        a_m=np.array([0.325, 0.275, 0.0, 0.0]), d_m=np.zeros(4),
        alpha_rad=np.array([0.0, math.pi, 0.0, 0.0]), theta_offset_rad=np.zeros(4),
        joint_sign=np.array([1.0, 1.0, -1.0, -1.0]),
        q_min_rad=np.array([*np.radians(lim[:, 0]), -0.2, math.radians(-360.0)]),
        q_max_rad=np.array([*np.radians(lim[:, 1]), 0.0, math.radians(360.0)]),
        qd_max_rad_s=np.array([6.8 / 0.6, 6.8 / 0.275, 2.35, math.radians(2400.0)]),
        home_q_rad=np.array([math.radians(-30.0), math.radians(90.0), -0.1, 0.0]),
        tool=np.eye(4), control_rate_hz=1000.0, reach_m=0.6, source=_SCARA_SOURCE,
        description=("Epson LS6-B602S SCARA, 4 axes: two horizontal arms, the vertical stroke of joint #3 "
                     "(q3 in metres, 0 at the top, down negative) and the flange turn; flange level, z down; base "
                     "frame on joint 1's axis at the flange height of q3 = 0, z up"),
        joint_names=("j1", "j2", "j3", "j4"), base_frame="base",
        joint_types=("revolute", "revolute", "prismatic", "revolute"),
    )  # fmt: skip


def _palletiser_irb460() -> RobotModel:
    # chain joints: base turn (z), shoulder (y), elbow (y), the passive level joint (y), flange turn (z); the
    # parallelograms make the elbow angle relative to the upper arm q3 - q2 (q3 is the forearm's angle below the
    # horizontal, q2 the upper arm's tilt forward from the vertical) and the passive joint -q3, so the flange stays
    # level whatever q2 and q3 are
    joints = [((0.0, 0.0, 0.0), "z"), ((0.26, 0.0, 0.7425), "y"), ((0.0, 0.0, 0.945), "y"),
              ((1.025, 0.0, 0.0), "y"), ((0.22, 0.0, -0.2), "z")]  # fmt: skip
    coupling = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, -1.0, 1.0, 0], [0, 0, -1.0, 0], [0, 0, 0, 1.0]])
    z4 = np.zeros(4)
    return RobotModel(
        name="palletiser_irb460", dof=4, convention="chain", a_m=z4, d_m=z4, alpha_rad=z4, theta_offset_rad=z4,
        joint_sign=np.ones(4), q_min_rad=np.radians([-165.0, -40.0, -20.0, -300.0]),
        q_max_rad=np.radians([165.0, 85.0, 120.0, 300.0]), qd_max_rad_s=np.radians([145.0, 110.0, 120.0, 400.0]),
        home_q_rad=np.radians([0.0, 20.0, 10.0, 0.0]), tool=np.eye(4), control_rate_hz=250.0, reach_m=2.4,
        source=_PALLETISER_SOURCE,
        description=("ABB IRB 460 palletiser, 4 axes: base turn, upper arm and forearm (parallelograms: q3 is the "
                     "forearm's angle below the horizontal) and the flange turn; flange level, z down; base frame "
                     "on the foot, axis 1 up"),
        joint_names=("axis1", "axis2", "axis3", "axis6"), base_frame="base",
        chain=_axis_chain(joints, _FLANGE_DOWN), coupling=coupling,
    )  # fmt: skip


def _gantry_xyzr() -> RobotModel:
    joints = [((0.0, 0.0, 0.0), "x"), ((0.0, 0.0, 0.0), "y"), ((0.0, 0.0, 0.0), "z"), ((0.0, 0.0, 0.0), "z")]
    z4 = np.zeros(4)
    return RobotModel(
        name="gantry_xyzr", dof=4, convention="chain", a_m=z4, d_m=z4, alpha_rad=z4, theta_offset_rad=z4,
        joint_sign=np.ones(4), q_min_rad=np.array([0.0, 0.0, 0.0, -math.pi]),
        q_max_rad=np.array([1.0, 0.8, 0.4, math.pi]), qd_max_rad_s=np.array([1.0, 1.0, 0.5, math.radians(360.0)]),
        home_q_rad=np.array([0.5, 0.4, 0.2, 0.0]), tool=np.eye(4), control_rate_hz=500.0, reach_m=0.7,
        source="kinhec: a generic Cartesian gantry (1.0 x 0.8 x 0.4 m working volume, no manufacturer's model)",
        description=("Cartesian gantry XYZ + rotation about the vertical (q1..q3 in metres from the corner of the "
                     "working volume, flange height q3); flange level, z down; base frame at the lowest corner of "
                     "the working volume, z up"),
        joint_names=("x", "y", "z", "r"), base_frame="base",
        chain=_axis_chain(joints, _FLANGE_DOWN), joint_types=("prismatic", "prismatic", "prismatic", "revolute"),
    )  # fmt: skip


_MACHINES = (_scara_ls6(), _palletiser_irb460(), _gantry_xyzr())
#: Reduced-DOF machines kinhec models but the published model table and tiers do not carry: their flange stays
#: level, so every motion turns about the vertical only (a SCARA, a 4-axis palletiser, a Cartesian gantry).
MACHINE_NAMES: tuple[str, ...] = tuple(m.name for m in _MACHINES)
_REGISTRY: dict[str, RobotModel] = {m.name: m for m in (*_MODELS, *_MACHINES)}


def get_robot(name: str) -> RobotModel:
    """The registered model called ``name`` (one of :data:`ROBOT_NAMES` or :data:`MACHINE_NAMES`).

    The returned model is shared and immutable (read-only arrays).

    Raises
    ------
    UnknownNameError
        If ``name`` is not a registered robot; the message lists the valid names.
    """
    model = _REGISTRY.get(name) if isinstance(name, str) else None
    if model is None:
        raise UnknownNameError("robot", name, ROBOT_NAMES + MACHINE_NAMES)
    return model


def robots_json() -> dict:
    """Content of ``robots.json``: ``{name: RobotModel.to_published_dict()}`` for every registered model, in order."""
    return {name: _REGISTRY[name].to_published_dict() for name in ROBOT_NAMES}
