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

from kinhec.util.errors import InputError, UnknownNameError
from kinhec.models.intrinsics import INTRINSIC_NAMES, calibrate_camera, pack_views
from kinhec.synth.observations import pose_json, read_observations
from kinhec.solvers.reprojection import solve_reprojection
from kinhec.evaluate.suite import poses as _poses
from kinhec.evaluate.suite.manifest import sha256_file
import numpy as np
from kinhec.geometry import se3
from kinhec.calibrate.corners import solve_corners
from kinhec.models.intrinsics import project, residual_norms
from kinhec.solvers.reprojection import POSE_PARAMETER_NAMES, chain_poses

__all__ = ["PROBLEMS", "register_problem", "run_problem"]

_CONFIG_KEYS = ("refine_robot", "robot_prior_rot_rad", "robot_prior_trans_m", "loss", "f_scale_px", "fix_k3",
                "refine_intrinsics", "intrinsics", "solver")  # fmt: skip
#: ``config.solver`` of a ``single_cam_handeye`` entry: the pixel solver (default) or he_ml's pixel stage.
_SOLVERS = ("reprojection", "he_ml")


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
    solver = config.pop("solver", "reprojection")
    if solver not in _SOLVERS:
        raise InputError(f"config.solver: expected one of {', '.join(_SOLVERS)}, got {solver!r}")
    if solver == "he_ml":
        if set(config) - {"fix_k3", "intrinsics"}:
            raise InputError(f"config: solver he_ml takes only fix_k3 and intrinsics, got "
                             f"{', '.join(sorted(set(config) - {'fix_k3', 'intrinsics'}))}")  # fmt: skip
        return _he_ml_on_pixels(obs, cal)
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


def _he_ml_on_pixels(obs, cal) -> dict:
    """he_ml with the pixels (intrinsics and view poses of the free-pose calibration, held).

    ``mean_px`` / ``rms_px`` go through the chain with the robot poses as he_ml used them (the posterior
    mean of each view's flange error, as the ``_prior`` entries report theirs); ``measured_mean_px`` /
    ``measured_rms_px`` through the measured poses.
    """


    A = obs.T_base_ee
    res = solve_corners(obs, cal)
    views = pack_views(obs.points_3d, obs.points_2d)
    xi = np.nan_to_num(res.info["pixel_robot_twists"])
    inl = res.inliers

    def chain(A_used):
        d = residual_norms(project(cal.intrinsics, chain_poses(A_used, res.X, res.Y, obs.mode), views.points_3d),
                           views)  # fmt: skip
        keep = np.repeat(inl, views.mask.sum(axis=1))  # the views the pixel stage used
        d = d[keep]
        return float(d.mean()), float(np.sqrt(np.mean(d * d)))

    mean_px, rms_px = chain(A @ se3.se3_exp(xi))
    m_mean, m_rms = chain(A)
    std = np.sqrt(np.maximum(np.diag(res.cov[:12, :12]), 0.0))
    names = [f"{p}.{c}" for p in ("X", "Y") for c in POSE_PARAMETER_NAMES]
    return {
        "problem": "single_cam_handeye",
        "parameters": {n: float(v) for n, v in zip(INTRINSIC_NAMES, cal.intrinsics)},
        "poses": {"X": pose_json(res.X), "Y": pose_json(res.Y)},
        "sigma": {n: float(v) for n, v in zip(names, std)},
        "statistics": {"rms_px": rms_px, "mean_px": mean_px, "measured_rms_px": m_rms, "measured_mean_px": m_mean,
                       "pixel_std_px": float(res.info["pixel_std"]),
                       "robot_rot_std_rad": float(res.noise["robot_rot_std_rad"]),
                       "robot_trans_std_m": float(res.noise["robot_trans_std_m"]),
                       "n_views": int(inl.sum()), "n_points": int(views.mask[inl].sum())},
    }  # fmt: skip


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
