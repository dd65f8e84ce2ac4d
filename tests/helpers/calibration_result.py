"""A calibration result with the keys of ``kinhec calibrate --json``, computed from a generated sequence (for the
report pages' tests)."""

from __future__ import annotations

import numpy as np

import kinhec
from kinhec import solvers
from kinhec.geometry import se3
from kinhec.solvers._common import axis_scatter_lambda2


def _mean_pose(T: np.ndarray) -> np.ndarray:
    """Chordal mean of poses ``(N, 4, 4)``: rotation projected onto SO(3), translation averaged."""
    U, _, Vt = np.linalg.svd(T[:, :3, :3].sum(axis=0))
    R = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    return se3.transform_from_rotation_translation(R, T[:, :3, 3].mean(axis=0))


def calibration_result(seq, rng: np.random.Generator, *, estimate_offset: bool, n_boot: int = 30) -> dict:
    """A calibration result following the contract of ``kinhec calibrate --json``, computed from ``seq``.

    Clock offset from the angular speeds (when ``estimate_offset``), ``X`` by RANSAC Park-Martin on the
    keyframe motions, ``Y`` as the chordal mean of ``A_i X inv(B_i)``, per-pair residuals of
    ``A_i X = Y B_i`` (outliers: beyond five times the median residual), and 1-sigma uncertainties by
    bootstrapping the inlier motions.  Eye-in-hand sequences only.
    """
    assert seq.configuration == "eye_in_hand"
    offset_curve, offset, offset_std = None, None, None
    if estimate_offset:
        est = solvers.estimate_time_offset(seq.robot.t, seq.robot.T_base_ee_meas, seq.camera.t[seq.camera.has_measurement],
                                           seq.camera.T_cam_target_meas[seq.camera.has_measurement])  # fmt: skip
        offset, offset_std = float(est.offset_s), float(est.grid_dt_s) / np.sqrt(12.0)
        ok = np.isfinite(est.corr)
        offset_curve = {"offset_s": est.lags_s[ok].tolist(), "cost": (1.0 - est.corr[ok]).tolist()}
    A, B = seq.axxb_motions(time_offset=offset)
    rr = solvers.ransac_axxb(A, B, rng)
    X = rr.X
    A_abs, B_abs, idx = seq.axyb_poses(time_offset=offset, return_index=True)
    Y = _mean_pose(A_abs @ X @ se3.invert_transform(B_abs))
    rot_deg, trans_mm = se3.pose_error(A_abs @ X, Y @ B_abs)
    outlier = (rot_deg > 5.0 * np.median(rot_deg)) | (trans_mm > 5.0 * np.median(trans_mm))
    inl = np.flatnonzero(rr.inliers)
    boots = []
    for _ in range(n_boot):
        pick = rng.choice(inl, size=inl.size, replace=True)
        Xb = solvers.park_martin(A[pick], B[pick])
        d = se3.invert_transform(X) @ Xb
        boots.append(np.concatenate([se3.so3_log(d[:3, :3]), Xb[:3, 3] - X[:3, 3]]))
    X_std = np.std(boots, axis=0, ddof=1)
    w = se3.so3_log(A[:, :3, :3])
    rot_range = float(np.degrees(np.linalg.norm(w, axis=1).max()))
    trans_range = float(np.ptp(A_abs[:, :3, 3], axis=0).max())
    M = np.vstack([np.eye(3) - a[:3, :3] for a in A])
    sv = np.linalg.svd(M, compute_uv=False)
    lam2 = axis_scatter_lambda2(w)
    determined = lam2 > solvers.NEAR_DEGENERATE_LAMBDA2
    warnings = [] if determined else ["the rotation axes of the motions are nearly parallel: X is not fully determined"]
    if outlier.any():
        warnings.append(f"{int(outlier.sum())} pairs have residuals beyond five times the median and are marked as outliers")
    verdict = (f"X is determined to about {np.degrees(np.linalg.norm(X_std[:3])):.2g} deg and "
               f"{1e3 * np.linalg.norm(X_std[3:]):.2g} mm (1 sigma) from {len(idx)} pairs"
               + (f"; camera stamps read the robot time plus {1e3 * offset:.1f} ms" if offset is not None else "")
               + ("." if determined else ", but the motion does not determine it well."))  # fmt: skip
    q_x = se3.quaternion_from_matrix(X[:3, :3])
    q_y = se3.quaternion_from_matrix(Y[:3, :3])
    return {
        "kinhec_version": kinhec.__version__,
        "setup": "eye_in_hand",
        "inputs": {"hand": f"{seq.sequence_id}/robot", "eye": [f"{seq.sequence_id}/camera"], "format": "tum",
                   "hand_pose": "base_T_ee", "eye_pose": "cam_T_target", "units": "m"},  # fmt: skip
        "X": X.tolist(), "X_name": "T_ee_cam",
        "X_quat_xyzw": [q_x[1], q_x[2], q_x[3], q_x[0]], "X_t_m": X[:3, 3].tolist(),
        "Y": Y.tolist(), "Y_name": "T_base_target",
        "Y_quat_xyzw": [q_y[1], q_y[2], q_y[3], q_y[0]], "Y_t_m": Y[:3, 3].tolist(),
        "time_offset_s": offset, "time_offset_std_s": offset_std,
        "scale": None, "scale_std": None,
        "X_std": X_std.tolist(), "Y_std": None,
        "n_pairs": int(len(idx)),
        "outliers": np.flatnonzero(outlier).tolist(),
        "observability": {"lambda2": lam2, "rot_range_deg": rot_range, "trans_range_m": trans_range,
                          "condition": float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf"), "determined": bool(determined)},
        "warnings": warnings,
        "verdict": verdict,
        "residuals": {"t_s": seq.camera.t[idx].tolist(), "rot_deg": rot_deg.tolist(), "trans_mm": trans_mm.tolist(),
                      "outlier": outlier.tolist()},  # fmt: skip
        "offset_curve": offset_curve,
        "rig": None,
    }  # fmt: skip
