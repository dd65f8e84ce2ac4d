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

1. Wrong camera frames out.  A frame is compared with the rotation its two
   neighbours predict for its stamp (geodesic interpolation); a frame that
   alone is wrong (a random pose, a gross error, a pose flip) leaves the
   largest such residual of the three frames around it, far above the noise.
   Frames whose residual is a local maximum above both ``OUTLIER_FACTOR``
   times the lower quartile of all residuals (the noise level) and
   ``OUTLIER_SPAN_FRACTION`` of the rotation between their neighbours (what a
   stamp error of half a period would cause) are dropped, and the test is
   repeated on the frames kept until none is dropped (so that neighbouring
   wrong frames go too).  The test does not involve the robot, so it does not
   depend on the offset.  A single wrong frame would otherwise put two spikes
   of its error divided by the frame period into the camera speed, and these
   dominate a Pearson correlation.
2. Camera angular speed over a baseline of ``b`` kept frames,
   ``angle(R_k^T R_{k+b}) / (t_{k+b} - t_k)``, placed at the midpoints and
   resampled linearly onto a regular grid of step ``grid_dt_s``.  Pairs that a
   run of missing frames stretches beyond ``1.5 b`` periods plus one are left
   out, and so are the grid points in the holes they leave.  ``b`` starts at one
   frame, or more when the stamps jitter (the baseline then spans ten jitter
   standard deviations), and doubles while the stream holds at least
   ``MIN_WINDOWS`` baselines: a longer baseline averages out the pose noise of
   both streams (which dominates the frame-to-frame speed of a fast, noisy
   camera) and dilutes any wrong frame step 1 missed.
3. Robot angular speed on the same grid, shifted by every candidate lag, as a
   central difference ``angle(R(g - w/2)^T R(g + w/2)) / w`` of the
   interpolated robot poses with ``w = b`` median camera periods, so that both
   signals carry the same smoothing.
4. Normalised (Pearson) cross-correlation for every lag ``tau = j * grid_dt_s``
   in ``[-max_offset_s, max_offset_s]``, each over the samples where both
   signals exist (at least ``min_overlap`` of the camera samples), computed for
   all lags at once as sliding dot products (FFT).
5. Of the baselines, the one with the most significant peak is kept: Fisher's
   ``z`` of the peak correlation times the square root of the number of
   independent samples compared, counted in correlation lengths (the radius of
   curvature of the peak).  Smoothing raises the correlation, but once the
   baseline exceeds the time scale of the motion it also widens the peak and
   leaves fewer independent samples, which this measure charges for.
6. The lag of the largest correlation, refined by the vertex of the parabola
   through it and its two neighbours (sub-sample refinement).  ``peak_corr`` is
   the correlation at that lag: close to 1 for motion with structure, low
   when the angular speed carries no pattern to align (constant speed, noise
   only), so callers can reject such estimates.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError
from kinhec.solvers._common import DegenerateMotionWarning

__all__ = ["TimeOffsetEstimate", "estimate_time_offset"]

#: Multiple of the lower quartile of the midpoint residuals above which a camera frame may be wrong.
OUTLIER_FACTOR = 6.0
#: Fraction of the rotation between its two neighbours above which a camera frame's residual may be wrong
#: (a good frame reaches it only with a stamp error of half a frame period).
OUTLIER_SPAN_FRACTION = 0.25
#: Fewest baseline windows the camera stream must hold for a baseline to be tried.
MIN_WINDOWS = 20

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


def _midpoint_residuals(t: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Angle between each rotation and the one its two neighbours predict for its stamp [rad].

    Frame ``k`` is compared with the geodesic interpolation of ``R_{k-1}`` and ``R_{k+1}`` at ``t_k`` (the two
    end frames with the extrapolation of their two nearest neighbours).  On a smooth path the residual is
    measurement noise, the rotation over the stamp error, and a second-order term of the angular
    acceleration; a single wrong frame leaves a residual of about its error at its own place and about half
    of it at its neighbours'.  Returns the residuals and the rotation angles between the two neighbours.
    """
    R0 = np.concatenate([R[1:2], R[:-2], R[-3:-2]])
    R1 = np.concatenate([R[2:3], R[2:], R[-2:-1]])
    t0 = np.concatenate([t[1:2], t[:-2], t[-3:-2]])
    t1 = np.concatenate([t[2:3], t[2:], t[-2:-1]])
    s = (t - t0) / (t1 - t0)
    rel = se3.so3_log(np.swapaxes(R0, -1, -2) @ R1, check=False)
    pred = R0 @ se3.so3_exp(s[:, None] * rel)
    return _angles(pred, R), np.linalg.norm(rel, axis=-1)


def _isolated_outliers(t: np.ndarray, R: np.ndarray, passes: int = 10) -> np.ndarray:
    """Frames whose rotation disagrees with both neighbours while those agree with each other.

    A frame is rejected when its midpoint residual (:func:`_midpoint_residuals`) is the largest of the three
    around it and exceeds both

    * ``OUTLIER_FACTOR`` times the lower quartile of the residuals of the whole stream (the noise level:
      the lower quartile holds even when half the residuals are spoilt, each wrong frame spoiling three).
      For residuals of isotropic Gaussian noise alone (a Maxwell distribution, lower quartile 1.10 standard
      deviations per axis) the bound lies at 6.6 standard deviations, which a good frame exceeds with a
      chance of about 2e-9; wrong frames that lift the quartile towards the median raise it to 9.2;
    * ``OUTLIER_SPAN_FRACTION`` of the rotation between its two neighbours: the residual a good frame gets
      from a stamp error of half a frame period, or from a stretch of lost frames around it (the
      prediction over a longer gap is poorer in proportion).

    The test is repeated on the kept frames with the same noise bound (a wrong frame next to another one is
    found on the next pass), at most ``passes`` times and while more than five frames are left.
    """
    out = np.zeros(R.shape[0], dtype=bool)
    thr = None
    for _ in range(passes):
        idx = np.flatnonzero(~out)
        if idx.size <= 5:
            break
        r, span = _midpoint_residuals(t[idx], R[idx])
        if thr is None:
            thr = OUTLIER_FACTOR * float(np.quantile(r, 0.25))
        left = np.concatenate([[-np.inf], r[:-1]])
        right = np.concatenate([r[1:], [-np.inf]])
        bad = (r > thr) & (r > OUTLIER_SPAN_FRACTION * span) & (r >= left) & (r >= right)
        if not bad.any():
            break
        out[idx[bad]] = True
    return out


def _camera_speed(tk, Rk, b, period, h):
    """Camera angular speed over pairs ``b`` kept frames apart, on the grid ``t0 + h * (0 .. m-1)``.

    Returns ``(t0, sig, ok)``, ``ok`` false on the grid points inside a hole of the stream (a run of
    dropped or rejected frames longer than the pair spans allow), or ``None`` with fewer than two pairs.
    """
    span_max = 1.5 * b * period + period
    dt = tk[b:] - tk[:-b]
    keep = dt <= span_max  # pairs that a run of missing frames stretches are left out
    if keep.sum() < 2:
        return None
    w = (_angles(Rk[:-b], Rk[b:]) / dt)[keep]
    t_mid = (0.5 * (tk[:-b] + tk[b:]))[keep]
    m = int(np.floor((t_mid[-1] - t_mid[0]) / h)) + 1
    g = t_mid[0] + h * np.arange(m)
    i = np.clip(np.searchsorted(t_mid, g), 1, t_mid.size - 1)
    return t_mid[0], np.interp(g, t_mid, w), (t_mid[i] - t_mid[i - 1]) <= span_max


def _correlation_by_lag(sig_r, sig_c, cam_ok, min_overlap):
    """Pearson correlation of ``sig_c`` with every window of ``sig_r`` (NaN where ``sig_r`` is missing).

    Row ``j`` compares the camera with the robot ``j`` grid steps earlier, counted from the far end, so that
    with ``sig_r`` on ``t0 + h * (-J .. m + J - 1)`` row ``j`` is the lag ``h * (j - J)``.  Every sum over
    the samples both signals have is a sliding dot product of the masked signals.  Returns ``(corr, n)``.
    """
    vr = np.isfinite(sig_r)
    x = np.where(vr, sig_r, 0.0)
    y = np.where(cam_ok, sig_c, 0.0)
    # sliding dot products sum_i a[i + k] v[i] (k = 0 .. 2J) by FFT; no wrap-around reaches them since the
    # transform is at least as long as a
    size = 1 << int(np.ceil(np.log2(sig_r.size)))
    A = np.fft.rfft(np.stack([vr.astype(float), x, x * x]), size)
    V = np.conj(np.fft.rfft(np.stack([cam_ok.astype(float), y, y * y]), size))
    pairs = np.fft.irfft(A[[0, 1, 2, 0, 0, 1]] * V[[0, 0, 0, 1, 2, 1]], size)[:, : sig_r.size - sig_c.size + 1]
    n, sx, sxx, sy, syy, sxy = pairs[:, ::-1]
    n = np.rint(n)
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = n * sxy - sx * sy
        var = (n * sxx - sx * sx) * (n * syy - sy * sy)
        corr = cov / np.sqrt(var)
    tiny = 1e-12 * np.maximum(n * sxx, 1e-300) * np.maximum(n * syy, 1e-300)
    corr[(n < max(min_overlap * cam_ok.sum(), 3)) | ~(var > tiny)] = np.nan
    return corr, n


def _significance(corr, n, h, window):
    """Fisher ``z`` of the correlation peak times the square root of the independent samples behind it.

    The samples are counted in correlation lengths: the radius of curvature of the correlation peak
    (``window``, the speed baseline, when the peak has no curvature to measure), since neighbouring speed
    samples within it carry the same information.
    """
    j = int(np.nanargmax(corr))
    tau = window
    if 0 < j < corr.size - 1 and np.isfinite(corr[j - 1 : j + 2]).all():
        den = corr[j - 1] - 2.0 * corr[j] + corr[j + 1]
        if den < 0 and corr[j] > 0:  # (a peak at or below zero correlation has no radius to measure)
            tau = max(float(np.sqrt(corr[j] / -den)) * h, h)
    n_eff = n[j] * h / tau
    return float(np.arctanh(min(corr[j], 1.0 - 1e-12))) * np.sqrt(max(n_eff - 3.0, 0.0))


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
        (either works; only relative rotation angles are used).  Isolated wrong
        frames are found and left out (module docstring, step 1).
    max_offset_s : float
        Largest offset magnitude searched [s].
    grid_dt_s : float, optional
        Step of the common grid and of the lags [s]; default a quarter of the
        median camera period.
    min_overlap : float
        Fewest samples a lag must compare, as a fraction of the camera grid
        points that carry a camera speed.

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
    J = int(np.floor(max_offset_s / h))
    lags = h * np.arange(-J, J + 1)

    # 1. isolated wrong camera frames out: they become drops
    Rc = Tc[:, :3, :3]
    keep = ~_isolated_outliers(tc, Rc) if tc.size > 5 else np.ones(tc.size, dtype=bool)
    tk, Rk = tc[keep], Rc[keep]

    # 2. camera speeds over baselines b0, 2 b0, 4 b0, ... frames, and the robot poses they need, in one go
    b0 = _baseline_frames(tc, period)
    b_max = max(b0, (tk.size - 1) // MIN_WINDOWS)
    plans, starts, ends = [], [], []
    b = b0
    while b <= b_max:
        cam = _camera_speed(tk, Rk, b, period, h)
        if cam is not None:
            t0, sig_c, cam_ok = cam
            half = 0.5 * b * period
            r_t = t0 + h * np.arange(-J, sig_c.size + J)
            valid_r = (r_t - half >= tr[0]) & (r_t + half <= tr[-1])
            q = r_t[valid_r]
            plans.append((b, sig_c, cam_ok, valid_r, q.size))
            starts.append(q - half)
            ends.append(q + half)
        b *= 2
    n_q = sum(p[-1] for p in plans)
    if n_q == 0:
        raise InputError(
            f"robot_t, camera_t: expected streams that overlap within max_offset_s = {max_offset_s:g} s, "
            f"got robot [{tr[0]:.6g}, {tr[-1]:.6g}] s and camera [{tc[0]:.6g}, {tc[-1]:.6g}] s"
        )
    turned = se3.interpolated_rotation_angles(tr, Tr[:, :3, :3], np.concatenate(starts), np.concatenate(ends))

    # 3. correlation for every lag and baseline; the baseline with the most significant peak is kept
    best = None
    at = 0
    for b, sig_c, cam_ok, valid_r, nq in plans:
        sig_r = np.full(valid_r.shape, np.nan)
        sig_r[valid_r] = turned[at : at + nq] / (b * period)
        at += nq
        corr_b, n_b = _correlation_by_lag(sig_r, sig_c, cam_ok, min_overlap)
        if np.isfinite(corr_b).any():
            z = _significance(corr_b, n_b, h, b * period)
            if best is None or z > best[0]:
                best = (z, corr_b)

    if best is None:
        warnings.warn(
            "estimate_time_offset: expected angular speeds that vary in time, got constant signals or "
            "too little overlap; returning offset 0 with peak_corr 0",
            DegenerateMotionWarning,
            stacklevel=2,
        )
        return TimeOffsetEstimate(0.0, 0.0, False, lags, np.full(lags.shape, np.nan), h)
    corr = best[1]

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
