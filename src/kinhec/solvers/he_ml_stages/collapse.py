"""A check on the robust fit's final state: a minority of inliers whose motion determines nothing.

The robust start of :func:`kinhec.solvers.he_ml.he_ml` scores hypotheses by a
low quantile of the pairs' distances, so that up to about 60 % of outliers can
be set aside.  The same property lets it settle on a minority of pairs that fit
*too* well for a bad reason: a run of rows where nothing moved (a rig standing
still, the same pose pair written again and again) is fitted exactly by a whole
family of ``(X, Y)``, its noise levels fall to about zero, and every other pair
-- the ones that carry the information -- is labelled an outlier.  ``Y`` can
then land metres away with nothing to show for it.

:func:`minority_collapse` recognises that state: the inliers are a minority and
their flange poses do not determine ``X`` (they rotate by less than
:data:`MIN_ROT_RANGE_DEG` between them, or about one axis only), or they are fewer
than the share :data:`~kinhec.solvers.he_ml_stages.hypotheses.SCORE_QUANTILE` of
the pairs by which the robust start chose its hypothesis: the start counts on at
least that share fitting it closely, so a final gate that keeps fewer has gated
out the support the start was chosen for (on noise-free pairs whose residuals are
only an interpolated clock offset, 4 of 91 pairs were fitted with noise levels of
1e-7 and the rest gated out).  ``he_ml``
then refuses the robust solution: it fits every pair by plain maximum
likelihood (``robust=False``), says so with :class:`RobustCollapseWarning`,
and records the refused state in ``info["robust_collapse"]``.
"""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3
from kinhec.solvers import _common as c
from kinhec.solvers.he_ml_stages.hypotheses import SCORE_QUANTILE

__all__ = ["RobustCollapseWarning", "minority_collapse", "MIN_ROT_RANGE_DEG"]

#: Inlier flange poses rotating less than this between them [deg] determine no X.
MIN_ROT_RANGE_DEG = 2.0


class RobustCollapseWarning(c.DegenerateMotionWarning):
    """The robust fit settled on a minority of pairs that determine nothing; all pairs were fitted instead."""


def minority_collapse(A: np.ndarray, inliers: np.ndarray) -> dict | None:
    """Whether the inliers are a minority whose flange poses determine no ``X``; None if not, else the figures.

    Parameters
    ----------
    A : ndarray, shape (N, 4, 4)
        Flange poses ``T_base_ee`` [m].
    inliers : ndarray of bool, shape (N,)

    Returns
    -------
    dict or None
        ``n_inliers``, ``n``, ``rot_range_deg`` and ``lambda2`` of the inliers' rotations when they collapse, and
        ``reason``: ``"no_x"`` (their motion determines no ``X``) or ``"below_start"`` (fewer than the start's share).
    """
    n, k = len(inliers), int(np.count_nonzero(inliers))
    if k * 2 >= n or k == 0:
        return None
    R = A[inliers, :3, :3]
    rel = np.swapaxes(R[:, None], -1, -2) @ R[None]  # every two inliers
    rot_range = float(np.degrees(se3.rotation_angle(rel.reshape(-1, 3, 3), check=False).max()))
    U, _, Vt = np.linalg.svd(R.sum(axis=0))
    Rm = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    lam2 = c.axis_scatter_lambda2(c.rotvecs(Rm.T @ R)) if k >= 2 else 0.0
    figures = {"n_inliers": k, "n": n, "rot_range_deg": rot_range, "lambda2": float(lam2)}
    if rot_range < MIN_ROT_RANGE_DEG or lam2 < c.NEAR_DEGENERATE_LAMBDA2:
        return {**figures, "reason": "no_x"}
    if k < SCORE_QUANTILE * n:
        return {**figures, "reason": "below_start"}
    return None
