"""Problem runners of the suite: a problem name -> the function that solves an entry.

A runner takes the entry's observation file and its ``config`` and returns
the result document (a dict of plain JSON values):

``parameters``
    estimated scalars by name (``fx``, ``k1``, ...);
``poses``
    estimated poses by name (``X``, ``Y``) as ``{rotation: [qx, qy, qz, qw], translation: [m]}``;
``sigma``
    standard deviation of every estimated parameter (pose components
    ``X.rx`` ... ``X.tz`` of the right-perturbation twist, rad and m);
``statistics``
    fit statistics (reprojection errors, counts).

:func:`register_problem` adds a runner (the pose problems of the calibrate
command plug in here).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from kinhec.errors import InputError, UnknownNameError
from kinhec.intrinsics import INTRINSIC_NAMES, calibrate_camera, pack_views
from kinhec.observations import pose_json, read_observations
from kinhec.solvers.reprojection import solve_reprojection
from kinhec.suite import poses as _poses
from kinhec.suite.manifest import sha256_file

__all__ = ["PROBLEMS", "register_problem", "run_problem"]

_CONFIG_KEYS = ("refine_robot", "robot_prior_rot_rad", "robot_prior_trans_m", "loss", "f_scale_px", "fix_k3",
                "refine_intrinsics", "intrinsics")  # fmt: skip


_CALIBRATIONS: dict = {}


def _single_cam_handeye(path: Path, config: dict) -> dict:
    unknown = sorted(set(config) - set(_CONFIG_KEYS))
    if unknown:
        raise InputError(f"config: unknown keys {', '.join(unknown)}; expected some of {', '.join(_CONFIG_KEYS)}")
    obs = read_observations(path)
    # entries that share an observation file share its free-pose calibration (the slowest stage)
    key = (sha256_file(path), bool(config.get("fix_k3", False)), repr(config.get("intrinsics")))
    cal = _CALIBRATIONS.get(key)
    if cal is None:
        cal = calibrate_camera(pack_views(obs.points_3d, obs.points_2d), obs.image_size,
                               fix_k3=bool(config.get("fix_k3", False)), intrinsics=config.get("intrinsics"))  # fmt: skip
        if len(_CALIBRATIONS) >= 8:
            _CALIBRATIONS.pop(next(iter(_CALIBRATIONS)))
        _CALIBRATIONS[key] = cal
    r = solve_reprojection(obs.points_3d, obs.points_2d, obs.T_base_ee, obs.image_size, configuration=obs.mode,
                           camera=cal, **config)  # fmt: skip
    return {
        "problem": "single_cam_handeye",
        "parameters": {n: float(v) for n, v in zip(INTRINSIC_NAMES, r.intrinsics)},
        "poses": {"X": pose_json(r.X), "Y": pose_json(r.Y)},
        "sigma": dict(r.sigma),
        "statistics": {"rms_px": r.rms_px, "mean_px": r.mean_px, "init_rms_px": r.init_rms_px,
                       "sigma_scale": r.sigma_scale, "n_views": r.n_views, "n_points": r.n_points},  # fmt: skip
    }


#: Problem name -> runner(observation_path, config) -> result dict.
PROBLEMS: dict[str, Callable[[Path, dict], dict]] = {
    "single_cam_handeye": _single_cam_handeye,
    "pose_pairs": _poses.run_pose_pairs,
    "pose_streams": _poses.run_pose_streams,
}


def register_problem(name: str, runner: Callable[[Path, dict], dict]) -> None:
    """Add (or replace) the runner of problem ``name``."""
    if not isinstance(name, str) or not name:
        raise InputError(f"name: expected a non-empty string, got {name!r}")
    PROBLEMS[name] = runner


def run_problem(name: str, path, config: dict) -> dict:
    """Solve the entry whose observations are at ``path`` with the runner of ``name``."""
    if name not in PROBLEMS:
        raise UnknownNameError("problem", name, PROBLEMS)
    return PROBLEMS[name](Path(path), dict(config))
