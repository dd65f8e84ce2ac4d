"""The recipe of one sequence: every factor the generator needs, flat and JSON-friendly.

A :class:`Recipe` is what a tier expands into (one per sequence) and what
:func:`kinhec.synth.generator.generate_sequence` turns into the two pose streams.  It
is stored verbatim, as JSON, in the ``config_json`` column of the index, so a
sequence can always be regenerated from its own row.

Units are SI unless a field name says otherwise (``_deg``, ``_mm``): seconds,
metres, radians, hertz.  Angles that are design knobs rather than measurements
(cone half-angle, rotation-angle range) are in degrees, as in the tier files.

Validation happens once, in :meth:`Recipe.__post_init__`: unknown names raise
:class:`~kinhec.util.errors.UnknownNameError`, bad values and inconsistent
combinations raise :class:`~kinhec.util.errors.InputError`; both name the field.

Combinations the generator refuses (with the reason)
----------------------------------------------------
* ``free6d`` has no joints: only the families ``lookat``, ``cartesian_cone``
  and ``proposal_sine``, and only the ``se3_gaussian`` robot model; the arms
  use ``joint_sinusoid``, ``joint_waypoints`` and ``lookat``.
* ``sampling_mode="stations"`` records the dwell instants on one shared clock:
  ``sync`` must be ``"sync"``, and the family must have dwells or keyframes
  (not ``joint_sinusoid``).  A ``"sync"`` sequence has identical clocks, so
  ``time_offset_s``, ``time_jitter_std_s`` and ``camera_drop_fraction`` must be 0.
* ``world_frame="vo_origin"`` (monocular) needs a moving camera, i.e.
  ``eye_in_hand``, and cannot use ``pnp`` (there is no board); a monocular scale
  (``scale != 1`` or ``scale_drift_std > 0``) needs ``vo_origin``.
* ``student_t_dof`` makes the camera ``se3_gaussian`` / ``vo_drift`` noise
  heavy-tailed; the PnP pixel noise is always Gaussian, so it is refused with
  ``pnp``.
* ``outlier_model="none"`` needs ``outlier_fraction=0`` and a positive fraction
  needs a real model.
* A reduced-DOF machine (:data:`kinhec.models.robots.MACHINE_NAMES`, kinhec only:
  no tier draws them) moves in joint space only (``joint_sinusoid``,
  ``joint_waypoints``: a look-at viewpoint needs six joints), excites
  ``single``, ``wrist`` or ``all`` joints (the axis pairs of ``parallel`` and
  ``two_axes`` are the revolute arms'), and keeps its true kinematics nominal
  (no ``dh_error``: its ground truth keeps the flange level).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from kinhec import __version__
from kinhec.models.cameras import CAMERA_NAMES, TARGET_NAMES
from kinhec.util.errors import InputError, UnknownNameError
from kinhec.models.robots import MACHINE_NAMES, ROBOT_NAMES
from kinhec.io.schema import (
    CAMERA_NOISE_MODELS,
    CONFIGURATIONS,
    FAMILIES,
    OUTLIER_MODELS,
    ROBOT_NOISE_MODELS,
    SAMPLING_MODES,
    TRACKS,
    WORLD_FRAMES,
)

__all__ = [
    "SYNC_MODES",
    "SUBSETS",
    "JOINT_FAMILIES",
    "CARTESIAN_FAMILIES",
    "DEFAULT_TARGETS",
    "Recipe",
    "robot_noise_models_str",
]

SYNC_MODES = ("sync", "async")
#: The on-disk spellings of ``sync`` (index, ``config_json``), accepted as input too.
_PUBLISHED_SYNC = {"synchronous": "sync", "asynchronous": "async"}
#: Joint subsets of the ``joint_sinusoid`` family.
SUBSETS = ("single", "parallel", "two_axes", "wrist", "all")
#: Families that need a kinematic chain.
JOINT_FAMILIES = ("joint_sinusoid", "joint_waypoints")
#: Families reserved for the free-floating ``free6d``.
CARTESIAN_FAMILIES = ("cartesian_cone", "proposal_sine")
#: Target used when ``Recipe.target`` is None, per configuration.
DEFAULT_TARGETS = {"eye_in_hand": "checker_9x6_25mm", "eye_to_hand": "marker_3x3_30mm"}


def robot_noise_models_str(models) -> str:
    """The index-column spelling of a robot-noise-model tuple: names joined by ``+``, ``"none"`` if empty."""
    return "+".join(models) if models else "none"


@dataclass(frozen=True)
class Recipe:
    """Every factor of one generated sequence (validated on construction; immutable).

    Identity
    --------
    sequence_id : str
        ``<track>-<6-digit index>``, e.g. ``"noise-000000"``.
    track : str
        One of :data:`kinhec.io.schema.TRACKS`.
    level : str
        Human-readable factor levels of the track (``"robot=r2|camera=c3"``).
    seed : int
        Private seed of the sequence in ``[0, 2**63)`` (derived by the tier code
        from the global seed and the id); every random draw of the sequence
        comes from it.
    generator_version : str
        kinhec version that the recipe was written for (default: the running one).

    Setup
    -----
    robot : str
        Robot model, one of :data:`kinhec.models.robots.ROBOT_NAMES`.
    configuration : {"eye_in_hand", "eye_to_hand"}
        Camera on the flange looking at a static board, or static camera looking
        at a marker on the flange.
    family : str
        Trajectory family: ``joint_sinusoid``, ``joint_waypoints``, ``lookat``
        (arms and free6d), ``cartesian_cone``, ``proposal_sine`` (free6d only).
    sampling_mode : {"continuous", "stations"}
        Frames at a fixed rate along the motion, or one frame per dwell
        (move-stop-capture).
    sync : {"sync", "async"}
        One shared clock at the camera rate, or a robot stream at the controller
        rate and a camera stream with its own phase, offset, jitter and drops.
    world_frame : {"target", "vo_origin"}
        Observed reference: a physical board / marker, or the first camera pose
        (monocular visual odometry).
    camera : str
        Camera preset, one of :data:`kinhec.models.cameras.CAMERA_NAMES` (default ``hd``).
    target : str or None
        Target preset; None picks ``checker_9x6_25mm`` (eye-in-hand) or
        ``marker_3x3_30mm`` (eye-to-hand).  Stored resolved.

    Timing and sampling
    -------------------
    duration_s : float
        Length [s] of a continuous sequence (ignored for stations, whose length
        follows from the motion, and for ``single_pass`` paths).
    single_pass : bool
        Continuous ``joint_waypoints`` / ``lookat`` paths only: pass once through
        the waypoints and last as long as that takes (as the published
        generator's waypoint paths do), instead of touring them for
        ``duration_s``.
    n_stations : int
        Stations (dwell captures) of ``joint_waypoints`` / ``lookat``; in
        continuous mode, the number of waypoints toured.
    camera_rate_hz : float
        Camera frame rate [Hz] of continuous sequences.
    robot_rate_cap_hz : float
        Cap [Hz] on the robot-stream rate of asynchronous sequences (the stream
        runs at ``min(controller rate, cap)``).
    time_offset_s : float
        Clock offset [s] of the camera: a frame captured at robot time ``t_gt`` is
        stamped ``t_gt + time_offset_s + jitter`` (async only).
    time_jitter_std_s : float
        Standard deviation [s] of the Gaussian time-stamp jitter (async only;
        conditioned on strictly increasing stamps, see
        :func:`kinhec.synth.trajectories.make_clocks`).
    camera_drop_fraction : float
        Probability in ``[0, 1)`` that a camera frame is dropped (async only).

    Motion design
    -------------
    subset : str
        Joints excited by ``joint_sinusoid``: ``single``, ``parallel`` (two joints
        with parallel axes at home), ``two_axes`` (two joints with clearly
        non-parallel axes), ``wrist`` (last three), ``all``.
    speed_fraction : float
        Fraction in ``(0, 1]`` of the joint speed caps (free6d: of
        :data:`kinhec.synth.trajectories.FREE6D_SPEED_CAPS`) the motion may use
        (0.25; 0.35 in the temporal track).
    n_harmonics : int
        Sinusoids per joint of ``joint_sinusoid`` (2; 3 in the temporal track).
    frequency_range_hz : (float, float)
        Range [Hz] of the frequency of each sinusoid of ``joint_sinusoid``, each
        drawn on its own (0.03-0.25 Hz; 0.1-0.6 Hz in the temporal track).
        (``proposal_sine`` has fixed figures:
        :func:`kinhec.synth.trajectories.proposal_sine`.)
    dwell_range_s : (float, float)
        Range [s] of the dwell at every waypoint / station, drawn uniformly for
        each one (the capture happens at its middle); 0.6-1.4 s as published.
    cone_half_angle_deg : float
        ``cartesian_cone``: half-angle [deg] of the cone of rotation axes
        (0 = one axis, fully degenerate; 90 = hemisphere).
    rot_angle_range_deg : (float, float)
        ``cartesian_cone``: range [deg] of the rotation angle between keyframes.
    n_waypoints : int
        Keyframes of ``cartesian_cone`` (one frame each in station mode).
    trans_range_m : float
        Side [m] of the cube in which the keyframe positions of
        ``cartesian_cone`` are drawn.

    Robot measurement
    -----------------
    robot_noise_models : tuple of str
        Any of ``se3_gaussian`` (flange twist noise), ``joint_gaussian`` (encoder
        noise through the nominal kinematics), ``dh_error`` (true DH geometry
        perturbed, poses reported with the nominal model).  May be empty.
    robot_rot_std_rad, robot_trans_std_m : float
        ``se3_gaussian``: std [rad], [m] of each flange-frame twist component.
    robot_student_t_dof : float or None
        Degrees of freedom of a Student-t robot twist noise (None: Gaussian; the
        shipped tiers keep the robot Gaussian).
    joint_std_rad : float
        ``joint_gaussian``: std [rad] of every encoder reading.
    dh_len_std_m, dh_ang_std_rad, dh_joint_std_rad : float
        ``dh_error``: std of the errors on ``a`` and ``d`` [m], on ``alpha``
        [rad] and on the joint offsets ``theta`` [rad].

    Camera measurement
    ------------------
    camera_noise_model : {"se3_gaussian", "pnp", "vo_drift"}
        Anisotropic pose noise, pixel noise + PnP, or visual-odometry random walk.
    camera_rot_std_rad : float
        ``se3_gaussian``: std [rad] of the target-frame rotation noise.
    camera_trans_std_m, camera_trans_std_z_m : float
        ``se3_gaussian``: std [m] of the translation noise along camera x/y
        (lateral) and z (optical axis).
    pixel_std : float
        ``pnp``: std [px] of the pixel noise (NaN when not used).
    student_t_dof : float or None
        Degrees of freedom of the heavy-tailed camera noise (``se3_gaussian``,
        ``vo_drift``); None = Gaussian.
    vo_drift_rot_std_rad, vo_drift_trans_std_m : float
        ``vo_drift``: std [rad], [m] of the per-frame relative-motion twist noise.
    outlier_fraction : float
        Fraction in ``[0, 1]`` of the measurements replaced by outliers.
    outlier_model : {"none", "random_pose", "planar_flip", "gross"}
        How an outlier is made.
    scale : float
        Monocular scale (> 0) applied to the measured camera translations.
    scale_drift_std : float
        Std of the per-frame log-scale random-walk increment.
    """

    # identity
    sequence_id: str = "custom-000000"
    track: str = "mixed"
    level: str = ""
    seed: int = 0
    # setup
    robot: str = "ur5e"
    configuration: str = "eye_in_hand"
    family: str = "joint_sinusoid"
    sampling_mode: str = "continuous"
    sync: str = "sync"
    world_frame: str = "target"
    camera: str = "hd"
    target: str | None = None
    # timing and sampling
    duration_s: float = 20.0
    single_pass: bool = False
    n_stations: int = 20
    camera_rate_hz: float = 30.0
    robot_rate_cap_hz: float = 500.0
    time_offset_s: float = 0.0
    time_jitter_std_s: float = 0.0
    camera_drop_fraction: float = 0.0
    # motion design
    subset: str = "all"
    speed_fraction: float = 0.25
    n_harmonics: int = 2
    frequency_range_hz: tuple[float, float] = (0.03, 0.25)
    dwell_range_s: tuple[float, float] = (0.6, 1.4)
    cone_half_angle_deg: float = 45.0
    rot_angle_range_deg: tuple[float, float] = (8.0, 15.0)
    n_waypoints: int = 10
    trans_range_m: float = 0.15
    # robot measurement
    robot_noise_models: tuple[str, ...] = ("se3_gaussian",)
    robot_rot_std_rad: float = 0.0
    robot_trans_std_m: float = 0.0
    robot_student_t_dof: float | None = None
    joint_std_rad: float = 0.0
    dh_len_std_m: float = 0.0
    dh_ang_std_rad: float = 0.0
    dh_joint_std_rad: float = 0.0
    # camera measurement
    camera_noise_model: str = "se3_gaussian"
    camera_rot_std_rad: float = 0.0
    camera_trans_std_m: float = 0.0
    camera_trans_std_z_m: float = 0.0
    pixel_std: float = math.nan
    student_t_dof: float | None = None
    vo_drift_rot_std_rad: float = 0.0
    vo_drift_trans_std_m: float = 0.0
    outlier_fraction: float = 0.0
    outlier_model: str = "none"
    scale: float = 1.0
    scale_drift_std: float = 0.0
    generator_version: str = field(default=__version__)

    # ------------------------------------------------------------------ checks
    def __post_init__(self) -> None:
        s = self._set
        s("sequence_id", _string(self.sequence_id, "sequence_id", nonempty=True))
        s("track", _name(self.track, "track", TRACKS))
        s("level", _string(self.level, "level"))
        s("seed", _integer(self.seed, "seed", 0, 2**63 - 1))
        s("generator_version", _string(self.generator_version, "generator_version", nonempty=True))
        s("robot", _name(self.robot, "robot", ROBOT_NAMES + MACHINE_NAMES))
        s("configuration", _name(self.configuration, "configuration", CONFIGURATIONS))
        s("family", _name(self.family, "family", FAMILIES))
        s("sampling_mode", _name(self.sampling_mode, "sampling_mode", SAMPLING_MODES))
        s("sync", _name(_PUBLISHED_SYNC.get(self.sync, self.sync), "sync", SYNC_MODES))
        s("world_frame", _name(self.world_frame, "world_frame", WORLD_FRAMES))
        s("camera", _name(self.camera, "camera", CAMERA_NAMES))
        tgt = DEFAULT_TARGETS[self.configuration] if self.target is None else self.target
        s("target", _name(tgt, "target", TARGET_NAMES))

        s("duration_s", _real(self.duration_s, "duration_s", lo=0.0, lo_open=True))
        if not isinstance(self.single_pass, (bool, np.bool_)):
            raise InputError(f"single_pass: expected true or false, got {self.single_pass!r}")
        s("single_pass", bool(self.single_pass))
        s("n_stations", _integer(self.n_stations, "n_stations", 2, 100_000))
        s("camera_rate_hz", _real(self.camera_rate_hz, "camera_rate_hz", lo=0.0, lo_open=True))
        s("robot_rate_cap_hz", _real(self.robot_rate_cap_hz, "robot_rate_cap_hz", lo=0.0, lo_open=True))
        s("time_offset_s", _real(self.time_offset_s, "time_offset_s"))
        s("time_jitter_std_s", _real(self.time_jitter_std_s, "time_jitter_std_s", lo=0.0))
        s("camera_drop_fraction",
          _real(self.camera_drop_fraction, "camera_drop_fraction", lo=0.0, hi=1.0, hi_open=True))  # fmt: skip

        s("subset", _name(self.subset, "subset", SUBSETS))
        s("speed_fraction", _real(self.speed_fraction, "speed_fraction", lo=0.0, hi=1.0, lo_open=True))
        s("n_harmonics", _integer(self.n_harmonics, "n_harmonics", 1, 8))
        s("frequency_range_hz", _range(self.frequency_range_hz, "frequency_range_hz", lo=0.0, lo_open=True))
        s("dwell_range_s", _range(self.dwell_range_s, "dwell_range_s", lo=0.0))
        s("cone_half_angle_deg", _real(self.cone_half_angle_deg, "cone_half_angle_deg", lo=0.0, hi=180.0))
        s("rot_angle_range_deg", _range(self.rot_angle_range_deg, "rot_angle_range_deg", lo=0.0, hi=180.0))
        s("n_waypoints", _integer(self.n_waypoints, "n_waypoints", 2, 100_000))
        s("trans_range_m", _real(self.trans_range_m, "trans_range_m", lo=0.0))

        s("robot_noise_models", _models(self.robot_noise_models))
        for f in ("robot_rot_std_rad", "robot_trans_std_m", "joint_std_rad", "dh_len_std_m", "dh_ang_std_rad",
                  "dh_joint_std_rad", "camera_rot_std_rad", "camera_trans_std_m", "camera_trans_std_z_m",
                  "vo_drift_rot_std_rad", "vo_drift_trans_std_m", "scale_drift_std"):  # fmt: skip
            s(f, _real(getattr(self, f), f, lo=0.0))
        s("robot_student_t_dof", _dof(self.robot_student_t_dof, "robot_student_t_dof"))
        s("student_t_dof", _dof(self.student_t_dof, "student_t_dof"))
        s("camera_noise_model", _name(self.camera_noise_model, "camera_noise_model", CAMERA_NOISE_MODELS))
        px = math.nan if self.pixel_std is None else self.pixel_std
        s("pixel_std", math.nan if _is_nan(px) else _real(px, "pixel_std", lo=0.0))
        s("outlier_fraction", _real(self.outlier_fraction, "outlier_fraction", lo=0.0, hi=1.0))
        s("outlier_model", _name(self.outlier_model, "outlier_model", OUTLIER_MODELS))
        s("scale", _real(self.scale, "scale", lo=0.0, lo_open=True))
        self._check_combinations()

    def _set(self, name: str, value) -> None:
        object.__setattr__(self, name, value)

    def _check_combinations(self) -> None:
        free = self.robot == "free6d"
        if self.robot in MACHINE_NAMES:
            if self.family not in JOINT_FAMILIES:
                raise InputError(f"family: expected one of {', '.join(JOINT_FAMILIES)} for the machine {self.robot!r} "
                                 f"(a look-at viewpoint needs six joints), got {self.family!r}")  # fmt: skip
            if self.subset in ("parallel", "two_axes"):
                raise InputError(f"subset: expected single, wrist or all for the machine {self.robot!r}, got "
                                 f"{self.subset!r}")  # fmt: skip
            if "dh_error" in self.robot_noise_models:
                raise InputError(f"robot_noise_models: expected no 'dh_error' for the machine {self.robot!r} (its "
                                 "ground truth keeps the flange level), got it")  # fmt: skip
        if free and self.family in JOINT_FAMILIES:
            raise InputError(
                f"family: expected one of lookat, cartesian_cone, proposal_sine for robot 'free6d' "
                f"(no joints), got {self.family!r}"
            )
        if not free and self.family in CARTESIAN_FAMILIES:
            raise InputError(
                f"family: expected one of joint_sinusoid, joint_waypoints, lookat for arm {self.robot!r} "
                f"({self.family} is reserved for 'free6d'), got {self.family!r}"
            )
        if free and set(self.robot_noise_models) - {"se3_gaussian"}:
            raise InputError(
                f"robot_noise_models: expected only 'se3_gaussian' for robot 'free6d' (no joints), "
                f"got {self.robot_noise_models!r}"
            )
        if self.sampling_mode == "stations" and self.family == "joint_sinusoid":
            raise InputError(
                "sampling_mode: expected 'continuous' for family 'joint_sinusoid' (a sinusoid never dwells), "
                "got 'stations'"
            )
        if self.sampling_mode == "stations" and self.sync != "sync":
            raise InputError(
                f"sync: expected 'synchronous' with sampling_mode 'stations' (both streams share the dwell instants), "
                f"got {self.sync!r}"
            )
        if self.sync == "sync":
            for f in ("time_offset_s", "time_jitter_std_s", "camera_drop_fraction"):
                if getattr(self, f) != 0:
                    raise InputError(
                        f"{f}: expected 0 for a synchronous sequence, got {_plain(getattr(self, f))}"
                    )
        if self.world_frame == "vo_origin":
            if self.configuration != "eye_in_hand":
                raise InputError(
                    f"configuration: expected 'eye_in_hand' with world_frame 'vo_origin' (a static camera has no "
                    f"odometry), got {self.configuration!r}"
                )
            if self.camera_noise_model == "pnp":
                raise InputError(
                    "camera_noise_model: expected 'se3_gaussian' or 'vo_drift' with world_frame 'vo_origin' "
                    "(there is no board to run PnP on), got 'pnp'"
                )
            if self.outlier_model == "planar_flip":
                raise InputError(
                    "outlier_model: expected 'random_pose' or 'gross' with world_frame 'vo_origin' (a visual-odometry "
                    "origin has no plane to flip), got 'planar_flip'"
                )
        elif self.scale != 1.0 or self.scale_drift_std != 0.0:
            raise InputError(
                f"scale: expected 1 and scale_drift_std 0 unless world_frame is 'vo_origin' (a board gives metric "
                f"poses), got scale={self.scale!r}, scale_drift_std={self.scale_drift_std!r}"
            )
        if self.camera_noise_model == "pnp":
            if _is_nan(self.pixel_std):
                raise InputError("pixel_std: expected a number >= 0 with camera_noise_model 'pnp', got NaN")
            if self.student_t_dof is not None:
                raise InputError(
                    f"student_t_dof: expected None with camera_noise_model 'pnp' (pixel noise is Gaussian), "
                    f"got {self.student_t_dof!r}"
                )
        if self.outlier_model == "none" and self.outlier_fraction != 0:
            raise InputError(f"outlier_fraction: expected 0 with outlier_model 'none', got {self.outlier_fraction!r}")
        if self.outlier_model != "none" and self.outlier_fraction == 0:
            raise InputError(
                f"outlier_model: expected 'none' with outlier_fraction 0, got {self.outlier_model!r}"
            )

    # --------------------------------------------------------------- derived
    @property
    def is_free(self) -> bool:
        """True for the free-floating ``free6d``."""
        return self.robot == "free6d"

    @property
    def robot_noise_models_str(self) -> str:
        """``robot_noise_models`` as written in the index (``"se3_gaussian+joint_gaussian"``, ``"none"``)."""
        return robot_noise_models_str(self.robot_noise_models)

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        """Plain JSON-ready dict of every field (tuples become lists; NaN stays a float NaN)."""
        out = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else v
        return out

    @classmethod
    def from_dict(cls, data) -> "Recipe":
        """Build a recipe from a dict (e.g. a tier expansion or a parsed ``config_json``).

        Missing keys take their defaults; unknown keys are refused with the list
        of valid ones; JSON ``null`` for ``pixel_std`` means NaN, lists become
        tuples and ``robot_noise_models`` may also be a ``"+"``-joined string.
        """
        if not isinstance(data, dict):
            raise InputError(f"recipe: expected a dict of recipe fields, got {type(data).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise UnknownNameError("recipe field", unknown[0], names)
        kw = dict(data)
        for k in ("frequency_range_hz", "rot_angle_range_deg", "dwell_range_s"):
            if isinstance(kw.get(k), list):
                kw[k] = tuple(kw[k])
        m = kw.get("robot_noise_models")
        if isinstance(m, str):
            kw["robot_noise_models"] = () if m in ("", "none") else tuple(m.split("+"))
        elif isinstance(m, list):
            kw["robot_noise_models"] = tuple(m)
        return cls(**kw)

    def replace(self, **changes) -> "Recipe":
        """A validated copy with some fields changed."""
        return dataclasses.replace(self, **changes)


# --------------------------------------------------------------------------- #
# field checkers (return the cleaned value or raise naming the field)
# --------------------------------------------------------------------------- #
def _plain(x) -> str:
    """``repr`` for messages, numpy scalars as plain Python values (``1.11``, not ``np.float64(1.11)``)."""
    if isinstance(x, np.generic):
        x = x.item()
    return repr(x)


def _is_nan(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isnan(float(x))


def _string(x, name: str, *, nonempty: bool = False) -> str:
    if not isinstance(x, str) or (nonempty and not x):
        want = "a non-empty string" if nonempty else "a string"
        raise InputError(f"{name}: expected {want}, got {_plain(x)}")
    return x


def _name(x, name: str, valid) -> str:
    if not isinstance(x, str) or x not in valid:
        raise UnknownNameError(name, x, valid)
    return x


def _integer(x, name: str, lo: int, hi: int) -> int:
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        if isinstance(x, float) and x.is_integer():
            x = int(x)
        else:
            raise InputError(f"{name}: expected an integer in [{lo}, {hi}], got {_plain(x)}")
    if not lo <= int(x) <= hi:
        raise InputError(f"{name}: expected an integer in [{lo}, {hi}], got {_plain(x)}")
    return int(x)


def _real(x, name: str, *, lo=None, hi=None, lo_open=False, hi_open=False) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(float(x)):
        raise InputError(f"{name}: expected a finite number, got {_plain(x)}")
    v = float(x)
    bad = (lo is not None and (v < lo or (lo_open and v == lo))) or (
        hi is not None and (v > hi or (hi_open and v == hi))
    )
    if bad:
        lb = "(" if lo_open else "["
        rb = ")" if hi_open else "]"
        rng = f"{lb}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}{rb}"
        raise InputError(f"{name}: expected a number in {rng}, got {_plain(x)}")
    return v


def _range(x, name: str, *, lo=None, hi=None, lo_open=False) -> tuple[float, float]:
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise InputError(f"{name}: expected a pair (low, high), got {_plain(x)}")
    a = _real(x[0], f"{name}[0]", lo=lo, hi=hi, lo_open=lo_open)
    b = _real(x[1], f"{name}[1]", lo=lo, hi=hi, lo_open=lo_open)
    if a > b:
        raise InputError(f"{name}: expected low <= high, got {_plain(x)}")
    return (a, b)


def _dof(x, name: str) -> float | None:
    if x is None or _is_nan(x):
        return None
    return _real(x, name, lo=1.0)


def _models(x) -> tuple[str, ...]:
    if isinstance(x, str):
        x = () if x in ("", "none") else tuple(x.split("+"))
    if not isinstance(x, (tuple, list)):
        raise InputError(f"robot_noise_models: expected a tuple of model names, got {_plain(x)}")
    out = []
    for m in x:
        if m not in ROBOT_NOISE_MODELS:
            raise UnknownNameError("robot_noise_models", m, ROBOT_NOISE_MODELS)
        if m in out:
            raise InputError(f"robot_noise_models: expected each model at most once, got {tuple(x)!r}")
        out.append(m)
    # canonical order, so that equal sets compare and serialise equally
    return tuple(m for m in ROBOT_NOISE_MODELS if m in out)
