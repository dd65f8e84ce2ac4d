"""Pairing of the hand and eye streams: by order, or by time with SLERP and a clock offset.

Clock convention (the dataset's): an eye frame stamped ``t`` was captured at
hand-clock time ``t - offset`` (eye stamp = hand time + offset).

By time, the pairs sit at the samples of the *sparser* stream and the denser
stream is interpolated there (SLERP on rotations, linear on translations,
see :func:`kinhec.se3.interpolate_poses`).  A sample whose interpolation
interval is longer than ``GAP_FACTOR`` times the denser stream's median period
(a gap) is left out, as is one outside the other stream.  The set of pairs is
fixed once for the offsets the refinement may visit (:class:`TimePairing`), so
that the clock offset can be refined jointly with ``X`` and ``Y``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kinhec import se3
from kinhec.calibrate.readers import PoseStream
from kinhec.errors import InputError

__all__ = ["GAP_FACTOR", "TimePairing", "OrderPairing", "check_overlap"]

#: An interpolation interval longer than this many median periods of the denser stream is a gap.
GAP_FACTOR = 3.0


class _Interpolator:
    """Fast repeated SLERP of one stream (relative rotations precomputed once)."""

    def __init__(self, t: np.ndarray, T: np.ndarray) -> None:
        self.t = t
        self.R = T[:, :3, :3]
        self.p = T[:, :3, 3]
        self.rel = se3.so3_log(np.swapaxes(self.R[:-1], 1, 2) @ self.R[1:], check=False)
        self.period = float(np.median(np.diff(t)))

    def valid(self, tq: np.ndarray) -> np.ndarray:
        """Query times inside the stream and not inside a gap."""
        inside = (tq >= self.t[0]) & (tq <= self.t[-1])
        i = np.clip(np.searchsorted(self.t, tq, side="right") - 1, 0, self.t.size - 2)
        short = (self.t[i + 1] - self.t[i]) <= GAP_FACTOR * self.period
        return inside & short

    def __call__(self, tq: np.ndarray) -> np.ndarray:
        tc = np.clip(tq, self.t[0], self.t[-1])
        i = np.clip(np.searchsorted(self.t, tc, side="right") - 1, 0, self.t.size - 2)
        s = (tc - self.t[i]) / (self.t[i + 1] - self.t[i])
        R = self.R[i] @ se3.so3_exp(self.rel[i] * s[:, None])
        p = self.p[i] + s[:, None] * (self.p[i + 1] - self.p[i])
        return se3.transform_from_rotation_translation(R, p)


def check_overlap(hand: PoseStream, eye: PoseStream, max_offset_s: float) -> None:
    """Raise when the two stamped streams cannot overlap for any offset within ``max_offset_s``."""
    lo = max(hand.t[0], eye.t[0] - max_offset_s)
    hi = min(hand.t[-1], eye.t[-1] + max_offset_s)
    if hi <= lo:
        raise InputError(
            f"{hand.span()} and {eye.span()}: expected streams that overlap in time (within "
            f"{max_offset_s:g} s of offset), got hand [{hand.t[0]:.6f}, {hand.t[-1]:.6f}] s and "
            f"eye [{eye.t[0]:.6f}, {eye.t[-1]:.6f}] s"
        )


@dataclass
class OrderPairing:
    """Pairs by order (no stamps): pose k of the hand with pose k of the eye."""

    A: np.ndarray
    B: np.ndarray
    hand_lines: np.ndarray
    eye_lines: np.ndarray
    notes: list = field(default_factory=list)
    has_time: bool = False

    @property
    def t(self) -> np.ndarray:
        return np.arange(self.A.shape[0], dtype=float)

    def at(self, offset: float | None = None):
        return self.A, self.B

    def __len__(self) -> int:
        return int(self.A.shape[0])


def pair_by_order(hand: PoseStream, A: np.ndarray, eye: PoseStream, B: np.ndarray) -> OrderPairing:
    """Pair pose k with pose k; the two files must hold the same number of poses."""
    if A.shape[0] != B.shape[0]:
        raise InputError(
            f"{hand.path} and {eye.path}: expected the same number of poses to pair by order (no time "
            f"stamps), got {A.shape[0]} (last at line {int(hand.lines[-1])}) and {B.shape[0]} "
            f"(last at line {int(eye.lines[-1])})"
        )
    return OrderPairing(A, B, hand.lines, eye.lines)


class TimePairing:
    """Pairs by time stamp, re-interpolated for every clock offset.

    Parameters
    ----------
    hand, eye : PoseStream
        The stamped streams (for the messages and line numbers).
    A : ndarray, shape (Nh, 4, 4)
        Hand poses ``T_base_ee`` [m] at ``hand.t``.
    B : ndarray, shape (Ne, 4, 4)
        Eye poses in solver form at ``eye.t``.
    offset0 : float
        Offset around which the pairs are chosen [s].
    margin_s : float
        Offsets within ``offset0 +- margin_s`` keep every pair valid.
    """

    has_time = True

    def __init__(self, hand: PoseStream, A, eye: PoseStream, B, offset0: float, margin_s: float) -> None:
        self.hand, self.eye = hand, eye
        nh, ne = hand.t.size, eye.t.size
        if nh < 2 or ne < 2:
            short = hand if nh < 2 else eye
            raise InputError(f"{short.span()}: expected at least 2 stamped poses to pair by time, got {len(short)}")
        span_h = hand.t[-1] - hand.t[0]
        span_e = eye.t[-1] - eye.t[0]
        # the denser stream is interpolated at the samples of the sparser one
        self.interp_hand = nh / max(span_h, 1e-12) >= ne / max(span_e, 1e-12)
        if self.interp_hand:
            self._dense = _Interpolator(hand.t, A)
            t_sparse, self._fixed, sparse = eye.t, B, eye
            shift = -1.0  # hand time = eye stamp - offset
        else:
            self._dense = _Interpolator(eye.t, B)
            t_sparse, self._fixed, sparse = hand.t, A, hand
            shift = +1.0  # eye stamp = hand time + offset
        self._shift = shift
        ok = np.ones(t_sparse.shape, dtype=bool)
        for d in (-margin_s, 0.0, margin_s):
            ok &= self._dense.valid(t_sparse + shift * (offset0 + d))
        inside = (t_sparse + shift * offset0 >= self._dense.t[0]) & (t_sparse + shift * offset0 <= self._dense.t[-1])
        self.notes = []
        n_gap = int((inside & ~ok).sum())
        if n_gap:
            self.notes.append(f"{n_gap} sample(s) of {sparse.path} fall in gaps of the other stream or near its ends; "
                              "left out")
        self.index = np.flatnonzero(ok)
        self._t_sparse = t_sparse[ok]
        self._fixed = self._fixed[ok]
        self.sparse = sparse
        if self.index.size == 0:
            raise InputError(
                f"{hand.span()} and {eye.span()}: expected stamps that overlap at clock offset {offset0:.4g} s, "
                f"got hand [{hand.t[0]:.6f}, {hand.t[-1]:.6f}] s and eye [{eye.t[0]:.6f}, {eye.t[-1]:.6f}] s"
            )

    def __len__(self) -> int:
        return int(self.index.size)

    @property
    def t(self) -> np.ndarray:
        """Pair times [s] on the clock of the sparser stream (eye stamps when the hand is interpolated)."""
        return self._t_sparse

    @property
    def hand_lines(self) -> np.ndarray:
        return self.hand.lines[self.index] if not self.interp_hand else np.zeros(len(self), dtype=np.int64)

    @property
    def eye_lines(self) -> np.ndarray:
        return self.eye.lines[self.index] if self.interp_hand else np.zeros(len(self), dtype=np.int64)

    def at(self, offset: float):
        """Paired ``(A, B)`` of shape ``(N, 4, 4)`` at clock offset ``offset`` [s]."""
        dense = self._dense(self._t_sparse + self._shift * offset)
        return (dense, self._fixed) if self.interp_hand else (self._fixed, dense)
