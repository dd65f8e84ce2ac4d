"""Continuous-time trajectories, hand-eye and world placement, and the clocks of a sequence.

Steps 1-4 of the generation pipeline live here:

1. the hand-eye transform ``X`` (:func:`sample_hand_eye`);
2. the flange trajectory, continuous in time and evaluated vectorised at any
   array of instants (:class:`Trajectory` and the family builders
   :func:`joint_sinusoid`, :func:`joint_waypoints`, :func:`lookat`,
   :func:`cartesian_cone`, :func:`proposal_sine`);
3. the world reference ``Y``: sampled first for ``lookat`` (inside
   :func:`lookat`), placed after the trajectory otherwise (:func:`place_world`);
4. the time stamps of both streams (:func:`make_clocks`).

Frames and conventions follow :mod:`kinhec.geometry.se3` (``T_a_b`` maps b- to
a-coordinates) and :mod:`kinhec.models.cameras` (camera optical frame: ``z`` forward,
``x`` right, ``y`` down; target frame: points in ``z = 0``, ``z`` towards the
viewer).  ``X`` is ``T_ee_cam`` (eye-in-hand) or ``T_ee_marker``
(eye-to-hand); ``Y`` is ``T_base_world`` (the board) or ``T_base_cam`` (the
static camera).

Joint-space motions respect the joint limits and a fraction
(``speed_fraction``) of the joint speed caps by construction:

* sinusoids: ``q_j(t) = c_j + sum_h A_jh sin(omega_jh t + phi_jh)`` with
  ``sum_h A_jh <= room to the limits`` and ``sum_h A_jh omega_jh <=
  speed_fraction * qd_max_j``, which bounds ``|qd_j|`` analytically;
* waypoints: minimum-jerk segments ``q_k + (q_{k+1} - q_k) s(tau)``,
  ``s = 10 tau^3 - 15 tau^4 + 6 tau^5``, stay between their end points and
  reach their peak speed ``1.875 |dq| / T`` at mid-segment, so the segment
  time ``T = max_j 1.875 |dq_j| / (speed_fraction * qd_max_j)`` keeps every
  joint at or below its cap.

Distances and ranges chosen here (documented in the module constants): the
look-at viewing distance makes the target's bounding circle fill at most 80 %
of the shorter half image side (:func:`viewing_distance_range`); camera
stations lie on a 50 deg spherical cap around the board normal; the static
camera of eye-to-hand scenes stands 0.9-1.6 m from the workspace centre, 15-60
deg above it; the workspace centre is the flange position at the robot's home
configuration (free6d: :data:`FREE6D_WORKSPACE_CENTRE_M`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3
from kinhec.models.cameras import CameraPreset, TargetPreset, VISIBILITY_MARGIN_PX, visibility
from kinhec.util.errors import ConvergenceError, InputError
from kinhec.models.robots import RobotModel

__all__ = [
    "FREE6D_SPEED_CAPS",
    "FREE6D_WORKSPACE_CENTRE_M",
    "PROPOSAL_SINE_AMPLITUDE_M",
    "PROPOSAL_SINE_CENTRE_M",
    "PROPOSAL_SINE_N_KEYFRAMES",
    "PROPOSAL_SINE_OMEGA_RAD_S",
    "PROPOSAL_SINE_PHASE_RAD",
    "PROPOSAL_SINE_TIME_BASE_S",
    "SINUSOID_AMPLITUDE_FRACTION",
    "SINUSOID_CENTRE_FRACTION",
    "SINUSOID_WEIGHT_RANGE",
    "WAYPOINT_SPREAD_FRACTION",
    "WAYPOINT_CENTRE_FRACTION",
    "LIMIT_MARGIN_RAD",
    "MIN_SEGMENT_S",
    "DWELL_RANGE_S",
    "LOOKAT_CAP_HALF_ANGLE_DEG",
    "LOOKAT_DISTANCE_M",
    "LOOKAT_MARKER_DEPTH_M",
    "LOOKAT_DISTANCE_REACH",
    "LOOKAT_AIM_FRACTION",
    "LOOKAT_AIM_HALF_ANGLE_DEG",
    "STATIC_CAMERA_DISTANCE_M",
    "LOOKAT_BOARD_RADIUS_REACH",
    "LOOKAT_BOARD_AZIMUTH_DEG",
    "LOOKAT_BOARD_HEIGHT_REACH",
    "LOOKAT_BOARD_TILT_DEG",
    "LOOKAT_CAMERA_CENTRE_REACH",
    "LOOKAT_CAMERA_DISTANCE_M",
    "LOOKAT_CAMERA_AXIS",
    "LOOKAT_CAMERA_CONE_DEG",
    "LOOKAT_CAMERA_ROLL_DEG",
    "LOOKAT_FALLBACK_TRIES",
    "N_WORLD_CANDIDATES",
    "N_WORLD_FRAMES",
    "min_jerk",
    "min_jerk_rate",
    "Trajectory",
    "SinusoidJointTrajectory",
    "WaypointJointTrajectory",
    "WaypointPoseTrajectory",
    "SinePoseTrajectory",
    "sample_hand_eye",
    "workspace_centre",
    "viewing_distance_range",
    "lookat_distance_range",
    "excited_joints",
    "joint_sinusoid",
    "joint_waypoints",
    "lookat",
    "LookatInfo",
    "cartesian_cone",
    "proposal_sine",
    "place_world",
    "Clocks",
    "make_clocks",
    "cone_directions",
    "frames_from_z",
]

#: Speed caps of the free-floating ``free6d``: (linear [m/s], angular [rad/s]); waypoint motions use
#: ``speed_fraction`` of them: at the tiers' 0.25, 0.15 m/s and 0.6 rad/s, the published generator's speeds of its
#: Cartesian waypoint paths.
FREE6D_SPEED_CAPS = (0.6, 2.4)
#: Workspace centre [m] of ``free6d`` in its (arbitrary) base frame.
FREE6D_WORKSPACE_CENTRE_M = (0.5, 0.0, 0.4)
#: ``proposal_sine`` (free6d), as in the published generator: translation centre [m], amplitude [m],
#: angular frequency [rad/s] on a time base of ``PROPOSAL_SINE_TIME_BASE_S`` and phase [rad] per base axis, and the
#: number of random keyframe orientations.  The whole path, translation and keyframes, is the one of the time base
#: played over the sequence's duration: a sequence of ``D`` seconds moves at ``omega * TIME_BASE / D`` (the published
#: smoke copy's 4 s sequences at 1.25, 1.75 and 0.75 rad/s, its small tier's 10 s ones at 0.5, 0.7 and 0.3).
PROPOSAL_SINE_CENTRE_M = (0.5, 0.0, 0.5)
PROPOSAL_SINE_AMPLITUDE_M = (0.5, 0.3, 0.2)
PROPOSAL_SINE_OMEGA_RAD_S = (0.5, 0.7, 0.3)
PROPOSAL_SINE_TIME_BASE_S = 10.0
PROPOSAL_SINE_PHASE_RAD = (0.0, math.pi / 2.0, 0.0)
PROPOSAL_SINE_N_KEYFRAMES = 5
#: ``joint_sinusoid``, as the published generator draws it: the total amplitude of an excited joint is this fraction
#: of the joint's range (at most half of it, and less where the speed cap binds), around a centre configuration whose
#: excited joints lie up to ``SINUSOID_CENTRE_FRACTION`` of their range from home (the joints held still stay at
#: home).  On a UR, whose joints turn +-360 deg, that is up to 86 deg of swing around a base joint up to 72 deg from
#: home.
SINUSOID_AMPLITUDE_FRACTION = 0.12
SINUSOID_CENTRE_FRACTION = 0.1
#: Range of the random weights that split a joint's amplitude between its sinusoids (normalised to sum to one).
SINUSOID_WEIGHT_RANGE = (0.3, 1.0)
#: Half-width of the box in which random joint waypoints are drawn, as a fraction of each joint's range
#: (at most half the range), as in the published copy: wide-range joints (UR: +-360 deg) swing farther.
WAYPOINT_SPREAD_FRACTION = 0.15
#: Half-width of the random offset of the waypoint box's centre from home, as a fraction of each joint's range.
WAYPOINT_CENTRE_FRACTION = 0.1
#: Distance [rad] kept from the joint limits by the centre configuration and the motions around it.
LIMIT_MARGIN_RAD = 0.02
#: Metres that stand for one radian in the margins, spreads and amplitudes above on a prismatic joint.
PRISMATIC_M_PER_RAD = 0.25
#: Shortest minimum-jerk segment [s] between two waypoints, as in the published generator.
MIN_SEGMENT_S = 0.4
#: Range [s] of the dwell at every waypoint or station, drawn uniformly for each one, as in the published generator
#: (the capture happens at the middle of the dwell).
DWELL_RANGE_S = (0.6, 1.4)
#: Half-angle [deg] of the spherical cap of eye-in-hand look-at camera positions around the board normal.
#: It sets how much the viewing direction varies between stations, hence the spread of the rotation axes of
#: the station motions: at 35 deg most of the rotation was roll about the optical axis (axis scatter lambda2
#: median 0.08, translation condition 2.6) and translation errors of ``X`` were 1.3x the published ones on
#: every look-at track.  The published copy's cameras lie within 50 deg of the board normal: the largest
#: tilt of its look-at stations is 46.8-49.9 deg in every one of its 20 look-at sequences (10-20 stations
#: each), which a wider cap would exceed (docs/fidelity.md).
LOOKAT_CAP_HALF_ANGLE_DEG = 50.0
#: Eye-in-hand look-at viewing distance [m], as the published generator draws it whatever the camera and target:
#: uniform from ``LOOKAT_DISTANCE_M[0]`` to ``LOOKAT_DISTANCE_REACH`` times the arm's reach, that upper end clipped
#: into ``LOOKAT_DISTANCE_M[1:]`` (``free6d``: a reach of 1 m), so that a small arm is not asked to hold the camera
#: 0.9 m above the board.  Each camera aims at a point of the board plane within ``LOOKAT_AIM_FRACTION`` times
#: ``d tan(LOOKAT_AIM_HALF_ANGLE_DEG)`` of its centre along each board axis (``d`` the distance).  A candidate that
#: does not see the target is dropped, so a large target is seen from the far end of the range.
LOOKAT_DISTANCE_M = (0.3, 0.45, 0.9)
LOOKAT_DISTANCE_REACH = 0.7
LOOKAT_AIM_FRACTION = 0.25
LOOKAT_AIM_HALF_ANGLE_DEG = 20.0
#: Half-angle [deg] of the cone of marker normals around the line of sight (eye-to-hand look-at); the same
#: viewing diversity as :data:`LOOKAT_CAP_HALF_ANGLE_DEG`.
MARKER_CONE_HALF_ANGLE_DEG = 50.0
#: Eye-to-hand look-at markers lie at a distance from the static camera within ``LOOKAT_MARKER_DEPTH_M[1]`` of that
#: of the workspace point it looks at, and at least ``LOOKAT_MARKER_DEPTH_M[0]`` away, as the published generator
#: draws them.
LOOKAT_MARKER_DEPTH_M = (0.3, 0.35)
#: Look-at stations follow one another as the published generator's do: each candidate pose is solved by IK from the
#: configuration of the last station kept, and is kept only when no joint moves by more than ``LOOKAT_MAX_JUMP_RAD``
#: from it (an elbow or wrist flip), so that consecutive stations lie close in joint space and the robot visits them
#: in the order they were found.  Hand-eye errors grow as the motions between consecutive keyframes shrink, so this
#: matters to every ``A X = X B`` solver (docs/fidelity.md).
LOOKAT_MAX_JUMP_RAD = 2.5
#: Distance range [m] of the static eye-to-hand camera from the workspace centre.
STATIC_CAMERA_DISTANCE_M = (0.9, 1.6)
#: World reference placed along a motion (:func:`place_world`), as the published generator draws it:
#:
#: * eye-in-hand, the board centre ``WORLD_BOARD_DISTANCE_M`` along the optical axis of one frame, or, on a share
#:   ``WORLD_MEAN_GAZE_SHARE`` of the candidates, the mean of those gaze points over the frames (with the mean
#:   reversed optical axis as the normal), moved by a Gaussian of ``WORLD_CENTRE_JITTER_M`` per axis; its normal
#:   the reversed optical axis turned about a random axis by an angle uniform in 0-``WORLD_BOARD_TILT_DEG``;
#: * eye-to-hand, the static camera ``WORLD_CAMERA_DISTANCE_M`` from the mean marker position along a direction
#:   uniform on the cap of ``STATIC_CAMERA_CONE_DEG`` around the mean marker normal, looking at that position
#:   (moved by the same jitter) with the image's up along the base ``+z`` rolled by up to ``WORLD_CAMERA_ROLL_DEG``.
#:
#: The board distance does not depend on the camera and target: a board far along the gaze leaves the image less
#: often as the camera moves, and the candidate seen in most frames is kept.
WORLD_BOARD_DISTANCE_M = (0.35, 0.9)
WORLD_MEAN_GAZE_SHARE = 0.3
WORLD_CENTRE_JITTER_M = 0.03
WORLD_BOARD_TILT_DEG = 15.0
WORLD_CAMERA_DISTANCE_M = (0.8, 1.6)
STATIC_CAMERA_CONE_DEG = 35.0
WORLD_CAMERA_ROLL_DEG = 30.0
#: Look-at world placement, as the published generator draws it (in the base frame, ``reach`` the robot's nominal
#: working radius, ``shoulder`` the height of its second joint's axis, ``d_1``):
#:
#: * eye-in-hand, the board on a table in front of the robot: its centre at a horizontal distance
#:   ``LOOKAT_BOARD_RADIUS_REACH`` times the reach from the base axis, at an azimuth within
#:   ``LOOKAT_BOARD_AZIMUTH_DEG`` of the base's ``x`` axis and a height ``LOOKAT_BOARD_HEIGHT_REACH`` times the
#:   reach from the shoulder (below the robot's mounting plane too, for a small arm); its normal
#:   tilted from the vertical towards the base axis by up to ``LOOKAT_BOARD_TILT_DEG``, a random in-plane rotation;
#: * eye-to-hand, the static camera looking at a workspace point ``LOOKAT_CAMERA_CENTRE_REACH`` (times the reach;
#:   height from the shoulder) from ``LOOKAT_CAMERA_DISTANCE_M`` away, along a direction within
#:   ``LOOKAT_CAMERA_CONE_DEG`` of ``LOOKAT_CAMERA_AXIS`` (in front of the robot and above it), with the image's
#:   up within ``LOOKAT_CAMERA_ROLL_DEG``
#:   of the world's.
#:
#: ``free6d`` has no reach or shoulder: its board centre is ``FREE6D_BOARD_CENTRE_M`` plus a uniform offset
#: within ``FREE6D_BOARD_OFFSET_M`` and its static camera looks at :data:`PROPOSAL_SINE_CENTRE_M`.
LOOKAT_BOARD_RADIUS_REACH = (0.45, 0.75)
LOOKAT_BOARD_AZIMUTH_DEG = 50.0
LOOKAT_BOARD_HEIGHT_REACH = (-0.45, -0.05)
LOOKAT_BOARD_TILT_DEG = 50.0
LOOKAT_CAMERA_CENTRE_REACH = ((0.4, 0.6), (-0.15, 0.15), (-0.15, 0.2))
LOOKAT_CAMERA_DISTANCE_M = (0.9, 1.6)
LOOKAT_CAMERA_AXIS = (1.0, 0.0, 0.6)
LOOKAT_CAMERA_CONE_DEG = 45.0
LOOKAT_CAMERA_ROLL_DEG = 20.0
FREE6D_BOARD_CENTRE_M = (0.5, 0.0, 0.5)
FREE6D_BOARD_OFFSET_M = ((0.3, 0.6), (-0.3, 0.3), (-0.4, 0.1))
#: When no table placement gives every station (a large board seen from far by a small arm: the published generator
#: then keeps half the stations or fewer, kinhec wants them all), the world is placed near the workspace centre ``W``
#: (the flange at home): the board below and in front of ``W`` (``BOARD_DEPRESSION_DEG`` below the horizontal) at the
#: middle of the viewing distances, the static camera ``STATIC_CAMERA_DISTANCE_M`` from ``W``,
#: ``STATIC_CAMERA_ELEVATION_DEG`` above it.  ``LOOKAT_FALLBACK_TRIES`` such placements follow the table ones.
BOARD_DEPRESSION_DEG = (45.0, 80.0)
STATIC_CAMERA_ELEVATION_DEG = (15.0, 60.0)
LOOKAT_FALLBACK_TRIES = 4
#: Candidate world placements drawn by :func:`place_world`.
N_WORLD_CANDIDATES = 25
#: The world reference of a sequence (the board of eye-in-hand sequences, the static camera of eye-to-hand ones) may
#: lie below the plane the robot is mounted on, as in the published tiers (z < 0 in the base frame on 38 % of their
#: small-tier sequences, down to -1.3 m: a robot on a pedestal, a camera looking up at a marker that faces down).
#: Horizontal clearance [m] kept between the world reference and the robot's base axis (the column of the
#: first links), so that a board or a static camera is never placed inside the robot.
BASE_CLEARANCE_M = 0.2
#: Candidates drawn per kept one when the world reference is placed along a motion (those inside the robot's base
#: column are discarded; see :func:`place_world`).
WORLD_OVERSAMPLING = 40
#: Frames (evenly spaced along the trajectory) on which :func:`place_world` counts visibility.
N_WORLD_FRAMES = 60
#: Candidate poses drawn per world placement in :func:`lookat`: at least ``LOOKAT_CANDIDATES[0]``, and
#: ``LOOKAT_CANDIDATES[1]`` per station asked for (as published), in batches of ``LOOKAT_BATCH[0]`` per station
#: still missing plus ``LOOKAT_BATCH[1]``; world placements tried.
LOOKAT_CANDIDATES = (400, 15)
LOOKAT_BATCH = (1, 16)
LOOKAT_WORLD_TRIES = 8
#: IK budget per look-at candidate batch: candidates are cheap, iterations are not, so hard candidates are
#: dropped early (no restarts) and replaced by fresh ones.  The stations are the poses actually reached
#: (forward kinematics of the IK solution), so the tolerance only decides which candidates count as reached.
LOOKAT_IK_MAX_ITER = 20
LOOKAT_IK_TOL = 1e-5


# --------------------------------------------------------------------------- #
# small geometric helpers (trusted inputs)
# --------------------------------------------------------------------------- #
def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _perpendicular_basis(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors ``(..., 3)`` completing unit vectors ``a`` to a right-handed frame ``(e1, e2, a)``."""
    helper = np.where((np.abs(a[..., 0]) < 0.9)[..., None], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    e1 = _unit(np.cross(a, helper))
    e2 = np.cross(a, e1)
    return e1, e2


def cone_directions(rng: np.random.Generator, axes: np.ndarray, half_angle_rad: float) -> np.ndarray:
    """One direction per row of ``axes`` ``(M, 3)``, uniform on the cap of ``half_angle_rad`` around it."""
    m = axes.shape[0]
    z = 1.0 - rng.random(m) * (1.0 - math.cos(half_angle_rad))
    phi = rng.random(m) * 2.0 * math.pi
    r = np.sqrt(np.clip(1.0 - z * z, 0.0, None))
    e1, e2 = _perpendicular_basis(axes)
    return (r * np.cos(phi))[:, None] * e1 + (r * np.sin(phi))[:, None] * e2 + z[:, None] * axes


def frames_from_z(z_axes: np.ndarray, roll_rad: np.ndarray) -> np.ndarray:
    """Rotations ``(M, 3, 3)`` whose third column is ``z_axes`` and whose x axis is rolled by ``roll_rad``."""
    e1, e2 = _perpendicular_basis(z_axes)
    x = np.cos(roll_rad)[:, None] * e1 + np.sin(roll_rad)[:, None] * e2
    y = np.cross(z_axes, x)
    return np.stack([x, y, z_axes], axis=-1)


def _check_times(t, name: str = "t") -> np.ndarray:
    a = se3.check_array(t, name, ())
    if a.ndim != 1:
        raise InputError(f"{name}: expected a 1-D array of instants [s], got shape {a.shape}")
    return a


# --------------------------------------------------------------------------- #
# minimum-jerk profile
# --------------------------------------------------------------------------- #
def min_jerk(s) -> np.ndarray:
    """Minimum-jerk profile ``10 s^3 - 15 s^4 + 6 s^5`` on ``s`` in [0, 1].

    It goes from 0 to 1 with zero rate and acceleration at both ends.
    """
    s = np.asarray(s, dtype=np.float64)
    return s * s * s * (10.0 + s * (-15.0 + 6.0 * s))


def min_jerk_rate(s) -> np.ndarray:
    """Derivative ``30 s^2 - 60 s^3 + 30 s^4`` of :func:`min_jerk` (peak 1.875 at ``s = 0.5``)."""
    s = np.asarray(s, dtype=np.float64)
    return 30.0 * s * s * (1.0 - s) * (1.0 - s)


class _Schedule:
    """Timing of a move-and-dwell path: dwell ``dwell_s[k]`` at each knot ``k``, then a min-jerk segment to the next.

    Knot ``k`` is held on ``[arrive_k, arrive_k + dwell_k]``; ``arrive_0 = 0``.  ``dwell_s`` is one dwell per knot
    ``(K,)`` or one for all.
    """

    def __init__(self, segment_s: np.ndarray, dwell_s) -> None:
        self.segment_s = np.asarray(segment_s, dtype=np.float64)
        n_knots = self.segment_s.size + 1
        self.dwell_s = np.broadcast_to(np.asarray(dwell_s, dtype=np.float64), (n_knots,)).copy()
        self.arrive_s = np.concatenate([[0.0], np.cumsum(self.segment_s + self.dwell_s[:-1])])  # (k,)
        self.total_s = float(self.arrive_s[-1] + self.dwell_s[-1])

    @property
    def station_times_s(self) -> np.ndarray:
        """Middle of every dwell [s]."""
        return self.arrive_s + 0.5 * self.dwell_s

    def locate(self, t: np.ndarray):
        """Segment index ``k`` (N,), min-jerk phase ``sigma`` (N,) and its time derivative [1/s] (N,)."""
        n_knots = self.arrive_s.size
        k = np.clip(np.searchsorted(self.arrive_s, t, side="right") - 1, 0, n_knots - 1)
        if n_knots == 1:
            z = np.zeros(t.shape)
            return k, z, z
        kk = np.minimum(k, n_knots - 2)
        seg = self.segment_s[kk]
        tau = t - self.arrive_s[k] - self.dwell_s[k]
        moving = (tau > 0.0) & (k < n_knots - 1)
        s = np.where(moving, np.clip(tau / seg, 0.0, 1.0), 0.0)
        sigma = np.where(moving, min_jerk(s), 0.0)
        sigma_dot = np.where(moving, min_jerk_rate(s) / seg, 0.0)
        return k, sigma, sigma_dot


# --------------------------------------------------------------------------- #
# trajectories
# --------------------------------------------------------------------------- #
class Trajectory:
    """A flange trajectory continuous in time.

    Joint-space trajectories (the arms) give joint positions and velocities;
    Cartesian ones (``free6d``) give flange poses directly.  Evaluate with
    :meth:`flange_poses`, which applies the forward kinematics of a given
    robot model to the joint positions.

    Attributes
    ----------
    family : str
        Trajectory family name.
    duration_s : float
        Length [s] of the motion (the end of the last dwell for station paths).
    station_times_s : ndarray or None
        Capture instants [s] of station sampling (dwell midpoints, or the
        keyframe instants), ``None`` when the path has no stations.
    is_cartesian : bool
        True when the path is defined by flange poses (``free6d``).
    """

    family: str = ""
    is_cartesian: bool = False
    duration_s: float = 0.0
    station_times_s: np.ndarray | None = None

    def joint_positions(self, t) -> np.ndarray:
        """Joint positions [rad] ``(N, dof)`` at instants ``t`` [s] ``(N,)``."""
        raise InputError(
            f"joint_positions: expected a joint-space trajectory, got the Cartesian family {self.family!r}"
        )

    def joint_velocities(self, t) -> np.ndarray:
        """Joint velocities [rad/s] ``(N, dof)`` at instants ``t`` [s] ``(N,)``."""
        raise InputError(
            f"joint_velocities: expected a joint-space trajectory, got the Cartesian family {self.family!r}"
        )

    def cartesian_poses(self, t) -> np.ndarray:
        """Flange poses ``T_base_ee`` ``(N, 4, 4)`` of a Cartesian trajectory."""
        raise InputError(
            f"cartesian_poses: expected a Cartesian trajectory, got the joint-space family {self.family!r}"
        )

    def flange_poses(self, t, robot: RobotModel | None = None) -> np.ndarray:
        """Flange poses ``T_base_ee`` ``(N, 4, 4)`` at ``t`` [s]: FK of ``robot`` for joint-space paths."""
        t = _check_times(t)
        if self.is_cartesian:
            return self.cartesian_poses(t)
        if robot is None:
            raise InputError("robot: expected the RobotModel whose kinematics maps the joints to the flange, got None")
        return robot.fk(self.joint_positions(t))

    def to_dict(self) -> dict:
        """JSON-ready parameters (stored in ``extra_json["trajectory"]``)."""
        return {"family": self.family, "duration_s": self.duration_s}


class SinusoidJointTrajectory(Trajectory):
    """``q_j(t) = centre_j + sum_h A_jh sin(omega_jh t + phi_jh)`` (family ``joint_sinusoid``).

    Parameters
    ----------
    centre_q_rad : ndarray, shape (dof,)
        Centre configuration [rad].
    amplitude_rad, omega_rad_s, phase_rad : ndarray, shape (dof, H)
        Amplitude [rad], angular frequency [rad/s] and phase [rad] of every harmonic.
    duration_s : float
        Length [s].
    excited : sequence of int
        Indices of the joints that move (for the record).
    """

    family = "joint_sinusoid"

    def __init__(self, centre_q_rad, amplitude_rad, omega_rad_s, phase_rad, duration_s: float, excited=()) -> None:
        self.centre_q_rad = np.asarray(centre_q_rad, dtype=np.float64)
        self.amplitude_rad = np.asarray(amplitude_rad, dtype=np.float64)
        self.omega_rad_s = np.asarray(omega_rad_s, dtype=np.float64)
        self.phase_rad = np.asarray(phase_rad, dtype=np.float64)
        self.duration_s = float(duration_s)
        self.excited = [int(i) for i in excited]
        self.station_times_s = None

    def joint_positions(self, t) -> np.ndarray:
        t = _check_times(t)
        arg = t[:, None, None] * self.omega_rad_s + self.phase_rad
        return self.centre_q_rad + np.einsum("jh,njh->nj", self.amplitude_rad, np.sin(arg))

    def joint_velocities(self, t) -> np.ndarray:
        t = _check_times(t)
        arg = t[:, None, None] * self.omega_rad_s + self.phase_rad
        return np.einsum("jh,njh->nj", self.amplitude_rad * self.omega_rad_s, np.cos(arg))

    def speed_bound_rad_s(self) -> np.ndarray:
        """Analytic bound ``sum_h A_jh omega_jh`` [rad/s] on ``|qd_j|``, shape ``(dof,)``."""
        return (self.amplitude_rad * self.omega_rad_s).sum(axis=1)

    def to_dict(self) -> dict:
        return {
            "family": self.family,
            "duration_s": self.duration_s,
            "excited_joints": self.excited,
            "centre_q_rad": self.centre_q_rad,
            "amplitude_rad": self.amplitude_rad,
            "frequency_hz": self.omega_rad_s / (2.0 * math.pi),
            "phase_rad": self.phase_rad,
        }


class WaypointJointTrajectory(Trajectory):
    """Joint waypoints joined by minimum-jerk segments, with a dwell at each (``joint_waypoints``, ``lookat``).

    Parameters
    ----------
    knots_q_rad : ndarray, shape (K, dof)
        Waypoints [rad], visited in order.
    segment_s : ndarray, shape (K - 1,)
        Duration [s] of each segment.
    dwell_s : float or ndarray, shape (K,)
        Dwell [s] at each waypoint (one for all, or one each).
    family : str
        ``"joint_waypoints"`` or ``"lookat"``.
    duration_s : float, optional
        Length [s] of the sampled path (default: the end of the last dwell).
    """

    def __init__(self, knots_q_rad, segment_s, dwell_s, family: str = "joint_waypoints",
                 duration_s=None) -> None:  # fmt: skip
        self.knots_q_rad = np.asarray(knots_q_rad, dtype=np.float64)
        self.schedule = _Schedule(segment_s, dwell_s)
        self.family = family
        self.duration_s = self.schedule.total_s if duration_s is None else float(duration_s)
        self.station_times_s = self.schedule.station_times_s
        self._delta = np.diff(self.knots_q_rad, axis=0, append=self.knots_q_rad[-1:])

    def joint_positions(self, t) -> np.ndarray:
        k, sigma, _ = self.schedule.locate(_check_times(t))
        return self.knots_q_rad[k] + self._delta[k] * sigma[:, None]

    def joint_velocities(self, t) -> np.ndarray:
        k, _, sigma_dot = self.schedule.locate(_check_times(t))
        return self._delta[k] * sigma_dot[:, None]

    def to_dict(self) -> dict:
        return {
            "family": self.family,
            "duration_s": self.duration_s,
            "knots_q_rad": self.knots_q_rad,
            "segment_s": self.schedule.segment_s,
            "dwell_s": self.schedule.dwell_s,
            "station_times_s": self.station_times_s,
        }


class WaypointPoseTrajectory(Trajectory):
    """Flange poses joined by minimum-jerk segments (straight line + geodesic rotation), with dwells.

    ``p(t) = p_k + sigma (p_{k+1} - p_k)``, ``R(t) = R_k exp(sigma log(R_k^T R_{k+1}))``
    with the minimum-jerk phase ``sigma``.  Used by ``free6d`` (``lookat``,
    ``cartesian_cone``).

    Parameters
    ----------
    knots_T : ndarray, shape (K, 4, 4)
        Flange poses ``T_base_ee`` at the knots.
    segment_s : ndarray, shape (K - 1,)
        Segment durations [s].
    dwell_s : float
        Dwell [s] at each knot.
    family : str
    duration_s : float, optional
        Length [s] of the sampled path (default: the end of the last dwell).
    extra : dict, optional
        Family parameters stored with :meth:`to_dict`.
    """

    is_cartesian = True

    def __init__(self, knots_T, segment_s, dwell_s, family: str, duration_s=None, extra=None) -> None:
        self.knots_T = np.asarray(knots_T, dtype=np.float64)
        self.schedule = _Schedule(segment_s, dwell_s)
        self.family = family
        self.duration_s = self.schedule.total_s if duration_s is None else float(duration_s)
        self.station_times_s = self.schedule.station_times_s
        R = self.knots_T[:, :3, :3]
        p = self.knots_T[:, :3, 3]
        rel = se3.so3_log(np.swapaxes(R[:-1], -1, -2) @ R[1:], check=False)
        self._rot_delta = np.concatenate([rel, np.zeros((1, 3))])
        self._pos_delta = np.diff(p, axis=0, append=p[-1:])
        self.extra = dict(extra or {})

    def cartesian_poses(self, t) -> np.ndarray:
        k, sigma, _ = self.schedule.locate(_check_times(t))
        R = self.knots_T[k, :3, :3] @ se3.so3_exp(self._rot_delta[k] * sigma[:, None])
        p = self.knots_T[k, :3, 3] + self._pos_delta[k] * sigma[:, None]
        return se3.transform_from_rotation_translation(R, p)

    def to_dict(self) -> dict:
        p, q = se3.pq_from_transform(self.knots_T, check=False)
        return {
            "family": self.family,
            "duration_s": self.duration_s,
            "knots_p_m": p,
            "knots_q_wxyz": q,
            "segment_s": self.schedule.segment_s,
            "dwell_s": self.schedule.dwell_s,
            "station_times_s": self.station_times_s,
            **self.extra,
        }


class SinePoseTrajectory(Trajectory):
    """Sinusoidal translation and piecewise-geodesic (SLERP) rotation between keyframes (``proposal_sine``).

    ``p_i(t) = centre_i + A_i sin(omega_i t + phi_i)`` per base axis ``i``;
    the orientation moves at constant angular rate from keyframe rotation
    ``R_k`` (at ``key_times_s[k]``) to ``R_{k+1}``.
    """

    family = "proposal_sine"
    is_cartesian = True

    def __init__(self, centre_m, amplitude_m, omega_rad_s, phase_rad, key_times_s, key_R, duration_s: float,
                 stations: bool) -> None:  # fmt: skip
        self.centre_m = np.asarray(centre_m, dtype=np.float64)
        self.amplitude_m = np.asarray(amplitude_m, dtype=np.float64)
        self.omega_rad_s = np.asarray(omega_rad_s, dtype=np.float64)
        self.phase_rad = np.asarray(phase_rad, dtype=np.float64)
        self.key_times_s = np.asarray(key_times_s, dtype=np.float64)
        self.key_R = np.asarray(key_R, dtype=np.float64)
        self.duration_s = float(duration_s)
        self.station_times_s = self.key_times_s.copy() if stations else None
        rel = se3.so3_log(np.swapaxes(self.key_R[:-1], -1, -2) @ self.key_R[1:], check=False)
        self._rot_delta = np.concatenate([rel, np.zeros((1, 3))])

    def cartesian_poses(self, t) -> np.ndarray:
        t = _check_times(t)
        kt = self.key_times_s
        k = np.clip(np.searchsorted(kt, t, side="right") - 1, 0, kt.size - 1)
        kk = np.minimum(k, kt.size - 2)
        s = np.where(k < kt.size - 1, np.clip((t - kt[kk]) / (kt[kk + 1] - kt[kk]), 0.0, 1.0), 0.0)
        R = self.key_R[k] @ se3.so3_exp(self._rot_delta[k] * s[:, None])
        p = self.centre_m + self.amplitude_m * np.sin(t[:, None] * self.omega_rad_s + self.phase_rad)
        return se3.transform_from_rotation_translation(R, p)

    def to_dict(self) -> dict:
        return {
            "family": self.family,
            "duration_s": self.duration_s,
            "centre_m": self.centre_m,
            "amplitude_m": self.amplitude_m,
            "frequency_hz": self.omega_rad_s / (2.0 * math.pi),
            "phase_rad": self.phase_rad,
            "key_times_s": self.key_times_s,
            "key_q_wxyz": se3.quaternion_from_matrix(self.key_R, check=False),
        }


# --------------------------------------------------------------------------- #
# step 1: hand-eye transform
# --------------------------------------------------------------------------- #
def sample_hand_eye(rng: np.random.Generator, configuration: str) -> np.ndarray:
    """Draw the hand-eye transform ``X`` (step 1).

    * eye-in-hand, ``X = T_ee_cam``: camera origin 2-12 cm along the flange
      ``z`` axis, lateral offsets ``x``, ``y`` each uniform in +-8 cm, optical
      axis tilted from the flange ``z`` axis by an angle uniform in 0-40 deg
      towards a uniform azimuth, roll uniform;
    * eye-to-hand, ``X = T_ee_marker``: marker centre 0-10 cm along the flange
      ``z`` axis, lateral offsets each uniform in +-5 cm, marker normal
      (target ``z``, towards the viewer) tilted by an angle uniform in 0-30 deg,
      in-plane rotation uniform.

    These are the published generator's distributions (the tilt uniform in
    angle, not over the cap, which would put more tilts near the rim).

    Returns
    -------
    ndarray, shape (4, 4)
    """
    if configuration == "eye_in_hand":
        z_range, lateral_m, cone_deg = (0.02, 0.12), 0.08, 40.0
    elif configuration == "eye_to_hand":
        z_range, lateral_m, cone_deg = (0.0, 0.10), 0.05, 30.0
    else:
        raise InputError(f"configuration: expected 'eye_in_hand' or 'eye_to_hand', got {configuration!r}")
    xy = rng.uniform(-lateral_m, lateral_m, 2)
    z = rng.uniform(*z_range)
    tilt = math.radians(rng.uniform(0.0, cone_deg))
    phi = rng.uniform(0.0, 2.0 * math.pi)
    axis = np.array([[math.sin(tilt) * math.cos(phi), math.sin(tilt) * math.sin(phi), math.cos(tilt)]])
    R = frames_from_z(axis, rng.uniform(-math.pi, math.pi, 1))[0]
    return se3.transform_from_rotation_translation(R, np.array([xy[0], xy[1], z]))


# --------------------------------------------------------------------------- #
# workspace and viewing geometry
# --------------------------------------------------------------------------- #
def workspace_centre(robot: RobotModel) -> tuple[np.ndarray, float]:
    """Centre [m] of the working volume in the base frame, and the azimuth [rad] of "in front of the robot".

    For an arm: the flange position at the home configuration, and its
    azimuth about the base ``z`` axis (0 when the flange is within 5 cm of the
    axis).  For ``free6d``: :data:`FREE6D_WORKSPACE_CENTRE_M` and azimuth 0.
    """
    if robot.is_free:
        return np.array(FREE6D_WORKSPACE_CENTRE_M), 0.0
    p = robot.fk(robot.home_q_rad)[:3, 3]
    az = math.atan2(p[1], p[0]) if math.hypot(p[0], p[1]) > 0.05 else 0.0
    return p.copy(), az


def viewing_distance_range(camera: CameraPreset, target: TargetPreset) -> tuple[float, float]:
    """Camera-to-target distance range [m] used to frame ``target`` with ``camera``.

    The lower end makes the circle circumscribing the target points span at
    most 80 % of the shorter half image side (minus the visibility margin), so
    that a checkerboard stays whole under a moderate tilt and roll; grids (which
    only need ``min_visible_points``) may come to 60 % of that distance.  The
    upper end is 1.5 times the lower end (at most 4 m).
    """
    w, h = target.size_m
    rho = 0.5 * math.hypot(w, h)
    half_px = 0.5 * min(camera.width_px, camera.height_px) - VISIBILITY_MARGIN_PX
    d_lo = rho * camera.f_px / (0.8 * half_px)
    if target.kind != "checkerboard":
        d_lo *= 0.6
    d_lo = max(d_lo, 0.15)
    return d_lo, min(1.5 * d_lo, 4.0)


# --------------------------------------------------------------------------- #
# joint-space families
# --------------------------------------------------------------------------- #
def _joint_unit(robot: RobotModel):
    """Per joint, what one radian of the constants above means: 1 (rad) or :data:`PRISMATIC_M_PER_RAD` (m)."""
    return np.where(robot.prismatic, PRISMATIC_M_PER_RAD, 1.0) if robot.joint_types else 1.0


def excited_joints(robot: RobotModel, subset: str, rng: np.random.Generator, q_ref=None) -> list[int]:
    """Indices of the joints a ``joint_sinusoid`` excites.

    ``single``: one joint at random; ``parallel``: a random pair of joints
    whose axes are parallel (within 1 deg) at ``q_ref`` (default home), or the
    most nearly parallel pair; ``two_axes``: a random pair whose axes are more
    than 45 deg apart, or the most nearly perpendicular pair; ``wrist``: the
    last three joints; ``all``: every joint.  Axes come from the rotation rows
    of the geometric Jacobian, so they do not depend on the DH convention.
    """
    n = robot.dof
    if subset == "all":
        return list(range(n))
    if subset == "wrist":
        return list(range(n - 3, n))
    if subset == "single":
        return [int(rng.integers(n))]
    if subset not in ("parallel", "two_axes"):
        raise InputError(f"subset: expected one of single, parallel, two_axes, wrist, all, got {subset!r}")
    q = robot.home_q_rad if q_ref is None else q_ref
    axes = robot.jacobian(q)[:3].T  # (dof, 3)
    axes = axes / np.linalg.norm(axes, axis=1, keepdims=True)
    iu, ju = np.triu_indices(n, 1)
    c = np.abs(np.einsum("ij,ij->i", axes[iu], axes[ju]))
    if subset == "parallel":
        ok = np.flatnonzero(c > math.cos(math.radians(1.0)))
        pick = int(rng.choice(ok)) if ok.size else int(np.argmax(c))
    else:
        ok = np.flatnonzero(c < math.cos(math.radians(45.0)))
        pick = int(rng.choice(ok)) if ok.size else int(np.argmin(c))
    return [int(iu[pick]), int(ju[pick])]


def joint_sinusoid(robot: RobotModel, rng: np.random.Generator, *, duration_s: float, subset: str = "all",
                   speed_fraction: float = 0.25, n_harmonics: int = 2,
                   frequency_range_hz=(0.03, 0.25)) -> SinusoidJointTrajectory:  # fmt: skip
    """Sum-of-sinusoids excitation of some joints around a configuration near home.

    The excited joints (:func:`excited_joints` at home) move, the others stay
    at home.  Each excited joint ``j`` sums ``n_harmonics`` sinusoids, each
    with its own frequency uniform in ``frequency_range_hz`` (independent, not
    multiples of one another), a uniform phase and a weight uniform in
    :data:`SINUSOID_WEIGHT_RANGE`; the weights are normalised so that the
    amplitudes ``A_jh`` sum to ``SINUSOID_AMPLITUDE_FRACTION`` of the joint's
    range (at most half the range less :data:`LIMIT_MARGIN_RAD` either side).
    The centre of an excited joint is home plus a uniform offset of up to
    :data:`SINUSOID_CENTRE_FRACTION` of its range, moved inward where the
    swing would pass a limit (less the margin).  Where
    ``sum_h A_jh omega_jh`` exceeds ``speed_fraction * qd_max_j``, the joint's
    amplitudes are scaled down to meet it.  As the published generator draws it
    (two sinusoids of 0.03-0.25 Hz by default; three of 0.1-0.6 Hz on the
    temporal track).
    """
    _require_arm(robot, "joint_sinusoid")
    n = robot.dof
    excited = excited_joints(robot, subset, rng, robot.home_q_rad)
    mask = np.zeros(n, dtype=bool)
    mask[excited] = True
    unit = _joint_unit(robot)
    lo = robot.q_min_rad + LIMIT_MARGIN_RAD * unit
    hi = robot.q_max_rad - LIMIT_MARGIN_RAD * unit
    span = robot.q_max_rad - robot.q_min_rad
    amp = np.minimum(SINUSOID_AMPLITUDE_FRACTION * span, 0.5 * (hi - lo))
    offset = rng.uniform(-SINUSOID_CENTRE_FRACTION, SINUSOID_CENTRE_FRACTION, n) * span
    centre = np.where(mask, np.clip(robot.home_q_rad + offset, lo + amp, hi - amp), robot.home_q_rad)
    H = int(n_harmonics)
    w = rng.uniform(SINUSOID_WEIGHT_RANGE[0], SINUSOID_WEIGHT_RANGE[1], (n, H))
    w /= w.sum(axis=1, keepdims=True)
    omega = 2.0 * math.pi * rng.uniform(frequency_range_hz[0], frequency_range_hz[1], (n, H))
    phase = rng.uniform(0.0, 2.0 * math.pi, (n, H))
    a_vel = speed_fraction * robot.qd_max_rad_s / (w * omega).sum(axis=1)
    scale = np.where(mask, np.minimum(amp, a_vel), 0.0)
    return SinusoidJointTrajectory(centre, w * scale[:, None], omega, phase, duration_s, excited)


def _joint_move_times(robot: RobotModel, q_from: np.ndarray, q_to: np.ndarray, speed_fraction: float) -> np.ndarray:
    """Minimum-jerk move times [s] between joint configurations (broadcast), the slowest joint at its cap."""
    return (1.875 * np.abs(q_to - q_from) / (speed_fraction * robot.qd_max_rad_s)).max(axis=-1)


def _pose_move_times(T_from: np.ndarray, T_to: np.ndarray, speed_fraction: float) -> np.ndarray:
    """Minimum-jerk move times [s] between free-floating poses (broadcast), at :data:`FREE6D_SPEED_CAPS`."""
    dp = np.linalg.norm(T_to[..., :3, 3] - T_from[..., :3, 3], axis=-1)
    dth = se3.rotation_angle(np.swapaxes(T_from[..., :3, :3], -1, -2) @ T_to[..., :3, :3], check=False)
    v, w = FREE6D_SPEED_CAPS
    return np.maximum(1.875 * dp / (speed_fraction * v), 1.875 * dth / (speed_fraction * w))


def _joint_segment_times(robot: RobotModel, knots: np.ndarray, speed_fraction: float) -> np.ndarray:
    return np.maximum(_joint_move_times(robot, knots[:-1], knots[1:], speed_fraction), MIN_SEGMENT_S)


def _pose_segment_times(knots_T: np.ndarray, speed_fraction: float) -> np.ndarray:
    return np.maximum(_pose_move_times(knots_T[:-1], knots_T[1:], speed_fraction), MIN_SEGMENT_S)


def _dwells(rng: np.random.Generator, n: int, dwell_range_s) -> np.ndarray:
    """``n`` dwells [s], each uniform in ``dwell_range_s``."""
    return rng.uniform(float(dwell_range_s[0]), float(dwell_range_s[1]), int(n))


def _tour(rng: np.random.Generator, n_knots: int, duration_s: float, segment_times, dwell_range_s):
    """Order in which ``n_knots`` waypoints are visited so that the path lasts at least ``duration_s``, and the dwells.

    The waypoints are toured in random orders (a new permutation each round,
    never repeating a waypoint twice in a row), each visit with a dwell drawn
    from ``dwell_range_s``, until the move-and-dwell path is long enough.
    ``segment_times(order)`` gives the segment durations of an order.
    """
    order = list(rng.permutation(n_knots))
    dwell = list(_dwells(rng, n_knots, dwell_range_s))
    while True:
        total = float(segment_times(np.asarray(order)).sum()) + float(np.sum(dwell))
        if total >= duration_s or n_knots < 2:
            return np.asarray(order), np.asarray(dwell)
        nxt = list(rng.permutation(n_knots))
        if nxt[0] == order[-1]:
            nxt[0], nxt[1] = nxt[1], nxt[0]
        order.extend(nxt)
        dwell.extend(_dwells(rng, n_knots, dwell_range_s))


def _joint_path(robot, knots, rng, *, speed_fraction, dwell_range_s, sampling_mode, duration_s, family):
    if sampling_mode == "continuous":
        seg_fn = lambda order: _joint_segment_times(robot, knots[order], speed_fraction)  # noqa: E731
        # duration_s None: one pass through the waypoints, as long as it takes
        order, dwell = _tour(rng, knots.shape[0], 0.0 if duration_s is None else duration_s, seg_fn, dwell_range_s)
        path = knots[order]
        return WaypointJointTrajectory(path, _joint_segment_times(robot, path, speed_fraction), dwell, family,
                                       duration_s=duration_s)  # fmt: skip
    dwell = _dwells(rng, knots.shape[0], dwell_range_s)
    return WaypointJointTrajectory(knots, _joint_segment_times(robot, knots, speed_fraction), dwell, family)


def joint_waypoints(robot: RobotModel, rng: np.random.Generator, *, n_waypoints: int, speed_fraction: float = 0.25,
                    dwell_range_s=DWELL_RANGE_S, sampling_mode: str = "stations",
                    duration_s: float | None = None) -> WaypointJointTrajectory:  # fmt: skip
    """Random joint waypoints joined by minimum-jerk segments with dwells (move-stop-capture).

    Each joint's waypoints are uniform in ``centre +- a`` with ``a`` the
    fraction :data:`WAYPOINT_SPREAD_FRACTION` of the joint's range (at most
    half of it, less :data:`LIMIT_MARGIN_RAD`); the centre is home plus a
    uniform offset of up to :data:`WAYPOINT_CENTRE_FRACTION` of the range,
    moved inward where the box would leave the limits.  Each segment lasts
    ``max_j 1.875 |dq_j| / (speed_fraction qd_max_j)`` (at least
    :data:`MIN_SEGMENT_S`), which keeps the peak speed of every joint at the
    allowed fraction of its cap.  In ``"stations"`` mode the waypoints are
    visited once and captured at the middle of each dwell; in ``"continuous"``
    mode they are toured repeatedly until ``duration_s`` is covered and the path
    is sampled on ``[0, duration_s)``; with ``duration_s=None`` they are
    passed once and the path lasts as long as that takes.
    """
    _require_arm(robot, "joint_waypoints")
    n_waypoints = _check_count(n_waypoints, "n_waypoints", 1)
    lo_lim = robot.q_min_rad + LIMIT_MARGIN_RAD * _joint_unit(robot)
    hi_lim = robot.q_max_rad - LIMIT_MARGIN_RAD * _joint_unit(robot)
    span = robot.q_max_rad - robot.q_min_rad
    half = np.minimum(WAYPOINT_SPREAD_FRACTION * span, 0.5 * (hi_lim - lo_lim))
    centre = robot.home_q_rad + rng.uniform(-1.0, 1.0, robot.dof) * (WAYPOINT_CENTRE_FRACTION * span)
    centre = np.clip(centre, lo_lim + half, hi_lim - half)
    knots = rng.uniform(centre - half, centre + half, (int(n_waypoints), robot.dof))
    return _joint_path(robot, knots, rng, speed_fraction=speed_fraction, dwell_range_s=dwell_range_s,
                       sampling_mode=sampling_mode, duration_s=duration_s, family="joint_waypoints")  # fmt: skip


def _check_count(n, name: str, minimum: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < minimum:
        raise InputError(f"{name}: expected an integer >= {minimum}, got {n!r}")
    return int(n)


def _require_arm(robot: RobotModel, family: str) -> None:
    if robot.is_free:
        raise InputError(
            f"robot: expected an arm for the joint-space family {family!r}, got the free-floating {robot.name!r}"
        )


def _require_free(robot: RobotModel, family: str) -> None:
    if not robot.is_free:
        raise InputError(
            f"robot: expected the free-floating 'free6d' for the Cartesian family {family!r}, got {robot.name!r}"
        )


# --------------------------------------------------------------------------- #
# look-at stations
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class LookatInfo:
    """Bookkeeping of the look-at station search (stored in ``extra_json``)."""

    n_candidates: int
    n_reachable: int
    n_world_tries: int
    centre_m: np.ndarray | None = None  # the board centre, or the point the static camera looks at


def _shoulder_height(robot: RobotModel) -> float:
    """Height [m] of an arm's shoulder (its first DH offset ``d_1``); 0 for ``free6d``."""
    return 0.0 if robot.is_free else float(robot.d_m[0])


def _board_pose(rng, robot: RobotModel):
    """Eye-in-hand world ``Y = T_base_world``: a board on a table in front of the robot, tilted towards its base."""
    if robot.is_free:
        off = [rng.uniform(lo, hi) for lo, hi in FREE6D_BOARD_OFFSET_M]
        B = np.asarray(FREE6D_BOARD_CENTRE_M) + np.asarray(off)
    else:
        reach, shoulder = robot.reach_m, _shoulder_height(robot)
        rho = rng.uniform(*LOOKAT_BOARD_RADIUS_REACH) * reach
        az = math.radians(rng.uniform(-LOOKAT_BOARD_AZIMUTH_DEG, LOOKAT_BOARD_AZIMUTH_DEG))
        lo, hi = (shoulder + f * reach for f in LOOKAT_BOARD_HEIGHT_REACH)
        h = rng.uniform(lo, hi)  # on a table below the shoulder
        B = np.array([rho * math.cos(az), rho * math.sin(az), h])
    towards_base = np.array([-B[0], -B[1], 0.0])
    towards_base /= max(float(np.linalg.norm(towards_base)), 1e-9)
    tilt = math.radians(rng.uniform(0.0, LOOKAT_BOARD_TILT_DEG))
    n = math.cos(tilt) * np.array([0.0, 0.0, 1.0]) + math.sin(tilt) * towards_base
    R = frames_from_z(n[None], rng.uniform(-math.pi, math.pi, 1))[0]
    return se3.transform_from_rotation_translation(R, B)


def _board_pose_near(rng, W, az0, d_mid):
    """Fallback eye-in-hand world: the board below and in front of ``W``, tilted towards it."""
    az = az0 + math.radians(rng.uniform(-25.0, 25.0))
    el = math.radians(rng.uniform(*BOARD_DEPRESSION_DEG))
    u = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), -math.sin(el)])
    B = W + d_mid * u
    n = cone_directions(rng, -u[None], math.radians(10.0))
    R = frames_from_z(n, rng.uniform(-math.pi, math.pi, 1))[0]
    return se3.transform_from_rotation_translation(R, B)


def _static_camera_near(rng, W, az0):
    """Fallback eye-to-hand world: the camera 0.9-1.6 m from ``W``, in front and above, looking at ``W``."""
    az = az0 + math.radians(rng.uniform(-45.0, 45.0))
    el = math.radians(rng.uniform(*STATIC_CAMERA_ELEVATION_DEG))
    u = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    C = W + rng.uniform(*STATIC_CAMERA_DISTANCE_M) * u
    R = frames_from_z(-u[None], rng.uniform(-math.pi, math.pi, 1))[0]
    return se3.transform_from_rotation_translation(R, C)


def _look_at(eye: np.ndarray, at: np.ndarray, roll_rad: float) -> np.ndarray:
    """Camera rotation (columns x right, y down, z forward) looking from ``eye`` at ``at`` with the image's up along
    the world's ``+z``, then turned by ``roll_rad`` about the optical axis."""
    z = _unit(at - eye)
    up = np.array([0.0, 0.0, 1.0]) if abs(z[2]) < 0.99 else np.array([1.0, 0.0, 0.0])
    x = _unit(np.cross(z, up))  # image right; image down is z x x
    y = np.cross(z, x)
    c, s = math.cos(roll_rad), math.sin(roll_rad)
    return np.column_stack([x, y, z]) @ np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _look_at_many(eye: np.ndarray, at: np.ndarray, roll_rad: np.ndarray) -> np.ndarray:
    """:func:`_look_at` for ``(M, 3)`` eyes and points and ``(M,)`` rolls: rotations ``(M, 3, 3)``."""
    z = _unit(at - eye)
    up = np.where((np.abs(z[:, 2]) < 0.99)[:, None], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0])
    x = _unit(np.cross(z, up))
    y = np.cross(z, x)
    c, s = np.cos(roll_rad)[:, None], np.sin(roll_rad)[:, None]
    return np.stack([c * x + s * y, -s * x + c * y, z], axis=-1)


def _static_camera_pose(rng, robot: RobotModel):
    """Eye-to-hand world ``Y = T_base_cam`` and the workspace point ``W`` it looks at."""
    if robot.is_free:
        W = np.asarray(PROPOSAL_SINE_CENTRE_M, dtype=np.float64)
    else:
        reach, shoulder = robot.reach_m, _shoulder_height(robot)
        (x0, x1), (y0, y1), (z0, z1) = LOOKAT_CAMERA_CENTRE_REACH
        W = np.array([rng.uniform(x0, x1) * reach, rng.uniform(y0, y1) * reach,
                      shoulder + rng.uniform(z0, z1) * reach])  # fmt: skip
    axis = _unit(np.asarray(LOOKAT_CAMERA_AXIS, dtype=np.float64))
    u = cone_directions(rng, axis[None], math.radians(LOOKAT_CAMERA_CONE_DEG))[0]
    C = W + rng.uniform(*LOOKAT_CAMERA_DISTANCE_M) * u
    roll = math.radians(rng.uniform(-LOOKAT_CAMERA_ROLL_DEG, LOOKAT_CAMERA_ROLL_DEG))
    return se3.transform_from_rotation_translation(_look_at(C, W, roll), C), W


def lookat_distance_range(robot: RobotModel) -> tuple[float, float]:
    """Eye-in-hand look-at viewing distance range [m] of ``robot`` (:data:`LOOKAT_DISTANCE_M`)."""
    reach = 1.0 if robot.is_free else float(robot.reach_m)
    lo, hi_min, hi_max = LOOKAT_DISTANCE_M
    return lo, max(hi_min, min(hi_max, LOOKAT_DISTANCE_REACH * reach))


def _eye_in_hand_candidates(rng, Y, m, d_range):
    """``m`` camera poses ``T_base_cam`` on the cap around the board normal, looking at the board."""
    B = Y[:3, 3]
    n = Y[:3, 2]
    dirs = cone_directions(rng, np.broadcast_to(n, (m, 3)), math.radians(LOOKAT_CAP_HALF_ANGLE_DEG))
    d = rng.uniform(d_range[0], d_range[1], m)
    C = B + dirs * d[:, None]
    half = LOOKAT_AIM_FRACTION * d * math.tan(math.radians(LOOKAT_AIM_HALF_ANGLE_DEG))
    aim_local = np.column_stack([rng.uniform(-1.0, 1.0, (m, 2)) * half[:, None], np.zeros(m)])
    aim = B + aim_local @ Y[:3, :3].T
    z = _unit(aim - C)
    R = frames_from_z(z, rng.uniform(-math.pi, math.pi, m))
    return se3.transform_from_rotation_translation(R, C)


def _eye_to_hand_candidates(rng, Y, m, d_range):
    """``m`` marker poses ``T_base_marker`` on the static camera's line of sight, facing it.

    Each is drawn as the camera's pose in the marker frame: the camera on the cap of
    :data:`MARKER_CONE_HALF_ANGLE_DEG` around the marker normal at a distance from ``d_range``, aimed at a point of
    the marker plane near its centre (:data:`LOOKAT_AIM_FRACTION`), with a random roll; the marker is then where
    that view puts it in front of the static camera ``Y``.
    """
    dirs = cone_directions(rng, np.broadcast_to([0.0, 0.0, 1.0], (m, 3)), math.radians(MARKER_CONE_HALF_ANGLE_DEG))
    d = rng.uniform(d_range[0], d_range[1], m)
    eye = dirs * d[:, None]
    half = LOOKAT_AIM_FRACTION * d * math.tan(math.radians(LOOKAT_AIM_HALF_ANGLE_DEG))
    aim = np.column_stack([rng.uniform(-1.0, 1.0, (m, 2)) * half[:, None], np.zeros(m)])
    T_marker_cam = se3.transform_from_rotation_translation(frames_from_z(_unit(aim - eye), rng.uniform(-math.pi, math.pi, m)), eye)
    return Y @ se3.invert_transform(T_marker_cam, check=False)


def _observed(T_base_ee, X, Y, configuration):
    """``T_cam_target`` of flange poses ``(N, 4, 4)``."""
    if configuration == "eye_in_hand":
        return se3.invert_transform(T_base_ee @ X, check=False) @ Y
    return se3.invert_transform(Y, check=False) @ T_base_ee @ X


def lookat(robot: RobotModel, X: np.ndarray, configuration: str, camera: CameraPreset, target: TargetPreset,
           rng: np.random.Generator, *, n_stations: int, speed_fraction: float = 0.25, dwell_range_s=DWELL_RANGE_S,
           sampling_mode: str = "stations", duration_s: float | None = None):  # fmt: skip
    """Observing stations with the target in view at every one, joined as waypoints.

    The world reference is drawn first, as the published generator draws it
    (:data:`LOOKAT_BOARD_RADIUS_REACH` and the constants after it): eye-in-hand,
    the board lies on a table in front of the robot's base, below its shoulder,
    tilted towards the base axis; eye-to-hand, the static camera stands 0.9-1.6 m
    from a workspace point ``W`` in front of the robot, above it, looking at
    ``W``.  IK starts from the home configuration.  Candidate observing poses
    are then drawn in batches: eye-in-hand, cameras on a spherical cap of 50 deg
    around the board normal at a distance from :func:`lookat_distance_range`,
    aimed near the board's centre (:data:`LOOKAT_AIM_FRACTION`), with a random
    roll; eye-to-hand, markers in front of the static camera, each drawn as the
    camera's view of it (:func:`_eye_to_hand_candidates`, the camera within
    50 deg of the marker normal, :data:`LOOKAT_MARKER_DEPTH_M`).
    Arms turn each pose into a flange pose through ``X`` and reach it by
    damped-least-squares IK inside the joint limits from the configuration of
    the last station kept (the first from home); a candidate
    is kept when its IK succeeds, its *achieved* pose sees the target and no
    joint of the configuration the IK returns differs by more than
    :data:`LOOKAT_MAX_JUMP_RAD` from the last station's (no whole turns are
    added to bring it nearer, as in the published generator), the others are
    dropped.  This is sequential by nature; it is done a batch
    at a time: the candidates of a batch (:data:`LOOKAT_BATCH`) are all solved
    from the last station kept before it, then taken in the order drawn and
    tested against the last station kept.  Up to
    :data:`LOOKAT_CANDIDATES` candidates are drawn per world placement before
    a new placement is drawn.  The stations are visited in the order they were
    kept and connected in joint space (arms) or as Cartesian minimum-jerk
    segments (``free6d``, whose stations need no IK).

    Returns
    -------
    trajectory : WaypointJointTrajectory or WaypointPoseTrajectory
    Y : ndarray, shape (4, 4)
        ``T_base_world`` (eye-in-hand) or ``T_base_cam`` (eye-to-hand).
    info : LookatInfo

    Raises
    ------
    ConvergenceError
        When no world placement yields enough reachable, visible stations.
    """
    n_stations = _check_count(n_stations, "n_stations", 1)
    d_range = lookat_distance_range(robot)
    n_cand = n_reach = 0
    for world_try in range(1, LOOKAT_WORLD_TRIES + LOOKAT_FALLBACK_TRIES + 1):
        table = world_try <= LOOKAT_WORLD_TRIES
        if configuration == "eye_in_hand":
            if table:
                Y = _board_pose(rng, robot)
            else:
                Y = _board_pose_near(rng, *workspace_centre(robot), 0.5 * (d_range[0] + d_range[1]))
            W = Y[:3, 3]
        else:
            if table:
                Y, W = _static_camera_pose(rng, robot)
            else:
                W, az0 = workspace_centre(robot)
                Y = _static_camera_near(rng, W, az0)
            dist = float(np.linalg.norm(Y[:3, 3] - W))
            marker_range = (max(LOOKAT_MARKER_DEPTH_M[0], dist - LOOKAT_MARKER_DEPTH_M[1]), dist + LOOKAT_MARKER_DEPTH_M[1])
        q_start = None if robot.is_free else robot.home_q_rad
        inv_X = se3.invert_transform(X, check=False)
        budget = max(LOOKAT_CANDIDATES[0], LOOKAT_CANDIDATES[1] * n_stations)
        jump = LOOKAT_MAX_JUMP_RAD * _joint_unit(robot) if not robot.is_free else None
        kept_T: list[np.ndarray] = []
        kept_q: list[np.ndarray] = []
        queue = np.zeros((0, 4, 4))
        drawn = 0
        n_kept = 0
        while len(kept_T) < n_stations:
            if queue.shape[0] == 0:
                if drawn >= budget:
                    break
                m = min(LOOKAT_BATCH[0] * (n_stations - len(kept_T)) + LOOKAT_BATCH[1], budget - drawn)
                if configuration == "eye_in_hand":
                    T_obs = _eye_in_hand_candidates(rng, Y, m, d_range)
                else:
                    T_obs = _eye_to_hand_candidates(rng, Y, m, marker_range)
                queue = T_obs @ inv_X
                drawn += m
                n_cand += m
            if robot.is_free:  # no IK: every pose that sees the target is a station, in the order drawn
                good = np.flatnonzero(visibility(camera, target, _observed(queue, X, Y, configuration)).visible)
                n_reach += queue.shape[0]
                good = good[: n_stations - len(kept_T)]
                kept_T.extend(queue[good])
                queue = queue[:0]
                continue
            res = robot.ik(queue, rng, q_init=kept_q[-1] if kept_q else q_start, n_restarts=0,
                           max_iter=LOOKAT_IK_MAX_ITER, pos_tol_m=LOOKAT_IK_TOL, rot_tol_rad=LOOKAT_IK_TOL)  # fmt: skip
            solved = np.asarray(res.success, dtype=bool)
            T_ach = robot.fk(res.q)  # the pose actually reached
            ok = solved & visibility(camera, target, _observed(T_ach, X, Y, configuration)).visible
            n_reach += int(solved.sum())
            for j in np.flatnonzero(ok):  # one batch's candidates (not frames): the jump test chains them
                if len(kept_q) == n_stations:
                    break
                q = res.q[j]
                if kept_q and np.any(np.abs(q - kept_q[-1]) > jump):
                    continue
                kept_T.append(T_ach[j])
                kept_q.append(q)
            queue = queue[:0]
        n_kept = len(kept_T)
        if n_kept >= n_stations:
            break
    else:
        raise ConvergenceError(
            f"lookat: expected {n_stations} reachable stations with the target in view for robot {robot.name!r} "
            f"({configuration}, camera {camera.name}, target {target.name}), got {n_kept} after "
            f"{LOOKAT_WORLD_TRIES + LOOKAT_FALLBACK_TRIES} world placements and {n_cand} candidates"
        )
    info = LookatInfo(n_candidates=n_cand, n_reachable=n_reach, n_world_tries=world_try, centre_m=np.asarray(W))
    if robot.is_free:
        traj = _pose_path(np.stack(kept_T), rng, speed_fraction=speed_fraction, dwell_range_s=dwell_range_s,
                          sampling_mode=sampling_mode, duration_s=duration_s, family="lookat")  # fmt: skip
    else:
        traj = _joint_path(robot, np.stack(kept_q), rng, speed_fraction=speed_fraction, dwell_range_s=dwell_range_s,
                           sampling_mode=sampling_mode, duration_s=duration_s, family="lookat")  # fmt: skip
    return traj, Y, info


# --------------------------------------------------------------------------- #
# free6d families
# --------------------------------------------------------------------------- #
def _pose_path(knots_T, rng, *, speed_fraction, dwell_range_s, sampling_mode, duration_s, family, extra=None):
    if sampling_mode == "continuous":
        seg_fn = lambda order: _pose_segment_times(knots_T[order], speed_fraction)  # noqa: E731
        order, dwell = _tour(rng, knots_T.shape[0], 0.0 if duration_s is None else duration_s, seg_fn, dwell_range_s)
        path = knots_T[order]
        return WaypointPoseTrajectory(path, _pose_segment_times(path, speed_fraction), dwell, family,
                                      duration_s=duration_s, extra=extra)  # fmt: skip
    dwell = _dwells(rng, knots_T.shape[0], dwell_range_s)
    return WaypointPoseTrajectory(knots_T, _pose_segment_times(knots_T, speed_fraction), dwell, family, extra=extra)


def cartesian_cone(robot: RobotModel, rng: np.random.Generator, *, cone_half_angle_deg: float,
                   rot_angle_range_deg=(8.0, 15.0), n_waypoints: int = 10, trans_range_m: float = 0.15,
                   speed_fraction: float = 0.25, dwell_range_s=DWELL_RANGE_S, sampling_mode: str = "stations",
                   duration_s: float | None = None) -> WaypointPoseTrajectory:  # fmt: skip
    """Keyframes with controlled rotation-axis diversity (``free6d``), joined by minimum-jerk segments.

    ``R_0`` is uniform on SO(3); ``R_k = R_{k-1} exp(theta_k a_k)`` with
    ``|theta_k|`` uniform in ``rot_angle_range_deg`` and a random sign, and the axes ``a_k`` (in the
    flange frame of keyframe ``k-1``) uniform on the cap of half-angle
    ``cone_half_angle_deg`` around one random axis (0 deg: every motion about
    the same axis, the degenerate case).  The keyframe positions are uniform in
    a cube of half-side ``trans_range_m`` centred on the workspace centre (each
    coordinate within ``+-trans_range_m``, as the published generator draws them).  Station
    sampling captures each keyframe (at the middle of its dwell), with segment
    times from :data:`FREE6D_SPEED_CAPS`; continuous sampling moves through the
    keyframes once without dwelling, time-scaled to last ``duration_s``.
    """
    _require_free(robot, "cartesian_cone")
    k = _check_count(n_waypoints, "n_waypoints", 2)
    W, _ = workspace_centre(robot)
    main_axis = se3.random_unit_vectors(rng, 1)[0]
    axes = se3.random_axes_in_cone(rng, k - 1, main_axis, math.radians(cone_half_angle_deg))
    theta = np.radians(rng.uniform(rot_angle_range_deg[0], rot_angle_range_deg[1], k - 1))
    # a random turning direction per step: the axis lines stay in the cone (the scatter matrix does not see the
    # sign), and the orientation wanders around R_0 instead of turning on and on away from the reference
    theta *= np.where(rng.random(k - 1) < 0.5, -1.0, 1.0)
    steps = se3.so3_exp(axes * theta[:, None])
    R = np.empty((k, 3, 3))
    R[0] = se3.random_rotations(rng, 1)[0]
    for i in range(1, k):  # one product per keyframe (k <= a few hundred), not per frame
        R[i] = R[i - 1] @ steps[i - 1]
    p = W + (2.0 * rng.random((k, 3)) - 1.0) * trans_range_m
    knots_T = se3.transform_from_rotation_translation(R, p)
    extra = {"main_axis": main_axis, "cone_half_angle_deg": float(cone_half_angle_deg),
             "rot_angle_deg": np.degrees(theta)}  # fmt: skip
    seg = _pose_segment_times(knots_T, speed_fraction)
    if sampling_mode == "continuous":
        seg = seg * (float(duration_s) / seg.sum())
        return WaypointPoseTrajectory(knots_T, seg, 0.0, "cartesian_cone", duration_s=duration_s, extra=extra)
    return WaypointPoseTrajectory(knots_T, seg, _dwells(rng, k, dwell_range_s), "cartesian_cone", extra=extra)


def proposal_sine(robot: RobotModel, rng: np.random.Generator, *, duration_s: float,
                  n_keyframes: int = PROPOSAL_SINE_N_KEYFRAMES, centre_m=PROPOSAL_SINE_CENTRE_M,
                  amplitude_m=PROPOSAL_SINE_AMPLITUDE_M, omega_rad_s=None,
                  phase_rad=PROPOSAL_SINE_PHASE_RAD, sampling_mode: str = "continuous") -> SinePoseTrajectory:  # fmt: skip
    """Sinusoidal translation with SLERP between random keyframe rotations (``free6d``).

    Base axis ``i`` moves as ``centre_i + A_i sin(omega_i t + phi_i)``; the
    defaults are the figures of the published generator's ``proposal_sine``
    sequences, the same for every sequence of a given duration: ``A = (0.5, 0.3, 0.2)`` m,
    ``phi = (0, pi/2, 0)`` around ``(0.5, 0, 0.5)`` m and, unless ``omega_rad_s`` is
    given, ``omega = (0.5, 0.7, 0.3) * 10 s / duration_s`` rad/s (the path of a
    10 s time base played over the duration; 1.25, 1.75 and 0.75 rad/s for
    4 s).  ``n_keyframes`` orientations (5), each uniform on
    SO(3) and independent of the others, sit at evenly spaced instants over
    ``[0, duration_s]`` and are joined by constant-rate geodesics, so the
    orientation sweeps the whole rotation group: at most 180 deg between
    keyframes.  Station sampling captures the keyframe instants.
    """
    _require_free(robot, "proposal_sine")
    k = _check_count(n_keyframes, "n_keyframes", 2)
    key_R = se3.random_rotations(rng, k)
    key_t = np.linspace(0.0, float(duration_s), k)
    if omega_rad_s is None:
        omega_rad_s = np.asarray(PROPOSAL_SINE_OMEGA_RAD_S) * (PROPOSAL_SINE_TIME_BASE_S / float(duration_s))
    return SinePoseTrajectory(centre_m, amplitude_m, omega_rad_s, phase_rad, key_t, key_R, duration_s,
                              stations=sampling_mode == "stations")  # fmt: skip


# --------------------------------------------------------------------------- #
# step 3: world placement after the trajectory
# --------------------------------------------------------------------------- #
def place_world(T_base_ee: np.ndarray, X: np.ndarray, configuration: str, camera: CameraPreset,
                target: TargetPreset, rng: np.random.Generator, *,
                n_candidates: int = N_WORLD_CANDIDATES) -> tuple[np.ndarray, dict]:  # fmt: skip
    """Place the world reference ``Y`` where the target is seen most often along a given motion.

    ``n_candidates`` placements are drawn from the sensor poses ``T_base_ee @ X``
    of the given frames (typically about :data:`N_WORLD_FRAMES` frames evenly
    spaced along the trajectory), with the laws of :data:`WORLD_BOARD_DISTANCE_M`
    and the constants after it:

    * eye-in-hand: the board centre on the optical axis of a random frame (or
      at the mean gaze point of all frames), 0.35-0.9 m from the camera, its
      normal within 15 deg of the direction back to the camera, a random
      in-plane rotation;
    * eye-to-hand: the static camera 0.8-1.6 m from the mean marker position,
      within 35 deg of the mean marker normal, looking at that position with
      the image's up along the base ``+z`` (rolled by up to 30 deg).

    Candidates whose board centre (eye-in-hand) or static camera (eye-to-hand)
    lies within :data:`BASE_CLEARANCE_M` of the base axis (inside the robot)
    are discarded: up to ``WORLD_OVERSAMPLING`` times more are drawn in the
    same vectorised batch and the first ``n_candidates`` valid ones are kept (if
    none is valid, the first ``n_candidates`` are used and
    ``info["clearance_ok"]`` is False).  Below the mounting plane is allowed,
    as in the published tiers.  The kept
    candidates are scored on all frames in one visibility call; the one visible
    in most frames wins (the first on ties).

    Returns
    -------
    Y : ndarray, shape (4, 4)
        ``T_base_world`` (eye-in-hand) or ``T_base_cam`` (eye-to-hand).
    info : dict
        ``{"n_candidates", "n_frames", "n_visible", "clearance_ok"}`` of the winner.
    """
    T = np.asarray(T_base_ee, dtype=np.float64)
    F = T.shape[0]
    m = int(n_candidates) * WORLD_OVERSAMPLING
    TX = T @ X
    pos, zax = TX[:, :3, 3], TX[:, :3, 2]
    if configuration == "eye_in_hand":
        f = rng.integers(F, size=m)
        d = rng.uniform(*WORLD_BOARD_DISTANCE_M, m)
        mean_gaze = rng.random(m) < WORLD_MEAN_GAZE_SHARE
        z_mean = zax.mean(axis=0)
        B = np.where(mean_gaze[:, None], pos.mean(axis=0) + d[:, None] * z_mean, pos[f] + d[:, None] * zax[f])
        B = B + rng.normal(0.0, WORLD_CENTRE_JITTER_M, (m, 3))
        n = -np.where(mean_gaze[:, None], _unit(z_mean)[None], zax[f])
        tilt = np.radians(rng.uniform(0.0, WORLD_BOARD_TILT_DEG, m))
        n = np.einsum("mij,mj->mi", se3.so3_exp(se3.random_unit_vectors(rng, m) * tilt[:, None]), n)
        Yc = se3.transform_from_rotation_translation(frames_from_z(n, rng.uniform(-math.pi, math.pi, m)), B)
    elif configuration == "eye_to_hand":
        centre = pos.mean(axis=0)
        u = cone_directions(rng, np.broadcast_to(_unit(zax.mean(axis=0)), (m, 3)), math.radians(STATIC_CAMERA_CONE_DEG))
        C = centre + u * rng.uniform(*WORLD_CAMERA_DISTANCE_M, m)[:, None]
        aim = centre + rng.normal(0.0, WORLD_CENTRE_JITTER_M, (m, 3))
        roll = np.radians(rng.uniform(-WORLD_CAMERA_ROLL_DEG, WORLD_CAMERA_ROLL_DEG, m))
        Yc = se3.transform_from_rotation_translation(_look_at_many(C, aim, roll), C)
    else:
        raise InputError(f"configuration: expected 'eye_in_hand' or 'eye_to_hand', got {configuration!r}")
    # keep the first n_candidates placements outside the base column (all of them are scored if too few are)
    clear = np.flatnonzero(np.hypot(Yc[:, 0, 3], Yc[:, 1, 3]) >= BASE_CLEARANCE_M)
    clearance_ok = clear.size > 0
    keep = clear[: int(n_candidates)] if clearance_ok else np.arange(int(n_candidates))
    if configuration == "eye_in_hand":
        T_cam_target = se3.invert_transform(TX, check=False)[None] @ Yc[keep][:, None]
    else:
        T_cam_target = se3.invert_transform(Yc[keep], check=False)[:, None] @ TX[None]
    vis = visibility(camera, target, T_cam_target.reshape(-1, 4, 4)).visible.reshape(keep.size, F)
    counts = vis.sum(axis=1)
    best = int(keep[int(np.argmax(counts))])
    return Yc[best], {"n_candidates": int(keep.size), "n_frames": int(F), "n_visible": int(counts.max()),
                      "clearance_ok": bool(clearance_ok)}  # fmt: skip


# --------------------------------------------------------------------------- #
# step 4: clocks
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Clocks:
    """Time stamps of both streams of a sequence.

    Attributes
    ----------
    t_robot_s : ndarray, shape (Nr,)
        Robot-stream stamps [s] on the robot clock (the reference clock).
    t_camera_gt_s : ndarray, shape (Nc,)
        True capture instants [s] of the camera frames, on the robot clock.
    t_camera_s : ndarray, shape (Nc,)
        Camera stamps [s] ``t_camera_gt_s + time_offset_s + jitter``, strictly increasing.
    robot_rate_hz, camera_rate_hz : float
        Nominal rates [Hz]; NaN for station sequences.
    phase_s : float
        Instant [s] of the first (undropped) camera slot.
    jitter_s : ndarray, shape (Nc,)
        The jitter [s] added to each kept frame.
    n_dropped : int
        Camera frames dropped.
    same_clock : bool
        Both streams share the instants (synchronous or station sequences).
    """

    t_robot_s: np.ndarray
    t_camera_gt_s: np.ndarray
    t_camera_s: np.ndarray
    robot_rate_hz: float
    camera_rate_hz: float
    phase_s: float
    jitter_s: np.ndarray
    n_dropped: int
    same_clock: bool

    def to_dict(self) -> dict:
        return {
            "robot_rate_hz": self.robot_rate_hz,
            "camera_rate_hz": self.camera_rate_hz,
            "phase_s": self.phase_s,
            "n_dropped": self.n_dropped,
            "same_clock": self.same_clock,
        }


#: Redraw rounds of the jitter of out-of-order stamps before the deterministic fallback.
JITTER_REDRAW_ROUNDS = 200


def _ordered_jitter(rng: np.random.Generator, t_gt: np.ndarray, std: float) -> np.ndarray:
    """Gaussian jitter conditioned on strictly increasing ``t_gt + jitter``.

    Jitter is drawn i.i.d. ``N(0, std^2)``; while some stamp does not exceed
    its predecessor, the jitter of the later frame of every offending pair is
    redrawn (vectorised, at most :data:`JITTER_REDRAW_ROUNDS` rounds).  Should
    pairs remain, their jitter is set to 0 (``t_gt`` itself is strictly
    increasing), repeated until the order holds.  The redraws are rare unless
    ``std`` is a sizeable fraction of the frame period: for 60 Hz and 5 ms
    about 1 % of the pairs, which shrinks the measured standard deviation by
    well under 1 %.
    """
    n = t_gt.size
    j = rng.normal(0.0, std, n) if std > 0 else np.zeros(n)
    if n < 2 or std == 0:
        return j
    for _ in range(JITTER_REDRAW_ROUNDS):
        bad = np.flatnonzero(np.diff(t_gt + j) <= 0.0) + 1
        if bad.size == 0:
            return j
        j[bad] = rng.normal(0.0, std, bad.size)
    while True:  # pragma: no cover - only reached for jitter far above the frame period
        bad = np.flatnonzero(np.diff(t_gt + j) <= 0.0)
        if bad.size == 0:
            return j
        j[bad] = 0.0
        j[bad + 1] = 0.0


def make_clocks(rng: np.random.Generator, *, sampling_mode: str, sync: str, duration_s: float,
                camera_rate_hz: float, robot_rate_hz: float, time_offset_s: float = 0.0,
                time_jitter_std_s: float = 0.0, camera_drop_fraction: float = 0.0,
                station_times_s=None) -> Clocks:  # fmt: skip
    """Time stamps of both streams (step 4).

    * ``stations``: both streams hold the station instants (dwell midpoints),
      one frame each; both rates are NaN.
    * ``continuous`` and ``sync``: one clock at the camera rate,
      ``t_k = k / camera_rate_hz`` for ``k = 0 .. round(duration_s rate) - 1``.
    * ``continuous`` and ``async``: the robot stream at ``robot_rate_hz`` (the
      caller passes ``min(controller rate, cap)``), ``t_k = k / rate`` for
      ``k = 0 .. round(duration_s rate)`` (both ends included, so every camera
      instant lies inside it); camera slots at ``phase + k / camera_rate_hz``
      (``phase`` uniform in one frame period, ``round(duration_s camera_rate)``
      slots, all before ``duration_s``), each dropped with probability
      ``camera_drop_fraction``; the kept frames are stamped
      ``t = t_gt + time_offset_s + jitter`` with Gaussian jitter conditioned on
      strictly increasing stamps (:func:`_ordered_jitter`).
    """
    if sampling_mode == "stations":
        t = np.asarray(station_times_s, dtype=np.float64)
        return Clocks(t.copy(), t.copy(), t.copy(), math.nan, math.nan, float(t[0]) if t.size else 0.0,
                      np.zeros(t.size), 0, True)  # fmt: skip
    n_cam = max(int(round(duration_s * camera_rate_hz)), 1)
    if sync == "sync":
        t = np.arange(n_cam) / camera_rate_hz
        return Clocks(t.copy(), t.copy(), t.copy(), float(camera_rate_hz), float(camera_rate_hz), 0.0,
                      np.zeros(n_cam), 0, True)  # fmt: skip
    n_rob = int(round(duration_s * robot_rate_hz)) + 1
    t_rob = np.arange(n_rob) / robot_rate_hz
    phase = float(rng.uniform(0.0, 1.0 / camera_rate_hz))
    t_slots = phase + np.arange(n_cam) / camera_rate_hz
    keep = rng.random(n_cam) >= camera_drop_fraction
    if keep.sum() < 2:  # pragma: no cover - needs a drop fraction near 1
        keep[:2] = True
    t_gt = t_slots[keep]
    jitter = _ordered_jitter(rng, t_gt, float(time_jitter_std_s))
    return Clocks(t_rob, t_gt, t_gt + time_offset_s + jitter, float(robot_rate_hz), float(camera_rate_hz), phase,
                  jitter, int((~keep).sum()), False)  # fmt: skip
