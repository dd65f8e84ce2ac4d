"""Stage 4 of one camera: the standard deviations of ``X``, ``Y``, the clock offset and the scale.

They are read off the refinement's covariance (:func:`kinhec.calibrate.solve.refine`: ``X`` and ``Y``
first, then the offset when estimated, then the log scale); a scale held at 1 (``scale="fixed"``) has
none, and is set to exactly 1.  A component stated for a motion about one axis has 0; the components such a
motion leaves open, when set by convention (``partial``), have none (NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.calibrate import reduced_dof as rd
from kinhec.calibrate.options import Options
from kinhec.calibrate.stages.solve import Solved

__all__ = ["Spread", "spread"]


@dataclass(frozen=True)
class Spread:
    """Standard deviations: ``X_std``, ``Y_std`` (rotation [rad], translation [m]), ``offset_std`` [s] (None when
    not estimated), ``scale_std``."""

    X_std: np.ndarray
    Y_std: np.ndarray
    offset_std: float | None
    scale_std: float


def spread(solved: Solved, estimate_offset: bool, opts: Options) -> Spread:
    """The standard deviations of ``solved``'s unknowns (and its scale set to 1 when held there)."""
    sol = solved.sol
    std = np.sqrt(np.maximum(np.diag(sol.cov), 0.0))
    k = 12
    off_std = None
    if estimate_offset:
        off_std = float(std[k])
        k += 1
    scale_std = 0.0 if opts.fixed_scale else float(sol.scale * std[k])
    if opts.fixed_scale:
        sol.scale = 1.0
    od = getattr(solved, "open", None)  # a stage given only the solution and its covariance: none
    if od is not None and (od.convention or od.held_rotations):  # set by convention: no standard deviation
        for name in od.components:
            std[rd.COMPONENTS.index(name)] = np.nan
    return Spread(std[0:6], std[6:12], off_std, scale_std)
