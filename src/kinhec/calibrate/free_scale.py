"""A free scale for eye translations far from metric: a board of the wrong size, not a printing error.

The scale's prior (:mod:`kinhec.calibrate.scale`, 0.5 %) describes printing and focal-length errors.  Under it,
eye translations 20 % short (a board stated 20 % too large, a square measured wrong) end near scale 1 with ``X``
tens of millimetres off and the mismatch taken for noise -- the prior's Gaussian tail outweighs any data.  Where
the translations look far from metric, the fit is started again with the scale free, and replaces the fit under
the prior when its robust log-likelihood (under its own noise covariance, each pair's chi-square capped at the
outlier gate's threshold, on every pair) beats the first's log posterior by :data:`MARGIN` plus half the log of the number of pairs (the cost of the freed parameter).

:func:`restart` does this on the pose path (triggered by the firewall's ratio of eye to robot translations);
:func:`board_scale` on the camera poses a corner file's views give, for ``--corners``.
"""

from __future__ import annotations

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import scale as sc
from kinhec.calibrate import solve as sv
from kinhec.calibrate.pairing import OrderPairing
from kinhec.util.errors import DegenerateMotionError

__all__ = ["MARGIN", "log_likelihood", "gain", "restart", "board_scale"]

#: Margin (ln 100, the firewall's decisive margin) by which the free fit must win, besides the freed parameter's
#: half log of the number of pairs.
MARGIN = float(np.log(100.0))


def log_likelihood(sol: sv.Solution, keep: np.ndarray) -> float:
    """Robust Gaussian log-likelihood of a fit on the pairs ``keep``, under its own noise covariance: each pair's
    chi-square capped at the outlier gate's threshold (:data:`kinhec.calibrate.solve.CHI2_6_9999`), so that a pair
    one fit labels an outlier costs it no more than a pair on the gate's edge.  Uncapped, the pairs the fit under the
    prior had labelled outliers decided alone: a free fit that kept them won by thousands of log units while
    fitting worse (``X`` 7 deg off against 0.3 deg, on a short generated recording)."""
    r = sol.residuals[keep]
    sign, logdet = np.linalg.slogdet(sol.noise_cov)
    if sign <= 0:
        return -np.inf
    d2 = np.einsum("ni,ij,nj->n", r, np.linalg.inv(sol.noise_cov), r)
    return float(-0.5 * (len(r) * logdet + np.minimum(d2, sv.CHI2_6_9999).sum()))


def gain(free: sv.Solution, held: sv.Solution) -> tuple[float, float]:
    """``(gain, needed)``: the free fit's log-likelihood over the held fit's log posterior, and the margin to beat."""
    keep = np.ones(len(held.inliers), dtype=bool)  # every pair: an outlier of either fit at the cap
    g = log_likelihood(free, keep) - log_likelihood(held, keep) + 0.5 * (np.log(held.scale) / sc.PRIOR_STD) ** 2
    return float(g), MARGIN + 0.5 * float(np.log(max(int(keep.sum()), 2)))


def _far(ratio: float, ratio_std: float) -> bool:
    return bool(np.isfinite(ratio) and ratio > 0 and np.isfinite(ratio_std)
                and abs(np.log(ratio)) >= max(5.0 * ratio_std / ratio, 3.0 * sc.PRIOR_STD))


def restart(pairing, X0, Y0, fit: dict, sol: sv.Solution, decision) -> tuple[sv.Solution, dict, str | None]:
    """The pose path's second start from the firewall's ratio of eye to robot translations.

    Returns the fit, its settings and a note (the first fit, its settings and None when it stays).
    """
    r, r_std = (decision.scale, decision.scale_std) if decision is not None else (np.nan, np.nan)
    if not _far(r, r_std):
        return sol, fit, None
    free_fit = dict(fit, scale0=r, scale_prior_std=None)
    free = sv.refine(pairing, X0, Y0, **free_fit)
    g, needed = gain(free, sol)
    if not g > needed:
        return sol, fit, None
    note = (f"the eye translations are {free.scale:.4f} times the robot's, beyond what the scale's prior of "
            f"{100 * sc.PRIOR_STD:.2g} % allows (fit under it: scale {sol.scale:.4f}, the mismatch taken for noise; "
            f"free: more probable by {g:.3g} in log-likelihood): the scale is estimated freely")
    return free, dict(free_fit, scale0=free.scale, offset0=free.offset), note


def board_scale(A: np.ndarray, cam_T_target: np.ndarray, configuration: str) -> tuple[float, str] | None:
    """For ``--corners``: the factor the stated board size is off by, when the views' camera poses decide it.

    ``A`` (N, 4, 4) are the flange poses and ``cam_T_target`` the camera poses PnP gives with the stated board.
    Fits ``A X = Y B`` on them under the scale's prior and with the scale free; returns ``(b, note)`` -- the true
    board is ``b`` times the stated one -- when the free fit wins as on the pose path, else None.
    """
    eih = configuration != "eye_to_hand"
    B = se3.invert_transform(cam_T_target, check=False) if eih else cam_T_target
    n = A.shape[0]
    pairing = OrderPairing(A, B, np.arange(n), np.arange(n))
    try:
        name, X0, Y0, s0 = sv.initial_candidates(A, B, estimate_scale=True, inverse_domain=eih)[0]
    except DegenerateMotionError:
        return None
    if not (np.isfinite(s0) and s0 > 0) or abs(np.log(s0)) < 3.0 * sc.PRIOR_STD:
        return None
    fit = dict(estimate_scale=True, inverse_domain=eih, eye_in_hand=eih, init_solver=name)
    free = sv.refine(pairing, X0, Y0, scale0=s0, scale_prior_std=None, **fit)
    if not _far(free.scale, free.scale * (free.scale_data_std or np.inf)):
        return None
    held = sv.refine(pairing, X0, Y0, scale0=1.0, scale_prior_std=sc.PRIOR_STD, **fit)
    g, needed = gain(free, held)
    if not g > needed:
        return None
    b = 1.0 / free.scale
    return b, (f"the views' camera poses are {free.scale:.4f} times the robot's translations, beyond what the "
               f"board scale's prior of {100 * sc.PRIOR_STD:.2g} % allows (more probable by {g:.3g} in "
               f"log-likelihood): the board is taken {b:.4f} times its stated size and its scale refined from there")
