"""Calibration from 3D points: a depth camera's measurements of the target and the robot pose of each view.

``kinhec calibrate --points FILE`` reads a point observation file
(:mod:`kinhec.synth.point_observations`: per view the measured points in the
camera frame, the target's points they measure, and ``base_se3_gripper``).  A
structured-light, stereo or time-of-flight camera measures the target's points
in 3D, so there are no intrinsics to estimate:

1. **Target poses.** Every view's target pose ``T_cam_target`` by a weighted
   rigid alignment of the model points to the measured ones
   (:func:`kinhec.solvers.he_ml_stages.points.rigid_alignment`, weights from the
   depth noise).
2. **Start.** :func:`kinhec.solvers.he_ml.he_ml` on those poses and the
   flange poses (no scale: the points are metric).
3. **Points.** :func:`kinhec.solvers.he_ml_stages.points.points_ml`: ``X`` and
   ``Y`` (nothing else) maximising the likelihood of every measured point under
   the depth camera's noise (along the ray ``a z^2``, across it ``b z``,
   :mod:`kinhec.models.depth_noise`), ``a`` and ``b`` given (``point_noise``)
   or estimated from the residuals.  The standard deviations are the inverse
   Fisher information's at those levels.

The views are paired with their robot poses by the file (one pose per view);
the flange poses are taken as measured (their error is not modelled here).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kinhec.calibrate import scale as sc
from kinhec.calibrate.frames import names as frame_names
from kinhec.calibrate.observability import observability
from kinhec.calibrate.result import CalibrationResult
from kinhec.calibrate.option_values import point_noise_pair
from kinhec.models.depth_noise import point_covariance
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml import he_ml
from kinhec.solvers.he_ml_stages import points as hp
from kinhec.synth.point_observations import PointObservationSet, read_point_observations
from kinhec.util.blas import single_threaded_blas
from kinhec.util.errors import InputError
from kinhec.vision.targets import parse_target

__all__ = ["calibrate_points", "model_points"]


def model_points(obs: PointObservationSet, target=None, where: str = "points") -> list:
    """The model points (P_i, 3) [m] of every view: its ``points_3d``, else the target's (``target`` or the file's
    spec) by the view's ``ids`` or all of them in id order."""
    spec = target if target is not None else obs.target
    tgt = None if spec is None else parse_target(spec)
    if target is not None and obs.target is not None and tgt.spec != parse_target(obs.target).spec:
        raise InputError(f"target: {where} names the target {obs.target}, got --target {target}")
    out = []
    for i, m in enumerate(obs.points_cam):
        given = obs.points_3d[i] if i < len(obs.points_3d) else None
        if given is not None:
            out.append(np.asarray(given, dtype=np.float64))
            continue
        if tgt is None:
            raise InputError(f"{where}: view {i}: expected its model points (points_3d) or the target (the file's "
                             f"\"target\" or --target chessboard:9x6:0.025, ...), got neither")
        pts = tgt.points_m
        ids = obs.ids[i] if i < len(obs.ids) else None
        if ids is None:
            if len(m) != len(pts):
                raise InputError(f"{where}: view {i}: expected {len(pts)} points (every point of {tgt.spec}) or their "
                                 f"ids, got {len(m)} points and no ids")
            out.append(pts.copy())
        else:
            ids = np.asarray(ids, dtype=int)
            if ids.size and ids.max() >= len(pts):
                raise InputError(f"{where}: view {i}: expected point ids below {len(pts)} ({tgt.spec}), got "
                                 f"{int(ids.max())}")
            if np.unique(ids).size != ids.size:
                raise InputError(f"{where}: view {i}: expected each point id once, got repeated ids")
            out.append(pts[ids])
    return out


def calibrate_points(path, *, target=None, setup: str | None = None, point_noise=None,
                     where: str | None = None) -> CalibrationResult:  # fmt: skip
    """``X`` and ``Y`` from a point observation file (see the module docstring).

    Parameters
    ----------
    path : str, Path or PointObservationSet
        The file, or the observations themselves (named ``where`` in messages).
    target : str, optional
        The target's spec (``chessboard:9x6:0.025``, ...) when the file's views give ids or all points but the file
        names no target (or the same one).
    setup : {"eye_in_hand", "eye_to_hand"}, optional
        Must agree with the file's ``mode`` when given.
    point_noise : str or (float, float), optional
        ``a, b`` of the depth noise (along the ray ``a z^2`` [m], across it ``b z`` [m]); estimated when omitted.

    Raises
    ------
    InputError, DatasetFormatError
        A file that does not conform (named, with the view), fewer than 3 views, a view with fewer than 3 points,
        a point at zero or negative depth, collinear model points, a setup that contradicts the file.
    """
    with single_threaded_blas():
        return _calibrate_points(path, target=target, setup=setup, point_noise=point_noise, where=where)


def _calibrate_points(path, *, target, setup, point_noise, where) -> CalibrationResult:
    if isinstance(path, PointObservationSet):
        obs, path = path, Path(where or "points")
    else:
        path = Path(path)
        obs = read_point_observations(path)
    noise = point_noise_pair(point_noise)
    if setup not in (None, obs.mode):
        raise InputError(f"setup: {path} holds {obs.mode} views, got --setup {setup}")
    if obs.n_views < 3:
        raise InputError(f"{path}: expected at least 3 views, got {obs.n_views}")
    try:
        views = hp.pack_points(model_points(obs, target, str(path)), obs.points_cam)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    A, mode = obs.T_base_ee, obs.mode
    # 1. every view's target pose: rigid alignment weighted by the inverse of each point's mean variance
    w0 = 1.0 / np.trace(point_covariance(views.measured, noise or hp.NOISE_START), axis1=-2, axis2=-1)
    try:
        C = hp.rigid_alignment(views, w0)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    # 2. the start: he_ml on the pose pairs (B = T_target_cam eye-in-hand, T_cam_marker eye-to-hand)
    B = pm.camera_poses(C, mode)  # its own inverse's form: inv(C) eye-in-hand, C eye-to-hand
    start = he_ml(A, B, configuration=mode, scale=False)
    # 3. X and Y from the points
    fit = hp.points_ml(A, start.X, start.Y, mode, views, noise=noise)
    X, Y = fit.X, fit.Y
    # covariance with the translations in the parent frames (as the other paths report it)
    T = np.eye(12)
    T[3:6, 3:6] = X[:3, :3]
    T[9:12, 9:12] = Y[:3, :3]
    cov = T @ fit.cov @ T.T
    std = np.sqrt(np.maximum(np.diag(cov), 0.0))
    X_std, Y_std = std[:6], std[6:12]
    report, warn = observability(A, cov, X_std)
    a, b = fit.noise
    report["n_inliers"] = obs.n_views
    report["n_points"] = fit.n_points
    report["point_noise"] = {"a_per_m": a, "b_rad": b, "estimated": fit.estimate,
                             "a_std": None if fit.estimate == "none" else fit.noise_std[0],
                             "b_std": None if fit.estimate == "none" else fit.noise_std[1],
                             "dof_along_ray": fit.dof[0], "dof_across_ray": fit.dof[1], "chi2": fit.chi2}  # fmt: skip
    scale_rep, _, _ = sc.describe_fixed()
    report["scale"] = scale_rep
    if noise is not None:  # given levels: the residuals say whether they fit
        dof = fit.dof[0] + fit.dof[1]
        if fit.chi2 > dof + 4.0 * np.sqrt(2.0 * dof):
            warn.append(f"the points scatter more than --point-noise {noise[0]:g},{noise[1]:g} allows (chi-square "
                        f"{fit.chi2:.0f} for {dof:.0f} degrees of freedom): sigma is too small; omit --point-noise "
                        "to estimate the noise")  # fmt: skip
    gated = np.flatnonzero(~np.asarray(start.inliers, dtype=bool))
    if gated.size:
        warn.append(f"views {', '.join(str(int(i)) for i in gated[:10])} disagree with the others' target poses "
                    "(the pose solution's gate): check their points and robot poses; they are kept in the fit")
    zs = views.measured[..., 2][views.mask]
    notes = [
        f"X and Y from {fit.n_points} points of {obs.n_views} views (camera frame, depths {zs.min():.3g} to "
        f"{zs.max():.3g} m), started from he_ml on the views' rigid-alignment poses; {fit.n_iter} iterations",
        f"point noise {'given' if fit.estimate == 'none' else 'estimated'}: along the ray {1e3 * a:.3g} mm x (z/m)^2, "
        f"across it {1e3 * b:.3g} mm x z/m; RMS point residual {fit.rms_mm:.3g} mm",
        "views paired with their robot poses by the file (one pose per view); the robot poses taken as measured",
    ]
    r = pm.residuals(C, pm.predicted_camera_poses(A, X, Y, mode))
    residuals = {
        "t_s": np.arange(obs.n_views, dtype=float),
        "rot_deg": np.degrees(np.linalg.norm(r[:, :3], axis=1)),
        "trans_mm": 1000 * np.linalg.norm(r[:, 3:], axis=1),
        "outlier": np.zeros(obs.n_views, dtype=bool),
        "point_rms_mm": fit.view_rms_mm,
    }
    X_name, Y_name = frame_names(mode)
    inputs = {"points": str(path), "format": "point_observations", "hand_pose": "base_T_ee",
              "eye_pose": "cam_points", "units": "m", "target": target or obs.target,
              "point_noise": [a, b], "point_noise_source": "given" if fit.estimate == "none" else "estimated"}
    return CalibrationResult(
        setup=mode, inputs=inputs, X=X, Y=Y, X_name=X_name, Y_name=Y_name, X_std=X_std, Y_std=Y_std,
        time_offset_s=None, time_offset_std_s=None, time_offset_peak_corr=None, scale=None, scale_std=None,
        n_pairs=obs.n_views, outliers=[], observability=report, warnings=warn, notes=notes, residuals=residuals,
        offset_curve=None, init_solver="he_ml (points)", cov=cov, where=f"{path} ({obs.n_views} views)",
    )  # fmt: skip
