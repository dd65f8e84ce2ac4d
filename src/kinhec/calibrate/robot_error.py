"""The hand stream's systematic error (a robot's absolute accuracy) as a consider covariance of X and Y.

A robot reports its flange pose from its kinematic model.  Where the model is
off (link lengths, joint offsets: a robot's *absolute accuracy*, typically
0.1-1 mm and 0.01-0.1 deg after its factory calibration), every reported pose
is off by ``E(q)``, a smooth function of the joint configuration ``q``.  Over
the small range of configurations of a hand-eye recording most of ``E`` is
constant, and a constant error is invisible:

* in the flange frame, ``A_i E`` for every pair: ``A_i E X = Y B_i`` is
  solved exactly by ``E X``, so the estimate of ``X`` moves by ``E`` one for
  one and no residual grows;
* in the base frame, ``E A_i``: ``Y`` moves to ``E Y`` the same way.

Only the part of ``E`` that varies over the recording shows in the
residuals (and is counted as noise there).  The constant part is therefore
counted as a *consider* covariance: not estimated (nothing can estimate it),
but its effect on ``X`` and ``Y`` is added to their covariances.

The level is stated by the user as the robot's accuracy ``(deg, mm)``: the
RMS rotation angle and the RMS distance of its pose error, spread evenly over
the three axes (each axis ``deg / sqrt(3)``, ``mm / sqrt(3)``), once in the
flange frame (moving ``X``) and once in the base frame (moving ``Y``).  For a
transform ``T = (R, t)`` perturbed as ``R exp(phi)``, ``t + d`` (the
parametrisation of the reported covariance), a constant error ``(w, v)``
applied from the left gives ``phi = R^T w`` and ``d = w x t + v``: the
rotation part carries a lever arm onto the translation.

By default nothing is stated and nothing is added -- a note says so, since a
recording cannot tell how accurate the robot's model is.
"""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate.option_values import nonnegative_pair

__all__ = ["parse", "sensitivity", "consider_cov", "apply", "UNSTATED_NOTE"]

#: What the notes say when no accuracy is stated.
UNSTATED_NOTE = ("the hand stream's systematic error (a robot's absolute accuracy) is not counted in the standard "
                 "deviations: its part that is constant over the recording moves X (and Y) one for one and no "
                 "residual shows it; state it with robot_accuracy / --robot-accuracy DEG,MM")


def parse(value) -> tuple[float, float] | None:
    """``robot_accuracy`` as ``(deg, mm)``, checked (``"DEG,MM"`` or two numbers ``>= 0``); None when not given."""
    return nonnegative_pair(value, "robot_accuracy", "the robot's pose accuracy as RMS rotation [deg] and RMS "
                                                     "distance [mm], e.g. 0.05,0.3")


def sensitivity(T: np.ndarray) -> np.ndarray:
    """``(6, 6)``: how a constant error ``(w [rad], v [m])`` applied from the left moves ``T``'s parameters
    ``(phi [rad], d [m])`` (right rotation, translation in the parent frame)."""
    R, t = T[:3, :3], T[:3, 3]
    S = np.zeros((6, 6))
    S[:3, :3] = R.T
    S[3:, :3] = -se3.hat(t)  # w x t = -[t]x w
    S[3:, 3:] = np.eye(3)
    return S


def consider_cov(T: np.ndarray, level: tuple[float, float]) -> np.ndarray:
    """``(6, 6)`` covariance added to ``T``'s parameters by a constant error of the stated ``level`` (deg, mm)."""
    rot = np.radians(level[0]) / np.sqrt(3.0)
    trans = 1e-3 * level[1] / np.sqrt(3.0)
    S = sensitivity(T)
    return S @ np.diag([rot**2] * 3 + [trans**2] * 3) @ S.T


def apply(res, level: tuple[float, float] | None) -> None:
    """Add the consider covariance of ``level`` to a :class:`~kinhec.calibrate.result.CalibrationResult` in place.

    ``X`` (moved by the flange-frame part) and ``Y`` (the base-frame part) get their covariance blocks and
    standard deviations enlarged; the observability report records the level and what it added
    (``robot_accuracy``); the verdict on the motion (``determined``) is the fit's and does not change.  With no
    level, the report records ``None`` and a note says the error is not counted.
    """
    obs = res.observability
    if level is None or not any(level):
        obs["robot_accuracy"] = None
        res.notes.append(UNSTATED_NOTE)
        return
    CX = consider_cov(res.X, level)
    CY = consider_cov(res.Y, level)
    if res.cov is not None and res.cov.shape[0] >= 12:
        cov = np.array(res.cov, dtype=np.float64, copy=True)
        cov[:6, :6] += CX
        cov[6:12, 6:12] += CY
        res.cov = cov
    res.X_std = np.sqrt(res.X_std**2 + np.diag(CX))
    res.Y_std = np.sqrt(res.Y_std**2 + np.diag(CY))
    obs["robot_accuracy"] = {
        "rot_deg": float(level[0]), "trans_mm": float(level[1]),
        "X_std_added": [float(v) for v in np.sqrt(np.diag(CX))],
        "Y_std_added": [float(v) for v in np.sqrt(np.diag(CY))],
    }  # fmt: skip
    add = np.sqrt(np.diag(CX))
    res.notes.append(f"the robot's stated accuracy ({level[0]:.3g} deg, {level[1]:.3g} mm RMS) is counted in the "
                     f"standard deviations: it adds up to {np.degrees(add[:3].max()):.2g} deg / "
                     f"{1e3 * add[3:].max():.2g} mm to X's")  # fmt: skip
