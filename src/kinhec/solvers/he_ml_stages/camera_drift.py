"""Step 5 of ``he_ml``: a camera error that is a random walk (visual odometry) -- ``X`` from the motions.

Visual odometry integrates its frame-to-frame errors, so the camera error of a
pose is a random walk in the reference's frame: the residuals of neighbouring
pairs are nearly equal (lag-1 autocorrelation 0.94-0.98 on the medium tier's
``vo_drift`` sequences, at most 0.45 on independent noise).  From 8 pairs on,
with ``drift="auto"``, an autocorrelation above 0.3 at the pair model's
solution brings a fit of ``X`` (and ``s``) to the motions between consecutive
pairs (all of them), whose errors are the independent increments, kept when
the autocorrelation at its own solution is above :data:`DRIFT_LAG1`:
``A_k X = X B_k`` with right residuals ``log(inv(inv(X) A_k X) B_k)`` in the
camera frame (camera translations scaled by ``s``), rotation and translation
variances from the residuals and Student-t weights (``nu = 4``).  ``Y`` then
follows from ``X`` as the mean of ``A_i X inv(B_i)``.
"""

from __future__ import annotations

import math

import numpy as np

from kinhec.geometry import se3
from kinhec.solvers import pair_model as pm
from kinhec.solvers.gauss_newton import damped_gauss_newton, levenberg_marquardt
from kinhec.solvers.he_ml_stages.model import ROBUST_MIN_PAIRS, WLS_COST_TOL, exp6, mv, predict, project_so3, residuals
from kinhec.solvers.he_ml_stages.variance_components import VAR_FLOOR

#: Lag-1 autocorrelation of the pair residuals (time order, each component scaled by its RMS), at the motion
#: fit's solution, above which ``drift="auto"`` keeps ``X`` from the motions (a random-walk camera error).
DRIFT_LAG1 = 0.7
#: Lag-1 autocorrelation at the pair model's solution above which the motion fit is tried (and kept when the
#: autocorrelation at its own solution exceeds :data:`DRIFT_LAG1`).
_DRIFT_SUSPECT = 0.3
#: Student-t degrees of freedom of the weights of the motion fit.
_DRIFT_NU = 4.0
_DRIFT_ROUNDS = 4
#: Largest log-scale a trial step of the motion fit may take (a factor of a million either way): on motions
#: that are rounding errors (repeated rows written with different last bits) the scale has no information and a
#: trial step could leave the range of ``exp``; clamped, the step is only rejected.
_LOG_SCALE_BOUND = math.log(1e6)
#: Farthest the motion fit's log scale may run from the pair model's before the fit is dropped (a factor of 2).
_RUN_OFF = math.log(2.0)


def lag1(r: np.ndarray, inl: np.ndarray) -> float:
    """Lag-1 autocorrelation of the residuals of consecutive inlier pairs (time order), each component scaled
    by its RMS.

    The residuals are right errors of ``C = T_cam_target``, i.e. in the reference's frame, where the error of
    visual odometry is a plain random walk; whitening them pair by pair would turn each into its own camera
    frame and hide the walk when the camera turns between pairs.
    """
    e = r[inl]
    e = e / np.maximum(np.sqrt(np.mean(e * e, axis=0)), 1e-300)
    den = float(np.sum(e * e))
    return float(np.sum(e[:-1] * e[1:]) / den) if den > 0 else 0.0


def motion_fit(A, B, X0, ls0, with_scale):
    """``X`` (and ``log s``) from the motions between consecutive poses: ``A_k X = X B_k``.

    Returns ``X``, ``log s``, the covariance of ``(dx[, log s])`` and the per-motion rotation and translation
    standard deviations; None when the log scale runs more than :data:`_RUN_OFF` from ``ls0`` (or off the
    numbers): a scale the motions do not determine, which a fit drives towards 0, where every predicted
    translation vanishes.
    """
    Am = se3.invert_transform(A[:-1], check=False) @ A[1:]
    Bm = se3.invert_transform(B[:-1], check=False) @ B[1:]
    Ad_Bm_inv = pm.adjoint(se3.invert_transform(Bm, check=False))
    P = 7 if with_scale else 6
    k = Am.shape[0]
    sig = np.ones(6)
    w = np.ones(k)
    X, ls = X0.copy(), ls0

    def predicted(Xp, lsp):
        # translations scaled by s: (R, t) -> (R, s t) is an automorphism of SE(3), so the scaled prediction
        # is inv(X_s) A_s X_s with X_s, A_s scaled alike
        Bp = se3.invert_transform(Xp, check=False) @ Am @ Xp
        Bp[:, :3, 3] *= math.exp(min(max(lsp, -_LOG_SCALE_BOUND), _LOG_SCALE_BOUND))
        return Bp

    last = {}  # the prediction at the last point: the Jacobian is asked for where the residuals were

    def prediction(p, X_, ls_):
        """``log s``, the predicted motions and ``inv(predicted) Bm`` at the step ``p`` from ``(X_, ls_)``."""
        key = (p.tobytes(), id(X_), ls_)
        if last.get("key") != key:
            Xp = X_ @ exp6(p[:6])
            lsp = ls_ + (p[6] if with_scale else 0.0)
            Bp = predicted(Xp, lsp)
            last.update(key=key, X=X_, state=(lsp, Bp, se3.invert_transform(Bp, check=False) @ Bm))
        return last["state"]

    def motion_residuals(p, X_, ls_):
        r = pm.fast_se3_log(prediction(p, X_, ls_)[2])
        r[:, 3:] *= math.exp(-ls_)  # metric units at the current scale (see model.residuals)
        return r

    def jacobian(p, X_, ls_):
        lsp, Bp, E = prediction(p, X_, ls_)
        s = math.exp(lsp)
        # d r / d dx = (Ad(inv Bm) - Ad(inv E)) D_s, D_s = diag(I, s I) (first order in the residual)
        J = np.zeros((k, 6, P))
        Ad_E_inv = pm.adjoint(se3.invert_transform(E, check=False))
        J[:, :, :6] = Ad_Bm_inv - Ad_E_inv
        J[:, :, 3:6] *= s
        if with_scale:
            v = np.zeros((k, 6))
            v[:, 3:] = np.einsum("kji,kj->ki", Bp[:, :3, :3], Bp[:, :3, 3])  # R^T t of the prediction
            J[:, :, 6] = -mv(Ad_E_inv, v)
        J[:, 3:, :] *= math.exp(-ls_)
        return J

    for rnd in range(_DRIFT_ROUNDS):
        sw = np.sqrt(w)[:, None] / sig
        X_, ls_ = X, ls
        fun = lambda p: (sw * motion_residuals(p, X_, ls_)).ravel()  # noqa: E731
        jac = lambda p: (sw[:, :, None] * jacobian(p, X_, ls_)).reshape(-1, P)  # noqa: E731
        # the first round in raw units, to MINPACK's relative tolerance; the later ones whitened by the levels of
        # the round before, where a chi-square tolerance applies
        if rnd == 0:
            p = levenberg_marquardt(fun, jac, P, 1e-10, 50)
        else:
            p = damped_gauss_newton(fun, jac, P, WLS_COST_TOL, 50)
        if not (np.all(np.isfinite(p)) and abs(ls_ + (p[6] if with_scale else 0.0) - ls0) <= _RUN_OFF):
            return None  # the scale ran off: the motions determine no scale (see the caller)
        X = X_ @ exp6(p[:6])
        X[:3, :3] = project_so3(X[:3, :3])
        ls = ls_ + (p[6] if with_scale else 0.0)
        r = motion_residuals(np.zeros(P), X, ls)
        var_r = max(float(np.sum(w * np.sum(r[:, :3] ** 2, axis=1)) / (3.0 * np.sum(w))), VAR_FLOOR)
        var_t = max(float(np.sum(w * np.sum(r[:, 3:] ** 2, axis=1)) / (3.0 * np.sum(w))), VAR_FLOOR)
        sig = np.sqrt(np.array([var_r] * 3 + [var_t] * 3))
        d2 = np.sum((r / sig) ** 2, axis=1)
        w = (_DRIFT_NU + 6.0) / (_DRIFT_NU + d2)  # no gate: increments over uneven keyframe gaps vary in size
    J = jacobian(np.zeros(P), X, ls) / sig[None, :, None]
    f_nu = (_DRIFT_NU + 6.0) / (_DRIFT_NU + 8.0)
    H = f_nu * np.einsum("kip,kiq->pq", J, J)
    cov = np.linalg.pinv(H, hermitian=True) * 6.0 * k / max(6.0 * k - P, 1.0)
    return X, ls, cov, float(sig[0]), float(sig[3])


def y_from_x(A, B, X, ls):
    """``Y`` as the mean of ``A_i X inv(B_i)`` (camera translations divided by ``s``): rotations by the
    chordal mean, translations by the average."""
    Bs = B.copy()
    Bs[:, :3, 3] *= math.exp(-ls)
    Yi = A @ X @ se3.invert_transform(Bs, check=False)
    Y = np.eye(4)
    Y[:3, :3] = project_so3(Yi[:, :3, :3].sum(axis=0))
    Y[:3, 3] = Yi[:, :3, 3].mean(axis=0)
    return Y


def fit_on_motions(fit, drift) -> None:
    """The camera-drift stage on ``fit`` (a :class:`~.state.FitState` after the pair model and the scale).

    Sets ``info["residual_lag1"]`` (from 8 pairs on, or with ``drift=True``); when the residuals show a
    random walk (``drift="auto"``) or always (``drift=True``), ``X`` and ``log s`` come from the motions and
    ``Y`` from ``X``: then ``motion_cov`` is set, a drifting scale's offsets are dropped and
    ``info["drift"]`` holds the per-motion rotation [rad] and translation [m] standard deviations.
    """
    A, configuration, n = fit.A, fit.configuration, fit.n
    if not (n >= ROBUST_MIN_PAIRS or drift is True):
        return
    C_use = fit.camera_poses_used()
    info = fit.info
    info["residual_lag1"] = lag = lag1(residuals(C_use, predict(A, fit.X, fit.Y, configuration), fit.ls, fit.ls,
                                                 fit.q), fit.inl)  # fmt: skip
    if not (drift is True or (drift == "auto" and lag > _DRIFT_SUSPECT)):
        return
    # every pair (the gate of the pair model does not apply to a random walk), mirrors repaired, in the
    # caller's B form (camera_poses is its own inverse map)
    Bi = pm.camera_poses(C_use, configuration)
    motion = motion_fit(A, Bi, fit.X, fit.ls, fit.with_scale)
    if motion is None:  # the motions determine no scale: the pair model's fit stands
        info["camera_drift_diverged"] = True
        return
    Xm, lsm, cov_x, s_rot, s_trans = motion
    Ym = y_from_x(A, Bi, Xm, lsm)
    # a wrong X absorbs part of a walk into pose-dependent residuals: judge the walk at the motion fit
    lag_m = lag1(residuals(C_use, predict(A, Xm, Ym, configuration), lsm), np.ones(n, dtype=bool))
    if drift is True or lag_m > DRIFT_LAG1:
        fit.X, fit.Y, fit.ls = Xm, Ym, lsm
        fit.motion_cov = cov_x
        fit.q = fit.drift_cov = None
        info.pop("scale_drift_std", None)
        info.pop("scale_offsets", None)
        info["residual_lag1"] = lag_m
        info["drift"] = {"rot_std_rad": s_rot, "trans_std_m": s_trans}
