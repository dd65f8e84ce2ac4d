"""Does the fit support the outliers its chi-square gate labelled?

The gate of :func:`kinhec.calibrate.solve.refine` assumes independent Gaussian
residuals and a few gross errors among them.  Real recordings break that in two
ways that a gate mistakes for outliers:

* **systematic errors that change along the recording** -- a bias that shifts
  when the tracker re-identifies its markers, a slow drift: the pairs of one
  stretch disagree with the others, so the gate sets a whole *run* of
  consecutive rows aside, however many;
* **rows where nothing moved** -- a rig standing still, the same pose pair
  written again and again: they fit any ``X`` in a family exactly, and when they
  are many the gate keeps them and sets aside the pairs that carry the
  information.

Scattered gross errors (failed detections, pose flips) are neither.
:func:`judge` therefore supports the labels unless

1. the inliers are a minority (below :data:`MIN_INLIER_SHARE`), or
2. more than :data:`MAX_RUN_SHARE` of the pairs are outliers *and* they cluster
   in runs of consecutive pairs (Wald-Wolfowitz runs test, ``z`` below
   :data:`RUNS_Z`), or
3. the inliers' hand poses do not determine ``X`` (they rotate by less than
   2 deg, or about one axis) while all pairs' do.

An unsupported labelling is reported and the pairs are all kept
(:func:`kinhec.calibrate.calibrate` refits them without the gate): ``X`` then
carries the recording's systematic error, which its residuals show, instead of
the exact fit of an arbitrary subset.
"""

from __future__ import annotations

import numpy as np

from kinhec.calibrate.observability import MIN_LAMBDA2, MIN_ROT_RANGE_DEG
from kinhec.solvers import _common as c

__all__ = ["judge", "runs_z", "MIN_INLIER_SHARE", "MAX_RUN_SHARE", "RUNS_Z"]

#: Fewer inliers than this share of the pairs: the labels are not supported.
MIN_INLIER_SHARE = 0.5
#: Above this share of outliers, outliers in runs of consecutive pairs are not supported.
MAX_RUN_SHARE = 0.1
#: Runs-test z below which the outliers cluster in runs.
RUNS_Z = -3.0


def runs_z(labels: np.ndarray) -> float:
    """Wald-Wolfowitz runs test of a boolean sequence: ``(runs - mean) / std`` (0 when undefined).

    Far below 0: the two labels come in long runs (clustered); about 0: mixed at random.
    """
    x = np.asarray(labels, dtype=bool)
    n1, n2 = int(x.sum()), int((~x).sum())
    n = n1 + n2
    if n1 == 0 or n2 == 0 or n < 3:
        return 0.0
    runs = 1 + int(np.count_nonzero(x[1:] != x[:-1]))
    mu = 2.0 * n1 * n2 / n + 1.0
    var = 2.0 * n1 * n2 * (2.0 * n1 * n2 - n) / (n * n * (n - 1.0))
    return float((runs - mu) / np.sqrt(var)) if var > 0 else 0.0


def _determines(A: np.ndarray) -> bool:
    R = A[:, :3, :3]
    if len(R) < 2:
        return False
    idx = np.unique(np.linspace(0, len(R) - 1, min(len(R), 200)).round().astype(int))
    rel = np.swapaxes(R[idx, None], -1, -2) @ R[None, idx]
    tr = np.clip(0.5 * (np.trace(rel, axis1=-2, axis2=-1) - 1.0), -1.0, 1.0)
    if np.degrees(np.arccos(tr).max()) < MIN_ROT_RANGE_DEG:
        return False
    U, _, Vt = np.linalg.svd(R.sum(axis=0))
    Rm = U @ np.diag([1.0, 1.0, np.sign(np.linalg.det(U @ Vt))]) @ Vt
    return c.axis_scatter_lambda2(c.rotvecs(Rm.T @ R)) >= MIN_LAMBDA2


def judge(inliers: np.ndarray, A: np.ndarray) -> str | None:
    """Why the outlier labels are not supported (one phrase), or None when they are.

    Parameters
    ----------
    inliers : ndarray of bool, shape (N,)
        Labels of the pairs, in recording order.
    A : ndarray, shape (N, 4, 4)
        The pairs' hand poses ``T_base_ee`` [m].
    """
    inl = np.asarray(inliers, dtype=bool)
    n, k = inl.size, int(inl.sum())
    if k == n or n == 0:
        return None
    share = (n - k) / n
    runs = 1 + int(np.count_nonzero(inl[1:] != inl[:-1]))
    if k < MIN_INLIER_SHARE * n:
        return f"the inliers would be a minority ({k} of {n})"
    z = runs_z(~inl)
    if share > MAX_RUN_SHARE and z < RUNS_Z:
        return (f"they come in {runs} runs of consecutive pairs (runs test z = {z:.1f}), a systematic error that "
                "changes along the recording rather than scattered gross errors")
    if not _determines(A[inl]) and _determines(A):
        return "the pairs left would not determine X (they hardly rotate, or about one axis only)"
    return None
