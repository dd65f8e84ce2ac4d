"""Pose problems of the suite: robot/camera pose pairs and time-stamped pose streams.

These entries start from poses, not from image corners: a camera pose per
view already estimated by the publisher (Tabb's dataset 1), or continuous,
unsynchronised robot and camera streams with an unknown clock offset (ETH
ASL).  The runners here solve them with the solver registry and
:func:`kinhec.solvers.estimate_time_offset`; they are the adapter to point
at the ``kinhec calibrate`` pipeline (reading, pairing, solving) once it is
available, by re-registering the two problem names
(:func:`kinhec.evaluate.suite.problems.register_problem`).

Readers of the publishers' files (used by ``suite freeze``):

* :func:`tabb_pose_pairs`: ``robot_cali.txt`` (``T_ee_base`` in mm, inverted
  here) and ``cali.txt`` (``[R|t] = T_cam_target`` in mm) -> metres;
* :func:`ethz_pose_streams`: CSV ``t, x, y, z, qx, qy, qz, qw`` of the hand
  in the robot base and of the camera in the target frame (inverted here
  to ``T_cam_target``); rows are sorted by time and repeated or
  non-increasing stamps dropped (the first row of a stamp is kept).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import DatasetFormatError, InputError
from kinhec.geometry.motion import select_keyframes
from kinhec.synth.observations import poses_json, read_pose_pairs, read_pose_streams
from kinhec.solvers import estimate_time_offset, get_solver

__all__ = ["tabb_pose_pairs", "ethz_pose_streams", "run_pose_pairs", "run_pose_streams"]


def _doc(problem: str, size, inp: dict) -> dict:
    return {"version": 1, "cameras": [{"id": "cam0", "image_size": [int(size[0]), int(size[1])]}],
            "problem": problem, "input": inp}  # fmt: skip


def tabb_pose_pairs(folder) -> dict:
    """The ``pose_pairs`` document of Tabb's dataset 1 (``robot_cali.txt``, ``cali.txt``)."""
    folder = Path(folder)
    nums = np.loadtxt(folder / "robot_cali.txt", skiprows=1).reshape(-1, 4, 4)
    T_base_ee = se3.invert_transform(nums, check=False)
    T_base_ee[:, :3, 3] /= 1000.0
    rows = [line.split() for line in (folder / "cali.txt").read_text().splitlines()[1:] if line.strip()]
    vals = np.array([[float(v) for v in r[1:]] for r in rows])
    if vals.shape[0] != T_base_ee.shape[0] or vals.shape[1] < 21:
        raise DatasetFormatError(f"{folder}: expected one cali.txt line per robot pose, got {vals.shape[0]} lines "
                                 f"and {T_base_ee.shape[0]} poses")  # fmt: skip
    R = vals[:, 9:18].reshape(-1, 3, 3)
    U, _, Vt = np.linalg.svd(R)  # the file's rotations carry 6 digits: project onto SO(3)
    T_cam_target = se3.transform_from_rotation_translation(U @ Vt, vals[:, 18:21] / 1000.0)
    views = [{"meta": {"base_se3_gripper": a, "camera_se3_target": c}}
             for a, c in zip(poses_json(T_base_ee), poses_json(T_cam_target))]  # fmt: skip
    return _doc("pose_pairs", (640, 480), {"mode": "eye_in_hand", "views": views})


def _stream(path: Path):
    a = np.loadtxt(path, delimiter=",")
    if a.ndim != 2 or a.shape[1] != 8:
        raise DatasetFormatError(f"{path}: expected rows 't, x, y, z, qx, qy, qz, qw', got shape {a.shape}")
    a = a[np.argsort(a[:, 0], kind="stable")]
    keep = np.r_[True, np.diff(a[:, 0]) > 0]
    a = a[keep]
    T = se3.transform_from_pq(a[:, 1:4], a[:, [7, 4, 5, 6]], normalize=True)
    return a[:, 0], T


def ethz_pose_streams(robot_csv, camera_csv, image_size) -> dict:
    """The ``pose_streams`` document of an ETH ASL recording (hand in base; camera in target, inverted)."""
    t_r, T_r = _stream(Path(robot_csv))
    t_c, T_tc = _stream(Path(camera_csv))
    T_ct = se3.invert_transform(T_tc, check=False)
    return _doc("pose_streams", image_size, {
        "mode": "eye_in_hand",
        "robot": {"t_s": t_r.tolist(), "base_se3_gripper": poses_json(T_r)},
        "camera": {"t_s": t_c.tolist(), "camera_se3_target": poses_json(T_ct)},
    })  # fmt: skip


def _check_config(config: dict, allowed) -> None:
    unknown = sorted(set(config) - set(allowed))
    if unknown:
        raise InputError(f"config: unknown keys {', '.join(unknown)}; expected some of {', '.join(allowed)}")


def _solve(name: str, A: np.ndarray, B: np.ndarray):
    spec = get_solver(name)
    if spec.kind == "axyb":
        return spec.run(A, B)
    return spec.run(se3.invert_transform(A[:-1], check=False) @ A[1:], se3.invert_transform(B[:-1], check=False) @ B[1:])


def _residuals(A, B, X, Y) -> dict:
    """Mean rotation [deg] and translation [mm] residual of ``A_i X = Y B_i``."""
    rot, tr = se3.pose_error(A @ X, Y @ B)
    return {"axyb_mean_rot_deg": float(np.mean(rot)), "axyb_mean_trans_mm": float(np.mean(tr))}


def run_pose_pairs(path, config: dict) -> dict:
    """Solve a ``pose_pairs`` entry with the registry solver ``config["solver"]`` (default ``shah+lm``)."""
    _check_config(config, ("solver",))
    obs = read_pose_pairs(path)
    B = se3.invert_transform(obs.T_cam_target, check=False) if obs.mode == "eye_in_hand" else obs.T_cam_target
    res = _solve(config.get("solver", "shah+lm"), obs.T_base_ee, B)
    out = {"problem": "pose_pairs", "parameters": {}, "poses": {"X": poses_json(res.X[None])[0]}, "sigma": {},
           "statistics": {"n_views": int(obs.T_base_ee.shape[0])}}  # fmt: skip
    if res.Y is not None:
        out["poses"]["Y"] = poses_json(res.Y[None])[0]
        out["statistics"].update(_residuals(obs.T_base_ee, B, res.X, res.Y))
    return out


def run_pose_streams(path, config: dict) -> dict:
    """Solve a ``pose_streams`` entry: clock offset, pairing by interpolation, keyframes, registry solver.

    ``config``: ``solver`` (default ``park_martin``), ``max_offset_s`` (default 0.5).
    """
    _check_config(config, ("solver", "max_offset_s"))
    obs = read_pose_streams(path)
    est = estimate_time_offset(obs.t_robot_s, obs.T_base_ee, obs.t_camera_s, obs.T_cam_target,
                               max_offset_s=float(config.get("max_offset_s", 0.5)))  # fmt: skip
    A = se3.interpolate_poses(obs.t_robot_s, obs.T_base_ee, obs.t_camera_s - est.offset_s, out_of_range="nan")
    ok = np.isfinite(A).all(axis=(1, 2))
    A = A[ok]
    C = obs.T_cam_target[ok]
    B = se3.invert_transform(C, check=False) if obs.mode == "eye_in_hand" else C
    k = select_keyframes(A)
    res = _solve(config.get("solver", "park_martin"), A[k], B[k])
    return {
        "problem": "pose_streams",
        "parameters": {"time_offset_s": float(est.offset_s)},
        "poses": {"X": poses_json(res.X[None])[0]},
        "sigma": {},
        "statistics": {"peak_corr": float(est.peak_corr), "n_paired": int(ok.sum()), "n_keyframes": int(k.size)},
    }
