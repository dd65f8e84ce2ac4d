"""The OpenCV harness: OpenCV's calibration of a suite entry's observations, in the suite's result format.

OpenCV is an independent cross-check, not a dependency of kinhec: ``cv2``
(``opencv-python-headless``, in the ``dev`` extra) is imported only when a
function here runs.  For ``single_cam_handeye``:

1. intrinsics by ``cv2.calibrateCamera`` (``k1 k2 p1 p2 k3``, default flags)
   with a free pose per view, or, when the entry's config gives
   ``intrinsics`` and does not refine them, those intrinsics and a
   ``cv2.solvePnP`` per view;
2. ``X`` by ``cv2.calibrateHandEye`` with Park and Martin's method
   (eye-to-hand: with the inverted robot poses, which returns ``T_base_cam``
   = ``Y``);
3. the other pose as the chordal mean over the views of the chain
   (eye-in-hand ``Y = mean(A_i X T_cam_target,i)``; eye-to-hand
   ``X = mean(inv(A_i) Y T_cam_target,i)``);
4. the reprojection errors through the whole chain (intrinsics, X, Y, robot
   poses as measured), by the same definitions as kinhec's: mean Euclidean
   and RMS distance in pixels.

For ``pose_pairs`` (eye-in-hand): ``cv2.calibrateRobotWorldHandEye`` with
Shah's method on the same pose pairs.
"""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError
from kinhec.util.optional import require
from kinhec.models.intrinsics import INTRINSIC_NAMES, pack_views, project, residual_norms
from kinhec.synth.observations import pose_json, read_observations, read_pose_pairs
from kinhec.solvers.reprojection import chain_poses

__all__ = ["opencv_single_cam_handeye", "opencv_pose_pairs", "OPENCV_RUNNERS"]


def _cv2():
    return require("cv2", "the OpenCV harness")


def _mean_pose(T: np.ndarray) -> np.ndarray:
    U, _, Vt = np.linalg.svd(T[:, :3, :3].sum(axis=0))
    D = np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))])
    return se3.transform_from_rotation_translation(U @ D @ Vt, T[:, :3, 3].mean(axis=0))


def _rt(T):
    return [np.ascontiguousarray(t[:3, :3]) for t in T], [np.ascontiguousarray(t[:3, 3:4]) for t in T]


def opencv_single_cam_handeye(path, config: dict) -> dict:
    """OpenCV's result on a ``single_cam_handeye`` observation file (see the module doc)."""
    cv2 = _cv2()
    obs = read_observations(path)
    obj = [np.asarray(p, dtype=np.float32) for p in obs.points_3d]
    img = [np.asarray(p, dtype=np.float32) for p in obs.points_2d]
    known = config.get("intrinsics") is not None and not config.get("refine_intrinsics", True)
    if known:
        k = np.asarray(config["intrinsics"], dtype=np.float64)
        K = np.array([[k[0], 0, k[2]], [0, k[1], k[3]], [0, 0, 1.0]])
        dist = k[[4, 5, 6, 7, 8]]
        rvecs, tvecs = [], []
        for o, m in zip(obj, img):
            ok, rv, tv = cv2.solvePnP(o, m, K, dist, flags=cv2.SOLVEPNP_ITERATIVE)
            rvecs.append(rv)
            tvecs.append(tv)
    else:
        _, K, dist, rvecs, tvecs = cv2.calibrateCamera(obj, img, tuple(obs.image_size), None, None)
        dist = np.ravel(dist)[:5]
        k = np.array([K[0, 0], K[1, 1], K[0, 2], K[1, 2], *dist])
    T_ct = np.stack([se3.transform_from_rotation_translation(cv2.Rodrigues(r)[0], np.ravel(t))
                     for r, t in zip(rvecs, tvecs)])  # fmt: skip
    A = obs.T_base_ee
    Rc, tc = _rt(T_ct)
    if obs.mode == "eye_in_hand":
        Ra, ta = _rt(A)
        R, t = cv2.calibrateHandEye(Ra, ta, Rc, tc, method=cv2.CALIB_HAND_EYE_PARK)
        X = se3.transform_from_rotation_translation(R, np.ravel(t))
        Y = _mean_pose(A @ X @ T_ct)
    else:
        Ra, ta = _rt(se3.invert_transform(A, check=False))
        R, t = cv2.calibrateHandEye(Ra, ta, Rc, tc, method=cv2.CALIB_HAND_EYE_PARK)
        Y = se3.transform_from_rotation_translation(R, np.ravel(t))
        X = _mean_pose(se3.invert_transform(A, check=False) @ Y @ T_ct)
    views = pack_views(obs.points_3d, obs.points_2d)
    d = residual_norms(project(k, chain_poses(A, X, Y, obs.mode), views.points_3d), views)
    d0 = residual_norms(project(k, T_ct, views.points_3d), views)
    return {
        "problem": "single_cam_handeye",
        "tool": f"opencv {cv2.__version__}",
        "method": ("solvePnP" if known else "calibrateCamera") + " + calibrateHandEye(PARK) + chordal mean",
        "parameters": {n: float(v) for n, v in zip(INTRINSIC_NAMES, k)},
        "poses": {"X": pose_json(X), "Y": pose_json(Y)},
        "statistics": {"mean_px": float(d.mean()), "rms_px": float(np.sqrt(np.mean(d * d))),
                       "per_view_mean_px": float(d0.mean()), "per_view_rms_px": float(np.sqrt(np.mean(d0 * d0)))},
    }  # fmt: skip


def opencv_pose_pairs(path, config: dict) -> dict:
    """OpenCV's ``calibrateRobotWorldHandEye`` (Shah) on a ``pose_pairs`` file (eye-in-hand)."""
    cv2 = _cv2()
    obs = read_pose_pairs(path)
    if obs.mode != "eye_in_hand":
        raise InputError(f"{path}: the OpenCV harness handles eye_in_hand pose pairs only, got {obs.mode}")
    Rw, tw = _rt(obs.T_cam_target)  # world (= target) to camera
    Rb, tb = _rt(se3.invert_transform(obs.T_base_ee, check=False))  # base to gripper
    R_bw, t_bw, R_gc, t_gc = cv2.calibrateRobotWorldHandEye(Rw, tw, Rb, tb, method=cv2.CALIB_ROBOT_WORLD_HAND_EYE_SHAH)
    X = se3.invert_transform(se3.transform_from_rotation_translation(R_gc, np.ravel(t_gc)), check=False)
    Y = se3.invert_transform(se3.transform_from_rotation_translation(R_bw, np.ravel(t_bw)), check=False)
    rot, tr = se3.pose_error(obs.T_base_ee @ X, Y @ se3.invert_transform(obs.T_cam_target, check=False))
    return {
        "problem": "pose_pairs",
        "tool": f"opencv {cv2.__version__}",
        "method": "calibrateRobotWorldHandEye(SHAH)",
        "parameters": {},
        "poses": {"X": pose_json(X), "Y": pose_json(Y)},
        "statistics": {"axyb_mean_rot_deg": float(np.mean(rot)), "axyb_mean_trans_mm": float(np.mean(tr))},
    }


#: Problem name -> OpenCV runner(observation_path, config) -> result dict.
OPENCV_RUNNERS = {"single_cam_handeye": opencv_single_cam_handeye, "pose_pairs": opencv_pose_pairs}
