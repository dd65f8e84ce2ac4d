"""Stage 1 of one camera: the reading the convention firewall settled on, applied.

The firewall (:func:`kinhec.calibrate.firewall.check`) scores every reading of the files and decides one
(directions, units, quaternion order, which file is the hand, row alignment, coarse clock offset); this
stage converts the streams in that reading to the solver's form (:mod:`~kinhec.calibrate.frames`) and
starts the result's notes and warnings with the streams' and the decision's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.calibrate.frames import eye_solver_form, hand_metric
from kinhec.calibrate.readers import PoseStream

__all__ = ["Conventions", "apply_reading"]


@dataclass
class Conventions:
    """The streams in the reading decided: ``A = T_base_ee``, ``B`` in the solver form of ``setup`` [m].

    ``eye_pose`` is the eye direction as read (None: the file's), ``file_domain`` whether residuals in the
    file's own domain are those of ``T_cam_target``; ``warnings`` and ``notes`` start the result's lists
    (the later stages append to them, in order).
    """

    hand: PoseStream
    eye: PoseStream
    A: np.ndarray
    B: np.ndarray
    decision: object
    setup: str
    eye_pose: str | None
    file_domain: bool
    warnings: list
    notes: list

    @property
    def where(self) -> str:
        return f"{self.hand.span()} and {self.eye.span()}"


def apply_reading(dec, setup: str) -> Conventions:
    """The firewall's decision ``dec`` (its streams, directions and units) in the solver form of ``setup``."""
    r = dec.reading
    u_hand, u_eye = (r.units[1], r.units[0]) if r.swap else r.units
    hand, eye = dec.hand, dec.eye
    A = hand_metric(hand, r.hand_pose, u_hand)
    warn, notes = [], list(hand.notes) + list(eye.notes)
    notes += dec.notes
    warn += dec.warnings
    B = eye_solver_form(eye, r.eye_pose, u_eye, setup)
    eye_dir = r.eye_pose or eye.direction or "cam_T_target"
    file_domain = (setup != "eye_to_hand") == (eye_dir == "cam_T_target")  # residuals in the file's own domain
    return Conventions(hand, eye, A, B, dec, setup, r.eye_pose, file_domain, warn, notes)
