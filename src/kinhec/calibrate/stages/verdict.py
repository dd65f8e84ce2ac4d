"""Stage 5 of one camera: whether the calibration is determined, and every warning and note about it.

The observability of ``X`` and ``Y`` from the motion and the covariance
(:func:`kinhec.calibrate.observability.observability`), the noise model, the scale's report
(:mod:`~kinhec.calibrate.scale`; eye translations far from metric without ``scale``), the eye poses'
systematic error (:mod:`~kinhec.calibrate.eye_bias`), the share of outliers, the covariance's inflation,
and the held-out eye poses (:mod:`~kinhec.calibrate.held_out`).  The warnings are ordered so that the
verdict quotes the observability's first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.calibrate import eye_bias as eb
from kinhec.calibrate import held_out as ho
from kinhec.calibrate import reduced_dof as rd
from kinhec.calibrate import scale as sc
from kinhec.calibrate import solve as sv
from kinhec.calibrate.observability import observability
from kinhec.calibrate.options import Options
from kinhec.calibrate.readers import PoseStream
from kinhec.calibrate.stages.conventions import Conventions
from kinhec.calibrate.stages.pairing import Paired
from kinhec.calibrate.stages.solve import Solved
from kinhec.calibrate.stages.uncertainty import Spread

__all__ = ["Verdict", "judge", "check_scale", "SCALE_RANGE"]

#: Eye translations this many times the hand's (or fewer) without ``scale``: a monocular stream.
SCALE_RANGE = (0.7, 1.4)


@dataclass(frozen=True)
class Verdict:
    """``observability`` (the result's: determined or not, and why), ``held_out`` (the held-out eye poses'
    errors) and ``pairs`` (the pairs ``(A, B)`` at the final clock offset)."""

    observability: dict
    held_out: dict | None
    pairs: tuple


def check_scale(eye: PoseStream, decision, scale: bool) -> str | None:
    """The warning for eye translations that are not metric (a monocular stream) when no scale is asked for."""
    r, r_std = decision.scale, decision.scale_std
    if scale or not np.isfinite(r) or r <= 0:
        return None
    lo, hi = SCALE_RANGE
    if not (lo < r < hi) and (not np.isfinite(r_std) or abs(np.log(r)) > 3 * r_std / r):
        return (f"{eye.path}: the eye translations are {r:.3g} times the metric ones: a monocular "
                "(up-to-scale) stream needs --scale")
    return None


def _scale_report(cv: Conventions, solved: Solved, sp: Spread, opts: Options):
    sol = solved.sol
    if opts.fixed_scale:
        scale_rep, scale_warn, scale_notes = sc.describe_fixed()
    else:
        scale_rep, scale_warn, scale_notes = sc.describe(sol.scale, sp.scale_std, sol.scale_data_std,
                                                         prior_std=None if opts.scale else sc.PRIOR_STD,
                                                         where=str(cv.eye.path))
    # (the first look's ratio is a coarse fit's: where a fit with the scale free lost on the pairs, they say metric)
    not_metric = None if solved.metric_checked else check_scale(cv.eye, cv.decision, opts.scale)
    if not_metric is not None and solved.freed:  # one message: not metric, the scale estimated, X given for it
        scale_warn = [f"{cv.eye.path}: the eye translations are {sol.scale:.4g} times the robot's (+- "
                      f"{sp.scale_std:.2g}): not metric -- a monocular (up-to-scale) stream (say so with --scale) or "
                      "translations in other units; the scale was estimated freely and X and Y are given for it"]
    elif not_metric is not None:
        cv.warnings.append(not_metric)
    return scale_rep, scale_warn, scale_notes


def judge(cv: Conventions, paired: Paired, solved: Solved, sp: Spread, opts: Options,
          eye_bias_prior=None) -> Verdict:
    """The verdict on ``solved``; appends to ``cv``'s warnings and notes."""
    sol, warn, notes, n = solved.sol, cv.warnings, cv.notes, len(paired)
    A_and_B = solved.pairing.at(sol.offset)
    A_final = A_and_B[0]
    tau = None if sol.inflation_detail is None else float(sol.inflation_detail.residual_tau.max())
    od = getattr(solved, "open", None)  # a stage given only the solution and its covariance: none
    resolved = od is not None and bool(od.known or od.convention or od.held_rotations)
    one_axis = None if od is None else ("" if resolved else rd.refusal(od, cv.setup))
    obs, obs_warn = observability(A_final[sol.inliers], sol.cov[:12, :12], sp.X_std, tau, drift_refused=bool(opts.scale),
                                  noise_dof=sol.fit_dof, one_axis=one_axis,
                                  rot_noise_var=float(np.trace(sol.noise_cov[:3, :3])) / 3.0)  # fmt: skip
    obs["n_inliers"] = int(sol.inliers.sum())
    obs["undetermined"] = [] if od is None or od.known else list(od.components)
    if od is not None:
        obs["open_directions"] = od.to_dict()
        if resolved:
            notes.append(rd.resolution_note(od, cv.setup))
    if solved.offset_edge:  # kept under --force: the offset, and X paired at it, are not determined
        obs["determined"], obs["offset_at_edge"] = False, True
    radius = getattr(solved, "feedback_radius", None)
    obs["noise_feedback"] = radius
    if radius is not None and radius >= 1.0:  # (kinhec.calibrate.solve.noise_feedback)
        obs["determined"] = False
        obs_warn.append(f"the fit does not settle: each round under the noise model estimated at its last answer "
                        f"moves X further (feedback {radius:.2f}, at least 1): the recording does not determine X "
                        "against its own noise; the hand's rotation noise dominates over too short a range of "
                        "rotations -- turn the hand further while the target is seen, or state the noise")
    obs.update(sv.noise_report(sol))
    obs["scale"], scale_warn, scale_notes = _scale_report(cv, solved, sp, opts)
    if sol.eye_bias_cov is not None:
        obs["eye_bias"] = eb.describe(eye_bias_prior, sol.eye_bias_cov[:6, :6])
        notes.append(eb.note(eye_bias_prior))
    warn[:0] = obs_warn if not solved.offset_edge else []  # the verdict quotes the first warning: observability first
    if solved.offset_edge:  # one message for the edge: the coarse estimate's warning is part of it
        warn[:] = [w for w in warn if not w.startswith("the clock offset lies at the edge")] + obs_warn
    warn += scale_warn
    notes += scale_notes
    n_out = int((~sol.inliers).sum())
    if n_out > 0.2 * n:
        warn.append(f"{n_out} of {n} pairs ({100 * n_out / n:.0f} %) are outliers")
    if sol.inflation > 1.0:
        notes.append(sv.inflation_note(sol))
    held = ho.assess_solution(sol, A_final, np.asarray(solved.pairing.t, dtype=float) if paired.stamped else None)
    if ho.warning(held) is not None:  # held-out eye poses far worse than sigma predicts
        warn.append(ho.warning(held))
    return Verdict(obs, held, A_and_B)
