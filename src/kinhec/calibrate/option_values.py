"""Parsing of calibrate's numeric options that take a pair of levels (``"A,B"`` or two numbers)."""

from __future__ import annotations

import numpy as np

from kinhec.errors import InputError

__all__ = ["nonnegative_pair"]


def nonnegative_pair(value, option: str, expected: str) -> tuple[float, float] | None:
    """``value`` (``"A,B"`` or a pair of numbers) as two finite numbers ``>= 0``; None when not given.

    Raises :class:`~kinhec.errors.InputError` naming ``option`` and what was ``expected`` otherwise.
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
