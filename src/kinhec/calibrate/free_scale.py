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
from kinhec.calibrate.output import ros_static_transform
from kinhec.util.errors import DegenerateMotionError, InputError

__all__ = ["MARGIN", "BAND", "log_likelihood", "gain", "x_shift", "decide", "restart", "board_scale"]

#: Margin (ln 100, the firewall's decisive margin) by which the free fit must win, besides the freed parameter's
#: half log of the number of pairs.
MARGIN = float(np.log(100.0))

#: Half-width (ln 10, a likelihood ratio of ten) of the band round the margin where neither scale model is decisive.
BAND = float(np.log(10.0))


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


def x_shift(free: sv.Solution, held: sv.Solution) -> float:
    """Largest component of the difference between the two fits' ``X`` (rotation in ``X``'s frame, translation),
    over the free fit's standard deviation of that component."""
    dphi = se3.so3_log(held.X[:3, :3].T @ free.X[:3, :3])
    d = np.concatenate([dphi, free.X[:3, 3] - held.X[:3, 3]])
    std = np.sqrt(np.maximum(np.diag(free.cov)[:6], 1e-300))
    return float(np.max(np.abs(d) / std))


def decide(free: sv.Solution, held: sv.Solution) -> tuple[str, float, float, float]:
    """``(verdict, gain, needed, shift)``: ``"free"`` when the free fit wins by more than :data:`BAND` past the
    margin, ``"held"`` when it falls short by more than that, when both find the same scale (within the free
    scale's standard deviation from the data) or give the same ``X`` within one standard deviation
    (:func:`x_shift`), ``"neither"`` otherwise.  (Two fits at one scale that end apart differ by where their
    rounds settled, not by the reading.)"""
    g, needed = gain(free, held)
    shift = x_shift(free, held)
    if g > needed + BAND:
        return "free", g, needed, shift
    std = free.scale_data_std if free.scale_data_std is not None and np.isfinite(free.scale_data_std) else 0.0
    same_scale = abs(np.log(free.scale / held.scale)) <= std
    if g <= needed - BAND or shift <= 1.0 or same_scale:
        return "held", g, needed, shift
    return "neither", g, needed, shift


def _far(ratio: float, ratio_std: float) -> bool:
    return bool(np.isfinite(ratio) and ratio > 0 and np.isfinite(ratio_std)
                and abs(np.log(ratio)) >= max(5.0 * ratio_std / ratio, 3.0 * sc.PRIOR_STD))


def _undecided(free: sv.Solution, held: sv.Solution, g: float, needed: float, shift: float, where: str,
               eye_in_hand: bool) -> str:
    child = "cam" if eye_in_hand else "marker"
    parent = "ee" if eye_in_hand else "base"

    def one(sol):
        t = 1000 * sol.X[:3, 3]
        return (f"X translation ({t[0]:.1f}, {t[1]:.1f}, {t[2]:.1f}) mm, scale {sol.scale:.4f}; publishes "
                f"{ros_static_transform(sol.X, parent, child)}")

    return (f"{where}: the data cannot choose the scale of the eye translations: estimated freely "
            f"({free.scale:.4f} +- {free.scale * (free.scale_data_std or np.nan):.4f}) it is more probable than metric "
            f"within {100 * sc.PRIOR_STD:.2g} % by {g:.3g} log units, within {BAND:.2g} of the {needed:.3g} that "
            f"decide, and the two give X {shift:.1f} standard deviations apart: (1) --scale free "
            f"(the board's size or the focal length is off): {one(free)}; (2) --scale metric (the board and the "
            f"focal length are right to {100 * sc.PRIOR_STD:.2g} %): {one(held)}; state the one that holds "
            "(measure a printed square), or --force to keep the metric fit")


def restart(fit: dict, sol: sv.Solution, decision, free_fit, *, force: bool = False, where: str = "the eye file",
            warnings: list | None = None) -> tuple[sv.Solution, dict, str | None]:
    """The pose path's second fit, with the scale free, when the firewall's ratio of eye to robot translations is
    far from 1.

    ``free_fit`` is a callable returning the fit with the scale free and its settings as a stated ``--scale free``
    computes them (so that a refusal shows what that statement publishes); it is called only then.  Returns the
    fit, its settings and a note (the first fit, its settings and None when no second fit was needed; with a note
    saying the translations are metric when the second fit lost).  Raises
    :class:`~kinhec.util.errors.InputError` when :func:`decide` finds that neither scale model is decisive and
    their ``X`` differ (``force``: a warning appended to ``warnings`` and the metric fit kept).
    """
    r, r_std = (decision.scale, decision.scale_std) if decision is not None else (np.nan, np.nan)
    if not _far(r, r_std):
        return sol, fit, None
    free, free_fit = free_fit()
    verdict, g, needed, shift = decide(free, sol)
    if verdict == "neither":
        msg = _undecided(free, sol, g, needed, shift, where, fit.get("eye_in_hand", True))
        if not force:
            raise InputError(msg)
        if warnings is not None:
            warnings.append(msg + " (--force: kept the metric fit)")
        return sol, fit, None
    if verdict == "held":  # the first look's ratio was the coarse fit's: the refined pairs say metric
        return sol, fit, (f"the eye translations looked {r:.3g} times the robot's at the first look (a coarse fit); "
                          f"a fit of the pairs with the scale free gives {free.scale:.4f} ({sol.scale:.4f} under "
                          f"the prior) and fits no better (gain {g:.3g} in log-likelihood, {needed:.3g} needed): "
                          "the translations are metric")
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
    verdict, g, needed, _ = decide(free, held)
    if verdict != "free":  # (undecided: the board the file states stands, the file's own claim)
        return None
    b = 1.0 / free.scale
    return b, (f"the views' camera poses are {free.scale:.4f} times the robot's translations, beyond what the "
               f"board scale's prior of {100 * sc.PRIOR_STD:.2g} % allows (more probable by {g:.3g} in "
               f"log-likelihood): the board is taken {b:.4f} times its stated size and its scale refined from there")
