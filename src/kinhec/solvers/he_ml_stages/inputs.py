"""Checks of ``he_ml``'s arguments: noise levels, options, configuration, pixels (clear errors naming them)."""

from __future__ import annotations

import math

from kinhec.util.errors import InputError
from kinhec.solvers import pair_model as pm
from kinhec.solvers.he_ml_stages.pixels import check_intrinsics
from kinhec.solvers.he_ml_stages.variance_components import NOISE_KEYS


def check_options(*, scale, drift, scale_drift) -> None:
    """``scale``, ``drift`` and ``scale_drift`` are each ``"auto"``, True or False."""
    for name, value in (("scale", scale), ("drift", drift), ("scale_drift", scale_drift)):
        if value not in ("auto", True, False):
            raise InputError(f"{name}: expected 'auto', True or False, got {value!r}")


def check_configuration(configuration) -> None:
    """``configuration`` is one of :data:`kinhec.solvers.pair_model.CONFIGURATIONS`."""
    if configuration not in pm.CONFIGURATIONS:
        raise InputError(f"configuration: expected one of {', '.join(pm.CONFIGURATIONS)} or None, got "
                         f"{configuration!r}")  # fmt: skip


def check_pixels(pixels, n: int, configuration, scale):
    """The configuration and scale setting of a fit with pixels; clear errors on a mismatch."""
    from kinhec.solvers.reprojection import PixelViews  # scipy.sparse: only when pixels are given

    if not isinstance(pixels, PixelViews):
        raise InputError(f"pixels: expected a kinhec.solvers.reprojection.PixelViews or None, got "
                         f"{type(pixels).__name__}")  # fmt: skip
    if pixels.intrinsics is None:
        raise InputError("pixels: expected known intrinsics (PixelViews.intrinsics), got None")
    check_intrinsics(pixels.intrinsics, "pixels.intrinsics")
    if len(pixels.points_3d) != n:
        raise InputError(f"pixels: expected one view per pose pair ({n}), got {len(pixels.points_3d)}")
    if configuration is not None and configuration != pixels.configuration:
        raise InputError(f"configuration: the pixels are {pixels.configuration!r}, got {configuration!r}")
    if pixels.configuration not in pm.CONFIGURATIONS:
        raise InputError(f"pixels.configuration: expected one of {', '.join(pm.CONFIGURATIONS)}, got "
                         f"{pixels.configuration!r}")  # fmt: skip
    if scale is True:
        raise InputError("scale: PnP poses from pixels with known intrinsics are metric; expected 'auto' or False "
                         "with pixels, got True")  # fmt: skip
    return pixels.configuration, False


def check_noise(noise) -> dict | None:
    """Known noise levels (standard deviations keyed by :data:`NOISE_KEYS`, missing ones 0) or None."""
    if noise is None:
        return None
    if not isinstance(noise, dict):
        raise InputError(f"noise: expected a dict with keys {', '.join(NOISE_KEYS)}, got {type(noise).__name__}")
    out = {}
    for k in NOISE_KEYS:
        v = noise.get(k, 0.0)
        try:
            v = float(v)
        except (TypeError, ValueError):
            raise InputError(f"noise[{k!r}]: expected a standard deviation >= 0, got {v!r}") from None
        if not (math.isfinite(v) and v >= 0):
            raise InputError(f"noise[{k!r}]: expected a finite standard deviation >= 0, got {v!r}")
        out[k] = v
    unknown = sorted(set(noise) - set(NOISE_KEYS))
    if unknown:
        raise InputError(f"noise: unknown keys {', '.join(unknown)}; expected {', '.join(NOISE_KEYS)}")
    if not any(out.values()):
        raise InputError("noise: expected at least one positive standard deviation, got all zeros")
    return out
