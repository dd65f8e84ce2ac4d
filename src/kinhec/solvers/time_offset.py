"""Clock offset between the robot and the camera stream from their angular speeds.

Reference
---------
F. Furrer, M. Fehr, T. Novkovic, H. Sommer, I. Gilitschenski and R. Siegwart,
"Evaluation of combined time-offset estimation and hand-eye calibration on
robotic datasets," *Field and Service Robotics (FSR 2017)*, Springer
Proceedings in Advanced Robotics 5, 2018. doi:10.1007/978-3-319-67361-5_10

Principle.  The flange and the camera (eye-in-hand) or the marker
(eye-to-hand) are rigidly linked, so at every instant they turn with the same
angular speed ``|omega(t)|``, whatever ``X`` and ``Y`` are, and the angle of a
relative rotation does not change when a pose is inverted.  The angular-speed
signals of the two streams are therefore copies of each other shifted by the
clock offset.

Sign convention (the dataset's): a camera frame captured at true robot-clock
time ``t_gt`` is stamped ``t = t_gt + offset``; to pair it with the robot
stream, sample the robot at ``t - offset``.  Hence
``omega_cam(t) = omega_robot(t - offset)``.

Procedure implemented:

1. Camera angular speed between consecutive frames,
   ``angle(R_k^T R_{k+1}) / (t_{k+1} - t_k)``, placed at the midpoints and
   resampled linearly onto a regular grid of step ``grid_dt_s`` (frame drops
   and jitter only change the local spacing).
2. Robot angular speed on the same grid, shifted by every candidate lag, as a
   central difference ``angle(R(g - w/2)^T R(g + w/2)) / w`` of the
   interpolated robot poses with ``w`` the median camera period, so that both
   signals carry the same smoothing.
3. Normalised (Pearson) cross-correlation for every lag ``tau = j * grid_dt_s``
   in ``[-max_offset_s, max_offset_s]``, each over the samples where both
   signals exist (at least ``min_overlap`` of the camera span).
4. The lag of the largest correlation, refined by the vertex of the parabola
   through it and its two neighbours (sub-sample refinement).  ``peak_corr`` is
   the correlation at that lag: close to 1 for motion with structure, low
   when the angular speed carries no pattern to align (constant speed, noise
   only), so callers can reject such estimates.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from kinhec import se3
from kinhec.errors import InputError
from kinhec.solvers._common import DegenerateMotionWarning

__all__ = ["TimeOffsetEstimate", "estimate_time_offset"]

CITATION = (
    "F. Furrer, M. Fehr, T. Novkovic, H. Sommer, I. Gilitschenski and R. Siegwart, \"Evaluation of "
    'combined time-offset estimation and hand-eye calibration on robotic datasets," FSR 2017, '
    "Springer Proceedings in Advanced Robotics 5, 2018. doi:10.1007/978-3-319-67361-5_10"
)


@dataclass(frozen=True)
class TimeOffsetEstimate:
    """Result of :func:`estimate_time_offset`.

    Attributes
    ----------
    offset_s : float
        Estimated clock offset [s]: camera stamp = robot time + ``offset_s``.
    peak_corr : float
        Normalised cross-correlation at the peak, in [-1, 1] (0 when no lag
        could be evaluated).
    at_boundary : bool
        The peak lies on the edge of the searched lag range (the true offset
        may lie outside it; no sub-sample refinement was applied).
    lags_s : ndarray, shape (L,)
        The lags searched [s].
    corr : ndarray, shape (L,)
        The correlation at every lag (NaN where the overlap was too short).
    grid_dt_s : float
        Step of the common resampling grid [s].
    """

    offset_s: float
    peak_corr: float
    at_boundary: bool
    lags_s: np.ndarray
    corr: np.ndarray
    grid_dt_s: float


def _angles(R1: np.ndarray, R2: np.ndarray) -> np.ndarray:
    return se3.rotation_angle(np.swapaxes(R1, -1, -2) @ R2, check=False)


def _check_stream(t, T, tname: str, Tname: str):
    t = se3.check_timestamps(t, tname)
    T = se3.check_transforms(T, Tname)
    if T.ndim != 3 or T.shape[0] != t.shape[0]:
        raise InputError(f"{Tname}: expected shape ({t.shape[0]}, 4, 4) to match {tname}, got shape {T.shape}")
    if t.shape[0] < 3:
        raise InputError(f"{tname}: expected at least 3 samples, got {t.shape[0]}")
    return t, T


def _baseline_frames(tc: np.ndarray, period: float) -> int:
    """Frames between the two poses of a camera angular-speed sample: 1, or more when the stamps jitter.

    The stamp noise is estimated robustly from the spacing residuals (frame
    drops are whole periods and do not count); the baseline spans at least
    ten of its standard deviations (the speed then errs by about 15 % at most), and at
    most a tenth of the stream.
    """
    d = np.diff(tc)
    resid = d - period * np.maximum(np.round(d / period), 1.0)
    sigma = 1.4826 * float(np.median(np.abs(resid - np.median(resid)))) / np.sqrt(2.0)
    if not (np.isfinite(sigma) and sigma > 0 and period > 0):
        return 1
    return int(np.clip(np.ceil(10.0 * sigma / period), 1, max(1, (tc.size - 1) // 10)))


def _camera_in_stamp_order(camera_t, camera_poses):
    """Camera samples sorted by stamp, repeated stamps dropped (first kept).

    With ``t = t_gt + offset + jitter`` the jitter can put a stamp before the
    previous frame's; the stamps are then taken in their own order.
    """
    t = np.asarray(camera_t, dtype=np.float64) if not isinstance(camera_t, np.ndarray) else camera_t
    T = np.asarray(camera_poses)
    if t.ndim != 1 or T.ndim != 3 or T.shape[0] != t.shape[0] or not np.isfinite(t).all() or t.size < 2:
        return camera_t, camera_poses  # _check_stream names the problem
    if (np.diff(t) > 0).all():
        return t, T
    order = np.argsort(t, kind="stable")
    t, T = t[order], T[order]
    keep = np.concatenate([[True], np.diff(t) > 0])
    return t[keep], T[keep]


def estimate_time_offset(
    robot_t,
    robot_poses,
    camera_t,
    camera_poses,
    *,
    max_offset_s: float = 0.5,
    grid_dt_s: float | None = None,
    min_overlap: float = 0.5,
) -> TimeOffsetEstimate:
    """Estimate the camera-to-robot clock offset by cross-correlating angular speeds.

    Parameters
    ----------
    robot_t : array_like, shape (Nr,)
        Robot-clock time stamps [s], strictly increasing (any rate, e.g. up to 500 Hz).
    robot_poses : array_like, shape (Nr, 4, 4)
        Flange poses ``T_base_ee`` at ``robot_t``.
    camera_t : array_like, shape (Nc,)
        Camera-clock time stamps [s] (jitter and drops allowed; stamps that jitter puts
        out of order are taken in stamp order, a repeated stamp once).
    camera_poses : array_like, shape (Nc, 4, 4)
        Camera measurements at ``camera_t``: ``T_cam_target`` or its inverse
        (either works; only relative rotation angles are used).
    max_offset_s : float
        Largest offset magnitude searched [s].
    grid_dt_s : float, optional
        Step of the common grid and of the lags [s]; default a quarter of the
        median camera period.
    min_overlap : float
        Fewest samples (as a fraction of the camera grid) a lag must compare.

    Returns
    -------
    TimeOffsetEstimate
        ``offset_s`` with the convention camera stamp ``t = t_gt + offset_s``
        (pair a camera frame with the robot pose at ``t - offset_s``), and the
        confidence ``peak_corr``.

    Raises
    ------
    InputError
        Bad time stamps or poses, fewer than 3 samples in a stream, bad
        settings, or streams that do not overlap within ``max_offset_s``.
    """
    tr, Tr = _check_stream(robot_t, robot_poses, "robot_t", "robot_poses")
    tc, Tc = _camera_in_stamp_order(camera_t, camera_poses)
    tc, Tc = _check_stream(tc, Tc, "camera_t", "camera_poses")
    if not (np.isfinite(max_offset_s) and max_offset_s > 0):
        raise InputError(f"max_offset_s: expected a positive finite number, got {max_offset_s!r}")
    if not (0.0 < min_overlap <= 1.0):
        raise InputError(f"min_overlap: expected a fraction in (0, 1], got {min_overlap!r}")
    period = float(np.median(np.diff(tc)))
    h = period / 4.0 if grid_dt_s is None else float(grid_dt_s)
    if not (np.isfinite(h) and h > 0):
        raise InputError(f"grid_dt_s: expected a positive finite number, got {grid_dt_s!r}")

    # 1. camera angular speed at the midpoints, resampled onto the grid; over a baseline of b frames when the
    #    stamps jitter (b x period well above the jitter, so the speed is not dominated by stamp noise)
    b = _baseline_frames(tc, period)
    Rc = Tc[:, :3, :3]
    w_c = _angles(Rc[:-b], Rc[b:]) / (tc[b:] - tc[:-b])
    t_mid = 0.5 * (tc[:-b] + tc[b:])
    m = int(np.floor((t_mid[-1] - t_mid[0]) / h)) + 1
    g = t_mid[0] + h * np.arange(m)
    sig_c = np.interp(g, t_mid, w_c)

    # 2. robot angular speed on the grid extended by the lag range
    J = int(np.floor(max_offset_s / h))
    k = np.arange(-J, m + J)
    r_t = t_mid[0] + h * k
    half = 0.5 * b * period
    valid_r = (r_t - half >= tr[0]) & (r_t + half <= tr[-1])
    if not valid_r.any():
        raise InputError(
            f"robot_t, camera_t: expected streams that overlap within max_offset_s = {max_offset_s:g} s, "
            f"got robot [{tr[0]:.6g}, {tr[-1]:.6g}] s and camera [{tc[0]:.6g}, {tc[-1]:.6g}] s"
        )
    sig_r = np.full(r_t.shape, np.nan)
    q = r_t[valid_r]
    P = se3.interpolate_poses(tr, Tr, np.concatenate([q - half, q + half]), out_of_range="clip")
    sig_r[valid_r] = _angles(P[: q.size, :3, :3], P[q.size :, :3, :3]) / (2.0 * half)

    # 3. normalised cross-correlation for every lag: camera g_m vs robot g_m - tau_j
    lags = h * np.arange(-J, J + 1)
    win = np.lib.stride_tricks.sliding_window_view(sig_r, m)[::-1]  # row j: robot at g - lags[j]
    valid = np.isfinite(win)
    x = np.where(valid, win, 0.0)
    y = np.where(valid, sig_c[None, :], 0.0)
    n = valid.sum(axis=1).astype(float)
    sx, sy = x.sum(1), y.sum(1)
    sxx, syy, sxy = (x * x).sum(1), (y * y).sum(1), (x * y).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = n * sxy - sx * sy
        var = (n * sxx - sx * sx) * (n * syy - sy * sy)
        corr = cov / np.sqrt(var)
    tiny = 1e-12 * np.maximum(n * sxx, 1e-300) * np.maximum(n * syy, 1e-300)
    corr[(n < max(min_overlap * m, 3)) | ~(var > tiny)] = np.nan

    if not np.isfinite(corr).any():
        warnings.warn(
            "estimate_time_offset: expected angular speeds that vary in time, got constant signals or "
            "too little overlap; returning offset 0 with peak_corr 0",
            DegenerateMotionWarning,
            stacklevel=2,
        )
        return TimeOffsetEstimate(0.0, 0.0, False, lags, corr, h)

    # 4. peak and parabolic sub-sample refinement
    j = int(np.nanargmax(corr))
    peak = float(corr[j])
    offset = float(lags[j])
    at_boundary = j == 0 or j == lags.size - 1
    if not at_boundary and np.isfinite(corr[j - 1]) and np.isfinite(corr[j + 1]):
        c0, c1, c2 = corr[j - 1], corr[j], corr[j + 1]
        den = c0 - 2.0 * c1 + c2
        if den < 0:
            offset += float(np.clip(0.5 * (c0 - c2) / den, -0.5, 0.5)) * h
    return TimeOffsetEstimate(offset, float(np.clip(peak, -1.0, 1.0)), bool(at_boundary), lags, corr, h)
