"""One camera's calibration in the reading the firewall decided: the stages of one camera in turn.

1. :mod:`~kinhec.calibrate.stages.conventions` (the streams in the solver's form),
2. :mod:`~kinhec.calibrate.stages.pairing` (the pose pairs, the coarse clock offset),
3. :mod:`~kinhec.calibrate.stages.solve` (``X``, ``Y``, offset and scale),
4. :mod:`~kinhec.calibrate.stages.uncertainty` (their standard deviations),
5. :mod:`~kinhec.calibrate.stages.verdict` (observability, warnings),
6. :mod:`~kinhec.calibrate.stages.outputs` (the result).
"""

from __future__ import annotations

from kinhec.calibrate.options import Options
from kinhec.calibrate.result import CalibrationResult
from kinhec.calibrate.stages.conventions import apply_reading
from kinhec.calibrate.stages.outputs import result
from kinhec.calibrate.stages.pairing import pair
from kinhec.calibrate.stages.solve import solve
from kinhec.calibrate.stages.uncertainty import spread
from kinhec.calibrate.stages.verdict import judge

__all__ = ["solve_camera"]


def solve_camera(dec, setup: str, opts: Options, eye_bias_prior=None) -> CalibrationResult:
    """Calibrate the camera of the firewall's decision ``dec`` as ``setup`` (``eye_bias_prior``: the prior of the
    eye poses' systematic error, :mod:`kinhec.calibrate.eye_bias`; None counts none)."""
    cv = apply_reading(dec, setup)
    paired = pair(cv, opts)
    solved = solve(cv, paired, opts, eye_bias_prior)
    sp = spread(solved, paired.estimate_offset, opts)
    verdict = judge(cv, paired, solved, sp, opts, eye_bias_prior)
    return result(cv, paired, solved, sp, verdict)
