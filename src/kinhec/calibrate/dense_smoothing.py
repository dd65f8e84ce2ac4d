"""The denser stream's sample noise, smoothed out before it is interpolated at the other stream's stamps.

Pairing by time interpolates the denser stream (a robot at 125-1000 Hz) at the sparser one's stamps (a camera at
10-60 Hz).  Each interpolated pose then carries the noise of one or two samples, and as the clock offset moves, every
pair slides onto other samples with other noise: on a noisy 500 Hz robot stream the fit's cost in the offset is rough
at the scale of one sample period, and the offset lands where the noise happens to be kind, several of its standard
deviations from the truth (54 asynchronous mixed-track recordings at 250-500 Hz with 0.5-5 mrad per sample: offset
errors over their standard deviations with a root mean square of 1.28, up to 5.5; ``benchmarks/dense_smoothing.py``).

Between two of the sparser stream's stamps lie ``m`` samples of the denser one; a local quadratic (Savitzky-Golay,
:func:`savgol_quadratic`) over ``w <= m`` of them averages their noise without joining the noise of two pairs, so
the pairs stay independent.  The window is the largest odd ``w`` from 5 to ``m`` (a quadratic through 3 samples is
the samples) whose residuals, raw minus smoothed, are what the sample noise alone leaves: ``sigma^2 (1 - h0(w))``
per component, ``h0`` the filter's weight on the centre sample, within :data:`FIT_TOLERANCE`.  A motion the
quadratic cannot follow over ``w`` samples adds to the residuals and stops the window there.  ``sigma^2`` comes from
the second differences of the samples, whose white noise part has lag-one autocovariance ``-4 sigma^2`` against a
variance of ``6 sigma^2`` while a smooth motion's part has both equal: ``sigma^2 = (var - cov_1) / 10``.  A stream
whose second differences are mostly motion (sampled slowly for its motion, or at stations) is left as it is, as is
one whose samples lie too far apart for a window of 5.

Rotations are smoothed as unit quaternions (signs made continuous, renormalised: the window spans a few degrees at
most); translations component by component.  The stream is smoothed between its gaps (intervals longer than the
pairing's gap factor times its median period), each part on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kinhec.geometry import se3

__all__ = ["FIT_TOLERANCE", "MIN_NOISE_SHARE", "Smoothing", "centre_weight", "savgol_quadratic", "sample_noise",
           "choose_window", "smooth"]

#: Residuals (raw minus smoothed) may exceed what the sample noise alone leaves by this factor.
FIT_TOLERANCE = 1.1
#: Share of the second differences' variance the sample noise must make up for the stream to count as noisy.
MIN_NOISE_SHARE = 0.5
#: Fewest samples (per part between gaps) a window is chosen on.
MIN_SAMPLES = 30
#: Most samples a window is chosen on (the middle ones of a longer part: the noise's statistics are the same, and
#: the choice then costs a few milliseconds whatever the recording's length).
CHOICE_SAMPLES = 4000


@dataclass(frozen=True)
class Smoothing:
    """The window chosen (``window`` samples, 0: none), the per-sample noise standard deviations (rotation [rad] and
    translation [m] per component) and the stream's period [s]."""

    window: int
    noise_std: tuple[float, float]
    period: float

    def note(self, path) -> str:
        return (f"{path}: samples smoothed over {self.window} ({1000 * self.window * self.period:.3g} ms, a local "
                f"quadratic) before their interpolation at the other stream's stamps: their noise, "
                f"{1000 * self.noise_std[0]:.3g} mrad and {1000 * self.noise_std[1]:.3g} mm per sample, would otherwise "
                "pass to the pairs one or two samples at a time and make the clock offset's fit rough at the scale of "
                "one sample period")


def centre_weight(w: int) -> float:
    """Weight of the centre sample in a quadratic Savitzky-Golay filter of ``w`` (odd) samples."""
    return 3.0 * (3.0 * w * w - 7.0) / (4.0 * w * (w * w - 4.0))


def _increments(R: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample rotation increments (rotation vectors in the earlier sample's frame) and translation increments."""
    return se3.so3_log(np.swapaxes(R[:-1], 1, 2) @ R[1:], check=False), np.diff(p, axis=0)


def sample_noise(inc: np.ndarray) -> tuple[float, float]:
    """``(sigma^2, share)`` of one stream's increments ``inc`` (n, 3): the per-sample noise variance of one component
    from the second differences' variance and lag-one autocovariance, and its share of their variance."""
    d2 = np.diff(inc, axis=0)
    d2 = d2 - d2.mean(axis=0)
    if d2.shape[0] < 3:
        return 0.0, 0.0
    var = float(np.mean(d2 * d2))
    cov1 = float(np.mean(d2[1:] * d2[:-1]))
    s2 = max((var - cov1) / 10.0, 0.0)
    return s2, (6.0 * s2 / var if var > 0.0 else 0.0)


def savgol_quadratic(x: np.ndarray, w: int) -> np.ndarray:
    """``x`` (n, k) smoothed along its first axis by a quadratic Savitzky-Golay filter of ``w`` (odd, ``<= n``) samples.

    Inside, the centred weights ``3 (3 m^2 + 3 m - 1 - 5 j^2) / ((2 m + 3)(2 m + 1)(2 m - 1))`` (``w = 2 m + 1``,
    ``j = -m..m``); in the first and last ``m`` samples the quadratic fitted to the first (last) ``w`` evaluated there
    (as :func:`scipy.signal.savgol_filter` with ``mode="interp"``, whose module costs a second to import).
    """
    n, m = x.shape[0], w // 2
    j = np.arange(-m, m + 1, dtype=np.float64)
    c = 3.0 * (3.0 * m * m + 3.0 * m - 1.0 - 5.0 * j * j) / ((2 * m + 3) * (2 * m + 1) * (2 * m - 1))
    out = np.empty_like(x)
    out[m : n - m] = np.lib.stride_tricks.sliding_window_view(x, w, axis=0) @ c
    V = np.vander(np.arange(w, dtype=np.float64), 3)
    hat = V @ np.linalg.pinv(V)  # the quadratic fitted to w samples, at each of them
    out[:m] = hat[:m] @ x[:w]
    out[n - m :] = hat[w - m :] @ x[n - w :]
    return out


def _smoothed(R: np.ndarray, p: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray]:
    q = se3.quaternion_from_matrix(R, check=False)
    flip = np.cumprod(np.r_[1.0, np.sign(np.sum(q[1:] * q[:-1], axis=1) + 1e-300)])  # one hemisphere throughout
    qs = savgol_quadratic(q * flip[:, None], w)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    return se3.matrix_from_quaternion(qs), savgol_quadratic(p, w)


def _residual_ms(R, p, Rs, ps) -> tuple[float, float]:
    dr = se3.so3_log(np.swapaxes(Rs, 1, 2) @ R, check=False)
    return float(np.mean(dr * dr)), float(np.mean((p - ps) ** 2))


def choose_window(T: np.ndarray, max_window: int) -> tuple[int, tuple[float, float]]:
    """The window (odd, 5 to ``max_window``; 0 for none) for the poses ``T`` (n, 4, 4) of one part between gaps, and
    the per-sample noise variances ``(rotation, translation)`` of one component (from its middle
    :data:`CHOICE_SAMPLES` samples at most)."""
    if T.shape[0] > CHOICE_SAMPLES:
        start = (T.shape[0] - CHOICE_SAMPLES) // 2
        T = T[start : start + CHOICE_SAMPLES]
    R, p = T[:, :3, :3], T[:, :3, 3]
    if max_window < 5 or T.shape[0] < max(MIN_SAMPLES, max_window + 2):
        return 0, (0.0, 0.0)
    noise = [sample_noise(inc) for inc in _increments(R, p)]
    s2 = (noise[0][0], noise[1][0])
    if not all(share >= MIN_NOISE_SHARE and v > 0.0 for v, share in noise):
        return 0, s2
    best = 0
    for w in range(5, max_window + 1, 2):
        ms = _residual_ms(R, p, *_smoothed(R, p, w))
        expect = 1.0 - centre_weight(w)
        if ms[0] > FIT_TOLERANCE * s2[0] * expect or ms[1] > FIT_TOLERANCE * s2[1] * expect:
            break
        best = w
    return best, s2


def smooth(t: np.ndarray, T: np.ndarray, other_period: float, gap_factor: float) -> tuple[np.ndarray, Smoothing]:
    """``T`` (n, 4, 4) at stamps ``t`` smoothed for interpolation at stamps ``other_period`` [s] apart, and what was
    done (:class:`Smoothing`; ``window`` 0 and ``T`` itself when nothing was)."""
    n = t.size
    period = float(np.median(np.diff(t))) if n > 1 else 0.0
    if n < MIN_SAMPLES or not period > 0.0:
        return T, Smoothing(0, (0.0, 0.0), period)
    m = int(np.floor(other_period / period + 1e-9))
    max_window = m if m % 2 else m - 1
    cut = np.flatnonzero(np.diff(t) > gap_factor * period) + 1
    parts = np.split(np.arange(n), cut)
    longest = max(parts, key=len)
    w, s2 = choose_window(T[longest], max_window)
    std = (float(np.sqrt(s2[0])), float(np.sqrt(s2[1])))
    if w < 5:
        return T, Smoothing(0, std, period)
    out = T.copy()
    for idx in parts:
        if idx.size >= w:
            R, p = _smoothed(T[idx, :3, :3], T[idx, :3, 3], w)
            out[idx, :3, :3], out[idx, :3, 3] = R, p
    return out, Smoothing(w, std, period)
