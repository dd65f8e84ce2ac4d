"""The guesses of ``X`` and ``Y`` a plan starts from, and how far they may be off.

A plan is made from guesses: ``X`` (``T_ee_cam`` eye-in-hand, ``T_ee_marker``
eye-to-hand) and ``Y`` (``T_base_world`` the board, or ``T_base_cam``).  Poses
that frame the target tightly lose it when the guesses are wrong, so the
planner keeps only poses that still see the target when ``X`` and ``Y`` are
each off by a *guess tolerance* (a distance [mm] and an angle [deg];
:class:`~kinhec.planner.candidates.PlanLimits`).

* Rough guesses (a tape measure, a CAD drawing, an eyeballed mount) are off by
  centimetres and degrees: the default tolerance, :data:`DEFAULT_GUESS_TOLERANCE`
  (50 mm, 10 deg), keeps the target in view of such guesses.
* After a first calibration the guesses are known to a few millimetres and a
  fraction of a degree: :func:`guesses_from_calibration` reads ``X``, ``Y``
  and their standard deviations from the JSON of ``kinhec calibrate --json``
  and sets the tolerance from them (:func:`tolerance_from_std`), so that the
  poses planned next (``--taken`` the poses already recorded) are close to
  the plan the true ``X`` and ``Y`` would give.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.util import jsonutil
from kinhec.util.errors import InputError

__all__ = ["DEFAULT_GUESS_TOLERANCE", "MIN_CALIBRATED_TOLERANCE", "STD_FACTOR", "parse_tolerance",
           "tolerance_from_std", "guesses_from_calibration"]  # fmt: skip

#: Default guess tolerance (mm, deg): how far guesses made without a calibration may be off.
DEFAULT_GUESS_TOLERANCE = (50.0, 10.0)
#: Tolerance (mm, deg) after a calibration is never set below this: errors the calibration's standard
#: deviations leave out (the robot's kinematic model, a few poses' optimistic noise estimate).
MIN_CALIBRATED_TOLERANCE = (5.0, 1.0)
#: Tolerance from a calibration: this many times the RMS length of the error (``sqrt`` of the summed variances).
STD_FACTOR = 2.0


def parse_tolerance(text: str) -> tuple[float, float]:
    """``(mm, deg)`` from ``"MM,DEG"`` (the ``--guess-tolerance`` option)."""
    try:
        mm, deg = (float(v) for v in str(text).split(","))
    except ValueError:
        raise InputError(f"--guess-tolerance: expected two numbers MM,DEG (e.g. 50,10), got {text!r}") from None
    if not (math.isfinite(mm) and math.isfinite(deg) and mm >= 0 and deg >= 0):
        raise InputError(f"--guess-tolerance: expected two numbers >= 0 MM,DEG (e.g. 50,10), got {text!r}")
    return mm, deg


def tolerance_from_std(X_std, Y_std) -> tuple[float, float]:
    """Guess tolerance ``(mm, deg)`` from the standard deviations of ``X`` and ``Y``.

    Parameters
    ----------
    X_std, Y_std : array_like, shape (6,)
        Standard deviations of the right perturbations: rotation [rad] about three axes, then translation [m]
        along three axes (``X_std`` / ``Y_std`` of a calibration result).

    Returns
    -------
    (float, float)
        :data:`STD_FACTOR` times the larger (over ``X`` and ``Y``) RMS length of the translation error [mm] and
        of the rotation error [deg], at least :data:`MIN_CALIBRATED_TOLERANCE`.  With a Gaussian error of
        equal standard deviations on three axes the length stays below it with probability 0.994.
    """
    s = np.vstack([np.asarray(X_std, dtype=np.float64), np.asarray(Y_std, dtype=np.float64)])
    rot = np.sqrt(np.sum(s[:, :3] ** 2, axis=1)).max()
    trans = np.sqrt(np.sum(s[:, 3:] ** 2, axis=1)).max()
    return (max(STD_FACTOR * 1000.0 * float(trans), MIN_CALIBRATED_TOLERANCE[0]),
            max(STD_FACTOR * math.degrees(float(rot)), MIN_CALIBRATED_TOLERANCE[1]))  # fmt: skip


def _field(d: dict, key: str, shape: tuple, what: str, where: str) -> np.ndarray:
    """``d[key]`` as finite numbers of ``shape`` (else an error naming the file and the field)."""
    v = d.get(key)
    try:
        a = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        a = np.zeros(0)
    if a.shape != shape or not np.isfinite(a).all() or (len(shape) == 1 and (a < 0).any()):
        raise InputError(f"{where}: expected {key!r} as {what}, got {v!r:.60}")
    return a


def guesses_from_calibration(path, setup: str) -> tuple[np.ndarray, np.ndarray, tuple[float, float], dict]:
    """``X``, ``Y`` and a guess tolerance from the JSON written by ``kinhec calibrate --json``.

    Parameters
    ----------
    path : str or Path
        A calibration result (``CalibrationResult.to_dict()``: ``setup``, ``X``, ``Y``, ``X_std``, ``Y_std``).
    setup : {"eye_in_hand", "eye_to_hand"}
        The set-up of the plan; the file's must be the same.

    Returns
    -------
    X, Y : ndarray, shape (4, 4)
        ``T_ee_cam`` / ``T_base_world`` (eye-in-hand) or ``T_ee_marker`` / ``T_base_cam`` (eye-to-hand) [m].
        ``Y`` is in the frame of the target the camera poses were measured in: for the plan it must be the
        preset's target frame (origin at the centre of the points, z towards the viewer).
    tolerance : (float, float)
        :func:`tolerance_from_std` of the file's standard deviations [mm, deg].
    info : dict
        ``file``, ``verdict``, ``n_pairs``, ``X_std``, ``Y_std`` of the calibration (for the plan's JSON).

    Raises
    ------
    InputError
        A missing or unreadable file, another set-up, a result without ``Y`` or with ``X`` undetermined, a
        malformed field (the message names the file and the field).
    """
    path = Path(path)
    d = jsonutil.load(path)
    where = str(path)
    if not isinstance(d, dict) or "X" not in d:
        raise InputError(f"{where}: expected the JSON of kinhec calibrate --json (with X, Y, X_std, Y_std), "
                         f"got {type(d).__name__} without 'X'")  # fmt: skip
    if d.get("setup") != setup:
        raise InputError(f"{where}: expected a calibration of set-up {setup}, got {d.get('setup')!r}")
    if d.get("Y") is None:
        raise InputError(f"{where}: expected a calibration with Y (A X = Y B), got none")
    obs = d.get("observability")
    if isinstance(obs, dict) and obs.get("determined") is False:
        raise InputError(f"{where}: expected a calibration that determines X, got {d.get('verdict', 'undetermined')!r}")
    X, Y = (se3.check_transforms(_field(d, k, (4, 4), "a 4x4 matrix of numbers", where), f"{where}: {k}")
            for k in ("X", "Y"))  # fmt: skip
    X_std, Y_std = (_field(d, k, (6,), "6 standard deviations >= 0 (rad, m)", where) for k in ("X_std", "Y_std"))
    info = {"file": where, "verdict": d.get("verdict"), "n_pairs": d.get("n_pairs"), "X_std": X_std.tolist(),
            "Y_std": Y_std.tolist()}  # fmt: skip
    return X, Y, tolerance_from_std(X_std, Y_std), info
