"""Stage 6 of one camera: the :class:`~kinhec.calibrate.result.CalibrationResult`.

The solution, its standard deviations and verdict, the per-pair residuals (rotation [deg], translation
[mm], outlier flags), the clock offset's cost curve when it was estimated, the names of ``X`` and ``Y``
(:func:`kinhec.calibrate.frames.names`), and the result's ``inputs``: the files in the reading the
firewall decided (directions, units, quaternion order, its report), and with a bag the frames that
name ``X`` and ``Y``.
"""

from __future__ import annotations

import numpy as np

from kinhec.calibrate import held_out as ho
from kinhec.calibrate import solve as sv
from kinhec.calibrate.bags import frame_names
from kinhec.calibrate.frames import names
from kinhec.calibrate.result import CalibrationResult
from kinhec.calibrate.stages.conventions import Conventions
from kinhec.calibrate.stages.pairing import Paired
from kinhec.calibrate.stages.solve import Solved
from kinhec.calibrate.stages.uncertainty import Spread
from kinhec.calibrate.stages.verdict import Verdict

__all__ = ["result", "offset_curve", "reading_inputs", "single_camera_inputs"]


def offset_curve(pairing, sol: sv.Solution, period: float, inverse_domain: bool) -> dict:
    """The fit's capped cost at 21 clock offsets, ``period`` apart, around the estimated one."""
    offs = sol.offset + period * np.linspace(-10, 10, 21)
    Sinv = np.linalg.inv(sol.noise_cov)
    cost = [sv.capped_cost(pairing, o, sol.X, sol.Y, sol.scale, Sinv, inverse_domain) for o in offs]
    return {"offset_s": offs.tolist(), "cost": cost}


def result(cv: Conventions, paired: Paired, solved: Solved, sp: Spread, verdict: Verdict) -> CalibrationResult:
    """The result of one camera (its ``inputs`` are filled by the caller)."""
    sol, pairing, n = solved.sol, solved.pairing, len(paired)
    r = sol.residuals
    residuals = {
        "t_s": np.asarray(pairing.t, dtype=float),
        "rot_deg": np.degrees(np.linalg.norm(r[:, :3], axis=1)),
        "trans_mm": 1000 * np.linalg.norm(r[:, 3:], axis=1),
        "outlier": ~sol.inliers,
    }
    curve = offset_curve(pairing, sol, paired.period_s, solved.inverse_domain) if paired.estimate_offset else None
    X_name, Y_name = names(cv.setup)
    A_and_B = verdict.pairs
    return CalibrationResult(
        setup=cv.setup, inputs={}, X=sol.X, Y=sol.Y, X_name=X_name, Y_name=Y_name, X_std=sp.X_std, Y_std=sp.Y_std,
        time_offset_s=sol.offset if paired.stamped else None, time_offset_std_s=sp.offset_std,
        time_offset_peak_corr=paired.peak, scale=sol.scale, scale_std=sp.scale_std, n_pairs=n,
        outliers=np.flatnonzero(~sol.inliers).tolist(), observability=verdict.observability, warnings=cv.warnings,
        notes=cv.notes, residuals=residuals, offset_curve=curve, init_solver=solved.init_solver, cov=sol.cov,
        pairs=A_and_B, where=cv.where, held_out=verdict.held_out,
        point_cam_m=ho.default_point(A_and_B[1], cv.setup, sol.scale),
    )  # fmt: skip


def reading_inputs(dec) -> dict:
    """The result's ``inputs`` that the firewall's decision ``dec`` gives: directions, units, its report."""
    r = dec.reading
    u = (r.units[1], r.units[0]) if r.swap else r.units
    out = {"hand_pose": r.hand_pose, "eye_pose": r.eye_pose, "units": u[0] if u[0] == u[1] else f"{u[0]},{u[1]}",
           "conventions": dec.report}
    if any(q is not None for q in r.quat):
        out["quat_order"] = ",".join(q or "-" for q in r.quat)
    return out


def single_camera_inputs(record: dict, dec, from_bag: bool) -> dict:
    """The result's ``inputs`` for one camera: the files as decided, the reading, a bag's frame names."""
    out = dict(record, hand=dec.hand.path, eye=[dec.eye.path], **reading_inputs(dec))
    if from_bag:
        r = dec.reading
        out["frames"] = frame_names(r.setup, dec.hand, dec.eye, r.hand_pose, r.eye_pose)
    return out
