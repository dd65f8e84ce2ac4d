"""A chessboard that looks the same turned by half a turn: each view's numbering settled by the hand's motion.

A chessboard with ``cols + rows`` even has no mark that tells corner 0 from
the last corner; :mod:`kinhec.vision.chessboard` numbers every view from the
corner nearest the image's top-left, which is right only while the camera
rolls less than 90 degrees about the board between views.  The hand's motion
settles it for any roll: the rotation angle of a relative motion is the same
seen by the hand and by the camera (``A_ij X = X B_ij`` makes ``A_ij`` and
``B_ij`` conjugate; Tsai and Lenz 1989), whatever ``X`` is.  Renumbering a
view by the half turn changes its camera pose by the board's half turn ``F``
(``T_cam_target -> T_cam_target F``), and with it the angle of every relative
motion involving that view, by up to 180 degrees.  So, with the camera
calibrated from the views (Zhang's constraints do not care which corner is
first), view 0 keeps its numbering (it fixes the target frame) and each
further view takes the numbering whose relative-motion angles to the views
settled before it match the hand's best.  A view whose two numberings match
about equally well (its motion to every settled view is a rotation about the
board's normal by about 90 degrees) keeps the top-left one.

R. Y. Tsai and R. K. Lenz, "A new technique for fully autonomous and efficient
3D robotics hand/eye calibration," IEEE Trans. Robotics and Automation 5(3), 1989.
"""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3
from kinhec.vision.targets import Chessboard

__all__ = ["half_turn", "resolve_half_turns"]

#: The two numberings must differ by this much in mean angle mismatch [deg] for a view to be turned.
MIN_MARGIN_DEG = 2.0


def half_turn(board: Chessboard) -> np.ndarray:
    """``F`` (4, 4): the board's half turn about its normal through the centre of its corners (an involution)."""
    W, H = (board.cols - 1) * board.square_m, (board.rows - 1) * board.square_m
    return np.array([[-1.0, 0, 0, W], [0, -1.0, 0, H], [0, 0, 1.0, 0], [0, 0, 0, 1.0]])


def _relative_angles(T_cam_target: np.ndarray, i: np.ndarray, j: int, mode: str) -> np.ndarray:
    Ti, Tj = T_cam_target[i], T_cam_target[j]
    if mode == "eye_in_hand":  # the board is fixed: the camera's motion, T_i inv(T_j)
        R = Ti[:, :3, :3] @ np.swapaxes(Tj[None, :3, :3], 1, 2)
    else:  # the board moves with the hand: inv(T_i) T_j
        R = np.swapaxes(Ti[:, :3, :3], 1, 2) @ Tj[None, :3, :3]
    return np.degrees(se3.rotation_angle(R, check=False))


def resolve_half_turns(T_cam_target, T_base_ee, board: Chessboard, mode: str) -> tuple[np.ndarray, float]:
    """Which views to renumber by the half turn (see the module docstring).

    Parameters
    ----------
    T_cam_target : array_like, shape (N, 4, 4)
        Each view's target pose from its corners as numbered (top-left rule) [m].
    T_base_ee : array_like, shape (N, 4, 4)
        The hand pose of each view [m].
    board : Chessboard
    mode : {"eye_in_hand", "eye_to_hand"}

    Returns
    -------
    (turn, mismatch_deg)
        ``turn`` (N,) bool: the views whose numbering is the other one; ``mismatch_deg``: the median
        difference [deg] between the hand's and the camera's relative-motion angles once settled.
    """
    T = np.array(T_cam_target, dtype=np.float64)
    A = np.asarray(T_base_ee, dtype=np.float64)
    n = T.shape[0]
    F = half_turn(board)
    turn = np.zeros(n, dtype=bool)
    mismatch = []
    for j in range(1, n):
        i = np.arange(j)
        a = np.degrees(se3.rotation_angle(np.swapaxes(A[i, :3, :3], 1, 2) @ A[j, :3, :3], check=False))
        cost = []
        for f in (False, True):
            Tj = T.copy()
            if f:
                Tj[j] = T[j] @ F
            cost.append(np.abs(_relative_angles(Tj, i, j, mode) - a))
        m0, m1 = float(np.median(cost[0])), float(np.median(cost[1]))
        if m1 + MIN_MARGIN_DEG < m0:
            turn[j] = True
            T[j] = T[j] @ F
        mismatch.append(min(m0, m1))
    return turn, float(np.median(mismatch)) if mismatch else 0.0
