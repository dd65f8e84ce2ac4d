"""The scale of the eye translations: estimated by default, reported with its standard deviation, explained.

A camera's translations are metric only as far as what they were computed
with: PnP scales every translation by the board's stated size (a board
printed 0.5 % large gives translations 0.5 % short) and stretches every depth
with the focal length.  Both are common in practice -- printers scale,
autofocus moves, a square is measured with a ruler -- and both move ``X``
along the optical axis by the same fraction of the camera's distance to the
target, far beyond the noise of a good recording.

The robot's own translations are metric, so wherever they move the camera
enough the scale ``s`` of the eye translations (eye = ``s`` x metric) is
observable, and kinhec estimates it by default:

* a metric stream gets the prior ``log s ~ N(0, PRIOR_STD^2)``
  (:data:`PRIOR_STD`, 0.5 %, the spread of board sizes and focal lengths
  met in practice); where the data determine ``s`` better than the prior,
  the data decide (:func:`describe` calls it *determined*); where they do
  not, the prior's uncertainty is carried into the covariance of ``X`` and
  ``Y`` and the notes say so;
* a monocular stream (``--scale``) has no prior: any positive scale.

A metric scale that differs from 1 by more than three standard deviations
(and by more than :data:`MIN_REPORTED`) is a warning: the board's true size
or the focal length is not what the poses were computed with.
"""

from __future__ import annotations

import math

__all__ = ["PRIOR_STD", "MIN_REPORTED", "describe", "describe_fixed"]

#: Prior standard deviation of the log-scale of a metric eye stream (0.5 %).
PRIOR_STD = 0.005
#: Smallest departure from 1 worth a warning (0.1 %), whatever its significance.
MIN_REPORTED = 0.001


def describe(scale: float, scale_std: float, data_std: float | None, *, prior_std: float | None,
             where: str = "") -> tuple[dict, list[str], list[str]]:  # fmt: skip
    """Report, warnings and notes of an estimated scale.

    Parameters
    ----------
    scale, scale_std : float
        Estimate and its standard deviation (prior included).
    data_std : float or None
        Standard deviation of ``log s`` from the data alone (``inf``: not determined by them).
    prior_std : float or None
        The prior's standard deviation of ``log s``; None for a monocular stream.
    where : str
        The eye file, for messages.

    Returns
    -------
    (dict, list of str, list of str)
        ``{"mode", "prior_std", "data_std", "determined"}``, warnings, notes.
    """
    metric = prior_std is not None
    determined = data_std is not None and math.isfinite(data_std) and (not metric or data_std < prior_std)
    report = {"mode": "metric" if metric else "monocular", "prior_std": prior_std,
              "data_std": data_std if data_std is not None and math.isfinite(data_std) else None,
              "determined": bool(determined)}  # fmt: skip
    warn, notes = [], []
    if not metric:
        return report, warn, notes
    prefix = f"{where}: " if where else ""
    dev = scale - 1.0
    if determined:
        notes.append(f"scale of the eye translations estimated from the robot's: {scale:.5f} +- {scale_std:.5f}")
        if abs(dev) > 3 * scale_std and abs(dev) > MIN_REPORTED:
            longer = "longer" if dev > 0 else "shorter"
            board = "smaller" if dev > 0 else "larger"
            warn.append(f"{prefix}the eye translations are {100 * abs(dev):.2g} % {longer} than the robot's (scale "
                        f"{scale:.4f} +- {scale_std:.4f}): the board is likely {100 * abs(dev):.2g} % {board} than "
                        f"stated (measure a printed square) or the focal length {100 * abs(dev):.2g} % too "
                        f"{'long' if dev > 0 else 'short'}; X and Y are given for the estimated scale")  # fmt: skip
    else:
        ds = "not at all" if data_std is None or not math.isfinite(data_std) else f"only to {100 * data_std:.2g} %"
        notes.append(f"the robot's translations determine the scale of the eye translations {ds}: its assumed "
                     f"uncertainty of {100 * prior_std:.2g} % (board size, focal length) is counted in the standard "
                     f"deviations (scale {scale:.5f} +- {scale_std:.5f})")  # fmt: skip
    return report, warn, notes


def describe_fixed() -> tuple[dict, list[str], list[str]]:
    """Report, warnings and notes of a scale held at 1 (``scale="fixed"``), as :func:`describe` gives them."""
    report = {"mode": "fixed", "prior_std": None, "data_std": None, "determined": False}
    return report, [], ["scale of the eye translations held at 1 (scale fixed): no board-size or focal-length error "
                        "is counted in the standard deviations"]
