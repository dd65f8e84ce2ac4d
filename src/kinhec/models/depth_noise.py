"""Noise of 3D points measured by a depth camera: along the ray it grows with depth squared, across it with depth.

A structured-light, stereo or time-of-flight camera measures a point ``q``
(camera frame: the optical centre of the camera that produced the depth,
``z`` along its optical axis, ``x`` right, ``y`` down) by triangulation or
time of flight.  Its error is not isotropic:

* along the viewing ray ``u = q / |q|`` the depth error of triangulation
  grows with the square of the depth: ``sigma_par = a z^2`` (``a`` [1/m]);
* across the ray (the angular error of the pixel the point was found at,
  times its distance) it grows with the depth: ``sigma_perp = b z``
  (``b`` [rad], dimensionless).

The point's covariance is then

    Sigma = (a z^2)^2 u u^T + (b z)^2 (I - u u^T),

whose inverse and symmetric square roots follow from the projector ``u u^T``
alone: ``Sigma^-1 = u u^T / (a z^2)^2 + (I - u u^T) / (b z)^2`` and the whitening
``L = u u^T / (a z^2) + (I - u u^T) / (b z)`` (``L^T L = Sigma^-1``, ``L`` symmetric).
``z`` is the point's depth (its camera-frame ``z``), positive in front of the camera.
"""

from __future__ import annotations

import numpy as np

from kinhec.util.errors import InputError

__all__ = ["point_covariance", "point_whitening", "ray_parts", "sample_point_noise", "check_noise"]


def check_noise(noise, where: str = "point noise") -> tuple[float, float]:
    """``(a, b)`` as two positive finite floats (``where`` names them in the error)."""
    try:
        a, b = (float(v) for v in noise)
    except (TypeError, ValueError):
        raise InputError(f"{where}: expected two numbers A,B (sigma along the ray = A z^2 [1/m], across it = "
                         f"B z [rad]), got {noise!r}") from None
    if not (np.isfinite(a) and np.isfinite(b) and a > 0 and b > 0):
        raise InputError(f"{where}: expected A, B > 0 (sigma along the ray = A z^2, across it = B z), got {a!r}, {b!r}")
    return a, b


def ray_parts(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The unit ray directions ``u`` (..., 3) of camera-frame points ``q`` (..., 3) and their depths ``z`` (...)."""
    q = np.asarray(q, dtype=np.float64)
    return q / np.linalg.norm(q, axis=-1, keepdims=True), q[..., 2]


def point_covariance(q, noise) -> np.ndarray:
    """Covariances (..., 3, 3) [m^2] of points measured at ``q`` (..., 3) [m] with ``noise = (a, b)``."""
    a, b = check_noise(noise)
    u, z = ray_parts(q)
    uu = u[..., :, None] * u[..., None, :]
    s_par, s_perp = (a * z * z)[..., None, None], (b * z)[..., None, None]
    return s_par**2 * uu + s_perp**2 * (np.eye(3) - uu)


def point_whitening(q, noise) -> np.ndarray:
    """Symmetric whitening matrices ``L`` (..., 3, 3) [1/m] of points at ``q``: ``L^T L`` is the inverse covariance."""
    a, b = check_noise(noise)
    u, z = ray_parts(q)
    uu = u[..., :, None] * u[..., None, :]
    return uu / (a * z * z)[..., None, None] + (np.eye(3) - uu) / (b * z)[..., None, None]


def sample_point_noise(rng: np.random.Generator, q, noise) -> np.ndarray:
    """One draw (..., 3) [m] of the measurement error of points at ``q`` (..., 3): along the ray ``a z^2`` times a
    standard normal, across it ``b z`` times a standard normal in each of the two directions normal to the ray."""
    a, b = check_noise(noise)
    u, z = ray_parts(q)
    g = rng.standard_normal(u.shape)
    par = np.sum(g * u, axis=-1, keepdims=True) * u  # the draw's part along the ray ...
    return (a * z * z)[..., None] * par + (b * z)[..., None] * (g - par)  # ... and across it, each scaled
