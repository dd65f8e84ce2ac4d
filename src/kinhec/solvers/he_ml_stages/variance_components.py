"""The per-pair covariance of ``he_ml`` as a sum of variance components, and their estimation.

The covariance of the camera error ``rho_i`` of pair ``i`` (a right twist of
``C_i = T_cam_target``) is

    Sigma_i = th_1 Q_rot + th_2 R_i^T diag(1, 1, 0) R_i + th_3 R_i^T e_z e_z^T R_i
              + th_4 G_i diag(I, 0) G_i^T + th_5 G_i diag(0, I) G_i^T [+ PnP shapes] [+ th_m g_i g_i^T]

(camera rotation, lateral and depth translation, robot rotation and
translation variances [rad^2, m^2]; the PnP shapes of generic planar targets
with the reference in view, :func:`target_shapes`; the robot error along the
local motion, :func:`motion_directions`).  The components are estimated from
the residuals by Newton steps with the average information on the restricted Gaussian
likelihood, the fitted parameters integrated out, under a weak prior (:func:`restricted_components`);
the plain likelihood (:func:`estimate_components`) serves the drifting scale's
EM and :mod:`kinhec.solvers.multi_axyb`.
"""

from __future__ import annotations

import math

import numpy as np

from kinhec.geometry import se3
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml_stages.configuration import frustum_fraction
from kinhec.solvers.he_ml_stages.model import ROBUST_MIN_PAIRS, mv

#: Noise levels accepted by ``noise=`` (the index column names of :mod:`kinhec.io.schema`).
NOISE_KEYS = ("camera_rot_std_rad", "camera_trans_std_m", "camera_trans_std_z_m", "robot_rot_std_rad",
              "robot_trans_std_m")  # fmt: skip
#: Added to the diagonal of every covariance.
COVARIANCE_FLOOR = 1e-16
_FLOOR6 = COVARIANCE_FLOOR * np.eye(6)
#: Smallest variance component [rad^2 or m^2]: exact data keep an invertible covariance.
VAR_FLOOR = 1e-24
#: Half-widths of the generic PnP targets, as fractions of the median target distance (see :func:`target_shapes`).
_TARGET_SIZES = (0.05, 0.2)
#: Residual degrees of freedom per variance component below which the PnP shapes are left out: with few
#: pairs, two more components make the estimated weights noisier than the better shape makes them right.
_SHAPE_REDUNDANCY = 5
#: The 3 x 3 grid of a generic target of half-width 1.
_GRID = np.stack(np.meshgrid(np.linspace(-1.0, 1.0, 3), np.linspace(-1.0, 1.0, 3)), axis=-1).reshape(-1, 2)
#: Share of the total variance below which the motion-direction component is left out.
_MOTION_SHARE = 0.05
#: Pseudo-degrees of freedom of the weak prior of the five noise levels at their block's share of the residuals
#: (:func:`restricted_components`, :func:`prior_levels`): a quarter of a residual's worth keeps a level the data
#: cannot determine off zero (camera rotation at least 0.2 of the truth on 8 pairs, where it fell to 2e-4 of it)
#: while the estimated totals stay unbiased (1.02 +- 0.02 of the true variance on 8 pairs; 1.07 with 0.5, 1.14
#: with 1: the priors of confounded levels add up); a level determined by ``d`` degrees of freedom moves by
#: about ``0.25 / d`` of its distance to the prior's.
PRIOR_DOF = 0.25
#: The rounds stop when no variance component's share of the total moves by more than this.
SETTLE_SHARE = 0.02
#: The restricted estimate's iterations stop when a step moves no component by more than this many of its
#: standard errors (:func:`restricted_components`).
STOP_SE = 0.1
#: Steps of a fit's first restricted estimate (from the residual spreads, :func:`update`) taken with the expected
#: information of the plain likelihood instead of the average information (:func:`restricted_components`).
FISHER_STEPS = 2
#: The components that only the prior tells apart (camera lateral and depth translation, robot translation):
#: ``Q_lateral + Q_depth = Q_robot_translation`` for every pair of :func:`components` (a flange translation error
#: is a camera translation error, isotropic in the camera frame), so moving a variance from the robot's component
#: to both camera ones changes no covariance (:func:`exchange_profile`).
EXCHANGE = (1, 2, 4)


def motion_directions(A: np.ndarray) -> np.ndarray:
    """Flange body twist (n, 6) between the neighbours of every pair (half of it; one-sided at the ends).

    With pairs in time order this is the local direction of motion: a time-stamp error moves the flange
    along it, so a variance component along ``G u`` takes up pairing errors of asynchronous streams.
    """
    n = A.shape[0]
    lo = np.clip(np.arange(n) - 1, 0, n - 1)
    hi = np.clip(np.arange(n) + 1, 0, n - 1)
    span = np.maximum(hi - lo, 1)[:, None]
    return pm.fast_se3_log(se3.invert_transform(A[lo], check=False) @ A[hi]) / span


def target_shapes(Cp: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Covariance shapes (len(sizes), n, 6, 6) of ``rho`` for PnP of a generic planar target seen from ``Cp``.

    The target is a square grid of 3 x 3 points of half-width ``a`` (one shape per size) centred on the
    target origin in the plane ``z = 0``, seen by a pinhole of unit focal length with unit pixel noise:
    the shape is ``Ad(inv C) H^-1 Ad(inv C)^T`` with ``H`` the summed normal matrix of the points'
    projections (:func:`kinhec.solvers.pair_model.pnp_unit_covariance`).  It carries what a detector and PnP
    do to a pose and a constant noise cannot: in-plane rotation far better known than tilt, tilt known
    from the foreshortening of oblique views, depth growing as ``z^2``, lateral position and in-plane
    rotation as ``z``, and the correlation of rotation and translation.  Each shape is scaled to a mean
    trace of 1; its variance component is the squared pixel noise over the squared focal length.
    """
    n, m = Cp.shape[0], sizes.size
    R, t = Cp[:, :3, :3], Cp[:, :3, 3]
    zmin = 1e-3 * max(float(np.median(np.abs(t[:, 2]))), 1e-9)
    P = (sizes[:, None, None] * _GRID[None]).reshape(1, -1, 2)  # every size's points, (1, m * 9, 2)
    Pc = P @ np.swapaxes(R[:, :, :2], 1, 2) + t[:, None]  # camera frame, (n, m * 9, 3)
    iz = (1.0 / np.maximum(Pc[..., 2], zmin)).reshape(n, m, -1)  # per size: (n, m, 9)
    x, y = Pc[..., 0].reshape(n, m, -1) * iz, Pc[..., 1].reshape(n, m, -1) * iz
    S = pm.pnp_unit_covariance(Cp, x, y, iz).transpose(1, 0, 2, 3)  # (m, n, 6, 6)
    tr = traces(S).mean(axis=1)
    return S / np.maximum(tr, 1e-300)[:, None, None, None]


def components(Cp: np.ndarray, G: np.ndarray, U: np.ndarray | None = None,
               shapes: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Basis matrices (5 + m [+ 1], n, 6, 6) of the per-pair covariance in the right twist of ``C``.

    After the five constant components come the ``m`` PnP shapes (``shapes``, from
    :func:`target_shapes`); the last (with ``U``, the motion directions) is the robot error along the
    local motion.
    """
    n = Cp.shape[0]
    R = Cp[:, :3, :3]
    m = 0 if shapes is None else shapes.shape[0]
    Q = np.zeros((5 + m + (U is not None), n, 6, 6))
    Q[0, :, :3, :3] = np.eye(3)
    Q[2, :, 3:, 3:] = np.einsum("ni,nk->nik", R[:, 2], R[:, 2])
    Q[1, :, 3:, 3:] = np.eye(3) - Q[2, :, 3:, 3:]  # R^T diag(1, 1, 0) R = I - R^T e_z e_z^T R
    Q[3] = G[:, :, :3] @ np.swapaxes(G[:, :, :3], 1, 2)
    Q[4] = G[:, :, 3:] @ np.swapaxes(G[:, :, 3:], 1, 2)
    if m:
        Q[5 : 5 + m] = shapes
    if U is not None:
        g = mv(G, U)
        Q[-1] = g[:, :, None] * g[:, None, :]
    return Q


def traces(Q: np.ndarray) -> np.ndarray:
    """Traces ``(k, n)`` of stacked matrices ``(k, n, 6, 6)`` (``np.trace`` over the last axes is much slower)."""
    return np.einsum("knii->kn", Q)


def theta_from_noise(noise: dict) -> np.ndarray:
    """The five constant variance components (5,) of noise levels keyed by :data:`NOISE_KEYS`."""
    return np.array([noise["camera_rot_std_rad"], noise["camera_trans_std_m"], noise["camera_trans_std_z_m"],
                     noise["robot_rot_std_rad"], noise["robot_trans_std_m"]], dtype=np.float64) ** 2  # fmt: skip


def noise_from_theta(theta: np.ndarray) -> dict:
    """Noise levels (standard deviations keyed by :data:`NOISE_KEYS`) of the first five variance components."""
    return {k: float(math.sqrt(max(v, 0.0))) for k, v in zip(NOISE_KEYS, theta)}


def sigma(theta: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Per-pair covariances (n, 6, 6) ``sum_k theta_k Q_k`` (plus a tiny diagonal floor)."""
    k, n = Q.shape[:2]
    return (theta @ Q.reshape(k, -1)).reshape(n, 6, 6) + _FLOOR6


def pairs(Q: np.ndarray, idx: np.ndarray, n: int) -> np.ndarray:
    """The components ``Q[:, idx]`` of the pairs ``idx`` of ``n``, contiguous (``Q`` itself when all are kept)."""
    return Q if idx.size == n else Q.take(idx, axis=1)


def whitener(S: np.ndarray):
    """``(L^-1, S^-1, log det S)`` of covariances ``S`` (n, 6, 6) from their Cholesky factors ``S = L L^T``.

    ``L^-1`` whitens a residual; one triangular inverse gives all three.

    Raises
    ------
    numpy.linalg.LinAlgError
        A covariance is not positive definite.
    """
    Linv = pm.inverse_cholesky(S)
    logdet = -2.0 * np.log(Linv.diagonal(axis1=-2, axis2=-1)).sum(axis=-1)
    return Linv, Linv.swapaxes(-1, -2) @ Linv, logdet


def estimate_components(r, Q, w, theta0, n_iter: int = 8, extra=None) -> np.ndarray:
    """Fisher-scoring (MINQUE iteration) of the variance components on residuals ``r`` (n, 6), weights ``w``.

    With ``Sigma = sum_k th_k Q_k`` and ``W = Sigma^-1``, one step solves ``F th = q`` with
    ``F_kl = 1/2 sum_i tr(W Q_k W Q_l)`` and ``q_k = 1/2 sum_i w_i r_i^T W Q_k W r_i``; components that
    would turn negative are fixed at 0.  ``extra`` (n, 6, 6), when given, is added to every ``r_i r_i^T``:
    the posterior covariance of the part of the residual that fitted nuisance parameters took up (the
    E-step of EM), so that they do not take the noise with them.
    """
    # (a selection Q[:, inliers] is laid out with the pairs first, and every reshape below would copy it:
    # callers select with pairs(), which is contiguous)
    Q = np.ascontiguousarray(Q)
    k, n = Q.shape[:2]
    Qf = Q.reshape(k, -1)
    trQ = traces(Q).mean(axis=1)
    theta = np.maximum(theta0, 1e-14)
    active = np.ones(k, dtype=bool)
    for _ in range(n_iter):
        W = whitener(sigma(theta, Q))[1]
        WQ = W[None] @ Q  # (k, n, 6, 6)
        Wr = (W @ r[:, :, None])[:, :, 0]
        M = (w[:, None] * Wr)[:, :, None] * Wr[:, None, :]
        if extra is not None:
            M = M + w[:, None, None] * (W @ extra @ W)
        q = 0.5 * (Qf @ M.ravel())
        F = 0.5 * (WQ.reshape(k, -1) @ np.swapaxes(WQ, -1, -2).reshape(k, -1).T)
        # the step on the active components; one that would turn negative is fixed at 0 and the step taken
        # again without it (the same F and q: an active-set solve of the linearised problem, so that a
        # vanished component does not drag the others off for the next iterations to bring back)
        while True:
            new = np.zeros_like(theta)
            new[active] = np.linalg.lstsq(F[np.ix_(active, active)], q[active], rcond=1e-12)[0]
            neg = new <= 0
            if not (neg & active).any():
                break
            active &= ~neg
            if not active.any():
                break
        if not active.any():
            break
        # change measured in shares of the total variance (a vanishing component need not converge relatively)
        change = float(np.max(np.abs(new - theta) * trQ)) / max(float(np.sum(np.maximum(new, 0.0) * trQ)), 1e-300)
        theta = np.maximum(new, 0.0)
        if change < 1e-2:
            break
    # components that vanished keep a floor relative to the largest so that Sigma stays invertible
    return np.maximum(theta, 1e-8 * theta.max() if theta.max() > 0 else 1e-14)


def restricted_components(r, Q, w, theta0, J, n_iter: int = 30, prior_dof: float = 0.0, fisher_steps: int = 0,
                          exchange: bool = False) -> np.ndarray:  # fmt: skip
    """Restricted (REML) variance components of residuals ``r`` (n, 6) of a fit in ``p`` parameters.

    The components maximise the likelihood of the residuals with the fitted parameters integrated out
    (Förstner's estimate with the redundancy): with ``W = Sigma^-1``, ``W~_i = w_i W_i`` (pair ``i``'s
    covariance taken as ``Sigma_i / w_i``, ``w`` the Student-t weights), ``J`` (n, 6, p) the residuals'
    Jacobian in the fitted parameters and ``H = J^T W~ J``, the projection ``P = W~ - W~ J H^-1 J^T W~``
    replaces ``W~``.  The score is ``s_k = 1/2 (r^T P Q_k P r - tr(P Q_k))``; the steps are Newton steps
    with the average information ``A_kl = 1/2 (Q_k P r)^T P (Q_l P r)`` (the mean of the observed and the
    expected information, which agree at the maximum; Gilmour, Thompson and Cullis, Biometrics 51, 1995)
    in place of the Hessian: ``P`` applied to ``k`` vectors instead of the ``k^2`` traces
    ``tr(P Q_k P Q_l)`` of Fisher scoring (:func:`_information`).  The step is solved with ``th >= 0``
    afresh every time (a component that vanished may come back) and halved until the restricted likelihood
    does not fall; the iterations stop at a step that moves no component by more than :data:`STOP_SE` of its
    standard error (from the inverse of the step's matrix), which is taken without evaluating the
    likelihood again.

    Every component thus counts only the degrees of freedom the fit left it.  The plain estimate
    (:func:`estimate_components`) takes the residuals for the whole noise: each component is low by the
    share the parameters absorbed, most for one they absorb well, and with few pairs such a component (the
    camera rotation, which ``X`` and ``Y`` turn away pair by pair) collapses to zero: the covariance turns
    near-singular in that direction and clean pairs fail the gate.  A correction of the total by
    ``6 n / (6 n - p)`` afterwards cannot bring a vanished component back.

    With few pairs the data may still not tell two components apart (the camera's and the robot's
    rotation differ only by the robot's lever arm): the restricted likelihood is then flat along their
    exchange and its maximum may sit where one of them is zero, a covariance that claims a direction
    without noise.  ``prior_dof > 0`` adds a weak prior on every component, ``prior_dof`` pseudo-degrees of
    freedom at its block's share of the residuals (the five noise levels, :func:`prior_levels`; density
    ``th^(-nu0/2) exp(-nu0 s0 / (2 th))`` on ``log th``): it holds a component the data cannot determine near
    that share and moves one they do determine by about ``nu0 / d`` of its distance to it, ``d`` its degrees
    of freedom.  Its curvature enters the step as it is (``2 b / th^3 - a / th^2``, at least ``a / th^2``):
    below the prior's mode it is far larger than the expected ``a / th^2``, and a step with the latter
    overshoots a component the prior holds up.

    Far from the maximum the average information misjudges the curvature by the ratio of a component's
    value to its maximum (it is the data's: a component far below its maximum only doubles per step, one far
    above overshoots to zero); the first ``fisher_steps`` steps therefore take the expected information of the
    plain likelihood (:func:`_expected_information`, exact in one step for a single component; the
    projection's correction, of order ``p / 6 n``, is left out, as these steps only bring a crude start near
    the maximum).  ``exchange`` (the basis of :func:`components` with a prior): the data cannot tell the
    components of :data:`EXCHANGE` apart along one line, on which only the prior changes; every point taken
    is moved to a maximum of the prior on it (:func:`exchange_profile`), which costs no evaluation of the
    likelihood and spares the steps the quadratic model of the prior takes along that line.
    """
    Q = np.ascontiguousarray(Q)
    k = Q.shape[0]
    Qn = pair_major(Q)
    s0 = prior_levels(r, Q, J.shape[2]) if prior_dof > 0 else np.zeros(k)
    a, b = 0.5 * prior_dof * (s0 > 0), 0.5 * prior_dof * s0

    def likelihood(theta):
        """The restricted log-likelihood (with the prior) at ``theta`` and what its step needs."""
        if not theta.max() > 0:
            return -math.inf, None  # every component at 0: no covariance (a step that far is halved)
        th = np.maximum(theta, 1e-10 * theta.max())
        _, W, logdet = whitener(sigma(th, Q))
        fitted = _weighted_fit(r, W, w, J)
        rr = fitted[0]
        Wr = mv(W, rr)
        ll = -0.5 * (float(logdet.sum()) + fitted[1] + float((w * (Wr * rr).sum(axis=1)).sum()))
        if prior_dof > 0:
            ll += float((-a * np.log(th) - b / th).sum())  # (0 for the components without a prior)
        return ll, (th, W, Wr, fitted[2])  # (the projection's factor is formed only where a step needs it)

    def newton(state, expected):
        """The step's matrix ``A`` (k, k) and right-hand side ``A th + s`` (k,) (at accepted points)."""
        th, W, Wr, parts = state
        u = np.sqrt(w)[:, None] * Wr  # P r in the pairs' weighted coordinates
        score, A = _information(Q, W, u, _projection_factor(*parts), Qn)
        if expected:
            A = _expected_information(Q, W)
        if prior_dof > 0:
            # the prior's score and its curvature, at least the expected a / th^2 (which it is at the mode)
            score = score - a / th + b / th**2
            A = A + np.diag(np.maximum(2.0 * b / th**3 - a / th**2, a / th**2))
        return A, A @ th + score

    # the prior levels of the exchanged components (None: no exchange)
    s_ex = tuple(float(s0[i]) for i in EXCHANGE) if exchange and prior_dof > 0 and k >= 5 else None
    theta = np.maximum(theta0, 1e-14)
    if s_ex is not None:
        theta = exchange_profile(theta, s_ex)
    ll, state = likelihood(theta)
    for it in range(n_iter):
        A, rhs = newton(state, it < fisher_steps)
        target, var = _nonnegative_solve(A, rhs)
        if s_ex is not None:
            target = exchange_profile(target, s_ex)
        step = target - theta
        if float((np.abs(step) / np.sqrt(np.maximum(var, 1e-300))).max()) < STOP_SE:
            # the step stays within the quadratic model's own precision: taken without another evaluation
            theta = target
            break
        t = 1.0
        for _ in range(12):
            cand = theta + t * step  # a convex combination of non-negative points
            if s_ex is not None and t < 1.0:
                cand = exchange_profile(cand, s_ex)
            ll_c, state_c = likelihood(cand)
            if ll_c >= ll - 1e-12 * abs(ll):
                break
            t *= 0.5
        else:
            break  # no step raises the likelihood: at its maximum to round-off
        theta, ll, state = cand, ll_c, state_c
    # components that vanished keep a floor relative to the largest so that Sigma stays invertible
    return np.maximum(theta, 1e-8 * theta.max() if theta.max() > 0 else 1e-14)


def exchange_profile(theta: np.ndarray, s: tuple) -> np.ndarray:
    """``theta`` (k,) moved along the exchange of :data:`EXCHANGE` to the weak prior's maximum on that line.

    Along ``theta + t d`` (``d`` +1 for both camera translation components, -1 for the robot's) no covariance
    changes, so neither does the likelihood of the data; the prior of :func:`restricted_components`,
    ``-a sum_j (log th_j + s_j / th_j)`` (``s``: the three components' prior levels), does.  Its derivative in
    ``t``, ``a sum_j d_j (s_j - th_j) / th_j^2``, runs from ``+inf`` to ``-inf`` over the segment where the three
    stay non-negative; a zero is found by Newton steps kept inside the bracket of the sign changes (bisection
    where a step would leave it), in scalars.  Each term of the prior is concave only below twice its level, so
    the line may hold more than one maximum: the one found is taken only where the prior is higher than at
    ``theta`` (the likelihood with the prior then never falls by the move).  ``theta`` itself is returned when
    the segment is a point (two of the components at zero).
    """
    th = theta.tolist()
    i1, i2, i4 = EXCHANGE
    x1, x2, x4 = th[i1], th[i2], th[i4]
    s1, s2, s4 = s
    lo, hi = -min(x1, x2), x4
    if not hi - lo > 1e-12 * (x1 + x2 + x4):
        return theta
    tol = 1e-12 * (hi - lo)
    t = 0.0 if lo < 0.0 < hi else 0.5 * (lo + hi)
    for _ in range(100):
        y1, y2, y4 = x1 + t, x2 + t, x4 - t
        g = (s1 - y1) / (y1 * y1) + (s2 - y2) / (y2 * y2) - (s4 - y4) / (y4 * y4)
        if g > 0.0:
            lo = t
        else:
            hi = t
        c = (y1 - 2.0 * s1) / (y1 * y1 * y1) + (y2 - 2.0 * s2) / (y2 * y2 * y2) + (y4 - 2.0 * s4) / (y4 * y4 * y4)
        tn = t - g / c if c < 0.0 else 0.5 * (lo + hi)
        if not lo < tn < hi:
            tn = 0.5 * (lo + hi)
        done = abs(tn - t) <= tol or hi - lo <= tol
        t = tn
        if done:
            break
    if x1 > 0.0 and x2 > 0.0 and x4 > 0.0:
        y1, y2, y4 = x1 + t, x2 + t, x4 - t
        if (math.log(y1 / x1) + math.log(y2 / x2) + math.log(y4 / x4) + s1 / y1 - s1 / x1 + s2 / y2 - s2 / x2
                + s4 / y4 - s4 / x4) > 0.0:  # fmt: skip
            return theta  # (the negative log prior rose: another maximum than the start's)
    out = theta.copy()
    out[i1], out[i2], out[i4] = x1 + t, x2 + t, x4 - t
    return out


def prior_levels(r: np.ndarray, Q: np.ndarray, p: int) -> np.ndarray:
    """The five noise levels' prior levels (k,) from residuals ``r`` (n, 6) of a fit in ``p`` parameters.

    The rotation levels (camera, robot) share the residuals' mean square per rotation axis, the translation
    levels (camera lateral and depth, robot) the mean square per translation axis, both corrected by the
    degrees of freedom the fit took, ``6 n / (6 n - p)``: a component the data cannot determine is held near
    its block's level, as the block's residuals show it whatever the fit absorbed along the component's
    own directions.  The PnP shapes and the motion component get none (0): they join only where the
    data leave redundancy for them.
    """
    n = r.shape[0]
    corr = 6.0 * n / max(6.0 * n - p, 1.0)
    rot = corr * max(float(np.mean(r[:, :3] ** 2)), VAR_FLOOR)
    trans = corr * max(float(np.mean(r[:, 3:] ** 2)), VAR_FLOOR)
    out = np.zeros(Q.shape[0])
    out[:5] = [rot / 2.0, trans / 3.0, trans / 3.0, rot / 2.0, trans / 3.0]
    return out


def _nonnegative_solve(F: np.ndarray, q: np.ndarray):
    """The step's target ``F th = q`` (F (k, k) positive semi-definite) with ``th >= 0``, and the variances (k,).

    Components whose solution turns negative are fixed at 0 and the rest solved again, from all of them at
    every call (so a component that vanished at one step may come back at the next; the caller's step halving
    keeps the likelihood rising).  ``F`` is scaled to a unit diagonal first (the components differ by many
    orders of magnitude) and inverted on its eigenvalues above ``1e-12`` of the largest; the variances are the
    diagonal of that inverse over all components (the standard errors of the stopping rule).  When no
    eigenvalue falls below that bound none of a principal submatrix does either (they interlace), so the
    smaller systems are solved directly.
    """
    d = np.sqrt(np.maximum(F.diagonal(), 0.0))
    d[d == 0.0] = 1.0  # (a component without information keeps its scale)
    Fs = F / np.multiply.outer(d, d)
    qs = q / d
    ev, V = symmetric_eigh(Fs)
    keep = ev > 1e-12 * max(float(ev[-1]), 1e-300)
    inv_ev = 1.0 / ev if keep.all() else np.where(keep, 1.0 / np.where(keep, ev, 1.0), 0.0)
    var = ((V * V) @ inv_ev) / (d * d)
    new = V @ (inv_ev * (V.T @ qs))
    active = new > 0
    if active.all():
        return new / d, var
    while not active.all() and active.any():
        new = np.zeros(q.shape)
        sub = Fs[active][:, active]
        if keep.all():
            new[active] = np.linalg.solve(sub, qs[active])
        else:
            e, U = symmetric_eigh(sub)
            k_ = e > 1e-12 * max(float(e[-1]), 1e-300)
            new[active] = U[:, k_] @ ((U[:, k_].T @ qs[active]) / e[k_])
        neg = active & (new <= 0)
        if not neg.any():
            break
        active &= ~neg
    if not active.any():
        new = np.zeros_like(q)
    return np.maximum(new, 0.0) / d, var


def _weighted_fit(r, W, w, J):
    """The residuals after one more weighted least-squares step (n, 6), ``log det H`` and the parts of the factor ``E``.

    ``W~_i = w_i W_i``, ``H = J^T W~ J`` (its pseudo-inverse: eigenvalues below ``1e-15`` of the largest
    dropped; its log-determinant over those above ``1e-12`` of it) and ``E_i = sqrt(w_i) W_i J_i V |ev|^-1/2``
    (``H = V diag(ev) V^T`` on the kept eigenvalues), so that ``sum_i E_i E_i^T``-sandwiches give the
    projection's correction: ``W~ J H^+ J^T W~ = E E^T`` (with the eigenvalues' signs, all positive for a
    positive definite ``H``; :func:`_information` carries them).  ``P r`` is ``W~`` times the
    returned residuals (zero at the fit's solution).  ``E`` itself is left to :func:`_projection_factor`
    (``_projection_factor(*parts)``): the step-halving search evaluates the likelihood at points where
    the Newton step, its only user, is never taken.
    """
    WJ = W @ J  # (n, 6, p)
    wWJ = w[:, None, None] * WJ
    p = J.shape[2]
    wWJ2 = wWJ.reshape(-1, p)  # the pairs' rows stacked: H and the gradient as single matrix products
    H = J.reshape(-1, p).T @ wWJ2
    step, logdet_h, Vk, evk = pseudo_step(0.5 * (H + H.T), r.reshape(-1) @ wWJ2)
    rr = r - J @ step
    return rr, logdet_h, (w, WJ, Vk, evk)


#: LAPACK's ``dsyevd`` (SciPy's wrapper), bound on the first call of :func:`symmetric_eigh`.
_DSYEVD = None


def symmetric_eigh(M: np.ndarray):
    """Eigenvalues (ascending) and eigenvectors (columns) of a small symmetric matrix ``M`` (LAPACK ``dsyevd``).

    ``numpy.linalg.eigh`` calls the same routine through more checks: on the 5 x 5 to 13 x 13 matrices of the
    variance components' steps its wrapping costs as much as the decomposition.

    Raises
    ------
    numpy.linalg.LinAlgError
        The decomposition did not converge.
    """
    global _DSYEVD
    if _DSYEVD is None:
        from scipy.linalg.lapack import dsyevd  # here, once: importing the registry stays light

        _DSYEVD = dsyevd
    ev, V, info = _DSYEVD(M, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"symmetric_eigh: dsyevd failed (info {info}) on a {M.shape} matrix")
    return ev, V


def pseudo_step(H: np.ndarray, g: np.ndarray):
    """``(H^+ g, log det H, V, ev)`` of a symmetric normal matrix ``H`` (p, p) and gradient ``g`` (p,).

    The pseudo-inverse keeps the eigenvalues above ``1e-15`` of the largest in magnitude (their eigenvectors
    ``V`` and values ``ev`` are returned), the log-determinant sums those above ``1e-12`` of the largest.
    """
    ev, V = symmetric_eigh(H)
    aev = np.abs(ev)
    top = max(float(aev.max()), 1e-300)
    logdet_h = float(np.log(ev[ev > 1e-12 * max(float(ev[-1]), 1e-300)]).sum())
    keep = aev > 1e-15 * top
    Vk, evk = V[:, keep], ev[keep]
    return (Vk / evk) @ (Vk.T @ g), logdet_h, Vk, evk


def _projection_factor(w, WJ, Vk, evk):
    """``(E, S)`` of :func:`_weighted_fit`: ``E_i = sqrt(w_i) W_i J_i V |ev|^-1/2`` (n, 6, p') and the signs ``S``."""
    E = (np.sqrt(w)[:, None, None] * WJ) @ (Vk / np.sqrt(np.abs(evk)))
    return E, np.sign(evk)


def _information(Q, W, u, E, Qn=None):
    """The restricted score ``s`` (k,) and average information ``A`` (k, k) at ``P r`` (``u``, (n, 6)).

    With ``P' = W - E S E^T`` (the projection ``P`` of :func:`restricted_components` in the pairs' weighted
    coordinates: ``W`` (n, 6, 6) block-diagonal, ``E`` and the signs ``S`` from :func:`_weighted_fit`, ``E =
    (E, S)``) and ``u = P' r~``: ``s_k = 1/2 (u^T Q_k u - tr(P' Q_k))`` and ``A_kl = 1/2 (Q_k u)^T P' (Q_l u)``.
    ``tr(P' Q_k)`` takes the per-pair blocks of ``W - E S E^T`` against ``Q_k`` (k, n, 6, 6); ``A`` applies
    ``P'`` to the ``k`` vectors ``Q_k u``: per-pair 6 x 6k products and (6 n) x p' matrix products, no ``k^2``
    traces.  ``Qn`` is ``Q`` with the pairs first, (n, 6 k, 6) (formed here when not given).
    """
    E, sg = E
    k, n = Q.shape[:2]
    pk = E.shape[2]
    if Qn is None:
        Qn = pair_major(Q)
    Es = E * sg
    V = Es @ E.swapaxes(1, 2)  # (n, 6, 6): the diagonal blocks of E S E^T
    tr = Q.reshape(k, -1) @ (W - V).reshape(-1)
    Z = (Qn @ u[:, :, None]).reshape(n, k, 6).swapaxes(1, 2)  # Q_k u as the columns of (n, 6, k)
    Zf = Z.reshape(-1, k)  # (a copy: the pairs' rows stacked)
    EZ = E.reshape(-1, pk).T @ Zf  # E^T Q_k u, (p', k)
    PZ = (W @ Z).reshape(-1, k) - Es.reshape(-1, pk) @ EZ
    A = 0.5 * (Zf.T @ PZ)
    score = 0.5 * (u.reshape(-1) @ Zf - tr)
    return score, 0.5 * (A + A.T)


def _expected_information(Q, W):
    """The expected information ``F_kl = 1/2 sum_i tr(W_i Q_ki W_i Q_li)`` (k, k) of the plain likelihood.

    ``W`` (n, 6, 6) are the inverse covariances without the weights (with pair ``i``'s covariance taken as
    ``Sigma_i / w_i``, its derivative ``Q_ki / w_i`` and its inverse ``w_i W_i``, the weights cancel).
    """
    k = Q.shape[0]
    WQ = W[None] @ Q  # (k, n, 6, 6)
    F = 0.5 * (WQ.reshape(k, -1) @ WQ.swapaxes(-1, -2).reshape(k, -1).T)
    return 0.5 * (F + F.T)


def pair_major(Q: np.ndarray) -> np.ndarray:
    """The components ``Q`` (k, n, 6, 6) with the pairs first, ``(n, 6 k, 6)``: row ``6 j + a`` of pair ``i`` is
    row ``a`` of ``Q_j`` of pair ``i`` (all ``Q_j u_i`` as one product per pair)."""
    k, n = Q.shape[:2]
    return np.ascontiguousarray(Q.transpose(1, 0, 2, 3)).reshape(n, 6 * k, 6)


def shares(theta: np.ndarray, Q: np.ndarray, inl: np.ndarray) -> np.ndarray:
    """Every component's share of the total variance over the inliers ``inl`` (the rounds settle when they do)."""
    trQ = traces(Q)[:, inl].mean(axis=1)
    return theta * trQ / max(float(np.sum(theta * trQ)), 1e-300)


def prepare(fit, known: dict | None) -> None:
    """The components the data support, set on ``fit`` (a :class:`~.state.FitState`) before the first round.

    The motion-direction component needs pairs in time order and enough of them; with the reference in
    view, PnP shapes of generic targets join the camera components (sizes in metres) when the pairs leave
    enough redundancy to tell them from the constant ones.  Known noise levels (``known``) fix the constant
    components (the motion-direction one at 0).
    """
    n = fit.n
    fit.U = motion_directions(fit.A) if n >= ROBUST_MIN_PAIRS else None
    fit.sizes = None
    n_comp = 5 + len(_TARGET_SIZES) + (fit.U is not None)
    Cm = fit.Cm
    if known is None and 6 * n - 12 >= _SHAPE_REDUNDANCY * n_comp and frustum_fraction(Cm) >= 0.5:
        fit.sizes = np.asarray(_TARGET_SIZES) * float(np.median(Cm[Cm[:, 2, 3] > 0, 2, 3]))
    fit.shapes = None
    fit.theta = None if known is None else theta_from_noise(known)
    if fit.theta is not None and fit.U is not None:
        fit.theta = np.append(fit.theta, 0.0)


def update(fit, r: np.ndarray, Q: np.ndarray, J: np.ndarray) -> np.ndarray:
    """The components of a round from its residuals ``r`` (n, 6) and basis ``Q``; returns the basis to use.

    At the first round the camera rotation and translation components start from the residual spreads (the
    robot's small); then the restricted estimate on the inliers (``J`` (n, 6, p), the residuals' Jacobian
    in the fitted parameters, see :func:`estimate_components`) when they leave enough redundancy; then
    ``fit.restricted`` says the components already count the degrees of freedom the fit took.  The
    motion-direction component leaves when its share of the total variance is below 5 % (the data show no
    error along the motion), and ``Q`` loses its last matrix with it.
    """
    inl, n = fit.inl, fit.n
    idx = np.flatnonzero(inl)
    theta = fit.theta
    if theta is None:
        # start: camera rotation and translation from the residual spreads, robot small
        rr = max(float(np.mean(r[inl, :3] ** 2)), VAR_FLOOR)
        rt = max(float(np.mean(r[inl, 3:] ** 2)), VAR_FLOOR)
        # (the PnP shapes, of unit mean trace, start with the camera's total variance between them)
        m = 0 if fit.shapes is None else fit.shapes.shape[0]
        theta = np.array([rr, rt, rt, 0.1 * rr, 0.1 * rt] + [3.0 * (rr + rt) / max(m, 1)] * m
                         + ([] if fit.U is None else [0.01]))  # fmt: skip
    fit.restricted = False
    if 6 * int(inl.sum()) - 12 >= 2 * theta.size:
        # enough redundancy to estimate the components (else the start from the residual spreads stays)
        try:
            theta = np.maximum(restricted_components(r[inl], pairs(Q, idx, n), fit.w[inl], theta, J[inl],
                                                     prior_dof=PRIOR_DOF, exchange=True,
                                                     fisher_steps=FISHER_STEPS if fit.theta is None else 0),
                               VAR_FLOOR)  # fmt: skip
            fit.restricted = True
        except np.linalg.LinAlgError:
            pass
    if fit.U is not None:
        trQ = traces(Q)[:, inl].mean(axis=1)
        if theta[-1] * trQ[-1] < _MOTION_SHARE * float(np.sum(theta * trQ)):
            # the data show no error along the motion: leave the component out (no weight noise)
            fit.U, theta, Q = None, theta[:-1], Q[:-1]
    fit.theta = theta
    return Q


def shape_info(sizes, shapes, theta) -> dict:
    """``info`` of the result: half-widths [m] of the PnP shapes and their variances ((pixel std / focal length)^2)."""
    if shapes is None:
        return {}
    m = shapes.shape[0]
    return {"pnp_target_half_widths_m": [float(a) for a in sizes],
            "pnp_shape_variances": [float(v) for v in theta[5 : 5 + m]]}  # fmt: skip
