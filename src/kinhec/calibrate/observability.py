"""Does the recorded motion determine ``X``?  Rotation-axis scatter, ranges, conditioning.

``lambda2``
    Second eigenvalue of the angle-weighted scatter of the rotation vectors
    ``log(R_mean^T R_A,i)`` of the inlying hand poses about their chordal mean
    (:func:`kinhec.solvers._common.axis_scatter_lambda2`): 0 when every rotation
    is about one axis (then the translation of ``X`` along it and the rotation
    about it are not determined), 1/3 for isotropic axes.
``lambda2_noise``
    The ``lambda2`` the hand's rotation noise alone would give a motion about
    one axis: ``N sigma^2 / sum_i |w_i|^2`` for ``N`` rotation vectors ``w_i``
    whose components each carry noise of variance ``sigma^2`` (taken from the
    fit's rotation residuals, which hold the eye's noise too: an upper bound).
    A second axis whose scatter is not well above it is noise, not motion: the
    fit then determines the rotation of ``X`` about it from the noise, and a
    linearised standard deviation of a degree went with an ``X`` 17 deg off on
    a generated recording (``lambda2`` 6.8e-4 against 7.2e-4 from noise).
``rot_range_deg``, ``trans_range_m``
    Largest rotation angle and largest distance between two hand poses.
``condition``
    Condition number of the correlation matrix of the estimated unknowns
    (unit-free; large when two unknowns trade off against each other).
``autocorrelation_time``, ``effective_pairs``
    The longest integrated autocorrelation time of a residual component (in
    pairs, :mod:`kinhec.calibrate.uncertainty`) and the number of pairs over
    it: how many independent stretches of data there are.
``determined``
    ``lambda2`` at least :data:`MIN_LAMBDA2` and :data:`NOISE_LAMBDA2_RATIO` times ``lambda2_noise``, enough pairs left over the fit to
    estimate the noise levels (:data:`MIN_NOISE_DOF`), a rotation range of at least
    :data:`MIN_ROT_RANGE_DEG`, standard deviations of ``X`` below
    :data:`MAX_X_STD_DEG` / :data:`MAX_X_STD_M`, and residuals that do not
    drift for a monocular (visual-odometry) stream: not (at least
    :data:`MIN_DRIFT_PAIRS` pairs, an autocorrelation time above
    :data:`MIN_DRIFT_TIME` pairs and fewer than :data:`MIN_EFFECTIVE_PAIRS`
    effective pairs; ``drift`` in the report).  The random walk of
    odometry is partly absorbed by ``X`` and ``Y`` and does not show in the
    residuals; the inflation for correlated residuals then falls short of
    the true error (on kinhec's generated visual-odometry sequences with
    fewer than 7 effective pairs by factors of 3 to 40 in variance, while
    those with 10 or more stayed within a factor 2.5), and an answer whose
    error bars do not hold is refused.  Metric streams whose residuals
    correlate as long (the pose-dependent errors of a robot or of PnP along a
    path) keep their inflated error bars, flagged ``drift``.
"""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3
from kinhec.solvers import _common as c

__all__ = ["observability", "axis_scatter", "MIN_LAMBDA2", "NOISE_LAMBDA2_RATIO", "MIN_ROT_RANGE_DEG", "MAX_X_STD_DEG", "MAX_X_STD_M",
           "MIN_EFFECTIVE_PAIRS", "MIN_DRIFT_TIME", "MIN_DRIFT_PAIRS", "MIN_NOISE_DOF"]

#: Smallest axis scatter accepted (axes within about a degree of one direction fall below).
MIN_LAMBDA2 = c.NEAR_DEGENERATE_LAMBDA2
#: Smallest ratio of the axis scatter to the one the hand's rotation noise alone gives (the second axis's scatter at
#: least three times the noise's); on generated mixed recordings the determined runs that were right had 15 and more,
#: one 17 deg off had 0.94.
NOISE_LAMBDA2_RATIO = 4.0
#: Smallest rotation range of the hand [deg].
MIN_ROT_RANGE_DEG = 2.0
#: Largest standard deviation of the rotation of X [deg] for a determined X.
MAX_X_STD_DEG = 2.0
#: Largest standard deviation of the translation of X [m] for a determined X.
MAX_X_STD_M = 0.02
#: Fewest independent stretches of data (pairs over the residuals' longest autocorrelation time) ...
MIN_EFFECTIVE_PAIRS = 8.0
#: ... checked when the residuals correlate over more than this many pairs ...
MIN_DRIFT_TIME = 3.0
#: ... and there are at least this many pairs (a few dozen stations cannot tell a drift from chance, and their
#: errors are those of the robot's and camera's geometry, not of an integrating sensor).
MIN_DRIFT_PAIRS = 60

#: Fewest pairs' worth of residuals the fit may leave to estimate the noise levels from (inlying pairs minus the
#: effectively estimated parameters over 6).  Below, the levels rest on almost nothing: with 3 stations, `A X = Y B`
#: leaves 0.9 of a pair, the fit interpolates the translations exactly, and the error bars come out 10-20x too
#: small (a generated recording: X 124 mm off with a standard deviation of 9 mm, "determined").
MIN_NOISE_DOF = 2.0

_SUB = 200


def axis_scatter(A: np.ndarray) -> float:
    """``lambda2`` of the hand poses ``A`` (N, 4, 4): the axis scatter of their rotations about their chordal mean."""
    R = A[:, :3, :3]
    U, _, Vt = np.linalg.svd(R.sum(axis=0))
    Rm = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    return c.axis_scatter_lambda2(se3.so3_log(Rm.T @ R, check=False))


def _noise_scatter(A: np.ndarray, rot_noise_var: float | None) -> float:
    """``lambda2_noise``: the axis scatter that rotation noise of variance ``rot_noise_var`` per component gives
    the hand poses ``A`` (0 when not given)."""
    if rot_noise_var is None or not rot_noise_var > 0.0:
        return 0.0
    R = A[:, :3, :3]
    U, _, Vt = np.linalg.svd(R.sum(axis=0))
    Rm = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    tot = float(np.sum(se3.so3_log(Rm.T @ R, check=False) ** 2))
    return float(len(A) * rot_noise_var / tot) if tot > 0.0 else float("inf")


def observability(A: np.ndarray, cov: np.ndarray, X_std: np.ndarray, autocorrelation_time: float | None = None,
                  n_pairs: int | None = None, drift_refused: bool = True,
                  noise_dof: float | None = None, one_axis: str | None = None,
                  rot_noise_var: float | None = None) -> tuple[dict, list[str]]:  # fmt: skip
    """Observability report of the hand poses ``A`` (N, 4, 4) and the covariance of the unknowns.

    ``autocorrelation_time``: the longest of the residual components [pairs], when known; ``n_pairs``: the pairs
    it comes from (default ``len(A)``); ``drift_refused``: residuals that drift make ``X`` undetermined (an
    integrating sensor: visual odometry), else they are reported in ``drift`` only; ``noise_dof``: the pairs'
    worth of residuals the fit left to estimate the noise levels from, when they are estimated from the
    residuals (below :data:`MIN_NOISE_DOF` ``X`` is not determined); ``one_axis``: for a motion about one axis
    whose open components were named (:mod:`kinhec.calibrate.reduced_dof`), the refusal naming them, or ``""``
    when they were stated or set by convention (no refusal for the axis; ``X_std`` then holds 0 for a stated
    component and NaN for one set by convention, and the limits apply to the others); ``rot_noise_var``: the
    variance of one component of the hand's rotation noise [rad^2] (an upper bound will do), for ``lambda2_noise``.

    Returns
    -------
    report : dict
        ``lambda2``, ``rot_range_deg``, ``trans_range_m``, ``condition``,
        ``determined`` and the thresholds used.
    warnings : list of str
        One sentence per failed test.
    """
    R = A[:, :3, :3]
    lam2 = axis_scatter(A)
    lam2_noise = _noise_scatter(A, rot_noise_var)
    idx = np.unique(np.linspace(0, len(A) - 1, min(len(A), _SUB)).round().astype(int))
    i, j = np.triu_indices(len(idx), k=1)
    if i.size:
        rel = np.swapaxes(R[idx[i]], 1, 2) @ R[idx[j]]
        rot_range = float(np.degrees(se3.rotation_angle(rel, check=False)).max())
        trans_range = float(np.linalg.norm(A[idx[i], :3, 3] - A[idx[j], :3, 3], axis=1).max())
    else:
        rot_range = trans_range = 0.0
    d = np.sqrt(np.maximum(np.diag(cov), 1e-300))
    corr = cov / np.outer(d, d)
    try:
        cond = float(np.linalg.cond(corr))
    except np.linalg.LinAlgError:
        cond = float("inf")
    xs = np.nan_to_num(X_std, nan=0.0) if one_axis == "" else X_std  # components set by convention: not judged
    std_deg = float(np.degrees(np.max(xs[:3])))
    std_m = float(np.max(xs[3:]))
    warn = []
    if lam2 < MIN_LAMBDA2 and one_axis:
        warn.append(one_axis)
    elif lam2 < MIN_LAMBDA2 and one_axis is None:
        warn.append(
            f"the hand rotates about one axis only (axis scatter lambda2 = {lam2:.3g} < {MIN_LAMBDA2:g}): "
            "the rotation of X about it and its translation along it are not determined; rotate about "
            "two or more different axes"
        )
    if lam2 >= MIN_LAMBDA2 and not lam2 >= NOISE_LAMBDA2_RATIO * lam2_noise:
        warn.append(
            f"the hand rotates about a second axis no more than its noise does (axis scatter lambda2 = {lam2:.3g}, "
            f"of which noise alone gives {lam2_noise:.2g}; at least {NOISE_LAMBDA2_RATIO:g} times that needed): the "
            "rotation of X about it and its translation along it are not determined; rotate about two or more "
            "different axes"
        )
    if rot_range < MIN_ROT_RANGE_DEG:
        warn.append(f"the hand rotates by {rot_range:.3g} deg at most (< {MIN_ROT_RANGE_DEG:g} deg): X is not determined")
    if not (std_deg <= MAX_X_STD_DEG and std_m <= MAX_X_STD_M):
        warn.append(
            f"X is poorly determined: standard deviations up to {std_deg:.3g} deg and {1000 * std_m:.3g} mm "
            f"(limits {MAX_X_STD_DEG:g} deg, {1000 * MAX_X_STD_M:g} mm)"
        )
    n = len(A) if n_pairs is None else int(n_pairs)
    if noise_dof is not None and noise_dof < MIN_NOISE_DOF:
        warn.append(
            f"{len(A)} pairs leave {max(noise_dof, 0.0):.2g} pairs' worth of residuals after fitting X and Y (at "
            f"least {MIN_NOISE_DOF:g} needed): the noise levels, and so the standard deviations, cannot be "
            "estimated; record more stations"
        )
    eff = None if autocorrelation_time is None else n / max(autocorrelation_time, 1.0)
    drift = bool(eff is not None and n >= MIN_DRIFT_PAIRS and autocorrelation_time > MIN_DRIFT_TIME
                 and eff < MIN_EFFECTIVE_PAIRS)  # fmt: skip
    if drift and drift_refused:
        warn.append(
            f"the residuals drift: they stay correlated over {autocorrelation_time:.3g} pairs, {eff:.2g} independent "
            f"stretches in {n} pairs (at least {MIN_EFFECTIVE_PAIRS:g} needed), as the drift of visual odometry does; "
            "such errors are partly absorbed by X and Y, and its standard deviations would understate the error"
        )
    report = {
        "lambda2": float(lam2),
        "lambda2_noise": float(lam2_noise),
        "rot_range_deg": rot_range,
        "trans_range_m": trans_range,
        "condition": cond,
        "determined": not warn,
        "X_std_max_deg": std_deg,
        "X_std_max_mm": 1000 * std_m,
        "autocorrelation_time": None if autocorrelation_time is None else float(autocorrelation_time),
        "effective_pairs": eff,
        "drift": drift,
        "limits": {"lambda2": MIN_LAMBDA2, "rot_range_deg": MIN_ROT_RANGE_DEG, "X_std_deg": MAX_X_STD_DEG,
                   "X_std_mm": 1000 * MAX_X_STD_M, "effective_pairs": MIN_EFFECTIVE_PAIRS,
                   "noise_dof": MIN_NOISE_DOF},
    }
    return report, warn
