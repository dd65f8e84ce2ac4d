"""Held-out accuracy in pixels: every view of a ``--corners`` / ``--images`` calibration left out in turn.

The corner path (:mod:`kinhec.calibrate.corners`) ends in the joint fit of
:func:`kinhec.calibrate.bundle.refine_bundle`: ``X``, ``Y``, the intrinsics it
estimates and the board's scale ``log b`` (the *shared* unknowns ``theta``),
and every view's flange twist ``xi_i`` under its prior, on the whitened pixels.
Leave view ``v`` out (its pixels and its twist), fit the rest, and predict the
view's corners by projecting the target through the chain of its robot pose
*as measured* (twist zero) with the ``X``, ``Y``, intrinsics and board scale
fitted without it.

First order, from the fit's own Jacobian blocks
-----------------------------------------------
Each view's twist appears in its own rows only, so eliminating it (a Schur
complement on the view's 6 x 6 block) gives the view's contribution to the
normal equations of the shared unknowns::

    H_v = S_v^T (I - P_v) S_v,   g_v = S_v^T (I - P_v) r_v,   P_v = B_v (B_v^T B_v)^-1 B_v^T

(``S_v``, ``B_v``: the whitened Jacobian of the view's rows -- its pixels and
its twist prior -- on the shared unknowns and on its twist; ``r_v`` its
residuals).  With ``H = sum_v H_v + H_prior`` and ``g`` likewise, leaving ``v``
out moves the shared unknowns by

    delta_v = -H_{-v}^-1 (g - g_v),   H_{-v} = H - H_v

-- the deletion formula of least squares on the reduced normal equations,
exact to first order (Gauss-Newton at the solution; ``g`` is zero at a
converged fit and is kept for the last iteration's remainder).  The noise
levels (pixel, robot) stay at the fit's: one view of many moves them to
second order.  The held-out view's whitened pixel errors are then

    e_v = r0_v + S_v,pix delta_v

with ``r0_v`` its residuals at the fit with its twist zero.  No refit is run:
the cost is one more evaluation of the residuals and a ``P x P`` solve per view
(``P <= 22``).

What sigma predicts
-------------------
The held-out errors have the predictive covariance (whitened; times
``s_px^2`` in pixels)

    C_v = I + S_v,pix K_v S_v,pix^T + B_v,pix Sigma_xi B_v,pix^T

-- the pixel noise the fit estimated, the leave-out fit's covariance
``K_v = H_{-v}^-1`` of the shared unknowns (intrinsics and board scale
marginalised) propagated to the view's corners, and the robot's pose error at
the held-out view (``Sigma_xi = diag(sigma_rot^2 I, sigma_trans^2 I)`` as
estimated: the view's robot pose is taken as measured, so its error enters
the prediction).  ``C_v`` is the identity plus a rank ``P + 6`` term: its
inverse, trace and ``trace(C_v^2)`` come from that term alone (Woodbury).

The view is inside its 95 % region when its sum of squared errors
``|e_v|^2`` (its mean error over its corners, in whitened units) is below the
95 % quantile of its predicted distribution: a quadratic form in Gaussian
errors with mean ``trace C_v`` and variance ``2 trace C_v^2``, as a scaled
chi-square (Satterthwaite).  This tests the view's pixel error as a user sees
it: where the robot's pose error dominates (real arms: a few pixels against
a twentieth of a pixel of corner noise) it tests the pose part of the
prediction.  The chi-square on the view's ``2 m_v`` corner coordinates,
``e_v^T C_v^-1 e_v`` against ``2 m_v F_{0.95}(2 m_v, nu)`` (``nu`` the pixel
noise's degrees of freedom), is computed too (``d2``, ``q95``) but not
reported: with hundreds of coordinates per view it weighs every corner alike
and, on real corners, tests little but whether every view's corner noise has
the one level the fit estimated (on kuka_1 59 % of the views pass it while
their RMS is predicted to 0.3 %).  ``coverage95_px`` is the share of held-out
views inside.

The held-out RMS is per corner, ``sqrt(sum_v |e_v|^2 / sum_v m_v)`` [px] (the
Euclidean error of a corner, as OpenCV's reprojection RMS), beside its
prediction ``s_px sqrt(sum_v trace C_v / sum_v m_v)``; the sum of squares is a
quadratic form in Gaussian errors with mean ``sum trace C_v`` and variance
``2 sum trace C_v^2`` (views independent), whence its 95 % interval and 99 %
bound as a scaled chi-square (Satterthwaite, as
:mod:`kinhec.calibrate.held_out`).  A held-out RMS above the 99 % bound is a
warning (:func:`kinhec.calibrate.held_out.warning`).
"""

from __future__ import annotations

import numpy as np

from kinhec.calibrate import held_out as ho
from kinhec.geometry import se3
from kinhec.solvers import pair_model as pm
from kinhec.solvers.reprojection import chain_poses
from kinhec.util.distributions import chi2_ppf

__all__ = ["pose_maps", "leave_one_view_out", "assess_views"]


def _scaled_chi2(mean: float, var: float, level) -> np.ndarray:
    """Quantile(s) ``level`` of the scaled chi-square with this mean and variance (Satterthwaite)."""

    dof = 2.0 * mean * mean / var
    return mean / dof * chi2_ppf(np.asarray(level, dtype=np.float64), dof)


def _sym_inverse(H: np.ndarray) -> np.ndarray | None:
    """Inverse of a symmetric positive definite ``H`` on its diagonally scaled form; None when singular."""
    d = np.diagonal(H)
    if not (np.isfinite(H).all() and (d > 0).all()):  # an unknown the other views leave undetermined
        return None
    s = np.sqrt(d)
    Hn = 0.5 * (H + H.T) / np.outer(s, s)
    w = np.linalg.eigvalsh(Hn)
    if not w[0] > 1e-12 * w[-1]:
        return None
    return np.linalg.inv(Hn) / np.outer(s, s)


def _view_blocks(system):
    """Per view: its rows (pixels then twist prior), shared columns, twist columns, and the count of pixel rows."""
    J = system.jacobian
    s = J.structure
    ok = J.rows
    view = s.row_view[ok]
    order = np.argsort(view, kind="stable")
    bounds = np.searchsorted(view[order], np.arange(s.n_views + 1))
    for v in range(s.n_views):
        idx = order[bounds[v] : bounds[v + 1]]
        rows = ok[idx]
        yield rows, J.shared[rows], J.blocks[idx], int(np.sum(rows < system.n_pix))


def pose_maps(A: np.ndarray, X: np.ndarray, Y: np.ndarray, configuration: str, h: float = 1e-6) -> np.ndarray:
    """``d rho / d xi`` (N, 6, 6) at every view: the eye pose's error ``rho = log(inv(C_pred) C)`` per flange twist
    ``xi`` of ``A exp(xi)`` (rotation then translation, both), by central differences through the chain."""
    C0inv = se3.invert_transform(chain_poses(A, X, Y, configuration), check=False)
    M = np.empty((A.shape[0], 6, 6))
    for k in range(6):
        d = np.zeros(6)
        d[k] = h
        Cp = chain_poses(A @ se3.se3_exp_unchecked(d), X, Y, configuration)
        Cm = chain_poses(A @ se3.se3_exp_unchecked(-d), X, Y, configuration)
        M[:, :, k] = (pm.fast_se3_log(C0inv @ Cp) - pm.fast_se3_log(C0inv @ Cm)) / (2.0 * h)
    return M


def leave_one_view_out(system, maps: np.ndarray | None = None) -> dict:
    """First-order leave-one-view-out prediction errors of a :class:`~kinhec.calibrate.bundle.BundleSystem`.

    Returns
    -------
    dict
        ``e`` (list of (2 m_v,) whitened held-out pixel errors, prediction minus observation), ``ss`` (n_views,)
        ``|e_v|^2`` and ``q95_ss`` their 95 % quantiles, ``d2`` (n_views,) ``e^T C^-1 e`` and ``q95`` their 95 %
        quantiles (see the module documentation), ``trace`` and ``trace2`` (n_views,) ``trace C_v``
        and ``trace C_v^2``, ``m`` (n_views,) corners per view, ``ok`` (n_views,) views whose leave-out fit is
        determined, ``delta`` (n_views, P) the leave-out moves of the shared unknowns, ``nu`` the pixel noise's
        degrees of freedom.  With ``maps`` (:func:`pose_maps` of the views, in the system's order) also ``rho``
        (n_views, 6) every held-out view's eye-pose error [rad, m] and ``rho_cov`` (n_views, 6, 6) its predicted
        covariance (module documentation, "In millimetres and degrees").
    """
    from scipy import special

    J, r = system.jacobian, system.residuals
    st = J.structure
    P, N = st.n_shared, st.n_views
    prior = np.flatnonzero(st.row_view < 0)
    H = J.shared[prior].T @ J.shared[prior]
    g = J.shared[prior].T @ r[prior]
    parts = []
    for rows, S, B, npx in _view_blocks(system):
        Hbb = B.T @ B
        M = np.linalg.solve(Hbb, np.column_stack([B.T @ S, B.T @ r[rows]]))
        Hv = S.T @ S - (S.T @ B) @ M[:, :P]
        gv = S.T @ r[rows] - (S.T @ B) @ M[:, P]
        H, g = H + Hv, g + gv
        parts.append((rows, S, B, npx, Hv, gv))
    nu = max(system.n_pix - st.n_params, 1)
    sig = np.asarray(system.robot_std, dtype=np.float64)
    out = {k: np.zeros(N) for k in ("d2", "q95", "ss", "q95_ss", "trace", "trace2", "m")}
    out.update(e=[], ok=np.zeros(N, dtype=bool), delta=np.zeros((N, P)), nu=float(nu), rho=np.zeros((N, 6)),
               rho_cov=np.zeros((N, 6, 6)))
    for v, (rows, S, B, npx, Hv, gv) in enumerate(parts):
        pix = rows[:npx]
        out["m"][v] = npx / 2
        K = _sym_inverse(H - Hv)
        if K is None or npx == 0:
            out["e"].append(np.zeros(npx))
            continue
        delta = -K @ (g - gv)
        e = system.residuals_measured[pix] + S[:npx] @ delta
        # C = I + U U^T with U = [S_pix K^1/2, B_pix Sigma^1/2]
        w, V = np.linalg.eigh(0.5 * (K + K.T))
        U = np.concatenate([S[:npx] @ (V * np.sqrt(np.clip(w, 0.0, None))), B[:npx] * sig], axis=1)
        G = U.T @ U
        Ue = U.T @ e
        out["d2"][v] = float(e @ e - Ue @ np.linalg.solve(np.eye(G.shape[0]) + G, Ue))
        out["trace"][v] = npx + np.trace(G)
        out["trace2"][v] = npx + 2.0 * np.trace(G) + float(np.sum(G * G))
        out["q95"][v] = float(npx * special.fdtri(npx, nu, ho.LEVEL))
        out["ss"][v] = float(e @ e)
        tr, tr2 = out["trace"][v], out["trace2"][v]
        out["q95_ss"][v] = float(_scaled_chi2(tr, 2.0 * tr2, ho.LEVEL))
        out["delta"][v] = delta
        if maps is not None:  # the same errors as an eye pose: the camera pose that explains them
            Bp = B[:npx]
            BtB = Bp.T @ Bp
            BplusU = np.linalg.solve(BtB, Bp.T @ U)
            out["rho"][v] = -maps[v] @ np.linalg.solve(BtB, Bp.T @ e)
            out["rho_cov"][v] = maps[v] @ (np.linalg.inv(BtB) + BplusU @ BplusU.T) @ maps[v].T
        out["ok"][v] = True
        out["e"].append(e)
    return out


def _pose_figures(lo: dict, ok: np.ndarray) -> dict:
    """The held-out eye poses' RMS [mm, deg] beside their prediction, interval, 99 % bound and 95 % coverage."""

    rho, C = lo["rho"][ok], lo["rho_cov"][ok]
    nv = rho.shape[0]
    out = {}
    for name, sl, unit in (("mm", slice(3, 6), 1000.0), ("deg", slice(0, 3), 180.0 / np.pi)):
        Cs = C[:, sl, sl]
        mean, var = float(np.trace(Cs, axis1=1, axis2=2).sum()), 2.0 * float(np.sum(Cs * Cs))
        a, b = ho.rms_interval(mean, var, nv, ho.LEVEL)
        out[f"rms_{name}"] = float(unit * np.sqrt(np.mean(np.sum(rho[:, sl] ** 2, axis=1))))
        out[f"predicted_rms_{name}"] = float(unit * np.sqrt(mean / nv))
        out[f"predicted_interval95_{name}"] = [float(unit * a), float(unit * b)]
        out[f"upper99_{name}"] = float(unit * ho.rms_upper(mean, var, nv, ho.WARN_LEVEL))
    d2 = np.einsum("ni,ni->n", rho, np.linalg.solve(C, rho[:, :, None])[:, :, 0])
    out["coverage95"] = float(np.mean(d2 <= chi2_ppf(ho.LEVEL, 6)))
    return out


def assess_views(system, intrinsics_estimated: bool, chain=None) -> dict | None:
    """The ``held_out`` entry of a corner calibration (see the module documentation); None with too few views.

    Parameters
    ----------
    system : kinhec.calibrate.bundle.BundleSystem
        The final fit's whitened system (its inlying views).
    intrinsics_estimated : bool
        Whether the fit estimated intrinsics (they are then refitted without each view too).
    chain : tuple, optional
        ``(A, X, Y, configuration)`` of the fit (``A`` the flange poses of the system's views, in its order): the
        held-out views are then also given as eye poses, in millimetres and degrees.

    Returns
    -------
    dict or None
        ``n`` (views held out), ``n_corners``, ``rms_px``, ``predicted_rms_px``, ``predicted_interval95_px``,
        ``upper99_px``, ``coverage95_px``, ``consistent`` (the RMS below its 99 % bound), ``method``; with
        ``chain`` also ``rms_mm``, ``rms_deg``, ``predicted_rms_mm``, ``predicted_rms_deg``,
        ``predicted_interval95_mm``, ``predicted_interval95_deg``, ``upper99_mm``, ``upper99_deg`` and
        ``coverage95`` of the held-out eye poses.
    """
    if system is None or system.jacobian.structure.n_views < ho.MIN_STATIONS:
        return None
    lo = leave_one_view_out(system, None if chain is None else pose_maps(*chain))
    ok = lo["ok"]
    if int(ok.sum()) < ho.MIN_STATIONS:
        return None
    s = system.pixel_std
    n_pts = float(lo["m"][ok].sum())
    sq = float(sum(float(e @ e) for e, k in zip(lo["e"], ok) if k))
    mean, var = float(lo["trace"][ok].sum()), 2.0 * float(lo["trace2"][ok].sum())
    a, b = ho.rms_interval(mean, var, n_pts, ho.LEVEL)  # sums of squares as held_out's: scaled chi-squares
    out = {"n": int(ok.sum()), "n_corners": int(n_pts), "rms_px": float(s * np.sqrt(sq / n_pts)),
           "predicted_rms_px": float(s * np.sqrt(mean / n_pts)),
           "predicted_interval95_px": [float(s * a), float(s * b)],
           "upper99_px": float(s * ho.rms_upper(mean, var, n_pts, ho.WARN_LEVEL)),
           "coverage95_px": float(np.mean(lo["ss"][ok] <= lo["q95_ss"][ok]))}
    out["consistent"] = bool(out["rms_px"] <= out["upper99_px"])
    if chain is not None:
        out.update(_pose_figures(lo, ok))
    what = "X, Y, the intrinsics and the board scale" if intrinsics_estimated else "X, Y and the board scale"
    out["method"] = ("leave one view out, first order (deletion formulas on the bundle's normal equations, each view's "
                     f"robot twist eliminated): {what} refitted without the view, its corners predicted through its "
                     "robot pose as measured; 95 % regions of each view's sum of squared errors (scaled chi-square) "
                     "from the pixel noise, the leave-out covariance and the robot's pose error")
    return out
