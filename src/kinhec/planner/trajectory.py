"""A plan as a ROS 2 ``trajectory_msgs/msg/JointTrajectory`` YAML: the poses in the planned order.

The message (``header``, ``joint_names``, ``points``) is written as YAML in the field layout of ROS 2's
message (``ros2 topic pub /joint_trajectory_controller/joint_trajectory trajectory_msgs/msg/JointTrajectory
"$(cat plan_trajectory.yaml)"`` and ``yaml.safe_load`` read it):

* ``header.frame_id``: the robot's base frame (a URDF's base link, a DH YAML's ``base_frame``, else ``base``);
  ``header.stamp`` zero (start now);
* ``joint_names``: the URDF's or DH YAML's joint names, else ``j1 .. jn``;
* ``points``: one per planned pose, in the path order: ``positions`` [rad; m for a prismatic joint, as in ROS]
  (the plan's joints, 17 significant digits), ``velocities`` all zero (the arm stops at every pose to take its
  picture), and ``time_from_start``
  (``sec``, ``nanosec``): the cumulative duration of the moves from the start configuration (the last taken
  pose, else the model's home), each move ``max_j |dq_j| / (speed * qd_max_j)`` (the slowest joint at the
  fraction ``speed`` of its cap) plus ``dwell_s`` at every pose.  The first move starts from the start
  configuration, so move the arm there first (or send the points as they are: a controller moves from
  wherever the arm is).

The plan's predicted RMS translation error of ``X`` after each pose is a comment on that point's line
(``# pose k: predicted sigma of X translation ... mm``) so the message stays a valid ``JointTrajectory``; the
same numbers are ``sigma_mm`` in the plan's JSON.
"""

from __future__ import annotations

import math

import numpy as np

from kinhec.planner.path import move_times
from kinhec.util.errors import InputError

__all__ = ["DEFAULT_SPEED", "DEFAULT_DWELL_S", "trajectory_times", "joint_trajectory_yaml"]

#: Fraction of every joint's speed cap the trajectory's timing assumes.
DEFAULT_SPEED = 0.2
#: Seconds spent still at each pose (for the picture) in the timing.
DEFAULT_DWELL_S = 1.0


def trajectory_times(robot, q_start: np.ndarray, q: np.ndarray, speed: float = DEFAULT_SPEED,
                     dwell_s: float = DEFAULT_DWELL_S) -> np.ndarray:  # fmt: skip
    """``time_from_start`` [s] of each configuration ``q`` ``(K, dof)``: moves at ``speed`` of the caps plus dwells."""
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not 0 < speed <= 1:
        raise InputError(f"trajectory speed: expected a fraction of the joint speed caps in (0, 1], got {speed!r}")
    if isinstance(dwell_s, bool) or not isinstance(dwell_s, (int, float)) or not 0 <= dwell_s < math.inf:
        raise InputError(f"trajectory dwell: expected seconds >= 0, got {dwell_s!r}")
    if q.shape[0] == 0:
        return np.zeros(0)
    pts = np.vstack([q_start[None], q])
    moves = move_times(robot, pts[:-1], pts[1:]) / speed
    # arrive at pose k after the moves so far and the dwells at the poses before it
    return np.cumsum(moves) + dwell_s * np.arange(q.shape[0])


def _duration(t: float) -> str:
    ns = int(round(t * 1e9))
    return f"{{sec: {ns // 1_000_000_000}, nanosec: {ns % 1_000_000_000}}}"


def joint_trajectory_yaml(q: np.ndarray, times: np.ndarray, joint_names, frame_id: str, sigma_mm=None,
                          header_lines=()) -> str:  # fmt: skip
    """The YAML text of a ``JointTrajectory`` through ``q`` ``(K, dof)`` at ``times`` ``(K,)`` [s]."""
    names = list(joint_names)
    if q.ndim != 2 or q.shape[1] != len(names) or times.shape != (q.shape[0],):
        raise InputError(f"trajectory: expected joints (K, {len(names)}) and K times, got {q.shape} and {times.shape}")
    out = [f"# {line}" for line in header_lines]
    out += ["header:", "  stamp: {sec: 0, nanosec: 0}", f"  frame_id: {frame_id}",
            "joint_names: [" + ", ".join(names) + "]", "points:"]  # fmt: skip
    zeros = "[" + ", ".join(["0.0"] * len(names)) + "]"
    for k, (qk, tk) in enumerate(zip(q, times)):
        s = None if sigma_mm is None else float(sigma_mm[k])
        note = "" if s is None else (f"  # pose {k + 1}: predicted sigma of X translation "
                                     f"{'undetermined' if not math.isfinite(s) else f'{s:.4g} mm'}")  # fmt: skip
        out.append("  - positions: [" + ", ".join(format(float(v), ".17g") for v in qk) + "]" + note)
        out += [f"    velocities: {zeros}", "    accelerations: []", "    effort: []",
                f"    time_from_start: {_duration(float(tk))}"]  # fmt: skip
    if q.shape[0] == 0:
        out[-1] = "points: []"
    return "\n".join(out) + "\n"
