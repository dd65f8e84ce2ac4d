"""Parsing of calibrate's option values: a pair of levels (``"A,B"`` or two numbers), an option given once or
per file (``"mm"`` or ``"mm,m"``), the intrinsics' standard deviations."""

from __future__ import annotations

import numpy as np

from kinhec.calibrate.frames import UNITS
from kinhec.calibrate.readers import QUAT_ORDERS
from kinhec.models.depth_noise import check_noise
from kinhec.util.errors import InputError, UnknownNameError

__all__ = ["nonnegative_pair", "option_pair", "units_pair", "quat_pair", "intrinsics_std", "point_noise_pair"]


def nonnegative_pair(value, option: str, expected: str) -> tuple[float, float] | None:
    """``value`` (``"A,B"`` or a pair of numbers) as two finite numbers ``>= 0``; None when not given.

    Raises :class:`~kinhec.util.errors.InputError` naming ``option`` and what was ``expected`` otherwise.
    """
    if value is None:
        return None
    try:
        vals = [float(v) for v in (value.split(",") if isinstance(value, str) else value)]
    except (TypeError, ValueError):
        vals = []
    if len(vals) != 2 or not all(np.isfinite(v) and v >= 0 for v in vals):
        raise InputError(f"{option}: expected two numbers >= 0 ({expected}), got {value!r}")
    return vals[0], vals[1]


def option_pair(value, valid, name: str, example: str) -> tuple[str | None, str | None]:
    """An option given once or per file (``"mm"`` or ``"mm,m"``) as ``(hand, eye)``, each checked against ``valid``."""
    if value is None:
        return None, None
    parts = [u.strip() for u in str(value).split(",")]
    for u in parts:
        if u not in valid:
            raise UnknownNameError(name, u, valid)
    if len(parts) in (1, 2):
        return parts[0], parts[-1]
    raise InputError(f"{name}: expected one of {', '.join(valid)} or HAND,EYE (e.g. {example}), got {value!r}")


def units_pair(units) -> tuple[str | None, str | None]:
    """``units`` (``"mm"`` or ``"mm,m"``) as ``(hand, eye)``."""
    return option_pair(units, UNITS, "unit", "mm,m")


def quat_pair(order) -> tuple[str | None, str | None]:
    """``quat_order`` (``"wxyz"`` or ``"wxyz,xyzw"``) as ``(hand, eye)``."""
    return option_pair(order, QUAT_ORDERS, "quaternion order", "wxyz,xyzw")


def intrinsics_std(value) -> tuple[float, float] | None:
    """``intrinsics_std`` as ``(focal_rel, principal_point_over_f)``, checked; None when not given."""
    return nonnegative_pair(value, "intrinsics_std", "focal length fraction, principal point over focal length, "
                                                     "e.g. 0.003,0.001")


def point_noise_pair(value) -> tuple[float, float] | None:
    """``point_noise`` (``"A,B"`` or two numbers) as the depth noise ``(a, b)`` of :mod:`kinhec.models.depth_noise`
    (both ``> 0``); None when not given."""
    if value is None:
        return None
    return check_noise(value.split(",") if isinstance(value, str) else value, "point_noise")
