"""Pairing of the hand and eye streams: by order, or by time with SLERP and a clock offset.

Clock convention (the dataset's): an eye frame stamped ``t`` was captured at
hand-clock time ``t - offset`` (eye stamp = hand time + offset).

By time, the pairs sit at the samples of the *sparser* stream and the denser
stream is interpolated there (SLERP on rotations, linear on translations,
see :func:`kinhec.geometry.se3.interpolate_poses`).  A sample whose interpolation
interval is longer than ``GAP_FACTOR`` times the denser stream's median period
(a gap) is left out, as is one outside the other stream.  The set of pairs is
fixed once for the offsets the refinement may visit (:class:`TimePairing`), so
that the clock offset can be refined jointly with ``X`` and ``Y``; the offset
it starts from comes from :func:`coarse_offset`.

By order, pose ``k`` of one file goes with pose ``k`` of the other, or with the
rows an :class:`Alignment` names (a shift, or rows of one file that have no
partner, as when a failed detection drops an image: see
:mod:`kinhec.calibrate.readings`).
"""

from __future__ import annotations

import warnings as _warnings
from dataclasses import dataclass, field

import numpy as np

from kinhec.geometry import se3
from kinhec.calibrate import dense_smoothing
from kinhec.calibrate.readers import PoseStream
from kinhec.calibrate.solve import motions_between, robust_y, score
from kinhec.util.errors import InputError, KinhecError
from kinhec.solvers.axxb_park_martin import park_martin_kernel
from kinhec.solvers.time_offset import estimate_time_offset

__all__ = ["GAP_FACTOR", "MIN_PEAK_CORR", "Interpolator", "scan_offset", "TimePairing", "OrderPairing", "Alignment", "CoarseOffset", "check_overlap",
           "pair_by_order", "drop_repeated_pairs", "coarse_offset"]

#: An interpolation interval longer than this many median periods of the denser stream is a gap.
GAP_FACTOR = 3.0
#: Least step [s] of the offset's central difference (:meth:`TimePairing.offset_step`).
MIN_OFFSET_STEP_S = 1e-4
#: Largest share of the motion's mean squared speed the sample noise may add to the offset's slope
#: (:meth:`TimePairing.offset_step`).
OFFSET_SLOPE_NOISE = 0.01
#: Below this angular-speed correlation the coarse offset comes from a scan of the pose fit.
MIN_PEAK_CORR = 0.5


class Interpolator:
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


@dataclass(frozen=True)
class Alignment:
    """Which rows of two unstamped files go together.

    Attributes
    ----------
    hand_index, eye_index : ndarray of int, shape (M,)
        Row ``hand_index[k]`` of the hand file pairs with row ``eye_index[k]`` of the eye file.
    shift : int
        Eye row minus hand row after the change (or everywhere for a plain shift).
    cut : int or None
        Pair index from which the rows are shifted (rows of one file left without a
        partner there); None for a shift of the whole file (or none at all).
    lengths : tuple of int or None
        ``(rows of the hand file, rows of the eye file)`` of an alignment chosen by the
        fit (:mod:`kinhec.calibrate.row_alignment`): any rows of either file may be
        without a partner, and ``shift`` is the eye file's length less the hand's.
    note : str or None
        How the alignment was chosen (the margin of the fit), for the run's notes.
    """

    hand_index: np.ndarray
    eye_index: np.ndarray
    shift: int = 0
    cut: int | None = None
    lengths: tuple | None = None
    note: str | None = None

    @property
    def is_identity(self) -> bool:
        if self.lengths is not None:
            n = self.lengths[0]
            return (self.lengths[1] == n == self.hand_index.size and np.array_equal(self.hand_index, np.arange(n))
                    and np.array_equal(self.eye_index, np.arange(n)))
        return self.shift == 0

    def pairs(self) -> list[tuple[int, int]]:
        """The paired rows as ``(hand row, eye row)``, in order."""
        return list(zip(self.hand_index.tolist(), self.eye_index.tolist()))

    def unpaired(self) -> tuple[np.ndarray, np.ndarray]:
        """Rows (0-based) of the hand file and of the eye file without a partner (``lengths`` known)."""
        nh, ne = self.lengths
        return np.setdiff1d(np.arange(nh), self.hand_index), np.setdiff1d(np.arange(ne), self.eye_index)

    def swapped(self) -> Alignment:
        """The same alignment with the files exchanged."""
        return Alignment(self.eye_index, self.hand_index, -self.shift, self.cut,
                         None if self.lengths is None else self.lengths[::-1], self.note)

    def describe(self, hand: PoseStream, eye: PoseStream) -> str:
        """One phrase: which rows pair, with their line numbers."""
        if self.lengths is not None:
            return describe_unpaired(self, hand, eye)
        if self.shift == 0:
            return "row k of the hand file with row k of the eye file"
        longer, idx_l = (hand, self.hand_index) if self.shift < 0 else (eye, self.eye_index)
        d = abs(self.shift)
        if self.cut is None:
            return (f"rows shifted by {d}: hand row k with eye row k{self.shift:+d} ({longer.path}: lines of "
                    f"{d} pose(s) at one end without a partner)")
        k = int(idx_l[self.cut]) if self.cut < len(idx_l) else len(longer)
        lost = longer.lines[k - d:k] if self.cut > 0 else longer.lines[:d]
        return (f"{longer.path}, line(s) {', '.join(str(int(v)) for v in lost)}: pose(s) without a partner in the "
                f"other file (a dropped image or a missed detection); the rows before pair one to one, those after "
                f"shifted by {d}")


def _where(rows: np.ndarray, paired: np.ndarray) -> str:
    """Where rows without a partner lie among the paired ones: at the start, at the end or in the middle."""
    if paired.size == 0:
        return "with no row paired"
    places = {"at the start" if r < paired.min() else "at the end" if r > paired.max() else "in the middle"
              for r in rows.tolist()}
    return " and ".join(p for p in ("at the start", "in the middle", "at the end") if p in places)


def describe_unpaired(al: Alignment, hand: PoseStream, eye: PoseStream) -> str:
    """Which rows of which file have no partner, with their lines and places, and how the rest pair."""
    uh, ue = al.unpaired()
    if uh.size == 0 and ue.size == 0:
        return "row k of the hand file with row k of the eye file"
    parts = []
    for s, rows, paired in ((hand, uh, al.hand_index), (eye, ue, al.eye_index)):
        if rows.size:
            lines = ", ".join(f"{int(s.lines[r])} (pose {int(r) + 1} of {len(s)})" for r in rows)
            parts.append(f"{s.path}, line{'s' if rows.size > 1 else ''} {lines} without a partner "
                         f"({_where(rows, paired)})")
    return "; ".join(parts) + ": the other rows pair in order"


def pair_by_order(hand: PoseStream, A: np.ndarray, eye: PoseStream, B: np.ndarray,
                  alignment: Alignment | None = None) -> OrderPairing:
    """Pair pose k with pose k (or the rows of ``alignment``); without one the files must hold as many poses."""
    if alignment is not None:
        h, e = alignment.hand_index, alignment.eye_index
        return OrderPairing(A[h], B[e], hand.lines[h], eye.lines[e], [alignment.note] if alignment.note else [])
    if A.shape[0] != B.shape[0]:
        raise InputError(
            f"{hand.path} and {eye.path}: expected the same number of poses to pair by order (no time "
            f"stamps), got {A.shape[0]} (last at line {int(hand.lines[-1])}) and {B.shape[0]} "
            f"(last at line {int(eye.lines[-1])})"
        )
    return OrderPairing(A, B, hand.lines, eye.lines)


def drop_repeated_pairs(pairing: OrderPairing, where: str) -> OrderPairing:
    """The pairs without those that repeat an earlier pair exactly (both poses, bit for bit), with a note.

    A pair written again and again (a rig standing still, a detection reused) is one measurement, not many: counted
    each time, its noise is fitted as if averaged away -- the fit bends to it and the noise covariance estimated
    from the residuals shrinks, so the error bars come out too small.  Two real measurements are never equal to
    the last bit.
    """
    n = len(pairing)
    rows = np.concatenate([pairing.A.reshape(n, -1), pairing.B.reshape(n, -1)], axis=1)
    _, first = np.unique(rows, axis=0, return_index=True)
    keep = np.zeros(n, dtype=bool)
    keep[first] = True
    if keep.all():
        return pairing
    gone = np.flatnonzero(~keep)
    lines = ", ".join(str(int(v)) for v in pairing.eye_lines[gone[:5]]) + (", ..." if gone.size > 5 else "")
    note = (f"{where}: {gone.size} of {n} pairs repeat an earlier pair exactly (eye lines {lines}): the same "
            "measurement written again, counted once")
    return OrderPairing(pairing.A[keep], pairing.B[keep], pairing.hand_lines[keep], pairing.eye_lines[keep],
                        [*pairing.notes, note])


@dataclass
class CoarseOffset:
    """Clock offset the pairing starts from: ``offset_s`` (eye stamp = hand time + offset), how it was found."""

    offset_s: float
    peak: float | None = None  # angular-speed correlation at the estimate (``offset="auto"``)
    estimated: bool = False  # the refinement estimates the offset further
    at_edge: bool = False  # the estimate peaked at the edge of the searched range (kinhec.calibrate.stamp_units)
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)


def coarse_offset(hand: PoseStream, A, eye: PoseStream, B, offset, max_offset_s: float, *,
                  inverse_domain: bool = True) -> CoarseOffset:
    """The offset to pair stamped streams at: zero (``"none"``), given (a number) or estimated (``"auto"``).

    ``"auto"``: the angular-speed cross-correlation of
    :func:`kinhec.solvers.estimate_time_offset` (which does not depend on the
    direction of either stream); when the speeds correlate weakly (below
    :data:`MIN_PEAK_CORR`), a scan of the pose fit over ``+-max_offset_s``
    (:func:`scan_offset`), which does.
    """
    if offset in (None, "none"):
        return CoarseOffset(0.0)
    if offset != "auto":
        return CoarseOffset(float(offset))
    check_overlap(hand, eye, max_offset_s)
    out = CoarseOffset(0.0, estimated=True)
    try:
        with _warnings.catch_warnings():
            _warnings.simplefilter("ignore")
            est = estimate_time_offset(hand.t, A, eye.t, B, max_offset_s=max_offset_s)
        out.offset_s, out.peak = est.offset_s, est.peak_corr
        # an edge only where the lags resolve one, at least 5 as for the scan below (stamps a large part of the
        # range apart leave -h, 0, +h or fewer: such a peak locates nothing, and the refinement decides); replaced
        # by the scan's when the speeds correlate weakly
        out.at_edge = bool(est.at_boundary) and np.size(est.lags_s) >= 5
        if est.at_boundary:
            out.warnings.append(f"the clock offset lies at the edge of the searched +-{max_offset_s:g} s")
    except InputError:
        out.offset_s, out.peak = 0.0, 0.0
    if out.peak is not None and out.peak < MIN_PEAK_CORR:
        pe = float(np.median(np.diff(eye.t)))
        grid = np.arange(-max_offset_s, max_offset_s + 1e-12, max(pe / 2, 1e-3))
        cost = scan_offset(hand.t, A, eye.t, B, grid, inverse_domain=inverse_domain)
        if np.isfinite(cost).any():
            j = int(np.argmin(cost))
            # an edge only where the grid resolves one: at least 5 steps, its end at the range's
            out.offset_s, out.at_edge = float(grid[j]), grid.size >= 5 and j in (0, grid.size - 1) and bool(
                abs(grid[j]) >= max_offset_s - 1e-9)
            out.warnings = [w for w in out.warnings if not w.startswith("the clock offset lies at the edge")]
        out.notes.append(f"the angular speeds correlate weakly (peak {out.peak:.2f}): the coarse clock offset "
                         f"({out.offset_s:.4g} s) comes from a scan of the pose fit")
    return out


def scan_offset(hand_t, A, eye_t, B, offsets, *, inverse_domain=True, n_pairs: int = 30):
    """Pose-fit cost of candidate clock offsets: Park-Martin ``X`` and robust ``Y`` on a subsample at each.

    Used when the angular speeds do not correlate (noisy or featureless rotation).

    Parameters
    ----------
    hand_t, A : ndarray, shapes (Nh,), (Nh, 4, 4)
        Hand stream ``T_base_ee`` [m].
    eye_t, B : ndarray, shapes (Ne,), (Ne, 4, 4)
        Eye stream in solver form.
    offsets : ndarray, shape (K,)
        Candidate offsets [s] (eye stamp = hand time + offset).

    Returns
    -------
    ndarray, shape (K,)
        Relative cost (lower is better; inf where it cannot be evaluated).
    """
    lo, hi = hand_t[0] + np.max(offsets), hand_t[-1] + np.min(offsets)
    cand = np.flatnonzero((eye_t >= lo) & (eye_t <= hi))
    if cand.size < 3:
        return np.full(len(offsets), np.inf)
    pick = cand[np.unique(np.linspace(0, cand.size - 1, min(cand.size, n_pairs)).round().astype(int))]
    interp = Interpolator(hand_t, A)
    Bs = B[pick]
    sub = np.arange(pick.size)
    out = np.full((len(offsets), 2), np.inf)
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        for k, o in enumerate(offsets):
            As = interp(eye_t[pick] - o)
            Am, Bm = motions_between(As, Bs, sub)
            try:
                X = park_martin_kernel(Am, Bm, check_axes=False)
            except (KinhecError, np.linalg.LinAlgError):
                continue
            out[k] = score(As, Bs, X, robust_y(As, Bs, X), None, inverse_domain)
    ok = np.isfinite(out).all(axis=1)
    if not ok.any():
        return np.full(len(offsets), np.inf)
    m = np.maximum(out[ok].min(axis=0), 1e-15)
    return np.where(ok, (out / m).sum(axis=1), np.inf)


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
    smooth : bool
        Smooth the denser stream's sample noise within the sparser stream's intervals before interpolating it
        (:mod:`kinhec.calibrate.dense_smoothing`; ``smoothing`` says what was done, a note too when it was).
    """

    has_time = True

    def __init__(self, hand: PoseStream, A, eye: PoseStream, B, offset0: float, margin_s: float, *,
                 smooth: bool = True) -> None:
        self.hand, self.eye = hand, eye
        nh, ne = hand.t.size, eye.t.size
        if nh < 2 or ne < 2:
            short = hand if nh < 2 else eye
            raise InputError(f"{short.span()}: expected at least 2 stamped poses to pair by time, got {len(short)}")
        span_h = hand.t[-1] - hand.t[0]
        span_e = eye.t[-1] - eye.t[0]
        # the denser stream is interpolated at the samples of the sparser one
        self.interp_hand = nh / max(span_h, 1e-12) >= ne / max(span_e, 1e-12)
        self.notes = []
        if self.interp_hand:
            t_dense, T_dense, dense = hand.t, A, hand
            t_sparse, self._fixed, sparse = eye.t, B, eye
            shift = -1.0  # hand time = eye stamp - offset
        else:
            t_dense, T_dense, dense = eye.t, B, eye
            t_sparse, self._fixed, sparse = hand.t, A, hand
            shift = +1.0  # eye stamp = hand time + offset
        self.smoothing = None
        if smooth:  # the denser stream's sample noise averaged within the sparser stream's intervals
            T_dense, self.smoothing = dense_smoothing.smooth(t_dense, T_dense, float(np.median(np.diff(t_sparse))),
                                                             GAP_FACTOR)
            if self.smoothing.window:
                self.notes.append(self.smoothing.note(dense.path))
        self._dense = Interpolator(t_dense, T_dense)
        self._shift = shift
        self.margin_s = float(margin_s)
        ok = np.ones(t_sparse.shape, dtype=bool)
        for d in (-margin_s, 0.0, margin_s):
            ok &= self._dense.valid(t_sparse + shift * (offset0 + d))
        inside = (t_sparse + shift * offset0 >= self._dense.t[0]) & (t_sparse + shift * offset0 <= self._dense.t[-1])
        n_gap = int((inside & ~ok).sum())
        # (what the pairing left out for the offset's room, for a refusal that names it: see left_for_offset)
        self.n_inside, self.n_near_ends = int(inside.sum()), n_gap
        if n_gap:
            self.notes.append(f"{n_gap} sample(s) of {sparse.path} fall in gaps of the other stream or near its ends; "
                              "left out")
        self.index = np.flatnonzero(ok)
        self._t_sparse = t_sparse[ok]
        self._fixed = self._fixed[ok]
        self.sparse = sparse
        if self.index.size == 0 and inside.any():
            # the streams overlap, but no sample keeps the other stream around it over the offsets to be searched
            raise InputError(
                f"{hand.span()} and {eye.span()}: expected samples of {sparse.path} with samples of {dense.path} "
                f"around them within +-{margin_s:.4g} s of clock offset {offset0:.4g} s (the room the offset's fit "
                f"needs), and without a gap of more than {GAP_FACTOR:g} periods; none of its {int(inside.sum())} "
                f"sample(s) inside the other stream has: the streams are too short or too sparse to estimate the "
                "clock offset from; give it (--offset SECONDS; 0 when both streams were stamped by one clock)"
            )
        if self.index.size == 0:
            raise InputError(
                f"{hand.span()} and {eye.span()}: expected stamps that overlap at clock offset {offset0:.4g} s, "
                f"got hand [{hand.t[0]:.6f}, {hand.t[-1]:.6f}] s and eye [{eye.t[0]:.6f}, {eye.t[-1]:.6f}] s"
            )

    def __len__(self) -> int:
        return int(self.index.size)

    def left_for_offset(self, minimum: int, where: str) -> str | None:
        """The refusal when fewer than ``minimum`` pairs are left because samples near the ends or gaps were left out.

        Those samples keep no partner over ``offset0 +- margin_s``, the range the offset's fit moves in; stamped by
        one clock they would all pair.  None when enough pairs are left or none was left out.
        """
        if len(self) >= minimum or not self.n_near_ends:
            return None
        verb = "lies" if self.n_near_ends == 1 else "lie"
        return (f"{where}: expected at least {minimum} pose pairs, got {len(self)}: of the {self.n_inside} samples of "
                f"{self.sparse.path} inside the other stream, {self.n_near_ends} {verb} within +-{self.margin_s:.4g} s "
                "of its ends or of a gap in it, the room the clock offset's fit needs, and are left out; give the "
                "offset (--offset SECONDS; 0 when both streams were stamped by one clock) to pair them")

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

    def interpolation_bias(self, offset: float, noise_var: tuple[float, float]) -> float:
        """How far [s] interpolating the denser stream's noisy samples can pull the clock offset.

        Between two samples the interpolated pose averages their noise: its variance is ``(1 - s)^2 + s^2``
        times a sample's at the fraction ``s`` of the interval, half at ``s = 1/2``, while the motion it misses
        grows as ``s^2``.  A fit of the offset trades the two: on pairs whose per-sample motion is ``m`` and
        per-sample noise ``sigma`` (each of the 3 components), the expected squared residual is least at
        ``s* = 3 sigma^2 / (6 sigma^2 + mean(m^2))`` of a period, away from the true offset by that much,
        whatever the number of pairs (a bias, not a spread), when the pairs share their fraction ``s`` (streams on one
        sample grid); spread over the interval, the pairs pull every way and nothing is gained.  Returns ``s*`` times
        the denser stream's period times the coherence of the pairs' fractions ``|mean(exp(2 pi i s_k))|`` (1 in
        step, near 0 spread), the larger of the rotation's and the translation's (0 when the stream is far smoother
        than its motion).
        ``sigma`` comes from the samples' second differences (``6 sigma^2`` per component) as a median absolute
        deviation, at most ``noise_var`` (the per-component variance of the fit's rotation [rad^2] and translation
        [m^2] residuals, which hold this stream's noise and the other's): a stream sampled at stations, or too
        slowly for its motion, has second differences that are motion, not noise.  ``m`` comes from the
        increments at the pairs.
        """
        d = self._dense
        if d.t.size < 4:
            return 0.0
        tq = self._t_sparse + self._shift * offset
        i = np.clip(np.searchsorted(d.t, tq, side="right") - 1, 0, d.t.size - 2)
        # the pairs' fractions of their intervals: the pull needs them in step (streams on one sample grid); spread
        # over the interval (other rates, jitter), a shift brings as many pairs nearer a sample as away from one
        frac = np.clip((tq - d.t[i]) / (d.t[i + 1] - d.t[i]), 0.0, 1.0)
        coherence = float(np.abs(np.mean(np.exp(2j * np.pi * frac))))
        out = 0.0
        for var, m2 in self._noise_and_motion(i, noise_var):
            if var > 0.0:
                out = max(out, 3.0 * var / (6.0 * var + m2))
        return out * coherence * d.period

    def _noise_and_motion(self, i: np.ndarray, noise_var: tuple[float, float] | None):
        """Per-sample noise variance of one component and mean squared increment (three components) of the denser
        stream, for its rotation [rad] and its translation [m], the increments taken at its intervals ``i``; the
        noise from the samples' second differences (``6 sigma^2`` per component) as a median absolute deviation, at
        most ``noise_var`` when given."""
        d = self._dense
        out = []
        for inc, cap in zip((d.rel, np.diff(d.p, axis=0)), noise_var or (np.inf, np.inf)):
            second = np.diff(inc, axis=0)
            mad = 1.4826 * np.median(np.abs(second - np.median(second, axis=0)), axis=0)
            var = min(float(np.mean(mad**2)) / 6.0, float(cap))  # one component's per-sample noise variance
            out.append((var, float(np.mean(np.sum(inc[i] ** 2, axis=1)))))
        return out

    def offset_step(self, offset: float) -> float:
        """Step [s] of the offset's central difference: long enough that the slope it gives is the motion's, not the
        denser stream's sample noise.

        Between two samples the interpolated pose moves along their difference, whose noise (variance ``2 sigma^2``
        per component) is a large part of it when the samples are dense and noisy (500 Hz, 0.2 mm: 0.14 m/s per
        component against a motion of 0.15-0.23 m/s).  A slope over one interval overstates what the pairs say
        about the offset (its square carries that noise) and correlates with the interpolated noise in the
        residual: on 80 monocular recordings the offset's squared z averaged 1.8, 1.0 with this step.  A central
        difference over ``+- h`` has slope noise ``sigma^2 / (2 h^2)`` per component; ``h`` is chosen to hold it
        below :data:`OFFSET_SLOPE_NOISE` of the motion's mean squared speed per component (the sample increments'
        less their noise; the larger step of the rotation's and the translation's), at least
        :data:`MIN_OFFSET_STEP_S`, at most half the margin the pairs stay valid within.
        """
        d = self._dense
        if d.t.size < 4:
            return MIN_OFFSET_STEP_S
        tq = self._t_sparse + self._shift * offset
        i = np.clip(np.searchsorted(d.t, tq, side="right") - 1, 0, d.t.size - 2)
        h, longest = MIN_OFFSET_STEP_S, max(0.5 * self.margin_s, MIN_OFFSET_STEP_S)
        for var, m2 in self._noise_and_motion(i, None):
            if not var > 0.0:
                continue
            # mean squared speed per component: the increments less their noise (2 sigma^2 per component)
            speed2 = (m2 - 6.0 * var) / 3.0 / d.period**2
            h = max(h, float(np.sqrt(var / (2.0 * OFFSET_SLOPE_NOISE * speed2))) if speed2 > 0.0 else longest)
        return float(min(h, longest))

    def at(self, offset: float):
        """Paired ``(A, B)`` of shape ``(N, 4, 4)`` at clock offset ``offset`` [s]."""
        dense = self._dense(self._t_sparse + self._shift * offset)
        return (dense, self._fixed) if self.interp_hand else (self._fixed, dense)


def sample_pairs(hand: PoseStream, H: np.ndarray, eye: PoseStream, E: np.ndarray, offset_s: float, n: int):
    """Up to ``n`` pairs evenly spread over the overlap of two stamped streams at ``offset_s``.

    The sparser stream's samples (outside gaps of the other) are kept, the
    denser one is interpolated there.  Returns ``(H_pairs, E_pairs)`` of shape
    ``(m, 4, 4)`` (``m`` may be 0).
    """
    span_h = max(hand.t[-1] - hand.t[0], 1e-12)
    span_e = max(eye.t[-1] - eye.t[0], 1e-12)
    if hand.t.size / span_h >= eye.t.size / span_e:
        dense, fixed, tq, sign = Interpolator(hand.t, H), E, eye.t - offset_s, 1
    else:
        dense, fixed, tq, sign = Interpolator(eye.t, E), H, hand.t + offset_s, -1
    ok = np.flatnonzero(dense.valid(tq))
    if ok.size == 0:
        return np.zeros((0, 4, 4)), np.zeros((0, 4, 4))
    pick = ok[np.unique(np.linspace(0, ok.size - 1, min(n, ok.size)).round().astype(int))]
    other = dense(tq[pick])
    return (other, fixed[pick]) if sign > 0 else (fixed[pick], other)
