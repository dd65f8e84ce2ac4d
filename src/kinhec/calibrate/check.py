"""Is a stored calibration still good?  New pose pairs tested against ``X``, ``Y`` of a calibration JSON.

Model.  The stored calibration (``CalibrationResult.to_dict()``, what ``kinhec calibrate --json`` writes)
gives ``X0``, ``Y0``, their standard deviations (rotation [rad] as the right perturbation ``R exp(phi)``,
translation [m] added in the parent frame: the convention of the calibration's covariance), the scale of
the eye translations, the clock offset and the residual noise level per component.  The truth of the new
recording is ``x0 (+) theta`` with ``theta = e + delta``: ``e ~ N(0, Sigma0)`` the stored calibration's own
error (common to every new pair) and ``delta`` a change of the mount.  Per new pair the residual of
``A_i X = Y B_i`` (:func:`kinhec.calibrate.solve.residuals`, in the domain the calibration compared them)
is, to first order,

    r_i = n_i - J_i theta,        n_i ~ N(0, S)

with ``J_i`` the (6, 12) Jacobian in ``(phi_X, d_X, phi_Y, d_Y)`` (central differences).  The stacked residuals
have the covariance ``I (x) S + J Sigma0 J^T``: the stored calibration's error correlates every pair.  Their joint
chi-square ``r^T C^-1 r`` splits exactly (Woodbury) into two independent parts:

* the **Wald** part: the GLS estimate ``theta_hat = -H^-1 g`` (``H = sum J_i^T S^-1 J_i``,
  ``g = sum J_i^T S^-1 r_i``) against its null covariance ``V = H^-1 + Sigma0``:
  ``W = theta_hat^T V^-1 theta_hat ~ chi2(12)`` -- the rigid change of ``X`` and ``Y``;
* the **misfit** part ``Q = sum r_i^T S^-1 r_i - g^T H^-1 g`` over ``6 n - 12`` degrees of freedom -- what no
  change of ``X`` and ``Y`` explains (noisier poses, outliers, a changed setup).  The stored noise level is
  itself an estimate from ``noise_dof`` degrees of freedom, so ``Q / (6 n - 12)`` is compared with
  ``F(6 n - 12, noise_dof)``, not with a chi-square that would call the noise estimate's own error a change.

The recording is consistent when both parts pass at ``alpha / 2`` (Bonferroni); the reported p-value is
``min(1, 2 min(p_W, p_Q))``.  Below 3 pairs (``H`` cannot determine 12 unknowns) only the joint chi-square is
tested, over ``6 n`` degrees of freedom, and nothing is attributed.

Attribution.  ``theta_hat``'s ``X`` block is tested against ``V_XX`` (``chi2(6)``) and its ``Y`` block against
``V_YY``, each at ``alpha / 2``; each block is reported as an estimate +- sigma (``sqrt diag V``).  When the
largest canonical correlation between the two blocks of ``V`` exceeds :data:`SEPARABLE_CORR` the poses
cannot tell a change of ``X`` from one of ``Y`` (too little rotation): the change is reported for ``X`` and
``Y`` together.

Noise.  The stored residual standard deviations (``observability.residual_std_rad_m``, diagonal; their
degrees of freedom ``observability.noise_dof``).  A calibration that does not store them (``--corners``) has the
noise estimated from the new pairs' scatter about their mean residual (diagonal; ``n - 1`` degrees of freedom;
at least 7 pairs); then only the Wald part is tested.  ``noise_source`` says which.

Correlated residuals.  When the calibration found its residuals correlated along its recording (the arm's
pose-dependent errors, a camera's slowly varying bias) it inflated the variance of ``X`` by
``observability.covariance_inflation``.  New pairs of the same rig are taken to be correlated alike: their
information ``H`` counts ``1 / tau`` of its nominal value and the misfit its degrees of freedom ``/ tau``, with
``tau`` that factor.

The stored ``X_std`` counts the camera intrinsics' assumed systematic error (``observability.eye_bias``): a
constant of the camera, shared by the stored and the new poses, so it does not separate them; its part
(``X_std_added``) is taken out of ``Sigma0``.  The JSON holds no cross-covariance of ``X`` and ``Y``:
``Sigma0`` is diagonal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kinhec.geometry import se3
from kinhec.util.distributions import chi2_sf, f_sf
from kinhec.calibrate import pairing as pr
from kinhec.calibrate import solve as sv
from kinhec.calibrate.frames import eye_solver_form, hand_metric
from kinhec.calibrate.option_values import units_pair
from kinhec.calibrate.output import quat_xyzw
from kinhec.calibrate.readers import read_stream, with_quaternion_order
from kinhec.util.errors import InputError
from kinhec.solvers import shah

__all__ = ["StoredCalibration", "CheckResult", "load_calibration", "read_new_pairs", "residuals_and_jacobian",
           "consistency", "check", "update", "SEPARABLE_CORR", "MIN_PAIRS_ATTRIBUTION"]

#: Largest canonical correlation of the X and Y blocks of the change's covariance at which they still separate.
SEPARABLE_CORR = 0.95
#: Fewest new pairs from which the change of X and Y is estimated (and attributed).
MIN_PAIRS_ATTRIBUTION = 3
#: Fewest new pairs from which the noise is estimated when the calibration does not store it.
MIN_PAIRS_NOISE = 7
#: A median residual beyond these is no reading of the stored calibration (wrong files or conventions) [deg, m].
GROSS_ROT_DEG, GROSS_TRANS_M = 30.0, 0.5
#: ... or beyond this share of the eye poses' own median translation (the camera's distance from its board).
GROSS_TRANS_SHARE = 0.5
#: New pairs whose own best X and Y leave a median residual beyond this many noise standard deviations (per
#: component) fit no rigid mount in the stored reading: other directions, units or files.
GROSS_FIT_SIGMA = 10.0


@dataclass
class StoredCalibration:
    """What the check takes from a calibration JSON (see the module documentation)."""

    path: str
    setup: str
    X: np.ndarray
    Y: np.ndarray
    cov: np.ndarray  # (12, 12) diagonal: phi_X, d_X, phi_Y, d_Y
    noise_std: np.ndarray | None  # (6,) rad, m
    noise_dof: float | None
    tau: float  # variance factor of correlated residuals (observability.covariance_inflation; 1: independent)
    scale: float | None
    time_offset_s: float | None
    inverse_domain: bool
    inputs: dict
    raw: dict = field(repr=False, default_factory=dict)


@dataclass
class CheckResult:
    """The verdict of :func:`consistency` (``to_dict`` is the JSON of ``kinhec check --json``)."""

    consistent: bool
    p_value: float
    alpha: float
    n_pairs: int
    test: str  # "wald+misfit", "wald" or "joint"
    noise_source: str  # "stored" or "new pairs"
    stat: dict
    changed: dict  # {"X": {...}, "Y": {...}}
    separable: bool | None
    canonical_corr: float | None
    theta: np.ndarray | None = field(default=None, repr=False)
    theta_cov: np.ndarray | None = field(default=None, repr=False)
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"consistent": bool(self.consistent), "p_value": float(self.p_value), "alpha": float(self.alpha),
                "n_pairs": int(self.n_pairs), "test": self.test, "noise_source": self.noise_source,
                "statistics": self.stat, "changed": self.changed, "separable": self.separable,
                "canonical_corr": self.canonical_corr, "notes": list(self.notes)}  # fmt: skip

    @property
    def named(self) -> str | None:
        """``"X"``, ``"Y"``, ``"X and Y"``, ``"X or Y"`` (not separable or not attributed) or None (consistent)."""
        if self.consistent:
            return None
        moved = [k for k in ("X", "Y") if self.changed.get(k, {}).get("changed")]
        if self.separable is False or not moved:
            return "X or Y"
        return " and ".join(moved)


# --------------------------------------------------------------------------- #
# the stored calibration
# --------------------------------------------------------------------------- #
def _matrix(d: dict, key: str, path) -> np.ndarray:
    try:
        M = np.asarray(d[key], dtype=float)
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{path}: expected a calibration JSON (kinhec calibrate --json) with a 4x4 {key!r}, "
                         f"got {'no' if key not in d else 'a malformed'} {key!r}") from None  # fmt: skip
    if M.shape != (4, 4) or not np.all(np.isfinite(M)):
        raise InputError(f"{path}: expected {key!r} as a finite 4x4 matrix, got shape {M.shape}")
    return M


def _domain_from_notes(notes, setup: str, eye_pose: str | None) -> bool:
    """``inverse_domain`` of the calibration: from its note "residuals compared as T_...", else the file's own."""
    eth = setup == "eye_to_hand"
    for n in notes or []:
        if isinstance(n, str) and n.startswith("residuals compared as "):
            cam_T_target = n.split()[3] == "T_cam_target"
            return cam_T_target != eth
    return (not eth) == ((eye_pose or "cam_T_target") == "cam_T_target")


def load_calibration(path, setup: str | None = None) -> StoredCalibration:
    """Read a calibration JSON (``kinhec calibrate --json``).

    Raises
    ------
    InputError
        Not a file, not JSON, not a calibration of one camera (a rig or a multi-sensor result), without
        standard deviations, or of another setup than ``setup``.
    """
    path = Path(path)
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: expected a calibration JSON, got {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(f"{path}: expected a calibration JSON, got invalid JSON ({exc})") from None
    if not isinstance(d, dict) or "X" not in d or "setup" not in d:
        raise InputError(f"{path}: expected a calibration JSON (kinhec calibrate --json) with 'X', 'Y' and 'setup', "
                         "got another JSON")  # fmt: skip
    st = d.get("setup")
    if st not in ("eye_in_hand", "eye_to_hand") or d.get("rig"):
        raise InputError(f"{path}: expected a calibration of one camera (eye_in_hand or eye_to_hand), got setup {st!r}")
    if setup is not None and setup != st:
        raise InputError(f"{path}: --setup {setup} does not match the stored calibration's setup {st}")
    X, Y = _matrix(d, "X", path), _matrix(d, "Y", path)
    if ((d.get("observability") or {}).get("open_directions") or {}).get("convention"):  # calibrate --partial
        raise InputError(f"{path}: expected a complete calibration, got one whose {', '.join(d['undetermined'])} the "
                         "motion did not determine (--partial: their values are a convention); calibrate again with "
                         "--known for them")
    try:
        X_std = np.asarray(d["X_std"], dtype=float)
        Y_std = np.asarray(d["Y_std"], dtype=float)
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{path}: expected 'X_std' and 'Y_std' (6 numbers each), got none") from None
    if X_std.shape != (6,) or Y_std.shape != (6,) or not np.all(np.isfinite(np.r_[X_std, Y_std])):
        raise InputError(f"{path}: expected 'X_std' and 'Y_std' as 6 finite numbers each")
    obs = d.get("observability") or {}
    var_X = X_std**2
    added = (obs.get("eye_bias") or {}).get("X_std_added")
    if added is not None and len(added) == 6:  # the camera's own systematic: shared by old and new poses
        var_X = np.maximum(var_X - np.asarray(added, dtype=float) ** 2, 0.05 * var_X)
    cov = np.diag(np.r_[var_X, Y_std**2])
    ns = obs.get("residual_std_rad_m")
    noise_std = np.asarray(ns, dtype=float) if ns is not None and len(ns) == 6 else None
    if noise_std is not None and not np.all(np.isfinite(noise_std) & (noise_std > 0)):
        noise_std = None
    nd = obs.get("noise_dof")
    # the variance factor the calibration gave X for residuals correlated along its recording (and pairs that
    # scatter more than the pooled noise): the new pairs, from the same rig, carry that much less information
    tau = float(obs.get("covariance_inflation") or 1.0)
    inputs = dict(d.get("inputs") or {})
    return StoredCalibration(path=str(path), setup=st, X=X, Y=Y, cov=cov, noise_std=noise_std,
                             noise_dof=float(nd) if nd is not None else None, tau=max(1.0, tau),
                             scale=None if d.get("scale") is None else float(d["scale"]),
                             time_offset_s=None if d.get("time_offset_s") is None else float(d["time_offset_s"]),
                             inverse_domain=_domain_from_notes(d.get("notes"), st, inputs.get("eye_pose")),
                             inputs=inputs, raw=d)  # fmt: skip


# --------------------------------------------------------------------------- #
# the new pairs, read as the stored calibration read its files
# --------------------------------------------------------------------------- #
def read_new_pairs(stored: StoredCalibration, hand, eye, *, fmt: str | None = None, hand_pose: str | None = None,
                   eye_pose: str | None = None, units: str | None = None, quat_order: str | None = None):
    """The new pose pairs ``(A, B, t)`` in solver form (``A = T_base_ee``, ``B = T_target_cam`` eye-in-hand,
    ``T_cam_marker`` eye-to-hand; metres), read with the stored calibration's conventions unless given.

    Stamped files are paired by time at the stored clock offset (SLERP of the denser stream), others by order.
    """
    inp = stored.inputs
    fmt = fmt or inp.get("format")
    if fmt not in ("tum", "eth", "csv", "rwhe", "tabb"):  # a bag's, a dataset's, a corner file's: guessed
        fmt = None
    hand_pose = hand_pose or inp.get("hand_pose")
    eye_pose = eye_pose or inp.get("eye_pose")
    units = units or inp.get("units")
    u_hand, u_eye = units_pair(units)
    q = quat_order or inp.get("quat_order")
    hs, es = read_stream(hand, fmt), read_stream(eye, fmt)  # streams already read (a bag's) pass through
    if q:
        parts = [p.strip() for p in str(q).split(",")]
        qh, qe = parts[0], parts[-1]
        if qh not in ("-", "") and hs.fmt in ("tum", "eth") and not isinstance(hand, type(hs)):
            hs = with_quaternion_order(hs, qh)
        if qe not in ("-", "") and es.fmt in ("tum", "eth") and not isinstance(eye, type(es)):
            es = with_quaternion_order(es, qe)
    A = hand_metric(hs, hand_pose, u_hand)
    B = eye_solver_form(es, eye_pose, u_eye, stored.setup)
    where = f"{hs.span()} and {es.span()}"
    if hs.t is not None and es.t is not None:
        off = stored.time_offset_s or 0.0
        pairing = pr.TimePairing(hs, A, es, B, off, 0.0)
        Ap, Bp = pairing.at(off)
        t = np.asarray(pairing.t, dtype=float)
    else:
        pairing = pr.pair_by_order(hs, A, es, B)
        Ap, Bp = pairing.at(None)
        t = np.arange(len(Ap), dtype=float)
    if len(Ap) == 0:
        raise InputError(f"{where}: expected pose pairs, got none")
    return Ap, Bp, t, where


# --------------------------------------------------------------------------- #
# statistics
# --------------------------------------------------------------------------- #
def residuals_and_jacobian(A, B, X, Y, scale=None, inverse_domain: bool = True, step: float = 1e-6):
    """Residuals ``(N, 6)`` of ``A_i X = Y B_i`` and their Jacobian ``(N, 6, 12)`` in ``(phi_X, d_X, phi_Y, d_Y)``
    (right rotation perturbation, additive translation in the parent frame), by central differences."""
    r = sv.residuals(A, B, X, Y, scale, inverse_domain)
    J = np.empty(r.shape + (12,))
    for k in range(12):
        e = np.zeros(12)
        e[k] = step
        rp = sv.residuals(A, B, se3.retract(X, e[:6]), se3.retract(Y, e[6:]), scale, inverse_domain)
        rm = sv.residuals(A, B, se3.retract(X, -e[:6]), se3.retract(Y, -e[6:]), scale, inverse_domain)
        J[:, :, k] = (rp - rm) / (2 * step)
    return r, J


def _canonical_corr(V: np.ndarray) -> float:
    a, b = V[:6, :6], V[6:, 6:]
    La, Lb = np.linalg.cholesky(a), np.linalg.cholesky(b)
    M = np.linalg.solve(La, np.linalg.solve(Lb, V[6:, :6]).T)
    return float(min(1.0, np.linalg.svd(M, compute_uv=False).max()))


def _block(theta, V, sl, alpha) -> dict:
    t, C = theta[sl], V[sl, sl]
    w = float(t @ np.linalg.solve(C, t))
    p = float(chi2_sf(w, 6))
    s = np.sqrt(np.diag(C))
    return {"changed": bool(p < alpha / 2), "p_value": p, "chi2": w,
            "rot_deg": [float(v) for v in np.degrees(t[:3])], "rot_std_deg": [float(v) for v in np.degrees(s[:3])],
            "trans_mm": [float(v) for v in 1000 * t[3:]], "trans_std_mm": [float(v) for v in 1000 * s[3:]],
            "angle_deg": float(np.degrees(np.linalg.norm(t[:3]))),
            "distance_mm": float(1000 * np.linalg.norm(t[3:]))}  # fmt: skip


def consistency(r: np.ndarray, J: np.ndarray, cov0: np.ndarray, noise_std: np.ndarray | None,
                noise_dof: float | None = None, alpha: float = 0.01, tau: float = 1.0) -> CheckResult:
    """The test of the module documentation on residuals ``r`` (N, 6) with Jacobian ``J`` (N, 6, 12).

    ``cov0`` (12, 12): the stored calibration's covariance of ``(phi_X, d_X, phi_Y, d_Y)``; ``noise_std`` (6,):
    the residual standard deviations (None: estimated from ``r``), with ``noise_dof`` degrees of freedom.
    ``theta`` of the result is the estimated ``X``, ``Y`` of the new pairs as a perturbation of the stored ones.
    ``tau``: the variance factor of residuals correlated in pair order (the stored calibration's
    ``observability.covariance_inflation``): the new pairs' information counts ``1 / tau`` as much, and so do the misfit's
    degrees of freedom.
    """
    r = np.asarray(r, dtype=float)
    n = r.shape[0]
    if not 0 < alpha < 1:
        raise InputError(f"alpha: expected a level in (0, 1), got {alpha}")
    notes = []
    if noise_std is None:
        if n < MIN_PAIRS_NOISE:
            raise InputError(f"the calibration stores no noise level, and {n} new pairs are too few to estimate it "
                             f"(expected at least {MIN_PAIRS_NOISE})")  # fmt: skip
        noise_std = r.std(axis=0, ddof=1)
        noise_dof, source = float(n - 1), "new pairs"
        notes.append("noise estimated from the new pairs' scatter about their mean residual (the calibration "
                     "stores none)")  # fmt: skip
    else:
        source = "stored"
    Sinv = 1.0 / np.asarray(noise_std, dtype=float) ** 2
    Jw = J * Sinv[None, :, None]
    H = np.einsum("nik,nil->kl", Jw, J)
    g = np.einsum("nik,ni->k", Jw, r)
    rr = float(np.einsum("ni,i,ni->", r, Sinv, r))
    cond = np.linalg.cond(H) if n >= MIN_PAIRS_ATTRIBUTION else np.inf
    stat: dict = {}
    changed: dict = {"X": {"changed": None}, "Y": {"changed": None}}
    theta = V = None
    separable = rho = None
    if n < MIN_PAIRS_ATTRIBUTION or not np.isfinite(cond) or cond > 1e12:
        # joint chi-square of the stacked residuals: r^T (I (x) S + J Sigma0 J^T)^-1 r, by Woodbury
        M = np.linalg.inv(cov0 + 1e-30 * np.eye(12)) + H
        q = rr - float(g @ np.linalg.solve(M, g))
        df = 6 * n
        p = float(chi2_sf(q, df))
        test = "joint"
        stat["joint"] = {"chi2": q, "dof": df, "p_value": p}
        notes.append(f"{n} new pair{'s' if n != 1 else ''}: the joint test only; which of X and Y moved is not "
                     "estimated")  # fmt: skip
    else:
        Hinv = np.linalg.inv(H)
        theta = -Hinv @ g
        V = tau * Hinv + cov0
        w = float(theta @ np.linalg.solve(V, theta))
        p_w = float(chi2_sf(w, 12))
        stat["wald"] = {"chi2": w, "dof": 12, "p_value": p_w}
        q = rr - float(g @ Hinv @ g)
        d1 = (6 * n - 12) / tau
        if source == "stored" and d1 > 0:
            d2 = noise_dof if noise_dof is not None and np.isfinite(noise_dof) and noise_dof > 0 else np.inf
            f = q / tau / d1
            p_q = float(f_sf(f, d1, d2)) if np.isfinite(d2) else float(chi2_sf(q / tau, d1))
            stat["misfit"] = {"chi2": q, "dof": d1, "noise_dof": None if not np.isfinite(d2) else float(d2),
                              "ratio": f, "p_value": p_q}  # fmt: skip
            p = min(1.0, 2 * min(p_w, p_q))
            test = "wald+misfit"
        else:
            p = p_w
            test = "wald"
        rho = _canonical_corr(V)
        separable = rho <= SEPARABLE_CORR
        changed = {"X": _block(theta, V, slice(0, 6), alpha), "Y": _block(theta, V, slice(6, 12), alpha)}
        if not separable:
            notes.append(f"these poses do not separate a change of X from one of Y (canonical correlation {rho:.3f}): "
                         "record poses spread over rotations about several axes")  # fmt: skip
    return CheckResult(consistent=bool(p >= alpha), p_value=float(p), alpha=float(alpha), n_pairs=n, test=test,
                       noise_source=source, stat=stat, changed=changed, separable=separable,
                       canonical_corr=rho, theta=theta, theta_cov=V, notes=notes)  # fmt: skip


def check(calibration, hand, eye, *, alpha: float = 0.01, setup: str | None = None, fmt: str | None = None,
          hand_pose: str | None = None, eye_pose: str | None = None, units: str | None = None,
          quat_order: str | None = None):
    """Test new pose files against a stored calibration; returns ``(CheckResult, StoredCalibration, (A, B))``.

    Raises
    ------
    InputError
        A bad calibration JSON or pose file, another setup, no pairs, or files whose residuals fit no reading
        of the stored calibration (median beyond 30 deg or 0.5 m).
    """
    stored = load_calibration(calibration, setup)
    A, B, _, where = read_new_pairs(stored, hand, eye, fmt=fmt, hand_pose=hand_pose, eye_pose=eye_pose,
                                    units=units, quat_order=quat_order)  # fmt: skip
    r, J = residuals_and_jacobian(A, B, stored.X, stored.Y, stored.scale, stored.inverse_domain)
    rot = np.degrees(np.median(np.linalg.norm(r[:, :3], axis=1)))
    tr = float(np.median(np.linalg.norm(r[:, 3:], axis=1)))
    # (also a residual as long as the eye poses' own translations: a camera 0.4 m from its board read in millimetres
    # misses by 0.4 m, below the absolute limit)
    eye_len = float(np.median(np.linalg.norm(B[:, :3, 3], axis=1)))
    if rot > GROSS_ROT_DEG or tr > GROSS_TRANS_M or tr > GROSS_TRANS_SHARE * eye_len:
        raise InputError(f"{where}: these files fit no reading of {stored.path} (median residual {rot:.1f} deg / "
                         f"{1000 * tr:.0f} mm): other files, or other directions or units (--hand-pose, --eye-pose, "
                         "--units)")  # fmt: skip
    fit = _own_fit(A, B, stored)
    if fit is not None and fit[0] > GROSS_FIT_SIGMA**2:
        raise InputError(f"{where}: read as {stored.path} read its files ({_reading(stored, hand_pose, eye_pose, units)}), "
                         f"no X and Y fit these pairs (median residual {fit[1]:.2f} deg / {fit[2]:.1f} mm, "
                         f"{np.sqrt(fit[0]):.0f} times the calibration's noise): other directions or units "
                         "(--hand-pose, --eye-pose, --units), or pairs that do not belong together")  # fmt: skip
    res = consistency(r, J, stored.cov, stored.noise_std, stored.noise_dof, alpha, stored.tau)
    if stored.tau > 1.0:
        res.notes.append(f"the calibration found its residuals correlated along the recording (variance factor "
                         f"{stored.tau:.3g}): the new pairs count as {len(A) / stored.tau:.3g} independent ones")
    return res, stored, (A, B)


def _reading(stored: StoredCalibration, hand_pose, eye_pose, units) -> str:
    inp = stored.inputs
    return (f"--hand-pose {hand_pose or inp.get('hand_pose') or 'base_T_ee'}, --eye-pose "
            f"{eye_pose or inp.get('eye_pose') or 'cam_T_target'}, --units {units or inp.get('units') or 'm'}")


def _own_fit(A, B, stored: StoredCalibration, iterations: int = 8):
    """The new pairs' own X and Y (Shah's, then Gauss-Newton): median of ``r^T S^-1 r / 6`` under the stored noise,
    and the median rotation [deg] and translation [mm] residuals; None below 3 pairs or without a stored noise."""
    if len(A) < MIN_PAIRS_ATTRIBUTION or stored.noise_std is None:
        return None
    try:
        X, Y = shah(A, B)
    except Exception:  # noqa: BLE001 -- a degenerate motion: judged by the stored X, Y instead
        X, Y = stored.X, stored.Y
    Sinv = 1.0 / stored.noise_std**2
    for _ in range(iterations):
        r, J = residuals_and_jacobian(A, B, X, Y, stored.scale, stored.inverse_domain)
        Jw = J * Sinv[None, :, None]
        step = -np.linalg.lstsq(np.einsum("nik,nil->kl", Jw, J), np.einsum("nik,ni->k", Jw, r), rcond=None)[0]
        X, Y = se3.retract(X, step[:6]), se3.retract(Y, step[6:])
    r = sv.residuals(A, B, X, Y, stored.scale, stored.inverse_domain)
    d2 = np.einsum("ni,i,ni->n", r, Sinv, r) / 6
    return (float(np.median(d2)), float(np.degrees(np.median(np.linalg.norm(r[:, :3], axis=1)))),
            float(1000 * np.median(np.linalg.norm(r[:, 3:], axis=1))))


def update(stored: StoredCalibration, res: CheckResult, A, B, iterations: int = 10) -> dict:
    """The calibration JSON re-estimated with the new pairs.

    The stored JSON holds no pose pairs, so ``X`` and ``Y`` are re-estimated from the new pairs with the stored
    calibration as a Gaussian prior (``Sigma0``), except for what the check found changed (``X``, ``Y``, or both
    when it cannot tell them apart), which the new pairs alone determine.  Gauss-Newton on the whitened residuals
    under the stored noise (or the new pairs' own).
    """
    d = json.loads(json.dumps(stored.raw))
    noise = stored.noise_std if stored.noise_std is not None else \
        np.std(sv.residuals(A, B, stored.X, stored.Y, stored.scale, stored.inverse_domain), axis=0, ddof=1)
    Sinv = 1.0 / noise**2 / stored.tau  # correlated residuals: each pair counts 1 / tau
    named = res.named
    prior_on = {"X": True, "Y": True}
    if named is not None:
        for k in ("X", "Y"):
            if k in named:
                prior_on[k] = False
    Pinv = np.zeros((12, 12))
    for k, sl in (("X", slice(0, 6)), ("Y", slice(6, 12))):
        if prior_on[k]:
            C0 = stored.cov[sl, sl]
            held = np.diag(C0) == 0.0  # a component stated with --known (kinhec.calibrate.reduced_dof): held
            if held.any():
                C0 = C0 + np.diag(np.where(held, 1e-12 * max(float(np.diag(C0).max()), 1e-300), 0.0))
            Pinv[sl, sl] = np.linalg.inv(C0)
    X, Y = stored.X.copy(), stored.Y.copy()
    theta = np.zeros(12)  # total perturbation from the stored X, Y (the prior's mean is 0)
    for _ in range(iterations):
        r, J = residuals_and_jacobian(A, B, X, Y, stored.scale, stored.inverse_domain)
        Jw = J * Sinv[None, :, None]
        H = np.einsum("nik,nil->kl", Jw, J) + Pinv
        g = np.einsum("nik,ni->k", Jw, r) + Pinv @ theta
        step = -np.linalg.lstsq(H, g, rcond=None)[0]
        X, Y = se3.retract(X, step[:6]), se3.retract(Y, step[6:])
        theta = theta + step
        if np.abs(step).max() < 1e-10:
            break
    r, J = residuals_and_jacobian(A, B, X, Y, stored.scale, stored.inverse_domain)
    Jw = J * Sinv[None, :, None]
    C = np.linalg.pinv(np.einsum("nik,nil->kl", Jw, J) + Pinv)
    std = np.sqrt(np.maximum(np.diag(C), 0.0))
    mats = {"X": X, "Y": Y}
    for k, sl in (("X", slice(0, 6)), ("Y", slice(6, 12))):
        T = mats[k]
        d[k] = [[float(v) for v in row] for row in T]
        d[f"{k}_quat_xyzw"] = quat_xyzw(T)
        d[f"{k}_t_m"] = [float(v) for v in T[:3, 3]]
        d[f"{k}_std"] = [float(v) for v in std[sl]]
        if isinstance(d.get("sigma"), dict):
            d["sigma"][k] = {"rot_deg": [float(v) for v in np.degrees(std[sl][:3])],
                             "trans_mm": [float(v) for v in 1000 * std[sl][3:]]}
    obs = d.setdefault("observability", {})
    obs.pop("eye_bias", None)  # the std above count the new pairs and the prior only
    prior = [k for k in ("X", "Y") if prior_on[k]]
    how = ("from the new pairs with the stored calibration as a prior" + (f" on {' and '.join(prior)}" if prior else "")
           + ("" if len(prior) == 2 else f" ({' and '.join(k for k in ('X', 'Y') if not prior_on[k])} changed: the new "
              "pairs alone)") + "; the stored calibration holds no pose pairs to re-estimate with")  # fmt: skip
    d["update"] = {"method": "prior", "prior_on": prior, "n_new_pairs": int(len(A)), "from": stored.path,
                   "check": res.to_dict(), "how": how}  # fmt: skip
    d.setdefault("notes", []).append(f"updated by kinhec check: {how}")
    return d


def summary_lines(res: CheckResult) -> list[str]:
    """What ``kinhec check`` prints: the verdict, the statistics, the change of ``X`` and ``Y`` (estimate +- sigma)."""
    f3 = lambda v: " ".join(f"{x:+.3g}" for x in v)  # noqa: E731
    verdict = ("consistent with the calibration" if res.consistent else f"CHANGED: {res.named} moved"
               if res.named != "X or Y" else "CHANGED: the new pairs do not fit the calibration (X or Y, not told apart)")
    lines = [f"{verdict} (p = {res.p_value:.3g}, alpha = {res.alpha:g}, {res.n_pairs} new pairs, test {res.test}, "
             f"noise {res.noise_source})"]  # fmt: skip
    for k, v in res.stat.items():
        lines.append(f"  {k}: chi2 {v['chi2']:.4g} on {v['dof']:.4g} dof, p = {v['p_value']:.3g}")
    for k in ("X", "Y"):
        c = res.changed.get(k) or {}
        if c.get("changed") is None:
            continue
        lines.append(f"  change of {k}: rot_deg {f3(c['rot_deg'])} (+- {' '.join(f'{x:.2g}' for x in c['rot_std_deg'])})  "
                     f"trans_mm {f3(c['trans_mm'])} (+- {' '.join(f'{x:.2g}' for x in c['trans_std_mm'])})  "
                     f"p = {c['p_value']:.3g}{'  CHANGED' if c['changed'] else ''}")  # fmt: skip
    for n in res.notes:
        lines.append(f"note: {n}")
    return lines
