"""Stage 2 of one camera: the pose pairs, by time with the coarse clock offset or by order.

Stamped streams are paired by time (:class:`kinhec.calibrate.pairing.TimePairing`) at the firewall's
coarse offset (or :func:`kinhec.calibrate.pairing.coarse_offset`'s), re-interpolated for every offset the
solve tries; others by order in the firewall's row alignment, repeated pairs dropped.  An offset at the
edge of its search stops the run unless ``force`` (:func:`kinhec.calibrate.stamp_units.check_offset_edge`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.calibrate import pairing as pr
from kinhec.calibrate import solve as sv
from kinhec.calibrate import stamp_units
from kinhec.calibrate.options import Options
from kinhec.calibrate.stages.conventions import Conventions
from kinhec.util.errors import InputError

__all__ = ["Paired", "pair"]


@dataclass
class Paired:
    """The pairing and what the clock offset's estimation starts from.

    ``offset0`` the coarse offset [s] (None unstamped), ``peak`` the angular-speed correlation at it,
    ``estimate_offset`` whether the solve estimates it, ``offset_edge`` whether it lies at the edge of its
    search (kept under ``force``), ``period_s`` the shorter stream's sample period (the offset curve's
    step), ``margin_s`` the pairing's margin for the offset to move.
    """

    pairing: object
    stamped: bool
    offset0: float | None = None
    peak: float | None = None
    estimate_offset: bool = False
    offset_edge: bool = False
    period_s: float | None = None
    margin_s: float | None = None

    def __len__(self) -> int:
        return len(self.pairing)


def _by_time(cv: Conventions, opts: Options) -> Paired:
    hand, eye, offset, max_offset_s = cv.hand, cv.eye, opts.offset, opts.max_offset_s
    eye_dir = cv.eye_pose or eye.direction or "cam_T_target"
    co = cv.decision.coarse
    if co is None:
        co = pr.coarse_offset(hand, cv.A, eye, cv.B, offset, max_offset_s,
                              inverse_domain=(cv.setup != "eye_to_hand") == (eye_dir == "cam_T_target"))
    out = Paired(None, True, co.offset_s, co.peak, co.estimated)
    cv.warnings.extend(co.warnings)
    cv.notes.extend(co.notes)
    if out.estimate_offset and co.at_edge:  # an offset at the edge of its search is never determined
        out.offset_edge = stamp_units.check_offset_edge(hand, eye, out.offset0, max_offset_s, coarse=True,
                                                        force=opts.force, warnings=cv.warnings)
    pr.check_overlap(hand, eye, max(abs(out.offset0), 1e-9) + 1e-9 if offset != "auto" else max_offset_s)
    ph = float(np.median(np.diff(hand.t)))
    pe = float(np.median(np.diff(eye.t)))
    out.period_s = min(ph, pe)
    out.margin_s = max(ph, pe) if out.estimate_offset else 0.0
    out.pairing = pr.TimePairing(hand, cv.A, eye, cv.B, out.offset0, out.margin_s)
    return out


def pair(cv: Conventions, opts: Options) -> Paired:
    """Pair ``cv``'s streams; raises :class:`~kinhec.util.errors.InputError` for too few pairs or an offset that
    needs stamps."""
    hand, eye = cv.hand, cv.eye
    sv.check_enough_pairs(min(len(hand), len(eye)), cv.where)
    if hand.t is not None and eye.t is not None:
        out = _by_time(cv, opts)
    else:
        if opts.offset not in (None, "none", "auto"):
            raise InputError(f"{hand.path} / {eye.path}: a clock offset needs time stamps in both files")
        pairing = pr.pair_by_order(hand, cv.A, eye, cv.B, cv.decision.alignment)
        out = Paired(pr.drop_repeated_pairs(pairing, cv.where), False)
    cv.notes.extend(out.pairing.notes)
    if out.estimate_offset:  # too few pairs because the offset's room left samples out: say so, and how to pair them
        why = out.pairing.left_for_offset(sv.MIN_PAIRS, cv.where)
        if why is not None:
            raise InputError(why)
    sv.check_enough_pairs(len(out), cv.where)
    return out
