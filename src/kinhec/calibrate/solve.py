"""Robust initialisation, outlier rejection, joint refinement and uncertainty of ``A_i X = Y B_i``.

Model.  Pair ``i`` holds the hand pose ``A_i = T_base_ee`` (interpolated at the
eye stamp minus the clock offset ``delta`` when the streams are stamped) and
the eye pose ``B_i`` (``T_target_cam`` eye-in-hand, ``T_cam_marker``
eye-to-hand), whose translation is divided by the monocular scale ``s`` when
it is estimated.  The residual of a pair is the 6-vector of the disagreement
``E_i = inv(A_i X) Y B_i`` (identity when consistent)::

    r_i = (log R_E [rad], t_E [m])        expressed in the camera (marker) frame

The unknowns are perturbed as ``R_X exp(phi_X)``, ``t_X + d_X`` (and the same
for ``Y``), ``delta`` and ``log s``; the standard deviations reported are those
of ``(phi, d)`` -- rotation [rad] in the frame of the estimated transform,
then translation [m] in its parent frame.

The scale ``s`` has two uses.  A monocular stream (``--scale``) has an unknown
scale, estimated freely.  A metric stream (a board seen by PnP, a mocap body)
has a scale near 1 that is still uncertain: a printed board is rarely exactly
its stated size, and a focal length that is off stretches every PnP depth.
It is estimated too, under the Gaussian prior ``log s ~ N(0, sigma_prior^2)``
(:mod:`kinhec.calibrate.scale`): where the robot's translations determine it
the data decide; where they do not, its prior uncertainty is carried into the
covariance of ``X`` and ``Y`` instead of being assumed away.

Procedure.

1. Initial ``X`` (and ``Y``, ``s``) from every registry solver on a subsample of
   pairs (``A X = X B`` solvers on the motions between every two of them, RANSAC
   included; ``A X = Y B`` solvers on the poses); ``Y`` from ``X`` by a robust
   average of ``A_i X inv(B_i)``; and their consensus (the chordal mean of the
   candidates' rotations and the median of their translations).  The candidate
   that the most pairs agree with wins: the sum over *all* pairs of a truncated
   quadratic of the residuals in units of a common noise scale
   (:func:`consensus_order`) -- not a median, which a candidate fitting half of
   the pairs well and the rest badly would win.
2. Noise model: the covariance ``S`` of the residuals, first from their
   median absolute deviations, then from the inliers' residuals: the full 6x6
   from :data:`FULL_NOISE_DOF` degrees of freedom on, its diagonal below, one
   variance per block of three below :data:`DIAG_NOISE_DOF` (:func:`_noise_model`).
3. Gauss-Newton with Levenberg-Marquardt damping on the whitened residuals
   ``S^{-1/2} r_i`` of the inliers (analytic Jacobian; numeric in ``delta``,
   re-interpolating the hand stream), plus the scale's prior.  Outliers: the
   first round gates the Mahalanobis distance under the robust diagonal
   covariance at the 99.99 % chi-square quantile; later rounds compare every
   pair's studentised distance under the estimated covariance with its
   Hotelling distribution (:func:`kinhec.calibrate.uncertainty.gate`), so that
   a covariance estimated from a few dozen pairs does not reject good pairs
   and collapse onto a minority; below :data:`FULL_NOISE_DOF` degrees of
   freedom, each residual component on its own
   (:func:`kinhec.calibrate.uncertainty.gate_diagonal`), never leaving fewer
   than :data:`MIN_GATE_DOF`.  Rejection and refinement alternate until the
   labels and the noise model settle; labels that cycle keep every pair some
   state of the cycle keeps, and stop changing.
4. Covariance ``(J^T S^-1 J + prior)^{-1}`` at the solution, times
   ``dof / (dof - 7)`` (the noise covariance is estimated from the same
   ``dof`` residuals, which biases its inverse by that factor), times the
   long-run factor of the residual sequence in pair order
   (:func:`kinhec.calibrate.uncertainty.long_run_inflation`; the same rule for
   stamped and unstamped pairs).  With the full noise model, the covariance of
   the estimate those weights give: the sandwich with the noise's correlations
   shrunk by their sampling error (:func:`_noise_sandwich`), so that a draw of
   ``S`` too small in one direction does not make the error bars too small
   there.

The residual domain (the pose as the eye file states it, or its inverse) is
the one whose noise model fits best (:func:`choose_domain`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import eye_bias as eb
from kinhec.calibrate import reduced_dof as rd
from kinhec.calibrate import uncertainty as unc
from kinhec.util.errors import DegenerateMotionError, InputError, KinhecError
from kinhec.solvers import _common as c
from kinhec.solvers import registry
from kinhec.solvers.axxb_andreff import andreff

__all__ = ["Solution", "robust_nll", "NLL_MARGIN", "retract", "score", "one_axis_information",
           "one_axis_pair_information", "motions_between",
           "robust_y", "initial_candidates", "consensus_order", "refine", "noise_report", "choose_domain",
           "CHI2_6_9999", "motions_between", "robust_y"]

#: 99.99 % quantile of the chi-square distribution with 6 degrees of freedom (outlier gate).
CHI2_6_9999 = 27.856
#: Most motions handed to the RANSAC candidate.
RANSAC_MOTIONS = 120
#: Relative change of the residual standard deviations below which the noise model has settled.
NOISE_TOL = 0.01
#: A Levenberg-Marquardt round stops when a step lowers the whitened chi-square by less than this: the state is then
#: within about sqrt(2 x 1e-6) = 0.0014 standard deviations of the minimum at the round's noise model.
LM_TOL_CHI2 = 1e-6
#: Levenberg-Marquardt iterations per round: the noise model moves between rounds anyway, so a round need not
#: reach its own minimum; the rounds end only on a round whose iterations did.
LM_ROUND_ITER = 30
#: Pairs used by the initial solvers (motions between every two of them).
INIT_PAIRS = 30


@dataclass
class Solution:
    """Refined unknowns with their covariance (see the module documentation for the parametrisation)."""

    X: np.ndarray
    Y: np.ndarray
    offset: float | None
    scale: float | None
    cov: np.ndarray  # (P, P) over phi_X, d_X, phi_Y, d_Y[, delta][, log s]
    residuals: np.ndarray  # (N, 6) at the solution, all pairs
    inliers: np.ndarray  # (N,) bool
    noise_cov: np.ndarray  # (6, 6) residual covariance of the inliers
    inflation: float  # largest variance factor of X for correlated residuals (inflation_detail has them all)
    init_solver: str
    iterations: int
    noise_dof: float = 0.0  # degrees of freedom of noise_cov (at least 1)
    fit_dof: float | None = None  # the same before that floor: inliers minus effective parameters / 6 [pairs]
    scale_data_std: float | None = None  # std of log s from the data alone (inf: not determined by them)
    inflation_detail: unc.Inflation | None = None
    eye_bias_cov: np.ndarray | None = None  # (P, P) the part of cov due to the eye-pose systematic (considered)
    noise_model: str = "full"  # structure of noise_cov: "full", "diagonal" or "block" (by the degrees of freedom)
    # the whitened system of the final fit, over the inliers in pair order (kinhec.calibrate.held_out reuses it):
    whitening: np.ndarray | None = None  # (6, 6) W with W^T W = inv(noise_cov)
    whitened_jacobian: np.ndarray | None = None  # (n_inliers, 6, P)
    whitened_residuals: np.ndarray | None = None  # (n_inliers, 6)
    prior_information: np.ndarray | None = None  # (P, P)
    settled: bool = True  # False when the rounds ended at max_rounds with the noise model or labels still moving
    noise_shrinkage: float = 0.0  # weight of the full noise model's correlations shrunk in its covariance (0: none)


# --------------------------------------------------------------------------- #
# residuals
# --------------------------------------------------------------------------- #
def residuals(A, B, X, Y, scale=None, inverse_domain: bool = True) -> np.ndarray:
    """Residuals ``(N, 6)`` of ``A_i X = Y B_i`` in the domain the eye file states its poses.

    ``inverse_domain``: predicted ``inv(A_i X) Y`` against the measured
    ``inv(B_i)`` (eye-in-hand with ``T_cam_target`` files, eye-to-hand with
    ``T_target_cam`` files); otherwise predicted ``inv(Y) A_i X`` against
    ``B_i``.  ``r = (log(R_pred R_meas^T) [rad], t_pred - t_meas [m])``: the
    rotation and translation errors of the pose as it was measured (a PnP pose's
    depth and lateral errors, or a mocap position's, stay apart and are not
    mixed through a lever arm).  With ``scale``, the predicted translation is
    multiplied by it (eye = scale x metric): the residual stays in the units of
    the measurement, whose noise does not depend on the scale (dividing the
    measurement instead would let a larger scale shrink the noise and bias
    the scale upwards).
    """
    RA, tA = A[:, :3, :3], A[:, :3, 3]
    RB, tB = B[:, :3, :3], B[:, :3, 3]
    RX, tX, RY, tY = X[:3, :3], X[:3, 3], Y[:3, :3], Y[:3, 3]
    RAX = RA @ RX
    tAX = RA @ tX + tA
    if inverse_domain:
        RAXt = np.swapaxes(RAX, 1, 2)
        R_pred = RAXt @ RY
        t_pred = np.einsum("nij,nj->ni", RAXt, tY - tAX)
        R_meas_t = RB  # (R_B^T)^T
        t_meas = -np.einsum("nji,nj->ni", RB, tB)
    else:
        R_pred = RY.T @ RAX
        t_pred = (tAX - tY) @ RY
        R_meas_t = np.swapaxes(RB, 1, 2)
        t_meas = tB
    rot = _log_small(R_pred @ R_meas_t)
    if scale is not None:
        t_pred = scale * t_pred
    return np.concatenate([rot, t_pred - t_meas], axis=1)



def capped_cost(pairing, offset, X, Y, scale, S_inv: np.ndarray, inverse_domain: bool) -> float:
    """Mean over the pairs of ``pairing`` at clock offset ``offset`` of ``r^T S_inv r``, each capped at
    :data:`CHI2_6_9999` (an outlier counts as much as a pair on the gate's edge), with :func:`residuals` in the
    domain ``inverse_domain``."""
    A, B = pairing.at(offset)
    r = residuals(A, B, X, Y, scale, inverse_domain)
    d2 = np.einsum("ni,ij,nj->n", r, S_inv, r)
    return float(np.mean(np.minimum(d2, CHI2_6_9999)))

def robust_nll(pairing, sol: Solution, inverse_domain: bool) -> float:
    """Twice the negative log-likelihood per pair of ``sol`` under its own noise covariance (constants dropped):
    ``log det S`` plus the mean capped chi-square of :func:`capped_cost` -- fits with different noise models,
    outlier labels or clock offsets compared on the same scale (every pair counts, an outlier at the cap)."""
    sign, logdet = np.linalg.slogdet(sol.noise_cov)
    if sign <= 0:
        return float("inf")
    S_inv = np.linalg.inv(sol.noise_cov)
    return float(logdet) + capped_cost(pairing, sol.offset, sol.X, sol.Y, sol.scale, S_inv, inverse_domain)


#: A fit replaces another (a second start, the same clock) only when its :func:`robust_nll` is lower by this much:
#: far above round-off, so that the choice does not depend on the BLAS kernels.
NLL_MARGIN = 1e-6


def _log_small(R: np.ndarray) -> np.ndarray:
    """Rotation vectors of ``R`` (N, 3, 3) from the antisymmetric part and the trace (exact below ~170 deg)."""
    w = 0.5 * np.stack([R[:, 2, 1] - R[:, 1, 2], R[:, 0, 2] - R[:, 2, 0], R[:, 1, 0] - R[:, 0, 1]], axis=1)
    s = np.sqrt((w * w).sum(axis=1))
    c = 0.5 * (R[:, 0, 0] + R[:, 1, 1] + R[:, 2, 2] - 1.0)
    theta = np.arctan2(s, c)
    f = np.where(s > 1e-12, theta / np.where(s > 1e-12, s, 1.0), 1.0)
    return w * f[:, None]


def retract(T: np.ndarray, d: np.ndarray) -> np.ndarray:
    out = se3.retract(T, d)
    out[:3, :3] = c.project_to_so3(out[:3, :3])
    return out


# --------------------------------------------------------------------------- #
# initialisation
# --------------------------------------------------------------------------- #
def motions_between(A, B, idx):
    """Relative motions ``inv(A_i) A_j``, ``inv(B_i) B_j`` for every ``i < j`` of ``idx``."""
    i, j = np.triu_indices(len(idx), k=1)
    i, j = idx[i], idx[j]
    Ai = se3.invert_transform(A[i], check=False)
    Bi = se3.invert_transform(B[i], check=False)
    return Ai @ A[j], Bi @ B[j]


def robust_y(A, B, X) -> np.ndarray:
    """``Y`` from ``X``: chordal mean of the rotations and median of the translations of ``A_i X inv(B_i)``."""
    Yi = A @ X @ se3.invert_transform(B, check=False)
    M = Yi[:, :3, :3].sum(axis=0)
    U, _, Vt = np.linalg.svd(M)
    R = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    return c.transform(R, np.median(Yi[:, :3, 3], axis=0))


def score(A, B, X, Y, scale, inverse_domain=True):
    r = residuals(A, B, X, Y, scale, inverse_domain)
    return float(np.median(np.linalg.norm(r[:, :3], axis=1))), float(np.median(np.linalg.norm(r[:, 3:], axis=1)))


def initial_candidates(A, B, *, solver: str | None = None, estimate_scale: bool = False, inverse_domain: bool = True):
    """Initial ``(name, X, Y, scale)`` from the registry's solvers, best first.

    Parameters
    ----------
    A, B : ndarray, shape (N, 4, 4)
        Paired hand and eye poses (solver form), N >= 3.
    solver : str, optional
        Use only this registry solver (its name is checked).
    estimate_scale : bool
        The eye translations carry an unknown scale; it is initialised with
        ``andreff_scale``.

    Returns
    -------
    list of tuple
        ``(name, X, Y, scale)`` ordered by the median residuals on all pairs.

    Raises
    ------
    DegenerateMotionError
        No solver could determine ``X`` (e.g. every rotation axis parallel).
    """
    n = A.shape[0]
    idx = np.unique(np.linspace(0, n - 1, min(n, INIT_PAIRS)).round().astype(int))
    Am, Bm = motions_between(A, B, idx)
    # kinhec's own solvers (he_ml, the maximum-likelihood one, among them), never a user's plug-in unless named
    names = [solver] if solver is not None else [k for k in registry.BASELINES if estimate_scale or k != "andreff_scale"]
    if solver is not None:
        registry.get_solver(solver)
    s0 = None
    if estimate_scale:
        try:
            s0 = andreff(Am, Bm, unknown_scale=True)[1]  # the form unbiased by camera noise (not the registry's)
        except KinhecError:
            s0 = None
        if s0 is None or not np.isfinite(s0) or s0 <= 0:
            s0 = 1.0
    Bs = B.copy()
    if s0 is not None:
        Bs[:, :3, 3] /= s0
        Bm = Bm.copy()
        Bm[:, :3, 3] /= s0
    out, errors = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            spec = registry.SOLVERS[name]
            try:
                if spec.kind == "axxb":
                    # RANSAC's cost grows with hypotheses x motions: an evenly spread part of the motions suffices
                    step = -(-len(Am) // RANSAC_MOTIONS) if name == "ransac_park_martin" else 1
                    res = spec.run(Am[::step], Bm[::step])
                    X = res.X
                    Y = robust_y(A, Bs, X)
                else:
                    res = spec.run(A[idx], Bs[idx])
                    X, Y = res.X, res.Y
            except (KinhecError, np.linalg.LinAlgError) as exc:
                errors.append(exc)
                continue
            if not (np.isfinite(X).all() and np.isfinite(Y).all()):
                continue
            out.append((name, X, Y, s0))
    if not out:
        errors = [e if isinstance(e, KinhecError) else DegenerateMotionError(f"singular system ({e})") for e in errors]
        if any(isinstance(e, DegenerateMotionError) for e in errors):
            raise next(e for e in errors if isinstance(e, DegenerateMotionError))
        raise DegenerateMotionError(f"no solver could determine X ({errors[0] if errors else 'no candidates'})")
    if len(out) >= 3 and solver is None:
        out.append(("consensus", _pose_median([x[1] for x in out]), _pose_median([x[2] for x in out]), s0))
    order = consensus_order(A, B, out, inverse_domain)
    return [out[k] for k in order]


#: Pairs farther than this (in units of the common noise scale, per pair) count as disagreeing.
CONSENSUS_CUT = 3.0


def _pose_median(Ts) -> np.ndarray:
    """Chordal mean rotation and coordinate-wise median translation of poses (a robust middle of candidates)."""
    T = np.asarray(Ts)
    return c.transform(c.project_to_so3(T[:, :3, :3].sum(axis=0)), np.median(T[:, :3, 3], axis=0))


def consensus_order(A, B, cands, inverse_domain=True) -> np.ndarray:
    """Order of candidates ``(name, X, Y, scale)`` by how many pairs agree with them, best first.

    Residual norms of every pair (rotation [rad], translation [m]) are scaled by
    the median over the candidates of their median residuals; a pair adds
    ``min(e_rot^2 + e_trans^2, CONSENSUS_CUT^2)``: a candidate that fits most pairs
    moderately beats one that fits half of them exactly and the rest not at all.
    """
    R = np.array([[np.linalg.norm(r[:, :3], axis=1), np.linalg.norm(r[:, 3:], axis=1)]
                  for r in (residuals(A, B, X, Y, s, inverse_domain) for _, X, Y, s in cands)])  # (K, 2, N)
    scale = np.maximum(np.median(np.median(R, axis=2), axis=0), [1e-9, 1e-12])
    e2 = ((R / scale[None, :, None]) ** 2).sum(axis=1)
    loss = np.minimum(e2, CONSENSUS_CUT ** 2).sum(axis=1)
    return np.argsort(loss, kind="stable")


def choose_domain(A, B, X, Y, scale=None) -> bool:
    """Pick the residual domain whose noise model fits best: True for ``inverse_domain``.

    The two domains (``B`` and ``inv(B)``) differ per pair by a volume-preserving
    map, so their pooled residual covariances compare by their determinants
    (Gaussian likelihood at the same estimate); each is taken from the 80 %
    of pairs with the smallest residuals, so that outliers do not decide.
    """
    out = []
    for inv in (True, False):
        r = residuals(A, B, X, Y, scale, inv)
        S0 = _robust_cov(r)
        d2 = np.einsum("ni,ij,nj->n", r, np.linalg.inv(_floor(S0)), r)
        keep = d2 <= np.quantile(d2, 0.8)
        rk = r[keep]
        sign, logdet = np.linalg.slogdet(_floor(rk.T @ rk / max(len(rk), 1)))
        out.append(logdet if sign > 0 else np.inf)
    return bool(out[0] <= out[1])


# --------------------------------------------------------------------------- #
# refinement
# --------------------------------------------------------------------------- #
def _robust_cov(r: np.ndarray) -> np.ndarray:
    mad = 1.4826 * np.median(np.abs(r - np.median(r, axis=0)), axis=0)
    return np.diag(np.maximum(mad, 1e-12) ** 2)


def _floor(S: np.ndarray) -> np.ndarray:
    d = np.diag(S).copy()
    floor_r = max(1e-8 * d[:3].max(), 1e-24)
    floor_t = max(1e-8 * d[3:].max(), 1e-24)
    return S + np.diag([floor_r] * 3 + [floor_t] * 3)


def _xy_jacobian(A, RB, X, Y, s, eih: bool):
    """The residuals' Jacobian ``(n, 6, 12)`` in ``(X, Y)`` at hand poses ``A`` and eye rotations ``RB``, and the
    predicted eye translations ``(n, 3)`` (``eih``: the eye poses are the inverses of the camera measurements)."""
    n = A.shape[0]
    RA, tA = A[:, :3, :3], A[:, :3, 3]
    RX, tX, RY, tY = X[:3, :3], X[:3, 3], Y[:3, :3], Y[:3, 3]
    J = np.zeros((n, 6, 12))
    I3 = np.eye(3)
    if eih:
        RAX = RA @ RX
        RAXt = np.swapaxes(RAX, 1, 2)
        t_pred = np.einsum("nij,nj->ni", RAXt, tY - (RA @ tX + tA))
        J[:, :3, 0:3] = -I3
        J[:, :3, 6:9] = np.swapaxes(RB, 1, 2)  # R_meas = R_B^T
        J[:, 3:, 0:3] = se3.hat(t_pred)
        J[:, 3:, 3:6] = -RX.T
        J[:, 3:, 9:12] = RAXt
    else:
        t_pred = (RA @ tX + tA - tY) @ RY
        J[:, :3, 0:3] = RB  # R_meas = R_B
        J[:, :3, 6:9] = -I3
        J[:, 3:, 3:6] = RY.T @ RA
        J[:, 3:, 6:9] = se3.hat(t_pred)
        J[:, 3:, 9:12] = -RY.T
    if s is not None:  # the predicted translation is scaled (eye units)
        J[:, 3:, :] *= s
    return J, t_pred


def one_axis_information(sol: Solution, A: np.ndarray, inverse_domain: bool) -> np.ndarray:
    """The information ``(12, 12)`` on ``(X, Y)`` of the fit ``sol`` with the hand's rotations made exactly one-axis.

    ``A`` (n, 4, 4): the hand poses of the fit's inliers.  Each rotation is replaced by its part about the hand's
    principal axis (``R_m exp((phi . b) b)``, ``phi = log(R_m^T R)`` about the chordal mean ``R_m``, ``b`` the
    principal axis of the ``phi``), the eye rotations by what ``X`` and ``Y`` predict from them, and the Jacobian's
    ``(X, Y)`` columns are evaluated there, whitened as the fit's; the nuisance columns (offset, scale) and the
    priors are the fit's (:func:`kinhec.calibrate.reduced_dof.xy_information`).  A direction the motion leaves open
    is then open to round-off, whereas the measured information keeps what the noise tilting the axes gives it --
    as much as a weakly determined direction has.
    """
    A1 = _one_axis_hand(A)
    RB = sol.Y[:3, :3].T @ A1[:, :3, :3] @ sol.X[:3, :3]  # R_Y^T R_A R_X: the eye rotation both ways round
    J, _ = _xy_jacobian(A1, RB, sol.X, sol.Y, sol.scale, inverse_domain)
    G = np.array(sol.whitened_jacobian, dtype=np.float64, copy=True)
    G[:, :, :12] = np.einsum("ij,njp->nip", sol.whitening, J)
    return rd.xy_information(G, sol.prior_information)


def one_axis_pair_information(A: np.ndarray, X: np.ndarray, Y: np.ndarray, inverse_domain: bool,
                              noise_std: np.ndarray) -> np.ndarray:
    """The information ``(12, 12)`` on ``(X, Y)`` of pose pairs at hand poses ``A`` (n, 4, 4), the hand's rotations
    made exactly one-axis as in :func:`one_axis_information`, each residual component whitened by ``noise_std``
    (6,) (rotation [rad] x3, translation [m] x3; the eye poses in the domain ``inverse_domain`` says).  For a fit
    that is not a pose fit (``--corners``): its open directions are those of the pose pairs it starts from."""
    A1 = _one_axis_hand(np.asarray(A, dtype=np.float64))
    RB = Y[:3, :3].T @ A1[:, :3, :3] @ X[:3, :3]
    J, _ = _xy_jacobian(A1, RB, X, Y, None, inverse_domain)
    G = J / np.asarray(noise_std, dtype=np.float64)[None, :, None]
    return rd.xy_information(G, None)


def _one_axis_hand(A: np.ndarray) -> np.ndarray:
    """The hand poses ``A`` with each rotation replaced by its part about the principal axis (see
    :func:`one_axis_information`)."""
    R = A[:, :3, :3]
    U, _, Vt = np.linalg.svd(R.sum(axis=0))
    Rm = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    phi = se3.so3_log(np.swapaxes(Rm, -1, -2) @ R, check=False)
    b = np.linalg.eigh(phi.T @ phi)[1][:, -1]
    A1 = np.array(A, dtype=np.float64, copy=True)
    A1[:, :3, :3] = Rm @ se3.so3_exp(np.outer(phi @ b, b))
    return A1


class _Problem:
    """The unknowns ``st = (X, Y, offset, scale)`` and their parameter vector ``phi_X, d_X, phi_Y, d_Y[, delta][,
    log s]``."""

    def __init__(self, pairing, estimate_offset: bool, estimate_scale: bool, inverse_domain: bool,
                 scale_prior_std: float | None = None, hold: dict | None = None):  # fmt: skip
        self.pairing = pairing
        self.eih = inverse_domain
        self.eo = estimate_offset
        self.es = estimate_scale
        self.k_scale = 12 + int(estimate_offset)
        self.P = self.k_scale + int(estimate_scale)
        self.scale_prior_std = scale_prior_std if estimate_scale else None
        self.hold = dict(hold or {})  # parameter index of (X, Y) -> held value [m] or reference rotation (3, 3)
        self.hold_weight = np.zeros(12)  # 1 / sigma of each held parameter's prior (set by refine)
        self._cache = (None, None)
        self._step = None  # the offset's central-difference step (set at the first Jacobian)

    def prior(self, st):
        """Whitened prior residuals ``(k,)`` and their Jacobian ``(k, P)``: ``log s / sigma`` for a metric scale, and
        for every held component of ``X`` or ``Y`` (:mod:`kinhec.calibrate.reduced_dof`) its distance from the held
        value times its weight."""
        z, rows = [], []
        if self.scale_prior_std is not None:
            row = np.zeros(self.P)
            row[self.k_scale] = 1.0 / self.scale_prior_std
            z.append(np.log(st[3]) / self.scale_prior_std)
            rows.append(row)
        for i, target in self.hold.items():
            T = st[0] if i < 6 else st[1]
            k = i % 6
            if k >= 3:
                e = T[k - 3, 3] - float(target)
            else:  # a rotation held at a reference: the rotation vector of R_ref^T R, one component
                e = se3.so3_log(np.asarray(target).T @ T[:3, :3], check=False)[k]
            row = np.zeros(self.P)
            row[i] = self.hold_weight[i]
            z.append(self.hold_weight[i] * e)
            rows.append(row)
        if not z:
            return np.zeros(0), np.zeros((0, self.P))
        return np.array(z), np.array(rows)

    def bias_jac(self, st, mask, eye_in_hand: bool) -> np.ndarray:
        """Jacobian ``(n, 6, 5)`` of the residuals in the eye-pose systematic of :mod:`kinhec.calibrate.eye_bias` at
        zero (central differences); ``eye_in_hand`` gives the camera frame of ``B``."""
        X, Y, off, s = st
        A, B = self.poses(off)
        A, B = A[mask], B[mask]
        J = np.zeros((A.shape[0], 6, eb.N_PARAMS))
        h = 1e-6
        for j in range(eb.N_PARAMS):
            e = np.zeros(eb.N_PARAMS)
            e[j] = h
            rp = residuals(A, eb.correct(B, e, eye_in_hand), X, Y, s, self.eih)
            rm = residuals(A, eb.correct(B, -e, eye_in_hand), X, Y, s, self.eih)
            J[:, :, j] = (rp - rm) / (2 * h)
        return J

    def _offset_step(self, off) -> float:
        """Step [s] of the offset's central difference, chosen once at the first offset the Jacobian is taken at
        (:meth:`kinhec.calibrate.pairing.TimePairing.offset_step`: the motion's slope, not the samples' noise)."""
        if self._step is None:
            step = getattr(self.pairing, "offset_step", None)
            self._step = float(step(off)) if step is not None else 1e-4
        return self._step

    def poses(self, offset):
        key = None if offset is None else float(offset)
        if self._cache[0] != key or self._cache[1] is None:
            self._cache = (key, self.pairing.at(offset))
        return self._cache[1]

    def apply(self, st, p):
        X, Y, off, s = st
        X = retract(X, p[0:6])
        Y = retract(Y, p[6:12])
        if self.eo:
            off = off + p[12]
        if self.es:
            s = s * float(np.exp(p[self.k_scale]))
        return X, Y, off, s

    def res(self, st, mask):
        X, Y, off, s = st
        A, B = self.poses(off)
        return residuals(A[mask], B[mask], X, Y, s, self.eih)

    def jac(self, st, mask):
        """Jacobian ``(n, 6, P)`` of the residuals: analytic in X, Y and the scale, numeric in the offset.

        Uses ``log(exp(a) E) ~ log E + a`` (residuals small at the inliers).
        """
        X, Y, off, s = st
        A, B = self.poses(off)
        A, B = A[mask], B[mask]
        J = np.zeros((A.shape[0], 6, self.P))
        J[:, :, :12], t_pred = _xy_jacobian(A, B[:, :3, :3], X, Y, s, self.eih)
        if self.eo:
            h = self._offset_step(off)
            rp = self.res((X, Y, off + h, s), mask)
            rm = self.res((X, Y, off - h, s), mask)
            J[:, :, 12] = (rp - rm) / (2 * h)
            self.poses(off)
        if self.es:
            J[:, 3:, self.k_scale] = s * t_pred
        return J


def _lm(prob: _Problem, st, mask, W, max_iter=30):
    """Levenberg-Marquardt on whitened residuals ``r @ W.T`` of the pairs in ``mask``; returns the state, the
    iterations and whether it reached the minimum (:data:`LM_TOL_CHI2`, or no step lowers the cost) within them."""
    def cost_of(s):
        z = prob.res(s, mask) @ W.T
        zp, _ = prob.prior(s)
        return float((z * z).sum() + (zp * zp).sum()), z

    cost, z = cost_of(st)
    lam = 1e-3
    it = 0
    improved = converged = False
    for it in range(1, max_iter + 1):
        J = prob.jac(st, mask)
        Jw = np.einsum("ij,njp->nip", W, J).reshape(-1, prob.P)
        zp, Jp = prob.prior(st)
        g = Jw.T @ z.reshape(-1) + Jp.T @ zp
        H = Jw.T @ Jw + Jp.T @ Jp
        improved = False
        for _ in range(10):
            Hd = H + lam * np.diag(np.maximum(np.diag(H), 1e-12))
            try:
                step = -np.linalg.solve(Hd, g)
            except np.linalg.LinAlgError:
                lam *= 10
                continue
            st_new = prob.apply(st, step)
            cost_new, z_new = cost_of(st_new)
            if cost_new <= cost:
                dec = cost - cost_new
                st, z = st_new, z_new
                lam = max(lam / 10, 1e-9)
                improved = True
                converged = dec <= LM_TOL_CHI2 or np.abs(step).max() < 1e-12
                cost = cost_new
                break
            lam *= 10
        if not improved or converged:
            break
    return st, it, bool(converged or not improved)


def _rounds(prob: _Problem, st, S, inl, r, all_mask, reject: bool, max_rounds: int):
    """The rounds of :func:`refine`: the fit at the current noise model and labels, then both re-estimated, until
    they settle; returns the state, noise covariance, labels, residuals (all pairs), iterations and whether they
    settled (False: ``max_rounds`` reached first)."""
    its = 0
    seen = [inl.copy()]  # the labels of every round, to tell a cycle
    frozen = settled = False
    for _ in range(max_rounds):
        W = np.linalg.cholesky(np.linalg.inv(S)).T  # W^T W = S^-1
        st, k, lm_done = _lm(prob, st, inl, W, max_iter=LM_ROUND_ITER)
        its += k
        r = prob.res(st, all_mask)
        dof = _dof(prob, st, inl, W)
        S_new, _, _ = _noise_model(r[inl], dof)
        # the noise model and the fit are solved alternately until both settle
        change = np.abs(np.sqrt(np.diag(S_new)) / np.sqrt(np.diag(S)) - 1.0).max()
        S = S_new
        stable = change < NOISE_TOL and lm_done
        if reject and not frozen:
            # from the degrees of freedom a 6x6 covariance needs on, the gate's distances use the full sample
            # covariance, whose distribution (Hotelling's) it knows, whatever structure the fit's noise model has
            if dof >= FULL_NOISE_DOF:
                Wg = np.linalg.cholesky(np.linalg.inv(_floor((r[inl].T @ r[inl]) / dof))).T
                Gw = np.einsum("ij,njp->nip", Wg, prob.jac(st, all_mask))
                new = unc.gate(r @ Wg.T, Gw, inl, dof)
            else:  # too few degrees of freedom for a 6x6 covariance: each component on its own
                new = unc.gate_diagonal(r, prob.jac(st, all_mask), inl, dof)
                if new.sum() - (inl.sum() - dof) < MIN_GATE_DOF:  # what is left could judge nothing: re-admit only
                    new = new | inl
            if new.sum() < max(3, prob.P // 6 + 2):
                new = inl
            earlier = [i for i, h in enumerate(seen[:-1]) if np.array_equal(h, new)]
            if earlier and not np.array_equal(new, inl):
                # the labels cycle (a pair on the gate's edge, in and out by turns): every pair some state of the
                # cycle keeps is kept, and the labels stop changing
                new = np.logical_or.reduce(seen[earlier[0]:] + [new])
                frozen, stable = True, False
            else:
                stable = stable and np.array_equal(new, inl)
            seen.append(new.copy())
            inl = new
        if stable:
            settled = True
            break
    return st, S, inl, r, its, settled


def _problem_at(pairing, sol: Solution, fit: dict):
    """The refinement's problem with :func:`refine`'s options ``fit``, and ``sol``'s state in it."""
    prob = _Problem(pairing, fit.get("estimate_offset", False), fit.get("estimate_scale", False),
                    fit.get("inverse_domain", True), fit.get("scale_prior_std"))  # fmt: skip
    return prob, (sol.X, sol.Y, sol.offset, sol.scale if prob.es else None)


def _step_under(prob: _Problem, st, J: np.ndarray, r: np.ndarray, keep: np.ndarray, S: np.ndarray) -> np.ndarray:
    """The Gauss-Newton step from ``st`` of the fit to the pairs ``keep`` under the noise covariance ``S``.

    ``J`` (n, 6, P) and ``r`` (n, 6) are the Jacobian and the residuals of every pair at ``st``; the priors count.
    """
    W = np.linalg.cholesky(np.linalg.inv(S)).T
    Jw = np.einsum("ij,njp->nip", W, J[keep]).reshape(-1, prob.P)
    z = (r[keep] @ W.T).reshape(-1)
    zp, Jp = prob.prior(st)
    H, g = Jw.T @ Jw + Jp.T @ Jp, Jw.T @ z + Jp.T @ zp
    try:
        return -np.linalg.solve(H, g)
    except np.linalg.LinAlgError:  # a direction the pairs do not determine (it stays where it is)
        return -np.linalg.pinv(H, hermitian=True) @ g


def block_jackknife(pairing, sol: Solution, fit: dict, n_blocks: int = 10) -> np.ndarray:
    """Covariance (P, P) of ``sol``'s unknowns from the spread of the fits that leave out one block of inliers.

    The inliers, in pair order, are cut into ``n_blocks`` contiguous blocks (a block of consecutive pairs keeps
    their correlation together: Kunsch 1989); the fit without one block is the Gauss-Newton step from ``sol``
    under the noise covariance re-estimated on the pairs it keeps (the one-step jackknife, equal to the refitted
    one to first order).  The covariance is ``(K - 1) / K sum_k (d_k - mean d)(d_k - mean d)^T`` over the ``K``
    steps ``d_k``: the spread of the estimate over the recording, whatever the noise model assumes.
    """
    prob, st = _problem_at(pairing, sol, fit)
    inl = sol.inliers
    all_mask = np.ones(len(pairing), dtype=bool)
    J, r = prob.jac(st, all_mask), prob.res(st, all_mask)
    dof = max(float(sol.noise_dof), 1.0)
    n_in = int(inl.sum())
    D = []
    for block in np.array_split(np.flatnonzero(inl), n_blocks):
        keep = inl.copy()
        keep[block] = False
        D.append(_step_under(prob, st, J, r, keep, _noise_model(r[keep], max(dof * keep.sum() / n_in, 1.0))[0]))
    D = np.asarray(D)
    D = D - D.mean(axis=0)
    return (n_blocks - 1) / n_blocks * (D.T @ D)


def noise_feedback(pairing, sol: Solution, fit: dict) -> np.ndarray:
    """How much the refinement's answer follows the point its noise model was estimated at: ``M`` (P, P).

    :func:`refine` alternates a fit under a noise covariance estimated from the residuals with that estimate: its
    answer is a fixed point ``theta = F(theta)`` of "the fit under the noise model estimated at ``theta``".  ``M`` is
    the derivative of ``F``: central differences of about one standard deviation per parameter, each the
    Gauss-Newton step from ``sol`` under the noise model re-estimated at the moved state.  To first order the
    fixed point's error is ``(I - M)^-1`` times that of a fit whose noise model came from elsewhere, so its
    covariance is ``(I - M)^-1 cov (I - M)^-T``; with the spectral radius of ``M`` at 1 or more the rounds move it
    further each time and the fixed point decides nothing.  ``M`` is near 0 when the residuals' covariance depends
    little on where it is estimated (noise of the eye poses); a hand whose rotation noise dominates, seen over a
    short range of rotations, gave radii of 0.3 to 1.7 (its noise, carried to the eye by a lever arm, is strongly
    correlated between rotation and translation, and the correlation is estimated at ``theta``).  ``fit`` holds
    :func:`refine`'s options as they were passed.
    """
    prob, st = _problem_at(pairing, sol, fit)
    inl, all_mask = sol.inliers, np.ones(len(pairing), dtype=bool)
    J, r = prob.jac(st, all_mask), prob.res(st, all_mask)
    dof = max(float(sol.noise_dof), 1.0)
    sd = np.sqrt(np.maximum(np.diag(sol.cov)[: prob.P], 0.0))
    sd = np.where(sd > 0.0, sd, 1e-9)

    def step_from(st_w):
        return _step_under(prob, st, J, r, inl, _noise_model(prob.res(st_w, all_mask)[inl], dof)[0])

    M = np.zeros((prob.P, prob.P))
    for j in range(prob.P):
        e = np.zeros(prob.P)
        e[j] = sd[j]
        M[:, j] = (step_from(prob.apply(st, e)) - step_from(prob.apply(st, -e))) / (2.0 * sd[j])
    return M


def refine(pairing, X0, Y0, *, offset0=None, scale0=None, estimate_offset=False, estimate_scale=False,
           scale_prior_std: float | None = None, eye_bias_prior=None, eye_in_hand: bool = True, max_rounds: int = 60,
           reject: bool = True, init_solver: str = "", inverse_domain: bool = True,
           hold: dict | None = None) -> Solution:  # fmt: skip
    """Alternate outlier rejection and Levenberg-Marquardt refinement; return the estimate and its covariance.

    Parameters
    ----------
    pairing : TimePairing or OrderPairing
        Gives the paired poses ``(A, B)`` for an offset (``pairing.at(offset)``), in time (or row) order.
    X0, Y0 : ndarray, shape (4, 4)
        Initial ``X`` and ``Y`` [m].
    offset0 : float, optional
        Initial (or fixed) clock offset [s]; eye stamp = hand time + offset.
    scale0 : float, optional
        Initial scale of the eye translations (eye = scale x metric).
    estimate_offset, estimate_scale : bool
        Refine the offset / the scale jointly.
    scale_prior_std : float, optional
        Standard deviation of the Gaussian prior on ``log s`` (a metric stream whose scale is near 1);
        None: no prior (a monocular stream).
    eye_bias_prior : ndarray, shape (5,), optional
        Standard deviations of the camera-pose systematic error of :mod:`kinhec.calibrate.eye_bias`: not
        estimated, its effect on the estimate is added to the covariance (a *consider* covariance).
    eye_in_hand : bool
        The camera-frame convention of the eye poses for that error: ``B = T_target_cam`` (eye-in-hand),
        else ``T_cam_marker``.
    max_rounds : int
        Rejection-refinement rounds.  The fit and its noise model are a fixed point of these rounds, reached
        slowly where the noise model depends strongly on where it is estimated: on a real recording (RWHE kuka_2,
        scale free) 12 rounds left the scale at 1.0193 and the next 12 moved it to 1.0261, 2.5 of its standard
        deviations; it settles at 1.0188 after 24-48.  60 rounds let the rounds end by settling in 68 of 70 fits
        of mixed recordings (12 rounds: 42 of 70).
    reject : bool
        Label outliers (studentised gate) and leave them out of the fit.
    hold : dict, optional
        Components of ``(X, Y)`` held (parameter index -> value [m] for a translation, reference rotation (3, 3)
        for a rotation): a prior :data:`kinhec.calibrate.reduced_dof.KNOWN_WEIGHT` times the data's largest
        information holds each (a constrained fit in the limit); their rows and columns of the covariance are 0.

    Returns
    -------
    Solution
    """
    prob = _Problem(pairing, estimate_offset, estimate_scale, inverse_domain, scale_prior_std, hold)
    off = offset0 if offset0 is not None else (0.0 if pairing.has_time else None)
    s = scale0 if estimate_scale else None
    if estimate_scale and s is None:
        s = 1.0
    st = (X0, Y0, off, s)
    n = len(pairing)
    all_mask = np.ones(n, dtype=bool)
    r = prob.res(st, all_mask)
    S = _floor(_robust_cov(r))
    if prob.hold:  # each held component's weight: the data's largest information times KNOWN_WEIGHT
        Jw0 = np.einsum("ij,njp->nip", np.linalg.cholesky(np.linalg.inv(S)).T, prob.jac(st, all_mask))
        top = float(np.einsum("nip,nip->p", Jw0, Jw0)[:12].max())
        prob.hold_weight[list(prob.hold)] = np.sqrt(rd.KNOWN_WEIGHT * max(top, 1e-300))
    inl = all_mask.copy()
    if reject:  # first labels: the robust diagonal covariance and the chi-square gate
        d2 = np.einsum("ni,ij,nj->n", r, np.linalg.inv(S), r)
        inl = d2 < CHI2_6_9999
        if inl.sum() < max(3, prob.P // 6 + 2):
            inl = d2 <= np.quantile(d2, 0.5)
        if inl.sum() - prob.P / 6.0 < MIN_GATE_DOF:
            # what these labels leave could judge nothing (5 clean stations lost 2 here, and the fit interpolated
            # the other 3): the rounds start from every pair
            inl = all_mask.copy()
    st, S, inl, r, its, settled = _rounds(prob, st, S, inl, r, all_mask, reject, max_rounds)
    W = np.linalg.cholesky(np.linalg.inv(S)).T
    Gw = np.einsum("ij,njp->nip", W, prob.jac(st, inl))
    Jw = Gw.reshape(-1, prob.P)
    _, Jp = prob.prior(st)
    H_data = Jw.T @ Jw
    H = H_data + Jp.T @ Jp
    try:
        cov = np.linalg.inv(H)
    except np.linalg.LinAlgError:
        cov = np.linalg.pinv(H)
    # information on log s from the pairs alone (the other unknowns marginalised)
    scale_data_std = None
    if estimate_scale:
        k = prob.k_scale
        try:
            v = float(np.linalg.inv(H_data)[k, k])
        except np.linalg.LinAlgError:
            v = -1.0
        scale_data_std = float(np.sqrt(v)) if 0 < v < 1e12 else float("inf")
    z = r[inl] @ W.T
    infl = unc.long_run_inflation(Gw, z, Jp.T @ Jp)
    # the noise covariance is estimated from the same residuals: E[inv(S_hat)] = inv(S) times the factor
    fit_dof = _fit_dof(prob, st, inl, W)
    dof = max(fit_dof, 1.0)
    _, small_sample, kind = _noise_model(r[inl], dof)
    cov_fit = cov
    shrinkage = 0.0
    if kind == "full":  # the covariance of the estimate its weights give, the noise's correlations as supported
        cov, small_sample, shrinkage = _noise_sandwich(Gw, W, r[inl], S, cov, Jp.T @ Jp, dof, small_sample)
    cov = infl.apply(cov) * small_sample
    bias_cov = None
    if eye_bias_prior is not None:
        # the estimate moves by -H^-1 J^T W J_b theta for a systematic error theta it does not estimate
        Jb = np.einsum("ij,njp->nip", W, prob.bias_jac(st, inl, eye_in_hand)).reshape(-1, eb.N_PARAMS)
        Sens = -cov_fit @ (Jw.T @ Jb)
        bias_cov = Sens @ np.diag(np.asarray(eye_bias_prior, dtype=np.float64) ** 2) @ Sens.T
        cov = cov + bias_cov
    if prob.hold:  # held components: exactly 0 (their prior leaves about 1e-6 of the data's variance)
        h = list(prob.hold)
        cov[h, :] = 0.0
        cov[:, h] = 0.0
    X, Y, off, s = st
    return Solution(X, Y, off, s, cov, r, inl, S, float(infl.factors[:6].max()), init_solver, its, noise_dof=float(dof),
                    fit_dof=float(fit_dof), scale_data_std=scale_data_std, inflation_detail=infl,
                    eye_bias_cov=bias_cov, noise_model=kind, whitening=W, whitened_jacobian=Gw, whitened_residuals=z,
                    prior_information=Jp.T @ Jp, settled=settled, noise_shrinkage=shrinkage)  # fmt: skip


def _noise_sandwich(Gw, W, r_inl, S, cov, prior_information, dof: float, small_sample: float):
    """The covariance of a fit weighted by a full noise covariance ``S`` estimated from ``dof`` degrees of freedom.

    ``C M C`` with ``C = cov`` (the inverse normal matrix) and ``M = J^T S^-1 S~ S^-1 J`` plus the priors'
    information, ``S~`` the noise covariance with its correlations shrunk by their sampling error
    (:func:`kinhec.calibrate.uncertainty.shrunk_noise` of the inliers' residuals ``r_inl``, weight ``lam``); with
    the whitened Jacobian ``Gw = W J`` (``W^T W = S^-1``), ``M = Gw^T (W S~ W^T) Gw``.  The small-sample factor
    becomes ``(1 - lam) small_sample + lam dof / (dof - 2)``, the diagonal model's for the shrunk part.  Returns
    the covariance, the factor and ``lam``.
    """
    S_shrunk, lam = unc.shrunk_noise(r_inl, S)
    M = np.einsum("nip,ij,njq->pq", Gw, W @ S_shrunk @ W.T, Gw) + prior_information
    return cov @ M @ cov, (1.0 - lam) * small_sample + lam * dof / (dof - 2.0), lam


#: Fewest degrees of freedom (pairs) the gate may leave when it labels more pairs outliers: below, the noise
#: levels it would judge by are estimated from too little, and a gate from 4 degrees of freedom took 2 of 6
#: clean stations for outliers.
MIN_GATE_DOF = 3.0
#: Degrees of freedom (pairs) from which the full 6x6 noise covariance is estimated; below, its diagonal ...
FULL_NOISE_DOF = 20.0
#: ... and below this, one variance for the rotation and one for the translation components.
DIAG_NOISE_DOF = 4.0


def _dof(prob: _Problem, st, inl, W) -> float:
    """Degrees of freedom of the noise covariance, in pairs, at least 1 (:func:`_fit_dof`)."""
    return max(_fit_dof(prob, st, inl, W), 1.0)


def _fit_dof(prob: _Problem, st, inl, W) -> float:
    """Pairs' worth of residuals left after the fit: inliers minus the effectively estimated parameters over 6 (a
    parameter its prior holds counts for what the data add, ``trace(H_data (H_data + H_prior)^-1)``)."""
    Gw = np.einsum("ij,njp->nip", W, prob.jac(st, inl)).reshape(-1, prob.P)
    _, Jp = prob.prior(st)
    Hd = Gw.T @ Gw
    try:
        p_eff = float(np.trace(np.linalg.solve(Hd + Jp.T @ Jp, Hd)))
    except np.linalg.LinAlgError:
        p_eff = float(prob.P)
    return float(inl.sum()) - p_eff / 6.0


def _noise_model(R: np.ndarray, dof: float) -> tuple[np.ndarray, float, str]:
    """Noise covariance of the residuals ``R`` (m, 6) from ``dof`` degrees of freedom, and its small-sample factor.

    The full 6x6 covariance needs many pairs: from :data:`FULL_NOISE_DOF` on it is the sample covariance (factor
    ``dof / (dof - 7)``, the bias of its inverse); below, its diagonal (each variance shrunk toward its block's
    mean by :data:`DIAG_NOISE_DOF` pseudo-degrees of freedom, its inverse biased by about ``dof / (dof - 2)``);
    below :data:`DIAG_NOISE_DOF`, one variance per block of three
    (``3 dof`` degrees of freedom each).  Returns ``(S, factor, kind)``.
    """
    S = (R.T @ R) / dof
    if dof >= FULL_NOISE_DOF:
        return _floor(S), dof / (dof - 7.0), "full"
    d = np.diag(S).copy()
    if dof >= DIAG_NOISE_DOF:
        # each variance shrunk toward its block's mean by DIAG_NOISE_DOF pseudo-degrees of freedom: with few pairs
        # the unknowns can absorb one component almost entirely, and its variance, near zero, would claim a
        # precision the data do not have
        m = np.repeat([d[:3].mean(), d[3:].mean()], 3)
        d = (dof * d + DIAG_NOISE_DOF * m) / (dof + DIAG_NOISE_DOF)
        return _floor(np.diag(d)), dof / (dof - 2.0), "diagonal"
    d[:3], d[3:] = d[:3].mean(), d[3:].mean()
    nb = 3.0 * dof
    return _floor(np.diag(d)), nb / (nb - 2.0) if nb > 3.0 else 3.0, "block"


def noise_report(sol: Solution) -> dict:
    """The noise levels of a :class:`Solution` with their standard deviations, and the inflation applied.

    ``residual_std_rad_m``: the standard deviation of each residual component
    (rotation [rad] x3, translation [m] x3); ``residual_std_std``: its
    standard deviation, ``sigma / sqrt(2 dof)`` (a variance estimated from
    ``dof`` residuals, Gaussian).
    """
    sd = np.sqrt(np.diag(sol.noise_cov))
    dof = max(sol.noise_dof, 1.0)
    inf = sol.inflation_detail
    return {
        "residual_std_rad_m": [float(v) for v in sd],
        "residual_std_std": [float(v / np.sqrt(2.0 * dof)) for v in sd],
        "noise_dof": float(sol.noise_dof),
        "noise_model": sol.noise_model,
        "noise_correlation_shrinkage": float(sol.noise_shrinkage),
        "covariance_inflation": float(sol.inflation),
        "covariance_inflation_X": None if inf is None else [float(v) for v in inf.factors[:6]],
        "covariance_inflation_Y": None if inf is None else [float(v) for v in inf.factors[6:12]],
        "autocorrelation_time_X": None if inf is None else [float(v) for v in inf.tau[:6]],
        "residual_lag1_corr": None if inf is None else float(inf.rho),
    }


def inflation_note(sol: Solution) -> str:
    """One line for the notes: how far the residual sequence inflated the standard deviations of ``X``."""
    inf = sol.inflation_detail
    tau = float(inf.tau[:6].max()) if inf is not None else 1.0
    why = (f"residuals correlate from pair to pair (lag-one correlation {inf.rho:.2f}, autocorrelation time up to "
           f"{tau:.3g} pairs)" if tau > 1.5 else "some pairs scatter more than the pooled noise model says")
    return f"{why}: standard deviations of X inflated by up to {np.sqrt(sol.inflation):.2g}"


#: Fewest pose pairs ``A X = Y B`` needs.
MIN_PAIRS = c.MIN_PAIRS


def check_enough_pairs(n: int, where: str) -> None:
    """Raise :class:`InputError` below the 3 pose pairs ``A X = Y B`` needs."""
    if n < MIN_PAIRS:
        raise InputError(f"{where}: expected at least {MIN_PAIRS} pose pairs, got {n}")
