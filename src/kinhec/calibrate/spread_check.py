"""Error bars checked against how the estimate is computed: the fit's feedback through its noise model, a jackknife.

:func:`kinhec.calibrate.solve.refine` weighs every pair by one 6x6 noise covariance estimated from its own residuals,
so its answer is a fixed point of "the fit under the covariance estimated at the answer".  Where that covariance
depends strongly on where it is estimated, the fixed point amplifies the error beyond ``(J^T S^-1 J)^-1``
(:func:`kinhec.calibrate.solve.noise_feedback`); and whatever the noise model assumes, the spread of the fits that
leave out one block of pairs (:func:`kinhec.calibrate.solve.block_jackknife`) says how far the estimate moves with
the data.  :func:`widen` applies both to a solution; the verdict refuses a fit whose feedback reaches 1.
"""

from __future__ import annotations

import numpy as np

from kinhec.calibrate import solve as sv

__all__ = ["widen", "MIN_PAIRS", "FEEDBACK_MIN", "FEEDBACK_MIN_PAIRS", "JACKKNIFE_BLOCKS", "JACKKNIFE_LIMIT"]

#: Spectral radius of :func:`kinhec.calibrate.solve.noise_feedback` above which the covariance counts it (below, the
#: standard deviations grow by less than about 10 %).
FEEDBACK_MIN = 0.1
#: Fewest inliers from which the feedback widens the covariance: its first-order estimate carries a part of order
#: ``P / n`` that is the noise covariance's own sampling error, not feedback (on 30-pair rigs with a well-specified
#: noise model it widened the standard deviations by about 20 % where they were right).
FEEDBACK_MIN_PAIRS = 100
#: Blocks of the jackknife (:func:`kinhec.calibrate.solve.block_jackknife`), and the fewest inliers it (and the
#: feedback) runs on.
JACKKNIFE_BLOCKS = 10
MIN_PAIRS = 40
#: A parameter's variance is taken from the jackknife when it exceeds the covariance's by more than this factor:
#: the 99.9 % quantile of chi2(9) / 9, how far a jackknife variance of 10 blocks strays above the true one.
JACKKNIFE_LIMIT = 27.877 / 9.0


def widen(notes: list, pairing, sol, fit: dict) -> float | None:
    """``sol``'s covariance widened where how the estimate is computed says so (a note in ``notes``); returns the
    feedback's spectral radius (None below :data:`MIN_PAIRS` inliers: nothing checked).

    First its dependence on where its noise model was estimated (:func:`kinhec.calibrate.solve.noise_feedback`):
    each standard deviation widened to the fixed point's (at a radius of 1 or more the covariance is left as it is
    and the verdict says the fit does not settle).  Then the spread of the fits that leave out one block of
    pairs (:func:`kinhec.calibrate.solve.block_jackknife`): a parameter whose jackknife variance exceeds the
    covariance's beyond what the jackknife's own scatter allows (:data:`JACKKNIFE_LIMIT`) takes it.  Hands whose
    rotation noise dominates, seen over a short range of rotations (10-20 deg), were 8 sigma off with the model's
    covariance alone: its noise, carried to the eye by a lever arm, makes rotation and translation errors
    correlate by pose, which one 6x6 noise covariance does not describe.
    """
    n_in = int(sol.inliers.sum())
    if n_in < MIN_PAIRS:
        return None
    M = sv.noise_feedback(pairing, sol, fit)
    radius = float(np.abs(np.linalg.eigvals(M)).max())
    if radius >= 1.0:
        return radius
    P = M.shape[0]
    before = np.sqrt(np.diag(sol.cov)[:6])
    d = np.ones(P)
    if radius > FEEDBACK_MIN and n_in >= FEEDBACK_MIN_PAIRS:
        IM = np.linalg.inv(np.eye(P) - M)
        # each variance widened to the fixed point's, never narrowed (the rounds stop short of the fixed point, and
        # a negative eigenvalue would narrow it)
        d = np.sqrt(np.maximum(np.diag(IM @ sol.cov @ IM.T) / np.maximum(np.diag(sol.cov), 1e-300), 1.0))
    var_j = np.diag(sv.block_jackknife(pairing, sol, fit, JACKKNIFE_BLOCKS))
    var_m = np.diag(sol.cov)[:P] * d**2
    d = np.where(var_j > JACKKNIFE_LIMIT * var_m, d * np.sqrt(var_j / np.maximum(var_m, 1e-300)), d)
    if np.any(d > 1.0):
        sol.cov = sol.cov * np.outer(d, d)
        grow = float(np.max(np.sqrt(np.diag(sol.cov)[:6]) / np.maximum(before, 1e-300)))
        notes.append(f"the standard deviations count how the estimate is computed (the fit's dependence on its noise "
                     f"model's point: feedback {radius:.2f}; the spread of fits leaving out a tenth of the pairs): "
                     f"those of X up to {grow:.2f} times wider")
    return radius
