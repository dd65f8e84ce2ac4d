"""RANSAC around Park-Martin for ``A X = X B`` with outlying motions.

References
----------
M. A. Fischler and R. C. Bolles, "Random sample consensus: a paradigm for model
fitting with applications to image analysis and automated cartography,"
*Communications of the ACM* 24(6), 1981; P. H. S. Torr and A. Zisserman,
"MLESAC: a new robust estimator with application to estimating image
geometry," *Computer Vision and Image Understanding* 78(1), 2000 (the
truncated-quadratic MSAC score); the minimal solver is Park and Martin (1994),
see :mod:`kinhec.solvers.axxb_park_martin`.

Procedure implemented:

1. Draw ``n_hypotheses`` minimal samples of two motions whose flange rotation
   axes are at least ``min_axis_angle_deg`` apart (two non-parallel axes fix
   ``X``).
2. Solve each sample with Park-Martin, all samples at once: a batch of 3x3
   SVDs for ``R_X`` and of 3x3 normal equations for ``t_X``.
3. Score every hypothesis on every motion in one batched pass.  The residual
   of motion ``k`` is ``e_k = max(|alpha_k - R_X beta_k| / rot_threshold,
   |R_A t_X + t_A - R_X t_B - t_X| / trans_threshold)`` with ``alpha = log R_A``,
   ``beta = log R_B`` (rotation vectors; ``|alpha - R_X beta|`` is, for small
   disagreements, the angle between ``R_A`` and ``R_X R_B R_X^T``); a motion is
   an inlier when ``e_k < 1``, and the hypothesis score is
   ``sum_k min(e_k^2, 1)`` (MSAC).
4. Refit Park-Martin on the inliers of the best hypothesis and recompute the
   inliers, until the set no longer changes (at most ``refit_iterations``).
5. Polish (``polish=True``): Levenberg-Marquardt on the twist residual over
   the inliers (:func:`kinhec.solvers.refine_lm`), kept when it holds at least
   as many inliers as the Park-Martin refit.

With fewer than ``MIN_CONSENSUS`` motions in the best consensus,
``on_no_consensus="raise"`` (the default) raises; ``"all"`` takes every motion
as an inlier (Park-Martin on all of them, then the polish) and warns with a
:class:`NoConsensusWarning`.  The benchmark's ``ransac_park_martin`` does the
latter, as the published protocol returns an estimate on every sequence.

On relative motions, an outlying camera frame spoils the two motions that
share it: a fraction ``f`` of bad frames leaves about ``(1 - f)^2`` good
consecutive motions (49 % at ``f = 0.3``), which RANSAC tolerates and a
least-squares solver does not.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3
from kinhec.util.errors import ConvergenceError, DegenerateMotionError, InputError
from kinhec.solvers import _common as c
from kinhec.solvers.axxb_park_martin import park_martin_kernel, rotation_park_martin
from kinhec.solvers.refine import refine_twist

__all__ = ["RansacResult", "ransac_axxb", "RANSAC_SEED", "NoConsensusWarning"]

#: What :func:`ransac_axxb` does when no consensus forms.
ON_NO_CONSENSUS = ("raise", "all")


class NoConsensusWarning(c.DegenerateMotionWarning):
    """RANSAC found no consensus of ``MIN_CONSENSUS`` motions: the estimate takes every motion as an inlier."""

CITATION = (
    'M. A. Fischler and R. C. Bolles, "Random sample consensus," Communications of the ACM 24(6), '
    "1981; with the minimal solver of F. C. Park and B. J. Martin, IEEE Trans. Robotics and "
    "Automation 10(5), 1994."
)


@dataclass(frozen=True)
class RansacResult:
    """Outcome of :func:`ransac_axxb`.

    Attributes
    ----------
    X : ndarray, shape (4, 4)
        Hand-eye transform refitted on the inliers [m].
    inliers : ndarray of bool, shape (N,)
        Motions consistent with ``X`` within the thresholds.
    n_inliers : int
        ``inliers.sum()``.
    n_hypotheses : int
        Minimal samples evaluated.
    consensus : bool
        False when no consensus of ``MIN_CONSENSUS`` motions formed and every
        motion was taken as an inlier (``on_no_consensus="all"``).
    """

    X: np.ndarray
    inliers: np.ndarray
    n_inliers: int
    n_hypotheses: int
    consensus: bool = True


def _residuals(alpha, beta, RA, tA, tB, R, t):
    """Rotation [rad] and translation [m] residuals of hypotheses (H) on motions (N), both (H, N).

    Rotation: ``|log R_A - R_X log R_B|`` (rotation vectors with consistent
    signs); translation: ``|R_A t_X + t_A - R_X t_B - t_X|``.  Matrix products
    over the stacked arrays only, O(H N).
    """
    n, h = alpha.shape[0], R.shape[0]
    # laid out (H, 3, N); the hypotheses' rotations as one (3 H, 3) matrix, so that each product is a single
    # matrix product instead of H small ones, the temporaries overwritten in place
    R2 = R.reshape(-1, 3)
    D = (R2 @ beta.T).reshape(h, 3, n)
    np.subtract(alpha.T[None], D, out=D)
    et = (R2 @ tB.T).reshape(h, 3, n)
    RAt = (RA.reshape(-1, 3) @ t.T).reshape(n, 3, -1).transpose(2, 1, 0)
    np.subtract(RAt + tA.T[None], et, out=et)
    et -= t[:, :, None]
    D *= D
    et *= et
    return np.sqrt(D[:, 0] + D[:, 1] + D[:, 2]), np.sqrt(et[:, 0] + et[:, 1] + et[:, 2])


def _sample_pairs(rng, axes, n_hyp: int, cos_max: float):
    """Index pairs (H, 2) of motions whose unit rotation axes differ by more than acos(cos_max)."""
    n = axes.shape[0]
    want = n_hyp
    out = []
    for _ in range(20):
        i = rng.integers(0, n, size=2 * want)
        j = rng.integers(0, n - 1, size=2 * want)
        j = j + (j >= i)  # j != i
        ok = np.abs(np.einsum("ij,ij->i", axes[i], axes[j])) < cos_max
        out.append(np.stack([i[ok], j[ok]], axis=1))
        if sum(len(o) for o in out) >= n_hyp:
            break
    pairs = np.concatenate(out)[:n_hyp]
    return pairs


#: Seed of the generator :func:`ransac_axxb` uses when given none (and that the registry's
#: ``ransac_park_martin`` uses on every call).  A constant, not a hash of the input: the samples must not change
#: when the input changes in its last bits (a BLAS build or CPU that rounds the relative motions differently).
RANSAC_SEED = 0

#: Fewest motions a consensus set may hold: below three the refit is no better determined than a minimal sample.
MIN_CONSENSUS = 3


#: Adaptive threshold factor: the 99 % quantile of a 3-D Gaussian residual norm (3.37 sigma) over its lower
#: quartile (1.10 sigma), so that ``_ADAPT * q25(residuals)`` keeps 99 % of the inliers.
_ADAPT = 3.368 / 1.102


def _ransac_axxb(A, B, rng, rot_thr, trans_thr, n_hyp, min_axis_angle_rad, refit_iterations, adaptive=True,
                 polish=True, on_no_consensus="raise"):
    RA, tA = A[:, :3, :3], A[:, :3, 3]
    tB = B[:, :3, 3]
    qA, qB = c.motion_quats(A, B)
    alpha = c.rotvecs_from_quats(qA)
    beta = c.rotvecs_from_quats(qB)
    c.check_rotation_axes(alpha, "ransac_axxb")
    if A.shape[0] < MIN_CONSENSUS:  # (on_no_consensus="all" only) no consensus can form: every motion an inlier
        return _every_motion(A, B, alpha, beta, rot_thr, trans_thr, polish, 0,
                             f"ransac_axxb: {A.shape[0]} motions, fewer than a consensus of {MIN_CONSENSUS}")  # fmt: skip
    ang = np.linalg.norm(alpha, axis=1)
    axes = alpha / np.where(ang > 1e-12, ang, 1.0)[:, None]
    axes[ang <= 1e-12] = 0.0  # a motion without rotation never forms a valid pair
    pairs = _sample_pairs(rng, axes, n_hyp, np.cos(min_axis_angle_rad))
    if len(pairs) == 0:
        # every axis within min_axis_angle of the others (a narrow cone): sample what there is
        pairs = _sample_pairs(rng, axes, n_hyp, np.cos(1e-3))
        if len(pairs) == 0:
            raise DegenerateMotionError(
                "ransac_axxb: expected pairs of motions with non-parallel rotation axes, found none"
            )
        warnings.warn(
            f"ransac_axxb: no two rotation axes are {np.degrees(min_axis_angle_rad):.3g} deg apart; "
            "the minimal samples are poorly conditioned",
            c.DegenerateMotionWarning,
            stacklevel=3,
        )
    # hypotheses: Park-Martin on two motions each
    R_h = rotation_park_martin(alpha[pairs], beta[pairs])  # (H, 3, 3)
    C = RA[pairs] - np.eye(3)  # (H, 2, 3, 3)
    d = np.einsum("hij,hkj->hki", R_h, tB[pairs]) - tA[pairs]  # (H, 2, 3)
    C = C.reshape(-1, 6, 3)
    d = d.reshape(-1, 6)
    CtC = np.swapaxes(C, -1, -2) @ C
    Ctd = np.einsum("hki,hk->hi", C, d)
    usable = None
    try:
        t_h = np.linalg.solve(CtC, Ctd[..., None])[..., 0]
    except np.linalg.LinAlgError:  # two motions without rotation leave a sample's translation undetermined
        usable = np.linalg.cond(CtC) < 1e12
        if not usable.any():
            raise DegenerateMotionError("ransac_axxb: no minimal sample determines a translation (the sampled "
                                        "motions rotate too little)") from None
        t_h = np.zeros(Ctd.shape)
        t_h[usable] = np.linalg.solve(CtC[usable], Ctd[usable][..., None])[..., 0]
    rot, trans = _residuals(alpha, beta, RA, tA, tB, R_h, t_h)
    e = np.maximum(rot / rot_thr, trans / trans_thr)
    score = np.minimum(e * e, 1.0).sum(axis=1)
    if usable is not None:
        score[~usable] = np.inf
    best = int(np.argmin(score))
    if adaptive:
        # the residuals of the best hypothesis set the noise scale: its lower quartile comes from inliers as
        # long as fewer than 3/4 of the motions are outliers; the thresholds never drop below the given ones
        rot_thr = max(rot_thr, _ADAPT * float(np.quantile(rot[best], 0.25)))
        trans_thr = max(trans_thr, _ADAPT * float(np.quantile(trans[best], 0.25)))
        e_best = np.maximum(rot[best] / rot_thr, trans[best] / trans_thr)
    else:
        e_best = e[best]
    inl = e_best < 1.0
    X = se3.transform_from_rotation_translation(R_h[best], t_h[best])
    for _ in range(refit_iterations):
        if inl.sum() < 2 or c.axis_scatter_lambda2(alpha[inl]) < c.DEGENERATE_LAMBDA2:
            break
        X_new = park_martin_kernel(A[inl], B[inl], check_axes=False)
        inl_new = _inliers(alpha, beta, RA, tA, tB, X_new, rot_thr, trans_thr)
        X = X_new
        if np.array_equal(inl_new, inl):
            break
        inl = inl_new
    if inl.sum() < MIN_CONSENSUS:
        message = (f"ransac_axxb: expected a consensus of at least {MIN_CONSENSUS} motions within "
                   f"{np.degrees(rot_thr):.3g} deg / {1000 * trans_thr:.3g} mm, got {int(inl.sum())} of {len(inl)}")  # fmt: skip
        if on_no_consensus == "raise":
            raise ConvergenceError(message)
        return _every_motion(A, B, alpha, beta, rot_thr, trans_thr, polish, len(pairs), message)
    if polish:
        X_p = refine_twist(A[inl], B[inl], X)[0]
        inl_p = _inliers(alpha, beta, RA, tA, tB, X_p, rot_thr, trans_thr)
        if inl_p.sum() >= inl.sum():
            X, inl = X_p, inl_p
    return RansacResult(X=X, inliers=inl, n_inliers=int(inl.sum()), n_hypotheses=int(len(pairs)))


def _inliers(alpha, beta, RA, tA, tB, X, rot_thr, trans_thr) -> np.ndarray:
    """Motions consistent with one ``X`` within the thresholds, (N,) bool."""
    rot, trans = _residuals(alpha, beta, RA, tA, tB, X[None, :3, :3], X[None, :3, 3])
    return np.maximum(rot[0] / rot_thr, trans[0] / trans_thr) < 1.0


def _every_motion(A, B, alpha, beta, rot_thr, trans_thr, polish, n_hyp, message) -> RansacResult:
    """No consensus (``on_no_consensus="all"``): Park-Martin on every motion, then the polish, with a warning."""
    warnings.warn(message + "; every motion is taken as an inlier", NoConsensusWarning, stacklevel=4)
    X = park_martin_kernel(A, B, check_axes=False)
    if polish:
        X = refine_twist(A, B, X)[0]
    return RansacResult(X=X, inliers=np.ones(A.shape[0], dtype=bool), n_inliers=int(A.shape[0]),
                        n_hypotheses=int(n_hyp), consensus=False)  # fmt: skip


def ransac_axxb(
    A,
    B,
    rng: np.random.Generator | None = None,
    *,
    rot_threshold_deg: float = 2.0,
    trans_threshold_mm: float = 20.0,
    n_hypotheses: int = 256,
    min_axis_angle_deg: float = 10.0,
    refit_iterations: int = 3,
    adaptive: bool = True,
    polish: bool = True,
    on_no_consensus: str = "raise",
) -> RansacResult:
    """Robust ``A X = X B``: RANSAC over minimal two-motion samples with Park-Martin.

    Parameters
    ----------
    A : array_like, shape (N, 4, 4)
        Relative flange motions ``inv(A_i) A_j`` [m], N >= 3 (N >= 2 with
        ``on_no_consensus="all"``).
    B : array_like, shape (N, 4, 4)
        The matching relative camera motions ``inv(B_i) B_j``, some of them outliers.
    rng : numpy.random.Generator, optional
        Source of the random samples.  Default: a new
        ``numpy.random.default_rng(RANSAC_SEED)`` (seed 0) on every call, so
        the same input always gives the same result.
    rot_threshold_deg : float
        Inlier threshold on the rotation disagreement
        ``|log R_A - R_X log R_B|`` [deg].
    trans_threshold_mm : float
        Inlier threshold on ``|R_A t_X + t_A - R_X t_B - t_X|`` [mm].
    n_hypotheses : int
        Number of minimal samples.
    min_axis_angle_deg : float
        Smallest angle between the two flange rotation axes of a sample [deg].
    refit_iterations : int
        Maximum number of refit / re-classify rounds on the inliers.
    adaptive : bool
        Adaptive thresholds (on by default): after scoring, the thresholds are
        widened to the noise of the data, ``3.06`` times the lower quartile of
        the best hypothesis' residuals (rotation and translation separately;
        the 99 % quantile of a Gaussian residual norm over its lower quartile),
        never below ``rot_threshold_deg`` / ``trans_threshold_mm``.  Valid while
        fewer than 3/4 of the motions are outliers.  ``False`` keeps the given
        thresholds.
    polish : bool
        Finish with Levenberg-Marquardt on the inliers (the twist residual of
        :func:`refine_lm`), kept when it holds at least as many inliers as the
        Park-Martin refit (on by default).
    on_no_consensus : {"raise", "all"}
        With fewer than ``MIN_CONSENSUS`` motions in the best consensus:
        ``"raise"`` a :class:`~kinhec.util.errors.ConvergenceError` (default), or
        take ``"all"`` motions as inliers and warn with a
        :class:`NoConsensusWarning` (``consensus`` is then False).

    Returns
    -------
    RansacResult
        ``X``, the inlier mask over the motions, ``n_inliers`` and the number
        of hypotheses evaluated.

    Raises
    ------
    InputError
        Bad motions (see :func:`park_martin`), N < 3, a non-Generator ``rng``
        or non-positive settings.
    DegenerateMotionError
        All rotation axes of ``A`` parallel, or no sample with axes far enough apart.
    ConvergenceError
        The best hypothesis is supported by fewer than ``MIN_CONSENSUS`` motions
        (``on_no_consensus="raise"``).
    """
    if on_no_consensus not in ON_NO_CONSENSUS:
        raise InputError(f"on_no_consensus: expected one of {', '.join(map(repr, ON_NO_CONSENSUS))}, "
                         f"got {on_no_consensus!r}")  # fmt: skip
    # fewer motions than a consensus needs are an input error, unless every motion may be taken as an inlier
    A, B = c.check_motions(A, B, min_motions=MIN_CONSENSUS if on_no_consensus == "raise" else c.MIN_MOTIONS)
    if rng is None:
        rng = np.random.default_rng(RANSAC_SEED)
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"rng: expected a numpy.random.Generator, got {type(rng).__name__}")
    for name, v in (("rot_threshold_deg", rot_threshold_deg), ("trans_threshold_mm", trans_threshold_mm)):
        if not (np.isfinite(v) and v > 0):
            raise InputError(f"{name}: expected a positive finite number, got {v!r}")
    if int(n_hypotheses) < 1:
        raise InputError(f"n_hypotheses: expected an integer >= 1, got {n_hypotheses!r}")
    if not (0.0 <= min_axis_angle_deg < 90.0):
        raise InputError(f"min_axis_angle_deg: expected a value in [0, 90), got {min_axis_angle_deg!r}")
    if int(refit_iterations) < 0:
        raise InputError(f"refit_iterations: expected an integer >= 0, got {refit_iterations!r}")
    return _ransac_axxb(
        A,
        B,
        rng,
        np.radians(rot_threshold_deg),
        trans_threshold_mm / 1000.0,
        int(n_hypotheses),
        np.radians(min_axis_angle_deg),
        int(refit_iterations),
        bool(adaptive),
        bool(polish),
        on_no_consensus,
    )
