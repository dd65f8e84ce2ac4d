"""Ordering the chosen poses into a short joint-space path: nearest neighbour, then 2-opt.

The cost of a move is its duration with the slowest joint at its speed cap,
``max_j |dq_j| / qd_max_j`` [s] (the time of a synchronous point-to-point move,
up to the acceleration profile's constant factor).  The path is open: it starts
at a given configuration (the last pose already taken, else the robot's home)
and ends at the last planned pose.  Nearest neighbour builds a first order;
2-opt reverses sub-paths while that shortens the total, until no reversal helps.
"""

from __future__ import annotations

import numpy as np

from kinhec.models.robots import RobotModel

__all__ = ["move_times", "order_path", "path_time"]


def move_times(robot: RobotModel, q_from: np.ndarray, q_to: np.ndarray) -> np.ndarray:
    """Durations [s] of moves between configurations (broadcast), the slowest joint at its speed cap."""
    return (np.abs(q_to - q_from) / robot.qd_max_rad_s).max(axis=-1)


def path_time(robot: RobotModel, q_start: np.ndarray, q: np.ndarray) -> float:
    """Total move time [s] of the path ``q_start -> q[0] -> ... -> q[-1]``."""
    pts = np.vstack([q_start[None], q])
    return float(move_times(robot, pts[:-1], pts[1:]).sum())


def order_path(robot: RobotModel, q_start: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Order ``(k,)`` in which to visit the configurations ``q`` ``(k, dof)`` starting from ``q_start`` ``(dof,)``."""
    k = q.shape[0]
    if k <= 1:
        return np.arange(k)
    pts = np.vstack([q_start[None], q])  # node 0 is the fixed start
    D = move_times(robot, pts[:, None], pts[None])
    order = [0]
    left = list(range(1, k + 1))
    while left:
        j = min(left, key=lambda i: (D[order[-1], i], i))
        order.append(j)
        left.remove(j)
    order = np.asarray(order)
    improved = True
    while improved:
        improved = False
        for i in range(1, k):  # reverse order[i..j]; node 0 stays first
            a, b = order[i - 1], order[i]
            for j in range(i + 1, k + 1):
                c = order[j]
                d = order[j + 1] if j < k else None
                old = D[a, b] + (D[c, d] if d is not None else 0.0)
                new = D[a, c] + (D[b, d] if d is not None else 0.0)
                if new < old - 1e-12:
                    order[i:j + 1] = order[i:j + 1][::-1].copy()
                    improved = True
                    a, b = order[i - 1], order[i]
    return order[1:] - 1
