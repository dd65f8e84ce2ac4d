"""How good is a calibration: held-out accuracy of the eye poses, and the error at a work point.

Held-out accuracy
-----------------
Leave one *station* out (the pairs of one pose of the hand: one pair when the
pairs have no stamps; with stamps, consecutive pairs until the hand has moved
:data:`kinhec.geometry.motion.KEYFRAME_MIN_ROT_DEG` or
:data:`kinhec.geometry.motion.KEYFRAME_MIN_TRANS_M` from the station's first pose -- a
robot standing still, or one keyframe of a moving one), fit ``X``, ``Y`` (and
the offset and the scale) without it, and predict its eye poses from its hand
poses.  The fit is not run again: with the whitened residuals ``z_i`` and
Jacobians ``G_i`` of the final fit (:class:`kinhec.calibrate.solve.Solution`)
and ``H = sum_i G_i^T G_i`` plus the priors' information, leaving station
``s`` out moves the estimate by

    Delta_s = H_{-s}^-1 G_s^T z_s,      H_{-s} = H - G_s^T G_s   (a rank-6 m_s downdate)

and its pair ``j`` is then predicted with the whitened error ``e_j = z_j + G_j
Delta_s`` -- the deletion formulas of least squares (``e = (I - M_s)^-1 z_s``
with ``M_s`` the station's block of the hat matrix), exact to first order.

Each held-out error has the predictive covariance ``C_j = S_{-s} + G_j K_s
G_j^T``: the noise covariance estimated without the station (``S_{-s}``, from
the residual sums of squares less the station's deletion term ``sym(z_j
e_j^T)``, ``nu - m_s`` degrees of freedom, in the structure of the fit's noise
model) plus the leave-out fit's parameter covariance ``K_s = kappa_s D
H_{-s}^-1 D`` (``D``: the square roots of the long-run variance factors of
:func:`kinhec.calibrate.uncertainty.long_run_inflation`; ``kappa_s`` the mean
variance of ``S_{-s}`` in whitened units, about 1 when the whitening came from
the same residuals).  The systematic
errors added to the covariance as *consider* terms (the intrinsics behind the
eye poses, the robot's stated accuracy) are left out: a constant error of the
camera or the flange frame is absorbed by ``X`` and ``Y`` and moves no held-out
prediction.  A held-out error lies in its 95 % region when ``e_j^T C_j^-1 e_j``
is below the 95 % quantile of its 6-dof distribution: Hotelling's ``T^2(6,
nu')`` for a full noise covariance estimated from ``nu' = nu - m_s`` degrees of
freedom (``6 nu' / (nu' - 5) F(6, nu' - 5)``); for a diagonal one, the sum of
six squared t variables with ``nu' + 4`` degrees of freedom each (the fit
shrinks each variance toward its block's mean with
:data:`~kinhec.calibrate.solve.DIAG_NOISE_DOF` pseudo-degrees of freedom) as a
scaled chi-square of its mean and variance; ``6 F(6, 3 nu')`` for one variance
per block.  All tend to the chi-square with 6 degrees of freedom.

The held-out RMS (translation [mm], rotation [deg], in the frame the eye poses
were compared in) is reported beside its prediction ``sqrt(mean_j trace
C_j)`` over the same block, and its 95 % interval: the sum of the squared
errors is a quadratic form in Gaussian errors (stations independent, the pairs
of a station correlated through ``K_s``) whose mean and variance give a scaled
chi-square (Satterthwaite).  A held-out RMS above the 99 % quantile of that
distribution, in translation or in rotation, is a warning
(:func:`warning`).

The work point
--------------
A point ``p`` the camera sees (camera frame, metres) is in the robot base at
``A_i X p`` eye-in-hand (``X = T_ee_cam``) and at ``Y p`` eye-to-hand (``Y =
T_base_cam``).  With the estimate's covariance (every term it counts: noise,
scale, intrinsics, robot accuracy) its 3x3 covariance is ``R_A J C J^T R_A^T``
with ``J = [-R [p]x, I]`` on the rotation and translation perturbations of
``X`` (or of ``Y``; eye-in-hand ``Y`` does not enter the chain, eye-to-hand
``X`` does not).  ``point_error_95_mm`` is the radius of the sphere that holds
the 3D error with probability 95 %: the 95 % quantile of its length, whose
square is a weighted sum of chi-squares with one degree of freedom each
(weights the eigenvalues of the covariance), taken on a deterministic
quasi-random sample.  The hand's rotation
turns the covariance without changing its eigenvalues, so the radius is the
same at every pose of the recording (computed at each and the largest
reported).  Default point: the target's (marker's) mean position in the
camera over the recording.

References
----------
R. D. Cook and S. Weisberg, *Residuals and Influence in Regression*, 1982
(deletion formulas).  F. E. Satterthwaite,
"An approximate distribution of estimates of variance components,"
*Biometrics Bulletin* 2(6), 1946.
"""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import InputError
from kinhec.calibrate.solve import DIAG_NOISE_DOF
from kinhec.geometry.motion import KEYFRAME_MIN_ROT_DEG, KEYFRAME_MIN_TRANS_M
from kinhec.util.distributions import chi2_ppf, f_ppf

__all__ = ["stations", "leave_one_station_out", "assess", "assess_solution", "summary_line", "summary_lines", "warning", "parse_point", "point_error", "radius_95",
           "LEVEL", "WARN_LEVEL", "MIN_STATIONS", "RADIUS_LOG2"]

#: Probability of each held-out error's predictive region (coverage95) and of the reported RMS interval.
LEVEL = 0.95
#: A held-out RMS above this quantile of its predicted distribution is a warning.
WARN_LEVEL = 0.99
#: Fewest stations for a held-out assessment (fewer: the leave-out fits are not determined).
MIN_STATIONS = 4


def stations(A: np.ndarray, t: np.ndarray | None, *, min_rot_deg: float = KEYFRAME_MIN_ROT_DEG,
             min_trans_m: float = KEYFRAME_MIN_TRANS_M) -> np.ndarray:
    """Station index of every pair, in pair order.

    Parameters
    ----------
    A : ndarray, shape (n, 4, 4)
        Hand poses ``T_base_ee`` of the pairs [m], in their order.
    t : ndarray, shape (n,), optional
        Stamps of the pairs; None (pairs by order): every pair is its own station.
    min_rot_deg, min_trans_m : float
        A new station starts when the hand has turned or moved this far from the first pose of the current one.

    Returns
    -------
    ndarray of int, shape (n,)
        Non-decreasing station indices from 0.
    """
    n = A.shape[0]
    if t is None:
        return np.arange(n)
    out = np.zeros(n, dtype=int)
    cos_min = np.cos(np.radians(min_rot_deg))
    k, first = 0, 0
    R, p = A[:, :3, :3], A[:, :3, 3]
    for i in range(1, n):
        c = 0.5 * (np.einsum("ij,ij->", R[first], R[i]) - 1.0)
        if c < cos_min or np.linalg.norm(p[i] - p[first]) >= min_trans_m:
            k, first = k + 1, i
        out[i] = k
    return out


def _structured(Sw: np.ndarray, kind: str) -> np.ndarray:
    """``Sw`` (..., 6, 6) in the structure of the fit's noise model: full, diagonal, or one variance per block of 3."""
    if kind == "full":
        return 0.5 * (Sw + np.swapaxes(Sw, -1, -2))
    d = np.diagonal(Sw, axis1=-2, axis2=-1).copy()
    if kind == "block":
        d[..., :3] = d[..., :3].mean(axis=-1, keepdims=True)
        d[..., 3:] = d[..., 3:].mean(axis=-1, keepdims=True)
    return d[..., :, None] * np.eye(Sw.shape[-1])


def _region_quantile(nu: float, kind: str, level: float) -> float:
    """Quantile ``level`` of ``e^T C^-1 e`` for a 6-vector whose noise covariance has ``nu`` degrees of freedom."""

    p = 6
    if not np.isfinite(nu) or nu > 1e6:
        return float(chi2_ppf(level, p))
    if kind == "full":
        nu = max(nu, p + 0.5)
        return float(p * nu / (nu - p + 1.0) * f_ppf(level, p, nu - p + 1.0))
    nu = max(nu, 0.5)
    if kind == "diagonal" and nu + DIAG_NOISE_DOF > 4.5:
        # six whitened components, each variance from nu degrees of freedom plus the DIAG_NOISE_DOF pseudo-degrees of
        # freedom of its shrinkage toward its block's mean: a sum of six t^2, as a scaled chi-square of its mean and
        # variance (Satterthwaite)
        n = nu + DIAG_NOISE_DOF
        mean = p * n / (n - 2.0)
        var = p * 2.0 * n * n * (n - 1.0) / ((n - 2.0) ** 2 * (n - 4.0))
        return float(var / (2.0 * mean) * chi2_ppf(level, 2.0 * mean * mean / var))
    return float(p * f_ppf(level, p, 3.0 * nu if kind == "block" else nu))


def leave_one_station_out(G: np.ndarray, z: np.ndarray, station: np.ndarray, *, prior_information=None,
                          factors=None, noise_dof: float, noise_model: str = "full") -> dict:
    """First-order leave-one-station-out prediction errors of a whitened least-squares fit.

    Parameters
    ----------
    G : ndarray, shape (n, 6, P)
        Whitened Jacobians of the fitted pairs' residuals.
    z : ndarray, shape (n, 6)
        Their whitened residuals at the estimate.
    station : ndarray of int, shape (n,)
        Station of every pair.
    prior_information : ndarray, shape (P, P), optional
        Information of the priors (kept in every leave-out fit).
    factors : ndarray, shape (P,), optional
        Variance factors of the parameters (correlated residuals); default 1.
    noise_dof : float
        Degrees of freedom of the noise covariance estimated from the residuals (pairs).
    noise_model : {"full", "diagonal", "block"}
        Structure of that covariance.

    Returns
    -------
    dict
        ``e`` (n, 6) whitened held-out errors, ``C`` (n, 6, 6) their predictive covariances, ``d2`` (n,)
        ``e^T C^-1 e``, ``q95`` (n,) each one's 95 % quantile, ``delta`` (n_stations, P) the leave-out moves,
        ``K`` (n_stations, P, P) the leave-out parameter covariances, ``Sw`` (n_stations, 6, 6) the leave-out
        noise covariances (whitened), ``ok`` (n,) pairs whose leave-out fit is determined, ``stations`` the
        station ids in order.
    """
    n, k, P = G.shape
    ids, inv = np.unique(station, return_inverse=True)
    ns = ids.size
    H = np.einsum("nkp,nkq->pq", G, G)
    if prior_information is not None:
        H = H + prior_information
    Hs = np.zeros((ns, P, P))
    gs = np.zeros((ns, P))
    Gt = np.swapaxes(G, 1, 2)
    np.add.at(Hs, inv, Gt @ G)
    np.add.at(gs, inv, (Gt @ z[..., None])[..., 0])
    m = np.bincount(inv, minlength=ns)
    Hm = H[None] - Hs
    # each P x P downdate inverted (P <= 14, batched); a station whose removal leaves X undetermined is skipped
    scale = np.sqrt(np.maximum(np.diag(H), 1e-300))
    Hn = Hm / np.outer(scale, scale)[None]
    Hn = 0.5 * (Hn + np.swapaxes(Hn, 1, 2))
    w = np.linalg.eigvalsh(Hn)
    ok_s = w[:, 0] > 1e-10 * w[:, -1]
    Hinv = np.zeros_like(Hm)
    Hinv[ok_s] = np.linalg.inv(Hn[ok_s]) / np.outer(scale, scale)[None]
    delta = np.einsum("spq,sq->sp", Hinv, gs)
    e = z + (G @ delta[inv][..., None])[..., 0]
    d = np.ones(P) if factors is None else np.sqrt(np.maximum(np.asarray(factors, dtype=np.float64), 1.0))
    K = Hinv * np.outer(d, d)[None]
    # noise covariance without the station: the residual sums of squares less its deletion term
    Z = z.T @ z
    sym = 0.5 * (np.einsum("ni,nj->nij", z, e) + np.einsum("ni,nj->nij", e, z))
    Ds = np.zeros((ns, k, k))
    np.add.at(Ds, inv, sym)
    nu_s = np.maximum(noise_dof - m, 1.0)
    scale_nu = noise_dof / nu_s
    Sw = _structured((Z[None] - Ds) / max(noise_dof, 1.0) * scale_nu[:, None, None], noise_model)
    # the deletion can overshoot on a dominant station: never below a tenth of the pooled covariance
    floor = 0.1 * np.diag(Z) / max(noise_dof, 1.0)
    Sw = Sw + np.eye(k)[None] * np.maximum(floor[None] - np.diagonal(Sw, axis1=1, axis2=2), 0.0)[:, None, :]
    # the parameter covariance at the noise level estimated without the station (the whitening's own level when the
    # noise model came from these residuals, as in calibrate: kappa ~ 1)
    K = K * (np.trace(Sw, axis1=1, axis2=2) / k)[:, None, None]
    C = Sw[inv] + G @ K[inv] @ Gt
    d2 = np.einsum("ni,ni->n", e, np.linalg.solve(C, e[..., None])[..., 0])
    nus, back = np.unique(nu_s, return_inverse=True)
    q = np.array([_region_quantile(v, noise_model, LEVEL) for v in nus])[back][inv]
    ok = ok_s[inv]
    return {"e": e, "C": C, "d2": d2, "q95": q, "delta": delta, "K": K, "Sw": Sw, "ok": ok, "stations": ids,
            "station_index": inv}


def _satterthwaite(G, K, Sw, inv, Q0, ok) -> tuple[float, float]:
    """Mean and variance of ``sum_j e_j^T Q0 e_j`` over the pairs in ``ok`` (stations independent, the pairs of one
    station correlated through their common leave-out fit)."""
    ns, P = K.shape[0], K.shape[1]
    sel = np.flatnonzero(ok)
    Gs, idx = G[sel], inv[sel]
    m = np.bincount(idx, minlength=ns).astype(float)
    GQG = np.zeros((ns, P, P))
    GQSQG = np.zeros((ns, P, P))
    Gst = np.swapaxes(Gs, 1, 2)
    np.add.at(GQG, idx, Gst @ Q0[None] @ Gs)
    QS = Q0[None] @ Sw  # (ns, 6, 6)
    np.add.at(GQSQG, idx, Gst @ (QS @ Q0[None])[idx] @ Gs)
    KG = K @ GQG
    tr = lambda M: np.trace(M, axis1=-2, axis2=-1)  # noqa: E731
    mean = m * tr(QS) + tr(KG)
    var = 2.0 * (m * tr(QS @ QS) + 2.0 * tr(K @ GQSQG) + tr(KG @ KG))
    return float(mean.sum()), float(var.sum())


def rms_interval(mean: float, var: float, n: int, level: float) -> tuple[float, float]:
    """Central ``level`` interval of ``sqrt(sum / n)`` when ``sum`` is a scaled chi-square of that mean and variance."""

    if mean <= 0 or var <= 0 or n <= 0:
        return 0.0, 0.0
    dof = 2.0 * mean * mean / var
    a = (1.0 - level) / 2.0
    lo, hi = chi2_ppf([a, 1.0 - a], dof) / dof
    return float(np.sqrt(mean / n * lo)), float(np.sqrt(mean / n * hi))


def rms_upper(mean: float, var: float, n: int, level: float) -> float:
    """Upper ``level`` bound of ``sqrt(sum / n)`` when ``sum`` is a scaled chi-square of that mean and variance."""

    if mean <= 0 or var <= 0 or n <= 0:
        return float("inf")
    dof = 2.0 * mean * mean / var
    return float(np.sqrt(mean / n * chi2_ppf(level, dof) / dof))


def assess(G: np.ndarray, z: np.ndarray, W: np.ndarray, station: np.ndarray, *, prior_information=None, factors=None,
           noise_dof: float, noise_model: str = "full") -> dict | None:
    """The ``held_out`` entry of a calibration (see the module documentation); None with too few stations.

    Parameters
    ----------
    G, z : ndarray, shapes (n, 6, P), (n, 6)
        Whitened Jacobians and residuals of the fitted (inlier) pairs.
    W : ndarray, shape (6, 6)
        The whitening (``W^T W = S^-1``, residuals rotation [rad] then translation [m]).
    station : ndarray of int, shape (n,)
        Station of every fitted pair.
    prior_information, factors, noise_dof, noise_model
        As :func:`leave_one_station_out`.

    Returns
    -------
    dict or None
        ``n`` (stations held out), ``n_pairs``, ``rms_mm``, ``rms_deg``, ``predicted_rms_mm``,
        ``predicted_rms_deg``, ``predicted_interval95_mm``, ``predicted_interval95_deg`` (95 % interval of the
        held-out RMS), ``upper99_mm``, ``upper99_deg``, ``coverage95``, ``consistent`` (neither RMS above its 99 %
        quantile), ``method``.
    """
    if np.unique(station).size < MIN_STATIONS:
        return None
    lo = leave_one_station_out(G, z, station, prior_information=prior_information, factors=factors,
                               noise_dof=noise_dof, noise_model=noise_model)
    ok = lo["ok"]
    if np.unique(station[ok]).size < MIN_STATIONS:
        return None
    L = np.linalg.inv(W)  # L L^T = S
    r = lo["e"][ok] @ L.T  # held-out errors: rotation [rad], translation [m]
    Cr = L[None] @ lo["C"][ok] @ L.T[None]
    npairs = int(ok.sum())
    out = {"n": int(np.unique(station[ok]).size), "n_pairs": npairs}
    for name, sl, unit in (("mm", slice(3, 6), 1000.0), ("deg", slice(0, 3), 180.0 / np.pi)):
        E = np.zeros((6, 6))
        E[sl, sl] = np.eye(3)
        Q0 = L.T @ E @ L
        mean, var = _satterthwaite(G, lo["K"], lo["Sw"], lo["station_index"], Q0, ok)
        out[f"rms_{name}"] = float(unit * np.sqrt(np.mean((r[:, sl] ** 2).sum(axis=1))))
        out[f"predicted_rms_{name}"] = float(unit * np.sqrt(np.mean(np.trace(Cr[:, sl, sl], axis1=1, axis2=2))))
        a, b = rms_interval(mean, var, npairs, LEVEL)
        out[f"predicted_interval95_{name}"] = [float(unit * a), float(unit * b)]
        out[f"upper99_{name}"] = float(unit * rms_upper(mean, var, npairs, WARN_LEVEL))
    out["coverage95"] = float(np.mean(lo["d2"][ok] <= lo["q95"][ok]))
    out["consistent"] = bool(out["rms_mm"] <= out["upper99_mm"] and out["rms_deg"] <= out["upper99_deg"])
    out["method"] = ("leave one station out, first order (deletion formulas on the whitened normal equations); "
                     f"95 % regions from the 6-dof {'Hotelling T2' if noise_model == 'full' else 'studentised'} distribution "
                     f"of a {noise_model} noise covariance")
    return out


def assess_solution(sol, A: np.ndarray, t: np.ndarray | None) -> dict | None:
    """:func:`assess` on the final fit of :func:`kinhec.calibrate.solve.refine`.

    Parameters
    ----------
    sol : kinhec.calibrate.solve.Solution
    A : ndarray, shape (n, 4, 4)
        Hand poses of all pairs (outliers too) at the final offset, in pair order.
    t : ndarray, shape (n,), optional
        Their stamps (None: pairs by order, one station each).
    """
    if sol.whitened_jacobian is None:
        return None
    st = stations(A, t)[sol.inliers]
    infl = sol.inflation_detail
    return assess(sol.whitened_jacobian, sol.whitened_residuals, sol.whitening, st,
                  prior_information=sol.prior_information, factors=None if infl is None else infl.factors,
                  noise_dof=sol.noise_dof, noise_model=sol.noise_model)


def warning(held: dict | None) -> str | None:
    """The warning for a held-out RMS above the 99 % quantile of what sigma predicts (None when consistent)."""
    if not held or held.get("consistent", True):
        return None
    if "rms_px" in held:  # a corner calibration's views (kinhec.calibrate.held_out_pixels)
        return (f"held-out accuracy: the corners of the {held['n']} views, each left out of the fit in turn, are "
                f"predicted to {held['rms_px']:.3g} px RMS against a 99 % bound of {held['upper99_px']:.3g} px (expected "
                f"{held['predicted_rms_px']:.3g} px): worse than sigma says (a view that pulls the fit and disagrees "
                "with the rest, robot pose errors that are not the independent isotropic noise the fit estimates -- "
                "larger about some axes or at some poses --, or errors the model does not hold: the lens model, a "
                "board that is not flat)")
    parts = [f"{held[f'rms_{u}']:.3g} {u} RMS against a 99 % bound of {held[f'upper99_{u}']:.3g} {u} (expected "
             f"{held[f'predicted_rms_{u}']:.3g} {u})" for u in ("mm", "deg") if held[f"rms_{u}"] > held[f"upper99_{u}"]]
    return (f"held-out accuracy: the eye poses of the {held['n']} stations, each left out of the fit in turn, are "
            f"predicted to {' and '.join(parts)}: worse than sigma says (a station that pulls the fit and disagrees "
            "with the rest -- an outlier kept, a pose far from the others -- or errors the model does not hold)")


def summary_line(held: dict | None) -> str | None:
    """One line for the screen: held-out RMS beside its prediction and 95 % interval."""
    if not held:
        return None
    if "rms_px" in held:  # a corner calibration's views (kinhec.calibrate.held_out_pixels)
        a, b = held["predicted_interval95_px"]
        poses = ""
        if "rms_mm" in held:  # the same views as eye poses, from their corners
            poses = (f"; as eye poses {held['rms_mm']:.3g} mm / {held['rms_deg']:.3g} deg RMS, sigma predicts "
                     f"{held['predicted_rms_mm']:.3g} mm / {held['predicted_rms_deg']:.3g} deg")
        return (f"held-out accuracy ({held['n']} views left out one at a time): corners predicted to "
                f"{held['rms_px']:.3g} px RMS; sigma predicts {held['predicted_rms_px']:.3g} px (95 %: {a:.3g}-{b:.3g} "
                f"px); {100 * held['coverage95_px']:.0f} % of the views inside their 95 % regions{poses}")
    a, b = held["predicted_interval95_mm"]
    c, d = held["predicted_interval95_deg"]
    return (f"held-out accuracy ({held['n']} stations left out one at a time): {held['rms_mm']:.3g} mm / "
            f"{held['rms_deg']:.3g} deg RMS; sigma predicts {held['predicted_rms_mm']:.3g} mm / "
            f"{held['predicted_rms_deg']:.3g} deg (95 %: {a:.3g}-{b:.3g} mm, {c:.3g}-{d:.3g} deg); "
            f"{100 * held['coverage95']:.0f} % inside their 95 % regions")


def summary_lines(res) -> list[str]:
    """The screen's lines for a :class:`~kinhec.calibrate.result.CalibrationResult`: held-out accuracy, work point."""
    out = []
    line = summary_line(res.held_out)
    if line:
        out.append(line)
    pe = res.point_error()
    if pe is not None:
        p = ", ".join(f"{v:.3g}" for v in pe["point_cam_m"])
        out.append(f"work point ({p}) m in the camera: 95 % of its position error in the robot base within "
                   f"{pe['point_error_95_mm']:.3g} mm")
    return out


# --------------------------------------------------------------------------- #
# the work point
# --------------------------------------------------------------------------- #
def parse_point(value) -> np.ndarray:
    """A work point ``x,y,z`` [m] in the camera frame as a float64 (3,) array; raises :class:`InputError`."""
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
        try:
            v = np.array([float(p) for p in parts], dtype=np.float64)
        except ValueError:
            raise InputError(f"point: expected x,y,z in metres in the camera frame (e.g. 0,0,0.5), got {value!r}") from None
    else:
        try:
            v = np.asarray(value, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise InputError(f"point: expected x,y,z in metres in the camera frame (e.g. 0,0,0.5), got {value!r}") from None
    if v.shape != (3,) or not np.isfinite(v).all():
        raise InputError(f"point: expected three finite numbers x,y,z in metres in the camera frame (e.g. 0,0,0.5), "
                         f"got {value!r}")
    return v


#: Base-2 logarithm of the points of the quasi-random (unscrambled Sobol) sample of a 3D standard normal behind
#: :func:`radius_95`.
RADIUS_LOG2 = 16
_NORMAL_SAMPLE: list = []


def _normal_sample() -> np.ndarray:
    """A deterministic low-discrepancy sample ``(2**RADIUS_LOG2 - 1, 3)`` of squared standard normals (built once)."""
    if not _NORMAL_SAMPLE:
        from scipy import special
        from scipy.stats import qmc

        u = qmc.Sobol(3, scramble=False).random_base2(RADIUS_LOG2)[1:]  # the first point is 0
        _NORMAL_SAMPLE.append(special.ndtri(np.clip(u, 1e-12, 1.0 - 1e-12)) ** 2)
    return _NORMAL_SAMPLE[0]


def radius_95(C: np.ndarray, level: float = LEVEL) -> float:
    """Radius of the sphere holding a zero-mean Gaussian 3-vector of covariance ``C`` with probability ``level``.

    ``|e|^2`` is ``sum_k lambda_k chi2_1`` (``lambda_k`` the eigenvalues of ``C``); its quantile is taken over a
    deterministic quasi-random sample of :data:`2**RADIUS_LOG2 <RADIUS_LOG2>` points (within about 0.3 %).  Between
    ``sqrt(lambda_max chi2_1(level))`` (one axis) and ``sqrt(lambda_max chi2_3(level))`` (the largest-axis bound).
    """
    lam = np.clip(np.linalg.eigvalsh(0.5 * (C + C.T)), 0.0, None)
    if lam.max() <= 0:
        return 0.0
    return float(np.sqrt(np.quantile(_normal_sample() @ lam, level)))


def point_error(cov: np.ndarray, setup: str, X: np.ndarray, Y: np.ndarray, point_cam_m, A: np.ndarray | None = None,
                level: float = LEVEL) -> dict:
    """Predicted error of a point the camera sees, in the robot base (see the module documentation).

    Parameters
    ----------
    cov : ndarray, shape (P, P)
        Covariance of the estimate (``phi_X, d_X, phi_Y, d_Y, ...``; rotation [rad], translation [m]).
    setup : str
        ``"eye_in_hand"`` (through ``A_i X``) or ``"eye_to_hand"`` (through ``Y = T_base_cam``).
    X, Y : ndarray, shape (4, 4)
    point_cam_m : array_like, shape (3,)
        The point in the camera frame [m].
    A : ndarray, shape (n, 4, 4), optional
        Hand poses ``T_base_ee`` at which to evaluate (eye-in-hand); default the identity.

    Returns
    -------
    dict
        ``point_cam_m``, ``point_error_95_mm`` (the largest over the poses), ``how``.
    """
    p = parse_point(point_cam_m)
    if setup == "eye_to_hand":
        T, C = Y, cov[6:12, 6:12]
        Rs = np.eye(3)[None]
    else:
        T, C = X, cov[0:6, 0:6]
        Rs = np.eye(3)[None] if A is None else A[:, :3, :3]
    J = np.concatenate([-T[:3, :3] @ se3.hat(p), np.eye(3)], axis=1)
    C3 = J @ C @ J.T
    C3s = np.einsum("nij,jk,nlk->nil", Rs, C3, Rs)
    radius = max(radius_95(Ci, level) for Ci in C3s[: min(len(C3s), 64)])  # the same at every pose (see above)
    return {"point_cam_m": [float(v) for v in p], "point_error_95_mm": 1000.0 * radius,
            "how": "radius of the sphere holding the 3D error of the point in the robot base with probability 95 % "
                   f"(Gaussian, from the covariance of {'Y' if setup == 'eye_to_hand' else 'X'}); the same at "
                   "every pose of the recording, the largest reported"}


def default_point(B: np.ndarray, setup: str, scale: float | None = None) -> np.ndarray:
    """The target's (eye-to-hand: the marker's) mean position in the camera [m] from the solver-form eye poses
    ``B`` (``T_target_cam`` eye-in-hand, ``T_cam_marker`` eye-to-hand)."""
    if setup == "eye_to_hand":
        t = B[:, :3, 3]
    else:
        t = se3.invert_transform(B, check=False)[:, :3, 3]
    p = np.mean(t, axis=0)
    return p / scale if scale else p
