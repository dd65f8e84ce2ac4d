"""A second fit from a zero clock offset, kept when it fits better than the one from the coarse offset.

The coarse offset of stamped streams comes from the cross-correlation of the
two angular speeds.  A path that repeats its moves (waypoints toured again and
again, with dwells) correlates at more than one lag, and the refinement only
moves the offset locally: when the peak it starts from is the wrong one, the
fit settles there.  Along a motion that turns about nearly one axis a time
shift is then almost a constant rotation about that axis, which ``X`` and
``Y`` absorb, so the wrong offset comes with a small standard deviation and a
confident wrong ``X`` (a generated recording on one clock, the test's: offset
33.33 ms +- 1.5 us, ``X`` 1.17 deg / 4.3 mm off with a standard deviation of
0.2-0.4 deg; fitted from a zero offset, 0.05 deg / 0.29 mm off).

Most recordings that carry stamps share one clock or nearly so, so the fit
is repeated from a zero offset whenever the first one ends farther from zero
than :data:`SAME_CLOCK_PERIODS` sample periods (half a period: an offset of
exactly one or two periods is a wrong peak as much as one of ten), and the two
are compared by their robust likelihoods, each under its own noise covariance:
``log det S`` plus the mean chi-square of the residuals, each pair's capped at
the outlier gate's threshold.  Under the first fit's covariance alone the
first fit is favoured, since that covariance was fitted to its residuals: on
generated recordings whose speeds peaked at 2 and 5 periods the first fit won
by 8.4 against 10.7 under its own covariance and lost by 20.5 against 8.4
under the other's, ``X`` 9 deg / 189 mm off against 0.3 deg / 1.5 mm.
"""

from __future__ import annotations

import numpy as np

from kinhec.calibrate import pairing as pr
from kinhec.calibrate import solve as sv
from kinhec.util.errors import DegenerateMotionError, InputError

__all__ = ["SAME_CLOCK_PERIODS", "refit_from_zero_offset"]

#: A fit whose offset ends within this many sample periods of zero is not repeated (it would end in the same place).
SAME_CLOCK_PERIODS = 0.5


def refit_from_zero_offset(hand, A, eye, B, pairing, sol: sv.Solution, fit: dict, *, margin_s: float,
                           period_s: float, solver, scale, candidate_domain: bool):  # fmt: skip
    """The fit started from a zero clock offset, if it fits better than ``sol``; else ``None``.

    ``fit`` holds the keyword arguments ``sol`` was refined with (:func:`kinhec.calibrate.solve.refine`);
    ``candidate_domain`` is the residual domain the initial candidates are computed in.  Returns
    ``(pairing, solution, X0, Y0, fit, note)`` of the zero-offset fit when its robust negative log-likelihood
    (:func:`kinhec.calibrate.solve.robust_nll`: each fit under its own noise covariance) is lower than ``sol``'s.
    """
    if sol.offset is None or abs(sol.offset) <= SAME_CLOCK_PERIODS * period_s:
        return None
    try:
        p0 = pr.TimePairing(hand, A, eye, B, 0.0, margin_s)
        if len(p0) < len(pairing) // 2:
            return None
        A0, B0 = p0.at(0.0)
        name, X0, Y0, s0 = sv.initial_candidates(A0, B0, solver=solver, estimate_scale=scale,
                                                 inverse_domain=candidate_domain)[0]  # fmt: skip
        fit0 = dict(fit, offset0=0.0, scale0=s0 if scale else 1.0, init_solver=name)
        alt = sv.refine(p0, X0, Y0, **fit0)
    except (InputError, DegenerateMotionError, np.linalg.LinAlgError):
        return None
    dom = bool(fit["inverse_domain"])
    c_first = sv.robust_nll(pairing, sol, dom)
    c_zero = sv.robust_nll(p0, alt, dom)
    try:  # the first fit's X and Y moved to a zero offset: a start that a wrong lag has not thrown far off
        fit1 = dict(fit, offset0=0.0, scale0=sol.scale if sol.scale is not None else fit["scale0"])
        alt1 = sv.refine(p0, sol.X, sol.Y, **fit1)
        c1 = sv.robust_nll(p0, alt1, dom)
        if c1 < c_zero - sv.NLL_MARGIN:
            alt, X0, Y0, fit0, c_zero = alt1, sol.X, sol.Y, fit1, c1
    except (InputError, DegenerateMotionError, np.linalg.LinAlgError):
        pass
    if not c_zero < c_first - sv.NLL_MARGIN:
        return None
    note = (f"the clock offset from the angular speeds ({1000 * sol.offset:.4g} ms) fitted worse than a fit started "
            f"from a zero offset ({1000 * alt.offset:.4g} ms; robust negative log-likelihood per pair {c_zero:.4g} "
            f"against {c_first:.4g}): the latter is kept")  # fmt: skip
    return p0, alt, X0, Y0, fit0, note

