"""Maximum-likelihood robot-world/hand-eye calibration (``A_i X = Y B_i``) with the anisotropic noise model.

Method
------
The measurement model is the generator's (:mod:`kinhec.solvers.pair_model`):
each camera pose ``C_i = T_cam_target`` has a target-frame rotation error and a
camera-frame translation error (depth noisier than lateral), and each flange
pose a flange-frame twist error carried into the camera error by
``G_i``.  The per-pair covariance of the camera error ``rho_i`` is written as a
sum of five *variance components*

    Sigma_i = th_1 Q_rot + th_2 R_i^T diag(1, 1, 0) R_i + th_3 R_i^T e_z e_z^T R_i
              + th_4 G_i diag(I, 0) G_i^T + th_5 G_i diag(0, I) G_i^T

(camera rotation, camera lateral, camera depth, robot rotation, robot
translation variances).  With the reference in view two more follow, the
covariance shapes of PnP on a generic planar target (a 3 x 3 grid of half-width
5 % and 20 % of the median target distance, seen from the predicted pose ``C_i``):
pixel noise through the projection gives errors that depend on the pose (tilt
known from the foreshortening of oblique views, in-plane rotation and lateral
position growing as ``z``, depth as ``z^2``, rotation and translation
correlated), which constant components cannot describe; the same estimation
picks constant or PnP-shaped camera noise from the residuals.  From 8 pairs on
there is a last component, ``th_m (G_i u_i)(G_i u_i)^T``
with ``u_i`` the flange twist between the neighbours of pair ``i`` (the local
direction of motion, along which a time-stamp error moves the flange: the
pairing error of asynchronous streams with camera jitter).  When the noise levels are not given they are
estimated from the residuals by Fisher scoring of the Gaussian likelihood
(variance-component estimation), with the loss of ``P`` degrees of freedom to
the fitted parameters corrected at the end.

1. **Configuration.** Eye-in-hand data have ``C_i = inv(B_i)``, eye-to-hand
   ``C_i = B_i`` (or pass it).  A first reading puts the reference in front of
   the camera; from 8 pairs on, the reading whose camera frame shows the
   depth / lateral anisotropy of the start's residuals best is kept.  Robot
   translation noise is isotropic in the camera frame, so only the camera-frame
   totals of the translation variances are identified (all the weights need).
2. **Robust initialisation** (from 8 pairs on).  Hypotheses of ``(X, Y, s)``
   from the Shah closed form on every pair and from 64 random minimal sets of
   three pairs (Kronecker rotation, then translations and ``1 / s`` by linear
   least squares, all hypotheses as one batch); each is scored by a low
   quantile of the distances of the other pairs (up to about 60 % outliers),
   every pair also read with its planar-ambiguity mirror
   (:func:`kinhec.noise.planar_flip`).  The all-pairs start is kept unless a
   minimal set halves its score.
3. **Maximum likelihood.** Iteratively reweighted: variance components on the
   current inliers, whitened residuals, ``scipy.optimize.least_squares`` over
   right perturbations of ``X`` and ``Y`` (and ``log s``) with the analytic
   Jacobian; then the Mahalanobis chi-square of every pair decides inliers
   (gate at the 99.9 % quantile of chi2(6)), and a pair whose mirrored pose
   passes the gate is repaired.  Heavy tails: the Student-t degrees of freedom
   (3, 5, 10 or Gaussian) with the highest likelihood set the weights
   ``(nu + 6) / (nu + d_i^2)``.
4. **Scale.** With ``scale="auto"`` the monocular scale of the camera
   translations is estimated when the closed form finds it more than 5 %
   away from 1, and kept only if it still is, by more than three standard
   deviations, after the maximum-likelihood fit.
   A scale that drifts (``scale_drift="auto"``, from 8 pairs on): when the
   log-scale offsets each pair alone asks for follow one another (lag-1
   autocorrelation above :data:`SCALE_DRIFT_LAG1`), one offset per pair is
   fitted with ``X``, ``Y`` and ``log s`` under a random-walk prior whose step
   is estimated by EM; the variance components are re-estimated with the
   offsets' posterior variance (the E-step), and the offsets are marginalised
   out of the covariance.
5. **Drift.** Visual odometry integrates its frame-to-frame errors, so the
   camera error of a pose is a random walk in the reference's frame: the
   residuals of neighbouring pairs are nearly equal (lag-1 autocorrelation
   0.94-0.98 on the medium tier's ``vo_drift`` sequences, at most 0.45 on
   independent noise).  From 8 pairs on, with ``drift="auto"``, an
   autocorrelation above 0.3 at the pair model's solution brings a fit of ``X``
   (and ``s``) to the motions between consecutive pairs (all of them), whose
   errors are the independent increments, kept when the autocorrelation at its
   own solution is above :data:`DRIFT_LAG1`:
   ``A_k X = X B_k`` with right residuals ``log(inv(inv(X) A_k X) B_k)`` in the
   camera frame (camera translations scaled by ``s``), rotation and translation
   variances from the residuals and Student-t weights (``nu = 4``).  ``Y`` then
   follows from ``X`` as the mean of ``A_i X inv(B_i)``.
6. **Covariance.** The inverse of the whitened normal matrix at the solution
   (with drift: the ``X`` and ``log s`` block from the motion fit, the ``Y``
   block from the pair model, no cross terms).
7. **Pixels** (``pixels=``, the target's pixels behind the poses with known
   intrinsics): ``X`` and ``Y`` from the pixels of the inliers, each view's
   robot error a nuisance under the flange-twist prior, the pixel and robot
   noise levels by EM (:mod:`kinhec.solvers.he_ml_pixels`); the covariance
   marginalises the robot errors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from kinhec import se3
from kinhec.errors import InputError
from kinhec.noise import planar_flip
from kinhec.solvers import _common as c
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml_pixels import pixel_ml

__all__ = ["CITATION", "NOISE_KEYS", "HeMlResult", "he_ml", "CHI2_GATE", "N_HYPOTHESES", "DRIFT_LAG1",
           "SCALE_DRIFT_LAG1", "HE_ML_SEED"]

CITATION = (
    "Maximum likelihood with variance components: W. Förstner, 'Ein Verfahren zur Schätzung von Varianz- und "
    "Kovarianzkomponenten', Allgemeine Vermessungs-Nachrichten 86, 1979; Student-t weights: K. L. Lange, "
    "R. J. A. Little, J. M. G. Taylor, 'Robust statistical modeling using the t distribution', JASA 84(408), 1989; "
    "closed-form hypotheses: Shah, ASME J. Mechanisms and Robotics 5(3), 2013."
)

#: Noise levels accepted by ``noise=`` (the index column names of :mod:`kinhec.schema`).
NOISE_KEYS = ("camera_rot_std_rad", "camera_trans_std_m", "camera_trans_std_z_m", "robot_rot_std_rad",
              "robot_trans_std_m")  # fmt: skip
#: 99.9 % quantile of chi2 with 6 degrees of freedom: the inlier gate of a pair.
CHI2_GATE = 22.4577
#: Minimal-set hypotheses of the initialisation (plus the all-pairs closed form).
N_HYPOTHESES = 64
#: Seed of the minimal-set and scoring draws when ``seed`` is not given: a constant, never a hash of the input,
#: so that an input changed in its last bits (another BLAS or CPU) keeps the same draws and moves X continuously.
HE_ML_SEED = 0
#: Fewest pairs for the robust stages (minimal sets, gate, flips, Student-t); fewer pairs: plain ML.
_ROBUST_MIN_PAIRS = 8
#: A minimal set replaces the all-pairs start only when its score is below this fraction of the latter's.
_PREFER_ALL = 0.5
#: Pairs on which the hypotheses are scored (a random subset of larger sets).
_SCORE_PAIRS = 48
_SCORE_QUANTILE = 0.35
_NU_CANDIDATES = (3.0, 5.0, 10.0, math.inf)
_FLOOR = 1e-16
#: Smallest variance component [rad^2 or m^2]: exact data keep an invertible covariance.
_VAR_FLOOR = 1e-24
#: Half-widths of the generic PnP targets, as fractions of the median target distance (see :func:`_target_shapes`).
_TARGET_SIZES = (0.05, 0.2)
#: Residual degrees of freedom per variance component below which the PnP shapes are left out: with few
#: pairs, two more components make the estimated weights noisier than the better shape makes them right.
_SHAPE_REDUNDANCY = 5
#: The 3 x 3 grid of a generic target of half-width 1.
_GRID = np.stack(np.meshgrid(np.linspace(-1.0, 1.0, 3), np.linspace(-1.0, 1.0, 3)), axis=-1).reshape(-1, 2)
#: Share of the total variance below which the motion-direction component is left out.
_MOTION_SHARE = 0.05
#: The rounds stop when no variance component's share of the total moves by more than this.
_SETTLE_SHARE = 0.02
#: |log s| below which a monocular scale is never kept (a scale within about 5 % of 1 is taken as metric).
_SCALE_MIN = 0.05
#: |log s| of the closed-form start below which ``scale="auto"`` treats the data as metric.
_SCALE_START = 0.05
#: Lag-1 autocorrelation of the pair residuals (time order, each component scaled by its RMS), at the motion
#: fit's solution, above which ``drift="auto"`` keeps ``X`` from the motions (a random-walk camera error).
DRIFT_LAG1 = 0.7
#: Lag-1 autocorrelation at the pair model's solution above which the motion fit is tried (and kept when the
#: autocorrelation at its own solution exceeds :data:`DRIFT_LAG1`).
_DRIFT_SUSPECT = 0.3
#: Student-t degrees of freedom of the weights of the motion fit.
_DRIFT_NU = 4.0
_DRIFT_ROUNDS = 4
#: Lag-1 autocorrelation of the per-pair log-scale offsets above which ``scale_drift="auto"`` fits a scale
#: that drifts as a random walk (see :func:`_scale_offsets`).
SCALE_DRIFT_LAG1 = 0.3
_SCALE_DRIFT_ROUNDS = 8


@dataclass(frozen=True)
class HeMlResult(pm.XYCovariance):
    """Estimate of :func:`he_ml`.

    Attributes
    ----------
    X, Y : ndarray, shape (4, 4)
        Hand-eye and robot-world transforms [m].
    cov : ndarray, shape (12, 12) or (13, 13)
        Covariance of the right perturbations ``(dx, dy[, log s])`` (rad, m).
    scale : float or None
        Camera-translation scale ``s`` (camera = ``s`` x metric) when estimated, else None.
    noise : dict
        Noise levels used (given or estimated), keys :data:`NOISE_KEYS`.
    configuration : str
        ``"eye_in_hand"`` or ``"eye_to_hand"`` (given or identified).
    inliers : ndarray of bool, shape (N,)
        Pairs kept by the chi-square gate.
    repaired : ndarray of bool, shape (N,)
        Pairs replaced by their planar-ambiguity mirror.
    dof : float
        Student-t degrees of freedom of the weights (inf: Gaussian).
    chi2 : ndarray, shape (N,)
        Mahalanobis chi-square of every pair at the solution.
    n_inliers : int
    info : dict
        With the reference in view: ``pnp_target_half_widths_m`` (the generic targets of the PnP-shaped
        camera components) and ``pnp_shape_variances`` (their variance components, (pixel std / focal
        length)^2 when the camera noise is PnP).  ``residual_lag1`` (the lag-1 autocorrelation of the
        residuals in time order, each component scaled by its RMS, from 8 pairs on); with a scale,
        ``scale_offset_lag1`` and, when a drifting scale was fitted, ``scale_drift_std`` (the step of the
        log-scale walk between pairs) and ``scale_offsets`` (the log-scale offset of every pair from the
        first); when ``X`` came from the motions, ``drift`` (the
        per-motion rotation [rad] and translation [m] standard deviations of the camera error).
        With pixels: ``pixel_std`` [px] (estimated), ``pixel_rms`` [px] (RMS residual),
        ``pixel_iterations`` and ``pixel_robot_twists`` (N, 6): the posterior mean of every view's
        flange twist error, the true flange pose being ``A_i exp(xi_i)`` (NaN for the views the gate
        rejected); ``noise`` then holds the robot levels of the pixel stage.
    """

    X: np.ndarray
    Y: np.ndarray
    cov: np.ndarray
    scale: float | None
    noise: dict
    configuration: str
    inliers: np.ndarray
    repaired: np.ndarray
    dof: float
    chi2: np.ndarray
    n_inliers: int = 0
    info: dict = field(default_factory=dict)


def _mv(M: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Batched matrix-vector product ``M_n v_n``."""
    return (M @ v[:, :, None])[:, :, 0]


def _quad(r: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Batched quadratic forms ``r_n^T S_n r_n``."""
    return (_mv(S, r) * r).sum(axis=1)


# --------------------------------------------------------------------------- #
# configuration
# --------------------------------------------------------------------------- #
def _frustum_fraction(C: np.ndarray) -> float:
    t = C[:, :3, 3]
    return float(np.mean((t[:, 2] > 0) & (np.hypot(t[:, 0], t[:, 1]) < 1.5 * t[:, 2])))


def _configuration(B: np.ndarray) -> tuple[str, bool]:
    """``(configuration, reference_in_view)`` from the camera-side poses."""
    f_eih = _frustum_fraction(se3.invert_transform(B, check=False))
    f_eth = _frustum_fraction(B)
    if f_eth > f_eih:
        return "eye_to_hand", f_eth >= 0.5
    return "eye_in_hand", f_eih >= 0.5


# --------------------------------------------------------------------------- #
# hypotheses
# --------------------------------------------------------------------------- #
def _project_so3(M: np.ndarray) -> np.ndarray:
    U, _, Vt = np.linalg.svd(M)
    d = np.sign(np.linalg.det(U @ Vt))
    U = U.copy()
    U[..., :, 2] *= d[..., None]
    return U @ Vt


def _kronecker_sums(RA: np.ndarray, RB: np.ndarray) -> np.ndarray:
    """``K = sum_i RB_i kron RA_i`` (H, 9, 9) of batches of pair sets (H, m, 3, 3): ``K vec(R_X) = vec(R_Y)`` scaled.

    ``K[(a, b), (c, d)] = sum_i RB_i[a, c] RA_i[b, d]``: one product over the pairs, then the indices regrouped.
    """
    H = RA.shape[0]
    P = np.swapaxes(RB.reshape(H, -1, 9), 1, 2) @ RA.reshape(H, -1, 9)  # P[(a, c), (b, d)]
    return P.reshape(H, 3, 3, 3, 3).transpose(0, 1, 3, 2, 4).reshape(H, 9, 9)


def _rotations_from_kronecker(K: np.ndarray):
    """Kronecker solution of ``R_A R_X = R_Y R_B``: ``R_X``, ``R_Y`` (H, 3, 3) from the top singular vectors of ``K``."""
    # the top right singular vector of K is the top eigenvector of K^T K (half the cost of an SVD); the left
    # one is K v up to a positive factor, which the projection onto SO(3) ignores
    v = np.linalg.eigh(np.swapaxes(K, 1, 2) @ K)[1][:, :, -1]
    MX = np.swapaxes(v.reshape(-1, 3, 3), 1, 2)
    MY = np.swapaxes(_mv(K, v).reshape(-1, 3, 3), 1, 2)
    sX = np.sign(np.linalg.det(MX))
    sY = np.sign(np.linalg.det(MY))
    return _project_so3(MX * sX[:, None, None]), _project_so3(MY * sY[:, None, None])


def _translations_from_sets(RA, tA, tB, RY, with_scale: bool):
    """``R_A t_X + t_A = k R_Y t_B + t_Y`` by least squares for batches (H, m, ...); returns tX, tY, s = 1 / k.

    The camera translations are ``s`` times the metric ones, so the metric ``t_B`` is ``k t_B`` with ``k = 1 / s``.
    """
    H, m = RA.shape[:2]
    p = 7 if with_scale else 6
    M = np.zeros((H, m, 3, p))
    M[..., :3] = RA
    M[..., 3:6] = -np.eye(3)
    rhs = -tA
    RYtB = tB @ np.swapaxes(RY, 1, 2)
    if with_scale:
        M[..., 6] = -RYtB
    else:
        rhs = RYtB - tA
    M = M.reshape(H, 3 * m, p)
    rhs = rhs.reshape(H, 3 * m)
    N = np.swapaxes(M, 1, 2) @ M + 1e-12 * np.eye(p)
    sol = np.linalg.solve(N, np.swapaxes(M, 1, 2) @ rhs[..., None])[..., 0]
    if not with_scale:
        return sol[:, :3], sol[:, 3:6], np.ones(H)
    k = sol[:, 6]
    s = np.where(k > 1e-9, 1.0 / np.where(k > 1e-9, k, 1.0), np.nan)
    return sol[:, :3], sol[:, 3:6], s


def _hypotheses(A, B, rng, n_hyp: int, with_scale: bool):
    """Batch of ``(R_X, t_X, R_Y, t_Y, s)`` and the pairs behind each: all pairs first, then minimal sets of three.

    Returns the five stacked arrays and a boolean ``(H, N)`` mask of the pairs each hypothesis was fitted to.
    """
    n = A.shape[0]
    idx_all = np.arange(n)[None]
    if n > 3:
        # three distinct pairs per set: the indices of the three smallest of n uniform draws, in order (the
        # partial sort gives the same sets as a full argsort)
        u = rng.random((n_hyp, n))
        draws = np.argpartition(u, 2, axis=1)[:, :3]
        draws = np.take_along_axis(draws, np.argsort(np.take_along_axis(u, draws, axis=1), axis=1), axis=1)
    else:
        draws = np.zeros((0, 3), dtype=np.int64)
    sets = [idx for idx in (idx_all, draws) if idx.shape[0]]
    # the rotations of all sets in one batch, then the translations per set size
    RX, RY = _rotations_from_kronecker(np.concatenate([_kronecker_sums(A[idx, :3, :3], B[idx, :3, :3])
                                                       for idx in sets]))  # fmt: skip
    out = [[], [], []]
    h = 0
    for idx in sets:
        RYs = RY[h : h + idx.shape[0]]
        h += idx.shape[0]
        t = _translations_from_sets(A[idx, :3, :3], A[idx, :3, 3], B[idx, :3, 3], RYs, with_scale)
        for lst, v in zip(out, t):
            lst.append(v)
    tX, tY, s = (np.concatenate(v) for v in out)
    used = np.zeros((1 + draws.shape[0], n), dtype=bool)
    used[0] = True
    used[np.arange(1, 1 + draws.shape[0])[:, None], draws] = True
    return RX, tX, RY, tY, s, used


def _pair_distances(A, C_list, RX, tX, RY, tY, s, configuration):
    """Per hypothesis and pair: rotation angle [rad] + translation distance [m] of ``C`` to its prediction.

    ``C_list``: the measured camera poses and optionally their mirrors; the minimum is taken.
    Shapes: hypotheses H, pairs n -> (H, n).
    """
    # Products are batched over the pairs with all hypotheses as columns (or over the hypotheses with all
    # pairs as rows): a few dozen small matrix products instead of one per hypothesis and pair.
    RA, tA = A[:, :3, :3], A[:, :3, 3]
    eih = configuration == "eye_in_hand"
    vX, vY = RX.reshape(-1, 9), RY.reshape(-1, 9)  # row-major vec: vec(P M Q) = (P kron Q^T) vec(M)
    if eih:
        # prediction inv(A X) Y: R = RX^T RA^T RY, t = RX^T (RA^T (tY - tA) - tX); tr(R^T Rm) = <RY, RA RX Rm>
        RAt = np.swapaxes(RA, 1, 2)
        e = (RAt @ tY.T - RAt @ tA[:, :, None]).transpose(2, 0, 1) - tX[:, None, :]  # (n, 3, H) -> (H, n, 3)
        tp = e @ RX  # rows: (RX^T e)^T
    else:
        # prediction inv(Y) A X: R = RY^T RA RX, t = RY^T (RA tX + tA - tY); tr(R^T Rm) = <RY, RA RX Rm^T>
        e = (RA @ tX.T + tA[:, :, None]).transpose(2, 0, 1) - tY[:, None, :]  # (n, 3, H) -> (H, n, 3)
        tp = e @ RY
    best = None
    for C in C_list:
        Rm = C[:, :3, :3]
        Q = Rm if eih else np.swapaxes(Rm, 1, 2)  # tr(R^T Rm) = <RY, RA RX Q>
        if 4 * RX.shape[0] < A.shape[0]:
            # few hypotheses: the products RA RX Q themselves
            tr = np.einsum("hnij,hij->hn", (RA[None] @ RX[:, None]) @ np.ascontiguousarray(Q)[None], RY)
        else:
            # vec(RA RX Q) = kron(RA, Q^T) vec(RX): one 9 x 9 matrix per pair, applied to all hypotheses at once
            Qt = np.swapaxes(Q, 1, 2)
            K = (RA[:, :, None, :, None] * Qt[:, None, :, None, :]).reshape(-1, 9, 9)
            tr = np.einsum("nrh,hr->hn", K @ vX.T, vY)
        cosang = np.clip((tr - 1.0) / 2.0, -1.0, 1.0)
        d = np.arccos(cosang) + np.linalg.norm(C[None, :, :3, 3] / s[:, None, None] - tp, axis=-1)
        best = d if best is None else np.minimum(best, d)
    return best


# --------------------------------------------------------------------------- #
# variance components
# --------------------------------------------------------------------------- #
def _motion_directions(A: np.ndarray) -> np.ndarray:
    """Flange body twist (n, 6) between the neighbours of every pair (half of it; one-sided at the ends).

    With pairs in time order this is the local direction of motion: a time-stamp error moves the flange
    along it, so a variance component along ``G u`` takes up pairing errors of asynchronous streams.
    """
    n = A.shape[0]
    lo = np.clip(np.arange(n) - 1, 0, n - 1)
    hi = np.clip(np.arange(n) + 1, 0, n - 1)
    span = np.maximum(hi - lo, 1)[:, None]
    return pm.fast_se3_log(se3.invert_transform(A[lo], check=False) @ A[hi]) / span


def _target_shapes(Cp: np.ndarray, sizes: np.ndarray) -> np.ndarray:
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
    tr = _traces(S).mean(axis=1)
    return S / np.maximum(tr, 1e-300)[:, None, None, None]


def _components(Cp: np.ndarray, G: np.ndarray, U: np.ndarray | None = None,
                shapes: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Basis matrices (5 + m [+ 1], n, 6, 6) of the per-pair covariance in the right twist of ``C``.

    After the five constant components come the ``m`` PnP shapes (``shapes``, from
    :func:`_target_shapes`); the last (with ``U``, the motion directions) is the robot error along the
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
        g = _mv(G, U)
        Q[-1] = g[:, :, None] * g[:, None, :]
    return Q


def _traces(Q: np.ndarray) -> np.ndarray:
    """Traces ``(k, n)`` of stacked matrices ``(k, n, 6, 6)`` (``np.trace`` over the last axes is several times slower)."""
    return np.einsum("knii->kn", Q)


def _theta_from_noise(noise: dict) -> np.ndarray:
    return np.array([noise["camera_rot_std_rad"], noise["camera_trans_std_m"], noise["camera_trans_std_z_m"],
                     noise["robot_rot_std_rad"], noise["robot_trans_std_m"]], dtype=np.float64) ** 2  # fmt: skip


def _noise_from_theta(theta: np.ndarray) -> dict:
    return {k: float(math.sqrt(max(v, 0.0))) for k, v in zip(NOISE_KEYS, theta)}


def _sigma(theta: np.ndarray, Q: np.ndarray) -> np.ndarray:
    k, n = Q.shape[:2]
    return (theta @ Q.reshape(k, -1)).reshape(n, 6, 6) + _FLOOR * np.eye(6)


def _pairs(Q: np.ndarray, idx: np.ndarray, n: int) -> np.ndarray:
    """The components ``Q[:, idx]`` of the pairs ``idx`` of ``n``, contiguous (``Q`` itself when all are kept)."""
    return Q if idx.size == n else Q.take(idx, axis=1)


def _whitener(S: np.ndarray):
    """``(L^-1, S^-1, log det S)`` of covariances ``S`` (n, 6, 6) from their Cholesky factors ``S = L L^T``.

    ``L^-1`` whitens a residual; one triangular inverse gives all three.

    Raises
    ------
    numpy.linalg.LinAlgError
        A covariance is not positive definite.
    """
    Linv = pm.inverse_cholesky(S)
    logdet = -2.0 * np.log(np.diagonal(Linv, axis1=-2, axis2=-1)).sum(axis=-1)
    return Linv, np.swapaxes(Linv, -1, -2) @ Linv, logdet


def _estimate_components(r, Q, w, theta0, n_iter: int = 8, extra=None) -> np.ndarray:
    """Fisher-scoring (MINQUE iteration) of the variance components on residuals ``r`` (n, 6), weights ``w``.

    With ``Sigma = sum_k th_k Q_k`` and ``W = Sigma^-1``, one step solves ``F th = q`` with
    ``F_kl = 1/2 sum_i tr(W Q_k W Q_l)`` and ``q_k = 1/2 sum_i w_i r_i^T W Q_k W r_i``; components that
    would turn negative are fixed at 0.  ``extra`` (n, 6, 6), when given, is added to every ``r_i r_i^T``:
    the posterior covariance of the part of the residual that fitted nuisance parameters took up (the
    E-step of EM), so that they do not take the noise with them.
    """
    # (a selection Q[:, inliers] is laid out with the pairs first, and every reshape below would copy it:
    # callers select with _pairs, which is contiguous)
    Q = np.ascontiguousarray(Q)
    k, n = Q.shape[:2]
    Qf = Q.reshape(k, -1)
    trQ = _traces(Q).mean(axis=1)
    theta = np.maximum(theta0, 1e-14)
    active = np.ones(k, dtype=bool)
    for _ in range(n_iter):
        W = _whitener(_sigma(theta, Q))[1]
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


# --------------------------------------------------------------------------- #
# the weighted least-squares problem
# --------------------------------------------------------------------------- #
def _predict(A, X, Y, configuration):
    return pm.predicted_camera_poses(A, X, Y, configuration)


def _res(Cm: np.ndarray, Cp: np.ndarray, log_s: float, log_s0: float | None = None,
         q: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Camera errors against the prediction with scaled translation ``s t``, translations divided by ``s0``.

    The measured translation is ``s (t + e)``: comparing it with ``s t`` and dividing by the (fixed)
    current scale ``s0`` keeps the noise metric without the bias towards large ``s`` that dividing the
    measurement by the unknown ``s`` would bring.  ``q`` (n,): a log-scale offset per pair (a drifting
    scale, ``log s + q_i``).
    """
    return _res_inv(Cm, se3.invert_transform(Cp, check=False), log_s, log_s0, q)


def _res_inv(Cm: np.ndarray, Cp_inv: np.ndarray, log_s: float, log_s0: float | None = None,
             q: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """:func:`_res` from the inverses of the predicted poses (scaling the prediction's translation by ``s``
    scales that of its inverse alike)."""
    E = Cp_inv.copy()
    E[:, :3, 3] *= math.exp(log_s) if q is None else np.exp(log_s + q)[:, None]
    r = pm.fast_se3_log(E @ Cm)
    r[:, 3:] *= math.exp(-(log_s if log_s0 is None else log_s0))
    return r


def _exp6(xi: np.ndarray) -> np.ndarray:
    """SE(3) exponential of one twist ``(omega, v)`` (the :func:`kinhec.se3.se3_exp` formula, in scalars:
    a 4 x 4 product costs more than the arithmetic)."""
    wx, wy, wz, vx, vy, vz = (float(v) for v in xi)
    th2 = wx * wx + wy * wy + wz * wz
    th = math.sqrt(th2)
    if th < 1e-6:
        a, b, cc = 1.0 - th2 / 6.0, 0.5 - th2 / 24.0, 1.0 / 6.0 - th2 / 120.0
    else:
        a, b, cc = math.sin(th) / th, (1.0 - math.cos(th)) / th2, (th - math.sin(th)) / (th2 * th)
    # R = I + a K + b K^2 and t = v + b K v + cc K^2 v, with K = hat(w) and K^2 = w w^T - th2 I
    xy, xz, yz = wx * wy, wx * wz, wy * wz
    kx, ky, kz = wy * vz - wz * vy, wz * vx - wx * vz, wx * vy - wy * vx
    wv = wx * vx + wy * vy + wz * vz
    return np.array([
        [1.0 + b * (wx * wx - th2), -a * wz + b * xy, a * wy + b * xz, vx + b * kx + cc * (wx * wv - th2 * vx)],
        [a * wz + b * xy, 1.0 + b * (wy * wy - th2), -a * wx + b * yz, vy + b * ky + cc * (wy * wv - th2 * vy)],
        [-a * wy + b * xz, a * wx + b * yz, 1.0 + b * (wz * wz - th2), vz + b * kz + cc * (wz * wv - th2 * vz)],
        [0.0, 0.0, 0.0, 1.0],
    ])  # fmt: skip


def _apply(X0, Y0, ls0, p, with_scale):
    X = X0 @ _exp6(p[:6])
    Y = Y0 @ _exp6(p[6:12])
    ls = ls0 + (p[12] if with_scale else 0.0)
    return X, Y, ls


def _solve_wls(A, Cm, X0, Y0, ls0, Linv, sw, configuration, with_scale):
    """One weighted nonlinear least-squares solve; returns X, Y, log s and the whitened Jacobian at the solution."""
    P = 13 if with_scale else 12
    eih = configuration == "eye_in_hand"
    A_inv = None if eih else se3.invert_transform(A, check=False)
    last = {}  # the state at the last point: the Jacobian is asked for where the residual was

    def state(p):
        key = p.tobytes()
        if last.get("key") != key:
            X, Y, ls = _apply(X0, Y0, ls0, p, with_scale)
            # the inverse of the predicted C (inv(Y) A X eye-in-hand, inv(X) inv(A) Y eye-to-hand) directly
            if eih:
                Ci = se3.invert_transform(Y, check=False) @ A @ X
            else:
                Ci = se3.invert_transform(X, check=False) @ A_inv @ Y
            last.update(key=key, state=(X, ls, Ci))
        return last["state"]

    def fun(p):
        _, ls, Ci = state(p)
        return (sw[:, None] * _mv(Linv, _res_inv(Cm, Ci, ls, ls0))).ravel()

    def jac(p):
        X, ls, Ci = state(p)
        J, _ = pm.pair_jacobians(None, X, configuration, C_inv=Ci)
        Jr = -J
        k = math.exp(ls - ls0)
        Jr[:, 3:] *= k
        if with_scale:
            Js = np.zeros((Ci.shape[0], 6))
            Js[:, 3:] = k * Ci[:, :3, 3]  # -k d rho / d log s, the latter R^T t = -(translation of inv C)
            Jr = np.concatenate([Jr, Js[:, :, None]], axis=2)
        Jw = sw[:, None, None] * (Linv @ Jr)
        return Jw.reshape(-1, P)

    from scipy.optimize import least_squares  # here: importing the registry stays light

    res = least_squares(fun, np.zeros(P), jac=jac, method="lm", xtol=1e-8, ftol=1e-8, gtol=1e-8, max_nfev=30)
    X, Y, ls = _apply(X0, Y0, ls0, res.x, with_scale)
    X[:3, :3] = _project_so3(X[:3, :3])
    Y[:3, :3] = _project_so3(Y[:3, :3])
    return X, Y, ls, res.jac


def _t_loglik(d2: np.ndarray, logdet: np.ndarray, nu: float) -> float:
    """Log-likelihood (up to a constant) of 6-d Student-t (or Gaussian) residuals with squared distances ``d2``."""
    if not np.isfinite(nu):
        return float(np.sum(-0.5 * d2 - 0.5 * logdet))
    k = 6.0
    from math import lgamma

    const = lgamma((nu + k) / 2) - lgamma(nu / 2) - 0.5 * k * math.log(nu)
    return float(np.sum(const - 0.5 * logdet - 0.5 * (nu + k) * np.log1p(d2 / nu)))


def _readings(B, configuration, robust):
    """Measured camera poses and, for a reference in view, their planar-ambiguity mirrors (else None)."""
    Cm = pm.camera_poses(B, configuration)
    in_view = _frustum_fraction(Cm) >= 0.5 and bool(np.all(np.linalg.norm(Cm[:, :3, 3], axis=1) > 1e-9))
    return Cm, (planar_flip(Cm, check=False) if (robust and in_view) else None)


def _initial_inliers(A, Cm, Cf, X, Y, ls, configuration, robust):
    """Pairs close to the start (and which prefer their mirror): a generous gate on the robust distance."""
    n = A.shape[0]
    if not robust:
        return np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
    args = (X[None, :3, :3], X[None, :3, 3], Y[None, :3, :3], Y[None, :3, 3], np.array([math.exp(ls)]))
    d0 = _pair_distances(A, [Cm], *args, configuration)[0]
    repaired = np.zeros(n, dtype=bool)
    if Cf is not None:
        df = _pair_distances(A, [Cf], *args, configuration)[0]
    gate = max(4.0 * float(np.quantile(np.minimum(d0, df) if Cf is not None else d0, _SCORE_QUANTILE)), 1e-12)
    if Cf is not None:
        # a mirror replaces a reading only when the reading is far off and the mirror is not
        repaired = (d0 > gate) & (df <= gate)
        d0 = np.where(repaired, df, d0)
    inl = d0 <= gate
    if inl.sum() < 3:
        inl = np.ones(n, dtype=bool)
    return inl, repaired


def _config_loglik(A, C, X, Y, ls, inl, configuration) -> float:
    """Gaussian log-likelihood of the inlier residuals under a camera-frame diagonal model in ``configuration``.

    Rotation errors isotropic, translation errors with one variance per camera axis (closed-form
    fits): the reading in which the camera frame is the real one shows the depth / lateral
    anisotropy and scores higher.  Both readings are related by a map of unit determinant, so the
    two likelihoods compare directly.
    """
    Cp = _predict(A, X, Y, configuration)
    r = _res(C, Cp, ls)[inl]
    e = _mv(Cp[inl, :3, :3], r[:, 3:])  # camera-frame translation error
    m = r.shape[0]
    var_w = max(float(np.mean(r[:, :3] ** 2)), 1e-300)
    var_e = np.maximum(np.mean(e**2, axis=0), 1e-300)
    return -0.5 * m * (3.0 * math.log(var_w) + float(np.sum(np.log(var_e))))


# --------------------------------------------------------------------------- #
# the solver
# --------------------------------------------------------------------------- #
def _shape_info(sizes, shapes, theta) -> dict:
    """``info`` of the result: half-widths [m] of the PnP shapes and their variances ((pixel std / focal length)^2)."""
    if shapes is None:
        return {}
    m = shapes.shape[0]
    return {"pnp_target_half_widths_m": [float(a) for a in sizes],
            "pnp_shape_variances": [float(v) for v in theta[5 : 5 + m]]}  # fmt: skip


def _check_pixels(pixels, n: int, configuration, scale):
    """The configuration and scale setting of a fit with pixels; clear errors on a mismatch."""
    from kinhec.solvers.reprojection import PixelViews

    if not isinstance(pixels, PixelViews):
        raise InputError(f"pixels: expected a kinhec.solvers.reprojection.PixelViews or None, got "
                         f"{type(pixels).__name__}")  # fmt: skip
    if pixels.intrinsics is None:
        raise InputError("pixels: expected known intrinsics (PixelViews.intrinsics), got None")
    if len(pixels.points_3d) != n:
        raise InputError(f"pixels: expected one view per pose pair ({n}), got {len(pixels.points_3d)}")
    if configuration is not None and configuration != pixels.configuration:
        raise InputError(f"configuration: the pixels are {pixels.configuration!r}, got {configuration!r}")
    if pixels.configuration not in pm.CONFIGURATIONS:
        raise InputError(f"pixels.configuration: expected one of {', '.join(pm.CONFIGURATIONS)}, got "
                         f"{pixels.configuration!r}")  # fmt: skip
    if scale is True:
        raise InputError("scale: PnP poses from pixels with known intrinsics are metric; expected 'auto' or False "
                         "with pixels, got True")  # fmt: skip
    return pixels.configuration, False


def _check_noise(noise) -> dict | None:
    if noise is None:
        return None
    if not isinstance(noise, dict):
        raise InputError(f"noise: expected a dict with keys {', '.join(NOISE_KEYS)}, got {type(noise).__name__}")
    out = {}
    for k in NOISE_KEYS:
        v = noise.get(k, 0.0)
        try:
            v = float(v)
        except (TypeError, ValueError):
            raise InputError(f"noise[{k!r}]: expected a standard deviation >= 0, got {v!r}") from None
        if not (math.isfinite(v) and v >= 0):
            raise InputError(f"noise[{k!r}]: expected a finite standard deviation >= 0, got {v!r}")
        out[k] = v
    unknown = sorted(set(noise) - set(NOISE_KEYS))
    if unknown:
        raise InputError(f"noise: unknown keys {', '.join(unknown)}; expected {', '.join(NOISE_KEYS)}")
    if not any(out.values()):
        raise InputError("noise: expected at least one positive standard deviation, got all zeros")
    return out


def _lag1(r: np.ndarray, inl: np.ndarray) -> float:
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


def _motion_fit(A, B, X0, ls0, with_scale):
    """``X`` (and ``log s``) from the motions between consecutive poses: ``A_k X = X B_k``, see step 5.

    Returns ``X``, ``log s``, the covariance of ``(dx[, log s])`` and the per-motion rotation and translation
    standard deviations.
    """
    from scipy.optimize import least_squares  # here: importing the registry stays light

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
        Bp[:, :3, 3] *= math.exp(lsp)
        return Bp

    def residuals(p, X_, ls_):
        Xp = X_ @ _exp6(p[:6])
        lsp = ls_ + (p[6] if with_scale else 0.0)
        r = pm.fast_se3_log(se3.invert_transform(predicted(Xp, lsp), check=False) @ Bm)
        r[:, 3:] *= math.exp(-ls_)  # metric units at the current scale (see _res)
        return r

    def jacobian(p, X_, ls_):
        Xp = X_ @ _exp6(p[:6])
        lsp = ls_ + (p[6] if with_scale else 0.0)
        s = math.exp(lsp)
        Bp = predicted(Xp, lsp)
        E = se3.invert_transform(Bp, check=False) @ Bm
        # d r / d dx = (Ad(inv Bm) - Ad(inv E)) D_s, D_s = diag(I, s I) (first order in the residual)
        J = np.zeros((k, 6, P))
        Ad_E_inv = pm.adjoint(se3.invert_transform(E, check=False))
        J[:, :, :6] = Ad_Bm_inv - Ad_E_inv
        J[:, :, 3:6] *= s
        if with_scale:
            v = np.zeros((k, 6))
            v[:, 3:] = np.einsum("kji,kj->ki", Bp[:, :3, :3], Bp[:, :3, 3])  # R^T t of the prediction
            J[:, :, 6] = -_mv(Ad_E_inv, v)
        J[:, 3:, :] *= math.exp(-ls_)
        return J

    for _ in range(_DRIFT_ROUNDS):
        sw = np.sqrt(w)[:, None] / sig
        X_, ls_ = X, ls
        res = least_squares(lambda p: (sw * residuals(p, X_, ls_)).ravel(), np.zeros(P),
                            jac=lambda p: (sw[:, :, None] * jacobian(p, X_, ls_)).reshape(-1, P),
                            method="lm", xtol=1e-10, ftol=1e-10, gtol=1e-10, max_nfev=50)  # fmt: skip
        X = X_ @ _exp6(res.x[:6])
        X[:3, :3] = _project_so3(X[:3, :3])
        ls = ls_ + (res.x[6] if with_scale else 0.0)
        r = residuals(np.zeros(P), X, ls)
        var_r = max(float(np.sum(w * np.sum(r[:, :3] ** 2, axis=1)) / (3.0 * np.sum(w))), _VAR_FLOOR)
        var_t = max(float(np.sum(w * np.sum(r[:, 3:] ** 2, axis=1)) / (3.0 * np.sum(w))), _VAR_FLOOR)
        sig = np.sqrt(np.array([var_r] * 3 + [var_t] * 3))
        d2 = np.sum((r / sig) ** 2, axis=1)
        w = (_DRIFT_NU + 6.0) / (_DRIFT_NU + d2)  # no gate: increments over uneven keyframe gaps vary in size
    J = jacobian(np.zeros(P), X, ls) / sig[None, :, None]
    f_nu = (_DRIFT_NU + 6.0) / (_DRIFT_NU + 8.0)
    H = f_nu * np.einsum("kip,kiq->pq", J, J)
    cov = np.linalg.pinv(H, hermitian=True) * 6.0 * k / max(6.0 * k - P, 1.0)
    return X, ls, cov, float(sig[0]), float(sig[3])


def _y_from_x(A, B, X, ls):
    """``Y`` as the mean of ``A_i X inv(B_i)`` (camera translations divided by ``s``): rotations by the
    chordal mean, translations by the average."""
    Bs = B.copy()
    Bs[:, :3, 3] *= math.exp(-ls)
    Yi = A @ X @ se3.invert_transform(Bs, check=False)
    Y = np.eye(4)
    Y[:3, :3] = _project_so3(Yi[:, :3, :3].sum(axis=0))
    Y[:3, 3] = Yi[:, :3, 3].mean(axis=0)
    return Y


# --------------------------------------------------------------------------- #
# a drifting monocular scale
# --------------------------------------------------------------------------- #
def _scale_offsets(r: np.ndarray, Cp: np.ndarray, Sinv: np.ndarray, inl: np.ndarray) -> np.ndarray:
    """The log-scale offset each inlier pair alone asks for, in time order: ``(u_i^T W_i r_i) / (u_i^T W_i u_i)``.

    ``u_i`` is the pair's scale direction, ``W_i`` its inverse covariance.  Pairs that barely see the scale
    (camera near the reference's origin, as at the start of visual odometry) give offsets of no precision:
    only those within 3x the median standard deviation are kept.
    """
    u = pm.scale_jacobian(Cp)
    Wu = _mv(Sinv, u)
    prec = (Wu * u).sum(axis=1)
    keep = inl & (prec > 0) & (prec >= np.median(prec[inl]) / 9.0)
    return (Wu * r).sum(axis=1)[keep] / prec[keep]


def _lag1_of(d: np.ndarray) -> float:
    """Lag-1 autocorrelation of a series about its mean: independent noise gives about 0, a random walk about 1."""
    d = d - d.mean()
    ss = float(d @ d)
    return float(d[:-1] @ d[1:]) / ss if ss > 0 and d.size > 2 else 0.0


def _solve_scale_drift(A, Cm, X0, Y0, ls0, q0, Linv, sw, configuration, sigma_d, max_iter: int = 30):
    """Weighted least squares over ``X``, ``Y``, ``log s`` and a log-scale offset ``q_i`` per pair.

    ``q_0 = 0`` (``s`` is the scale of the first pair); the offsets follow a random walk,
    ``q_i - q_(i-1) ~ N(0, sigma_d^2)``, which enters as prior residuals.  Levenberg-Marquardt on the dense
    normal equations (13 + n - 1 unknowns, cheap at a few hundred pairs).  Returns ``X``, ``Y``, ``ls``,
    ``q`` and the inverse of the normal matrix at the solution (covariance of ``(dx, dy, log s, q_1..)``).
    """
    n = A.shape[0]
    P = 13 + n - 1
    X, Y, ls, q = X0.copy(), Y0.copy(), ls0, q0.copy()
    D = (np.eye(n)[1:] - np.eye(n, k=-1)[1:])[:, 1:] / sigma_d  # prior rows on q_1..q_(n-1)

    def residual(X_, Y_, ls_, q_):
        Cp = _predict(A, X_, Y_, configuration)
        e = sw[:, None] * _mv(Linv, _res(Cm, Cp, ls_, ls0, q_))
        return e, (np.diff(q_) / sigma_d), Cp

    def cost(e, pr):
        return float(np.sum(e * e) + pr @ pr)

    def normal(X_, ls_, q_, e, pr, Cp):
        J, _ = pm.pair_jacobians(Cp, X_, configuration)
        k = np.exp(ls_ + q_ - ls0)
        Jr = -J
        Jr[:, 3:] *= k[:, None, None]
        Js = -k[:, None] * pm.scale_jacobian(Cp)
        Jg = np.concatenate([Jr, Js[:, :, None]], axis=2)
        Jg = sw[:, None, None] * (Linv @ Jg)  # (n, 6, 13); the scale column is also each pair's q column
        wq = Jg[:, :, 12]
        H = np.zeros((P, P))
        H[:13, :13] = np.einsum("nip,niq->pq", Jg, Jg)
        H[:13, 13:] = np.einsum("nip,ni->pn", Jg[1:], wq[1:])
        H[13:, :13] = H[:13, 13:].T
        H[13:, 13:] = np.diag((wq[1:] * wq[1:]).sum(axis=1)) + D.T @ D
        g = np.zeros(P)
        g[:13] = np.einsum("nip,ni->p", Jg, e)
        g[13:] = (wq[1:] * e[1:]).sum(axis=1) + D.T @ pr
        return H, g

    e, pr, Cp = residual(X, Y, ls, q)
    f = cost(e, pr)
    lam = 1e-3
    H, g = normal(X, ls, q, e, pr, Cp)
    for _ in range(max_iter):
        dH = np.diag(np.diag(H))
        try:
            step = -np.linalg.solve(H + lam * dH, g)
        except np.linalg.LinAlgError:
            lam *= 10.0
            continue
        Xn, Yn = X @ _exp6(step[:6]), Y @ _exp6(step[6:12])
        lsn = ls + step[12]
        qn = q.copy()
        qn[1:] += step[13:]
        en, prn, Cpn = residual(Xn, Yn, lsn, qn)
        fn = cost(en, prn)
        if fn <= f:
            small = f - fn <= 1e-10 * max(f, 1e-300)
            X, Y, ls, q, e, pr, f = Xn, Yn, lsn, qn, en, prn, fn
            lam = max(lam / 10.0, 1e-12)
            H, g = normal(X, ls, q, e, pr, Cpn)
            if small:
                break
        else:
            lam *= 10.0
            if lam > 1e8:
                break
    X[:3, :3] = _project_so3(X[:3, :3])
    Y[:3, :3] = _project_so3(Y[:3, :3])
    return X, Y, ls, q, np.linalg.pinv(H, hermitian=True)


def _drift_variance(q: np.ndarray, cov: np.ndarray) -> float:
    """EM update of ``sigma_d^2`` from the smoothed offsets: mean of ``(q_i - q_(i-1))^2`` plus its posterior variance."""
    Cq = cov[13:, 13:]  # q_1.. (q_0 = 0 is fixed)
    var = np.diag(Cq).copy()
    var[1:] = var[1:] + var[:-1] - 2.0 * np.diag(Cq, k=1)
    dq = np.diff(q)
    return float(np.mean(dq * dq + np.maximum(var, 0.0)))


def he_ml(A_abs, B_abs, *, configuration: str | None = None, noise: dict | None = None, scale="auto",
          scale_drift="auto", drift="auto", robust: bool = True, n_hypotheses: int = N_HYPOTHESES, seed: int | None = None,
          max_rounds: int = 5, pixels=None) -> HeMlResult:  # fmt: skip
    """Maximum-likelihood ``X`` and ``Y`` of ``A_i X = Y B_i`` under the anisotropic noise model.

    Parameters
    ----------
    A_abs : array_like, shape (N, 4, 4)
        Flange poses ``T_base_ee`` [m], N >= 3.
    B_abs : array_like, shape (N, 4, 4)
        ``inv(T_cam_target)`` (eye-in-hand) or ``T_cam_target`` (eye-to-hand).
    configuration : {"eye_in_hand", "eye_to_hand"}, optional
        Identified from the poses when omitted (the one that puts the
        reference in front of the camera).
    noise : dict, optional
        Known standard deviations (:data:`NOISE_KEYS`: camera rotation [rad],
        camera lateral and depth translation [m], robot flange rotation [rad]
        and translation [m]); estimated from the residuals when omitted.
    scale : {"auto", True, False}
        Monocular scale of the camera translations: estimated and kept when
        significant (``"auto"``), always estimated, or fixed to 1.
    scale_drift : {"auto", True, False}
        A scale that drifts as a random walk (pairs in time order): fitted when
        the per-pair scale offsets show it (``"auto"``, from 8 pairs on and
        with a scale), always (with a scale, from 8 pairs on), or never.
    drift : {"auto", True, False}
        Camera error that is a random walk (visual odometry): ``X`` from the
        motions between consecutive pairs (given in time order) when the
        residuals show it (``"auto"``, from 8 pairs on), always, or never.
    robust : bool
        Minimal-set hypotheses, chi-square gate, planar-flip repair and
        Student-t weights (from 8 pairs on).  ``False``: all pairs, Gaussian
        weights.
    n_hypotheses : int
        Random minimal sets of the initialisation.
    seed : int, optional
        Seed of the minimal-set draws (default: :data:`HE_ML_SEED`, the same on every call).
    max_rounds : int
        Most reweighting rounds (they stop once inliers, weights and noise levels settle).
    pixels : PixelViews, optional
        The target's pixels behind the camera poses, one view per pair, with
        known intrinsics (:class:`kinhec.solvers.reprojection.PixelViews`).
        The fit on the poses then starts a last stage on the pixels of its
        inliers, with the robot's pose errors marginalised
        (:mod:`kinhec.solvers.he_ml_pixels`): where PnP is nonlinear (small
        targets, large pixel noise) the poses lose accuracy that the pixels
        keep.  The views' configuration is the configuration; PnP poses are
        metric, so no scale is estimated.

    Returns
    -------
    HeMlResult
        ``X`` (``T_ee_cam`` / ``T_ee_marker``), ``Y`` (``T_base_world`` /
        ``T_base_cam``), their covariance, the scale, the noise levels, the
        inliers.

    Raises
    ------
    InputError
        Bad shapes or values, unknown configuration, bad noise levels.
    DegenerateMotionError
        The flange rotations all differ by rotations about one axis.
    """
    A, B = c.check_pairs(A_abs, B_abs)
    c.check_rotation_axes(c.relative_rotvecs_of_poses(A[:, :3, :3]), "he_ml", "the motions between the poses A_abs")
    known = _check_noise(noise)
    if scale not in ("auto", True, False):
        raise InputError(f"scale: expected 'auto', True or False, got {scale!r}")
    if drift not in ("auto", True, False):
        raise InputError(f"drift: expected 'auto', True or False, got {drift!r}")
    if scale_drift not in ("auto", True, False):
        raise InputError(f"scale_drift: expected 'auto', True or False, got {scale_drift!r}")
    if pixels is not None:
        configuration, scale = _check_pixels(pixels, A.shape[0], configuration, scale)
        scale_drift = drift = False
    given = configuration
    if configuration is None:
        configuration, _ = _configuration(B)
    elif configuration not in pm.CONFIGURATIONS:
        raise InputError(f"configuration: expected one of {', '.join(pm.CONFIGURATIONS)} or None, got {configuration!r}")
    n = A.shape[0]
    with_scale = scale is not False

    # 2. hypotheses, scored with the reading of the frustum test (or the given configuration)
    rng = np.random.default_rng(HE_ML_SEED if seed is None else seed)
    robust = robust and n >= _ROBUST_MIN_PAIRS
    Cm, Cf = _readings(B, configuration, robust)
    readings = [Cm] if Cf is None else [Cm, Cf]
    RX, tX, RY, tY, s, used = _hypotheses(A, B, rng, n_hypotheses if robust else 0, with_scale)
    s = np.where(np.isfinite(s) & (s > 1e-6), s, 1.0)
    h = 0
    if robust:
        # hypotheses are scored on a random subset of the pairs (enough for a quantile, and cheap); a minimal
        # set fits its own three pairs exactly, so those do not count in its score
        sub = np.sort(rng.choice(n, size=min(n, _SCORE_PAIRS), replace=False))
        d = _pair_distances(A[sub], [r[sub] for r in readings], RX, tX, RY, tY, s, configuration)
        own = used[:, sub]
        own[0] = False
        d[own] = np.inf  # sorted last; the quantile is taken among the other pairs
        m = (~own).sum(axis=1)
        k = np.floor(_SCORE_QUANTILE * np.maximum(m - 1, 0)).astype(np.int64)
        score = np.sort(d, axis=1)[np.arange(d.shape[0]), k]
        best = int(np.nanargmin(score))
        # the all-pairs closed form stays the start unless a minimal set explains the data clearly better
        h = best if score[best] < _PREFER_ALL * score[0] else 0
    X = c.transform(RX[h], tX[h])
    Y = c.transform(RY[h], tY[h])
    ls = math.log(s[h]) if with_scale else 0.0
    inl, repaired = _initial_inliers(A, Cm, Cf, X, Y, ls, configuration, robust)
    if scale == "auto" and abs(ls) < _SCALE_START:
        # the closed form finds the data metric: no scale unless asked for
        with_scale, ls = False, 0.0
    if given is None and n >= _ROBUST_MIN_PAIRS:
        # 1. configuration: the reading whose camera-frame noise model explains the residuals best
        other = "eye_to_hand" if configuration == "eye_in_hand" else "eye_in_hand"
        ll = {}
        for conf in (configuration, other):
            Cu = pm.camera_poses(B, conf)
            if conf == configuration and Cf is not None:
                Cu = np.where(repaired[:, None, None], Cf, Cm)
            ll[conf] = _config_loglik(A, Cu, X, Y, ls, inl, conf)
        if ll[other] > ll[configuration]:
            configuration = other
            Cm, Cf = _readings(B, configuration, robust)
            inl, repaired = _initial_inliers(A, Cm, Cf, X, Y, ls, configuration, robust)

    # the motion-direction component needs pairs in time order and enough of them
    U = _motion_directions(A) if n >= _ROBUST_MIN_PAIRS else None
    # with the reference in view, PnP shapes of generic targets join the camera components (sizes in metres),
    # when the pairs leave enough redundancy to tell them from the constant ones
    sizes = None
    n_comp = 5 + len(_TARGET_SIZES) + (U is not None)
    if known is None and 6 * n - 12 >= _SHAPE_REDUNDANCY * n_comp and _frustum_fraction(Cm) >= 0.5:
        sizes = np.asarray(_TARGET_SIZES) * float(np.median(Cm[Cm[:, 2, 3] > 0, 2, 3]))
    shapes = None
    theta = None if known is None else _theta_from_noise(known)
    if theta is not None and U is not None:
        theta = np.append(theta, 0.0)
    nu = math.inf
    w = np.ones(n)
    chi2 = np.zeros(n)
    prev = None
    settled_at = None  # the round's prediction, Jacobians, components and residuals when the weights settle
    for _ in range(max_rounds):
        C_use = np.where(repaired[:, None, None], Cf, Cm) if Cf is not None else Cm
        Cp = _predict(A, X, Y, configuration)
        J, G = pm.pair_jacobians(Cp, X, configuration)
        if sizes is not None and shapes is None:
            # the shapes are taken at the first prediction: they change little with the fit, and are the costly part
            shapes = _target_shapes(Cp, sizes)
        Q = _components(Cp, G, U, shapes)
        if Cf is not None:
            r0, rf = _res(Cm, Cp, ls), _res(Cf, Cp, ls)  # each reading and its mirror (the gate below needs both)
            r = np.where(repaired[:, None], rf, r0)
        else:
            r = _res(C_use, Cp, ls)
        idx = np.flatnonzero(inl)
        if known is None:
            if theta is None:
                # start: camera rotation and translation from the residual spreads, robot small
                rr = max(float(np.mean(r[inl, :3] ** 2)), _VAR_FLOOR)
                rt = max(float(np.mean(r[inl, 3:] ** 2)), _VAR_FLOOR)
                # (the PnP shapes, of unit mean trace, start with the camera's total variance between them)
                m = 0 if shapes is None else shapes.shape[0]
                theta = np.array([rr, rt, rt, 0.1 * rr, 0.1 * rt] + [3.0 * (rr + rt) / max(m, 1)] * m
                                 + ([] if U is None else [0.01]))  # fmt: skip
            if 6 * int(inl.sum()) - 12 >= 2 * theta.size:
                # enough redundancy to estimate the components (else the start from the residual spreads stays)
                try:
                    theta = np.maximum(_estimate_components(r[inl], _pairs(Q, idx, n), w[inl], theta), _VAR_FLOOR)
                except np.linalg.LinAlgError:
                    pass
            if U is not None:
                trQ = _traces(Q)[:, inl].mean(axis=1)
                if theta[-1] * trQ[-1] < _MOTION_SHARE * float(np.sum(theta * trQ)):
                    # the data show no error along the motion: leave the component out (no weight noise)
                    U, theta, Q = None, theta[:-1], Q[:-1]
        Linv, Sinv, logdet = _whitener(_sigma(theta, Q))
        chi2 = _quad(r, Sinv)
        if robust:
            if Cf is not None:
                # chi-square of the reading and of its mirror; the mirror only for readings outside the gate
                c0 = _quad(r0, Sinv)
                cf = _quad(rf, Sinv)
                repaired = (c0 > CHI2_GATE) & (cf <= CHI2_GATE)
                chi2 = np.where(repaired, cf, c0)
                C_use = np.where(repaired[:, None, None], Cf, Cm)
                r = np.where(repaired[:, None], rf, r0)
            new_inl = chi2 <= CHI2_GATE
            if new_inl.sum() >= 3:
                inl = new_inl
            # Student-t degrees of freedom by likelihood on the inliers
            lls = [_t_loglik(chi2[inl], logdet[inl], v) for v in _NU_CANDIDATES]
            nu = _NU_CANDIDATES[int(np.argmax(lls))]
            w = np.ones(n) if not np.isfinite(nu) else (nu + 6.0) / (nu + chi2)
        # shares of the total variance per component: the weights have settled when none moves by 2 %
        trQ = _traces(Q)[:, inl].mean(axis=1)
        share = theta * trQ / max(float(np.sum(theta * trQ)), 1e-300)
        state = (inl.copy(), repaired.copy(), nu, share)
        settled = prev is not None and (np.array_equal(prev[0], state[0]) and np.array_equal(prev[1], state[1])
                                        and prev[2] == state[2] and prev[3].shape == share.shape
                                        and np.all(np.abs(prev[3] - share) <= _SETTLE_SHARE))  # fmt: skip
        prev = state
        if settled:
            settled_at = (X, Y, ls, Cp, J, G, Q, r, Sinv)
            break
        sw = np.sqrt(w) * inl
        X1, Y1, ls1, Jw = _solve_wls(A, C_use, X, Y, ls, Linv, sw, configuration, with_scale)
        if with_scale and scale == "auto":
            var_ls = np.linalg.pinv(Jw.T @ Jw)[12, 12]
            if abs(ls1) < max(3.0 * math.sqrt(max(var_ls, 0.0)), _SCALE_MIN):
                # no significant scale: solve again with s = 1 (not counted as a round)
                with_scale = False
                ls1 = 0.0
                X1, Y1, _, Jw = _solve_wls(A, C_use, X, Y, 0.0, Linv, sw, configuration, False)
        X, Y, ls = X1, Y1, ls1

    info = {}
    motion_fit = None
    C_use = np.where(repaired[:, None, None], Cf, Cm) if Cf is not None else Cm
    q = None
    drift_cov = None
    if with_scale and scale_drift is not False and n >= _ROBUST_MIN_PAIRS:
        # 5a. a drifting scale: the per-pair log-scale offsets the residuals ask for follow it from pair to pair
        Cp = _predict(A, X, Y, configuration)
        _, G = pm.pair_jacobians(Cp, X, configuration)
        Q = _components(Cp, G, U, shapes)
        d = _scale_offsets(_res(C_use, Cp, ls), Cp, _whitener(_sigma(theta, Q))[1], inl)
        info["scale_offset_lag1"] = lag_s = _lag1_of(d)
        if scale_drift is True or lag_s > SCALE_DRIFT_LAG1:
            q = np.zeros(n)
            idx = np.flatnonzero(inl)
            sigma_d = max(float(np.std(np.diff(d))) / 2.0, 1e-6)
            share_prev = None
            for _ in range(_SCALE_DRIFT_ROUNDS):
                # the camera components again, from the residuals that the fitted offsets leave (the constant
                # scale's residuals carry the drift); then the fit; then the step of the walk (EM)
                Cp = _predict(A, X, Y, configuration)
                _, G = pm.pair_jacobians(Cp, X, configuration)
                Q = _components(Cp, G, U, shapes)
                r = _res(C_use, Cp, ls, ls, q)
                if known is None and 6 * int(inl.sum()) - 12 >= 2 * theta.size:
                    extra = None
                    if drift_cov is not None:
                        # the offsets' posterior variance along each pair's scale direction (EM): without it the
                        # offsets would take the depth noise with them
                        g = np.exp(q)[:, None] * pm.scale_jacobian(Cp)
                        var_q = np.r_[0.0, np.diag(drift_cov)[13:]]
                        extra = (var_q[:, None, None] * g[:, :, None] * g[:, None, :])[inl]
                    try:
                        theta = np.maximum(_estimate_components(r[inl], _pairs(Q, idx, n), w[inl], theta, extra=extra),
                                           _VAR_FLOOR)  # fmt: skip
                    except np.linalg.LinAlgError:
                        pass
                trQ = _traces(Q)[:, inl].mean(axis=1)
                share = theta * trQ / max(float(np.sum(theta * trQ)), 1e-300)
                Linv = _whitener(_sigma(theta, Q))[0]
                X, Y, ls, q, drift_cov = _solve_scale_drift(A, C_use, X, Y, ls, q, Linv, np.sqrt(w) * inl,
                                                            configuration, sigma_d)  # fmt: skip
                new_sd = math.sqrt(max(_drift_variance(q, drift_cov), 1e-24))
                settled = (abs(new_sd - sigma_d) <= 0.05 * sigma_d and share_prev is not None
                           and float(np.max(np.abs(share - share_prev))) <= _SETTLE_SHARE)  # fmt: skip
                sigma_d, share_prev = new_sd, share
                if settled:
                    break
            info["scale_drift_std"] = sigma_d
            info["scale_offsets"] = q.copy()
    if n >= _ROBUST_MIN_PAIRS or drift is True:
        info["residual_lag1"] = lag1 = _lag1(_res(C_use, _predict(A, X, Y, configuration), ls, ls, q), inl)
        if drift is True or (drift == "auto" and lag1 > _DRIFT_SUSPECT):
            # every pair (the gate of the pair model does not apply to a random walk), mirrors repaired, in the
            # caller's B form (camera_poses is its own inverse map)
            Bi = pm.camera_poses(C_use, configuration)
            Xm, lsm, cov_x, s_rot, s_trans = _motion_fit(A, Bi, X, ls, with_scale)
            Ym = _y_from_x(A, Bi, Xm, lsm)
            # a wrong X absorbs part of a walk into pose-dependent residuals: judge the walk at the motion fit
            lag1_m = _lag1(_res(C_use, _predict(A, Xm, Ym, configuration), lsm), np.ones(n, dtype=bool))
            if drift is True or lag1_m > DRIFT_LAG1:
                X, Y, ls = Xm, Ym, lsm
                motion_fit = cov_x
                q = drift_cov = None
                info.pop("scale_drift_std", None)
                info.pop("scale_offsets", None)
                info["residual_lag1"] = lag1_m
                info["drift"] = {"rot_std_rad": s_rot, "trans_std_m": s_trans}

    # final covariance with the final weights; variance components corrected for the fitted parameters
    P = 13 if with_scale else 12
    dof_scale = 1.0
    if known is None:
        n_obs = 6.0 * inl.sum()
        dof_scale = n_obs / max(n_obs - P, 1.0)
        theta = theta * dof_scale
    if settled_at is not None and settled_at[0] is X and settled_at[1] is Y and settled_at[2] == ls and q is None:
        # the fit has not moved since the weights settled: that round's quantities are the final ones (the
        # inverse covariances scaled by the correction of the components)
        Cp, J, G, Q, r, Sinv = settled_at[3:]
        Sinv = Sinv / dof_scale
    else:
        Cp = _predict(A, X, Y, configuration)
        J, G = pm.pair_jacobians(Cp, X, configuration)
        Q = _components(Cp, G, U, shapes)
        r = _res(C_use, Cp, ls, ls, q)
        Sinv = _whitener(_sigma(theta, Q))[1]
    chi2 = _quad(r, Sinv)
    if with_scale:
        J = np.concatenate([J, pm.scale_jacobian(Cp)[:, :, None]], axis=2)
    # expected information of the weighted (Student-t) likelihood: (nu + 6) / (nu + 8) per pair
    f_nu = 1.0 if not np.isfinite(nu) else (nu + 6.0) / (nu + 8.0)
    Ji = J[inl]
    Hn = f_nu * (np.swapaxes(Ji, 1, 2) @ Sinv[inl] @ Ji).sum(axis=0)
    cov = np.linalg.pinv(Hn, hermitian=True)
    if drift_cov is not None:
        # the per-pair offsets of a drifting scale are nuisance parameters: their block is marginalised out
        cov = drift_cov[:13, :13]
    if motion_fit is not None:
        # X (and log s) from the motions; Y from the pair model given X, no cross terms
        cov_y = np.linalg.pinv(Hn[6:12, 6:12], hermitian=True)
        cov = np.zeros_like(cov)
        cov[:6, :6] = motion_fit[:6, :6]
        cov[6:12, 6:12] = cov_y
        if with_scale:
            cov[12, 12] = motion_fit[6, 6]
            cov[:6, 12] = cov[12, :6] = motion_fit[:6, 6]
    info.update(_shape_info(sizes, shapes, theta))
    noise_out = _noise_from_theta(theta)
    if pixels is not None:
        # 7. the pixels of the inliers, the robot's errors marginalised; start from the fit on the poses
        sel = np.flatnonzero(inl)
        fit = pixel_ml(A[sel], X, Y, configuration, [pixels.points_3d[i] for i in sel],
                       [pixels.points_2d[i] for i in sel], pixels.intrinsics)  # fmt: skip
        X, Y, cov = fit.X, fit.Y, fit.cov
        noise_out["robot_rot_std_rad"] = fit.robot_rot_std_rad
        noise_out["robot_trans_std_m"] = fit.robot_trans_std_m
        twists = np.full((n, 6), np.nan)
        twists[sel] = fit.robot_twists
        info.update(pixel_std=fit.pixel_std, pixel_rms=fit.rms_px, pixel_iterations=fit.n_iter,
                    pixel_robot_twists=twists)  # fmt: skip
    return HeMlResult(
        X=X, Y=Y, cov=cov, scale=math.exp(ls) if with_scale else None, noise=noise_out,
        configuration=configuration, inliers=inl, repaired=repaired, dof=nu, chi2=chi2, n_inliers=int(inl.sum()),
        info=info,
    )  # fmt: skip
