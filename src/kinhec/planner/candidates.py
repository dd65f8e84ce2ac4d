"""Candidate poses of the planner: reachable, well-conditioned flange poses that see the whole target.

A :class:`Scene` holds the robot, the set-up, the camera and the target, and the
guesses of ``X`` and ``Y``.  :func:`sample_candidates` draws viewpoints around the
target and solves them by inverse kinematics, adds joint-space neighbours of the
solutions, and keeps the configurations that pass every test of
:class:`PlanLimits`:

* inside the joint limits with a margin (``limit_margin_deg``);
* away from singularities: condition number of the Jacobian, with its
  translation rows divided by the robot's reach, at most ``max_condition``;
* above the mounting plane: every joint frame after the base higher than
  ``floor_z_m`` (not tested on a robot with fewer than six joints, whose frames
  sit where the machine's design puts them);
* the whole target in view: every target point in front of the camera and
  inside the image with ``margin_px`` to each border, the target centre at a
  depth in ``[MIN_DEPTH_M, MAX_DEPTH_M]`` (:mod:`kinhec.models.cameras`) and the board
  facing the camera (view angle at most ``max_view_angle_deg``);
* robust to the guesses: the same view test in perturbed scenes whose ``X``
  and ``Y`` are off by the guess tolerance (default 50 mm and 10 deg,
  :mod:`kinhec.planner.guesses`) passes in at least the fraction
  ``min_visible_fraction`` of them, so that a plan made from rough guesses
  still sees the target (the planner weighs the scenes where a pose loses it,
  :mod:`kinhec.planner.expected`).

Viewpoints (all draws from the caller's generator):

* eye-in-hand: camera centres on the spherical cap of ``max_view_angle_deg``
  around the board normal, at 0.5-2 times the lower end of
  :func:`kinhec.synth.trajectories.viewing_distance_range` (farther with a large
  guess tolerance, :func:`eih_distance_range`), aimed at a point of the
  central half of the board, rolled uniformly about the optical axis;
* eye-to-hand: marker centres uniform in the camera's image and in depth
  between 0.2 m and the far side of the robot's reach, marker normals within
  ``max_view_angle_deg`` of the line of sight, turned uniformly in their plane.

Flange poses ``T_base_ee = T_base_cam inv(X)`` (eye-in-hand) or ``T_base_marker
inv(X)`` (eye-to-hand) out of the robot's reach are dropped before the inverse
kinematics.  A robot with fewer than six joints (a SCARA, a palletiser, a gantry)
cannot reach such viewpoints: its candidates are joint configurations drawn
uniformly inside the limits instead, and the same tests pick the usable ones.  The
limit margin of a prismatic joint is ``limit_margin_deg`` in radians times
:data:`PRISMATIC_MARGIN_M_PER_RAD` metres.  The pose stored for a candidate is always the forward kinematics of
its joints, so that joints and pose agree to round-off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from kinhec.geometry import se3
from kinhec.models.cameras import (
    MAX_DEPTH_M,
    MIN_DEPTH_M,
    CameraPreset,
    TargetPreset,
    pinhole_pixels,
    to_camera,
    view_angles_deg_unchecked,
)
from kinhec.util.errors import InputError
from kinhec.planner.guesses import DEFAULT_GUESS_TOLERANCE
from kinhec.models.robots import RobotModel
from kinhec.solvers import pair_model as pm
from kinhec.synth.trajectories import cone_directions, frames_from_z, viewing_distance_range

__all__ = ["SETUPS", "PlanLimits", "Scene", "Candidates", "feasibility", "sample_candidates", "perturbed_guesses",
           "in_view", "MIN_VISIBLE_FRACTION"]  # fmt: skip

#: The two set-ups: camera on the flange looking at a static board, or static camera looking at a marker on the flange.
SETUPS = pm.CONFIGURATIONS
#: Viewpoints drawn per call of :func:`sample_candidates` by default.
N_VIEWS = 1500
#: Joint-space neighbours drawn around each IK solution, and their standard deviation [rad].
N_NEIGHBOURS = 1
NEIGHBOUR_STD_RAD = 0.15
#: Distance range of eye-in-hand viewpoints, as multiples of the lower end of ``viewing_distance_range``.
EIH_DISTANCE_FACTORS = (0.5, 2.0)
#: Under a guess tolerance, the near end (when only poses that see the target in every perturbed scene are kept) and
#: the far end of the eye-in-hand distances, as multiples of :func:`guess_distance_m`.
EIH_GUESS_NEAR_FACTOR = 0.75
EIH_GUESS_FAR_FACTOR = 1.5
#: Metres of limit margin of a prismatic joint per radian of ``limit_margin_deg``.
PRISMATIC_MARGIN_M_PER_RAD = 0.1
#: Nearest depth [m] of eye-to-hand marker centres in front of the camera.
ETH_MIN_DEPTH_M = 0.2
#: Perturbed scenes in which a pose must see the target when the guesses have a tolerance, and their seed.
N_GUESS_PERTURBATIONS = 16
GUESS_SEED = 3030
#: Default smallest fraction of the perturbed scenes in which a candidate must see the target: three quarters.  The
#: search weighs the chance of losing it (the expected error over the scenes, :mod:`kinhec.planner.design`), so most
#: poses see it in every scene; 1 keeps only poses that never lose it, at about twice the bound eye-in-hand from
#: rough guesses (docs/planner.md), as the first stage of the two-stage workflow needs.
MIN_VISIBLE_FRACTION = 0.75
#: Inverse-kinematics iterations and restarts per viewpoint.
IK_MAX_ITER = 40
IK_RESTARTS = 1


@dataclass(frozen=True)
class PlanLimits:
    """What a usable pose is (see the module docstring).

    Attributes
    ----------
    margin_px : float
        Smallest distance [px] of every target point to the image border.
    max_view_angle_deg : float
        Largest angle [deg] between the target normal and the line of sight.
    limit_margin_deg : float
        Distance [deg] kept from every joint limit.
    max_condition : float
        Largest condition number of the reach-scaled Jacobian.
    floor_z_m : float
        Height [m] (base frame) below which no joint frame may go.
    guess_tolerance_mm, guess_tolerance_deg : float
        How far the guesses of ``X`` and ``Y`` may be off [mm, deg] (default
        :data:`kinhec.planner.guesses.DEFAULT_GUESS_TOLERANCE`, 50 mm and 10 deg: guesses made without a
        calibration): when positive, the target must also be in view (with ``margin_px``) for
        :data:`N_GUESS_PERTURBATIONS` versions of the scene whose ``X`` and ``Y`` are each moved by this much
        along random directions and turned by this much about random axes (fixed draws, seed
        :data:`GUESS_SEED`).  Zero trusts the guesses (e.g. when they are the truth of a simulation).
    """

    margin_px: float = 20.0
    max_view_angle_deg: float = 60.0
    limit_margin_deg: float = 5.0
    max_condition: float = 30.0
    floor_z_m: float = 0.0
    guess_tolerance_mm: float = DEFAULT_GUESS_TOLERANCE[0]
    guess_tolerance_deg: float = DEFAULT_GUESS_TOLERANCE[1]
    min_visible_fraction: float = MIN_VISIBLE_FRACTION

    def __post_init__(self) -> None:
        checks = {"margin_px": (0.0, math.inf), "max_view_angle_deg": (1.0, 75.0), "limit_margin_deg": (0.0, 45.0),
                  "max_condition": (1.0, math.inf), "floor_z_m": (-math.inf, math.inf),
                  "guess_tolerance_mm": (0.0, 1000.0), "guess_tolerance_deg": (0.0, 90.0),
                  "min_visible_fraction": (0.0, 1.0)}  # fmt: skip
        for name, (lo, hi) in checks.items():
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or math.isnan(v) or not lo <= v <= hi:
                raise InputError(f"{name}: expected a number in [{lo}, {hi}], got {v!r}")

    def to_dict(self) -> dict:
        return {k: float(getattr(self, k)) for k in ("margin_px", "max_view_angle_deg", "limit_margin_deg",
                                                     "max_condition", "floor_z_m", "guess_tolerance_mm",
                                                     "guess_tolerance_deg", "min_visible_fraction")}  # fmt: skip

    @property
    def has_tolerance(self) -> bool:
        """Whether the guesses may be off (a positive distance or angle)."""
        return self.guess_tolerance_mm > 0 or self.guess_tolerance_deg > 0


@dataclass(frozen=True)
class Scene:
    """The calibration set-up as the planner sees it.

    Attributes
    ----------
    robot : RobotModel
        An arm (not ``free6d``).
    configuration : {"eye_in_hand", "eye_to_hand"}
    camera : CameraPreset
    target : TargetPreset
        Eye-in-hand the static board, eye-to-hand the marker on the flange.
    X : ndarray, shape (4, 4)
        Guess of ``T_ee_cam`` (eye-in-hand) or ``T_ee_marker`` (eye-to-hand) [m].
    Y : ndarray, shape (4, 4)
        Guess of ``T_base_world`` (the board, eye-in-hand) or ``T_base_cam`` (eye-to-hand) [m].
    """

    robot: RobotModel
    configuration: str
    camera: CameraPreset
    target: TargetPreset
    X: np.ndarray
    Y: np.ndarray

    def observed(self, T_base_ee: np.ndarray) -> np.ndarray:
        """``T_cam_target`` ``(N, 4, 4)`` predicted for flange poses ``(N, 4, 4)``."""
        return pm.predicted_camera_poses(T_base_ee, self.X, self.Y, self.configuration)

    def T_base_cam(self, T_base_ee: np.ndarray) -> np.ndarray:
        """Camera poses in the base frame ``(N, 4, 4)`` (eye-to-hand: ``Y`` repeated)."""
        if self.configuration == "eye_in_hand":
            return T_base_ee @ self.X
        return np.broadcast_to(self.Y, T_base_ee.shape).copy()


@dataclass
class Candidates:
    """Feasible poses (``M`` of them) and what was checked.

    Attributes
    ----------
    q : ndarray, shape (M, dof)
        Joint configurations [rad].
    T_base_ee : ndarray, shape (M, 4, 4)
        Their flange poses (forward kinematics of ``q``) [m].
    C : ndarray, shape (M, 4, 4)
        Predicted ``T_cam_target``.
    view_angle_deg, depth_m, margin_px, condition : ndarray, shape (M,)
        View angle, depth of the target centre, smallest distance of a target point to the image border, and
        condition number of the reach-scaled Jacobian.
    counts : dict
        How many viewpoints were drawn, in reach, solved by IK, and how many poses passed each test.
    visible_fraction : ndarray, shape (M,)
        Fraction of the perturbed scenes of the guess tolerance in which the pose sees the target (1 without a
        tolerance).
    """

    q: np.ndarray
    T_base_ee: np.ndarray
    C: np.ndarray
    view_angle_deg: np.ndarray
    depth_m: np.ndarray
    margin_px: np.ndarray
    condition: np.ndarray
    counts: dict = field(default_factory=dict)
    visible_fraction: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.visible_fraction is None:
            self.visible_fraction = np.ones(self.q.shape[0])

    def __len__(self) -> int:
        return int(self.q.shape[0])

    @classmethod
    def empty(cls, dof: int, counts: dict) -> "Candidates":
        """No candidate (``counts`` says why)."""
        e = np.zeros(0)
        return cls(np.zeros((0, dof)), np.zeros((0, 4, 4)), np.zeros((0, 4, 4)), e, e, e, e, dict(counts))

    def take(self, idx) -> "Candidates":
        """The candidates at ``idx`` (same counts)."""
        return Candidates(self.q[idx], self.T_base_ee[idx], self.C[idx], self.view_angle_deg[idx], self.depth_m[idx],
                          self.margin_px[idx], self.condition[idx], dict(self.counts),
                          self.visible_fraction[idx])  # fmt: skip


def _shoulder(robot: RobotModel) -> np.ndarray:
    """Centre [m] of the reach sphere: the origin of the first joint frame at home."""
    return robot.joint_frames(robot.home_q_rad)[1, :3, 3]


def feasibility(scene: Scene, q: np.ndarray, limits: PlanLimits) -> dict:
    """Every test of :class:`PlanLimits` on configurations ``q`` ``(N, dof)``, as whole arrays.

    Returns
    -------
    dict
        ``T_base_ee`` (N, 4, 4), ``C`` (N, 4, 4), boolean (N,) arrays ``limits``, ``conditioned``, ``floor``,
        ``visible_at_guesses`` (the view test with the guesses as they are), ``visible`` (also in at least
        ``min_visible_fraction`` of the perturbed scenes of the guess tolerance) and ``ok`` (all of them), the float
        (N,) arrays ``view_angle_deg``, ``depth_m``, ``margin_px``, ``condition`` and ``visible_fraction`` (of the
        perturbed scenes; 1 without a tolerance), and ``scene_visible`` (S, N), the view test in each perturbed
        scene (S = 0 without a tolerance).
    """
    robot = scene.robot
    m = math.radians(limits.limit_margin_deg)
    if robot.joint_types:
        m = np.where(robot.prismatic, m * PRISMATIC_MARGIN_M_PER_RAD, m)
    in_limits = np.all((q >= robot.q_min_rad + m) & (q <= robot.q_max_rad - m), axis=-1)
    T, J = robot.fk_jacobian(q)
    Js = J.copy()
    Js[:, 3:] /= robot.reach_m
    s = np.linalg.svd(Js, compute_uv=False)
    cond = s[:, 0] / np.maximum(s[:, -1], 1e-300)
    if robot.dof < 6:  # a machine's frames sit where its design puts them (a SCARA's base frame at flange height)
        floor = np.ones(q.shape[0], dtype=bool)
    else:
        frames = robot.joint_frames(q)
        floor = np.all(frames[:, 2:, 2, 3] >= limits.floor_z_m, axis=-1)
    C = scene.observed(T)
    at_guesses, border, angle, dc = in_view(scene, C, limits)
    draws = perturbed_guesses(scene, limits) if limits.has_tolerance else []
    scene_visible = np.zeros((len(draws), q.shape[0]), dtype=bool)
    for s, (Xp, Yp) in enumerate(draws):
        scene_visible[s] = in_view(scene, pm.predicted_camera_poses(T, Xp, Yp, scene.configuration), limits)[0]
    fraction = scene_visible.mean(axis=0) if draws else np.ones(q.shape[0])
    # the fraction is a multiple of 1/S: compare with a little slack so that 0.5 of 16 keeps 8 of 16
    visible = at_guesses & (fraction >= limits.min_visible_fraction - 1e-9)
    return dict(T_base_ee=T, C=C, limits=in_limits, conditioned=cond <= limits.max_condition, floor=floor,
                visible_at_guesses=at_guesses, visible=visible, visible_fraction=fraction, scene_visible=scene_visible,
                ok=in_limits & (cond <= limits.max_condition) & floor & visible,
                view_angle_deg=angle, depth_m=dc, margin_px=border, condition=cond)  # fmt: skip


def in_view(scene: Scene, C: np.ndarray, limits: PlanLimits):
    """Whole target in view at poses ``C`` ``(N, 4, 4)``: the mask, the smallest border distance [px], the view
    angle [deg] and the depth of the target centre [m], each ``(N,)``."""
    cam, tgt = scene.camera, scene.target
    uv, depth = pinhole_pixels(cam, to_camera(C, tgt.points_m))
    with np.errstate(invalid="ignore"):
        border = np.minimum.reduce([uv[..., 0], cam.width_px - uv[..., 0], uv[..., 1], cam.height_px - uv[..., 1]])
    border = np.where((depth > 0) & np.isfinite(border), border, -np.inf).min(axis=-1)
    angle = view_angles_deg_unchecked(C)
    dc = C[:, 2, 3]
    visible = (border >= limits.margin_px) & (dc >= MIN_DEPTH_M) & (dc <= MAX_DEPTH_M) & (angle <= limits.max_view_angle_deg)
    return visible, border, angle, dc


def perturbed_guesses(scene: Scene, limits: PlanLimits) -> list:
    """``N_GUESS_PERTURBATIONS`` pairs ``(X, Y)`` each moved and turned by the tolerance in its own frame.

    The draws are fixed (seed :data:`GUESS_SEED`): the same directions for every plan, scaled by the tolerance.
    """
    rng = np.random.default_rng(GUESS_SEED)
    out = []
    for _ in range(N_GUESS_PERTURBATIONS):
        pair = []
        for T in (scene.X, scene.Y):
            d = se3.random_unit_vectors(rng, 2)
            xi = np.concatenate([d[0] * math.radians(limits.guess_tolerance_deg), d[1] * 1e-3 * limits.guess_tolerance_mm])
            pair.append(T @ se3.se3_exp(xi))
        out.append(tuple(pair))
    return out


def guess_distance_m(scene: Scene, limits: PlanLimits) -> float:
    """Depth [m] at which the target still fits the image when the guesses are off by the tolerance.

    The target's shorter side, widened by twice the tolerance's distance (``X`` and ``Y`` both moved), must fit
    the image's shorter side less the margin and the image shift ``f tan(deg)`` of the tolerance's angle.
    """
    cam, tgt = scene.camera, scene.target
    half_img = 0.5 * min(cam.width_px, cam.height_px) - limits.margin_px
    half_img -= cam.f_px * math.tan(math.radians(limits.guess_tolerance_deg))
    half_tgt = 0.5 * min(tgt.size_m) + 2e-3 * limits.guess_tolerance_mm
    return cam.f_px * half_tgt / max(half_img, 1.0)


def eih_distance_range(scene: Scene, limits: PlanLimits) -> tuple[float, float]:
    """Range [m] of the camera distances of eye-in-hand viewpoints.

    :data:`EIH_DISTANCE_FACTORS` times the lower end of :func:`kinhec.synth.trajectories.viewing_distance_range`;
    under a guess tolerance the far end moves out to ``1.5`` times :func:`guess_distance_m` when that is larger,
    so that there are viewpoints that keep the target in view of every perturbed scene, and with
    ``min_visible_fraction = 1`` (only those are kept) the near end moves out to ``0.75`` times it too.
    """
    d_lo, _ = viewing_distance_range(scene.camera, scene.target)
    lo, hi = EIH_DISTANCE_FACTORS[0] * d_lo, EIH_DISTANCE_FACTORS[1] * d_lo
    if not limits.has_tolerance:
        return lo, hi
    d = guess_distance_m(scene, limits)
    if limits.min_visible_fraction >= 1.0:
        lo = max(lo, EIH_GUESS_NEAR_FACTOR * d)
    return lo, max(hi, EIH_GUESS_FAR_FACTOR * d)


def _viewpoints(scene: Scene, rng: np.random.Generator, m: int, limits: PlanLimits) -> np.ndarray:
    """``m`` flange poses ``T_base_ee`` from viewpoints around the target (module docstring)."""
    cam, tgt = scene.camera, scene.target
    half = math.radians(limits.max_view_angle_deg)
    if scene.configuration == "eye_in_hand":
        Y = scene.Y
        lo, hi = eih_distance_range(scene, limits)
        dirs = cone_directions(rng, np.broadcast_to(Y[:3, 2], (m, 3)), half)
        d = rng.uniform(lo, hi, m)
        centre = Y[:3, 3] + dirs * d[:, None]
        w, h = tgt.size_m
        local = np.column_stack([rng.uniform(-0.25, 0.25, m) * w, rng.uniform(-0.25, 0.25, m) * h, np.zeros(m)])
        aim = Y[:3, 3] + local @ Y[:3, :3].T
        z = aim - centre
        z /= np.linalg.norm(z, axis=-1, keepdims=True)
        T_obs = se3.transform_from_rotation_translation(frames_from_z(z, rng.uniform(-math.pi, math.pi, m)), centre)
    else:
        Y = scene.Y
        far = float(np.linalg.norm(Y[:3, 3] - _shoulder(scene.robot))) + scene.robot.reach_m
        depth = rng.uniform(ETH_MIN_DEPTH_M, max(far, ETH_MIN_DEPTH_M + 0.1), m)
        u = rng.uniform(0.0, cam.width_px, m)
        v = rng.uniform(0.0, cam.height_px, m)
        p_cam = np.column_stack([(u - cam.cx_px) / cam.f_px, (v - cam.cy_px) / cam.f_px, np.ones(m)]) * depth[:, None]
        p = p_cam @ Y[:3, :3].T + Y[:3, 3]
        to_cam = Y[:3, 3] - p
        to_cam /= np.linalg.norm(to_cam, axis=-1, keepdims=True)
        n = cone_directions(rng, to_cam, half)
        T_obs = se3.transform_from_rotation_translation(frames_from_z(n, rng.uniform(-math.pi, math.pi, m)), p)
    return T_obs @ se3.invert_transform(scene.X, check=False)


def sample_candidates(scene: Scene, rng: np.random.Generator, limits: PlanLimits, *, n_views: int = N_VIEWS) -> Candidates:
    """Feasible candidate poses around the target (module docstring).

    Parameters
    ----------
    scene : Scene
    rng : numpy.random.Generator
        Source of every draw (viewpoints, IK restarts, joint-space neighbours).
    limits : PlanLimits
    n_views : int
        Viewpoints in the robot's reach to solve by IK.

    Returns
    -------
    Candidates
        The feasible poses (possibly none; ``counts`` tells where they were lost).
    """
    robot = scene.robot
    if robot.dof < 6:
        return _joint_space_candidates(scene, rng, limits, n_views)
    shoulder = _shoulder(robot)
    lever = float(np.linalg.norm(scene.X[:3, 3]))
    kept, drawn = [], 0
    for _ in range(20):  # draw until n_views are in reach (a scene out of reach draws 20 batches and stops)
        T = _viewpoints(scene, rng, n_views, limits)
        drawn += n_views
        # the flange itself sits within reach of the shoulder; a generous bound, the IK decides
        T = T[np.linalg.norm(T[:, :3, 3] - shoulder, axis=-1) <= 1.1 * robot.reach_m + 0.1]
        kept.append(T)
        if sum(len(k) for k in kept) >= n_views:
            break
    T_want = np.concatenate(kept)[:n_views]
    res = robot.ik(T_want, rng, q_init=robot.home_q_rad, n_restarts=IK_RESTARTS, max_iter=IK_MAX_ITER)
    q_ik = res.q[np.asarray(res.success, dtype=bool)]
    # joint-space neighbours of the solutions: more variety of wrist angles at the cost of forward kinematics only
    nb = np.repeat(q_ik, N_NEIGHBOURS, axis=0)
    nb = nb + NEIGHBOUR_STD_RAD * rng.standard_normal(nb.shape)
    q = np.concatenate([q_ik, nb])
    f = feasibility(scene, q, limits) if q.size else None
    counts = {"viewpoints_drawn": int(drawn), "in_reach": int(len(T_want)), "ik_solved": int(q_ik.shape[0]),
              "joint_neighbours": int(nb.shape[0])}  # fmt: skip
    if f is None:
        counts.update(within_limits=0, conditioned=0, above_floor=0, target_visible_at_guesses=0, target_visible=0,
                      feasible=0)  # fmt: skip
        return Candidates.empty(robot.dof, counts)
    counts.update(within_limits=int(f["limits"].sum()), conditioned=int(f["conditioned"].sum()),
                  above_floor=int(f["floor"].sum()), target_visible_at_guesses=int(f["visible_at_guesses"].sum()),
                  target_visible=int(f["visible"].sum()), feasible=int(f["ok"].sum()))  # fmt: skip
    ok = f["ok"]
    return Candidates(q[ok], f["T_base_ee"][ok], f["C"][ok], f["view_angle_deg"][ok], f["depth_m"][ok],
                      f["margin_px"][ok], f["condition"][ok], counts, f["visible_fraction"][ok])  # fmt: skip


#: Joint configurations drawn per viewpoint asked for, for a robot with fewer than six joints.
JOINT_DRAWS_PER_VIEW = 20


def _joint_space_candidates(scene: Scene, rng: np.random.Generator, limits: PlanLimits, n_views: int) -> Candidates:
    """Candidates of a reduced-DOF robot: configurations uniform inside the limits that pass every test."""
    robot = scene.robot
    m = JOINT_DRAWS_PER_VIEW * n_views
    q = rng.uniform(robot.q_min_rad, robot.q_max_rad, (m, robot.dof))
    f = feasibility(scene, q, limits)
    counts = {"joint_draws": int(m), "within_limits": int(f["limits"].sum()),
              "conditioned": int(f["conditioned"].sum()),
              "above_floor": int(f["floor"].sum()), "target_visible_at_guesses": int(f["visible_at_guesses"].sum()),
              "target_visible": int(f["visible"].sum()), "feasible": int(f["ok"].sum())}  # fmt: skip
    ok = f["ok"]
    return Candidates(q[ok], f["T_base_ee"][ok], f["C"][ok], f["view_angle_deg"][ok], f["depth_m"][ok],
                      f["margin_px"][ok], f["condition"][ok], counts, f["visible_fraction"][ok])  # fmt: skip
