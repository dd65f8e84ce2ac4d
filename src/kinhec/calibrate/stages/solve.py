"""Stage 3 of one camera: ``X``, ``Y``, the clock offset and the scale, refined with outlier rejection.

The registry's solvers give the initial candidates (:func:`kinhec.calibrate.solve.initial_candidates`);
the residuals are compared in the domain whose noise model fits best; :func:`kinhec.calibrate.solve.refine`
refines jointly.  Then: a repeated path may have locked the coarse offset on a wrong peak, so the same
clock is tried too (:mod:`~kinhec.calibrate.same_clock`); a metric stream's scale prior is freed when the
translations are far from metric (:mod:`~kinhec.calibrate.free_scale`); outlier labels the fit does not
support are dropped and every pair kept (:mod:`~kinhec.calibrate.outliers`).  Last, a motion about one axis:
the components it leaves open are named (:mod:`~kinhec.calibrate.reduced_dof`) and, when stated (``known``) or
asked to be set by convention (``partial``), the fit is repeated with them held.  Otherwise the covariance is checked
against how the estimate is computed (:mod:`~kinhec.calibrate.spread_check`), and an ``X`` that no mounting allows
refuses the reading it was fitted in.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import free_scale
from kinhec.calibrate import reduced_dof as rd
from kinhec.calibrate import same_clock
from kinhec.calibrate import scale as sc
from kinhec.calibrate import solve as sv
from kinhec.calibrate import spread_check
from kinhec.calibrate import stamp_units
from kinhec.calibrate import uncertainty as unc
from kinhec.calibrate.conventions import X_IMPOSSIBLE_M
from kinhec.calibrate.observability import MIN_LAMBDA2, axis_scatter
from kinhec.calibrate.options import Options
from kinhec.calibrate.outliers import judge as judge_outliers
from kinhec.calibrate.stages.conventions import Conventions
from kinhec.calibrate.stages.pairing import Paired
from kinhec.util.errors import DegenerateMotionError, InputError

__all__ = ["Solved", "solve"]


@dataclass
class Solved:
    """The refined solution (:class:`kinhec.calibrate.solve.Solution`) and how it was reached.

    ``pairing`` is the one it holds for (the same clock's when that won), ``fit`` the refinement's options,
    ``init_solver`` the initial candidate's solver, ``inverse_domain`` the residuals' domain, ``freed``
    whether the scale's prior was freed (``metric_checked``: tried freed, and it lost), ``offset_edge`` whether the
    offset lies at the edge of its search,
    ``open`` the directions a motion about one axis leaves open (with the components stated or set by convention).
    """

    sol: sv.Solution
    pairing: object
    fit: dict
    init_solver: str
    inverse_domain: bool
    freed: bool
    offset_edge: bool
    open: rd.OpenDirections | None = None  # what a motion about one axis leaves open (None: nothing)
    feedback_radius: float | None = None  # spectral radius of the fit's dependence on its noise model's point
    metric_checked: bool = False  # a fit with the scale free was tried on the pairs and lost: the scale is metric


def _candidates(cv: Conventions, pairing, offset0, opts: Options, estimate_scale: bool):
    """The initial candidates on ``pairing``'s pairs at ``offset0`` and the residuals' domain the first chooses."""
    Ap, Bp = pairing.at(offset0)
    try:
        cands = sv.initial_candidates(Ap, Bp, solver=opts.solver, estimate_scale=estimate_scale,
                                      inverse_domain=cv.file_domain)
    except DegenerateMotionError as exc:
        raise InputError(f"{cv.where}: X is not determined by this motion: {exc}") from None
    _, X0, Y0, s0 = cands[0]
    return cands, sv.choose_domain(Ap, Bp, X0, Y0, s0)


def _start(cv: Conventions, paired: Paired, opts: Options):
    cands, eih = _candidates(cv, paired.pairing, paired.offset0, opts, opts.scale)
    name, X0, Y0, s0 = cands[0]
    cv.notes.append(f"residuals compared as {'T_cam_target' if eih != (cv.setup == 'eye_to_hand') else 'T_target_cam'} "
                    "(the noise model that fits best)")
    cv.notes.append(f"initial estimate from {name} (of {len(cands)} candidates: the one most pairs agree with)")
    return name, X0, Y0, s0, eih, cands


def solve(cv: Conventions, paired: Paired, opts: Options, eye_bias_prior=None) -> Solved:
    """Initialise and refine on ``paired``'s pairs (``eye_bias_prior``: the eye poses' systematic error's prior)."""
    scale, fixed_scale = opts.scale, opts.fixed_scale
    pairing, estimate_offset, offset_edge = paired.pairing, paired.estimate_offset, paired.offset_edge
    name, X0, Y0, s0, eih, cands = _start(cv, paired, opts)
    # the scale of the eye translations is always estimated: freely when asked for (--scale), under the prior of
    # a metric stream otherwise (kinhec.calibrate.scale)
    # (held at 1 with scale="fixed")
    fit = dict(offset0=paired.offset0, scale0=s0 if scale else 1.0, estimate_offset=estimate_offset,
               estimate_scale=not fixed_scale, scale_prior_std=None if scale or fixed_scale else sc.PRIOR_STD,
               init_solver=name, inverse_domain=eih, eye_bias_prior=None if scale else eye_bias_prior,
               eye_in_hand=cv.setup != "eye_to_hand")  # fmt: skip
    sol = sv.refine(pairing, X0, Y0, **fit)
    sol, name, X0, Y0, fit = _other_starts(cv.notes, pairing, cands, sol, name, X0, Y0, fit, scale)
    if estimate_offset:  # a repeated path can lock the coarse offset on a wrong peak: try the same clock too
        alt = same_clock.refit_from_zero_offset(cv.hand, cv.A, cv.eye, cv.B, pairing, sol, fit,
                                                margin_s=paired.margin_s, period_s=paired.period_s,
                                                solver=opts.solver, scale=scale, candidate_domain=cv.file_domain)
        if alt is not None:
            pairing, sol, X0, Y0, fit, note = alt
            cv.notes.append(note)
    metric_checked = False
    if not scale and not fixed_scale and not opts.metric_scale:
        sol, fit, restart = free_scale.restart(fit, sol, cv.decision,
                                               lambda: _free_fit(cv, pairing, paired.offset0, fit, opts),
                                               force=opts.force, where=cv.where, warnings=cv.warnings)
        if restart is not None:
            cv.notes.append(restart)
            X0, Y0 = sol.X, sol.Y
            metric_checked = fit.get("scale_prior_std") is not None  # the free scale tried, and it lost
    if estimate_offset and not offset_edge and stamp_units.offset_at_edge(sol.offset, opts.max_offset_s,
                                                                          paired.period_s):
        offset_edge = stamp_units.check_offset_edge(cv.hand, cv.eye, sol.offset, opts.max_offset_s, coarse=False,
                                                    force=opts.force, warnings=cv.warnings)
    freed = not scale and not fixed_scale and fit.get("scale_prior_std") is None
    why = judge_outliers(sol.inliers, pairing.at(sol.offset)[0])
    if why is not None:  # not outliers the fit supports: every pair kept
        n, n_out0 = len(paired), int((~sol.inliers).sum())
        cv.warnings.append(f"the chi-square gate labelled {n_out0} of {n} pairs ({100 * n_out0 / n:.0f} %) outliers, "
                           f"more than the fit supports: {why}; all pairs kept (their residuals are not independent "
                           "Gaussian noise, and X carries that error)")
        sol = sv.refine(pairing, X0, Y0, reject=False, **fit)
    sol, od = _one_axis(cv, pairing, sol, fit, opts, reject=why is None)
    if not sol.settled:
        cv.warnings.append("the fit and its noise model had not settled after their last round (the noise levels or "
                           "the outlier labels still moving): X can lie a fraction of its standard deviation from "
                           "where they settle")
    # (a fit with components held has a noise model of its own; a motion about one axis is refused)
    radius = spread_check.widen(cv.notes, pairing, sol, fit) if od is None else None
    if estimate_offset:  # the offset's bias from interpolating noisy samples, carried into X and Y
        _interpolation_bias(cv, pairing, sol)
    if od is None and opts.setup != "rig" and "rig" not in (cv.hand.fmt, cv.eye.fmt):
        # (components held for a motion about one axis are where they were stated or set, not fitted; a rig's
        # cameras sit anywhere on its body)
        _check_mount(cv, sol)
    return Solved(sol, pairing, fit, name, eih, freed, offset_edge, od, radius, metric_checked)


def _check_mount(cv: Conventions, sol) -> None:
    """Refuse an ``X`` no mounting allows: the camera (eye-to-hand: the marker) more than
    :data:`kinhec.calibrate.conventions.X_IMPOSSIBLE_M` from the flange it is mounted on.

    The conventions stage excludes such readings by its coarse fit; the refined fit can still land there when that
    coarse fit was misled (a short range of rotations and gross outliers: a hand file read in the wrong direction
    fitted the coarse motion better and gave a camera 618 mm from the flange, 74 deg from the truth).  The answer
    is then physically impossible, so the reading that gave it is: the run names it and the next reading.  Not
    when ``X``'s translation is so poorly determined that a mount within the limit lies within three of its standard
    deviations (a motion that hardly turns about a second axis gave 512 mm with 200 mm of standard deviation, from
    a true 79 mm): there the motion, not the reading, is at fault, and the verdict says that ``X`` is not determined.
    """
    x_m = float(np.linalg.norm(sol.X[:3, 3]))
    if not x_m > X_IMPOSSIBLE_M:
        return
    if x_m - 3.0 * float(np.sqrt(max(np.trace(sol.cov[3:6, 3:6]), 0.0))) <= X_IMPOSSIBLE_M:
        return
    thing = "marker" if cv.setup == "eye_to_hand" else "camera"
    ranking = (getattr(cv.decision, "report", None) or {}).get("ranking") or []
    read = " ".join(ranking[0]["reading"]) if ranking else "these conventions"
    nxt = f"; the next reading was {' '.join(ranking[1]['reading'])}" if len(ranking) > 1 else ""
    raise InputError(f"{cv.where}: the fit puts the {thing} {1000 * x_m:.0f} mm from the flange it is mounted on "
                     f"(more than {1000 * X_IMPOSSIBLE_M:.0f} mm), which no mounting allows: the reading it was "
                     f"fitted in ({read}) cannot be right{nxt}; state how the files were written (--hand-pose, "
                     "--eye-pose, --setup)")


#: Initial candidates refined in all (the consensus order's first, and the next ones that start elsewhere).
STARTS = 3
#: A candidate starts elsewhere when its X differs from those already refined by this much [rad] or [m] (a tenth of
#: the observability's limits for X's standard deviations).
DISTINCT_START = (np.radians(0.2), 0.002)


def _free_fit(cv: Conventions, pairing, offset0, fit: dict, opts: Options):
    """The fit with the scale free as ``--scale free`` starts and refines it (its notes set aside): the
    candidates with a scale, the residuals' domain they choose, the first refined, the next starts tried.  Its ``X``
    is the one ``--scale free`` publishes; its standard deviations keep the intrinsics' systematic error."""
    cands, eih = _candidates(cv, pairing, offset0, opts, True)
    name, X0, Y0, s0 = cands[0]
    # (the intrinsics' systematic error stays counted: it moves only the standard deviations, and a board of the
    # wrong size leaves the principal point's error in the poses as much as a right one)
    free_fit = dict(fit, scale0=s0, scale_prior_std=None, init_solver=name, inverse_domain=eih)
    sol = sv.refine(pairing, X0, Y0, **free_fit)
    sol, _, _, _, free_fit = _other_starts([], pairing, cands, sol, name, X0, Y0, free_fit, True)
    return sol, free_fit


def _other_starts(notes: list, pairing, cands: list, sol, name, X0, Y0, fit: dict, scale: bool):
    """Refine from the next initial candidates that start elsewhere too (up to :data:`STARTS` in all) and keep the fit
    with the lowest :func:`~kinhec.calibrate.solve.robust_nll`: a refinement from a start far off can settle in a
    local minimum with outliers labelled to suit it (a short recording turning a few degrees: X 12 deg off, 131
    inliers of 181, against 0.4 deg and 160 inliers from the next start)."""
    tried = [X0]
    best = (sv.robust_nll(pairing, sol, fit["inverse_domain"]), sol, name, X0, Y0, fit)
    for cname, Xc, Yc, sc0 in cands[1:]:
        if len(tried) >= STARTS:
            break
        if any(np.linalg.norm(_rotvec(Xt, Xc)) < DISTINCT_START[0]
               and np.linalg.norm(Xt[:3, 3] - Xc[:3, 3]) < DISTINCT_START[1] for Xt in tried):
            continue
        tried.append(Xc)
        fit_c = dict(fit, scale0=sc0 if scale else fit["scale0"], init_solver=cname)
        try:
            alt = sv.refine(pairing, Xc, Yc, **fit_c)
        except (InputError, DegenerateMotionError, np.linalg.LinAlgError):
            continue
        c = sv.robust_nll(pairing, alt, fit["inverse_domain"])
        if c < best[0] - sv.NLL_MARGIN:
            best = (c, alt, cname, Xc, Yc, fit_c)
    if best[2] != name:
        notes.append(f"the refinement from {best[2]}'s estimate fitted better than from {name}'s (robust negative "
                        f"log-likelihood per pair {best[0]:.4g} against "
                        f"{sv.robust_nll(pairing, sol, fit['inverse_domain']):.4g}): it is kept")
    return best[1], best[2], best[3], best[4], best[5]


def _rotvec(Xa: np.ndarray, Xb: np.ndarray) -> np.ndarray:
    """The rotation vector between the rotations of two poses [rad]."""
    return se3.so3_log(Xa[:3, :3].T @ Xb[:3, :3], check=False)


def _one_axis(cv: Conventions, pairing, sol, fit: dict, opts: Options, reject: bool):
    """A motion about one axis: its open directions, and the fit again with the stated (or conventional) components
    held; refuses a stated component the motion determines (:func:`kinhec.calibrate.reduced_dof.check_known`)."""
    A = pairing.at(sol.offset)[0][sol.inliers]
    od = None
    lam2 = axis_scatter(A)
    if lam2 < MIN_LAMBDA2 and sol.whitened_jacobian is not None:
        od = rd.open_directions(sv.one_axis_information(sol, A, fit["inverse_domain"]), lam2)
    try:
        rd.check_known(od, opts.known, sol.X, sol.Y, sol.cov)
    except InputError as exc:
        raise InputError(f"{cv.where}: {exc}") from None
    if od is None or not (opts.known or opts.partial):
        return sol, od
    if opts.known:
        od.known = dict(opts.known)
        values, rotations = dict(opts.known), []
    else:  # --partial: one component per open direction held, a translation at 0, a rotation where the fit left it
        held = rd.gauge_components(od)
        values, rotations = {i: 0.0 for i in held if i % 6 >= 3}, [i for i in held if i % 6 < 3]
        od.convention, od.held_rotations = dict(values), list(rotations)
    X1, Y1 = rd.move_to_known(sol.X, sol.Y, od, values) if values else (sol.X, sol.Y)
    hold = dict(values)
    hold.update({i: (X1 if i < 6 else Y1)[:3, :3].copy() for i in rotations})
    fit2 = dict(fit, offset0=sol.offset, scale0=sol.scale if sol.scale is not None else fit["scale0"])
    sol = sv.refine(pairing, X1, Y1, reject=reject, hold=hold, **fit2)
    for i, v in values.items():  # the held translations exactly as stated (their prior leaves them within 1e-13 m)
        (sol.X if i < 6 else sol.Y)[(i % 6) - 3, 3] = v
    return sol, od


def _interpolation_bias(cv: Conventions, pairing, sol) -> None:
    """Widen ``sol``'s covariance by the bias interpolating the denser stream's noisy samples gives the clock offset
    (:meth:`kinhec.calibrate.pairing.TimePairing.interpolation_bias`), X and Y following their regression on it."""
    S = sol.noise_cov
    bias = pairing.interpolation_bias(sol.offset, (float(np.trace(S[:3, :3])) / 3.0, float(np.trace(S[3:, 3:])) / 3.0))
    k = 12
    if not bias > 0.0 or not sol.cov[k, k] > 0.0:
        return
    sd0 = float(np.sqrt(sol.cov[k, k]))
    sol.cov = unc.widen(sol.cov, k, bias**2)
    if bias > sd0:  # worth a note only where it matters
        cv.notes.append(f"the clock offset can lie {1000 * bias:.3g} ms from where the fit puts it: interpolating "
                        f"noisy samples pulls it away from them (its standard deviation from the fit alone: "
                        f"{1000 * sd0:.3g} ms); counted in its standard deviation and in those of X and Y")
