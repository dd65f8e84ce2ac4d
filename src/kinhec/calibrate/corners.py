"""Calibration from the target's corners: robot poses and detected pixels in one observation file.

``kinhec calibrate --corners FILE`` reads an observation file (the
calibration-rs JSON of :mod:`kinhec.observations`: per view the target
points, their pixels and ``meta.base_se3_gripper``).  The camera side is
not a pose file but the corners themselves:

1. **Camera.** The intrinsics are given (``--intrinsics``) or estimated from
   the views (Zhang's closed form, then every intrinsic and view pose
   refined on the pixels); either way each view's target pose follows by
   PnP with them.
2. **Hand-eye.** :func:`kinhec.solvers.he_ml.he_ml` on the pose pairs, then
   its pixel stage on the corners (``pixels=``): ``X`` and ``Y`` from the
   pixels with every view's robot pose error a nuisance under a
   flange-twist prior, the pixel noise and the robot's error level by EM.
   A robot whose reported poses are off by a fraction of a millimetre, as
   real arms are, then biases ``X`` no more than the data allow.

The result is a :class:`~kinhec.calibrate.result.CalibrationResult` like
that of pose files: standard deviations with the robot errors marginalised,
per-view residuals of the pose pairs, outliers (views that the pose stage's
chi-square gate rejects are left out of the pixel stage), observability and
the verdict.  The views are paired by order (one robot pose per view), and
there is no clock offset or scale.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kinhec.calibrate.calibration import _names
from kinhec.calibrate.observability import observability
from kinhec.calibrate.result import CalibrationResult
from kinhec.errors import InputError

__all__ = ["calibrate_corners", "parse_intrinsics", "solve_corners"]


def parse_intrinsics(text) -> np.ndarray:
    """``"fx,fy,cx,cy[,k1,k2,p1,p2[,k3]]"`` (or a sequence of 4, 8 or 9 numbers) as the 9 intrinsics."""
    if isinstance(text, str):
        try:
            vals = [float(v) for v in text.replace(" ", "").split(",") if v != ""]
        except ValueError:
            raise InputError(f"intrinsics: expected numbers fx,fy,cx,cy[,k1,k2,p1,p2[,k3]], got {text!r}") from None
    else:
        vals = [float(v) for v in np.ravel(np.asarray(text, dtype=np.float64))]
    if len(vals) not in (4, 8, 9) or not np.isfinite(vals).all() or vals[0] <= 0 or vals[1] <= 0:
        raise InputError(f"intrinsics: expected 4, 8 or 9 finite numbers fx,fy,cx,cy[,k1,k2,p1,p2[,k3]] with fx, "
                         f"fy > 0 [px], got {text!r}")  # fmt: skip
    return np.array(vals + [0.0] * (9 - len(vals)))


def solve_corners(obs, camera):
    """:func:`kinhec.solvers.he_ml.he_ml` on an observation set's corners, the camera (intrinsics, view poses) given.

    ``obs`` a :class:`kinhec.observations.ObservationSet`, ``camera`` a
    :class:`kinhec.intrinsics.CameraCalibration` of its views; the pose pairs come from the camera's view
    poses, ``X`` and ``Y`` from the pixels (``pixels=``).  Returns the :class:`~kinhec.solvers.he_ml.HeMlResult`.
    """
    from kinhec.solvers import pair_model as pm
    from kinhec.solvers.he_ml import he_ml
    from kinhec.solvers.reprojection import PixelViews

    pixels = PixelViews(obs.points_3d, obs.points_2d, obs.image_size, obs.mode, camera.intrinsics)
    return he_ml(obs.T_base_ee, pm.camera_poses(camera.T_cam_target, obs.mode), pixels=pixels)


def calibrate_corners(path, *, intrinsics=None, setup: str | None = None, where: str | None = None) -> CalibrationResult:
    """``X`` and ``Y`` from an observation file of corners and robot poses (see the module docstring).

    Parameters
    ----------
    path : str, Path or ObservationSet
        Observation JSON (:func:`kinhec.observations.read_observations`), or the observations themselves
        (e.g. detected in images, :mod:`kinhec.calibrate.images`), named ``where`` in messages.
    intrinsics : str or array_like, optional
        Known ``fx, fy, cx, cy[, k1, k2, p1, p2[, k3]]`` [px]; estimated from the views when omitted.
    setup : {"eye_in_hand", "eye_to_hand"}, optional
        Must agree with the file's ``problem`` mode when given.

    Raises
    ------
    InputError
        A file that does not conform (named), a setup that contradicts it, bad intrinsics, fewer than
        3 views, views whose corners do not determine a camera.
    """
    from kinhec.intrinsics import calibrate_camera, pack_views
    from kinhec.observations import ObservationSet, read_observations
    from kinhec.solvers import pair_model as pm

    if isinstance(path, ObservationSet):
        obs, path = path, Path(where or "observations")
    else:
        path = Path(path)
        obs = read_observations(path)
    where = f"{path} ({obs.n_views} views)"
    if setup not in (None, obs.mode):
        raise InputError(f"setup: {path} holds {obs.mode} views, got --setup {setup}")
    if obs.n_views < 3:
        raise InputError(f"{where}: expected at least 3 views, got {obs.n_views}")
    k = None if intrinsics is None else parse_intrinsics(intrinsics)
    views = pack_views(obs.points_3d, obs.points_2d)
    try:
        cam = calibrate_camera(views, obs.image_size, intrinsics=k)
    except InputError as exc:
        raise InputError(f"{where}: the corners do not determine the camera: {exc}") from None
    A = obs.T_base_ee
    res = solve_corners(obs, cam)
    cov = res.cov[:12, :12]
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    X_std, Y_std = std[:6], std[6:12]
    inl = res.inliers
    report, warn = observability(A[inl], cov, X_std)
    report["n_inliers"] = int(inl.sum())
    report["pixel_std_px"] = float(res.info["pixel_std"])
    report["robot_std_rad_m"] = [res.noise["robot_rot_std_rad"], res.noise["robot_trans_std_m"]]
    n = obs.n_views
    n_out = int((~inl).sum())
    if n_out > 0.2 * n:
        warn.append(f"{n_out} of {n} views ({100 * n_out / n:.0f} %) are outliers")
    source = "given" if k is not None else "estimated from the views"
    notes = [
        f"intrinsics {source}: fx {cam.intrinsics[0]:.2f}, fy {cam.intrinsics[1]:.2f}, cx {cam.intrinsics[2]:.2f}, "
        f"cy {cam.intrinsics[3]:.2f} px; camera fit RMS {cam.rms_px:.3f} px with free view poses",
        f"X and Y from the corners with the robot's pose errors marginalised: pixel noise "
        f"{res.info['pixel_std']:.3f} px, robot errors {1e3 * res.noise['robot_rot_std_rad']:.3g} mrad / "
        f"{1e3 * res.noise['robot_trans_std_m']:.3g} mm (estimated); RMS {res.info['pixel_rms']:.3f} px",
        "views paired by order (one robot pose per view)",
    ]
    r = pm.residuals(cam.T_cam_target, pm.predicted_camera_poses(A, res.X, res.Y, obs.mode))
    residuals = {
        "t_s": np.arange(n, dtype=float),
        "rot_deg": np.degrees(np.linalg.norm(r[:, :3], axis=1)),
        "trans_mm": 1000 * np.linalg.norm(r[:, 3:], axis=1),
        "outlier": ~inl,
    }
    X_name, Y_name = _names(obs.mode)
    inputs = {"corners": str(path), "format": "observations", "intrinsics": [float(v) for v in cam.intrinsics],
              "intrinsics_source": "given" if k is not None else "estimated", "hand_pose": "base_T_ee",
              "eye_pose": "cam_T_target", "units": "m"}  # fmt: skip
    return CalibrationResult(
        setup=obs.mode, inputs=inputs, X=res.X, Y=res.Y, X_name=X_name, Y_name=Y_name, X_std=X_std, Y_std=Y_std, time_offset_s=None,
        time_offset_std_s=None, time_offset_peak_corr=None, scale=None, scale_std=None, n_pairs=n,
        outliers=np.flatnonzero(~inl).tolist(), observability=report, warnings=warn, notes=notes,
        residuals=residuals, offset_curve=None, init_solver="he_ml (corners)", cov=cov, where=where,
    )  # fmt: skip
